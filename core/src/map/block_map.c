/* topoplace — mapping on a block network (policy auto's and graph's
 * candidate "blocks"): tasks split among the job's blocks by a min-cut
 * partition (METIS) holding each block's share exactly, then among each
 * block's nodes.  The blocks are net/block.c's, asked through the
 * machine's queries. */
#include <limits.h>
#include <metis.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <topoplace/alloc.h>
#include <topoplace/pattern.h>
#include "util/util_internal.h"
#include "map/metis_load.h"
#include "map/metis_split.h"
#include "net/machine_internal.h"
#include "input/alloc_internal.h"
#include "map/block_map.h"

#define TP_BLOCK_NODES_MAX 4096      /* nodes of one block split by METIS */

/* ---- mapping: tasks to blocks, then to the nodes of each block ----
 *
 * Recursive bisection cuts where the slots balance, which on a block network
 * falls inside a block whenever the job's share of the blocks is uneven; a
 * tensor-parallel group then straddles the network although a whole block
 * could hold it.  Here the tasks are first split among the job's blocks (in
 * Slurm's order) by a min-cut partition (METIS recursive bisection: parts
 * next to each other in the order stay next to each other) whose parts hold
 * each block's share of the tasks exactly, then the tasks of each block
 * among its nodes the same way. */

struct unit_split {
	const tp_graph *g;
	int32_t *local;         /* task -> index in the current set, -1 */
	int seed;
	struct tp__metis metis; /* linked, or loaded by the plugin */
};

/* Tasks T[0..nT) into parts 0..k-1 of exactly want[p] tasks each (sum nT);
 * where METIS fails the parts stay in Slurm's order. */
static int split_exact(struct unit_split *u, const int32_t *T, int32_t nT,
		       const int64_t *want, int k, idx_t *part)
{
	for (int32_t i = 0; i < nT; i++)
		u->local[T[i]] = i;
	struct tp__metis_sub sub = { u->g, T, nT, u->local };
	struct tp__metis_split s = { &u->metis, u->seed, 0, METIS_OK };
	int rc = tp__metis_split_exact(&s, &sub, want, k, part);
	for (int32_t i = 0; i < nT; i++)
		u->local[T[i]] = -1;
	return rc;
}

/* n tasks over units of cap[] slots: as Slurm fills them when they all fit
 * (every unit full), else in proportion, never above a unit's slots. */
static void shares(int64_t n, const int64_t *cap, int k, int64_t *want)
{
	int64_t total = 0, given = 0;
	for (int p = 0; p < k; p++)
		total += cap[p];
	for (int p = 0; p < k; p++) {
		want[p] = total ? n * cap[p] / total : 0;
		given += want[p];
	}
	for (int p = 0; given < n; p = (p + 1) % k)
		if (want[p] < cap[p]) {
			want[p]++;
			given++;
		}
}

