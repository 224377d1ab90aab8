/* bench_alloc.h — bench_geom's random sparse allocation, shared with
 * bench_peers so that both benchmarks map onto the very same nodes for the
 * same case name: a partial Fisher-Yates over all routers of the torus,
 * drawn from splitmix64 without modulo bias, seeded by the case's name
 * (FNV-1a) XOR a seed (bench_geom's default BENCH_GEOM_SEED).  The result is
 * NOT sorted; the callers list it in node order, as Slurm does.
 */
#ifndef TP_BENCH_ALLOC_H
#define TP_BENCH_ALLOC_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* bench_geom's --seed default, the seed of doc/benchmarks.md's tables. */
#define BENCH_GEOM_SEED 20261122ULL

static inline uint64_t splitmix64(uint64_t *s)
{
	uint64_t z = (*s += 0x9e3779b97f4a7c15ULL);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

/* Uniform in [0, n) without modulo bias. */
static inline uint64_t rand_below(uint64_t *s, uint64_t n)
{
	uint64_t lim = UINT64_MAX - UINT64_MAX % n;
	uint64_t r;
	do
		r = splitmix64(s);
	while (r >= lim);
	return r % n;
}

static inline uint64_t fnv1a(const void *p, size_t n, uint64_t h)
{
	const unsigned char *c = p;
	for (size_t i = 0; i < n; i++) {
		h ^= c[i];
		h *= 0x100000001b3ULL;
	}
	return h;
}

/* k distinct routers of nrouters (router id = x + X * (y + Y * z)) into
 * out[0..k), bench_geom's rule for case NAME.  -1 when k > nrouters or
 * out of memory. */
static inline int bench_random_nodes(const char *name, uint64_t seed,
				     int64_t nrouters, int32_t k, int32_t *out)
{
	uint64_t s = fnv1a(name, strlen(name), 0xcbf29ce484222325ULL) ^ seed;
	int32_t *perm;
	if (k > nrouters)
		return -1;
	perm = malloc(sizeof(int32_t) * (size_t)nrouters);
	if (!perm)
		return -1;
	for (int64_t i = 0; i < nrouters; i++)
		perm[i] = (int32_t)i;
	for (int32_t i = 0; i < k; i++) {
		int64_t j = i + (int64_t)rand_below(&s, (uint64_t)(nrouters - i));
		int32_t t = perm[i];
		perm[i] = perm[j];
		perm[j] = t;
	}
	memcpy(out, perm, sizeof(int32_t) * (size_t)k);
	free(perm);
	return 0;
}

#endif
