/* topoplace — graph mapping, recursive bipartitioning: the task graph
 * split with bisect.c, paired with median cuts of the nodes, the halves
 * exchanged when that costs less (tp_graphmap_bipartition). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "map/metis_load.h"
#include "map/bisect.h"
#include "map/graphmap_parts.h"

/* ------------------------------------------------------------------------ */
/* Recursive bipartitioning                                                  */

/* The recursion goes level by level.  A job is one split: its tasks
 * T[t0 .. t0+nT) go to its nodes N[n0 .. n0+nN).  The splits of a level are
 * made at once, on the threads; then, in job order, each split's halves are
 * paired with the halves of its nodes, against its outside neighbours'
 * positions: where the jobs before it in this level put them, else where
 * the level before did.  A job so sees its earlier siblings' choices, as the
 * depth-first recursion did, and the result is the same on any number of
 * threads. */
typedef struct bp_job {
	int32_t t0, nT, n0, nN;
} bp_job;

#define BP_THREADED_TASKS 8192   /* the splits run on threads from here */

/* A job's split, between the parallel part and the pairing. */
typedef struct bp_cut {
	bool split;              /* part[] holds a split of its tasks */
	bool can_swap;           /* either half fits either half of the nodes */
	int32_t cut;             /* its nodes N[0..cut) and N[cut..nN) */
	double c0[TP_MAX_DIMS], c1[TP_MAX_DIMS];   /* their centroids */
} bp_cut;

typedef struct bp {
	const gm *c;
	int32_t *map;
	int32_t *T, *N;     /* tasks and nodes, each job's a range */
	int32_t *local;     /* task -> its index in its job's range */
	int32_t *owner;     /* task -> its job in this level */
	int32_t *part;      /* task at T[i] -> its half (0 or 1), this level */
	bp_cut *cuts;       /* per job */
	double *pt;         /* task -> provisional position (nt x nd, shifted) */
	double *pt_next;    /* the same, for the next level */
	int32_t *tscratch;  /* nt */
	const bp_job *jobs; /* this level's */
	bp_job *next;       /* two per job: the halves */
	int *rc;            /* per job */
	uint64_t seed;
} bp;

typedef struct node_sort_ctx {
	const int *sc;
	int nd, d;
} node_sort_ctx;

static int cmp_node_dim(const void *x, const void *y, void *arg)
{
	const node_sort_ctx *k = arg;
	int32_t i = *(const int32_t *)x, j = *(const int32_t *)y;
	const int *a = &k->sc[(size_t)i * (size_t)k->nd];
	const int *b = &k->sc[(size_t)j * (size_t)k->nd];
	if (a[k->d] != b[k->d])
		return a[k->d] < b[k->d] ? -1 : 1;
	for (int d = 0; d < k->nd; d++)
		if (a[d] != b[d])
			return a[d] < b[d] ? -1 : 1;
	return i < j ? -1 : i > j;
}

static void centroid(const gm *c, const int32_t *N, int32_t n, double *out)
{
	for (int d = 0; d < c->nd; d++)
		out[d] = 0.0;
	for (int32_t k = 0; k < n; k++)
		for (int d = 0; d < c->nd; d++)
			out[d] += c->sc[(size_t)N[k] * (size_t)c->nd + (size_t)d];
	for (int d = 0; d < c->nd; d++)
		out[d] /= n > 0 ? n : 1;
}

static double l1(const double *x, const double *y, int nd)
{
	double s = 0.0;
	for (int d = 0; d < nd; d++)
		s += fabs(x[d] - y[d]);
	return s;
}

/* With task coordinates: each task's along the longest extent of T's, so
 * that the split also tries a straight cut across them (NULL without
 * coordinates, or out of memory). */
