/*
 * spec_get.c - the typed getters every section loader reads values with;
 * see spec_load.h.
 */
#include "spec.h"
#include "spec_load.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

struct diag *spec_err(struct loader *ld, const struct ynode *n, const char *fmt, ...)
{
	struct diag *dg;
	va_list ap;
	char *msg;

	va_start(ap, fmt);
	msg = xvasprintf(fmt, ap);
	va_end(ap);
	dg = diags_add(ld->d, DIAG_ERROR, ld->spec->file, n ? n->line : 1, n ? n->col : 1, "%s",
		       msg);
	free(msg);
	return dg;
}

char *spec_join_names(const char *const *names, size_t n)
{
	struct strbuf sb = {0};
	size_t i;

	for (i = 0; i < n; i++) {
		if (i)
			sb_adds(&sb, i + 1 == n ? " or " : ", ");
		sb_adds(&sb, names[i]);
	}
	return sb_detach(&sb);
}

/* Hint for a word that should have been one of names: the closest, else the list. */
void spec_hint_choices(struct diag *dg, const char *word, const char *const *names, size_t n)
{
	const char *near = str_closest(word, names, n);
	char *all;

	if (near) {
		diag_hint(dg, "did you mean '%s'?", near);
		return;
	}
	all = spec_join_names(names, n);
	diag_hint(dg, "expected %s", all);
	free(all);
}

static bool name_in(const char *word, const char *const *names, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (strcmp(word, names[i]) == 0)
			return true;
	return false;
}

/* Unknown keys in a mapping are errors; returns false when there was one. */
bool spec_check_keys(struct loader *ld, const struct ynode *map, const char *where,
		     const char *const *known, size_t n)
{
	bool ok = true;
	size_t i;

	for (i = 0; i < map->n; i++) {
		const struct ynode *k = map->keys[i];

		if (name_in(k->value, known, n))
			continue;
		spec_hint_choices(spec_err(ld, k, "unknown key '%s' %s", k->value, where), k->value,
				  known, n);
		ok = false;
	}
	return ok;
}

bool spec_expect_map(struct loader *ld, const struct ynode *n, const char *path)
{
	if (n->kind == YNODE_MAP)
		return true;
	spec_err(ld, n, "%s must be a mapping, got %s", path, ydoc_describe(n));
	return false;
}

bool spec_var_name_ok(const char *s, size_t len)
{
	size_t i;

	if (len == 0 || !(isalpha((unsigned char)s[0]) || s[0] == '_'))
		return false;
	for (i = 1; i < len; i++)
		if (!(isalnum((unsigned char)s[i]) || s[i] == '_'))
			return false;
	return true;
}

struct spec_var *spec_var_find(struct spec *spec, const char *name, size_t len)
{
	size_t i;

	for (i = 0; i < spec->nvars; i++)
		if (strlen(spec->vars[i].name) == len && memcmp(spec->vars[i].name, name, len) == 0)
			return &spec->vars[i];
	return NULL;
}

/*
 * The text of a scalar with ${var.NAME} substituted ($${ is a literal ${).
 * Returns NULL after reporting when the node is not a scalar or a variable is
 * missing. The column of a variable error points at its "${".
 */
/* Step one character (not byte) forward in the source, keeping line and column. */
static size_t src_step(const char *s, size_t len, size_t i, int *line, int *col)
{
	if (s[i] == '\n') {
		(*line)++;
		*col = 1;
	} else {
		(*col)++;
	}
	i++;
	while (i < len && ((unsigned char)s[i] & 0xc0) == 0x80)
		i++;
	return i;
}

/*
 * Where the nth "${" of scalar n stands in the source. Counting in the source
 * rather than in the decoded value keeps the column right across escapes
 * ("\t") and folded lines.
 */
