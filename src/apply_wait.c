/*
 * apply_wait.c - the wait rule of apply --wait; see apply_wait.h.
 */
#include "apply_wait.h"

#include <stdlib.h>
#include <string.h>

#include "expiry.h"
#include "timefmt.h"
#include "util.h"

#define WAIT_HINT                                                                                  \
	"it is bought and recorded in the state: run kiln apply (or kiln up --wait) again once "   \
	"it has started, or give --wait-timeout a longer bound"

int apply_wait_timeout_parse(struct apply_wait *w, const char *env, struct kiln_error *err)
{
	const char *text = w->arg ? w->arg : env && *env ? env : NULL;
	const char *name = w->arg ? "--wait-timeout" : "KILN_WAIT_TIMEOUT";

	w->timeout = APPLY_WAIT_TIMEOUT_DEFAULT;
	if (!text)
		return 0;
	if (strcmp(text, "0") == 0) {
		w->timeout = 0;
		return 0;
	}
	if (timefmt_duration_parse(text, &w->timeout) < 0 || w->timeout < 0) {
		kiln_error_set(err, "%s '%s' is not a duration", name, text);
		kiln_error_hint(err, "write a duration of at most 182d like 30m, 6h or 2d, or 0 to "
				     "wait until the window ends");
		return -1;
	}
	if (w->timeout > APPLY_WAIT_TIMEOUT_MAX) {
		kiln_error_set(err, "%s '%s' is longer than 182d, the longest a Capacity Block runs",
			       name, text);
		kiln_error_hint(err, "write at most 182d, or 0 to wait until the window ends");
		return -1;
	}
	return 0;
}

/* Milliseconds of the bound left since the first round ended; the first call starts it. */
static int64_t wait_left_ms(struct apply_wait *w, int64_t now, int64_t mono_ms)
{
	if (!w->started) {
		w->started = true;
		w->first_ms = mono_ms;
		w->until = now + w->timeout;
	}
	return w->timeout * 1000 - (mono_ms - w->first_ms);
}

bool apply_wait_in_bound(struct apply_wait *w, const json_t *window, int64_t now, int64_t mono_ms,
			 struct kiln_error *err)
{
	const char *addr = json_string_value(json_object_get(window, "address"));
	const char *id = json_string_value(json_object_get(window, "id"));
	const char *start = json_string_value(json_object_get(window, "start"));
	int64_t left = wait_left_ms(w, now, mono_ms), s = 0;
	char *bound;

	if (w->timeout == 0 ||
	    (left > 0 && !(start && timefmt_time_parse_rfc3339(start, &s) == 0 && s > w->until)))
		return true;
	bound = timefmt_duration_format(w->timeout);
	if (left > 0)
		kiln_error_set(err,
			       "%s (%s) starts at %s, after the --wait-timeout of %s: not waiting "
			       "for it",
			       addr, id ? id : "?", start, bound);
	else
		kiln_error_set(err,
			       "the nodes did not launch into %s (%s, from %s) within the "
			       "--wait-timeout of %s",
			       addr, id ? id : "?", start ? start : "?", bound);
	kiln_error_hint(err, WAIT_HINT);
	free(bound);
	return false;
}

int apply_wait_next(struct apply_wait *w, const json_t *state, int64_t now, int64_t mono_ms,
		    long poll_ms, json_t **window, long *sleep_ms, struct kiln_error *err)
{
	json_t *windows = expiry_windows(state, now), *next = NULL, *o;
	size_t i;

	*window = NULL;
	json_array_foreach(windows, i, o)
	{
		if (strcmp(json_string_value(json_object_get(o, "state")), "ended") != 0) {
			next = json_incref(o);
			break;
		}
	}
	json_decref(windows);
	if (!next)
		return 0;
	if (!apply_wait_in_bound(w, next, now, mono_ms, err)) {
		json_decref(next);
		return -1;
	}
	/* Never past the bound: sleep what is left of it when that is less than a poll. */
	*sleep_ms = poll_ms;
	if (w->timeout > 0 && wait_left_ms(w, now, mono_ms) < poll_ms)
		*sleep_ms = (long)wait_left_ms(w, now, mono_ms);
	*window = next;
	return 1;
}

void apply_wait_hold(struct apply_wait *w, const char *plan_file, const char *digest,
		     const char *spec, const char *workspace)
{
	w->held_plan = xstrdup(plan_file);
	w->held_digest = xstrdup(digest ? digest : "");
	w->held_spec = spec ? xstrdup(spec) : NULL;
	w->held_ws = workspace ? xstrdup(workspace) : NULL;
}

int apply_wait_held_check(const struct apply_wait *w, const char *spec_digest,
			  const char *spec_path, struct kiln_error *err)
{
	if (!w->held_digest || strcmp(w->held_digest, spec_digest) == 0)
		return 0;
	kiln_error_set(err,
		       "%s changed while --wait waited: %s was made from %.19s, it is now %.19s; "
		       "--wait applies again only what that plan covered; nothing more was "
		       "changed",
		       spec_path, w->held_plan, w->held_digest, spec_digest);
	kiln_error_hint(err,
			"what %s did is recorded: review the change (kiln plan %s --out %s) and "
			"apply that plan, with --wait",
			w->held_plan, spec_path, w->held_plan);
	return -1;
}

void apply_wait_release(struct apply_wait *w)
{
	free(w->held_plan);
	free(w->held_digest);
	free(w->held_spec);
	free(w->held_ws);
	w->held_plan = w->held_digest = w->held_spec = w->held_ws = NULL;
}
