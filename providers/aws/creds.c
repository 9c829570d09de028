/*
 * creds.c - AWS credentials, region and endpoints from the environment and
 * the AWS CLI's shared files (~/.aws/credentials, ~/.aws/config).
 *
 * The shared files are read as hostile input: any line length, any bytes, no
 * fixed-size buffers, and whatever the parser does not understand is ignored
 * rather than trusted. Secrets read from them are wiped before their memory
 * is freed, the file buffer included.
 */
#include "aws/creds.h"

#include <errno.h>
#include <openssl/crypto.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

/* Far beyond any real credentials file; a bigger one is a mistake or an attack. */
#define SHARED_FILE_LIMIT (1024 * 1024)

/* The settings kiln reads from one profile section. */
struct ini_profile {
	bool found; /* the section exists */
	char *access_key;
	char *secret_key;
	char *session_token;
	char *region;
	const char *unsupported; /* a key naming a source kiln does not resolve */
};

/* Keys of profiles whose credentials come from somewhere kiln does not go. */
static const char *const unsupported_keys[] = {
    "role_arn", "credential_process", "sso_session", "sso_start_url", "web_identity_token_file",
};

/* An environment variable, with an empty value counting as unset (as the AWS CLI does). */
static const char *env_get(const char *name)
{
	const char *v = getenv(name);

	return v && *v ? v : NULL;
}

static void free_secret(char **s)
{
	if (*s) {
		OPENSSL_cleanse(*s, strlen(*s));
		free(*s);
		*s = NULL;
	}
}

static void ini_profile_release(struct ini_profile *p)
{
	free_secret(&p->access_key);
	free_secret(&p->secret_key);
	free_secret(&p->session_token);
	free(p->region);
	memset(p, 0, sizeof(*p));
}

static bool is_blank(char c)
{
	return c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\v';
}

/* Trim [*s, *e) in place. */
static void trim(const char **s, const char **e)
{
	while (*s < *e && is_blank(**s))
		(*s)++;
	while (*e > *s && is_blank((*e)[-1]))
		(*e)--;
}

static bool span_eq(const char *s, const char *e, const char *word)
{
	size_t n = strlen(word);

	return (size_t)(e - s) == n && memcmp(s, word, n) == 0;
}

/*
 * Does the section header text [s, e) (inside the brackets) name the profile?
 * The credentials file names a profile plainly; the config file says
 * "profile NAME", except for the default profile, which may be either.
 */
static bool section_matches(const char *s, const char *e, const char *profile, bool config)
{
	trim(&s, &e);
	if (!config || strcmp(profile, "default") == 0) {
		if (span_eq(s, e, profile))
			return true;
		if (!config)
			return false;
	}
	if ((size_t)(e - s) < 8 || memcmp(s, "profile", 7) != 0 || !is_blank(s[7]))
		return false;
	s += 7;
	trim(&s, &e);
	return span_eq(s, e, profile);
}

static void ini_set(struct ini_profile *p, const char *k, const char *ke, const char *v,
		    const char *ve)
{
	char **slot = NULL;
	size_t i, klen = (size_t)(ke - k);

	if (klen == 17 && strncasecmp(k, "aws_access_key_id", klen) == 0)
		slot = &p->access_key;
	else if (klen == 21 && strncasecmp(k, "aws_secret_access_key", klen) == 0)
		slot = &p->secret_key;
	else if (klen == 17 && strncasecmp(k, "aws_session_token", klen) == 0)
		slot = &p->session_token;
	else if (klen == 6 && strncasecmp(k, "region", klen) == 0)
		slot = &p->region;
	if (slot) {
		/*
		 * The last assignment wins, as with the AWS CLI. A NUL byte ends
		 * the value here, so that wiping it by strlen wipes all of it.
		 */
		free_secret(slot);
		*slot = xstrndup(v, strnlen(v, (size_t)(ve - v)));
		return;
	}
	for (i = 0; i < ARRAY_SIZE(unsupported_keys); i++)
		if (strlen(unsupported_keys[i]) == klen &&
		    strncasecmp(k, unsupported_keys[i], klen) == 0 && !p->unsupported)
			p->unsupported = unsupported_keys[i];
}

