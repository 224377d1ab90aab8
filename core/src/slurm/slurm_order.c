/* topoplace — Slurm's own layout of a step's tasks over its nodes: the
 * baseline every mapping is judged against ("never worse than Slurm's
 * order"), modelled from Slurm's code (references are to 26.05.3; 23.11 to
 * 25.11 where they differ).
 *
 * 1. The distribution (src/srun/launch.c, _create_job_step_req): -m or
 *    SLURM_DISTRIBUTION as given; without one, cyclic when the step has no
 *    more tasks than nodes, block otherwise (all releases since 23.11).
 *    Its first level decides the nodes (slurm_step_layout.c,
 *    _init_task_layout): cyclic, arbitrary, plane, then block.
 * 2. The node index order: slurmctld's node table, sorted by name
 *    (slurmctld/read_config.c, _sort_node_record_table_ptr), or by the
 *    cluster default topology's node ranks with TopologyParam=
 *    BlockAsNodeRank (topology/block: the block's position, 1 on) or
 *    SwitchAsNodeRank (topology/tree: the leaf switch's), nodes in none
 *    first (rank 0; topology_p_generate_node_ranking).  Cyclic and plane go
 *    in this order; so does block before 26.05.
 * 3. From 26.05, block goes in the topology's rank order, ties by node
 *    index (_task_layout_topo): cons_tres asks the partition's topology for
 *    ranks (job_test.c, topology_g_get_rank) unless
 *    SelectTypeParameters=CR_NO_DIST_TOPO_BLOCK:
 *      tree     the leaf switch's position among the leaves;
 *      block    the block's index;
 *      ring     ring index, then the position from the start of the
 *               allocation's segment of the ring (_get_segment_start);
 *      torus3d  torus, then the Morton code of the coordinates relative to
 *               the smallest wrap-aware box of the allocation;
 *      flat     none, unless {alpha_step_rank: true}: the node names'
 *               natural order.
 *    A node the topology does not place ranks 0, before all others.
 * Not modelled, and said so in *how: arbitrary (the user's hostfile is the
 * layout), Pack/NoPack and CR_PACK_NODES (tasks per node from CPU counts
 * the model does not have), and which nodes a step of fewer nodes than the
 * job takes (26.05 starts later steps on another topology unit): the
 * nodes given are the step's.
 * The tasks' map from the distribution and the order is a mapping:
 * map/slurm_layout.c (tp__slurm_layout_map). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "net/machine_internal.h"
#include "net/records.h"
#include "slurm/slurm_conf.h"
#include "slurm/slurm_topo.h"
#include "util/hostlist.h"
#include "util/util_internal.h"
#include "input/alloc_internal.h"
#include "slurm/slurm_release.h"
#include "slurm/slurm_topology.h"

#define VERSION_26_05 TP__SLURM_VERSION(26, 5, 0)
#define RANK_ID_SHIFT 16   /* TOPO_RANK_ID_SHIFT (interfaces/topology.h) */

/* Nodes of the allocation by machine node: allocation index or -1. */
struct ranker {
	const tp_alloc *a;
	int32_t *pos_of;     /* machine node -> allocation index, or -1 */
	int64_t *rank;       /* per allocation index; -1: not ranked yet */
	int64_t current;
	/* listing walks (ring, torus): the position in the list */
	int64_t at;
	int64_t *at_of;      /* per allocation index: its position, -1 */
	int32_t *touched;    /* the indexes at_of holds, ntouched of them
				(a list's walk costs its own length, not the
				allocation's) */
	int32_t ntouched;
};

static void at_reset(struct ranker *r)
{
	for (int32_t k = 0; k < r->ntouched; k++)
		r->at_of[r->touched[k]] = -1;
	r->ntouched = 0;
}

static int rank_span(void *arg, int32_t first, int32_t count,
		     const struct tp__listed *l)
{
	(void)l;
	struct ranker *r = arg;
	for (int32_t k = 0; first >= 0 && k < count; k++) {
		int32_t i = r->pos_of[first + k];
		/* the first leaf or block that holds the node, as Slurm's loop */
		if (i >= 0 && r->rank[i] < 0)
			r->rank[i] = r->current;
	}
	return 0;
}

