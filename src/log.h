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
void log_set_format(enum log_format format);
enum log_level log_get_level(void);

void log_msg(enum log_level level, const char *fmt, ...) KILN_PRINTF(2, 3);

#define log_error(...) log_msg(LOG_ERROR, __VA_ARGS__)
#define log_warn(...) log_msg(LOG_WARN, __VA_ARGS__)
#define log_info(...) log_msg(LOG_INFO, __VA_ARGS__)
#define log_debug(...) log_msg(LOG_DEBUG, __VA_ARGS__)

#endif
