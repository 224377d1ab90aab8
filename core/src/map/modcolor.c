/* topoplace — PERCS mod-colour halo mapping for 2-D stencils on two-level
 * (dragonfly / PERCS) networks (Chakaravarthy et al., "Mapping Strategies for
 * the PERCS Architecture", Lemma 4.1 and Appendix A).
 *
 * Why: whole blocks of a 2-D halo per group (block order, supernode
 * blocking) send each group's halo to only 2-4 other groups, over the few
 * global links between them.  Colouring spreads it over many group pairs.
 *
 * The P x Q task grid is cut into a p x q grid of blocks, p even.  Rows 2j and
 * 2j+1 of the block grid form colour group j: block (2j, y) gets colour
 * j*q + y, block (2j+1, y) gets colour j*q + ((5y + 2) mod q).  With p a
 * multiple of four and q a power of two >= 8 the colouring is perfect on the
 * torus: the blocks of one colour have at most one neighbouring block in any
 * other colour, so the halo of a group is spread over many group pairs instead
 * of a few (whole-block-per-group placement).  Colour c goes to the c-th group
 * of the allocation (groups in increasing order); inside a group, the two
 * blocks fill its nodes in order, each block row-major.  (The paper's Figure 2
 * has an erratum: its last cell is 29, not 19; tests/unit/test_dragonfly.c.)
 *
 * The layout (which task axis holds the row pairs; p and q among the divisors
 * of the grid sides, q not a multiple of 5) is chosen so that the p*q/2
 * colours match the allocation's groups, then for a perfect colouring, then
 * for square blocks (better()).  Any slot counts give a valid mapping: when the
 * number of colours differs from the number of groups, or a group cannot hold
 * a colour class, the tasks in colour order fill the slots in group order.
 * The mapping is not refined here (hop-bytes refinement would undo the
 * spreading); auto refines whichever candidate wins, under its metric.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/util_internal.h"
#include "map/graphmap_internal.h"
#include "pattern/pattern_internal.h"
#include "input/alloc_internal.h"

typedef struct mc_layout {
	int rows_axis;   /* task grid axis (0 = x, 1 = y) along block rows */
	int p, q;        /* block grid */
	int64_t k;       /* colours = p*q/2 */
	bool perfect;
} mc_layout;

typedef struct mc_key {
	int g, r;
	int32_t i;
} mc_key;

static int cmp_key(const void *x, const void *y)
{
	const mc_key *a = x, *b = y;
	if (a->g != b->g)
		return (a->g > b->g) - (a->g < b->g);
	if (a->r != b->r)
		return (a->r > b->r) - (a->r < b->r);
	return (a->i > b->i) - (a->i < b->i);
}

static int mc_color(int q, int br, int bc)
{
	int j = br / 2;
	if (br % 2 == 0)
		return j * q + bc;
	return j * q + (int)(((int64_t)5 * bc + 2) % q);
}

static int wrapi(int x, int n)
{
	x %= n;
	return x < 0 ? x + n : x;
}

/* Perfect: for every colour (two blocks, eight neighbours on the torus), the
 * neighbours are all distinct and none has the colour itself.  nb: 8*k ints. */
static bool mc_is_perfect(int p, int q, int *nb, int64_t k)
{
	int *cnt = calloc((size_t)k, sizeof(int));
	if (!cnt)
		return false;
	bool ok = true;
	for (int br = 0; br < p && ok; br++)
		for (int bc = 0; bc < q && ok; bc++) {
			int c = mc_color(q, br, bc);
			const int v[4][2] = { { br - 1, bc }, { br + 1, bc },
					      { br, bc - 1 }, { br, bc + 1 } };
			for (int i = 0; i < 4 && ok; i++) {
				int e = mc_color(q, wrapi(v[i][0], p), wrapi(v[i][1], q));
				if (e == c || cnt[c] >= 8) {
					ok = false;
					break;
				}
				for (int j = 0; j < cnt[c]; j++)
					if (nb[8 * c + j] == e)
						ok = false;
				nb[8 * c + cnt[c]++] = e;
			}
		}
	free(cnt);
	return ok;
}

static bool better(const mc_layout *x, const mc_layout *y, int64_t ng,
		   int bx, int by)
{
	/* y: the best so far.  Fewer colour/group mismatch, then perfect, then
	 * squarer blocks; the first found wins ties. */
	int64_t dx = x->k > ng ? x->k - ng : ng - x->k;
	int64_t dy = y->k > ng ? y->k - ng : ng - y->k;
	if (dx != dy)
		return dx < dy;
	if (x->perfect != y->perfect)
		return x->perfect;
	return bx < by;
}

