/*
 * nodes.c - the per-node live view of a node group, shared by every
 * provider: the object each node gets, its order, and the reading of the
 * health report a node puts on itself. The report comes from the node,
 * which anyone who can tag it may write: it is checked, never trusted.
 */
#include "nodes.h"
#include "provider.h"
#include "str.h"
#include "util.h"

#include <stdlib.h>
#include <string.h>

/* At most max bytes of s for a terminal (str_for_terminal), quotes as '?' too. */
static char *printable(const char *s, size_t max)
{
	char *out = str_for_terminal(s, max), *q;

	for (q = out; (q = strchr(q, '"')); q++)
		*q = '?';
	return out;
}

/* The text after "WORD:", blanks trimmed; NULL when empty. */
static char *after_colon(const char *s)
{
	size_t n;
	char *cut, *out;

	while (*s == ' ' || *s == '\t')
		s++;
	n = strlen(s);
	while (n && (s[n - 1] == ' ' || s[n - 1] == '\t'))
		n--;
	if (!n)
		return NULL;
	cut = xstrndup(s, n);
	out = printable(cut, PROV_HEALTH_MAX);
	free(cut);
	return out;
}

void nodes_health(const char *report, const char **health, char **reason)
{
	size_t n;
	const char *colon;

	*health = NULL;
	*reason = NULL;
	if (!report)
		return;
	n = strlen(report);
	colon = strchr(report, ':');
	if (n <= PROV_HEALTH_MAX &&
	    str_utf8_invalid_offset((const unsigned char *)report, n) == n && colon) {
		size_t word = (size_t)(colon - report);

		if (word == 7 && strncmp(report, "healthy", 7) == 0) {
			*health = "healthy";
			*reason = after_colon(colon + 1);
			return;
		}
		if (word == 9 && strncmp(report, "unhealthy", 9) == 0) {
			*health = "unhealthy";
			*reason = after_colon(colon + 1);
			if (!*reason)
				*reason = xstrdup("the node gave no reason");
			return;
		}
	}
	{
		char *shown = printable(report, 64);

		*health = "unhealthy";
		*reason = xasprintf("unreadable health report: \"%s\"", shown);
		free(shown);
	}
}

json_t *nodes_new(const char *id, const char *zone, const char *private_ip, const char *public_ip,
		  const char *state, const char *launched, const char *report)
{
	const char *health;
	char *reason;
	json_t *node;

	nodes_health(report, &health, &reason);
	node = json_pack("{s:s?, s:i, s:s?, s:s?, s:s?, s:s?, s:s?, s:s?, s:s?}", "id", id, "index",
			 0, "zone", zone, "private_ip", private_ip, "public_ip", public_ip, "state",
			 state, "launched", launched, "health", health, "health_reason", reason);
	free(reason);
	return node;
}

/* Oldest first: launch time (none last), then id. */
static int oldest_first(const void *a, const void *b)
{
	json_t *x = *(json_t *const *)a, *y = *(json_t *const *)b;
	const char *lx = json_string_value(json_object_get(x, "launched"));
	const char *ly = json_string_value(json_object_get(y, "launched"));
	const char *ix = json_string_value(json_object_get(x, "id"));
	const char *iy = json_string_value(json_object_get(y, "id"));
	int c = lx && ly ? strcmp(lx, ly) : (lx != NULL) - (ly != NULL);

	if (!lx || !ly)
		c = -c; /* a node with a launch time sorts before one without */
	return c ? c : strcmp(ix ? ix : "", iy ? iy : "");
}

void nodes_order(json_t *nodes)
{
	json_t *node;
	size_t i;

	provider_json_sort(nodes, oldest_first);
	json_array_foreach(nodes, i, node)
	    json_object_set_new(node, "index", json_integer((json_int_t)i));
}
