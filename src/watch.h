/*
 * watch.h - what `kiln status --watch` needs besides the status itself:
 * the changes between two status documents as one line each (for a
 * standard output that is not a terminal), the interval taken after
 * --watch, and a pause that ends early on an interrupt (signals.h).
 */
#ifndef KILN_WATCH_H
#define KILN_WATCH_H

#include <stdbool.h>
#include <stdint.h>

#include <jansson.h>

#include "strbuf.h"

#define WATCH_DEFAULT_SECONDS 5

/*
 * One line per leaf that differs between before and after: "PATH: OLD -> NEW"
 * (a leaf added: "PATH: NEW", gone: "PATH: OLD -> gone"), in after's order. An
 * array of objects with a "name" (else an "id") is walked by it (groups[trainers]). What
 * moves with the clock alone (a key ending in _seconds, cost_so_far) is not a
 * change. Returns the number of lines added to out.
 */
size_t watch_changes(const json_t *before, const json_t *after, struct strbuf *out);

/*
 * --watch's interval from the word after it (NULL: the default): seconds,
 * or a duration as 90s or 1m, at least 1 s and at most a day. 0, or -1
 * when word is not one (then it is not the interval: an operand).
 */
int watch_interval(const char *word, int64_t *seconds);

/* Sleep seconds, waking every tenth of one to see an interrupt; false when one came. */
bool watch_pause(int64_t seconds);

#endif
