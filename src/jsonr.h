#ifndef KILN_JSONR_H
#define KILN_JSONR_H

#include <stddef.h>

#include <jansson.h>

/*
 * json_loadb, for the large documents kiln reads on every plan: the state of
 * ten thousand resources and the sim's ten thousand documents. jansson's
 * lexer makes a call per input byte and copies every token twice, about 70
 * instructions a byte; this one reads the buffer in place and builds the
 * same jansson values.
 *
 * It decodes only input jansson accepts, into the value jansson would make.
 * Whatever it does not accept (malformed input, but also anything it does
 * not handle itself: flags other than JSON_REJECT_DUPLICATES, JSON_DECODE_ANY
 * and JSON_ALLOW_NUL, nesting deeper than 2,000, a locale whose decimal point
 * is not '.') is handed to json_loadb, so failures report jansson's own
 * error, position and all. tests/test_jsonr.c holds it to that.
 */
json_t *jsonr_loadb(const char *buf, size_t len, size_t flags, json_error_t *error);

/* How many calls so far went to json_loadb (the tests check which path a document took). */
unsigned long jsonr_fallbacks(void);

/*
 * What a JSON value is, for messages ("is a string, not an object"): "an
 * object", "an array", "a string", "an integer", "a real number", "true",
 * "false", "null", or "missing" for NULL. The one list the plan's and the
 * state's shape checks both name values with.
 */
const char *jsonr_kind(const json_t *v);

#endif
