/*
 * test_sigv4.c - AWS Signature Version 4.
 *
 * Every expected value here is published by AWS, not computed by kiln:
 *
 * - the signing-key derivations from "Examples of how to derive a signing
 *   key for Signature Version 4" (20150830 in the current page, 20120215 in
 *   the older one);
 * - the "aws-sig-v4-test-suite" cases (.creq, .sts and .authz files; AWS no
 *   longer serves the archive, the texts were taken from the copies kept by
 *   awslabs/aws-c-auth and aws/aws-sdk-js-v3 and from projects that embed
 *   them);
 * - the four S3 examples of "Signature Calculations for the Authorization
 *   Header: Transferring Payload in a Single Chunk".
 *
 * All of them, except the S3 PUT example (botocore signs a request that has
 * a Date header with Date instead of X-Amz-Date), were also reproduced with
 * botocore 1.43.11 (SigV4Auth / S3SigV4Auth at a fixed time). The one case
 * that is not from AWS, the double encoding of '%' in a non-S3 path, has
 * botocore's value and says so.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "aws/sigv4.h"
#include "util.h"

/* The test suite's credentials, scope and time (2015-08-30T12:36:00Z). */
#define SUITE_AK "AKIDEXAMPLE"
#define SUITE_SK "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY"
#define SUITE_TIME ((time_t)1440938160)
#define SUITE_HOST "example.amazonaws.com"
#define SUITE_SCOPE "20150830/us-east-1/service/aws4_request"
#define SUITE_STS_HEAD "AWS4-HMAC-SHA256\n20150830T123600Z\n" SUITE_SCOPE "\n"
#define SUITE_AUTH_HEAD "Authorization: AWS4-HMAC-SHA256 Credential=" SUITE_AK "/" SUITE_SCOPE ", "
#define EMPTY_SHA256 "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"

/* The S3 examples' credentials, bucket and time (2013-05-24T00:00:00Z). */
#define S3_AK "AKIAIOSFODNN7EXAMPLE"
#define S3_SK "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"
#define S3_TIME ((time_t)1369353600)
#define S3_HOST "examplebucket.s3.amazonaws.com"
#define S3_SCOPE "20130524/us-east-1/s3/aws4_request"
#define S3_STS_HEAD "AWS4-HMAC-SHA256\n20130524T000000Z\n" S3_SCOPE "\n"
#define S3_AUTH_HEAD "Authorization: AWS4-HMAC-SHA256 Credential=" S3_AK "/" S3_SCOPE ", "

/* The session token of the suite's post-sts-token cases. */
#define SUITE_TOKEN                                                                                \
	"AQoDYXdzEPT//////////"                                                                    \
	"wEXAMPLEtc764bNrC9SAPBSM22wDOk4x4HIZ8j4FZTwdQWLWsKWHGBuFqwAeMicRXmxfpSPfIeoIYRqTflfKD8YU" \
	"uwthAx7mSEI/qkPpKPi/kMcGdQrmGdeehM4IC1NtBmUpp2wUE8phUZampKsburEDy0KPkyQDYwT7WZ0wq5VSXDvp" \
	"75YU9HFvlRd8Tx6q6fE8YQcHNVXAkiY9q6d+xo0rKwT38xVqr7ZD0u0iPPkUL64lIZbqBAz+"                 \
	"scqKmlzm8FDrypNC9Yjc8fPOLn9FX9KSYvKTr4rvx3iSIlTJabIQwj2ICCR/oLxBA=="

static const struct aws_creds suite_creds = {
    .access_key = SUITE_AK, .secret_key = SUITE_SK, .source = "test"};
static const struct aws_creds s3_creds = {
    .access_key = S3_AK, .secret_key = S3_SK, .source = "test"};

/* One published case: the request, and the three texts AWS gives for it. */
struct vector {
	struct sigv4_request req;
	const char *creq;
	const char *sts;
	const char *authz; /* the Authorization header line */
};

static struct sigv4_request suite_request(const char *method, const char *path, const char *query,
					  const char *const *headers, const char *body)
{
	struct sigv4_request r = {
	    .method = method,
	    .host = SUITE_HOST,
	    .path = path,
	    .query = query,
	    .headers = headers,
	    .body = body,
	    .body_len = body ? strlen(body) : 0,
	    .region = "us-east-1",
	    .service = "service",
	    .now = SUITE_TIME,
	};
	return r;
}

static struct sigv4_request s3_request(const char *method, const char *path, const char *query,
				       const char *const *headers, const char *body)
{
	struct sigv4_request r = {
	    .method = method,
	    .host = S3_HOST,
	    .path = path,
	    .query = query,
	    .headers = headers,
	    .body = body,
	    .body_len = body ? strlen(body) : 0,
	    .region = "us-east-1",
	    .service = "s3",
	    .now = S3_TIME,
	    .s3 = true,
	};
	return r;
}

/* The header line of h named name (case-insensitive), or NULL. */
static const char *header_find(char **h, const char *name)
{
	size_t n = strlen(name);

	for (; h && *h; h++)
		if (strncasecmp(*h, name, n) == 0 && (*h)[n] == ':')
			return *h;
	return NULL;
}