/*
 * Read the section of one profile from an ini buffer. Lines are any length;
 * comments start with '#' or ';'; keys are case-insensitive and split from
 * their value at the first '=' or ':' (the AWS CLI's parser accepts both);
 * a line indented deeper than the key before it continues that key (the
 * nested "s3 =" settings) and is skipped; anything else that is not a
 * section header or a key is ignored.
 */
static void ini_scan(const char *buf, size_t len, const char *profile, bool config,
		     struct ini_profile *p)
{
	const char *line = buf, *end = buf + len;
	bool in_section = false, after_key = false;
	size_t key_indent = 0;

	while (line < end) {
		const char *nl = memchr(line, '\n', (size_t)(end - line));
		const char *next = nl ? nl + 1 : end, *s = line, *e = nl ? nl : end, *d;
		size_t indent;

		while (s < e && is_blank(*s))
			s++;
		indent = (size_t)(s - line);
		line = next;
		trim(&s, &e);
		if (s == e || *s == '#' || *s == ';')
			continue;
		if (*s == '[') {
			const char *close = e;

			while (close > s && close[-1] != ']')
				close--;
			/* A broken header still ends the section before it. */
			in_section =
			    close > s + 1 && section_matches(s + 1, close - 1, profile, config);
			if (in_section)
				p->found = true;
			after_key = false;
			continue;
		}
		if (after_key && indent > key_indent)
			continue;
		for (d = s; d < e && *d != '=' && *d != ':'; d++)
			;
		if (d == e) {
			after_key = false;
			continue;
		}
		after_key = true;
		key_indent = indent;
		if (in_section) {
			const char *k = s, *ke = d, *v = d + 1, *ve = e;

			trim(&k, &ke);
			trim(&v, &ve);
			ini_set(p, k, ke, v, ve);
		}
	}
}

/* The path of a shared file: the variable's value, else ~/.aws/NAME; NULL when HOME is unset. */
static char *shared_file_path(const char *var, const char *name)
{
	const char *v = env_get(var), *home;

	if (v)
		return xstrdup(v);
	home = env_get("HOME");
	if (!home)
		return NULL;
	return xasprintf("%s%s.aws/%s", home, str_ends_with(home, "/") ? "" : "/", name);
}

/*
 * The profile's settings from one shared file into *p: 0 when the file was
 * read, 1 when there is no such file (not an error: the AWS CLI does not
 * require either file), -1 with err set when it exists but cannot be read.
 */
static int shared_file_read(const char *path, const char *profile, bool config,
			    struct ini_profile *p, struct kiln_error *err)
{
	struct stat st;
	char *buf = NULL;
	size_t len = 0;

	memset(p, 0, sizeof(*p));
	if (stat(path, &st) < 0 && (errno == ENOENT || errno == ENOTDIR))
		return 1;
	if (util_file_read_all(path, SHARED_FILE_LIMIT, &buf, &len, err) < 0) {
		kiln_error_hint(err, "fix the file's permissions, or point %s elsewhere",
				config ? "AWS_CONFIG_FILE" : "AWS_SHARED_CREDENTIALS_FILE");
		return -1;
	}
	ini_scan(buf, len, profile, config, p);
	OPENSSL_cleanse(buf, len);
	free(buf);
	return 0;
}

static void take(char **dst, char **src)
{
	*dst = *src;
	*src = NULL;
}

