/*
 * log.c - see log.h. JSON lines use Terraform's machine-readable UI names
 * (@level, @message, @timestamp) so one parser reads both tools' logs.
 */
#include "log.h"
#include "jsonw.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <time.h>

static enum log_level current_level = LOG_WARN;
static enum log_format current_format = LOG_TEXT;

static const char *const level_names[] = {"error", "warn", "info", "debug", "trace"};

int log_level_parse(const char *name)
{
	size_t i;

	for (i = 0; i < ARRAY_SIZE(level_names); i++)
		if (strcmp(name, level_names[i]) == 0)
			return (int)i;
	if (strcmp(name, "warning") == 0)
		return LOG_WARN;
	return -1;
}

void log_set_level(enum log_level level)
{
	current_level = level;
}

void log_set_format(enum log_format format)
{
	current_format = format;
}

enum log_level log_get_level(void)
{
	return current_level;
}

void log_msg(enum log_level level, const char *fmt, ...)
{
	va_list ap;
	char *msg;

	if (level > current_level)
		return;
	va_start(ap, fmt);
	msg = xvasprintf(fmt, ap);
	va_end(ap);
	if (current_format == LOG_JSON) {
		struct timeval tv;
		struct tm tm;
		char ts[64];
		json_t *o;
		char *line;

		gettimeofday(&tv, NULL);
		gmtime_r(&tv.tv_sec, &tm);
		snprintf(ts, sizeof(ts), "%04d-%02d-%02dT%02d:%02d:%02d.%06ldZ", tm.tm_year + 1900,
			 tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec,
			 (long)tv.tv_usec);
		o = json_pack("{s:s, s:s, s:s}", "@level", level_names[level], "@message", msg,
			      "@timestamp", ts);
		line = jsonw_dumps(o, JSON_COMPACT, NULL);
		fprintf(stderr, "%s\n", line);
		free(line);
		json_decref(o);
	} else {
		fprintf(stderr, "kiln: %s: %s\n", level_names[level], msg);
	}
	free(msg);
}
