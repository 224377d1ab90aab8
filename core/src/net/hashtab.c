/* topoplace — the machine's node-name index and router occupancy table:
 * open addressing with linear probing, power-of-two capacity, at most half
 * full, so that loading a machine of a quarter million nodes costs a few
 * cache misses per node (json-c's linked hash tables cost an allocation per
 * entry and a rehash of every string on each resize).
 *
 *   name index: slot = (32-bit hash << 32) | (node index + 1), 0 = empty;
 *               the probe starts at hash & mask, so a resize moves slots
 *               without touching the names, and the hash in the slot
 *               spares most string compares;
 *   router use: key = router id + 1 (0 = empty), value = nodes on it.
 *
 * Names live in an arena of large blocks: one allocation per block instead
 * of one per node.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "net/hashtab.h"
#include "util/util_internal.h"

#define ARENA_BLOCK ((size_t)1 << 20)

uint64_t tp__mix64(uint64_t x)
{
	/* splitmix64 finaliser */
	x ^= x >> 30;
	x *= 0xbf58476d1ce4e5b9ULL;
	x ^= x >> 27;
	x *= 0x94d049bb133111ebULL;
	x ^= x >> 31;
	return x;
}

uint32_t tp__name_hash(const char *s)
{
	uint64_t h = 0xcbf29ce484222325ULL;      /* FNV-1a */
	for (; *s; s++) {
		h ^= (unsigned char)*s;
		h *= 0x100000001b3ULL;
	}
	return (uint32_t)(tp__mix64(h) >> 32);
}

/* ---- the name index ---- */

int32_t tp__names_find(const struct tp__names *t, char *const *names,
		       const char *name, uint32_t h)
{
	if (!t->cap)
		return -1;
	size_t mask = t->cap - 1;
	for (size_t i = h & mask;; i = (i + 1) & mask) {
		uint64_t s = t->slot[i];
		if (!s)
			return -1;
		if ((uint32_t)(s >> 32) == h) {
			int32_t idx = (int32_t)((uint32_t)s - 1);
			if (!strcmp(names[idx], name))
				return idx;
		}
	}
}

static void names_put(uint64_t *slot, size_t mask, uint64_t s)
{
	size_t i = (size_t)(s >> 32) & mask;
	while (slot[i])
		i = (i + 1) & mask;
	slot[i] = s;
}

/* The slots moved into a table of nc (a power of two); -1 when out of
 * memory, the table then as it was. */
static int names_rehash(struct tp__names *t, size_t nc)
{
	uint64_t *ns = tp__calloc(nc, sizeof *ns);
	if (!ns)
		return -1;
	for (size_t i = 0; i < t->cap; i++)
		if (t->slot[i])
			names_put(ns, nc - 1, t->slot[i]);
	free(t->slot);
	t->slot = ns;
	t->cap = nc;
	return 0;
}

int tp__names_reserve(struct tp__names *t, size_t n)
{
	if (2 * n <= t->cap)
		return 0;
	size_t nc = t->cap ? t->cap : 1024;
	while (nc < 2 * n)
		nc *= 2;
	return names_rehash(t, nc);
}

int tp__names_add(struct tp__names *t, uint32_t h, int32_t idx)
{
	if (2 * (t->n + 1) > t->cap &&
	    names_rehash(t, t->cap ? t->cap * 2 : 1024))
		return -1;
	names_put(t->slot, t->cap - 1, ((uint64_t)h << 32) | (uint32_t)(idx + 1));
	t->n++;
	return 0;
}

/* A block of its own for a long name (freed with the names). */
static char *names_block(struct tp__names *t, size_t bytes)
{
	char **nb = realloc(t->blocks, sizeof *nb * (t->nblocks + 1));
	if (!nb)
		return NULL;
	t->blocks = nb;
	char *p = tp__malloc_array(bytes, 1);
	if (!p)
		return NULL;
	/* before the block still being filled, which stays last */
	if (t->nblocks) {
		t->blocks[t->nblocks] = t->blocks[t->nblocks - 1];
		t->blocks[t->nblocks - 1] = p;
	} else {
		t->blocks[0] = p;
	}
	t->nblocks++;
	return p;
}

