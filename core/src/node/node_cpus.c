/* topoplace — sockets and cores inside one node: MAGC phase 2 with the
 * MIMS objective of Wu et al.
 *
 * Phase 2: the node's tasks go to its sockets in balanced blocks of
 * consecutive local ranks; pairs are then swapped while that lowers the
 * largest message between two sockets (MIMS), judged after the swap with the
 * total inter-socket bytes as tie-break.  Each task takes (cores / tasks)
 * consecutive cores of its socket.  The callers pass the CPU + GPU traffic,
 * so that tasks with heavy GPU traffic share a socket and phase 3 can put
 * their GPUs there (MAGC uses the CPU pattern alone here).
 */
#include <stdlib.h>
#include <string.h>

#include "util/util_internal.h"
#include "node/node_internal.h"
#include "node/node_place.h"

/* ---- phase 2: sockets and cores ---- */

/* The local edges (i < j, w > 0), so that MIMS costs O(edges), not
 * O(tasks^2). */
struct ledges {
	int64_t m;
	int32_t *u, *v;
	double *w;
};

static void ledges_free(struct ledges *e)
{
	free(e->u);
	free(e->v);
	free(e->w);
	memset(e, 0, sizeof *e);
}

static int ledges_build(const double *c, int32_t nt, struct ledges *e,
			tp_error *err)
{
	memset(e, 0, sizeof *e);
	int64_t m = 0;
	for (int32_t i = 0; i < nt; i++)
		for (int32_t j = i + 1; j < nt; j++)
			m += c[(size_t)i * nt + j] > 0;
	e->u = tp__malloc_array((size_t)m + 1, sizeof(int32_t));
	e->v = tp__malloc_array((size_t)m + 1, sizeof(int32_t));
	e->w = tp__malloc_array((size_t)m + 1, sizeof(double));
	if (!e->u || !e->v || !e->w) {
		ledges_free(e);
		return tp_error_set(err, TP_ENOMEM, "out of memory");
	}
	for (int32_t i = 0; i < nt; i++)
		for (int32_t j = i + 1; j < nt; j++)
			if (c[(size_t)i * nt + j] > 0) {
				e->u[e->m] = i;
				e->v[e->m] = j;
				e->w[e->m] = c[(size_t)i * nt + j];
				e->m++;
			}
	return 0;
}

/* MIMS and total inter-socket bytes of an assignment. */
static void mims_of(const struct ledges *e, const int *sock, double *mims,
		    double *cut)
{
	*mims = 0;
	*cut = 0;
	for (int64_t k = 0; k < e->m; k++)
		if (sock[e->u[k]] != sock[e->v[k]]) {
			*cut += e->w[k];
			if (e->w[k] > *mims)
				*mims = e->w[k];
		}
}

/* Pair swaps on the MIMS edge, judged by the true MIMS afterwards (Wu et
 * al.'s fine tuning); *cur and *cut receive the result's MIMS and total
 * inter-socket bytes.  swap: false leaves the assignment as it is. */
static void mims_swaps(const struct ledges *ep, int32_t ntasks, bool swap,
		       int *task_package, double *cur_out, double *cut_out)
{
	const struct ledges e = *ep;
	double cur, cut;
	mims_of(&e, task_package, &cur, &cut);
	for (int64_t it = 0; swap && it < (int64_t)ntasks * ntasks; it++) {
		/* the MIMS edge (the first in (u, v) order) */
		int32_t u = -1, v = -1;
		for (int64_t k = 0; k < e.m && u < 0 && cur > 0; k++)
			if (task_package[e.u[k]] != task_package[e.v[k]] &&
			    e.w[k] == cur) {
				u = e.u[k];
				v = e.v[k];
			}
		if (u < 0)
			break;
		int32_t ba = -1, bb = -1;
		double bm = cur, bcut = cut;
		for (int side = 0; side < 2; side++) {
			int32_t x = side ? v : u;          /* moves */
			int32_t y = side ? u : v;          /* to y's socket */
			for (int32_t w = 0; w < ntasks; w++) {
				if (w == y || task_package[w] != task_package[y])
					continue;
				int sx = task_package[x];
				task_package[x] = task_package[w];
				task_package[w] = sx;
				double m2, c2;
				mims_of(&e, task_package, &m2, &c2);
				task_package[w] = task_package[x];
				task_package[x] = sx;
				if (tp__node_lt(m2, bm) || (!tp__node_lt(bm, m2) && tp__node_lt(c2, bcut))) {
					ba = x;
					bb = w;
					bm = m2;
					bcut = c2;
				}
			}
		}
		if (ba < 0)
			break;
		int sx = task_package[ba];
		task_package[ba] = task_package[bb];
		task_package[bb] = sx;
		cur = bm;
		cut = bcut;
	}
	*cur_out = cur;
	*cut_out = cut;
}