/* Each allocation node's position in one list (ring's, torus's). */
static int at_span(void *arg, int32_t first, int32_t count,
		   const struct tp__listed *l)
{
	(void)l;
	struct ranker *r = arg;
	for (int32_t k = 0; k < count; k++, r->at++) {
		int32_t i = first >= 0 ? r->pos_of[first + k] : -1;
		if (i >= 0 && r->at_of[i] < 0) {
			r->at_of[i] = r->at;
			r->touched[r->ntouched++] = i;
		}
	}
	return 0;
}

static int walk_list(struct ranker *r, const char *nodes, tp__listed_fn fn,
		     int64_t *count)
{
	struct tp__hostlist *hl;
	int64_t n = 0;
	tp_error e;
	tp_error_clear(&e);
	if (count)
		*count = 0;
	if (!nodes)
		return 0;
	if (tp__hostlist_parse(nodes, "nodes", TP__MAX_TREE_NODES,
			       "the most a topology holds", &hl, &n, &e))
		return -1;   /* slurmctld refuses such a file; nothing to rank */
	r->at = 0;
	tp__machine_each_listed(tp_alloc_machine(r->a), hl, fn, r);
	tp__hostlist_free(hl);
	if (count)
		*count = n;
	return 0;
}

/* The value of key (case-insensitive) among line's words, cut in place. */
static char *word_value(char *line, const char *key)
{
	size_t kl = strlen(key);
	for (char *p = line; *p;) {
		p += strspn(p, " \t\r");
		char *end = p + strcspn(p, " \t\r");
		if (!strncasecmp(p, key, kl) && p[kl] == '=') {
			*end = '\0';
			return p + kl + 1;
		}
		p = end;
	}
	return NULL;
}

enum kind { BY_LEAF, BY_BLOCK };

struct topo_walk {
	struct ranker *r;
	enum kind kind;
	int64_t leaves, blocks;
};

/* One switch (leaf: with nodes) or block, in the file's order
 * (topology_tree.c and topology_block.c, topology_p_get_rank; the node
 * ranking of TopologyParam counts the same way from 1). */
static void rank_entry(struct topo_walk *w, const char *nodes)
{
	if (w->kind == BY_LEAF) {
		if (!nodes)
			return;         /* a switch above the leaves */
		w->r->current = ++w->leaves;
	} else {
		w->r->current = w->blocks++;   /* every block has its index */
		if (!nodes)
			return;
	}
	walk_list(w->r, nodes, rank_span, NULL);
}

static int topo_line(void *arg, char *line, int number)
{
	(void)number;
	struct topo_walk *w = arg;
	char *start = line + strspn(line, " \t\r");
	bool leaf = w->kind == BY_LEAF && !strncasecmp(start, "SwitchName=", 11);
	bool block = w->kind == BY_BLOCK && !strncasecmp(start, "BlockName=", 10);
	if (leaf || block)
		rank_entry(w, word_value(line, "Nodes"));
	return 0;
}

static void rank_tree_or_blocks(struct ranker *r, const struct tp__slurm_topology *st,
				const struct tp__stopo *t, enum kind kind)
{
	struct topo_walk w = { .r = r, .kind = kind };
	tp_error e;
	tp_error_clear(&e);
	/* topology.conf's records once nodes joined them (its text lacks
	 * them), else its text as slurmctld's order reads it */
	if (st->yaml || (t->conf_records && (t->njoined || t->nlive))) {
		for (int32_t i = 0; i < t->nrec; i++)
			rank_entry(&w, t->rec[i].nodes);
	} else {
		tp__each_conf_line(st->text, st->file, &e, topo_line, &w);
	}
}

/* topology/ring (topology_ring.c, topology_p_get_rank): ring index << 16,
 * plus the position counted from the allocation's segment start: 0 unless
 * the allocation holds both ends of the ring, then the first allocated
 * position after the first gap (_get_segment_start). */