static void expr_position(const struct loader *ld, const struct ynode *n, int nth, struct ynode *at)
{
	const char *s = ld->src;
	size_t len = ld->srclen, i = 0, limit;
	int line, col;

	*at = *n;
	if (!s)
		return;
	i = str_text_offset(s, len, n->line, n->col);
	line = n->line;
	col = n->col;
	limit = i + 65536;
	while (i + 1 < len && i < limit) {
		if (s[i] == '$' && s[i + 1] == '$' && i + 2 < len && s[i + 2] == '{') {
			i = src_step(s, len, i, &line, &col);
			i = src_step(s, len, i, &line, &col);
		} else if (s[i] == '$' && s[i + 1] == '{' && nth-- == 0) {
			at->line = line;
			at->col = col;
			return;
		}
		i = src_step(s, len, i, &line, &col);
	}
}

char *spec_scalar(struct loader *ld, const struct ynode *n, const char *path)
{
	struct strbuf sb = {0};
	const char *p, *end;
	bool bad = false;
	int nth = 0;

	if (n->kind != YNODE_SCALAR) {
		spec_err(ld, n, "%s must be a single value, got %s", path, ydoc_describe(n));
		return NULL;
	}
	p = n->value;
	end = n->value + n->len;
	while (p < end) {
		const char *dollar = memchr(p, '$', (size_t)(end - p));
		const char *close, *name;
		size_t nlen;
		struct spec_var *v;

		if (!dollar) {
			sb_add(&sb, p, (size_t)(end - p));
			break;
		}
		sb_add(&sb, p, (size_t)(dollar - p));
		if (dollar + 2 < end && dollar[1] == '$' && dollar[2] == '{') {
			sb_adds(&sb, "${");
			p = dollar + 3;
			continue;
		}
		if (dollar + 1 >= end || dollar[1] != '{') {
			sb_addc(&sb, '$');
			p = dollar + 1;
			continue;
		}
		{
			struct ynode at;
			struct diag *dg;

			expr_position(ld, n, nth++, &at);
			close = memchr(dollar, '}', (size_t)(end - dollar));
			if (!close) {
				dg = spec_err(ld, &at, "%s: unterminated '${' in '%s'", path,
					      n->value);
				diag_hint(dg, "write ${var.NAME}, or $${ for a literal ${");
				bad = true;
				break;
			}
			name = dollar + 2;
			nlen = (size_t)(close - name);
			if (nlen < 4 || memcmp(name, "var.", 4) != 0 ||
			    !spec_var_name_ok(name + 4, nlen - 4)) {
				dg = spec_err(ld, &at, "%s: unsupported expression '%.*s'", path,
					      (int)(close - dollar + 1), dollar);
				diag_hint(
				    dg,
				    "only ${var.NAME} is substituted; write $${ for a literal ${");
				bad = true;
				p = close + 1;
				continue;
			}
			name += 4;
			nlen -= 4;
			v = spec_var_find(ld->spec, name, nlen);
			if (!v) {
				char *word = xstrndup(name, nlen);
				const char **names = xcalloc(ld->spec->nvars + 1, sizeof(*names));
				const char *near;
				size_t i;

				for (i = 0; i < ld->spec->nvars; i++)
					names[i] = ld->spec->vars[i].name;
				near = str_closest(word, names, ld->spec->nvars);
				dg = spec_err(ld, &at, "%s: variable '%s' is not set", path, word);
				if (near)
					diag_hint(dg, "did you mean '%s'?", near);
				else
					diag_hint(dg,
						  "declare it under vars: or pass --var %s=VALUE",
						  word);
				free(names);
				free(word);
				bad = true;
			} else if (!v->value) {
				/* Declared without a value: reported once, where it is declared. */
				v->used = true;
				bad = true;
			} else {
				v->used = true;
				sb_adds(&sb, v->value);
			}
			p = close + 1;
		}
	}
	if (bad) {
		sb_release(&sb);
		return NULL;
	}
	return sb_detach(&sb);
}