/* A second start for phase 2: the same number of tasks on every
 * socket, split by the fewest bytes between sockets (split_small: what
 * TreeMatch's bisection of a node does), then the same swaps.  Pair swaps
 * from consecutive ranks cannot leave a split that cuts every heavy row of
 * a stencil; this one does not make it.  The better of the two, by MIMS
 * then inter-socket bytes, is kept in task_package (ties keep the block
 * start). */
static int bisection_start(const double *c, const struct ledges *e,
			   int32_t ntasks, int S, int *task_package,
			   double *cur, double *cut)
{
	if (S < 2 || ntasks < 3)
		return 0;
	int *cnt = tp__calloc((size_t)S, sizeof(int));
	int *sock = tp__malloc_array((size_t)S, sizeof(int));
	int *part = tp__malloc_array((size_t)ntasks, sizeof(int));
	int32_t *T = tp__malloc_array((size_t)ntasks, sizeof(int32_t));
	int rc = !cnt || !sock || !part || !T ? TP_ENOMEM : 0;
	int k = 0;
	for (int32_t i = 0; !rc && i < ntasks; i++) {
		cnt[task_package[i]]++;
		T[i] = i;
	}
	for (int s = 0; !rc && s < S; s++)
		if (cnt[s])
			sock[k++] = s;
	for (int p = 0; !rc && p < k; p++)
		cnt[p] = cnt[sock[p]];   /* the used sockets' counts, in order */
	if (!rc && k > 1)
		rc = tp__node_split_small(&(struct subset){ c, ntasks, T, ntasks }, k, cnt,
					  false, part);
	if (!rc && k > 1) {
		for (int32_t i = 0; i < ntasks; i++)
			part[i] = sock[part[i]];
		double m2, c2;
		mims_swaps(e, ntasks, true, part, &m2, &c2);
		if (tp__node_lt(m2, *cur) || (!tp__node_lt(*cur, m2) && tp__node_lt(c2, *cut))) {
			memcpy(task_package, part, sizeof(int) * (size_t)ntasks);
			*cur = m2;
			*cut = c2;
		}
	}
	free(cnt);
	free(sock);
	free(part);
	free(T);
	return rc;
}

/* The allowed cores as a sorted list without repeats (all of the node's
 * when cores is NULL). */
static int core_list(const tp_node *n, const int *cores, int ncores,
		     int **out, int *nout, tp_error *err)
{
	int cnt = cores ? ncores : n->ncores;
	if (cnt < 0)
		return tp_error_set(err, TP_EINVAL, "negative core count");
	char *seen = tp__calloc((size_t)n->ncores + 1, 1);
	int *l = tp__malloc_array((size_t)cnt + 1, sizeof(int));
	if (!seen || !l) {
		free(seen);
		free(l);
		return tp_error_set(err, TP_ENOMEM, "out of memory");
	}
	for (int i = 0; i < cnt; i++) {
		int c = cores ? cores[i] : i;
		if (c < 0 || c >= n->ncores) {
			free(seen);
			free(l);
			return tp_error_set(err, TP_EINVAL, "core %d outside %s's 0..%d",
					    c, n->source, n->ncores - 1);
		}
		seen[c] = 1;
	}
	int k = 0;
	for (int c = 0; c < n->ncores; c++)
		if (seen[c])
			l[k++] = c;
	free(seen);
	*out = l;
	*nout = k;
	return 0;
}