static void rank_rings(struct ranker *r, const struct tp__stopo *t)
{
	for (int32_t j = 0; j < t->nrec; j++) {
		at_reset(r);
		int64_t size = 0;
		if (walk_list(r, t->rec[j].nodes, at_span, &size) || size <= 0)
			continue;
		/* which positions the allocation holds */
		char *held = calloc((size_t)size, 1);
		if (!held)
			return;
		for (int32_t k = 0; k < r->ntouched; k++)
			held[r->at_of[r->touched[k]]] = 1;
		int64_t start = 0;
		if (held[0] && held[size - 1]) {
			for (int64_t p = 1; p < size; p++) {
				if (held[p])
					continue;
				for (p++; p < size && !held[p]; p++)
					;
				start = p < size ? p : 0;
				break;
			}
		}
		free(held);
		for (int32_t k = 0; k < r->ntouched; k++) {
			int32_t i = r->touched[k];
			if (r->rank[i] < 0)
				r->rank[i] = ((int64_t)j << RANK_ID_SHIFT) +
					     (r->at_of[i] + size - start) % size;
		}
	}
	at_reset(r);
}

/* _min_wrap_span (topology_torus3d.c): the smallest arc of a circular axis
 * of n positions that covers the used ones. */
static void min_wrap_span(const char *used, int n, int *start, int *span)
{
	int set = 0, first = -1, last = -1;
	for (int i = 0; i < n; i++)
		if (used[i]) {
			set++;
			if (first < 0)
				first = i;
			last = i;
		}
	if (set <= 1) {
		*start = first < 0 ? 0 : first;
		*span = 1;
		return;
	}
	if (set == n) {
		*start = 0;
		*span = n;
		return;
	}
	int bs = first, be = last;
	if (2 * (be - bs) < n + set) {
		*start = bs;
		*span = be - bs + 1;
		return;
	}
	int max_gap = n - (be - bs + 1), prev = bs;
	for (int i = bs + 1; i < n; i++) {
		if (!used[i])
			continue;
		int gap = i - prev - 1;
		if (gap > max_gap) {
			bs = i;
			max_gap = gap;
		}
		prev = i;
	}
	*start = bs;
	*span = n - max_gap;
}

static int bits_needed(int span)
{
	int bits = 0;
	for (span--; span > 0; span >>= 1)
		bits++;
	return bits;
}

/* _morton_scale and _morton_encode (topology_torus3d.c). */
static uint32_t morton(const int *c, const int *span)
{
	int b[3], s[3];
	for (int d = 0; d < 3; d++)
		b[d] = bits_needed(span[d]);
	int orig[3] = { b[0], b[1], b[2] };
	while (b[0] + b[1] + b[2] > RANK_ID_SHIFT) {
		if (b[0] >= b[1] && b[0] >= b[2])
			b[0]--;
		else if (b[1] >= b[2])
			b[1]--;
		else
			b[2]--;
	}
	for (int d = 0; d < 3; d++)
		s[d] = orig[d] - b[d];
	uint32_t out = 0;
	int pos = 0, max = b[0] > b[1] ? b[0] : b[1];
	if (b[2] > max)
		max = b[2];
	for (int i = 0; i < max; i++)
		for (int d = 0; d < 3; d++)
			if (i < b[d])
				out |= (uint32_t)(((c[d] >> s[d]) >> i) & 1) << pos++;
	return out;
}

/* topology/torus3d (topology_torus3d.c, topology_p_get_rank): (torus + 1)
 * << 16 | the Morton code of the coordinates relative to the allocation's
 * box on the torus (the whole torus when it is all allocated).  Cells are
 * x-major (torus3d_index_to_coord), over the torus or a region's box. */