/* Every getter: GOT_NONE when the key is absent (or null and not required). */
static const struct ynode *lookup(struct loader *ld, const struct ynode *map, const char *key,
				  const char *path, bool required, enum got *g)
{
	const struct ynode *n = ydoc_get(map, key);

	*g = GOT_OK;
	if (n && ydoc_is_null(n)) {
		struct diag *dg = spec_err(ld, n, "%s has no value", path);

		diag_hint(dg, required ? "give it a value" : "give it a value, or remove the key");
		*g = GOT_BAD;
		return NULL;
	}
	if (!n) {
		*g = required ? GOT_BAD : GOT_NONE;
		if (required) {
			/* path ends with ".key": name the section the key belongs in. */
			const char *dot = strrchr(path, '.');
			int plen = dot ? (int)(dot - path) : 0;

			if (plen)
				spec_err(ld, map, "missing required key '%s' in %.*s", key, plen,
					 path);
			else
				spec_err(ld, map, "missing required key '%s'", key);
		}
	}
	return n;
}

/*
 * The value of key as text, ${var.NAME} substituted: its node with *text set
 * and *g GOT_OK, or NULL with *g GOT_NONE (absent) or GOT_BAD (reported).
 */
static const struct ynode *value_text(struct loader *ld, const struct ynode *map, const char *key,
				      const char *path, bool required, enum got *g, char **text)
{
	const struct ynode *n = lookup(ld, map, key, path, required, g);

	*text = NULL;
	if (!n)
		return NULL;
	*text = spec_scalar(ld, n, path);
	if (!*text) {
		*g = GOT_BAD;
		return NULL;
	}
	return n;
}

enum got spec_get_string(struct loader *ld, const struct ynode *map, const char *key,
			 const char *path, bool required, char **out)
{
	enum got g;
	const struct ynode *n;
	char *s;

	n = value_text(ld, map, key, path, required, &g, &s);
	if (!n)
		return g;
	free(*out);
	*out = s;
	return GOT_OK;
}

enum got spec_get_int(struct loader *ld, const struct ynode *map, const char *key, const char *path,
		      bool required, long min, long max, int *out)
{
	enum got g;
	const struct ynode *n;
	char *s, *end;
	long v;

	n = value_text(ld, map, key, path, required, &g, &s);
	if (!n)
		return g;
	errno = 0;
	v = strtol(s, &end, 10);
	if (!*s || *end || errno || isspace((unsigned char)*s)) {
		spec_err(ld, n, "%s must be a whole number, got '%s'", path, s);
		free(s);
		return GOT_BAD;
	}
	free(s);
	if (v < min || v > max) {
		spec_err(ld, n, "%s must be between %ld and %ld, got %ld", path, min, max, v);
		return GOT_BAD;
	}
	*out = (int)v;
	return GOT_OK;
}

enum got spec_get_number(struct loader *ld, const struct ynode *map, const char *key,
			 const char *path, double *out)
{
	enum got g;
	const struct ynode *n;
	char *s, *end;
	double v;

	n = value_text(ld, map, key, path, false, &g, &s);
	if (!n)
		return g;
	errno = 0;
	v = strtod(s, &end);
	/* Decimal only: strtod would also take hex ("0x10"), "inf" and "nan". */
	if (!*s || *end || errno || !isfinite(v) || strspn(s, "0123456789.+-eE") != strlen(s)) {
		spec_err(ld, n, "%s must be a number, got '%s'", path, s);
		free(s);
		return GOT_BAD;
	}
	free(s);
	*out = v;
	return GOT_OK;
}

enum got spec_get_bool(struct loader *ld, const struct ynode *map, const char *key,
		       const char *path, bool *out)
{
	enum got g;
	const struct ynode *n;
	char *s;

	n = value_text(ld, map, key, path, false, &g, &s);
	if (!n)
		return g;
	if (strcmp(s, "true") == 0) {
		*out = true;
	} else if (strcmp(s, "false") == 0) {
		*out = false;
	} else {
		struct diag *dg = spec_err(ld, n, "%s must be true or false, got '%s'", path, s);

		if (!strcasecmp(s, "yes") || !strcasecmp(s, "on") || !strcasecmp(s, "no") ||
		    !strcasecmp(s, "off") || !strcasecmp(s, "True") || !strcasecmp(s, "False"))
			diag_hint(dg, "kiln reads only true and false as booleans");
		free(s);
		return GOT_BAD;
	}
	free(s);
	return GOT_OK;
}