int tp_node_place_cpus(const tp_node_tasks *on, int cores_per_task,
		       tp_cpu_slots *slots, tp_error *err)
{
	return tp_node_place_cpus_within(on, NULL, 0, cores_per_task, slots, err);
}

int tp_node_place_cpus_within(const tp_node_tasks *on, const int *cores,
			      int ncores, int cores_per_task,
			      tp_cpu_slots *slots, tp_error *err)
{
	const tp_node *n = on->node;
	const tp_graph *g = on->g;
	const int32_t *tasks = on->tasks;
	int32_t ntasks = on->ntasks;
	int *task_package = slots->task_package, *task_core = slots->task_core;
	if (cores_per_task < 1)
		return tp_error_set(err, TP_EINVAL, "cores per task must be at least 1");
	int *list = NULL, nl = 0;
	int rc = core_list(n, cores, ncores, &list, &nl, err);
	if (rc)
		return rc;
	int S = n->npackages;
	int *cap = tp__calloc((size_t)S + 1, sizeof(int));
	int *next = tp__calloc((size_t)S + 1, sizeof(int));
	if (!cap || !next) {
		free(cap);
		free(next);
		free(list);
		return tp_error_set(err, TP_ENOMEM, "out of memory");
	}
	for (int k = 0; k < nl; k++)
		cap[n->core_pkg[list[k]]]++;
	int64_t nslots = 0;
	for (int s = 0; s < S; s++) {
		cap[s] /= cores_per_task;
		nslots += cap[s];
	}
	struct ledges e;
	memset(&e, 0, sizeof e);
	if (ntasks >= 0 && ntasks > nslots &&
	    (int64_t)ntasks * cores_per_task <= nl) {
		/* tasks wider than a socket: consecutive allowed cores */
		for (int32_t i = 0; i < ntasks; i++) {
			task_core[i] = i * cores_per_task;
			task_package[i] = n->core_pkg[list[task_core[i]]];
		}
		slots->mims = 0;
		if (g && ntasks > 1) {
			double *c = NULL;
			rc = tp__node_local_matrix(g, tasks, ntasks, &c, err);
			if (!rc)
				rc = ledges_build(c, ntasks, &e, err);
			free(c);
			double cut;
			if (!rc)
				mims_of(&e, task_package, &slots->mims, &cut);
		}
		goto out;
	}
	if (ntasks < 0 || ntasks > nslots) {
		if (cores)
			rc = tp_error_set(err, TP_EINVAL,
					  "%ld tasks x %d cores per task do not fit in "
					  "the %d allowed cores of %s", (long)ntasks,
					  cores_per_task, nl, n->source);
		else
			rc = tp_error_set(err, TP_EINVAL,
					  "%ld tasks x %d cores per task do not fit in "
					  "%s's %d cores (%d sockets)", (long)ntasks,
					  cores_per_task, n->source, n->ncores, S);
		goto out;
	}
	double *c = NULL;
	rc = tp__node_local_matrix(g, tasks, ntasks, &c, err);
	if (!rc)
		rc = ledges_build(c, ntasks, &e, err);
	if (rc) {
		free(c);
		goto out;
	}
	/* balanced block start: socket s gets a share proportional to its
	 * capacity, consecutive local ranks together */
	int32_t t = 0;
	int64_t left = ntasks;
	int64_t room = nslots;
	for (int s = 0; s < S; s++) {
		int64_t take = room > 0 ? (left * cap[s] + room - 1) / room : 0;
		if (take > cap[s])
			take = cap[s];
		if (take > left)
			take = left;
		for (int64_t k = 0; k < take; k++)
			task_package[t++] = s;
		left -= take;
		room -= cap[s];
	}
	double cur, cut;
	mims_swaps(&e, ntasks, g != NULL, task_package, &cur, &cut);
	if (g && (rc = bisection_start(c, &e, ntasks, S, task_package, &cur, &cut))) {
		rc = tp_error_set(err, rc, "out of memory");
		free(c);
		goto out;
	}
	free(c);
	/* cores: each socket's tasks in local-rank order take consecutive
	 * allowed cores of the socket (positions in the list) */
	for (int32_t i = 0; i < ntasks; i++) {
		int s = task_package[i];
		int seen = 0, first = -1;
		for (int k = 0; k < nl && first < 0; k++)
			if (n->core_pkg[list[k]] == s &&
			    seen++ == next[s] * cores_per_task)
				first = k;
		next[s]++;
		task_core[i] = first;
	}
	slots->mims = cur;
out:
	ledges_free(&e);
	free(cap);
	free(next);
	free(list);
	return rc;
}

