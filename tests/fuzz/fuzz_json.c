/*
 * fuzz_json.c - libFuzzer target: kiln's JSON reader and writer against
 * jansson's. For any bytes, jsonr_loadb must decode exactly what json_loadb
 * decodes (the same value, key order and reals) or fail with its very
 * error; and whatever decodes, jsonw must write byte for byte what
 * json_dumps writes. The first byte picks the decoding flags. Any
 * difference aborts.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jsonr.h"
#include "jsonw.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void differ(const char *what)
{
	fprintf(stderr, "fuzz_json: %s\n", what);
	abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const size_t load_flags[] = {0, JSON_REJECT_DUPLICATES, JSON_DECODE_ANY,
					    JSON_DECODE_ANY | JSON_REJECT_DUPLICATES |
						JSON_ALLOW_NUL};
	static const size_t dump_flags[] = {
	    JSON_ENCODE_ANY,
	    JSON_ENCODE_ANY | JSON_INDENT(2) | JSON_SORT_KEYS | JSON_REAL_PRECISION(12),
	    JSON_ENCODE_ANY | JSON_COMPACT | JSON_ENSURE_ASCII | JSON_ESCAPE_SLASH |
		JSON_REAL_PRECISION(17),
	    JSON_ENCODE_ANY | JSON_INDENT(3) | JSON_COMPACT | JSON_SORT_KEYS};
	json_error_t e1, e2;
	json_t *want, *got;
	size_t flags, i;

	if (size == 0)
		return 0;
	flags = load_flags[data[0] % 4];
	want = json_loadb((const char *)data + 1, size - 1, flags, &e1);
	got = jsonr_loadb((const char *)data + 1, size - 1, flags, &e2);
	if (!want != !got)
		differ(want ? "jsonr refused what jansson accepted"
			    : "jsonr accepted what jansson refused");
	if (!want) {
		if (strcmp(e1.text, e2.text) != 0 || e1.line != e2.line || e1.column != e2.column ||
		    e1.position != e2.position)
			differ("a different error");
		return 0;
	}
	if (!json_equal(want, got))
		differ("a different value");
	for (i = 0; i < sizeof(dump_flags) / sizeof(dump_flags[0]); i++) {
		size_t exact =
		    (dump_flags[i] & ~(size_t)JSON_REAL_PRECISION(31)) | JSON_REAL_PRECISION(17);
		char *a = json_dumps(want, exact);
		char *b = jsonw_dumps(got, exact, NULL);
		char *c = json_dumps(want, dump_flags[i]);
		char *d = jsonw_dumps(want, dump_flags[i], NULL);

		if (!a != !b || (a && strcmp(a, b) != 0))
			differ("jsonr's value writes differently (key order or reals)");
		if (!c != !d || (c && strcmp(c, d) != 0))
			differ("jsonw writes differently from json_dumps");
		free(a);
		free(b);
		free(c);
		free(d);
	}
	json_decref(want);
	json_decref(got);
	return 0;
}
