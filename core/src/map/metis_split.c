/* topoplace — one split of a task subset into parts of exact sizes
 * (metis_split.h). */
#include <limits.h>
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include <topoplace/error.h>
#include "util/util_internal.h"
#include "map/metis_split.h"

/* True when t is one of sub's tasks (its index in *l). */
static bool in_sub(const struct tp__metis_sub *sub, int32_t t, int32_t *l)
{
	*l = sub->local[t];
	return *l >= 0 && *l < sub->nT && sub->T[*l] == t;
}

/* Move tasks out of overfull parts, the best gain first (bytes to the new
 * part minus bytes to the old; ties: the lower task, the lower part), into
 * parts with room, until every part holds exactly its share. */
static int repair(const struct tp__metis_sub *sub, const int64_t *want, int k,
		  idx_t *part)
{
	const tp_graph *g = sub->g;
	int64_t *cnt = tp__calloc((size_t)k, sizeof *cnt);
	double *to = tp__calloc((size_t)k, sizeof *to);
	if (!cnt || !to) {
		free(cnt);
		free(to);
		return TP_ENOMEM;
	}
	for (int32_t i = 0; i < sub->nT; i++)
		cnt[part[i]]++;
	for (;;) {
		int32_t bt = -1;
		int bq = -1;
		double bg = -HUGE_VAL;
		for (int32_t i = 0; i < sub->nT; i++) {
			int p = (int)part[i];
			if (cnt[p] <= want[p])
				continue;
			const int32_t t = sub->T[i];
			int32_t l;
			for (int64_t e = g->xadj[t]; e < g->xadj[t + 1]; e++)
				if (in_sub(sub, g->adjncy[e], &l))
					to[part[l]] += tp__graph_w(g, e);
			for (int q = 0; q < k; q++)
				if (cnt[q] < want[q] && to[q] - to[p] > bg) {
					bt = i;
					bq = q;
					bg = to[q] - to[p];
				}
			for (int64_t e = g->xadj[t]; e < g->xadj[t + 1]; e++)
				if (in_sub(sub, g->adjncy[e], &l))
					to[part[l]] = 0;
		}
		if (bt < 0)
			break;
		cnt[part[bt]]--;
		cnt[bq]++;
		part[bt] = bq;
	}
	free(cnt);
	free(to);
	return 0;
}

/* METIS on the parts that get tasks: it refuses a part of weight 0 (and
 * prints so on stdout), as a job with fewer tasks than slots leaves some.
 * part is left as it was where METIS fails. */
static int bisect(struct tp__metis_split *s, const struct tp__metis_sub *sub,
		  int64_t ne, double W, const int *of, int kk, const int64_t *want,
		  idx_t *part)
{
	const int32_t nT = sub->nT;
	idx_t *xadj = tp__malloc_array((size_t)nT + 1, sizeof(idx_t));
	idx_t *adj = tp__malloc_array((size_t)ne, sizeof(idx_t));
	idx_t *wgt = tp__malloc_array((size_t)ne, sizeof(idx_t));
	real_t *tpw = tp__malloc_array((size_t)kk, sizeof(real_t));
	idx_t *mp = tp__malloc_array((size_t)nT, sizeof(idx_t));
	int rc = 0;
	if (!xadj || !adj || !wgt || !tpw || !mp) {
		rc = TP_ENOMEM;
		goto out;
	}
	tp__metis_sub_fill(sub, W, xadj, adj, wgt);
	real_t sum = 0;
	for (int p = 0; p < kk; p++) {
		tpw[p] = (real_t)want[of[p]] / (real_t)nT;
		sum += tpw[p];
	}
	tpw[kk - 1] += (real_t)1.0 - sum;   /* METIS wants a sum of exactly 1 */
	if (tpw[kk - 1] < 0)
		tpw[kk - 1] = 0;
	idx_t nv = nT, ncon = 1, np = kk, obj = 0;
	idx_t opts[METIS_NOPTIONS];
	s->metis->set_default_options(opts);
	opts[METIS_OPTION_SEED] = s->seed;
	opts[METIS_OPTION_NUMBERING] = 0;
	opts[METIS_OPTION_UFACTOR] = 1;
	s->metis_rc = s->metis->part_graph_recursive(&nv, &ncon, xadj, adj, NULL,
						     NULL, wgt, &np, tpw, NULL,
						     opts, &obj, mp);
	if (s->metis_rc == METIS_OK)
		for (int32_t i = 0; i < nT; i++)
			part[i] = of[mp[i]];
out:
	free(xadj);
	free(adj);
	free(wgt);
	free(tpw);
	free(mp);
	return rc;
}

int tp__metis_split_exact(struct tp__metis_split *s,
			  const struct tp__metis_sub *sub, const int64_t *want,
			  int k, idx_t *part)
{
	s->metis_rc = METIS_OK;
	/* in order first: the fallback, and the answer without edges */
	int64_t at = 0;
	for (int p = 0; p < k; p++)
		for (int64_t c = 0; c < want[p] && at < sub->nT; c++)
			part[at++] = p;
	int64_t ne;
	double W;
	tp__metis_sub_count(sub, &ne, &W);
	int *of = tp__malloc_array((size_t)k, sizeof *of);
	if (!of)
		return TP_ENOMEM;
	int kk = 0;
	for (int p = 0; p < k; p++)
		if (want[p] > 0)
			of[kk++] = p;
	int rc = 0;
	if (kk < 2 || ne == 0 || sub->nT <= kk)
		;   /* nothing to cut: in order */
	else if (ne > INT32_MAX / 2)   /* beyond idx_t */
		rc = TP_ENOMEM;
	else if (s->deadline > 0 &&
		 tp__now_ms() + (double)ne * TP__METIS_US_PER_ENTRY / 1e3 > s->deadline)
		rc = TP_ETIME;
	else if (!(rc = bisect(s, sub, ne, W, of, kk, want, part)))
		rc = repair(sub, want, k, part);
	free(of);
	return rc;
}