static size_t header_count(char **h)
{
	size_t n = 0;

	while (h && h[n])
		n++;
	return n;
}

static void assert_vector(const struct vector *v, const struct aws_creds *c)
{
	char *creq, *sts, *signed_headers = NULL, **h;

	creq = sigv4_canonical_request(&v->req, c, &signed_headers);
	assert_non_null(creq);
	assert_string_equal(creq, v->creq);
	/* The signed-header list is the canonical request's second-last line. */
	assert_non_null(strstr(v->creq, signed_headers));
	sts = sigv4_string_to_sign(&v->req, creq);
	assert_non_null(sts);
	assert_string_equal(sts, v->sts);
	h = sigv4_sign(&v->req, c);
	assert_non_null(h);
	assert_non_null(header_find(h, "Authorization"));
	assert_string_equal(header_find(h, "Authorization"), v->authz);
	sigv4_headers_free(h);
	free(signed_headers);
	free(sts);
	free(creq);
}

static void test_signing_key_matches_the_documented_derivation(void **state)
{
	unsigned char key[32];
	char hex[65];
	size_t i;

	(void)state;
	sigv4_signing_key(SUITE_SK, "20150830", "us-east-1", "iam", key);
	for (i = 0; i < 32; i++)
		snprintf(hex + 2 * i, 3, "%02x", key[i]);
	assert_string_equal(hex,
			    "c4afb1cc5771d871763a393e44b703571b55cc28424d1a5e86da6ed3c154a4b9");
}

static void test_signing_key_matches_the_older_documented_derivation(void **state)
{
	unsigned char key[32];
	char hex[65];
	size_t i;

	(void)state;
	sigv4_signing_key(SUITE_SK, "20120215", "us-east-1", "iam", key);
	for (i = 0; i < 32; i++)
		snprintf(hex + 2 * i, 3, "%02x", key[i]);
	assert_string_equal(hex,
			    "f4780e2d9f65fa895f9c67b32ce1baf0b0d8a43505a000a1a9e090d414db404d");
}

static void test_suite_get_vanilla(void **state)
{
	struct vector v = {
	    suite_request("GET", "/", NULL, NULL, NULL),
	    "GET\n/"
	    "\n\nhost:example.amazonaws.com\nx-amz-date:20150830T123600Z\n\nhost;x-amz-"
	    "date\n" EMPTY_SHA256,
	    SUITE_STS_HEAD "bb579772317eb040ac9ed261061d46c1f17a8133879d6129b6e1c25292927e63",
	    SUITE_AUTH_HEAD
	    "SignedHeaders=host;x-amz-date, "
	    "Signature=5fa00fa31553b73ebf1942676e86291e8372ff2a2260956d9b8aae1d763fbf31",
	};

	(void)state;
	assert_vector(&v, &suite_creds);
}

static void test_suite_get_vanilla_query_order_key_case(void **state)
{
	struct vector v = {
	    suite_request("GET", "/", "Param2=value2&Param1=value1", NULL, NULL),
	    "GET\n/\nParam1=value1&Param2=value2\nhost:example.amazonaws.com\n"
	    "x-amz-date:20150830T123600Z\n\nhost;x-amz-date\n" EMPTY_SHA256,
	    SUITE_STS_HEAD "816cd5b414d056048ba4f7c5386d6e0533120fb1fcfa93762cf0fc39e2cf19e0",
	    SUITE_AUTH_HEAD
	    "SignedHeaders=host;x-amz-date, "
	    "Signature=b97d918cfa904a5beff61c982a1b6f458b799221646efd99d3219ec94cdf2500",
	};

	(void)state;
	assert_vector(&v, &suite_creds);
}

static void test_suite_get_vanilla_query_order_key_sorts_equal_names_by_value(void **state)
{
	struct vector v = {
	    suite_request("GET", "/", "Param1=value2&Param1=Value1", NULL, NULL),
	    "GET\n/\nParam1=Value1&Param1=value2\nhost:example.amazonaws.com\n"
	    "x-amz-date:20150830T123600Z\n\nhost;x-amz-date\n" EMPTY_SHA256,
	    SUITE_STS_HEAD "704b4cef673542d84cdff252633f065e8daeba5f168b77116f8b1bcaf3d38f89",
	    SUITE_AUTH_HEAD
	    "SignedHeaders=host;x-amz-date, "
	    "Signature=eedbc4e291e521cf13422ffca22be7d2eb8146eecf653089df300a15b2382bd1",
	};

	(void)state;
	assert_vector(&v, &suite_creds);
}

static void test_suite_get_vanilla_empty_query_key(void **state)
{
	struct vector v = {
	    suite_request("GET", "/", "Param1=value1", NULL, NULL),
	    "GET\n/\nParam1=value1\nhost:example.amazonaws.com\nx-amz-date:20150830T123600Z\n\n"
	    "host;x-amz-date\n" EMPTY_SHA256,
	    SUITE_STS_HEAD "1e24db194ed7d0eec2de28d7369675a243488e08526e8c1c73571282f7c517ab",
	    SUITE_AUTH_HEAD
	    "SignedHeaders=host;x-amz-date, "
	    "Signature=a67d582fa61cc504c4bae71f336f98b97f1ea3c7a6bfe1b6e45aec72011b9aeb",
	};

	(void)state;
	assert_vector(&v, &suite_creds);
}