int tp__block_map(const tp_graph *g, const tp_alloc *a, int seed, int32_t *map,
		  tp_error *err)
{
	/* only the block network has blocks (a block file without blocks is
	 * refused when it is built) */
	const int32_t nblocks = tp_machine_block_count(a->m);
	if (nblocks <= 0)
		return tp_error_set(err, TP_ENOTSUP, "blocks: not a block network");
	int32_t nn = a->nnodes, nt = g->ntasks;
	if (nt > a->total_slots)
		return tp_error_set(err, TP_EINVAL, "blocks: %ld tasks, %lld slots",
				    (long)nt, (long long)a->total_slots);
	/* the job's blocks in Slurm's order, each with its nodes in order */
	int32_t *bidx = tp__malloc_array((size_t)nblocks, sizeof(int32_t));
	int32_t *order = tp__malloc_array((size_t)nn + 1, sizeof(int32_t));
	int32_t *ustart = tp__calloc((size_t)nn + 2, sizeof(int32_t));
	int64_t *cap = tp__calloc((size_t)nn + 1, sizeof(int64_t));
	int64_t *want = tp__calloc((size_t)nn + 1, sizeof(int64_t));
	int32_t *T = tp__malloc_array((size_t)nt + 1, sizeof(int32_t));
	int32_t *T2 = tp__malloc_array((size_t)nt + 1, sizeof(int32_t));
	idx_t *part = tp__malloc_array((size_t)nt + 1, sizeof(idx_t));
	struct unit_split u = { g, tp__malloc_array((size_t)nt + 1, sizeof(int32_t)),
				seed, { 0 } };
	int rc = 0;
	bool metis_open = false;
	if (!bidx || !order || !ustart || !cap || !want || !T || !T2 || !part ||
	    !u.local) {
		rc = TP_ENOMEM;
		goto out;
	}
	/* the plugin on a node without libmetis5: TP_ENOMETIS, auto goes on */
	if ((rc = tp__metis_open(&u.metis, err)))
		goto out;
	metis_open = true;
	for (int32_t b = 0; b < nblocks; b++)
		bidx[b] = -1;
	int nb = 0;
	for (int32_t i = 0; i < nn; i++) {
		int32_t b = tp_machine_node_block(a->m, a->node[i]);
		if (bidx[b] < 0)
			bidx[b] = nb++;
		ustart[bidx[b] + 1]++;
		cap[bidx[b]] += a->slots[i];
	}
	for (int q = 0; q < nb; q++)
		ustart[q + 1] += ustart[q];
	{
		int32_t *fill = tp__malloc_array((size_t)nb + 1, sizeof(int32_t));
		if (!fill) {
			rc = TP_ENOMEM;
			goto out;
		}
		memcpy(fill, ustart, sizeof(int32_t) * (size_t)nb);
		for (int32_t i = 0; i < nn; i++)
			order[fill[bidx[tp_machine_node_block(a->m, a->node[i])]]++] = i;
		free(fill);
	}
	for (int32_t t = 0; t < nt; t++) {
		T[t] = t;
		u.local[t] = -1;
	}
	/* tasks to blocks */
	shares(nt, cap, nb, want);
	if ((rc = split_exact(&u, T, nt, want, nb, part)))
		goto out;
	int32_t *bstart = ustart;       /* reuse: tasks of block q in T2 */
	int64_t *bcount = tp__calloc((size_t)nb + 1, sizeof(int64_t));
	if (!bcount) {
		rc = TP_ENOMEM;
		goto out;
	}
	for (int32_t t = 0; t < nt; t++)
		bcount[part[t] + 1]++;
	for (int q = 0; q < nb; q++)
		bcount[q + 1] += bcount[q];
	for (int32_t t = 0; t < nt; t++)
		T2[bcount[part[t]]++] = t;
	/* bcount[q] is now the end of block q's tasks */
	for (int q = 0, from = 0; q < nb && !rc; q++) {
		int32_t ntq = (int32_t)(bcount[q] - from);
		const int32_t *nodes = order + bstart[q];
		int nq = bstart[q + 1] - bstart[q];
		int64_t ncap[TP_BLOCK_NODES_MAX];
		if (nq > TP_BLOCK_NODES_MAX) {
			/* a huge block: its nodes in Slurm's order */
			int64_t used = 0;
			for (int j = 0; j < nq; j++)
				for (int s = 0; s < a->slots[nodes[j]] && used < ntq; s++)
					map[T2[from + used++]] = nodes[j];
			from = (int)bcount[q];
			continue;
		}
		for (int j = 0; j < nq; j++)
			ncap[j] = a->slots[nodes[j]];
		shares(ntq, ncap, nq, want);
		rc = split_exact(&u, T2 + from, ntq, want, nq, part);
		for (int32_t i = 0; !rc && i < ntq; i++)
			map[T2[from + i]] = nodes[part[i]];
		from = (int)bcount[q];
	}
	free(bcount);
out:
	free(bidx);
	free(order);
	free(ustart);
	free(cap);
	free(want);
	free(T);
	free(T2);
	free(part);
	free(u.local);
	if (metis_open)
		tp__metis_close(&u.metis);
	if (rc == TP_ENOMEM)
		return tp_error_set(err, rc, "blocks: out of memory");
	return rc;
}
