/*
 * log.c - see log.h. JSON lines use Terraform's machine-readable UI names
 * (@level, @message, @timestamp) so one parser reads both tools' logs.
 *
 * In JSON mode every line on stderr is one JSON object: log_msg and
 * log_report write theirs, and stderr itself is replaced by a stream that
 * turns each line any other code writes there (diagnostics, summaries,
 * signal notices) into one, so no caller can forget.
 */
#include "log.h"
#include "jsonw.h"

#include <jansson.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

static enum log_level current_level = LOG_WARN;
static enum log_format current_format = LOG_TEXT;

/*
 * JSON mode: the real standard error (unbuffered, one write per line, so
 * lines from several threads never interleave), the stderr it replaced, and
 * the part of a line written to the replacement that has no newline yet.
 * The partial line is only touched under the replacement FILE's own lock,
 * which stdio holds while it calls sink_write.
 */
static FILE *json_err;
static FILE *text_err;
static struct {
	char *buf;
	size_t len, cap;
	enum log_level level; /* of the last line that was not indented */
} sink;

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

static void timestamp(char ts[64])
{
	struct timeval tv;
	struct tm tm;

	gettimeofday(&tv, NULL);
	gmtime_r(&tv.tv_sec, &tm);
	snprintf(ts, 64, "%04d-%02d-%02dT%02d:%02d:%02d.%06ldZ", tm.tm_year + 1900, tm.tm_mon + 1,
		 tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, (long)tv.tv_usec);
}

/* One JSON line on out: level, message, time, and the hint when there is one. */
static void json_line(FILE *out, enum log_level level, const char *msg, const char *hint)
{
	char ts[64], *text, *line;
	json_t *o;

	timestamp(ts);
	o = json_pack("{s:s, s:s, s:s}", "@level", level_names[level], "@message", msg,
		      "@timestamp", ts);
	if (hint && *hint)
		json_object_set_new(o, "hint", json_string(hint));
	text = jsonw_dumps(o, JSON_COMPACT, NULL);
	line = xasprintf("%s\n", text);
	fwrite(line, 1, strlen(line), out);
	free(line);
	free(text);
	json_decref(o);
}

/*
 * The level of a line written to stderr by code that does not say: what
 * it says of itself ("warning:", "error:"), an indented line (a hint, a
 * caret, a detail) that of the line it belongs to, and error otherwise:
 * what reaches stderr outside log_msg is a refusal or a failure.
 */
static enum log_level line_level(const char *line)
{
	if (line[0] == ' ' || line[0] == '\t')
		return sink.level;
	if (strstr(line, ": warning: ") || strstr(line, ": warn: "))
		return LOG_WARN;
	if (strstr(line, ": note: ") || strstr(line, ": info: "))
		return LOG_INFO;
	return LOG_ERROR;
}

static void sink_flush_line(size_t end)
{
	char *line = xstrndup(sink.buf, end);

	sink.level = line_level(line);
	json_line(json_err, sink.level, line, NULL);
	free(line);
}

static ssize_t sink_write(void *cookie, const char *buf, size_t n)
{
	char *nl;

	(void)cookie;
	if (sink.len + n + 1 > sink.cap) {
		sink.cap = (sink.len + n + 1) * 2;
		sink.buf = xrealloc(sink.buf, sink.cap);
	}
	memcpy(sink.buf + sink.len, buf, n);
	sink.len += n;
	while ((nl = memchr(sink.buf, '\n', sink.len)) != NULL) {
		size_t end = (size_t)(nl - sink.buf);

		sink_flush_line(end);
		memmove(sink.buf, nl + 1, sink.len - end - 1);
		sink.len -= end + 1;
	}
	return (ssize_t)n;
}

void log_stderr_end_line(void)
{
	if (current_format != LOG_JSON)
		return;
	flockfile(stderr);
	if (sink.len)
		sink_flush_line(sink.len);
	sink.len = 0;
	funlockfile(stderr);
}

void log_set_format(enum log_format format)
{
	current_format = format;
	if (format == LOG_JSON && !json_err) {
		cookie_io_functions_t io = {.write = sink_write};
		int fd = dup(STDERR_FILENO);
		FILE *f;

		json_err = fd >= 0 ? fdopen(fd, "w") : NULL;
		if (!json_err) {
			if (fd >= 0)
				close(fd);
			json_err = stderr; /* no descriptor left: the lines still go out */
			return;
		}
		setvbuf(json_err, NULL, _IONBF, 0);
		f = fopencookie(NULL, "w", io);
		if (!f)
			return;
		setvbuf(f, NULL, _IONBF, 0);
		text_err = stderr;
		stderr = f;
	} else if (format == LOG_TEXT && text_err) {
		log_stderr_end_line();
		stderr = text_err;
		text_err = NULL;
		current_format = LOG_TEXT;
	}
}

enum log_format log_get_format(void)
{
	return current_format;
}

void log_report(enum log_level level, const char *msg, const char *hint)
{
	if (current_format == LOG_JSON) {
		json_line(json_err, level, msg, hint);
		return;
	}
	fprintf(stderr, "%s\n", msg);
	if (hint && *hint)
		fprintf(stderr, "  hint: %s\n", hint);
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
	if (current_format == LOG_JSON)
		json_line(json_err, level, msg, NULL);
	else
		fprintf(stderr, "kiln: %s: %s\n", level_names[level], msg);
	free(msg);
}

long log_env_long(const char *name, long def, long max)
{
	const char *s = getenv(name);
	char *end;
	long v;

	if (!s || !*s)
		return def;
	v = strtol(s, &end, 10);
	if (*end || v < 0 || v > max) {
		static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
		static const char *warned[8];
		size_t i;

		pthread_mutex_lock(&mu);
		for (i = 0; i < ARRAY_SIZE(warned) && warned[i] && strcmp(warned[i], name); i++)
			;
		if (i < ARRAY_SIZE(warned) && !warned[i]) {
			warned[i] = name;
			log_warn("%s '%s' is not a whole number from 0 to %ld; using %ld", name, s,
				 max, def);
		}
		pthread_mutex_unlock(&mu);
		return def;
	}
	return v;
}