char *tp__names_store(struct tp__names *t, const char *name)
{
	size_t len = strlen(name) + 1;
	if (len > t->left) {
		/* blocks grow from 4 kB to ARENA_BLOCK: small machines stay
		 * small, large ones take one allocation per megabyte */
		size_t bs = t->bsize ? t->bsize * 2 : 4096;
		if (bs > ARENA_BLOCK)
			bs = ARENA_BLOCK;
		if (len > bs / 4) {
			/* a long name gets a block of its own */
			char *p = names_block(t, len);
			if (p)
				memcpy(p, name, len);
			return p;
		}
		char **nb = realloc(t->blocks, sizeof *nb * (t->nblocks + 1));
		if (!nb)
			return NULL;
		t->blocks = nb;
		if (!(t->blocks[t->nblocks] = malloc(bs)))
			return NULL;
		t->nblocks++;
		t->bsize = t->left = bs;
	}
	char *p = t->blocks[t->nblocks - 1] + (t->bsize - t->left);
	memcpy(p, name, len);
	t->left -= len;
	return p;
}

void tp__names_free(struct tp__names *t)
{
	free(t->slot);
	for (size_t i = 0; i < t->nblocks; i++)
		free(t->blocks[i]);
	free(t->blocks);
	memset(t, 0, sizeof *t);
}

/* ---- a set of names ---- */

int tp__name_set_add(struct tp__name_set *s, const char *name)
{
	uint32_t h = tp__name_hash(name);
	if (tp__names_find(&s->set, s->names, name, h) >= 0)
		return TP_OK;
	if (s->n == s->cap) {
		size_t nc = s->cap ? 2 * s->cap : 64;
		char **nn = realloc(s->names, nc * sizeof *nn);
		if (!nn)
			return TP_ENOMEM;
		s->names = nn;
		s->cap = nc;
	}
	char *kept = tp__names_store(&s->set, name);
	if (!kept || tp__names_add(&s->set, h, (int32_t)s->n))
		return TP_ENOMEM;
	s->names[s->n++] = kept;
	return TP_OK;
}

bool tp__name_set_has(const struct tp__name_set *s, const char *name)
{
	return s->n && tp__names_find(&s->set, s->names, name,
				      tp__name_hash(name)) >= 0;
}

void tp__name_set_free(struct tp__name_set *s)
{
	tp__names_free(&s->set);
	free(s->names);
	memset(s, 0, sizeof *s);
}

/* ---- router occupancy ---- */

int32_t *tp__routers_slot(struct tp__routers *t, int64_t router, bool add)
{
	if (t->nrouters > 0 && t->nrouters <= TP__DENSE_ROUTERS) {
		if (!t->dense && !(t->dense = tp__calloc((size_t)t->nrouters,
							  sizeof *t->dense)))
			return NULL;
		return &t->dense[router];
	}
	uint64_t key = (uint64_t)router + 1;
	if (add && 2 * (t->n + 1) > t->cap) {
		size_t nc = t->cap ? t->cap * 2 : 1024;
		uint64_t *nk = tp__calloc(nc, sizeof *nk);
		int32_t *nv = tp__malloc_array(nc, sizeof *nv);
		if (!nk || !nv) {
			free(nk);
			free(nv);
			return NULL;
		}
		for (size_t i = 0; i < t->cap; i++) {
			if (!t->key[i])
				continue;
			size_t j = (size_t)tp__mix64(t->key[i]) & (nc - 1);
			while (nk[j])
				j = (j + 1) & (nc - 1);
			nk[j] = t->key[i];
			nv[j] = t->val[i];
		}
		free(t->key);
		free(t->val);
		t->key = nk;
		t->val = nv;
		t->cap = nc;
	}
	if (!t->cap)
		return NULL;
	size_t mask = t->cap - 1;
	for (size_t i = (size_t)tp__mix64(key) & mask;; i = (i + 1) & mask) {
		if (t->key[i] == key)
			return &t->val[i];
		if (!t->key[i]) {
			if (!add)
				return NULL;
			t->key[i] = key;
			t->val[i] = 0;
			t->n++;
			return &t->val[i];
		}
	}
}

int tp__routers_each(const struct tp__routers *t,
		     int (*fn)(int64_t router, int32_t count, void *arg), void *arg)
{
	int rc = 0;
	if (t->dense) {
		for (int64_t r = 0; r < t->nrouters && !rc; r++)
			if (t->dense[r])
				rc = fn(r, t->dense[r], arg);
		return rc;
	}
	for (size_t i = 0; i < t->cap && !rc; i++)
		if (t->key[i])
			rc = fn((int64_t)(t->key[i] - 1), t->val[i], arg);
	return rc;
}

void tp__routers_free(struct tp__routers *t)
{
	free(t->dense);
	free(t->key);
	free(t->val);
	memset(t, 0, sizeof *t);
}
