/*
 * log.h - diagnostics about kiln's own work, on stderr, as text or JSON lines.
 *
 * Results go to stdout and belong to the commands; this is for progress and
 * trouble. Never log a secret: credentials and keys are redacted by callers.
 */
#ifndef KILN_LOG_H
#define KILN_LOG_H

#include "util.h"

enum log_level {
	LOG_ERROR,
	LOG_WARN,
	LOG_INFO,
	LOG_DEBUG,
	LOG_TRACE,
};

enum log_format {
	LOG_TEXT,
	LOG_JSON,
};

/* -1 when name is not a level. */
int log_level_parse(const char *name);
void log_set_level(enum log_level level);
/*
 * LOG_JSON makes every line on stderr a JSON object, whoever writes it:
 * stderr is replaced by a stream that wraps each line (see log.c).
 */
void log_set_format(enum log_format format);
enum log_format log_get_format(void);

/*
 * An error or warning as the text it would print (msg, then "  hint: ..."),
 * or in JSON mode one object whose "hint" holds the hint. hint may be NULL.
 */
void log_report(enum log_level level, const char *msg, const char *hint);

/* A prompt written without a newline ends its line in JSON mode, so it is not held back. */
void log_stderr_end_line(void);
enum log_level log_get_level(void);

void log_msg(enum log_level level, const char *fmt, ...) KILN_PRINTF(2, 3);

#define log_error(...) log_msg(LOG_ERROR, __VA_ARGS__)
#define log_warn(...) log_msg(LOG_WARN, __VA_ARGS__)
#define log_info(...) log_msg(LOG_INFO, __VA_ARGS__)
#define log_debug(...) log_msg(LOG_DEBUG, __VA_ARGS__)

/* A numeric environment setting from 0 to max; a malformed one is reported once and def used. */
long log_env_long(const char *name, long def, long max);

#endif
