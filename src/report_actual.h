/*
 * report_actual.h - `kiln report --actual`: what the cloud billed per
 * cluster and day (the provider's billed hook), beside the ledger's
 * estimate of the same days (report.h's stretches), and the variance named
 * by day and by the kind of service (compute, storage, other) the ledger
 * splits its burn into.
 */
#ifndef KILN_REPORT_ACTUAL_H
#define KILN_REPORT_ACTUAL_H

#include <stdint.h>

#include <jansson.h>

#include "util.h"

/*
 * The ledger's estimate per cluster and UTC day from report_build's
 * document: {CLUSTER: {"YYYY-MM-DD": {"total", "compute", "storage",
 * "split_known"}}}, each stretch's hourly burn times the hours of it that
 * fall in the day (up-front fees are not daily usage and are left out).
 */
json_t *report_actual_estimate(const json_t *report);

/*
 * The estimate set against billed rows ({"cluster", "date", "service",
 * "kind", "amount"}): {"days": [{"cluster", "date", "estimate", "billed",
 * "variance", "kinds": [{"kind", "estimate" (null when the ledger recorded
 * no split), "billed", "variance", "services": {NAME: USD}}]}], "clusters":
 * [{"cluster", "estimate", "billed", "variance"}], "untagged": USD billed
 * with no kiln:cluster value}, sorted by cluster then date. A day either
 * side has is listed; variance is billed minus estimate.
 */
json_t *report_actual_variance(const json_t *estimate, const json_t *rows);

/* The first day (YYYY-MM-DD) the report's lifetimes cover, and the day after now. */
void report_actual_window(const json_t *report, int64_t now, char first[11], char last[11]);

struct provider;
/*
 * Ask the provider what it billed over [first, last): *out as the billed
 * hook's ("tags", "hint", "rows"). -1 with err when the provider has no
 * bill (the simulated one) or the call failed.
 */
int report_actual_fetch(const struct provider *prov, const char *region, const char *first,
			const char *last, json_t **out, struct kiln_error *err);

#endif
