/*
 * diff.h - desired (from the spec) x recorded (state) x live (refresh) ->
 * the plan document described in plan.h.
 *
 * Per address: create when desired and nothing lives; update or replace when
 * a desired input differs from live (by the type's update policy); delete
 * when recorded or tagged live and no longer desired; adopt (change.importing)
 * when a live resource carries our tags but state does not hold it; drift when
 * live differs from what was recorded. Extra live resources carrying the same
 * address are duplicates and are deleted ("deposed"), except retained stores.
 */
#ifndef KILN_DIFF_H
#define KILN_DIFF_H

#include <stdbool.h>

#include <jansson.h>

#include "engine.h"
#include "plan.h"

struct diff_input {
	struct engine *engine;
	const json_t *state;	  /* the recorded state document, or NULL before the first apply */
	const char *state_commit; /* hex, or NULL */
	json_t *live;		  /* address -> [live...]; NULL: --refresh=false */
	bool destroy;
	const char *const *targets; /* --target: these and what they need (or, destroying, */
	size_t ntargets;	    /* what needs them) */
	const char *const *replace; /* --replace */
	size_t nreplace;
	/*
	 * destroy --include-retained: retained stores (recorded, or released
	 * by an earlier destroy and still tagged for the workspace) deleted
	 * too; each must name one.
	 */
	const char *const *include_retained;
	size_t ninclude;
	const char *spec_file;
	/*
	 * Live objects in the scope the workspace does not own (engine_refresh):
	 * listed in the plan as kiln.foreign, never planned over. May be NULL.
	 */
	const json_t *foreign;
	/*
	 * Where the plan's view (plan.h), built for the checks the plan passes
	 * before it is handed out, is kept for the caller, who releases it; NULL:
	 * released here.
	 */
	struct plan_view *view;
};

/*
 * 0 and a new plan document, or -1 with err (unknown --target, retained store
 * replaced, a create where another state's resource stands...).
 */
int diff_plan(const struct diff_input *in, json_t **plan, struct kiln_error *err);

/* The changed inputs of a type between two attribute objects: a new array of names. */
json_t *diff_changed_inputs(const struct prov_type *t, const json_t *before, const json_t *after);

/* True when the attributes say a store is kept on delete (deletion: retain). */
bool diff_retained(const json_t *attrs);

#endif
