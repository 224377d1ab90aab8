/* topoplace — decimal numbers as node names write them: how many digits a
 * number has, and a number written zero-padded to a width (util/digits.c).
 *
 * Below both of their users: the hostlist parser (util/hostlist.c) counts
 * and writes the numbers of "nid[0001-0128]", the machine's numbered runs
 * of names (net/name_runs.c, machine.c) match and write the same numbers.
 * Neither calls the other for them. */
#ifndef TOPOPLACE_DIGITS_INTERNAL_H
#define TOPOPLACE_DIGITS_INTERNAL_H

#include <stdint.h>

/* 10^n for n = 0..19 (10^19 is the largest that fits 64 bits). */
extern const uint64_t tp__pow10[20];

/* Decimal digits of v (1 for 0).  Inline: called per range of a hostlist
 * and per name looked up in a run; comparisons, not divisions. */
static inline unsigned tp__digits_of(uint64_t v)
{
	unsigned n = 1;
	while (n < 20 && v >= tp__pow10[n])
		n++;
	return n;
}

/* The largest number written in as many digits as v. */
static inline uint64_t tp__digits_last(uint64_t v)
{
	unsigned n = tp__digits_of(v);
	return n < 20 ? tp__pow10[n] - 1 : UINT64_MAX;
}

/* v written with at least width digits (zeros first) at b, not
 * NUL-terminated; returns the end. */
char *tp__put_num(char *b, uint64_t v, uint32_t width);

#endif