static double *tasks_key(const struct tp_graph *g, const int32_t *T, int32_t nT)
{
	const double *x = g->coord_dims > 0 ? tp_graph_coords(g) : NULL;
	if (!x)
		return NULL;
	int nd = g->coord_dims, sd = 0;
	int use = nd < TP_MAX_DIMS ? nd : TP_MAX_DIMS;
	double lo[TP_MAX_DIMS], hi[TP_MAX_DIMS], ext = -1.0;
	for (int d = 0; d < use; d++) {
		lo[d] = HUGE_VAL;
		hi[d] = -HUGE_VAL;
	}
	for (int32_t i = 0; i < nT; i++)
		for (int d = 0; d < use; d++) {
			double v = x[(size_t)T[i] * (size_t)nd + (size_t)d];
			lo[d] = v < lo[d] ? v : lo[d];
			hi[d] = v > hi[d] ? v : hi[d];
		}
	for (int d = 0; d < use; d++)
		if (hi[d] - lo[d] > ext) {
			ext = hi[d] - lo[d];
			sd = d;
		}
	double *key = tp__malloc_array((size_t)nT + 1, sizeof(double));
	for (int32_t i = 0; key && i < nT; i++)
		key[i] = x[(size_t)T[i] * (size_t)nd + (size_t)sd];
	return key;
}

/* Split T into part[] with exactly n0 tasks labelled 0.  Returns 0 or a
 * negative code. */
static int split_tasks(const bp *b, const int32_t *T, int32_t nT, int32_t n0,
		       int32_t *part)
{
	const struct tp_graph *g = b->c->g;
	int64_t ne;
	double W;
	struct tp__metis_sub sub = { g, T, nT, b->local };
	tp__metis_sub_count(&sub, &ne, &W);
	for (int32_t i = 0; i < nT; i++)
		part[i] = i < n0 ? 0 : 1;
	if (ne == 0 || nT < 3)
		return 0;
	if (ne > INT32_MAX / 2)
		return TP_ENOMEM;
	if (past(b->c, (double)ne * TP__METIS_US_PER_ENTRY / 1e3))
		return TP_ETIME;
	idx_t *xadj = tp__malloc_array((size_t)nT + 1, sizeof(idx_t));
	idx_t *adj = tp__malloc_array((size_t)ne, sizeof(idx_t));
	idx_t *wgt = tp__malloc_array((size_t)ne, sizeof(idx_t));
	double *key = tasks_key(g, T, nT);
	int rc = TP_ENOMEM;
	if (xadj && adj && wgt && (key || g->coord_dims == 0)) {
		tp__metis_sub_fill(&sub, W, xadj, adj, wgt);
		rc = tp__bisect(nT, xadj, adj, wgt, key, n0, b->seed, part);
	}
	free(key);
	free(xadj);
	free(adj);
	free(wgt);
	return rc;
}

/* The node cut of a job: its nodes sorted along the longest extent of their
 * shifted coordinates, cut where the slots halve; *S0 and *S the slots
 * before the cut and in all. */
static int32_t node_cut(const bp *b, int32_t *N, int32_t nN, int64_t *S0,
			int64_t *S)
{
	const gm *c = b->c;
	int nd = c->nd;
	int lo[TP_MAX_DIMS], hi[TP_MAX_DIMS], sd = 0, ext = -1;
	for (int d = 0; d < nd; d++) {
		lo[d] = INT32_MAX;
		hi[d] = INT32_MIN;
	}
	*S = 0;
	for (int32_t k = 0; k < nN; k++) {
		const int *x = &c->sc[(size_t)N[k] * (size_t)nd];
		for (int d = 0; d < nd; d++) {
			if (x[d] < lo[d])
				lo[d] = x[d];
			if (x[d] > hi[d])
				hi[d] = x[d];
		}
		*S += c->a->slots[N[k]];
	}
	for (int d = 0; d < nd; d++)
		if (hi[d] - lo[d] > ext) {
			ext = hi[d] - lo[d];
			sd = d;
		}
	node_sort_ctx nctx = { c->sc, nd, sd };
	qsort_r(N, (size_t)nN, sizeof(int32_t), cmp_node_dim, &nctx);
	int32_t cut = 1;
	int64_t cum = 0, bestdiff = INT64_MAX;
	*S0 = 0;
	for (int32_t k = 0; k + 1 < nN; k++) {
		cum += c->a->slots[N[k]];
		int64_t diff = 2 * cum - *S;
		if (diff < 0)
			diff = -diff;
		if (diff < bestdiff) {
			bestdiff = diff;
			cut = k + 1;
			*S0 = cum;
		}
	}
	return cut;
}