static void rank_tori(struct ranker *r, const struct tp__stopo *t)
{
	int32_t nn = tp_alloc_nnodes(r->a);
	int *cell = tp__malloc_array((size_t)(nn ? nn : 1), 3 * sizeof(int));
	int32_t *mine = tp__malloc_array((size_t)(nn ? nn : 1), sizeof(int32_t));
	if (!cell || !mine)
		goto out;
	for (int32_t i = 0; i < nn; i++)
		cell[3 * i] = -1;
	for (int k = 0; k < t->ntorus; k++) {
		const struct tp__torus3d *T = &t->torus[k];
		int64_t listed = 0;
		int32_t held = 0;   /* the allocation's nodes here: mine[] */
		int nlists = T->nodes ? 1 : T->nregions;
		for (int g = 0; g < nlists; g++) {
			const int zero[3] = { 0, 0, 0 };
			const int *anchor = T->nodes ? zero : T->region[g].anchor;
			const int *ext = T->nodes ? T->dims : T->region[g].dims;
			at_reset(r);
			int64_t count = 0;
			if (walk_list(r, T->nodes ? T->nodes : T->region[g].nodes,
				      at_span, &count))
				continue;
			listed += count;
			for (int32_t q = 0; q < r->ntouched; q++) {
				int32_t i = r->touched[q];
				int64_t p = r->at_of[i];
				if (cell[3 * i] >= 0 || ext[0] <= 0 || ext[1] <= 0)
					continue;
				cell[3 * i] = (anchor[0] + (int)(p % ext[0])) % T->dims[0];
				cell[3 * i + 1] = (anchor[1] + (int)(p / ext[0] % ext[1])) %
						  T->dims[1];
				cell[3 * i + 2] = (anchor[2] + (int)(p / ((int64_t)ext[0] *
									ext[1]))) % T->dims[2];
				mine[held++] = i;
			}
		}
		at_reset(r);
		int start[3] = { 0, 0, 0 }, span[3] = { T->dims[0], T->dims[1],
							 T->dims[2] };
		if (held && held < listed) {
			for (int d = 0; d < 3; d++) {
				char *used = calloc((size_t)T->dims[d], 1);
				if (!used)
					goto out;
				for (int32_t q = 0; q < held; q++)
					used[cell[3 * mine[q] + d]] = 1;
				min_wrap_span(used, T->dims[d], &start[d], &span[d]);
				free(used);
			}
		}
		for (int32_t q = 0; q < held; q++) {
			int32_t i = mine[q];
			int rel[3];
			for (int d = 0; d < 3; d++)
				rel[d] = (cell[3 * i + d] + T->dims[d] - start[d]) %
					 T->dims[d];
			if (r->rank[i] < 0)
				r->rank[i] = ((int64_t)(k + 1) << RANK_ID_SHIFT) |
					     morton(rel, span);
			cell[3 * i] = -1;   /* for the next torus */
		}
	}
out:
	free(cell);
	free(mine);
}

/* strnatcmp as Slurm sorts node names (digits compared as numbers). */
static int natcmp(const char *a, const char *b)
{
	while (*a && *b) {
		if (*a >= '0' && *a <= '9' && *b >= '0' && *b <= '9') {
			while (*a == '0')
				a++;
			while (*b == '0')
				b++;
			size_t la = strspn(a, "0123456789"), lb = strspn(b, "0123456789");
			if (la != lb)
				return la < lb ? -1 : 1;
			int c = strncmp(a, b, la);
			if (c)
				return c;
			a += la;
			b += lb;
			continue;
		}
		if (*a != *b)
			return (unsigned char)*a < (unsigned char)*b ? -1 : 1;
		a++;
		b++;
	}
	return *a ? 1 : *b ? -1 : 0;
}

static int cmp_name(const void *x, const void *y, void *arg)
{
	const tp_alloc *a = arg;
	const tp_machine *m = tp_alloc_machine(a);
	int32_t i = *(const int32_t *)x, j = *(const int32_t *)y;
	int c = natcmp(tp_machine_node_name(m, tp_alloc_node(a, i)),
		       tp_machine_node_name(m, tp_alloc_node(a, j)));
	return c ? c : (i > j) - (i < j);
}

/* flat {alpha_step_rank: true} (topology_flat.c): the rank is the name's
 * position in natural order. */
