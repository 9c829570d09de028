/*
 * spec_waive.c - the top-level `waive:` list: audit waivers.
 *
 *   waive:
 *     - {rule: KILN-NET-002, reason: "bastion for the on-call", until: 2027-01-31,
 *        address: network.ingress[0]}
 *
 * Only the shape is checked here (a list of mappings, known keys, a real
 * date). Whether a waiver may waive anything (it has a reason, its date has
 * not passed, it names a rule kiln has) is judged by audit.c, which reports
 * each problem as a finding of its own so that it shows in the plan a
 * reviewer reads, not only in `kiln validate`.
 */
#include "spec.h"
#include "spec_load.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

const char *const spec_waiver_keys[] = {"rule", "reason", "until", "address"};

/* YYYY-MM-DD naming a day that exists. */
static bool date_ok(const char *s)
{
	static const int days[] = {31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
	int y, m, d, i;

	if (strlen(s) != 10 || s[4] != '-' || s[7] != '-')
		return false;
	for (i = 0; i < 10; i++)
		if (i != 4 && i != 7 && !isdigit((unsigned char)s[i]))
			return false;
	y = atoi(s);
	m = atoi(s + 5);
	d = atoi(s + 8);
	if (y < 1970 || m < 1 || m > 12 || d < 1 || d > days[m - 1])
		return false;
	return !(m == 2 && d == 29 && !(y % 4 == 0 && (y % 100 != 0 || y % 400 == 0)));
}

/* A string that is empty or only blanks says nothing: it is no reason. */
static bool blank(const char *s)
{
	for (; *s; s++)
		if (!isspace((unsigned char)*s))
			return false;
	return true;
}

static void load_waiver(struct loader *ld, const struct ynode *r, size_t i, size_t *cap)
{
	struct spec *spec = ld->spec;
	struct spec_waiver w = {0};
	char *path = xasprintf("waive[%zu]", i), *sub;
	bool ok = true;

	if (!spec_expect_map(ld, r, path)) {
		free(path);
		return;
	}
	w.node = r;
	ok &= spec_check_keys(ld, r, "in a waiver", spec_waiver_keys, ARRAY_SIZE(spec_waiver_keys));
	sub = xasprintf("%s.rule", path);
	if (spec_get_string(ld, r, "rule", sub, true, &w.rule) == GOT_OK && blank(w.rule)) {
		spec_err(ld, ydoc_get(r, "rule"), "%s is empty", sub);
		ok = false;
	}
	ok &= w.rule != NULL;
	free(sub);
	sub = xasprintf("%s.reason", path);
	ok &= spec_get_string(ld, r, "reason", sub, false, &w.reason) != GOT_BAD;
	if (w.reason && blank(w.reason)) {
		free(w.reason);
		w.reason = NULL;
	}
	free(sub);
	sub = xasprintf("%s.until", path);
	if (spec_get_string(ld, r, "until", sub, false, &w.until) == GOT_BAD) {
		ok = false;
	} else if (w.until && !date_ok(w.until)) {
		diag_hint(spec_err(ld, ydoc_get(r, "until"),
				   "%s must be a date written YYYY-MM-DD, got '%s'", sub, w.until),
			  "for example until: 2027-01-31 (the waiver holds through that day, UTC)");
		ok = false;
	}
	free(sub);
	sub = xasprintf("%s.address", path);
	ok &= spec_get_string(ld, r, "address", sub, false, &w.address) != GOT_BAD;
	free(sub);
	free(path);
	if (!ok) {
		free(w.rule);
		free(w.reason);
		free(w.until);
		free(w.address);
		return;
	}
	*ARRAY_PUSH(spec->waivers, spec->nwaivers, *cap) = w;
}

void spec_load_waive(struct loader *ld, const struct ynode *waive)
{
	size_t i, cap = 0;

	if (!waive)
		return;
	ld->spec->waive_node = waive;
	if (waive->kind != YNODE_SEQ) {
		diag_hint(
		    spec_err(ld, waive, "waive must be a list of waivers, got %s",
			     ydoc_describe(waive)),
		    "write waive: [{rule: KILN-NET-002, reason: \"...\", until: 2027-01-31}]");
		return;
	}
	for (i = 0; i < waive->n; i++)
		load_waiver(ld, waive->vals[i], i, &cap);
}
