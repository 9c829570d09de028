/*
 * timefmt.c - see timefmt.h.
 */
#include "timefmt.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base.h"
#include "strbuf.h"

int timefmt_time_parse_rfc3339(const char *s, int64_t *t)
{
	struct tm tm = {0};
	const char *rest;
	time_t v;

	rest = strptime(s, "%Y-%m-%dT%H:%M:%S", &tm);
	if (rest && *rest == '.')
		for (rest++; *rest >= '0' && *rest <= '9'; rest++)
			;
	if (!rest || (strcmp(rest, "Z") != 0 &&
		      !((rest[0] == '+' || rest[0] == '-') && strlen(rest) == 6 &&
			isdigit((unsigned char)rest[1]) && isdigit((unsigned char)rest[2]) &&
			rest[3] == ':' && isdigit((unsigned char)rest[4]) &&
			isdigit((unsigned char)rest[5]))))
		return -1;
	v = timegm(&tm);
	if (*rest != 'Z') {
		long off = (atol(rest + 1) * 60 + atol(rest + 4)) * 60;

		v += rest[0] == '+' ? -off : off;
	}
	*t = (int64_t)v;
	return 0;
}

const char *timefmt_time_format_rfc3339(int64_t t, char buf[21])
{
	time_t tt = (time_t)t;
	struct tm tm;

	gmtime_r(&tt, &tm);
	strftime(buf, 21, "%Y-%m-%dT%H:%M:%SZ", &tm);
	return buf;
}

int timefmt_now(int64_t *t, struct kiln_error *err)
{
	const char *now = getenv("KILN_NOW");

	if (!now || !*now) {
		*t = (int64_t)time(NULL);
		return 0;
	}
	if (timefmt_time_parse_rfc3339(now, t) < 0) {
		kiln_error_set(err, "KILN_NOW '%s' is not an RFC 3339 time", now);
		kiln_error_hint(err, "write it like 2027-01-31T12:00:00Z, or unset it");
		return -1;
	}
	return 0;
}

int timefmt_duration_parse(const char *s, int64_t *seconds)
{
	const int64_t max = 100LL * 365 * 86400;
	int64_t total = 0;
	const char *p = s;

	if (!*p)
		return -1;
	while (*p) {
		int64_t n = 0, unit;
		int digits = 0;

		while (*p >= '0' && *p <= '9') {
			n = n * 10 + (*p - '0');
			if (n > max)
				return -1;
			p++;
			digits++;
		}
		if (!digits)
			return -1;
		switch (*p) {
		case 's':
			unit = 1;
			break;
		case 'm':
			unit = 60;
			break;
		case 'h':
			unit = 3600;
			break;
		case 'd':
			unit = 86400;
			break;
		default:
			return -1;
		}
		p++;
		if (n > max / unit)
			return -1;
		total += n * unit;
		if (total > max)
			return -1;
	}
	*seconds = total;
	return 0;
}

char *timefmt_duration_format(int64_t seconds)
{
	static const struct {
		char unit;
		int64_t size;
	} units[] = {{'d', 86400}, {'h', 3600}, {'m', 60}, {'s', 1}};
	struct strbuf sb = {0};
	size_t i;

	if (seconds <= 0)
		return xstrdup("0s");
	for (i = 0; i < ARRAY_SIZE(units); i++) {
		if (seconds >= units[i].size) {
			sb_addf(&sb, "%lld%c", (long long)(seconds / units[i].size), units[i].unit);
			seconds %= units[i].size;
		}
	}
	return sb_detach(&sb);
}
