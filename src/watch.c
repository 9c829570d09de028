/*
 * watch.c - see watch.h. Pure but for watch_pause, which reads the one
 * record of an interrupt signals.c keeps.
 */
#include "watch.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "jsonc.h"
#include "jsonw.h"
#include "signals.h"
#include "str.h"
#include "timefmt.h"
#include "util.h"

static bool clock_only(const char *key)
{
	return str_ends_with(key, "_seconds") || strcmp(key, "cost_so_far") == 0;
}

static char *leaf(const json_t *v)
{
	char *text = jsonw_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY | JSON_REAL_PRECISION(12), NULL);
	char *shown = str_for_terminal(text, 200);

	free(text);
	return shown;
}

/* What names an element of an array: its "name", else its "id" (a node). */
static const char *element_name(const json_t *v)
{
	const char *n = json_string_value(json_object_get(v, "name"));

	return n ? n : json_string_value(json_object_get(v, "id"));
}

static bool named_array(const json_t *a)
{
	const json_t *v;
	size_t i;

	if (!json_array_size(a))
		return false;
	json_array_foreach(a, i, v)
	{
		if (!element_name(v))
			return false;
	}
	return true;
}

static const json_t *by_name(const json_t *a, const char *name)
{
	const json_t *v;
	size_t i;

	json_array_foreach(a, i, v)
	{
		if (strcmp(element_name(v), name) == 0)
			return v;
	}
	return NULL;
}

static size_t diff(const char *path, const json_t *b, const json_t *a, struct strbuf *out);

static size_t diff_child(const char *path, const char *step, bool index, const json_t *b,
			 const json_t *a, struct strbuf *out)
{
	char *sub = index ? xasprintf("%s[%s]", path, step)
			  : xasprintf("%s%s%s", path, *path ? "." : "", step);
	size_t n = diff(sub, b, a, out);

	free(sub);
	return n;
}

static size_t diff(const char *path, const json_t *b, const json_t *a, struct strbuf *out)
{
	const char *key;
	const json_t *v;
	size_t n = 0, i;
	char *old, *new;

	if (b && a && json_is_object(b) && json_is_object(a)) {
		json_object_foreach_const(a, key, v)
		{
			if (!clock_only(key))
				n += diff_child(path, key, false, json_object_get(b, key), v, out);
		}
		json_object_foreach_const(b, key, v)
		{
			if (!clock_only(key) && !json_object_get(a, key))
				n += diff_child(path, key, false, v, NULL, out);
		}
		return n;
	}
	if (b && a && named_array(b) && named_array(a)) {
		json_array_foreach(a, i, v)
		{
			const char *name = element_name(v);

			n += diff_child(path, name, true, by_name(b, name), v, out);
		}
		json_array_foreach(b, i, v)
		{
			const char *name = element_name(v);

			if (!by_name(a, name))
				n += diff_child(path, name, true, v, NULL, out);
		}
		return n;
	}
	if (b && a && json_equal(b, a))
		return 0;
	old = b ? leaf(b) : NULL;
	new = a ? leaf(a) : NULL;
	if (old && new)
		sb_addf(out, "%s: %s -> %s\n", path, old, new);
	else if (new)
		sb_addf(out, "%s: %s\n", path, new);
	else
		sb_addf(out, "%s: %s -> gone\n", path, old);
	free(old);
	free(new);
	return 1;
}

size_t watch_changes(const json_t *before, const json_t *after, struct strbuf *out)
{
	return diff("", before, after, out);
}

int watch_interval(const char *word, int64_t *seconds)
{
	char *end;
	long n;

	if (!word) {
		*seconds = WATCH_DEFAULT_SECONDS;
		return 0;
	}
	n = strtol(word, &end, 10);
	if (*word >= '0' && *word <= '9' && !*end)
		*seconds = n;
	else if (timefmt_duration_parse(word, seconds) < 0)
		return -1;
	return *seconds >= 1 && *seconds <= 86400 ? 0 : -1;
}

bool watch_pause(int64_t seconds)
{
	struct timespec tenth = {0, 100 * 1000000L};

	for (int64_t i = 0; i < seconds * 10; i++) {
		if (signals_interrupted())
			return false;
		nanosleep(&tenth, NULL);
	}
	return !signals_interrupted();
}
