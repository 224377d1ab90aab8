/* topoplace — the geometric mapper's split trees: the slot counts of every
 * part of a node partition, depth-first, stored or implicit (the rule every
 * node follows with equal slots). */
#include <stdlib.h>
#include <string.h>

#include "map/geom_part.h"

/* ------------------------------------------------------------------------ */
/* Node side: split tree                                                     */

/* Room for cap entries in t (a tree being stored, not compared). */
static int tree_reserve(tree *t, int64_t cap)
{
	if (cap <= t->cap)
		return 0;
	int64_t nc = t->cap ? 2 * t->cap : 256;
	while (nc < cap)
		nc *= 2;
	int32_t *nv = realloc(t->v, sizeof(int32_t) * (size_t)nc);
	if (!nv)
		return TP_ENOMEM;
	t->v = nv;
	t->cap = nc;
	return 0;
}

int tp__tree_materialize(tree *t)
{
	const tree *e = t->expect;
	tree full = { 0 };
	int rc = e->v ? tree_reserve(&full, t->len + 1)
		      : tp__tree_predict(&full, e->rule_n, e->rule_w, e->rule_k);
	if (rc) {
		free(full.v);
		return rc;
	}
	if (e->v)
		memcpy(full.v, e->v, sizeof(int32_t) * (size_t)t->len);
	t->v = full.v;   /* its first len entries are what matched */
	t->cap = full.cap;
	t->expect = NULL;
	return 0;
}

int tp__tree_push(tree *t, int64_t x)
{
	if (t->expect) {
		if (!t->expect->v) {
			t->len++;   /* implicit: node_rec has checked the node */
			return 0;
		}
		if (t->len < t->expect->len && t->expect->v[t->len] == x) {
			t->len++;
			return 0;
		}
		int rc = tp__tree_materialize(t);   /* it differs: store */
		if (rc)
			return rc;
	}
	int rc = tree_reserve(t, t->len + 1);
	if (rc)
		return rc;
	t->v[t->len++] = (int32_t)x;
	return 0;
}

int tp__tree_rule(int64_t n, uint64_t w, int kparts, int64_t *size)
{
	int k = kparts < n ? kparts : (int)n;
	if (k == 2) {
		/* bisection, the default and every pair: asked at each of a
		 * million inner nodes, so without the loop's divisions */
		uint64_t target = (uint64_t)n * w / 2;
		int64_t c = (int64_t)(w == 1 ? target : target / w);
		if ((uint64_t)(c + 1) * w - target < target - (uint64_t)c * w)
			c++;
		c = c < 1 ? 1 : c > n - 1 ? n - 1 : c;
		size[0] = c;
		size[1] = n - c;
		return 2;
	}
	uint64_t total = (uint64_t)n * w, done = 0;
	int64_t pos = 0;
	for (int j = 0; j < k - 1; j++) {
		uint64_t target = total * (uint64_t)(j + 1) / (uint64_t)k - done;
		int64_t left = n - pos, c = (int64_t)(target / w);
		if ((uint64_t)(c + 1) * w - target < target - (uint64_t)c * w)
			c++;
		if (c < 1)
			c = 1;
		else if (c > left - 1)
			c = left - 1;
		if (c > left - (k - 1 - j))
			c = left - (k - 1 - j);
		size[j] = c;
		pos += c;
		done += (uint64_t)c * w;
	}
	size[k - 1] = n - pos;
	return k;
}

int tp__tree_predict(tree *t, int64_t n, uint64_t w, int kparts)
{
	int rc = 0;
	if (n == 1)
		return tp__tree_push(t, 0);
	int64_t size[64];
	int k = tp__tree_rule(n, w, kparts, size);
	if ((rc = tp__tree_push(t, k)))
		return rc;
	for (int j = 0; j < k && !rc; j++)
		rc = tp__tree_push(t, (int64_t)((uint64_t)size[j] * w));
	/* parts of equal size have equal subtrees (the tree depends on the
	 * size alone): a repeated one is copied, not derived again */
	int64_t from[64];
	for (int j = 0; j < k && !rc; j++) {
		from[j] = t->len;
		int same = 0;
		while (same < j && size[same] != size[j])
			same++;
		if (same == j) {
			rc = tp__tree_predict(t, size[j], w, kparts);
			continue;
		}
		int64_t len = from[same + 1] - from[same];
		rc = tree_reserve(t, t->len + len);
		if (!rc) {
			memcpy(t->v + t->len, t->v + from[same], sizeof *t->v * (size_t)len);
			t->len += len;
		}
	}
	return rc;
}

/* A node of the partition against an implicit expected tree: k parts of
 * cnt slots where the rule has its own.  On the first difference the
 * expected prefix is written out and the tree is stored from there. */
int tp__tree_check(tree *t, int64_t n, int k, const int64_t *cnt)
{
	const tree *e = t->expect;
	if (!e || e->v)
		return 0;
	int64_t size[64];
	bool same = tp__tree_rule(n, e->rule_w, e->rule_k, size) == k;
	for (int j = 0; same && j < k; j++)
		same = (uint64_t)cnt[j] == (uint64_t)size[j] * e->rule_w;
	return same ? 0 : tp__tree_materialize(t);
}
