/*
 * aws_call.c - one AWS API call: the request built for its protocol, signed
 * afresh for every attempt, sent through http.c (the one layer that retries
 * throttling, 5xx and lost connections, under the logical call's deadline
 * and the service's adaptive rate and retry quota: retry.h), and its answer
 * parsed or its error mapped to a prov_status (PROV_GAVE_UP when those
 * retries ran out).
 *
 * Three protocols: Query (EC2, IAM: form-encoded POST, XML answer), JSON 1.1
 * (FSx: X-Amz-Target) and REST (S3 with XML, EFS with JSON). An error keeps
 * the code, the message and the request id; a denial names the IAM action
 * that was refused, never a generic failure, and a capacity error is never
 * mistaken for one.
 */
#include "aws_int.h"

#include "aws/awserr.h"
#include "aws/awsxml.h"
#include "http.h"
#include "log.h"
#include "jsonw.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* The largest response parsed as XML or JSON. */
#define AWS_MAX_DOC (64u << 20)

static const char *const service_ids[AWS_NSERVICES] = {
    "ec2", "s3", "iam", "fsx", "efs", "sts", "ssm", "monitoring", "resource-groups", "ce"};
static const char *const iam_prefixes[AWS_NSERVICES] = {
    "ec2", "s3", "iam", "fsx", "elasticfilesystem", "sts", "ssm", "cloudwatch", "resource-groups", "ce"};
/* The X-Amz-Target prefix of the services kiln calls with JSON 1.1 (aws_json). */
static const char *const json_targets[AWS_NSERVICES] = {
    [AWS_FSX] = "AWSSimbaAPIService_v20180301", [AWS_SSM] = "AmazonSSM",
    [AWS_CE] = "AWSInsightsIndexService"};

const char *aws_service_id(enum aws_service s)
{
	return service_ids[s];
}

char *aws_uri_encode(const char *s, bool keep_slash)
{
	static const char hex[] = "0123456789ABCDEF";
	struct strbuf sb = {0};

	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;

		if ((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
		    c == '-' || c == '.' || c == '_' || c == '~' || (keep_slash && c == '/')) {
			sb_addc(&sb, (char)c);
		} else {
			sb_addc(&sb, '%');
			sb_addc(&sb, hex[c >> 4]);
			sb_addc(&sb, hex[c & 15]);
		}
	}
	return sb.buf ? sb_detach(&sb) : xstrdup("");
}

char *aws_uri_decode(const char *s)
{
	struct strbuf sb = {0};

	for (; *s; s++) {
		if (*s == '%' && isxdigit((unsigned char)s[1]) && isxdigit((unsigned char)s[2])) {
			char hex[3] = {s[1], s[2], 0};

			sb_addc(&sb, (char)strtol(hex, NULL, 16));
			s += 2;
		} else {
			sb_addc(&sb, *s == '+' ? ' ' : *s);
		}
	}
	return sb.buf ? sb_detach(&sb) : xstrdup("");
}

/*
 * A form body as botocore encodes one (application/x-www-form-urlencoded:
 * a space is '+'): a server that checks the signature over the parameters
 * it parsed, re-encoded, gets the same bytes.
 */
static char *form_encode(const char *s)
{
	char *enc = aws_uri_encode(s, false), *p, *q;

	for (p = q = enc; *p; p++) {
		if (p[0] == '%' && p[1] == '2' && p[2] == '0') {
			*q++ = '+';
			p += 2;
		} else {
			*q++ = *p;
		}
	}
	*q = '\0';
	return enc;
}

void aws_param(struct aws_params *p, const char *key, const char *value)
{
	char *v = form_encode(value ? value : "");

	sb_addf(&p->sb, "%s%s=%s", p->sb.len ? "&" : "", key, v);
	free(v);
}

void aws_paramf(struct aws_params *p, const char *key, const char *fmt, ...)
{
	va_list ap;
	char *v;

	va_start(ap, fmt);
	v = xvasprintf(fmt, ap);
	va_end(ap);
	aws_param(p, key, v);
	free(v);
}

