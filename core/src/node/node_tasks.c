/* topoplace — a node's few tasks as placement inside the node sees them:
 * their traffic as a dense local matrix, and their split into parts of
 * exact sizes with few bytes between them (phase 2's second start and the
 * GPU bisection over the PCIe tree). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "util/util_internal.h"
#include "node/node_internal.h"
#include "node/node_place.h"
#include "pattern/pattern_internal.h"

/* ---- exact-size partitions of a node's few tasks ----
 *
 * Phase 2 (sockets) and the GPU bisection (sockets, then host bridges and
 * PCIe switches) split a node's tasks into parts of exact sizes with few
 * bytes between them.  A node holds few tasks (at most its cores or GPUs),
 * so this works on the dense local matrix: the better of two starts (the
 * tasks in local-rank order, and greedy growth along the heaviest edges,
 * which keeps heavy chains such as stencil rows together), each improved by
 * Kernighan-Lin passes between every two parts (the best sequence of swaps,
 * losing ones included, so that a split pairwise swaps cannot leave is left
 * all the same); for the GPU bisection then an exact branch-and-bound
 * search that starts from it (bounded: exact on the few tasks of a socket
 * or a switch).  Phase 2 keeps the heuristic (MIMS, not the cut, decides
 * there, and its tasks may be as many as the cores).
 * Deterministic: ties to the lower index. */

/* Bytes between the subset's i-th and j-th tasks. */
static double sw(const struct subset *s, int i, int j)
{
	return s->c[(size_t)s->T[i] * s->nt + s->T[j]];
}

/* Bytes between parts of the assignment part[0..n) of the subset. */
static double cut_of(const struct subset *s, const int *part)
{
	double cut = 0;
	for (int i = 0; i < s->n; i++)
		for (int j = i + 1; j < s->n; j++)
			if (part[i] != part[j])
				cut += sw(s, i, j);
	return cut;
}

/* Greedy growth: part p in turn takes the free task most tied to it (the
 * heaviest-traffic free task to start). */
static void grow_parts(const struct subset *s, int k, const int *cnt,
		       int *part)
{
	int n = s->n;
	for (int i = 0; i < n; i++)
		part[i] = -1;
	for (int p = 0; p < k; p++)
		for (int got = 0; got < cnt[p]; got++) {
			int best = -1;
			double bw = -1;
			for (int i = 0; i < n; i++) {
				if (part[i] >= 0)
					continue;
				double w = 0;
				for (int j = 0; j < n; j++)
					if (got ? part[j] == p : part[j] < 0)
						w += sw(s, i, j);
				if (w > bw) {
					bw = w;
					best = i;
				}
			}
			part[best] = p;
		}
}

/* Scratch of the Kernighan-Lin passes, n entries each: the tasks a pass
 * has moved, and its swaps in order. */
struct kl_work {
	char *locked;
	int *su, *sv;
};

/* One Kernighan-Lin pass between parts p and q: swap the best unlocked
 * pair again and again, then keep the best prefix.  Returns the gain. */
static double kl_pass(const struct subset *s, int *part, int p, int q,
		      struct kl_work *kw)
{
	int n = s->n;
	char *locked = kw->locked;
	int *su = kw->su, *sv = kw->sv;
	memset(locked, 0, (size_t)n);
	double gain = 0, best = 0;
	int nbest = 0, ns = 0;
	for (;;) {
		int bu = -1, bv = -1;
		double bg = -HUGE_VAL;
		for (int u = 0; u < n; u++) {
			if (locked[u] || part[u] != p)
				continue;
			for (int v = 0; v < n; v++) {
				if (locked[v] || part[v] != q)
					continue;
				/* gain of swapping u and v: their ties to the
				 * other side minus those to their own */
				double g = 0;
				for (int x = 0; x < n; x++) {
					if (x == u || x == v)
						continue;
					double cu = sw(s, u, x);
					double cv = sw(s, v, x);
					if (part[x] == q)
						g += cu - cv;
					else if (part[x] == p)
						g += cv - cu;
				}
				if (g > bg + 1e-12 * fabs(bg)) {
					bg = g;
					bu = u;
					bv = v;
				}
			}
		}
		if (bu < 0)
			break;
		part[bu] = q;
		part[bv] = p;
		locked[bu] = locked[bv] = 1;
		su[ns] = bu;
		sv[ns++] = bv;
		gain += bg;
		if (gain > best + 1e-9 * (fabs(best) + 1)) {
			best = gain;
			nbest = ns;
		}
	}
	/* undo the swaps after the best prefix */
	for (int i = ns - 1; i >= nbest; i--) {
		part[su[i]] = p;
		part[sv[i]] = q;
	}
	return best;
}