int aws_creds_load(struct aws_creds *out, struct kiln_error *err)
{
	static const struct {
		const char *var, *name;
		bool config;
	} files[] = {
	    {"AWS_SHARED_CREDENTIALS_FILE", "credentials", false},
	    {"AWS_CONFIG_FILE", "config", true},
	};
	const char *ak = env_get("AWS_ACCESS_KEY_ID"), *sk = env_get("AWS_SECRET_ACCESS_KEY");
	const char *profile = env_get("AWS_PROFILE"), *unsupported = NULL;
	struct strbuf places = {0};
	size_t i;
	int ret = -1;

	memset(out, 0, sizeof(*out));
	if (ak && sk) {
		const char *token = env_get("AWS_SESSION_TOKEN");

		out->access_key = xstrdup(ak);
		out->secret_key = xstrdup(sk);
		out->session_token = token ? xstrdup(token) : NULL;
		out->source = xstrdup("the environment (AWS_ACCESS_KEY_ID)");
		return 0;
	}
	if (ak || sk) {
		const char *set = ak ? "AWS_ACCESS_KEY_ID" : "AWS_SECRET_ACCESS_KEY";
		const char *missing = ak ? "AWS_SECRET_ACCESS_KEY" : "AWS_ACCESS_KEY_ID";

		kiln_error_set(err, "%s is set but %s is not", set, missing);
		kiln_error_hint(
		    err, "export %s too, or unset %s to use a profile from ~/.aws/credentials",
		    missing, set);
		return -1;
	}
	if (!profile)
		profile = "default";
	sb_adds(&places, "the environment (AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY)");
	for (i = 0; i < ARRAY_SIZE(files); i++) {
		char *path = shared_file_path(files[i].var, files[i].name);
		struct ini_profile p;
		int rc;

		if (!path) {
			sb_addf(&places, "; ~/.aws/%s (HOME is not set)", files[i].name);
			continue;
		}
		rc = shared_file_read(path, profile, files[i].config, &p, err);
		if (rc < 0) {
			free(path);
			goto out;
		}
		if (rc == 0 && p.access_key && p.secret_key) {
			take(&out->access_key, &p.access_key);
			take(&out->secret_key, &p.secret_key);
			take(&out->session_token, &p.session_token);
			out->source = xasprintf("profile '%s' in %s", profile, path);
			ini_profile_release(&p);
			free(path);
			ret = 0;
			goto out;
		}
		if (rc == 0 && (p.access_key || p.secret_key)) {
			const char *has =
			    p.access_key ? "aws_access_key_id" : "aws_secret_access_key";
			const char *lacks =
			    p.access_key ? "aws_secret_access_key" : "aws_access_key_id";

			kiln_error_set(err, "profile '%s' in %s has %s but no %s", profile, path,
				       has, lacks);
			kiln_error_hint(
			    err, "add %s to the profile, or run 'aws configure --profile %s'",
			    lacks, profile);
			ini_profile_release(&p);
			free(path);
			goto out;
		}
		if (rc == 0 && p.unsupported && !unsupported)
			unsupported = p.unsupported;
		sb_addf(&places, "; profile '%s' in %s (%s)", profile, path,
			rc == 1	   ? "no such file"
			: !p.found ? "no such profile"
				   : "no aws_access_key_id");
		ini_profile_release(&p);
		free(path);
	}
	kiln_error_set(err, "no AWS credentials found; looked in: %s", places.buf);
	if (unsupported)
		kiln_error_hint(
		    err,
		    "profile '%s' uses %s, which kiln does not resolve; export its keys "
		    "with: eval \"$(aws configure export-credentials --profile %s --format env)\"",
		    profile, unsupported, profile);
	else if (strcmp(profile, "default") == 0)
		kiln_error_hint(err, "export AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, or run "
				     "'aws configure' to write ~/.aws/credentials");
	else
		kiln_error_hint(
		    err,
		    "export AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, or run "
		    "'aws configure --profile %s', or set AWS_PROFILE to a profile that has keys",
		    profile);
out:
	sb_release(&places);
	return ret;
}

/*
 * A region goes into endpoint host names and the signing scope; refuse what
 * could change either ('/', '.', '@', spaces) rather than build a URL from it.
 */
static int region_take(const char *v, const char *where, char **out, struct kiln_error *err)
{
	const char *p;

	for (p = v; *p; p++)
		if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
		      (*p >= '0' && *p <= '9') || *p == '-' || *p == '_')) {
			kiln_error_set(err, "%s: '%.64s' is not an AWS region name", where, v);
			kiln_error_hint(err, "a region looks like us-east-1 or eu-west-2");
			return -1;
		}
	*out = xstrdup(v);
	return 0;
}