void aws_params_release(struct aws_params *p)
{
	sb_release(&p->sb);
}

/* One request as every attempt sends it; the signature is made per attempt. */
struct signed_call {
	struct prov_ctx *ctx;
	enum aws_service svc;
	const char *method;
	char *url;
	const char *path;  /* as on the wire, for signing */
	const char *query; /* as on the wire, for signing; "" for none */
	const char *host;
	const char *body;
	size_t body_len;
	const char *const *fixed; /* headers beside the signature's */
	char **sig;		  /* the last attempt's signature headers */
	const char **all;	  /* fixed + sig, for http.c */
	bool once;		  /* not idempotent: only throttling is retried here */
	struct retry_spend spend[2]; /* the documented buckets it spends from (aws_rate.h) */
	size_t nspend;
};

static void prepare(void *arg, int attempt, struct http_request *req)
{
	struct signed_call *c = arg;
	struct sigv4_request sr = {
	    .method = c->method,
	    .host = c->host,
	    .path = c->path,
	    .query = c->query,
	    .headers = c->fixed,
	    .body = c->body,
	    .body_len = c->body_len,
	    .region = aws_signing_region(service_ids[c->svc], c->ctx->region),
	    .service = aws_signing_name(service_ids[c->svc]),
	    .now = time(NULL),
	    .s3 = c->svc == AWS_S3,
	};
	size_t n = 0, i;

	(void)attempt;
	sigv4_headers_free(c->sig);
	c->sig = sigv4_sign(&sr, &c->ctx->creds);
	free(c->all);
	for (i = 0; c->fixed && c->fixed[i]; i++)
		;
	for (n = 0; c->sig[n]; n++)
		;
	c->all = xcalloc(i + n + 1, sizeof(*c->all));
	memcpy(c->all, c->fixed, i * sizeof(*c->all));
	memcpy(c->all + i, c->sig, n * sizeof(*c->all));
	atomic_fetch_add(&c->ctx->calls, 1);
	req->method = c->method;
	req->url = c->url;
	req->headers = c->all;
	req->body = c->body;
	req->body_len = c->body_len;
}

static bool throttled(void *arg, const struct http_response *resp)
{
	struct aws_error e;
	bool slow_down;

	(void)arg;
	aws_error_parse(&e, resp->status, resp->body, resp->body_len, resp->request_id,
			resp->error_type);
	slow_down = aws_error_is_throttle(&e);
	aws_error_release(&e);
	return slow_down;
}

static bool transient(void *arg, const struct http_response *resp)
{
	const struct signed_call *c = arg;
	struct aws_error e;
	bool again;

	if (resp->status < 400)
		return false;
	aws_error_parse(&e, resp->status, resp->body, resp->body_len, resp->request_id,
			resp->error_type);
	/* Throttling is refused before anything is done; a 5xx may come after. */
	again = c->once ? aws_error_is_throttle(&e) : aws_error_is_transient(&e);
	aws_error_release(&e);
	return again;
}

/*
 * Say how http.c's retries ended, after err's message: the attempts, the
 * time, whether throttling or the call's deadline ended them, and what to do.
 */
static void gave_up(struct kiln_error *err, const struct http_tries *tries)
{
	size_t len = strlen(err->msg);
	char ended[64] = ""; /* what ended the retries before the attempts did */

	if (tries->out_of_time)
		snprintf(ended, sizeof(ended), ", at the call's deadline of %.1f s",
			 (double)tries->deadline_ms / 1000);
	else if (tries->no_quota)
		snprintf(ended, sizeof(ended), ", with the service's retry quota spent");
	snprintf(err->msg + len, sizeof(err->msg) - len,
		 " (%sgave up after %d attempt%s in %.1f s%s)",
		 tries->throttled ? "throttled: " : "", tries->attempts,
		 tries->attempts == 1 ? "" : "s", (double)tries->ms / 1000, ended);
	if (tries->throttled)
		kiln_error_hint(err, "AWS is throttling this account's requests and kiln slowed "
				     "down to the rate it allows; run it again later");
}

