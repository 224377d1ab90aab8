/* topoplace — decimal numbers in node names: the powers of ten the digit
 * counts compare with, and numbers written zero-padded (digits_internal.h).
 * Shared by the hostlist parser and the machine's numbered runs of names,
 * which sit above it. */
#include <stdint.h>

#include "util/digits_internal.h"

const uint64_t tp__pow10[20] = {
	1u, 10u, 100u, 1000u, 10000u, 100000u, 1000000u, 10000000u,
	100000000u, 1000000000u, 10000000000u, 100000000000u,
	1000000000000u, 10000000000000u, 100000000000000u,
	1000000000000000u, 10000000000000000u, 100000000000000000u,
	1000000000000000000u, 10000000000000000000u
};

char *tp__put_num(char *b, uint64_t v, uint32_t width)
{
	/* two digits a step: a hostfile of a million ranks writes one number
	 * per line */
	static const char pairs[] =
		"00010203040506070809101112131415161718192021222324252627282930313233343536373839"
		"40414243444546474849505152535455565758596061626364656667686970717273747576777879"
		"8081828384858687888990919293949596979899";
	unsigned n = tp__digits_of(v);
	for (uint32_t i = n; i < width; i++)
		*b++ = '0';
	char *e = b + n;
	while (v >= 100) {
		unsigned r = (unsigned)(v % 100) * 2;
		v /= 100;
		*--e = pairs[r + 1];
		*--e = pairs[r];
	}
	if (v >= 10) {
		*--e = pairs[v * 2 + 1];
		*--e = pairs[v * 2];
	} else {
		*--e = (char)('0' + v);
	}
	return b + n;
}