/* Kernighan-Lin between every two parts until no pass gains. */
static void kl_refine(const struct subset *s, int k, int *part,
		      struct kl_work *kw)
{
	for (int round = 0; round < 4 * s->n; round++) {
		double g = 0;
		for (int p = 0; p < k; p++)
			for (int q = p + 1; q < k; q++)
				g += kl_pass(s, part, p, q, kw);
		if (g <= 0)
			break;
	}
}

/* Exact search of the split (branch and bound), for the few tasks where it
 * is cheap: the heuristic's split is the first bound; a task goes to each
 * part with room in turn, the heaviest tasks first, and a branch whose cut,
 * plus what the tasks left must add to it (xbound), reaches the best is
 * dropped.  Of parts of equal size only the first empty one is tried (their
 * names do not change the cut).  The work is bounded (EXACT_WORK task x
 * part steps, a fraction of a millisecond: exact for the few tasks of a
 * switch or a small socket); the best split found is kept, never worse
 * than the heuristic's.  Kernighan-Lin passes miss splits of three or more
 * unequal parts (a 3 | 4 | 2 node: 13 MB where 11 MB was possible). */
#define EXACT_WORK 400000

struct xsplit {
	const struct subset *s;
	int n, k;
	const int *size;     /* the parts' sizes */
	int *room;           /* tasks each part can still take */
	const int *order;    /* the tasks, heaviest first */
	int *cur, *best;
	double *conn;        /* n x k: bytes from each task to each part */
	double *placed;      /* n: bytes from each task to placed tasks */
	double bestcut;
	int64_t work;        /* task x part steps so far */
};

static double xw(const struct xsplit *x, int u, int v)
{
	return sw(x->s, u, v);
}

/* Task u into (sign 1) or out of (-1) part p: the other tasks' bytes to
 * p and to the placed tasks follow. */
static void xplace(struct xsplit *x, int u, int p, double sign)
{
	for (int v = 0; v < x->n; v++)
		if (v != u) {
			x->conn[(size_t)v * x->k + p] += sign * xw(x, u, v);
			x->placed[v] += sign * xw(x, u, v);
		}
}

/* A lower bound of the cut still to come from order[i..]: each task pays
 * at least its bytes to the placed tasks outside the part with room it is
 * most tied to. */
static double xbound(const struct xsplit *x, int i)
{
	double lb = 0;
	for (int j = i; j < x->n; j++) {
		int v = x->order[j];
		double most = 0;
		for (int p = 0; p < x->k; p++)
			if (x->room[p] && x->conn[(size_t)v * x->k + p] > most)
				most = x->conn[(size_t)v * x->k + p];
		lb += x->placed[v] - most;
	}
	return lb;
}

static void xsplit_rec(struct xsplit *x, int i, double cut)
{
	if (!(cut < x->bestcut * (1 - 1e-12)) || x->work >= EXACT_WORK)
		return;
	if (i == x->n) {
		x->bestcut = cut;
		memcpy(x->best, x->cur, sizeof(int) * (size_t)x->n);
		return;
	}
	x->work += (int64_t)x->n * (x->k + 1);
	int u = x->order[i];
	for (int p = 0; p < x->k; p++) {
		if (!x->room[p])
			continue;
		bool twin = false;   /* an earlier empty part of the same size */
		for (int q = 0; q < p && x->room[p] == x->size[p]; q++)
			twin |= x->size[q] == x->size[p] && x->room[q] == x->size[q];
		if (twin)
			continue;
		double now = cut + x->placed[u] - x->conn[(size_t)u * x->k + p];
		x->room[p]--;
		x->cur[u] = p;
		xplace(x, u, p, 1);
		if (now + xbound(x, i + 1) < x->bestcut * (1 - 1e-12))
			xsplit_rec(x, i + 1, now);
		xplace(x, u, p, -1);
		x->room[p]++;
	}
	x->cur[u] = -1;
}

/* Improves part (a split of T into parts of cnt[p] tasks) by the exact
 * search; ENOMEM or 0. */
static int exact_split(const struct subset *s, int k, const int *cnt,
		       int *part)
{
	int n = s->n;
	int *room = tp__malloc_array((size_t)k + 1, sizeof(int));
	int *order = tp__malloc_array((size_t)n + 1, sizeof(int));
	int *cur = tp__malloc_array((size_t)n + 1, sizeof(int));
	double *vol = tp__calloc((size_t)n + 1, sizeof(double));
	double *conn = tp__calloc((size_t)n * k + 1, sizeof(double));
	double *placed = tp__calloc((size_t)n + 1, sizeof(double));
	int rc = !room || !order || !cur || !vol || !conn || !placed ? TP_ENOMEM : 0;
	if (!rc) {
		memcpy(room, cnt, sizeof(int) * (size_t)k);
		for (int i = 0; i < n; i++) {
			order[i] = i;
			cur[i] = -1;
			for (int j = 0; j < n; j++)
				vol[i] += j != i ? sw(s, i, j) : 0;
		}
		/* heaviest first (insertion sort: n is small), ties by index */
		for (int i = 1; i < n; i++)
			for (int j = i; j > 0 && vol[order[j]] > vol[order[j - 1]]; j--) {
				int t = order[j];
				order[j] = order[j - 1];
				order[j - 1] = t;
			}
		struct xsplit x = { s, n, k, cnt, room, order, cur, part,
				    conn, placed, cut_of(s, part), 0 };
		xsplit_rec(&x, 0, 0);
	}
	free(room);
	free(order);
	free(cur);
	free(vol);
	free(conn);
	free(placed);
	return rc;
}

