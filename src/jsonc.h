#ifndef KILN_JSONC_H
#define KILN_JSONC_H

#include <jansson.h>

/*
 * Const-correct reading of jansson values. Most of kiln reads JSON it does
 * not own (the state, the plan view, a provider's answer) through
 * `const json_t *`, but jansson's object iterator and its reference count
 * take `json_t *`. This module is the one place a `const json_t *` becomes a
 * `json_t *` (jsonc.c says why it is safe); no other file may cast `const`
 * away, and `make check-cast-qual` holds the files cleaned so far to it
 * (HACKING.md, the dependency rule).
 *
 * Arrays need nothing: json_array_size and json_array_get take const, so
 * json_array_foreach reads a const array as it is.
 */

/* json_object_iter and json_object_iter_next, for an object only read. */
void *jsonc_object_iter(const json_t *object);
void *jsonc_object_iter_next(const json_t *object, void *iter);

/* json_object_foreach over an object only read; value may be const json_t *. */
#define json_object_foreach_const(object, key, value)                                              \
	for (key = json_object_iter_key(jsonc_object_iter(object));                                \
	     key && (value = json_object_iter_value(json_object_key_to_iter(key)));                \
	     key = json_object_iter_key(                                                           \
		 jsonc_object_iter_next(object, json_object_key_to_iter(key))))

/*
 * A new reference to a value only read, for a document that will hold it
 * (an output, a trailer, a list of findings). Whoever holds the reference
 * reads the value and never changes it: to change it, json_deep_copy.
 */
json_t *jsonc_share(const json_t *value);

/*
 * json_copy of an object only read: a new top level the caller may change,
 * whose members are shared with the original and so only read.
 */
json_t *jsonc_copy(const json_t *value);

#endif
