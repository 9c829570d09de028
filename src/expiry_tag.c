/*
 * expiry_tag.c - see expiry_tag.h. Calls the provider's tag_expiry hook on
 * every resource the state records; owns no state and commits nothing (the
 * caller has committed the expiry it tags).
 */
#include "expiry_tag.h"

#include "state.h"

int expiry_tag_nodes(struct engine *e, const json_t *state, const char *expires, size_t *n,
		     struct kiln_error *err)
{
	const char *addr;
	const json_t *res;
	int ret = 0;

	*n = 0;
	if (!e->prov->tag_expiry)
		return 0;
	state_foreach_resource(state, addr, res)
	{
		struct kiln_error one = {0};
		const char *id = state_resource_id(res);
		int rc;

		if (!id)
			continue;
		ENGINE_CALL(rc, &one,
			    e->prov->tag_expiry(e->ctx, state_resource_type(res), id,
						state_resource_attrs(res), expires, &one));
		(*n)++;
		if (rc != PROV_OK && ret == 0) {
			kiln_error_set(err, "%s: its nodes' kiln:expires tag is still the old one: %s",
				       addr, one.msg);
			kiln_error_hint(err,
					"its nodes power themselves off at the old expiry plus the "
					"grace: run kiln ttl extend again once the cloud answers");
			ret = -1;
		}
	}
	return ret;
}