static void test_suite_get_vanilla_query_unreserved(void **state)
{
#define UNRESERVED "-._~0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
	struct vector v = {
	    suite_request("GET", "/", UNRESERVED "=" UNRESERVED, NULL, NULL),
	    "GET\n/\n" UNRESERVED "=" UNRESERVED "\nhost:example.amazonaws.com\n"
	    "x-amz-date:20150830T123600Z\n\nhost;x-amz-date\n" EMPTY_SHA256,
	    SUITE_STS_HEAD "c30d4703d9f799439be92736156d47ccfb2d879ddf56f5befa6d1d6aab979177",
	    SUITE_AUTH_HEAD
	    "SignedHeaders=host;x-amz-date, "
	    "Signature=9c3e54bfcdf0b19771a7f523ee5669cdf59bc7cc0884027167c21bb143a40197",
	};

	(void)state;
	assert_vector(&v, &suite_creds);
}

static void test_suite_get_unreserved(void **state)
{
	struct vector v = {
	    suite_request("GET", "/" UNRESERVED, NULL, NULL, NULL),
	    "GET\n/" UNRESERVED "\n\nhost:example.amazonaws.com\nx-amz-date:20150830T123600Z\n\n"
	    "host;x-amz-date\n" EMPTY_SHA256,
	    SUITE_STS_HEAD "6a968768eefaa713e2a6b16b589a8ea192661f098f37349f4e2c0082757446f9",
	    SUITE_AUTH_HEAD
	    "SignedHeaders=host;x-amz-date, "
	    "Signature=07ef7494c76fa4850883e2b006601f940f8a34d404d0cfa977f52a65bbf5f24f",
	};

	(void)state;
	assert_vector(&v, &suite_creds);
#undef UNRESERVED
}

static void test_suite_post_x_www_form_urlencoded(void **state)
{
	static const char *const headers[] = {"Content-Type:application/x-www-form-urlencoded",
					      NULL};
	struct vector v = {
	    suite_request("POST", "/", NULL, headers, "Param1=value1"),
	    "POST\n/\n\ncontent-type:application/"
	    "x-www-form-urlencoded\nhost:example.amazonaws.com\n"
	    "x-amz-date:20150830T123600Z\n\ncontent-type;host;x-amz-date\n"
	    "9095672bbd1f56dfc5b65f3e153adc8731a4a654192329106275f4c7b24d0b6e",
	    SUITE_STS_HEAD "42a5e5bb34198acb3e84da4f085bb7927f2bc277ca766e6d19c73c2154021281",
	    SUITE_AUTH_HEAD
	    "SignedHeaders=content-type;host;x-amz-date, "
	    "Signature=ff11897932ad3f4e8b18135d722051e5ac45fc38421b1da7b9d196a0fe09473a",
	};

	(void)state;
	assert_vector(&v, &suite_creds);
}

static void test_suite_post_header_key_sort(void **state)
{
	static const char *const headers[] = {"My-Header1:value1", NULL};
	struct vector v = {
	    suite_request("POST", "/", NULL, headers, NULL),
	    "POST\n/"
	    "\n\nhost:example.amazonaws.com\nmy-header1:value1\nx-amz-date:20150830T123600Z\n\n"
	    "host;my-header1;x-amz-date\n" EMPTY_SHA256,
	    SUITE_STS_HEAD "9368318c2967cf6de74404b30c65a91e8f6253e0a8659d6d5319f1a812f87d65",
	    SUITE_AUTH_HEAD
	    "SignedHeaders=host;my-header1;x-amz-date, "
	    "Signature=c5410059b04c1ee005303aed430f6e6645f61f4dc9e1461ec8f8916fdf18852c",
	};

	(void)state;
	assert_vector(&v, &suite_creds);
}

static void test_suite_post_header_value_case(void **state)
{
	static const char *const headers[] = {"My-Header1:VALUE1", NULL};
	struct vector v = {
	    suite_request("POST", "/", NULL, headers, NULL),
	    "POST\n/"
	    "\n\nhost:example.amazonaws.com\nmy-header1:VALUE1\nx-amz-date:20150830T123600Z\n\n"
	    "host;my-header1;x-amz-date\n" EMPTY_SHA256,
	    SUITE_STS_HEAD "d51ced243e649e3de6ef63afbbdcbca03131a21a7103a1583706a64618606a93",
	    SUITE_AUTH_HEAD
	    "SignedHeaders=host;my-header1;x-amz-date, "
	    "Signature=cdbc9802e29d2942e5e10b5bccfdd67c5f22c7c4e8ae67b53629efa58b974b7d",
	};

	(void)state;
	assert_vector(&v, &suite_creds);
}

