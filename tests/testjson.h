/*
 * testjson.h - random JSON documents for the tests that hold kiln's JSON
 * reader and writer to jansson's: every kind of value, strings with every
 * escape and UTF-8 length, integers to 2^62 and reals to 1e205, nested to
 * depth 6, from a seeded xorshift so a failure repeats.
 */
#ifndef KILN_TESTJSON_H
#define KILN_TESTJSON_H

#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <jansson.h>

static inline unsigned test_rand(uint64_t *rng, unsigned n)
{
	*rng ^= *rng << 13;
	*rng ^= *rng >> 7;
	*rng ^= *rng << 17;
	return (unsigned)(*rng % n);
}

static inline json_t *test_random_json(uint64_t *rng, int depth)
{
	static const char *const pieces[] = {
	    "a",    "Z",    " ",	"\"",		"\\",  "/", "\n",
	    "\x01", "\x7f", "\xc3\xa9", "\xe2\x82\xac", "key", "0", "\xf0\x9f\x9a\x80"};
	const unsigned npieces = sizeof(pieces) / sizeof(pieces[0]);
	unsigned kind = test_rand(rng, depth > 4 ? 6 : 8), i, n;
	char buf[128];
	size_t len = 0;
	json_t *v;

	switch (kind) {
	case 0:
		return json_integer((json_int_t)test_rand(rng, 2000000000) *
				    (test_rand(rng, 2) ? 1 : -4611686018LL));
	case 1:
		return json_real(((double)test_rand(rng, 1000000) - 500000.0) /
				 (double)(1 + test_rand(rng, 9973)) *
				 (test_rand(rng, 3) ? 1.0 : 1e200));
	case 2:
		return test_rand(rng, 2) ? json_true() : json_false();
	case 3:
		return json_null();
	case 4:
	case 5:
		n = test_rand(rng, 8);
		for (i = 0; i < n; i++) {
			const char *p = pieces[test_rand(rng, npieces)];

			memcpy(buf + len, p, strlen(p));
			len += strlen(p);
		}
		return json_stringn(buf, len);
	case 6:
		v = json_array();
		n = test_rand(rng, 5);
		for (i = 0; i < n; i++)
			json_array_append_new(v, test_random_json(rng, depth + 1));
		return v;
	default:
		v = json_object();
		n = test_rand(rng, 6);
		for (i = 0; i < n; i++) {
			snprintf(buf, sizeof(buf), "%s%u", pieces[test_rand(rng, npieces)],
				 test_rand(rng, 50));
			json_object_set_new(v, buf, test_random_json(rng, depth + 1));
		}
		return v;
	}
}

#endif