static void rank_by_name(struct ranker *r)
{
	int32_t nn = tp_alloc_nnodes(r->a);
	int32_t *by = tp__malloc_array((size_t)(nn ? nn : 1), sizeof *by);
	if (!by)
		return;
	for (int32_t i = 0; i < nn; i++)
		by[i] = i;
	qsort_r(by, (size_t)nn, sizeof *by, cmp_name, (void *)r->a);
	for (int32_t k = 0; k < nn; k++)
		r->rank[by[k]] = k;
	free(by);
}

struct sort_ctx {
	const int64_t *rank;
	const int32_t *pos;   /* tie: position in the index order */
};

static int cmp_rank(const void *x, const void *y, void *arg)
{
	const struct sort_ctx *c = arg;
	int32_t a = *(const int32_t *)x, b = *(const int32_t *)y;
	if (c->rank[a] != c->rank[b])
		return c->rank[a] < c->rank[b] ? -1 : 1;
	return (c->pos[a] > c->pos[b]) - (c->pos[a] < c->pos[b]);
}

static bool has_word(const char *list, const char *word)
{
	size_t wl = strlen(word);
	for (const char *p = list; p && *p;) {
		size_t n = strcspn(p, ",");
		if (n == wl && !strncasecmp(p, word, wl))
			return true;
		p += n + (p[n] == ',');
	}
	return false;
}

static void ranker_reset(struct ranker *r)
{
	for (int32_t i = 0; i < tp_alloc_nnodes(r->a); i++)
		r->rank[i] = -1;
	r->current = 0;
}

/* order (a permutation of a's indexes) sorted by r->rank, ties kept in
 * order's own sequence; unranked nodes rank 0. */
static void sort_by_rank(struct ranker *r, int32_t *order)
{
	int32_t nn = tp_alloc_nnodes(r->a);
	int32_t *pos = tp__malloc_array((size_t)nn, sizeof *pos);
	if (!pos)
		return;
	for (int32_t k = 0; k < nn; k++) {
		pos[order[k]] = k;
		if (r->rank[k] < 0)
			r->rank[k] = 0;
	}
	struct sort_ctx c = { r->rank, pos };
	qsort_r(order, (size_t)nn, sizeof *order, cmp_rank, &c);
	free(pos);
}

/* The topology slurmctld's node table is sorted by (the cluster default,
 * interfaces/topology.c sorts it first): -1 for none. */
static int ranking_topology(const struct tp__slurm_topology *st)
{
	for (int i = 0; i < st->set.n; i++)
		if (st->set.t[i].cluster_default)
			return i;
	return st->set.n > 0 ? 0 : -1;
}

int tp__slurm_dist_parse(const char *text, const char *what,
			 enum tp__slurm_dist *dist, int *plane, char *flags,
			 tp_error *err)
{
	*dist = TP__DIST_DEFAULT;
	*plane = 0;
	flags[0] = '\0';
	if (!text || !*text)
		return 0;
	/* verify_dist_type (src/common/proc_args.c): NODE[:SOCKET[:CORE]]
	 * [,Pack|,NoPack]; plane=N alone; "*" is the level's default */
	size_t n = strcspn(text, ":,");
	const char *pack = strchr(text, ',');
	if (!strcasecmp(text, "Pack") || !strcasecmp(text, "NoPack")) {
		/* the flag alone: the default distribution (verify_dist_type) */
		snprintf(flags, 16, "%s", text);
		return 0;
	}
	if (pack)
		snprintf(flags, 16, "%.15s", pack + 1);
	if (pack && strcasecmp(pack + 1, "Pack") && strcasecmp(pack + 1, "NoPack"))
		return tp_error_set(err, TP_EINVAL, "%s %s: after ',' Slurm takes "
				    "Pack or NoPack", what, text);
	if (n == 0 || (n == 1 && text[0] == '*'))
		return 0;
	if (n == 5 && !strncasecmp(text, "block", 5))
		*dist = TP__DIST_BLOCK;
	else if (n == 6 && !strncasecmp(text, "cyclic", 6))
		*dist = TP__DIST_CYCLIC;
	else if ((n == 9 && !strncasecmp(text, "arbitrary", 9)) ||
		 (n == 8 && !strncasecmp(text, "hostfile", 8)))
		*dist = TP__DIST_ARBITRARY;
	else if (!strncasecmp(text, "plane=", 6)) {
		char *end;
		long v = strtol(text + 6, &end, 10);
		if (end == text + 6 || (*end && *end != ',') || v < 1 || v > 65534)
			return tp_error_set(err, TP_EINVAL, "%s %s: plane=N takes a "
					    "size from 1 to 65534", what, text);
		*dist = TP__DIST_PLANE;
		*plane = (int)v;
	} else {
		return tp_error_set(err, TP_EINVAL, "%s %s: not a distribution "
				    "srun takes (block, cyclic, plane=N, arbitrary; "
				    "block and cyclic with :SOCKET[:CORE]; ,Pack or "
				    ",NoPack)",
				    what, text);
	}
	return 0;
}