static void test_suite_get_header_value_trim(void **state)
{
	static const char *const headers[] = {"My-Header1: value1", "My-Header2: \"a   b   c\"",
					      NULL};
	struct vector v = {
	    suite_request("GET", "/", NULL, headers, NULL),
	    "GET\n/\n\nhost:example.amazonaws.com\nmy-header1:value1\nmy-header2:\"a b c\"\n"
	    "x-amz-date:20150830T123600Z\n\nhost;my-header1;my-header2;x-amz-date\n" EMPTY_SHA256,
	    SUITE_STS_HEAD "a726db9b0df21c14f559d0a978e563112acb1b9e05476f0a6a1c7d68f28605c7",
	    SUITE_AUTH_HEAD
	    "SignedHeaders=host;my-header1;my-header2;x-amz-date, "
	    "Signature=acc3ed3afb60bb290fc8d2dd0098b9911fcaa05412b367055dee359757a9c736",
	};

	(void)state;
	assert_vector(&v, &suite_creds);
}

static void test_suite_get_header_value_order_keeps_the_order_sent(void **state)
{
	static const char *const headers[] = {"My-Header1:value4", "My-Header1:value1",
					      "My-Header1:value3", "My-Header1:value2", NULL};
	struct vector v = {
	    suite_request("GET", "/", NULL, headers, NULL),
	    "GET\n/\n\nhost:example.amazonaws.com\nmy-header1:value4,value1,value3,value2\n"
	    "x-amz-date:20150830T123600Z\n\nhost;my-header1;x-amz-date\n" EMPTY_SHA256,
	    SUITE_STS_HEAD "31ce73cd3f3d9f66977ad3dd957dc47af14df92fcd8509f59b349e9137c58b86",
	    SUITE_AUTH_HEAD
	    "SignedHeaders=host;my-header1;x-amz-date, "
	    "Signature=08c7e5a9acfcfeb3ab6b2185e75ce8b1deb5e634ec47601a50643f830c755c01",
	};

	(void)state;
	assert_vector(&v, &suite_creds);
}

static void test_suite_get_header_key_duplicate(void **state)
{
	static const char *const headers[] = {"My-Header1:value2", "My-Header1:value2",
					      "My-Header1:value1", NULL};
	struct vector v = {
	    suite_request("GET", "/", NULL, headers, NULL),
	    "GET\n/\n\nhost:example.amazonaws.com\nmy-header1:value2,value2,value1\n"
	    "x-amz-date:20150830T123600Z\n\nhost;my-header1;x-amz-date\n" EMPTY_SHA256,
	    SUITE_STS_HEAD "dc7f04a3abfde8d472b0ab1a418b741b7c67174dad1551b4117b15527fbe966c",
	    SUITE_AUTH_HEAD
	    "SignedHeaders=host;my-header1;x-amz-date, "
	    "Signature=c9d5ea9f3f72853aea855b47ea873832890dbdd183b4468f858259531a5138ea",
	};

	(void)state;
	assert_vector(&v, &suite_creds);
}

static void test_suite_post_vanilla_query(void **state)
{
	struct vector v = {
	    suite_request("POST", "/", "Param1=value1", NULL, NULL),
	    "POST\n/\nParam1=value1\nhost:example.amazonaws.com\nx-amz-date:20150830T123600Z\n\n"
	    "host;x-amz-date\n" EMPTY_SHA256,
	    SUITE_STS_HEAD "9d659678c1756bb3113e2ce898845a0a79dbbc57b740555917687f1b3340fbbd",
	    SUITE_AUTH_HEAD
	    "SignedHeaders=host;x-amz-date, "
	    "Signature=28038455d6de14eafc1f9222cf5aa6f1a96197d7deb8263271d420d138af7f11",
	};

	(void)state;
	assert_vector(&v, &suite_creds);
}

/*
 * The suite's request line carries the raw character ("GET /\xe1\x88\xb4"),
 * so the path is given unencoded: encoding it once is the suite's canonical
 * URI.
 */
static void test_suite_get_utf8(void **state)
{
	struct vector v = {
	    suite_request("GET", "/\xe1\x88\xb4", NULL, NULL, NULL),
	    "GET\n/%E1%88%B4\n\nhost:example.amazonaws.com\nx-amz-date:20150830T123600Z\n\n"
	    "host;x-amz-date\n" EMPTY_SHA256,
	    SUITE_STS_HEAD "2a0a97d02205e45ce2e994789806b19270cfbbb0921b278ccf58f5249ac42102",
	    SUITE_AUTH_HEAD
	    "SignedHeaders=host;x-amz-date, "
	    "Signature=8318018e0b0f223aa2bbf98705b62bb787dc9c0e678f255a891fd03141be5d85",
	};

	(void)state;
	assert_vector(&v, &suite_creds);
}

/* normalize-path/get-space; the request line has a raw space, as in get-utf8. */
static void test_suite_get_space(void **state)
{
	struct vector v = {
	    suite_request("GET", "/example space/", NULL, NULL, NULL),
	    "GET\n/example%20space/\n\nhost:example.amazonaws.com\nx-amz-date:20150830T123600Z\n\n"
	    "host;x-amz-date\n" EMPTY_SHA256,
	    SUITE_STS_HEAD "63ee75631ed7234ae61b5f736dfc7754cdccfedbff4b5128a915706ee9390d86",
	    SUITE_AUTH_HEAD
	    "SignedHeaders=host;x-amz-date, "
	    "Signature=652487583200325589f1fba4c7e578f72c47cb61beeca81406b39ddec1366741",
	};

	(void)state;
	assert_vector(&v, &suite_creds);
}