enum got spec_get_enum(struct loader *ld, const struct ynode *map, const char *key,
		       const char *path, bool required, const char *const *names, size_t n,
		       int *out)
{
	enum got g;
	const struct ynode *node;
	char *s, *all;
	size_t i;

	node = value_text(ld, map, key, path, required, &g, &s);
	if (!node)
		return g;
	for (i = 0; i < n; i++) {
		if (strcmp(s, names[i]) == 0) {
			*out = (int)i;
			free(s);
			return GOT_OK;
		}
	}
	all = spec_join_names(names, n);
	{
		struct diag *dg = spec_err(ld, node, "%s must be %s, got '%s'", path, all, s);
		/* A spelling hint helps with words, not with numbers like 300. */
		const char *near = isdigit((unsigned char)s[0]) ? NULL : str_closest(s, names, n);

		if (near)
			diag_hint(dg, "did you mean '%s'?", near);
	}
	free(all);
	free(s);
	return GOT_BAD;
}

enum got spec_get_duration(struct loader *ld, const struct ynode *map, const char *key,
			   const char *path, int64_t *out)
{
	enum got g;
	const struct ynode *n;
	char *s;

	n = value_text(ld, map, key, path, false, &g, &s);
	if (!n)
		return g;
	if (timefmt_duration_parse(s, out) < 0) {
		struct diag *dg = spec_err(ld, n, "%s: '%s' is not a duration", path, s);

		diag_hint(dg, "write a number and a unit (s, m, h, d), like 45s, 90m, 72h or 30d");
		free(s);
		return GOT_BAD;
	}
	free(s);
	return GOT_OK;
}

/*
 * A CIDR with a bounded prefix; host bits set is an error that suggests the
 * network address the user probably meant.
 */
enum got spec_get_cidr(struct loader *ld, const struct ynode *map, const char *key,
		       const char *path, bool required, int min_prefix, int max_prefix, char **out)
{
	enum got g;
	const struct ynode *n;
	char *s;
	uint32_t addr;
	int prefix;
	bool host;

	n = value_text(ld, map, key, path, required, &g, &s);
	if (!n)
		return g;
	if (cidr_parse(s, &addr, &prefix, &host) < 0) {
		struct diag *dg = spec_err(ld, n, "%s: '%s' is not an IPv4 CIDR block", path, s);

		diag_hint(dg, "write ADDRESS/PREFIX, like 10.42.0.0/16");
		free(s);
		return GOT_BAD;
	}
	if (host) {
		char *net = cidr_format(addr, prefix);
		struct diag *dg =
		    spec_err(ld, n, "%s: '%s' has bits set past its /%d prefix", path, s, prefix);

		diag_hint(dg, "did you mean %s?", net);
		free(net);
		free(s);
		return GOT_BAD;
	}
	if (prefix < min_prefix || prefix > max_prefix) {
		spec_err(ld, n, "%s: the prefix of '%s' must be between /%d and /%d", path, s,
			 min_prefix, max_prefix);
		free(s);
		return GOT_BAD;
	}
	free(*out);
	*out = s;
	return GOT_OK;
}

bool spec_name_ok(const char *s)
{
	size_t i, n = strlen(s);

	if (n == 0 || n > SPEC_MAX_NAME || s[0] == '-' || s[n - 1] == '-')
		return false;
	for (i = 0; i < n; i++)
		if (!(islower((unsigned char)s[i]) || isdigit((unsigned char)s[i]) || s[i] == '-'))
			return false;
	return true;
}

bool spec_check_name(struct loader *ld, const struct ynode *key, const char *what)
{
	if (spec_name_ok(key->value))
		return true;
	spec_err(ld, key,
		 "%s name '%s' must be 1 to %d characters of a-z, 0-9 and '-', not starting or "
		 "ending with '-'",
		 what, key->value, SPEC_MAX_NAME);
	return false;
}
