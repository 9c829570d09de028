#include "jsonc.h"

/*
 * The one place kiln drops `const` from a JSON value. jansson keeps an
 * object's iteration order and every value's reference count inside the
 * value, and its API takes `json_t *` for both, though walking an object
 * changes nothing a reader can see and a reference count is bookkeeping,
 * not content. Every caller below only reads the value; the functions of
 * jsonc.h say so in their contracts, and nothing here writes a member.
 */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wcast-qual"
static json_t *unconst(const json_t *v)
{
	return (json_t *)v;
}
#pragma GCC diagnostic pop

void *jsonc_object_iter(const json_t *object)
{
	return json_object_iter(unconst(object));
}

void *jsonc_object_iter_next(const json_t *object, void *iter)
{
	return json_object_iter_next(unconst(object), iter);
}

json_t *jsonc_share(const json_t *value)
{
	return json_incref(unconst(value));
}

json_t *jsonc_copy(const json_t *value)
{
	return json_copy(unconst(value));
}