int tp_node_align_cpus(const tp_node_tasks *on, const int *gpus,
		       int gpus_per_task, tp_cpu_slots *slots, tp_error *err)
{
	const tp_node *n = on->node;
	int32_t ntasks = on->ntasks;
	int *task_package = slots->task_package, *task_core = slots->task_core;
	if (gpus_per_task < 1)
		return tp_error_set(err, TP_EINVAL, "GPUs per task must be at least 1");
	for (int64_t i = 0; i < (int64_t)ntasks * gpus_per_task; i++)
		if (gpus[i] < 0 || gpus[i] >= n->ngpus)
			return tp_error_set(err, TP_EINVAL, "GPU %d outside %s's 0..%d",
					    gpus[i], n->source, n->ngpus - 1);
	double *c = NULL;
	struct ledges e;
	int rc = tp__node_local_matrix(on->g, on->tasks, ntasks, &c, err);
	if (!rc)
		rc = ledges_build(c, ntasks, &e, err);
	free(c);
	if (rc)
		return rc;
	double cur, cut;
	mims_of(&e, task_package, &cur, &cut);
	/* whole sockets first: swapping one pair of tasks may split a heavy
	 * pair, trading the two sockets' names never does */
	for (int a = 0; a < n->npackages; a++)
		for (int b = a + 1; b < n->npackages; b++) {
			int na = 0, nb = 0, now = 0, then = 0;
			for (int32_t i = 0; i < ntasks; i++) {
				int gs = n->gpu[gpus[(size_t)i * gpus_per_task]].package;
				if (task_package[i] == a) {
					na++;
					now += gs == a;
					then += gs == b;
				} else if (task_package[i] == b) {
					nb++;
					now += gs == b;
					then += gs == a;
				}
			}
			if (na != nb || then <= now)
				continue;
			/* the k-th task of a and the k-th task of b trade slots */
			int32_t i = 0, j = 0;
			for (int k = 0; k < na; k++, i++, j++) {
				while (task_package[i] != a)
					i++;
				while (task_package[j] != b)
					j++;
				int x = task_core[i];
				task_core[i] = task_core[j];
				task_core[j] = x;
			}
			for (int32_t q = 0; q < ntasks; q++)
				if (task_package[q] == a || task_package[q] == b)
					task_package[q] = a + b - task_package[q];
		}
	bool moved = true;
	while (moved) {
		moved = false;
		for (int32_t i = 0; i < ntasks && !moved; i++) {
			int gi = n->gpu[gpus[(size_t)i * gpus_per_task]].package;
			if (gi < 0 || gi == task_package[i])
				continue;
			for (int32_t j = 0; j < ntasks && !moved; j++) {
				int gj = n->gpu[gpus[(size_t)j * gpus_per_task]].package;
				if (j == i || task_package[j] != gi ||
				    gj != task_package[i])
					continue;
				int s = task_package[i];
				task_package[i] = task_package[j];
				task_package[j] = s;
				double m2, c2;
				mims_of(&e, task_package, &m2, &c2);
				if (tp__node_lt(cur, m2)) {         /* would raise MIMS: undo */
					task_package[j] = task_package[i];
					task_package[i] = s;
					continue;
				}
				int k = task_core[i];
				task_core[i] = task_core[j];
				task_core[j] = k;
				cur = m2;
				moved = true;
			}
		}
	}
	slots->mims = cur;
	ledges_free(&e);
	return 0;
}
