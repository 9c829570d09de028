/*
 * timefmt.h - durations ("1h30m"), RFC 3339 times and the clock (KILN_NOW).
 */
#ifndef KILN_TIMEFMT_H
#define KILN_TIMEFMT_H

#include <stdint.h>

#include "base.h"

/*
 * Durations: one or more NUMBER UNIT groups, units s, m, h, d ("45s", "90m",
 * "72h", "30d", "1h30m"). Returns 0 and the seconds, or -1 when malformed or
 * above 100 years.
 */
int timefmt_duration_parse(const char *s, int64_t *seconds);
/* The shortest exact form ("1h30m"); caller frees. */
char *timefmt_duration_format(int64_t seconds);

/*
 * RFC 3339 times ("2027-01-31T12:00:00Z", "...T12:00:00.5+02:00"): 0 and
 * the unix seconds (fraction dropped), or -1 when malformed.
 */
int timefmt_time_parse_rfc3339(const char *s, int64_t *t);
/* "YYYY-MM-DDTHH:MM:SSZ" for a unix time, into buf[21]; returns buf. */
const char *timefmt_time_format_rfc3339(int64_t t, char buf[21]);
/*
 * Now, in unix seconds. KILN_NOW (an RFC 3339 time) overrides the clock for
 * tests and for replaying a decision: waivers, TTLs and reaping all read
 * the time here. -1 with err when KILN_NOW is set but malformed.
 */
int timefmt_now(int64_t *t, struct kiln_error *err);

#endif