void tp__slurm_layout_free(struct tp__slurm_layout *L)
{
	free(L->index_order);
	free(L->rank_order);
	L->index_order = L->rank_order = NULL;
}

int tp__slurm_layout_load(const char *slurm_conf, const char *partition,
			  unsigned version, const struct tp__slurm_live *live,
			  const char *distribution,
			  const char *what, const tp_alloc *a,
			  struct tp__slurm_layout *L, tp_error *err)
{
	memset(L, 0, sizeof *L);
	int32_t nn = tp_alloc_nnodes(a);
	int rc = tp__slurm_dist_parse(distribution, what ? what : "distribution",
				      &L->dist, &L->plane, L->flags, err);
	if (rc)
		return rc;
	L->version = version;
	L->index_order = tp__malloc_array((size_t)(nn ? nn : 1), sizeof(int32_t));
	L->rank_order = tp__malloc_array((size_t)(nn ? nn : 1), sizeof(int32_t));
	if (!L->index_order || !L->rank_order) {
		tp__slurm_layout_free(L);
		return tp_error_set(err, TP_ENOMEM, "out of memory");
	}
	for (int32_t i = 0; i < nn; i++)
		L->index_order[i] = L->rank_order[i] = i;
	if (!slurm_conf || !*slurm_conf || nn < 1)
		return 0;
	struct tp__slurm_keys k;
	tp_error e;
	tp_error_clear(&e);
	if (tp__slurm_conf_keys(slurm_conf, &k, &e)) {
		snprintf(L->index_how, sizeof L->index_how, " (%.240s)", e.msg);
		return 0;
	}
	bool linear = k.select_type && !strcasecmp(k.select_type, "select/linear");
	bool no_topo = has_word(k.select_params, "CR_NO_DIST_TOPO_BLOCK");
	L->pack = has_word(k.select_params, "CR_PACK_NODES");
	bool block_as = has_word(k.topology_param, "BlockAsNodeRank");
	bool switch_as = has_word(k.topology_param, "SwitchAsNodeRank");
	struct tp__slurm_topology st;
	if (tp__slurm_topology_find(slurm_conf, &k, partition, version, live, &st, NULL,
				    &e)) {
		snprintf(L->index_how, sizeof L->index_how, " (%.240s)", e.msg);
		return 0;
	}
	const tp_machine *m = tp_alloc_machine(a);
	struct ranker r = {
		.a = a,
		.pos_of = tp__malloc_array((size_t)m->nnodes, sizeof(int32_t)),
		.rank = tp__malloc_array((size_t)nn, sizeof(int64_t)),
		.at_of = tp__malloc_array((size_t)(nn ? nn : 1), sizeof(int64_t)),
		.touched = tp__malloc_array((size_t)(nn ? nn : 1), sizeof(int32_t)),
	};
	if (!r.pos_of || !r.rank || !r.at_of || !r.touched)
		goto out;
	for (int32_t j = 0; j < m->nnodes; j++)
		r.pos_of[j] = -1;
	for (int32_t i = 0; i < nn; i++) {
		r.pos_of[tp_alloc_node(a, i)] = i;
		r.at_of[i] = -1;
	}
	/* 2. the node table's order */
	int def = ranking_topology(&st);
	const struct tp__stopo *dt = def >= 0 ? &st.set.t[def] : NULL;
	if (dt && ((block_as && dt->kind == TP__STOPO_BLOCK) ||
		   (switch_as && dt->kind == TP__STOPO_TREE))) {
		ranker_reset(&r);
		rank_tree_or_blocks(&r, &st, dt, dt->kind == TP__STOPO_TREE ? BY_LEAF
				    : BY_BLOCK);
		if (dt->kind == TP__STOPO_BLOCK)   /* ranks from 1, none 0 */
			for (int32_t i = 0; i < nn; i++)
				r.rank[i] += r.rank[i] >= 0;
		sort_by_rank(&r, L->index_order);
		snprintf(L->index_how, sizeof L->index_how, " sorted by %s (TopologyParam"
			 "=%s)", dt->kind == TP__STOPO_TREE ? "leaf switch" : "block",
			 dt->kind == TP__STOPO_TREE ? "SwitchAsNodeRank" : "BlockAsNodeRank");
	}
	memcpy(L->rank_order, L->index_order, sizeof(int32_t) * (size_t)nn);
	/* 3. the partition's ranks for block, from 26.05 */
	const struct tp__stopo *t = st.chosen >= 0 ? &st.set.t[st.chosen] : NULL;
	if (version < VERSION_26_05 || linear || nn < 2 || !t)
		goto out;
	if (no_topo) {
		snprintf(L->rank_how, sizeof L->rank_how, " (CR_NO_DIST_TOPO_BLOCK)");
		goto out;
	}
	const char *by = NULL;
	ranker_reset(&r);
	switch (t->kind) {
	case TP__STOPO_TREE:
		rank_tree_or_blocks(&r, &st, t, BY_LEAF);
		by = "leaf switch by leaf switch";
		break;
	case TP__STOPO_BLOCK:
		rank_tree_or_blocks(&r, &st, t, BY_BLOCK);
		by = "block by block";
		break;
	case TP__STOPO_RING:
		rank_rings(&r, t);
		by = "along each ring from the allocation's start";
		break;
	case TP__STOPO_TORUS3D:
		rank_tori(&r, t);
		by = "in the Morton order of the torus coordinates";
		break;
	case TP__STOPO_FLAT:
		if (t->alpha_step_rank) {
			rank_by_name(&r);
			by = "by node name (alpha_step_rank)";
		}
		break;
	default:
		break;
	}
	if (by) {
		sort_by_rank(&r, L->rank_order);
		L->ranked = true;
		char src[512];
		if (st.yaml)
			snprintf(src, sizeof src, "topology %.60s of %.300s", t->name,
				 st.file);
		else
			snprintf(src, sizeof src, "%.300s", st.file);
		snprintf(L->rank_how, sizeof L->rank_how, "%.50s, as Slurm %u.%02u "
			 "lays tasks out (%.150s)", by, TP__SLURM_MAJOR(version),
			 TP__SLURM_MINOR(version), src);
	}
out:
	free(r.pos_of);
	free(r.rank);
	free(r.at_of);
	free(r.touched);
	tp__slurm_topology_free(&st);
	return 0;
}