int tp_graphmap_modcolor(const tp_graph *g, const tp_alloc *a,
			 const tp_graphmap_opts *o, int32_t *map, tp_error *err)
{
	(void)o;
	if (!g || !a || !map)
		return tp_error_set(err, TP_EINVAL, "modcolor: NULL argument");
	int dims[3] = { 0, 0, 0 };
	int nd = tp_graph_grid_dims(g, dims);
	if (nd == 3 && dims[2] == 1)
		nd = 2;
	if (nd != 2)
		return tp_error_set(err, TP_ENOTSUP,
				    "modcolor: the pattern is not a 2-D grid (stencil NxM)");
	if (!tp_machine_has(a->m, TP_CAP_GROUPS))
		return tp_error_set(err, TP_ENOTSUP,
				    "modcolor: the network is not two-level (Network=dragonfly)");
	int32_t n = g->ntasks;
	if ((int64_t)dims[0] * dims[1] != n)
		return tp_error_set(err, TP_EINVAL, "modcolor: grid %dx%d has not %d tasks",
				    dims[0], dims[1], n);
	if (n > a->total_slots)
		return tp_error_set(err, TP_EINVAL,
				    "%d tasks do not fit in the allocation's %lld slots",
				    n, (long long)a->total_slots);
	int G = tp_machine_dim(a->m, 1);   /* groups: the second coordinate */
	int64_t *cap = calloc((size_t)G, sizeof *cap);
	int32_t *slotnode = tp__malloc_array((size_t)a->total_slots + 1, sizeof(int32_t));
	int64_t *gstart = calloc((size_t)G + 1, sizeof *gstart);
	int32_t *order = tp__malloc_array((size_t)n + 1, sizeof(int32_t));
	int *seen = NULL;
	int rc = 0;
	if (!cap || !slotnode || !gstart || !order) {
		rc = tp_error_set(err, TP_ENOMEM, "modcolor: out of memory");
		goto out;
	}
	/* slots in group order: group, router in group, allocation order */
	for (int32_t i = 0; i < a->nnodes; i++)
		cap[tp_machine_node_coords(a->m, a->node[i])[1]] += a->slots[i];
	int64_t ng = 0;
	for (int gg = 0; gg < G; gg++) {
		gstart[gg + 1] = gstart[gg] + cap[gg];
		ng += cap[gg] > 0;
	}
	if (ng < 2) {
		rc = tp_error_set(err, TP_ENOTSUP,
				  "modcolor: the allocation lies in one group");
		goto out;
	}
	{
		/* allocation nodes sorted by (group, router, allocation index) */
		mc_key *ks = tp__malloc_array((size_t)a->nnodes + 1, sizeof *ks);
		if (!ks) {
			rc = tp_error_set(err, TP_ENOMEM, "modcolor: out of memory");
			goto out;
		}
		for (int32_t i = 0; i < a->nnodes; i++) {
			const int *c = tp_machine_node_coords(a->m, a->node[i]);
			ks[i].g = c[1];
			ks[i].r = c[0];
			ks[i].i = i;
		}
		qsort(ks, (size_t)a->nnodes, sizeof *ks, cmp_key);
		int64_t p = 0;
		for (int32_t k = 0; k < a->nnodes; k++)
			for (int s = 0; s < a->slots[ks[k].i]; s++)
				slotnode[p++] = ks[k].i;
		free(ks);
	}
	/* choose the block layout */
	mc_layout best = { 0, 0, 0, 0, false };
	int best_bal = 0;
	bool have = false;
	for (int ax = 0; ax < 2; ax++) {
		int PR = dims[ax], QC = dims[1 - ax];
		for (int p = 2; p <= PR; p += 2) {
			if (PR % p)
				continue;
			for (int q = 1; q <= QC; q++) {
				if (QC % q || q % 5 == 0)
					continue;
				mc_layout L = { ax, p, q, (int64_t)p * q / 2, false };
				if (L.k > 4 * ng && have)
					continue;
				int al = PR / p, be = QC / q;
				int bal = al > be ? al - be : be - al;
				if (L.k == ng && p * q <= 1 << 20) {
					free(seen);
					seen = tp__malloc_array((size_t)L.k * 8, sizeof(int));
					if (!seen) {
						rc = tp_error_set(err, TP_ENOMEM, "modcolor: out of memory");
						goto out;
					}
					L.perfect = mc_is_perfect(p, q, seen, L.k);
				}
				if (!have || better(&L, &best, ng, bal, best_bal)) {
					best = L;
					best_bal = bal;
					have = true;
				}
			}
		}
	}
	if (!have) {
		rc = tp_error_set(err, TP_ENOTSUP,
				  "modcolor: grid %dx%d has no even side to colour in row pairs",
				  dims[0], dims[1]);
		goto out;
	}
	/* tasks in colour order: colour, block of the pair, row-major inside */
	int PR = dims[best.rows_axis], QC = dims[1 - best.rows_axis];
	int al = PR / best.p, be = QC / best.q;
	int64_t bs = (int64_t)al * be;
	for (int32_t t = 0; t < n; t++) {
		int xy[2] = { t % dims[0], t / dims[0] };
		int r = xy[best.rows_axis], c = xy[1 - best.rows_axis];
		int br = r / al, bc = c / be;
		int64_t col = mc_color(best.q, br, bc);
		int64_t key = col * 2 * bs + (br % 2) * bs + (int64_t)(r % al) * be + c % be;
		order[key] = t;
	}
	/* colour c -> c-th used group when every group holds a colour class */
	bool per_group = best.k == ng;
	for (int gg = 0; per_group && gg < G; gg++)
		if (cap[gg] > 0 && cap[gg] < 2 * bs)
			per_group = false;
	if (per_group) {
		int64_t c = 0;
		for (int gg = 0; gg < G; gg++) {
			if (cap[gg] == 0)
				continue;
			for (int64_t i = 0; i < 2 * bs; i++)
				map[order[c * 2 * bs + i]] = slotnode[gstart[gg] + i];
			c++;
		}
	} else {
		for (int32_t i = 0; i < n; i++)
			map[order[i]] = slotnode[i];
	}
out:
	free(cap);
	free(slotnode);
	free(gstart);
	free(order);
	free(seen);
	return rc;
}