/* Job j's pairing, direct (part 0 to the first half of the nodes) or
 * exchanged: whichever puts the parts nearer their outside neighbours. */
static bool exchange_better(const bp *b, int32_t j, const int32_t *T,
			    int32_t nT, const int32_t *part, const double *c0,
			    const double *c1)
{
	const struct tp_graph *g = b->c->g;
	int nd = b->c->nd;
	double direct = 0.0, exch = 0.0;
	for (int32_t i = 0; i < nT; i++) {
		const double *mine = part[i] == 0 ? c0 : c1;
		const double *other = part[i] == 0 ? c1 : c0;
		for (int64_t e = g->xadj[T[i]]; e < g->xadj[T[i] + 1]; e++) {
			int32_t u = g->adjncy[e];
			if (b->owner[u] == j)
				continue;
			const double *pu = b->owner[u] < j
				? &b->pt_next[(size_t)u * (size_t)nd]
				: &b->pt[(size_t)u * (size_t)nd];
			direct += tp__graph_w(g, e) * l1(mine, pu, nd);
			exch += tp__graph_w(g, e) * l1(other, pu, nd);
		}
	}
	return exch < direct;
}

/* Job j's split (on any thread): a job on one node is placed there; any
 * other gets its node cut and its tasks' halves in b->part. */
static int bp_split(bp *b, int32_t j)
{
	const gm *c = b->c;
	const bp_job *job = &b->jobs[j];
	int32_t *T = b->T + job->t0, *N = b->N + job->n0, nT = job->nT, nN = job->nN;
	int32_t *part = b->part + job->t0;
	size_t nd = (size_t)c->nd;
	bp_cut *k = &b->cuts[j];
	k->split = false;
	if (nN == 1) {
		/* placed: its position, in both levels' arrays from now on */
		for (int32_t i = 0; i < nT; i++) {
			size_t at = (size_t)T[i] * nd;
			b->map[T[i]] = N[0];
			memcpy(&b->pt_next[at], &b->pt[at], sizeof(double) * nd);
		}
		return 0;
	}
	int64_t S0, S;
	k->cut = node_cut(b, N, nN, &S0, &S);
	int64_t S1 = S - S0;
	int64_t t0 = nT == S ? S0 : llround((double)nT * (double)S0 / (double)S);
	if (t0 > S0)
		t0 = S0;
	if (t0 > nT)
		t0 = nT;
	if (nT - t0 > S1)
		t0 = nT - S1;
	if (t0 < 0)
		t0 = 0;
	centroid(c, N, k->cut, k->c0);
	centroid(c, N + k->cut, nN - k->cut, k->c1);
	k->split = true;
	k->can_swap = t0 > 0 && t0 < nT && nT - t0 <= S0 && t0 <= S1;
	if (t0 == 0 || t0 == nT) {
		for (int32_t i = 0; i < nT; i++)
			part[i] = t0 == 0 ? 1 : 0;
		return 0;
	}
	return split_tasks(b, T, nT, (int32_t)t0, part);
}

/* Job j's pairing (in job order): its halves, the next level's jobs, in
 * b->next[2 * j] and [2 * j + 1] (nT 0 when there is none), and their
 * positions in pt_next. */
static void bp_pair(bp *b, int32_t j)
{
	const bp_job *job = &b->jobs[j];
	const bp_cut *k = &b->cuts[j];
	bp_job *out = &b->next[2 * (size_t)j];
	memset(out, 0, 2 * sizeof *out);
	if (!k->split)
		return;
	int32_t *T = b->T + job->t0, *part = b->part + job->t0, nT = job->nT;
	size_t nd = (size_t)b->c->nd;
	if (k->can_swap && exchange_better(b, j, T, nT, part, k->c0, k->c1))
		for (int32_t i = 0; i < nT; i++)
			part[i] = 1 - part[i];
	/* stable partition of T */
	int32_t n0 = 0, k1 = 0;
	int32_t *scratch = b->tscratch + job->t0;
	for (int32_t i = 0; i < nT; i++)
		n0 += part[i] == 0;
	for (int32_t i = 0; i < nT; i++) {
		int32_t t = T[i];
		memcpy(&b->pt_next[(size_t)t * nd], part[i] == 0 ? k->c0 : k->c1,
		       sizeof(double) * nd);
		if (part[i] == 0)
			scratch[i - k1] = t;
		else
			scratch[n0 + k1++] = t;
	}
	memcpy(T, scratch, sizeof(int32_t) * (size_t)nT);
	out[0] = (bp_job){ job->t0, n0, job->n0, k->cut };
	out[1] = (bp_job){ job->t0 + n0, nT - n0, job->n0 + k->cut, job->nN - k->cut };
}