enum tp__slurm_dist tp__slurm_layout_pick(const struct tp__slurm_layout *L,
					  int64_t ntasks, int32_t nnodes,
					  const int32_t **order, char *how)
{
	enum tp__slurm_dist d = L->dist;
	const char *why = "";
	char buf[96];
	if (d == TP__DIST_DEFAULT) {
		/* launch.c, _create_job_step_req: num_tasks <= min_nodes */
		d = ntasks <= nnodes ? TP__DIST_CYCLIC : TP__DIST_BLOCK;
		snprintf(buf, sizeof buf, "srun's default for %lld tasks on %ld "
			 "nodes", (long long)ntasks, (long)nnodes);
		why = buf;
	}
	bool topo = d == TP__DIST_BLOCK && L->ranked;
	*order = topo ? L->rank_order : L->index_order;
	const char *node_order = L->index_how[0] == ' ' && L->index_how[1] == '('
				 ? "" : L->index_how;
	const char *problem = L->index_how[0] == ' ' && L->index_how[1] == '('
			      ? L->index_how : "";
	char dist[64];
	if (d == TP__DIST_PLANE)
		snprintf(dist, sizeof dist, "plane=%d", L->plane);
	else
		snprintf(dist, sizeof dist, "%s", d == TP__DIST_BLOCK ? "block" :
			 d == TP__DIST_CYCLIC ? "cyclic" : "arbitrary");
	if (d == TP__DIST_ARBITRARY)
		snprintf(how, TP_ERROR_MSG_MAX, "not modelled for -m arbitrary (the "
			 "user's hostfile is the layout); the guarantee is against "
			 "block in the hostlist's order");
	else if (topo)
		snprintf(how, TP_ERROR_MSG_MAX, "block%s%.80s, %.250s", why[0] ? ", " : "",
			 why, L->rank_how);
	else
		snprintf(how, TP_ERROR_MSG_MAX, "%.20s%s%.80s over the hostlist's "
			 "order%.60s%.40s%.250s", dist, why[0] ? ", " : "", why,
			 node_order, L->ranked ? " (the topology's ranks order block "
			 "only)" : L->rank_how, problem);
	/* what the model cannot know */
	if (L->flags[0] && d != TP__DIST_ARBITRARY) {
		size_t len = strlen(how);
		snprintf(how + len, TP_ERROR_MSG_MAX - len, "; not modelled for ,%.15s "
			 "(tasks a node from CPU counts): the guarantee is against "
			 "the tasks a node given", L->flags);
	} else if (L->pack && d == TP__DIST_BLOCK && !topo) {
		size_t len = strlen(how);
		snprintf(how + len, TP_ERROR_MSG_MAX - len, "; not modelled for "
			 "CR_PACK_NODES (tasks a node from CPU counts): the guarantee "
			 "is against the tasks a node given");
	}
	return d;
}

