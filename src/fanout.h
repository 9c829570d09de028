/*
 * fanout.h - one command run on many nodes at once (kiln exec): a process
 * per node, at most N at a time, each one's output read as it comes and
 * either handed over a line at a time or kept, with its exit status and
 * how long it ran. It runs what it is given (ssh's argv, made by the
 * command) and never prints.
 */
#ifndef KILN_FANOUT_H
#define KILN_FANOUT_H

#include <stdbool.h>
#include <stddef.h>

#include "strbuf.h"

/* What fanout keeps of a stream with FANOUT_KEEP: the first bytes, this many at most. */
#define FANOUT_KEEP_MAX ((size_t)1 << 20)

struct fanout_node {
	const char *name;      /* the node's name (its lines' prefix) */
	char **argv;	       /* what to run; NULL: not started, code already set by the caller */
	int code;	       /* exit status as a shell gives it (128+N for signal N) */
	double seconds;	       /* from the start of its process to its exit */
	struct strbuf kept[2]; /* stdout and stderr, when kept */
	bool truncated[2];     /* more than FANOUT_KEEP_MAX bytes came and were dropped */
	int start_errno;       /* its process could not be started (code is then 255) */
	/* internal */
	int pid, fd[2];
	struct strbuf part[2];
	double started;
};

struct fanout_ui {
	/* A complete line (without its newline; the last one may lack one) on stream 0 or 1. */
	void (*line)(void *ctx, const struct fanout_node *n, int stream, const char *text,
		     size_t len);
	/* Called before each process starts, in the child's stead (signal mask, then exec). */
	void (*exec)(void *ctx, char **argv);
	void *ctx;
	bool keep; /* keep the output in kept[] instead of calling line */
};

/* Run every node's argv, at most parallelism at once; fills code and seconds. */
void fanout_run(struct fanout_node *nodes, size_t n, int parallelism, const struct fanout_ui *ui);
/* The output kept, as a JSON string's UTF-8: a NUL or invalid byte becomes U+FFFD. Caller frees. */
char *fanout_text(const struct strbuf *kept);
void fanout_release(struct fanout_node *nodes, size_t n);

#endif
