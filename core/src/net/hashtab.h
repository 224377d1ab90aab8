/* topoplace — the machine's name index and router counts (hashtab.c), and
 * the sets of names loaders keep. */
#ifndef TOPOPLACE_NET_HASHTAB_H
#define TOPOPLACE_NET_HASHTAB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The machine's node names: an arena and an open-addressing index
 * (hashtab.c). */
struct tp__names {
	uint64_t *slot;        /* (hash << 32) | (index + 1), 0 = empty */
	size_t cap, n;
	char **blocks;         /* the names themselves */
	size_t nblocks;
	size_t bsize, left;    /* size of the last block, bytes left in it */
};

/* Nodes per router (hashtab.c): a dense array of counts when the machine
 * has at most TP__DENSE_ROUTERS routers (allocated at the first node, its
 * pages touched only where nodes are), else a hash of the used ones. */
#define TP__DENSE_ROUTERS ((int64_t)1 << 22)
struct tp__routers {
	int64_t nrouters;
	int32_t *dense;
	uint64_t *key;         /* router id + 1, 0 = empty */
	int32_t *val;
	size_t cap, n;
};

/* The splitmix64 finaliser: a well-mixed 64-bit hash of x. */
uint64_t tp__mix64(uint64_t x);
/* The next number of the splitmix64 generator at *state: small, seedable,
 * identical on every platform. */
static inline uint64_t tp__splitmix64(uint64_t *state)
{
	return tp__mix64(*state += 0x9e3779b97f4a7c15ULL);
}
uint32_t tp__name_hash(const char *s);
int32_t tp__names_find(const struct tp__names *t, char *const *names,
		       const char *name, uint32_t h);
int tp__names_add(struct tp__names *t, uint32_t h, int32_t idx);
char *tp__names_store(struct tp__names *t, const char *name);
void tp__names_free(struct tp__names *t);
/* A set of distinct names in the order first added (slurm.conf's nodes,
 * the nodes a topology places): the names and their index. */
struct tp__name_set {
	struct tp__names set;
	char **names;
	size_t n, cap;
};
/* Add name unless present: TP_OK, or TP_ENOMEM. */
int tp__name_set_add(struct tp__name_set *s, const char *name);
bool tp__name_set_has(const struct tp__name_set *s, const char *name);
void tp__name_set_free(struct tp__name_set *s);
/* The count of router (created with add), or NULL. */
int32_t *tp__routers_slot(struct tp__routers *t, int64_t router, bool add);
/* Call fn for every router with nodes; stops at the first non-zero. */
int tp__routers_each(const struct tp__routers *t,
		     int (*fn)(int64_t router, int32_t count, void *arg), void *arg);
/* Room for n names in the index (a hint: fewer resizes). */
int tp__names_reserve(struct tp__names *t, size_t n);
void tp__routers_free(struct tp__routers *t);

#endif