/* An error response as a prov_status, with err saying what and what to do. */
static int map_error(struct prov_ctx *ctx, enum aws_service svc, const char *action,
		     const struct http_response *resp, const struct http_tries *tries,
		     struct kiln_error *err)
{
	struct aws_error e;
	char *what;
	int rc = PROV_ERROR;

	aws_error_parse(&e, resp->status, resp->body, resp->body_len, resp->request_id,
			resp->error_type);
	what = aws_error_describe(&e);
	if (aws_error_is_notfound(&e)) {
		kiln_error_set(err, "aws: %s %s: %s", service_ids[svc], action, what);
		rc = PROV_NOTFOUND;
	} else if (aws_error_is_capacity(&e)) {
		kiln_error_set(err, "aws: %s %s: %s", service_ids[svc], action, what);
		kiln_error_hint(err,
				"capacity comes and goes: list more zones under provider.zone, "
				"or try again later");
		rc = PROV_CAPACITY;
	} else if (aws_error_is_transient(&e) && !tries->retried) {
		/* Not retried (a create sent once): it may have been done; the caller looks. */
		kiln_error_set(err, "aws: %s %s: %s (after %d attempts)", service_ids[svc], action,
			       what, tries->attempts);
		rc = PROV_RETRY;
	} else if (aws_error_is_transient(&e)) {
		kiln_error_set(err, "aws: %s %s: %s", service_ids[svc], action, what);
		gave_up(err, tries);
		rc = PROV_GAVE_UP;
	} else if (aws_error_is_auth(&e)) {
		kiln_error_set(err, "aws: %s %s: the credentials were refused: %s",
			       service_ids[svc], action, what);
		kiln_error_hint(err, "check the credentials kiln used (%s) and the clock",
				ctx->creds.source);
	} else if (aws_error_is_denied(&e)) {
		kiln_error_set(err, "aws: %s:%s was denied to the credentials from %s: %s",
			       iam_prefixes[svc], action, ctx->creds.source, what);
		kiln_error_hint(err,
				"allow %s:%s for them; `kiln iam-policy SPEC` prints every action "
				"kiln needs for a spec",
				iam_prefixes[svc], action);
	} else {
		kiln_error_set(err, "aws: %s %s: %s", service_ids[svc], action, what);
	}
	free(what);
	aws_error_release(&e);
	return rc;
}

static int run(struct signed_call *c, const char *action, struct http_response *resp,
	       struct kiln_error *err)
{
	struct http_call call = {
	    .service = service_ids[c->svc],
	    .action = action,
	    .prepare = prepare,
	    .transient = transient,
	    .throttled = throttled,
	    .arg = c,
	    .rate = c->ctx->rate[c->svc],
	    .spend = c->spend,
	    .nspend = c->nspend,
	    .once = c->once,
	    .unreachable_hint = "check the endpoint (AWS_ENDPOINT_URL) and the network",
	};
	struct http_tries tries;
	int rc;

	if (!c->ctx->have_creds) {
		*err = c->ctx->creds_err;
		return PROV_ERROR;
	}
	rc = http_call_run(&call, resp, &tries, err);
	sigv4_headers_free(c->sig);
	c->sig = NULL;
	free(c->all);
	c->all = NULL;
	if (rc < 0) {
		char msg[sizeof(err->msg)];

		snprintf(msg, sizeof(msg), "%s", err->msg);
		kiln_error_set(err, "aws: %s %s: %s", service_ids[c->svc], action, msg);
		/* A create sent once lost its answer: it may have been done; the caller looks. */
		if (c->once && !tries.retried)
			return PROV_RETRY;
		if (tries.retried)
			gave_up(err, &tries);
		return PROV_GAVE_UP;
	}
	if (resp->status >= 300 || resp->status < 200) {
		rc = map_error(c->ctx, c->svc, action, resp, &tries, err);
		http_response_release(resp);
		return rc;
	}
	return PROV_OK;
}