static void bp_split_run(void *arg, int32_t j)
{
	bp *b = arg;
	b->rc[j] = bp_split(b, j);
}

int tp__bipart_run(const gm *c, int seed, int threads, int32_t *map)
{
	bp b;
	memset(&b, 0, sizeof b);
	b.c = c;
	b.map = map;
	b.seed = (uint64_t)seed;
	size_t nt = (size_t)c->nt + 1, nn = (size_t)c->nn + 1;
	size_t nd = (size_t)c->nd;
	b.T = tp__malloc_array(nt, sizeof(int32_t));
	b.N = tp__malloc_array(nn, sizeof(int32_t));
	b.local = tp__malloc_array(nt, sizeof(int32_t));
	b.owner = tp__malloc_array(nt, sizeof(int32_t));
	b.part = tp__malloc_array(nt, sizeof(int32_t));
	b.cuts = tp__malloc_array(nn, sizeof(bp_cut));
	b.pt = tp__malloc_array(nt * nd, sizeof(double));
	b.pt_next = tp__malloc_array(nt * nd, sizeof(double));
	b.tscratch = tp__malloc_array(nt, sizeof(int32_t));
	/* a level has at most one job per node */
	bp_job *jobs = tp__malloc_array(nn, sizeof(bp_job));
	b.next = tp__malloc_array(2 * nn, sizeof(bp_job));
	b.rc = tp__malloc_array(nn, sizeof(int));
	int rc = 0;
	if (!b.T || !b.N || !b.local || !b.owner || !b.part || !b.cuts || !b.pt || !b.pt_next || !b.tscratch ||
	    !jobs || !b.next || !b.rc) {
		rc = TP_ENOMEM;
		goto out;
	}
	double cen[TP_MAX_DIMS];
	for (int32_t i = 0; i < c->nn; i++)
		b.N[i] = i;
	centroid(c, b.N, c->nn, cen);
	for (int32_t t = 0; t < c->nt; t++) {
		b.local[t] = -1;
		b.owner[t] = -1;
		b.T[t] = t;
		memcpy(&b.pt[(size_t)t * nd], cen, sizeof(double) * nd);
	}
	memcpy(b.pt_next, b.pt, sizeof(double) * nd * (size_t)c->nt);
	int32_t njobs = 1;
	jobs[0] = (bp_job){ 0, c->nt, 0, c->nn };
	/* a level of a small graph takes less than starting a thread (tens of
	 * microseconds, milliseconds on a busy node) */
	if (c->nt < BP_THREADED_TASKS)
		threads = 1;
	while (njobs > 0 && !rc) {
		b.jobs = jobs;
		for (int32_t j = 0; j < njobs; j++)
			for (int32_t i = 0; i < jobs[j].nT; i++) {
				b.local[b.T[jobs[j].t0 + i]] = i;
				b.owner[b.T[jobs[j].t0 + i]] = j;
			}
		tp__parallel_for(njobs, threads, bp_split_run, &b);
		/* the first error by job order, the same on any thread count */
		for (int32_t j = 0; j < njobs && !rc; j++)
			rc = b.rc[j];
		for (int32_t j = 0; j < njobs && !rc; j++)
			bp_pair(&b, j);
		int32_t k = 0;
		for (int32_t j = 0; j < 2 * njobs; j++)
			if (b.next[j].nT > 0)
				jobs[k++] = b.next[j];
		njobs = k;
		double *t = b.pt;
		b.pt = b.pt_next;
		b.pt_next = t;
	}
out:
	free(b.T);
	free(b.N);
	free(b.local);
	free(b.owner);
	free(b.part);
	free(b.cuts);
	free(b.pt);
	free(b.pt_next);
	free(b.tscratch);
	free(jobs);
	free(b.next);
	free(b.rc);
	return rc;
}
