/*
 * tags_aws.c - see tags_aws.h.
 *
 * A tag AWS refuses fails the create call that carries it, half-way through
 * an apply; checked here, it fails `kiln validate` at the tag's FILE:LINE:COL.
 */
#include "tags_aws.h"

#include <string.h>
#include <strings.h>

#define TAGS_AWS_ALLOWED "letters, numbers, spaces and _ . : / = + - @"

bool tags_aws_char_ok(uint32_t cp)
{
	size_t lo = 0, hi = tags_aws_nchars;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (cp < tags_aws_chars[mid].first)
			hi = mid;
		else if (cp > tags_aws_chars[mid].last)
			lo = mid + 1;
		else
			return true;
	}
	return false;
}

/* What a tag holds: its length in characters, and its first character AWS refuses. */
struct tag_text {
	size_t chars;
	size_t bad_at; /* 1-based character of the first refused one; 0 when none */
	int32_t bad;   /* that code point, or -1 for bytes that are not UTF-8 */
};

static void tag_scan(const char *s, size_t len, struct tag_text *t)
{
	size_t i = 0, n;

	memset(t, 0, sizeof(*t));
	while (i < len) {
		int32_t cp = str_utf8_decode((const unsigned char *)s + i, len - i, &n);

		t->chars++;
		if (cp < 0)
			n = 1;
		if (!t->bad_at && (cp < 0 || !tags_aws_char_ok((uint32_t)cp))) {
			t->bad_at = t->chars;
			t->bad = cp;
		}
		i += n;
	}
}

/* The refused character as the message names it: '<', or U+000A for one not to print. */
static char *char_name(int32_t cp)
{
	if (cp < 0)
		return xstrdup("a byte that is not UTF-8");
	if (cp > 0x20 && cp < 0x7f)
		return xasprintf("'%c'", (char)cp);
	return xasprintf("U+%04X", (unsigned)cp);
}

/* A key as messages show it: printable ASCII as is, anything else as U+XXXX; 40 at most. */
static char *key_shown(const char *s, size_t len)
{
	struct strbuf sb = {0};
	size_t i = 0, n, shown = 0;

	while (i < len && shown < 40) {
		int32_t cp = str_utf8_decode((const unsigned char *)s + i, len - i, &n);

		if (cp < 0)
			n = 1;
		if (cp >= 0x20 && cp < 0x7f)
			sb_addc(&sb, (char)cp);
		else if (cp >= 0 && tags_aws_char_ok((uint32_t)cp))
			sb_add(&sb, s + i, n);
		else
			sb_addf(&sb, "U+%04X",
				cp < 0 ? (unsigned)(unsigned char)s[i] : (unsigned)cp);
		shown++;
		i += n;
	}
	if (i < len)
		sb_adds(&sb, "...");
	if (!sb.buf)
		sb_adds(&sb, "");
	return sb_detach(&sb);
}

static void check_key(const struct spec *spec, const struct ynode *k, struct diags *d)
{
	char *shown = key_shown(k->value, k->len), *bad;
	struct tag_text t;

	tag_scan(k->value, k->len, &t);
	if (t.chars == 0 || t.chars > TAGS_AWS_KEY_MAX) {
		diag_hint(diags_add(d, DIAG_ERROR, spec->file, k->line, k->col,
				    "tag key '%s' must be 1 to %d characters (it has %zu)", shown,
				    TAGS_AWS_KEY_MAX, t.chars),
			  "%s", t.chars ? "shorten the key" : "give the tag a name");
	} else if (strncasecmp(k->value, "aws:", 4) == 0) {
		diag_hint(diags_add(d, DIAG_ERROR, spec->file, k->line, k->col,
				    "tag key '%s' uses the reserved prefix aws: (AWS sets those "
				    "tags itself)",
				    shown),
			  "name the key without aws:, like '%s'", shown + 4);
	} else if (t.bad_at) {
		bad = char_name(t.bad);
		diag_hint(diags_add(d, DIAG_ERROR, spec->file, k->line, k->col,
				    "tag key '%s' holds %s (character %zu), which AWS does not "
				    "allow in a tag",
				    shown, bad, t.bad_at),
			  "write the key with " TAGS_AWS_ALLOWED
			  " only (the IAM, EFS and FSx rule)");
		free(bad);
	}
	free(shown);
}

static void check_value(const struct spec *spec, const struct spec_kv *kv, struct diags *d)
{
	const struct ynode *n = kv->node;
	char *key = key_shown(kv->key, strlen(kv->key)), *bad;
	struct tag_text t;

	tag_scan(kv->value, strlen(kv->value), &t);
	if (t.chars > TAGS_AWS_VALUE_MAX) {
		diag_hint(
		    diags_add(d, DIAG_ERROR, spec->file, n->line, n->col,
			      "tags.%s: a tag value must be at most %d characters (it has %zu)",
			      key, TAGS_AWS_VALUE_MAX, t.chars),
		    "shorten the value");
	} else if (t.bad_at) {
		bad = char_name(t.bad);
		diag_hint(diags_add(d, DIAG_ERROR, spec->file, n->line, n->col,
				    "tags.%s holds %s (character %zu), which AWS does not allow "
				    "in a tag",
				    key, bad, t.bad_at),
			  "write the value with " TAGS_AWS_ALLOWED " only (the IAM, EFS and FSx "
			  "rule)");
		free(bad);
	}
	free(key);
}

void tags_aws_check(const struct spec *spec, struct diags *d)
{
	const struct ynode *tags = spec->root ? ydoc_get(spec->root, "tags") : NULL;
	size_t i;

	/* Keys from the YAML, so a key whose value is broken is still checked. */
	for (i = 0; tags && tags->kind == YNODE_MAP && i < tags->n; i++)
		if (strncasecmp(tags->keys[i]->value, "kiln:", 5) != 0)
			check_key(spec, tags->keys[i], d);
	for (i = 0; i < spec->ntags; i++)
		check_value(spec, &spec->tags[i], d);
}