int aws_region_resolve(const char *spec_region, char **out, struct kiln_error *err)
{
	const char *v, *profile = env_get("AWS_PROFILE");
	struct ini_profile p;
	char *path, *where = NULL;
	int rc, ret = -1;

	*out = NULL;
	if (spec_region && *spec_region)
		return region_take(spec_region, "provider.region", out, err);
	if ((v = env_get("AWS_REGION")))
		return region_take(v, "AWS_REGION", out, err);
	if ((v = env_get("AWS_DEFAULT_REGION")))
		return region_take(v, "AWS_DEFAULT_REGION", out, err);
	if (!profile)
		profile = "default";
	path = shared_file_path("AWS_CONFIG_FILE", "config");
	if (!path) {
		kiln_error_set(
		    err, "no AWS region set; looked in: provider.region in the spec; AWS_REGION; "
			 "AWS_DEFAULT_REGION; ~/.aws/config (HOME is not set)");
		goto hint;
	}
	rc = shared_file_read(path, profile, true, &p, err);
	if (rc < 0) {
		free(path);
		return -1;
	}
	if (rc == 0 && p.region && *p.region) {
		where = xasprintf("region of profile '%s' in %s", profile, path);
		ret = region_take(p.region, where, out, err);
		free(where);
		ini_profile_release(&p);
		free(path);
		return ret;
	}
	kiln_error_set(err,
		       "no AWS region set; looked in: provider.region in the spec; AWS_REGION; "
		       "AWS_DEFAULT_REGION; profile '%s' in %s (%s)",
		       profile, path,
		       rc == 1	  ? "no such file"
		       : !p.found ? "no such profile"
				  : "no region");
	ini_profile_release(&p);
	free(path);
hint:
	kiln_error_hint(err, "set provider.region in the spec, or export AWS_REGION (for example "
			     "AWS_REGION=us-east-1)");
	return -1;
}

/* The services kiln calls, by the id kiln uses for them. */
static const struct aws_service {
	const char *id;
	const char *env;     /* AWS_ENDPOINT_URL_<env> */
	const char *signing; /* SigV4 signing name, and the public host's first label */
	bool global;	     /* one endpoint for every region */
	const char *host;    /* the public host when it is not <signing>[.region].amazonaws.com */
} aws_services[] = {
    {"ec2", "EC2", "ec2", false},
    {"s3", "S3", "s3", false},
    {"iam", "IAM", "iam", true},
    {"fsx", "FSX", "fsx", false},
    {"efs", "EFS", "elasticfilesystem", false},
    {"sts", "STS", "sts", false},
    {"ssm", "SSM", "ssm", false},
    {"monitoring", "CLOUDWATCH", "monitoring", false},
    {"resource-groups", "RESOURCE_GROUPS", "resource-groups", false},
    /* Cost Explorer: one endpoint, in us-east-1, for the whole account (botocore's ce model). */
    {"ce", "COST_EXPLORER", "ce", true, "ce.us-east-1.amazonaws.com"},
};

static const struct aws_service *service_find(const char *id)
{
	size_t i;

	for (i = 0; id && i < ARRAY_SIZE(aws_services); i++)
		if (strcmp(aws_services[i].id, id) == 0)
			return &aws_services[i];
	return NULL;
}

const char *aws_signing_name(const char *service)
{
	const struct aws_service *s = service_find(service);

	return s ? s->signing : NULL;
}

const char *aws_signing_region(const char *service, const char *region)
{
	const struct aws_service *s = service_find(service);

	return s && s->global ? "us-east-1" : region;
}

/* An endpoint from the environment without its trailing '/', or NULL when unset or only '/'. */
static char *endpoint_from_env(const char *var)
{
	const char *v = env_get(var);
	size_t n;

	if (!v)
		return NULL;
	n = strlen(v);
	while (n > 0 && v[n - 1] == '/')
		n--;
	return n ? xstrndup(v, n) : NULL;
}

char *aws_endpoint(const char *service, const char *region, bool *custom)
{
	const struct aws_service *s = service_find(service);
	char *var, *url;

	if (custom)
		*custom = false;
	if (!s)
		return NULL;
	var = xasprintf("AWS_ENDPOINT_URL_%s", s->env);
	url = endpoint_from_env(var);
	free(var);
	if (!url)
		url = endpoint_from_env("AWS_ENDPOINT_URL");
	if (url) {
		if (custom)
			*custom = true;
		return url;
	}
	if (s->host)
		return xasprintf("https://%s", s->host);
	if (s->global)
		return xasprintf("https://%s.amazonaws.com", s->signing);
	if (!region || !*region)
		return NULL;
	return xasprintf("https://%s.%s.amazonaws.com", s->signing, region);
}