static void test_suite_normalize_path_get_slashes(void **state)
{
	struct vector v = {
	    suite_request("GET", "//example//", NULL, NULL, NULL),
	    "GET\n/example/\n\nhost:example.amazonaws.com\nx-amz-date:20150830T123600Z\n\n"
	    "host;x-amz-date\n" EMPTY_SHA256,
	    SUITE_STS_HEAD "cb96b4ac96d501f7c5c15bc6d67b3035061cfced4af6585ad927f7e6c985c015",
	    SUITE_AUTH_HEAD
	    "SignedHeaders=host;x-amz-date, "
	    "Signature=9a624bd73a37c9a373b5312afbebe7a714a789de108f0bdfe846570885f57e84",
	};

	(void)state;
	assert_vector(&v, &suite_creds);
}

static void test_suite_normalize_path_get_slash_pointless_dot(void **state)
{
	struct vector v = {
	    suite_request("GET", "/./example", NULL, NULL, NULL),
	    "GET\n/example\n\nhost:example.amazonaws.com\nx-amz-date:20150830T123600Z\n\n"
	    "host;x-amz-date\n" EMPTY_SHA256,
	    SUITE_STS_HEAD "214d50c111a8edc4819da6a636336472c916b5240f51e9a51b5c3305180cf702",
	    SUITE_AUTH_HEAD
	    "SignedHeaders=host;x-amz-date, "
	    "Signature=ef75d96142cf21edca26f06005da7988e4f8dc83a165a80865db7089db637ec5",
	};

	(void)state;
	assert_vector(&v, &suite_creds);
}

/* get-relative, get-relative-relative, get-slash and get-slash-dot-slash all sign as "/". */
static void test_suite_normalize_path_cases_that_resolve_to_the_root(void **state)
{
	static const char *const paths[] = {"/example/..", "/example1/example2/../..", "//", "/./"};
	size_t i;

	(void)state;
	for (i = 0; i < ARRAY_SIZE(paths); i++) {
		struct vector v = {
		    suite_request("GET", paths[i], NULL, NULL, NULL),
		    "GET\n/\n\nhost:example.amazonaws.com\nx-amz-date:20150830T123600Z\n\n"
		    "host;x-amz-date\n" EMPTY_SHA256,
		    SUITE_STS_HEAD
		    "bb579772317eb040ac9ed261061d46c1f17a8133879d6129b6e1c25292927e63",
		    SUITE_AUTH_HEAD
		    "SignedHeaders=host;x-amz-date, "
		    "Signature=5fa00fa31553b73ebf1942676e86291e8372ff2a2260956d9b8aae1d763fbf31",
		};

		assert_vector(&v, &suite_creds);
	}
}

/* post-sts-token/post-sts-header-before: the token is signed and sent. */
static void test_suite_session_token_is_sent_and_signed(void **state)
{
	static const struct aws_creds creds = {
	    .access_key = SUITE_AK, .secret_key = SUITE_SK, .session_token = SUITE_TOKEN};
	struct vector v = {
	    suite_request("POST", "/", NULL, NULL, NULL),
	    "POST\n/\n\nhost:example.amazonaws.com\nx-amz-date:20150830T123600Z\n"
	    "x-amz-security-token:" SUITE_TOKEN
	    "\n\nhost;x-amz-date;x-amz-security-token\n" EMPTY_SHA256,
	    SUITE_STS_HEAD "c237e1b440d4c63c32ca95b5b99481081cb7b13c7e40434868e71567c1a882f6",
	    SUITE_AUTH_HEAD
	    "SignedHeaders=host;x-amz-date;x-amz-security-token, "
	    "Signature=85d96828115b5dc0cfc3bd16ad9e210dd772bbebba041836c64533a82be05ead",
	};
	char **h;

	(void)state;
	assert_vector(&v, &creds);
	h = sigv4_sign(&v.req, &creds);
	assert_string_equal(header_find(h, "X-Amz-Security-Token"),
			    "X-Amz-Security-Token: " SUITE_TOKEN);
	assert_string_equal(header_find(h, "X-Amz-Date"), "X-Amz-Date: 20150830T123600Z");
	assert_int_equal(header_count(h), 3);
	sigv4_headers_free(h);
}

static void test_sign_returns_authorization_and_date_only_without_token_or_s3(void **state)
{
	struct sigv4_request r = suite_request("GET", "/", NULL, NULL, NULL);
	char **h = sigv4_sign(&r, &suite_creds);

	(void)state;
	assert_int_equal(header_count(h), 2);
	assert_true(str_starts_with(h[0], "Authorization: AWS4-HMAC-SHA256 "));
	assert_string_equal(h[1], "X-Amz-Date: 20150830T123600Z");
	sigv4_headers_free(h);
}

/* Not from AWS: botocore's canonical URI and signature for a path holding "%2F". */
static void test_non_s3_path_is_encoded_a_second_time(void **state)
{
	struct vector v = {
	    suite_request("GET", "/a%2Fb/c", NULL, NULL, NULL),
	    "GET\n/a%252Fb/c\n\nhost:example.amazonaws.com\nx-amz-date:20150830T123600Z\n\n"
	    "host;x-amz-date\n" EMPTY_SHA256,
	    SUITE_STS_HEAD "cbdfd56e0bdd289f0f8b81be6a2c629d9a0a94b07512ad0ce28d738ff0ea67c6",
	    SUITE_AUTH_HEAD
	    "SignedHeaders=host;x-amz-date, "
	    "Signature=006eff3d53d3fa15e6340e61e016213e7f99291f4bf407e953a1b0ec30bae5da",
	};

	(void)state;
	assert_vector(&v, &suite_creds);
}