void tp__slurm_plane_counts(int32_t nn, int64_t n, int plane, int64_t *count)
{
	/* _task_layout_plane's first loop with room everywhere: one task a
	 * node, then up to plane - 1 more each, then plane more each round */
	int64_t t = 0;
	for (int32_t i = 0; i < nn; i++)
		count[i] = 0;
	for (int j = 0; t < n && nn > 0; j++) {
		if (j == 0)
			for (int32_t i = 0; i < nn && t < n; i++, t++)
				count[i]++;
		for (int32_t i = 0; i < nn && t < n; i++)
			for (int k = j == 0; k < plane && t < n; k++, t++)
				count[i]++;
	}
}

void tp__slurm_order(const char *slurm_conf, const char *partition,
		     unsigned version, const tp_alloc *a, int32_t *order,
		     char *how)
{
	int32_t nn = tp_alloc_nnodes(a);
	struct tp__slurm_layout L;
	tp_error e;
	tp_error_clear(&e);
	how[0] = '\0';
	if (tp__slurm_layout_load(slurm_conf, partition, version, NULL, "block", NULL, a,
				  &L, &e)) {
		for (int32_t i = 0; i < nn; i++)
			order[i] = i;
		return;
	}
	const int32_t *o;
	char buf[TP_ERROR_MSG_MAX];
	tp__slurm_layout_pick(&L, 0, nn, &o, buf);
	memcpy(order, o, sizeof(int32_t) * (size_t)nn);
	if (L.ranked || L.index_how[0] || L.rank_how[0])
		snprintf(how, TP_ERROR_MSG_MAX, "%s", buf);
	tp__slurm_layout_free(&L);
}

int tp_alloc_take_slurm_order(tp_alloc *a, const char *slurm_conf,
			      const char *partition, unsigned version, char *how)
{
	char own[TP_ERROR_MSG_MAX];
	int32_t nn = tp_alloc_nnodes(a);
	int32_t *order = tp__malloc_array((size_t)(nn ? nn : 1), sizeof *order);
	if (!a || !order) {
		free(order);
		return TP_ENOMEM;
	}
	tp__slurm_order(slurm_conf, partition, version, a, order, how ? how : own);
	int rc = tp__alloc_reorder(a, order);
	free(order);
	return rc;
}