/* Split the subset into k parts of exactly cnt[p] tasks, few bytes between
 * them; part[i] for its i-th task.  exact: then the bounded exact search. */
int tp__node_split_small(const struct subset *s, int k, const int *cnt,
			 bool exact, int *part)
{
	int n = s->n;
	int *alt = tp__malloc_array((size_t)n + 1, sizeof(int));
	int *su = tp__malloc_array((size_t)n + 1, sizeof(int));
	int *sv = tp__malloc_array((size_t)n + 1, sizeof(int));
	char *locked = tp__malloc_array((size_t)n + 1, 1);
	if (!alt || !su || !sv || !locked) {
		free(alt);
		free(su);
		free(sv);
		free(locked);
		return TP_ENOMEM;
	}
	int at = 0;
	for (int p = 0; p < k; p++)
		for (int x = 0; x < cnt[p]; x++)
			part[at++] = p;
	struct kl_work kw = { locked, su, sv };
	kl_refine(s, k, part, &kw);
	grow_parts(s, k, cnt, alt);
	kl_refine(s, k, alt, &kw);
	if (cut_of(s, alt) < cut_of(s, part) - 1e-9 * (cut_of(s, part) + 1))
		memcpy(part, alt, sizeof(int) * (size_t)n);
	free(alt);
	free(su);
	free(sv);
	free(locked);
	return exact ? exact_split(s, k, cnt, part) : 0;
}

bool tp__node_lt(double a, double b)
{
	return a < b - 1e-9 * fmax(fabs(a), fabs(b));
}

static int cmp_i32_idx(const void *x, const void *y)
{
	const int64_t a = *(const int64_t *)x, b = *(const int64_t *)y;
	return a < b ? -1 : a > b;
}

/* Dense local traffic matrix (ntasks is small: at most the node's GPUs or
 * cores).  The diagonal holds each task's traffic to tasks that are not in
 * the list (on other nodes).  Keys are (global id << 32 | local index),
 * sorted for lookup. */
int tp__node_local_matrix(const tp_graph *g, const int32_t *tasks, int32_t nt,
			  double **out, tp_error *err)
{
	*out = tp__calloc((size_t)nt * (size_t)nt + 1, sizeof(double));
	int64_t *key = tp__malloc_array((size_t)nt + 1, sizeof(int64_t));
	if (!*out || !key) {
		free(*out);
		*out = NULL;
		free(key);
		return tp_error_set(err, TP_ENOMEM, "out of memory");
	}
	for (int32_t i = 0; i < nt; i++) {
		int32_t t = tasks ? tasks[i] : i;
		if (t < 0 || (g && t >= g->ntasks)) {
			free(key);
			free(*out);
			*out = NULL;
			return tp_error_set(err, TP_EINVAL,
					    "task %ld outside the pattern's 0..%ld",
					    (long)t, g ? (long)g->ntasks - 1 : 0L);
		}
		key[i] = ((int64_t)t << 32) | i;
	}
	qsort(key, (size_t)nt, sizeof *key, cmp_i32_idx);
	for (int32_t i = 1; i < nt; i++)
		if ((key[i] >> 32) == (key[i - 1] >> 32)) {
			long t = (long)(key[i] >> 32);
			free(key);
			free(*out);
			*out = NULL;
			return tp_error_set(err, TP_EINVAL, "task %ld listed twice", t);
		}
	if (g) {
		double *c = *out;
		for (int32_t i = 0; i < nt; i++) {
			int32_t t = tasks ? tasks[i] : i;
			for (int64_t e = g->xadj[t]; e < g->xadj[t + 1]; e++) {
				int64_t want = (int64_t)g->adjncy[e] << 32;
				int32_t lo = 0, hi = nt;
				while (lo < hi) {
					int32_t mid = lo + (hi - lo) / 2;
					if ((key[mid] & ~(int64_t)0xffffffff) < want)
						lo = mid + 1;
					else
						hi = mid;
				}
				if (lo < nt && (key[lo] >> 32) == g->adjncy[e]) {
					int32_t j = (int32_t)(key[lo] & 0xffffffff);
					c[(size_t)i * nt + j] = tp__graph_w(g, e);
				} else {
					c[(size_t)i * nt + i] += tp__graph_w(g, e);
				}
			}
		}
	}
	free(key);
	return 0;
}