static void test_s3_get_object_with_range(void **state)
{
	static const char *const headers[] = {"Range: bytes=0-9", NULL};
	struct vector v = {
	    s3_request("GET", "/test.txt", NULL, headers, NULL),
	    "GET\n/test.txt\n\nhost:examplebucket.s3.amazonaws.com\nrange:bytes=0-9\n"
	    "x-amz-content-sha256:" EMPTY_SHA256 "\nx-amz-date:20130524T000000Z\n\n"
	    "host;range;x-amz-content-sha256;x-amz-date\n" EMPTY_SHA256,
	    S3_STS_HEAD "7344ae5b7ee6c3e7e6b0fe0640412a37625d1fbfff95c48bbb2dc43964946972",
	    /* AWS prints it without the spaces after the commas; both are accepted. */
	    S3_AUTH_HEAD
	    "SignedHeaders=host;range;x-amz-content-sha256;x-amz-date, "
	    "Signature=f0e8bdb87c964420e857bd35b5d6ed310bd44f0170aba48dd91039c6036bdb41",
	};
	char **h;

	(void)state;
	assert_vector(&v, &s3_creds);
	h = sigv4_sign(&v.req, &s3_creds);
	assert_string_equal(header_find(h, "x-amz-content-sha256"),
			    "x-amz-content-sha256: " EMPTY_SHA256);
	assert_string_equal(header_find(h, "X-Amz-Date"), "X-Amz-Date: 20130524T000000Z");
	assert_int_equal(header_count(h), 3);
	sigv4_headers_free(h);
}

static void test_s3_put_object_signs_the_path_as_sent(void **state)
{
	static const char *const headers[] = {"Date: Fri, 24 May 2013 00:00:00 GMT",
					      "x-amz-storage-class: REDUCED_REDUNDANCY", NULL};
	struct vector v = {
	    s3_request("PUT", "/test%24file.text", NULL, headers, "Welcome to Amazon S3."),
	    "PUT\n/test%24file.text\n\ndate:Fri, 24 May 2013 00:00:00 GMT\n"
	    "host:examplebucket.s3.amazonaws.com\n"
	    "x-amz-content-sha256:"
	    "44ce7dd67c959e0d3524ffac1771dfbba87d2b6b4b4e99e42034a8b803f8b072\n"
	    "x-amz-date:20130524T000000Z\nx-amz-storage-class:REDUCED_REDUNDANCY\n\n"
	    "date;host;x-amz-content-sha256;x-amz-date;x-amz-storage-class\n"
	    "44ce7dd67c959e0d3524ffac1771dfbba87d2b6b4b4e99e42034a8b803f8b072",
	    S3_STS_HEAD "9e0e90d9c76de8fa5b200d8c849cd5b8dc7a3be3951ddb7f6a76b4158342019d",
	    S3_AUTH_HEAD
	    "SignedHeaders=date;host;x-amz-content-sha256;x-amz-date;x-amz-storage-class, "
	    "Signature=98ad721746da40c64f1a55b78f14c238d841ea1380cd77a1b5971af0ece108bd",
	};

	(void)state;
	assert_vector(&v, &s3_creds);
}

static void test_s3_get_bucket_lifecycle_keeps_the_empty_value(void **state)
{
	struct vector v = {
	    s3_request("GET", "/", "lifecycle", NULL, NULL),
	    "GET\n/\nlifecycle=\nhost:examplebucket.s3.amazonaws.com\n"
	    "x-amz-content-sha256:" EMPTY_SHA256 "\nx-amz-date:20130524T000000Z\n\n"
	    "host;x-amz-content-sha256;x-amz-date\n" EMPTY_SHA256,
	    S3_STS_HEAD "9766c798316ff2757b517bc739a67f6213b4ab36dd5da2f94eaebf79c77395ca",
	    S3_AUTH_HEAD
	    "SignedHeaders=host;x-amz-content-sha256;x-amz-date, "
	    "Signature=fea454ca298b7da1c68078a5d1bdbfbbe0d65c699e0f91ac7a200a0136783543",
	};

	(void)state;
	assert_vector(&v, &s3_creds);
}

static void test_s3_list_objects_sorts_the_query(void **state)
{
	struct vector v = {
	    s3_request("GET", "/", "prefix=J&max-keys=2", NULL, NULL),
	    "GET\n/\nmax-keys=2&prefix=J\nhost:examplebucket.s3.amazonaws.com\n"
	    "x-amz-content-sha256:" EMPTY_SHA256 "\nx-amz-date:20130524T000000Z\n\n"
	    "host;x-amz-content-sha256;x-amz-date\n" EMPTY_SHA256,
	    S3_STS_HEAD "df57d21db20da04d7fa30298dd4488ba3a2b47ca3a489c74750e0f1e7df1b9b7",
	    S3_AUTH_HEAD
	    "SignedHeaders=host;x-amz-content-sha256;x-amz-date, "
	    "Signature=34b48302e7b5fa45bde8084f4b7868a86f0a534bc59db6670ed5711ef69dc6f7",
	};

	(void)state;
	assert_vector(&v, &s3_creds);
}