/* A 2xx body as JSON: XML parsed, JSON loaded; NULL for an empty body. */
static int parse_body(enum aws_service svc, const char *action, const struct http_response *resp,
		      bool xml, json_t **out, struct kiln_error *err)
{
	json_error_t je;

	*out = NULL;
	if (resp->body_len == 0)
		return PROV_OK;
	if (resp->body_len > AWS_MAX_DOC) {
		kiln_error_set(err, "aws: %s %s: the response is too large", service_ids[svc],
			       action);
		return PROV_ERROR;
	}
	if (xml) {
		*out = awsxml_parse(resp->body, resp->body_len, service_ids[svc], err);
	} else {
		*out = json_loadb(resp->body, resp->body_len, 0, &je);
		if (!*out)
			kiln_error_set(err, "aws: %s %s: malformed JSON in the response: %s",
				       service_ids[svc], action, je.text);
	}
	return *out ? PROV_OK : PROV_ERROR;
}

/*
 * What is inside an XML answer's root element ({"<Action>Response": {...}}):
 * callers read by the names inside, whatever the root is called (S3 names
 * it after the configuration, some servers after the action).
 */
static json_t *root_content(json_t *doc)
{
	const char *k;
	json_t *v;

	json_object_foreach(doc, k, v) return json_is_object(v) ? json_incref(v) : json_object();
	return json_object();
}

static void call_init(struct signed_call *c, struct prov_ctx *ctx, enum aws_service svc,
		      const char *method, const char *path, const char *query)
{
	memset(c, 0, sizeof(*c));
	c->ctx = ctx;
	c->svc = svc;
	c->method = method;
	c->path = path;
	c->query = query ? query : "";
	c->host = ctx->ep[svc].host;
	c->url = xasprintf("%s%s%s%s", ctx->ep[svc].base, path, *c->query ? "?" : "", c->query);
}

static int query(struct prov_ctx *ctx, enum aws_service svc, const char *action,
		 struct aws_params *p, bool once, json_t **out, struct kiln_error *err);

bool aws_action_irreversible(const char *action)
{
	/* Bought up front, refunded never ("Capacity Blocks for ML", EC2 user guide). */
	static const char *const irreversible[] = {"PurchaseCapacityBlock"};
	size_t i;

	for (i = 0; action && i < ARRAY_SIZE(irreversible); i++)
		if (strcmp(action, irreversible[i]) == 0)
			return true;
	return false;
}

int aws_query(struct prov_ctx *ctx, enum aws_service svc, const char *action, struct aws_params *p,
	      json_t **out, struct kiln_error *err)
{
	return query(ctx, svc, action, p, false, out, err);
}

int aws_query_once(struct prov_ctx *ctx, enum aws_service svc, const char *action,
		   struct aws_params *p, json_t **out, struct kiln_error *err)
{
	return query(ctx, svc, action, p, true, out, err);
}

static int query(struct prov_ctx *ctx, enum aws_service svc, const char *action,
		 struct aws_params *p, bool once, json_t **out, struct kiln_error *err)
{
	static const char *const fixed[] = {
	    "Content-Type: application/x-www-form-urlencoded; charset=utf-8", NULL};
	struct aws_params all = {{0}};
	struct signed_call c;
	struct http_response resp;
	json_t *doc = NULL;
	int rc;

	if (out)
		*out = NULL;
	aws_param(&all, "Action", action);
	aws_param(&all, "Version",
		  svc == AWS_EC2  ? AWS_EC2_VERSION
		  : svc == AWS_CW ? AWS_CW_VERSION
				  : AWS_IAM_VERSION);
	if (p && p->sb.len)
		sb_addf(&all.sb, "&%s", p->sb.buf);
	call_init(&c, ctx, svc, "POST", "/", NULL);
	c.body = all.sb.buf;
	c.body_len = all.sb.len;
	c.fixed = fixed;
	c.once = once || aws_action_irreversible(action);
	if (svc == AWS_EC2)
		c.nspend = aws_rate_spend(&ctx->ec2_rate, action, all.sb.buf, c.spend);
	rc = run(&c, action, &resp, err);
	if (rc == PROV_OK) {
		rc = parse_body(svc, action, &resp, true, &doc, err);
		http_response_release(&resp);
	}
	if (rc == PROV_OK && out && doc)
		*out = root_content(doc);
	if (rc == PROV_OK && out && !*out)
		*out = json_object();
	json_decref(doc);
	free(c.url);
	aws_params_release(&all);
	return rc;
}