static void test_s3_path_is_neither_normalised_nor_reencoded(void **state)
{
	struct sigv4_request r = s3_request("GET", "/bucket/a//b/../c%20d", NULL, NULL, NULL);
	char *creq = sigv4_canonical_request(&r, &s3_creds, NULL);

	(void)state;
	assert_true(str_starts_with(creq, "GET\n/bucket/a//b/../c%20d\n\n"));
	free(creq);
}

static void test_caller_payload_hash_is_signed_and_not_repeated(void **state)
{
	static const char *const headers[] = {"x-amz-content-sha256: UNSIGNED-PAYLOAD", NULL};
	struct sigv4_request r = s3_request("PUT", "/k", NULL, headers, "body");
	char *sh = NULL, *creq = sigv4_canonical_request(&r, &s3_creds, &sh);
	char **h = sigv4_sign(&r, &s3_creds);

	(void)state;
	assert_true(str_ends_with(creq, "\nx-amz-content-sha256:UNSIGNED-PAYLOAD\n"
					"x-amz-date:20130524T000000Z\n\n"
					"host;x-amz-content-sha256;x-amz-date\nUNSIGNED-PAYLOAD"));
	assert_string_equal(sh, "host;x-amz-content-sha256;x-amz-date");
	assert_null(header_find(h, "x-amz-content-sha256"));
	assert_int_equal(header_count(h), 2);
	sigv4_headers_free(h);
	free(creq);
	free(sh);
}

static void test_query_is_encoded_exactly_once(void **state)
{
	struct sigv4_request r =
	    suite_request("GET", "/", "b=%7e&a=x%20y&c=1+2&d&e=%zz&&Name=%E1%88%B4", NULL, NULL);
	char *creq = sigv4_canonical_request(&r, &suite_creds, NULL);

	(void)state;
	assert_true(
	    str_starts_with(creq, "GET\n/\nName=%E1%88%B4&a=x%20y&b=~&c=1%2B2&d=&e=%25zz\n"));
	free(creq);
}

static void test_caller_host_and_date_headers_are_replaced(void **state)
{
	static const char *const headers[] = {"Host: evil.example", "X-Amz-Date: 19990101T000000Z",
					      NULL};
	struct sigv4_request r = suite_request("GET", "/", NULL, headers, NULL);
	char *creq = sigv4_canonical_request(&r, &suite_creds, NULL);

	(void)state;
	assert_string_equal(creq,
			    "GET\n/\n\nhost:example.amazonaws.com\nx-amz-date:20150830T123600Z\n\n"
			    "host;x-amz-date\n" EMPTY_SHA256);
	free(creq);
}

static void test_header_without_colon_is_refused(void **state)
{
	static const char *const headers[] = {"My-Header1 value1", NULL};
	struct sigv4_request r = suite_request("GET", "/", NULL, headers, NULL);

	(void)state;
	assert_null(sigv4_sign(&r, &suite_creds));
	assert_null(sigv4_canonical_request(&r, &suite_creds, NULL));
}

static void test_header_name_with_a_space_is_refused(void **state)
{
	static const char *const headers[] = {"My Header: value1", NULL};
	struct sigv4_request r = suite_request("GET", "/", NULL, headers, NULL);

	(void)state;
	assert_null(sigv4_sign(&r, &suite_creds));
}

static void test_method_that_is_not_a_token_is_refused(void **state)
{
	struct sigv4_request r = suite_request("GET /x HTTP/1.1\r\nX: y", "/", NULL, NULL, NULL);

	(void)state;
	assert_null(sigv4_sign(&r, &suite_creds));
}

static void test_header_with_line_break_is_refused(void **state)
{
	static const char *const headers[] = {"My-Header1: a\r\nX-Injected: b", NULL};
	struct sigv4_request r = suite_request("GET", "/", NULL, headers, NULL);

	(void)state;
	assert_null(sigv4_sign(&r, &suite_creds));
}

static void test_request_without_host_or_region_is_refused(void **state)
{
	struct sigv4_request r = suite_request("GET", "/", NULL, NULL, NULL);

	(void)state;
	r.host = "";
	assert_null(sigv4_sign(&r, &suite_creds));
	r.host = SUITE_HOST;
	r.region = NULL;
	assert_null(sigv4_sign(&r, &suite_creds));
}

static void test_time_without_a_four_digit_year_is_refused(void **state)
{
	struct sigv4_request r = suite_request("GET", "/", NULL, NULL, NULL);

	(void)state;
	r.now = (time_t)INT64_MAX;
	assert_null(sigv4_sign(&r, &suite_creds));
	assert_null(sigv4_string_to_sign(&r, "x"));
}

static void test_redaction_hides_signature_and_access_key_but_keeps_the_scope(void **state)
{
	struct sigv4_request r = suite_request("GET", "/", NULL, NULL, NULL);
	char **h = sigv4_sign(&r, &suite_creds);
	char *red = sigv4_redact_header(h[0]);

	(void)state;
	assert_string_equal(red, "Authorization: AWS4-HMAC-SHA256 Credential=REDACTED/" SUITE_SCOPE
				 ", SignedHeaders=host;x-amz-date, Signature=REDACTED");
	assert_null(strstr(red, SUITE_AK));
	assert_null(strstr(red, "5fa00fa3"));
	free(red);
	sigv4_headers_free(h);
}

static void test_redaction_hides_the_session_token(void **state)
{
	char *red = sigv4_redact_header("X-Amz-Security-Token: " SUITE_TOKEN);

	(void)state;
	assert_string_equal(red, "X-Amz-Security-Token: REDACTED");
	free(red);
}

static void test_redaction_hides_other_authorization_schemes_whole(void **state)
{
	char *red = sigv4_redact_header("authorization:Bearer abc.def");

	(void)state;
	assert_string_equal(red, "authorization:REDACTED");
	free(red);
}

static void test_redaction_leaves_other_headers_alone(void **state)
{
	char *a = sigv4_redact_header("X-Amz-Date: 20150830T123600Z");
	char *b = sigv4_redact_header("no colon here");

	(void)state;
	assert_string_equal(a, "X-Amz-Date: 20150830T123600Z");
	assert_string_equal(b, "no colon here");
	free(a);
	free(b);
}

static void test_release_frees_and_zeroes_the_credentials(void **state)
{
	struct aws_creds c = {xstrdup("AK"), xstrdup("SK"), xstrdup("TOKEN"), xstrdup("here")};

	(void)state;
	aws_creds_release(&c);
	assert_null(c.access_key);
	assert_null(c.secret_key);
	assert_null(c.session_token);
	assert_null(c.source);
	aws_creds_release(&c);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_signing_key_matches_the_documented_derivation),
	    cmocka_unit_test(test_signing_key_matches_the_older_documented_derivation),
	    cmocka_unit_test(test_suite_get_vanilla),
	    cmocka_unit_test(test_suite_get_vanilla_query_order_key_case),
	    cmocka_unit_test(test_suite_get_vanilla_query_order_key_sorts_equal_names_by_value),
	    cmocka_unit_test(test_suite_get_vanilla_empty_query_key),
	    cmocka_unit_test(test_suite_get_vanilla_query_unreserved),
	    cmocka_unit_test(test_suite_get_unreserved),
	    cmocka_unit_test(test_suite_post_x_www_form_urlencoded),
	    cmocka_unit_test(test_suite_post_header_key_sort),
	    cmocka_unit_test(test_suite_post_header_value_case),
	    cmocka_unit_test(test_suite_get_header_value_trim),
	    cmocka_unit_test(test_suite_get_header_value_order_keeps_the_order_sent),
	    cmocka_unit_test(test_suite_get_header_key_duplicate),
	    cmocka_unit_test(test_suite_post_vanilla_query),
	    cmocka_unit_test(test_suite_get_utf8),
	    cmocka_unit_test(test_suite_get_space),
	    cmocka_unit_test(test_suite_normalize_path_get_slashes),
	    cmocka_unit_test(test_suite_normalize_path_get_slash_pointless_dot),
	    cmocka_unit_test(test_suite_normalize_path_cases_that_resolve_to_the_root),
	    cmocka_unit_test(test_suite_session_token_is_sent_and_signed),
	    cmocka_unit_test(test_sign_returns_authorization_and_date_only_without_token_or_s3),
	    cmocka_unit_test(test_non_s3_path_is_encoded_a_second_time),
	    cmocka_unit_test(test_s3_get_object_with_range),
	    cmocka_unit_test(test_s3_put_object_signs_the_path_as_sent),
	    cmocka_unit_test(test_s3_get_bucket_lifecycle_keeps_the_empty_value),
	    cmocka_unit_test(test_s3_list_objects_sorts_the_query),
	    cmocka_unit_test(test_s3_path_is_neither_normalised_nor_reencoded),
	    cmocka_unit_test(test_caller_payload_hash_is_signed_and_not_repeated),
	    cmocka_unit_test(test_query_is_encoded_exactly_once),
	    cmocka_unit_test(test_caller_host_and_date_headers_are_replaced),
	    cmocka_unit_test(test_header_without_colon_is_refused),
	    cmocka_unit_test(test_header_name_with_a_space_is_refused),
	    cmocka_unit_test(test_method_that_is_not_a_token_is_refused),
	    cmocka_unit_test(test_header_with_line_break_is_refused),
	    cmocka_unit_test(test_request_without_host_or_region_is_refused),
	    cmocka_unit_test(test_time_without_a_four_digit_year_is_refused),
	    cmocka_unit_test(test_redaction_hides_signature_and_access_key_but_keeps_the_scope),
	    cmocka_unit_test(test_redaction_hides_the_session_token),
	    cmocka_unit_test(test_redaction_hides_other_authorization_schemes_whole),
	    cmocka_unit_test(test_redaction_leaves_other_headers_alone),
	    cmocka_unit_test(test_release_frees_and_zeroes_the_credentials),
	};

	return cmocka_run_group_tests_name("sigv4", tests, NULL, NULL);
}