int aws_json(struct prov_ctx *ctx, enum aws_service svc, const char *action, json_t *body,
	     json_t **out, struct kiln_error *err)
{
	char *text = body ? jsonw_dumps(body, JSON_COMPACT, NULL) : NULL;
	char *th;
	const char *fixed[] = {"Content-Type: application/x-amz-json-1.1", NULL, NULL};
	struct signed_call c;
	struct http_response resp;
	int rc;

	json_decref(body);
	if (out)
		*out = NULL;
	if (!text) {
		/* A field the request needed was missing from what was read before. */
		kiln_error_set(err,
			       "aws: %s %s: the request could not be made (a value it needs "
			       "is missing)",
			       service_ids[svc], action);
		return PROV_ERROR;
	}
	th = xasprintf("X-Amz-Target: %s.%s", json_targets[svc], action);
	fixed[1] = th;
	call_init(&c, ctx, svc, "POST", "/", NULL);
	c.body = text;
	c.body_len = strlen(text);
	c.fixed = fixed;
	rc = run(&c, action, &resp, err);
	if (rc == PROV_OK) {
		json_t *doc;

		rc = parse_body(svc, action, &resp, false, &doc, err);
		http_response_release(&resp);
		if (rc == PROV_OK && out)
			*out = doc ? doc : json_object();
		else
			json_decref(doc);
	}
	free(c.url);
	free(th);
	free(text);
	return rc;
}

int aws_rest_call(struct prov_ctx *ctx, enum aws_service svc, const struct aws_rest *r,
		  json_t **out, struct kiln_error *err)
{
	const struct aws_endpoint *ep = &ctx->ep[svc];
	const char *fixed[4] = {NULL};
	char *ct = NULL, *md5 = NULL, *path, *host = NULL;
	struct signed_call c;
	struct http_response resp;
	size_t nf = 0;
	int rc;

	if (out)
		*out = NULL;
	/* S3: path-style on an override (moto, LocalStack), virtual-host style on AWS. */
	if (svc == AWS_S3 && r->bucket && !ep->custom) {
		path = xstrdup(r->path);
		host = xasprintf("%s.%s", r->bucket, ep->host);
	} else if (svc == AWS_S3 && r->bucket) {
		path = xasprintf("/%s%s", r->bucket, strcmp(r->path, "/") == 0 ? "" : r->path);
	} else {
		path = xstrdup(r->path);
	}
	if (r->content_type)
		fixed[nf++] = ct = xasprintf("Content-Type: %s", r->content_type);
	if (r->content_md5)
		fixed[nf++] = md5 = xasprintf("Content-MD5: %s", r->content_md5);
	call_init(&c, ctx, svc, r->method, path, r->query);
	if (host) {
		const char *scheme_end = strstr(ep->base, "://");

		free(c.url);
		c.url = xasprintf("%.*s://%s%s%s%s", scheme_end ? (int)(scheme_end - ep->base) : 5,
				  ep->base, host, path, *c.query ? "?" : "", c.query);
		c.host = host;
	}
	c.body = r->body ? r->body : "";
	c.body_len = r->body ? strlen(r->body) : 0;
	c.fixed = fixed;
	rc = run(&c, r->action, &resp, err);
	if (rc == PROV_OK) {
		json_t *doc;

		rc = parse_body(svc, r->action, &resp, svc == AWS_S3, &doc, err);
		http_response_release(&resp);
		if (rc == PROV_OK && out && doc && svc == AWS_S3)
			*out = root_content(doc);
		else if (rc == PROV_OK && out)
			*out = json_incref(doc);
		json_decref(doc);
	}
	free(c.url);
	free(path);
	free(host);
	free(ct);
	free(md5);
	return rc;
}
