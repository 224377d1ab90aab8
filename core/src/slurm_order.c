/* topoplace — Slurm's own order of an allocation's nodes: the baseline
 * every mapping is judged against ("never worse than Slurm's order").
 *
 * Before 26.05 a step's tasks fill the nodes in the job's hostlist order.
 * Slurm 26.05's select/cons_tres ranks the nodes of a job by their topology
 * (topology_g_get_rank on the job's node bitmap, job_test.c) and the step
 * layout sorts by that rank, ties by the node's place in the job's bitmap,
 * that is by node index (_task_layout_topo in slurm_step_layout.c):
 *   topology/tree     the position of the node's leaf switch (a switch with
 *                     Nodes=) among the leaves, in topology.conf's order;
 *   topology/block    the index of its block among the BlockName= lines;
 *   topology/ring     (ring index << 16) + its position on the first ring
 *                     that lists it, counted from the start of the job's
 *                     run on that ring (topology_ring.c);
 *   topology/torus3d  (torus index + 1) << 16 | the Morton code of its
 *                     coordinates relative to the job's box on the torus
 *                     (topology_torus3d.c);
 *   a node in no leaf, block, ring or torus ranks 0, before all others
 *   (but level with ring 0's first position: then by node index).
 * SelectTypeParameters=CR_NO_DIST_TOPO_BLOCK and select/linear keep the
 * hostlist order.  With topology.yaml (read instead of topology.conf when
 * it exists) the job's partition's topology ranks the same way.
 *
 * Node index: slurmctld sorts its node table by name in natural order
 * (strnatcmp; read_config.c, _sort_node_record_table_ptr), and the job's
 * SLURM_JOB_NODELIST is its bitmap's names sorted (bitmap2node_name): the
 * allocation's order, a hostlist as Slurm writes it, is node index order,
 * which is what ties go by here.  Not modelled: TopologyParam=
 * SwitchAsNodeRank / BlockAsNodeRank, which sort the node table by switch
 * or block instead.  The allocation's machine stands for slurm.conf's
 * nodes: Slurm drops a topology's names slurm.conf lacks (a ring's
 * positions count the known ones alone; a torus cell of an unknown name
 * stays empty), and so does this with names the machine lacks. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "internal.h"
#include "slurm_topology.h"

#define VERSION_26_05 ((26u << 16) + (5u << 8))
#define RANK_ID_SHIFT 16     /* Slurm's TOPO_RANK_ID_SHIFT (topology.h) */

enum kind { BY_LEAF, BY_BLOCK, BY_RING, BY_TORUS };

struct ranker {
	const tp_alloc *a;
	int32_t *pos_of;     /* machine node -> allocation index, or -1 */
	int64_t *rank;       /* per allocation index; -1: not ranked yet */
	int64_t current;
	bool nomem;          /* a ranking ran out of memory: keep the order */
};

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

/* ---- topology/ring ---- */

/* A ring's positions, as Slurm numbers them: the names slurm.conf knows
 * (here: the allocation's machine), in the list's order; a name listed
 * twice has two positions. */
struct ring_walk {
	struct ranker *r;
	int32_t *at;         /* per position: the allocation index, or -1 */
	size_t n, cap;
};

static int ring_span(void *arg, int32_t first, int32_t count,
		     const struct tp__listed *l)
{
	(void)l;
	struct ring_walk *w = arg;
	for (int32_t k = 0; first >= 0 && k < count; k++) {
		if (tp__grow((void **)&w->at, w->n, &w->cap, sizeof *w->at))
			return TP_ENOMEM;
		w->at[w->n++] = w->r->pos_of[first + k];
	}
	return 0;
}

/* Where the job's run starts (_get_segment_start): 0, unless the job has
 * both ends of the ring, when its run wraps round the end: then the first
 * position of the job's after its first gap (with several runs, that one,
 * as Slurm; no gap: the whole ring, 0). */
static size_t segment_start(const int32_t *at, size_t size)
{
	if (!size || at[0] < 0 || at[size - 1] < 0)
		return 0;
	for (size_t p = 1; p < size; p++)
		if (at[p] < 0) {
			for (p++; p < size; p++)
				if (at[p] >= 0)
					return p;
			break;
		}
	return 0;
}

static void rank_ring(struct ranker *r, uint32_t index, struct tp__hostlist *hl)
{
	struct ring_walk w = { .r = r };
	if (tp__machine_each_listed(tp_alloc_machine(r->a), hl, ring_span, &w)) {
		r->nomem = true;
	} else {
		size_t size = w.n, start = segment_start(w.at, size);
		for (size_t p = 0; p < size; p++) {
			int32_t i = w.at[p];
			/* the node's first ring and its first position there,
			 * as topology_p_get_rank's loops find it */
			if (i >= 0 && r->rank[i] < 0)
				r->rank[i] = (int64_t)(((uint32_t)index << RANK_ID_SHIFT)
						       + (p + size - start) % size);
		}
	}
	free(w.at);
}

/* ---- topology/torus3d ---- */

struct torus_walk {
	struct ranker *r;
	const int *dims;                       /* the torus's x, y, z */
	const struct tp__torus_region *reg;    /* NULL: nodes x-major */
	uint64_t next;                         /* the next name's place */
	unsigned char *on[3];                  /* coordinates the job has */
	int64_t *cell;       /* per allocation index: its first cell, or -1 */
	int32_t *touched;    /* the allocation indices with a cell */
	int32_t ntouched;
	bool whole;          /* every node of the torus is the job's */
};

/* The cell (x + X*y + X*Y*z, torus3d_coord_to_index) of the name at place
 * q of the list: of the torus, x-major, or of the region, x-major inside
 * it from its anchor; -1 past the end (Slurm refuses such a list). */
static int64_t cell_of(const struct torus_walk *w, uint64_t q)
{
	const int *d = w->dims;
	if (!w->reg)
		return q < (uint64_t)d[0] * d[1] * d[2] ? (int64_t)q : -1;
	const int *rd = w->reg->dims, *an = w->reg->anchor;
	if (q >= (uint64_t)rd[0] * rd[1] * rd[2])
		return -1;
	uint64_t x = an[0] + q % rd[0], y = an[1] + q / rd[0] % rd[1],
		 z = an[2] + q / ((uint64_t)rd[0] * rd[1]);
	return (int64_t)(x + (uint64_t)d[0] * (y + (uint64_t)d[1] * z));
}

static void coords_of(const int *d, int64_t c, int *xyz)
{
	xyz[0] = (int)(c % d[0]);
	xyz[1] = (int)(c / d[0] % d[1]);
	xyz[2] = (int)(c / ((int64_t)d[0] * d[1]));
}

static int torus_span(void *arg, int32_t first, int32_t count,
		      const struct tp__listed *l)
{
	(void)l;
	struct torus_walk *w = arg;
	for (int32_t k = 0; k < count; k++) {
		int64_t c = cell_of(w, w->next++);
		if (c < 0 || first < 0)
			continue;   /* a name slurm.conf lacks: its cell empty */
		int32_t i = w->r->pos_of[first + k];
		if (i < 0) {
			w->whole = false;
			continue;
		}
		int xyz[3];
		coords_of(w->dims, c, xyz);
		for (int a = 0; a < 3; a++)
			w->on[a][xyz[a]] = 1;   /* every cell, a node's second too */
		if (w->cell[i] < 0)
			w->touched[w->ntouched++] = i;
		/* a node listed twice: the lowest cell (_find_torus_index) */
		if (w->cell[i] < 0 || c < w->cell[i])
			w->cell[i] = c;
	}
	return 0;
}

/* The shortest arc of a wrapped axis of size cells that covers the set
 * coordinates (_min_wrap_span): its start and length. */
static void min_wrap_span(const unsigned char *on, int size, int *start,
			  int *span)
{
	int set = 0, lo = -1, hi = -1;
	for (int i = 0; i < size; i++)
		if (on[i]) {
			set++;
			hi = i;
			if (lo < 0)
				lo = i;
		}
	if (set <= 1) {
		*start = lo < 0 ? 0 : lo;
		*span = 1;
		return;
	}
	if (set == size) {
		*start = 0;
		*span = size;
		return;
	}
	/* inner gaps cannot be longer than the one round the end */
	if (2 * (hi - lo) < size + set) {
		*start = lo;
		*span = hi - lo + 1;
		return;
	}
	int gap = size - (hi - lo + 1), prev = lo;
	*start = lo;
	for (int i = lo + 1; i <= hi; i++)
		if (on[i]) {
			if (i - prev - 1 > gap) {   /* the first longest wins */
				gap = i - prev - 1;
				*start = i;
			}
			prev = i;
		}
	*span = size - gap;
}

/* Bits for the offsets 0..span-1 (_bits_needed). */
static int bits_needed(int span)
{
	int bits = 0;
	for (unsigned v = (unsigned)(span - 1); v; v >>= 1)
		bits++;
	return bits;
}

/* Per-axis bits of the Morton code, 16 in all (_morton_scale): while too
 * many, the widest axis (x, then y, on ties) loses its lowest bit. */
static void morton_scale(const int *span, int *bits, int *shift)
{
	for (int a = 0; a < 3; a++)
		bits[a] = bits_needed(span[a]);
	int orig[3] = { bits[0], bits[1], bits[2] };
	while (bits[0] + bits[1] + bits[2] > RANK_ID_SHIFT) {
		if (bits[0] >= bits[1] && bits[0] >= bits[2])
			bits[0]--;
		else if (bits[1] >= bits[2])
			bits[1]--;
		else
			bits[2]--;
	}
	for (int a = 0; a < 3; a++)
		shift[a] = orig[a] - bits[a];
}

/* x, y, z interleaved from bit 0 up, x first; an axis out of bits drops
 * out (_morton_encode). */
static uint32_t morton(const unsigned *v, const int *bits)
{
	uint32_t code = 0;
	int pos = 0, most = bits[0];
	for (int a = 1; a < 3; a++)
		if (bits[a] > most)
			most = bits[a];
	for (int i = 0; i < most; i++)
		for (int a = 0; a < 3; a++)
			if (i < bits[a])
				code |= (uint32_t)((v[a] >> i) & 1u) << pos++;
	return code;
}

/* One name list of torus t (its nodes, or one region's). */
static int torus_list(struct torus_walk *w, const char *nodes)
{
	if (!nodes)
		return 0;
	struct tp__hostlist *hl;
	int64_t count;
	tp_error e;
	tp_error_clear(&e);
	if (tp__hostlist_parse(nodes, "nodes", TP__MAX_TREE_NODES,
			       "the most a topology holds", &hl, &count, &e))
		return 0;   /* slurmctld refuses such a file; nothing to rank */
	w->next = 0;
	int rc = tp__machine_each_listed(tp_alloc_machine(w->r->a), hl, torus_span, w);
	tp__hostlist_free(hl);
	return rc;
}

/* topology_p_get_rank of topology/torus3d for torus t. */
static void rank_torus(struct ranker *r, const struct tp__torus3d *T, int t,
		       int64_t *cell, int32_t *touched)
{
	struct torus_walk w = { .r = r, .dims = T->dims, .cell = cell,
				.touched = touched, .whole = true };
	for (int a = 0; a < 3; a++)
		if (T->dims[a] < 1 ||
		    !(w.on[a] = calloc((size_t)T->dims[a], 1))) {
			r->nomem = T->dims[a] >= 1;   /* a 0 axis: Slurm refuses */
			goto done;
		}
	if (T->nregions) {
		for (int g = 0; g < T->nregions; g++) {
			w.reg = &T->region[g];
			if (torus_list(&w, w.reg->nodes)) {
				r->nomem = true;
				goto done;
			}
		}
	} else if (torus_list(&w, T->nodes)) {
		r->nomem = true;
		goto done;
	}
	/* the job's box: the whole torus when the job has every node of it
	 * (absolute coordinates), else per axis the shortest arc round the
	 * torus that covers the job's coordinates, so that nodes next to each
	 * other across the wrap get offsets next to each other */
	int start[3], span[3], bits[3], shift[3];
	for (int a = 0; a < 3; a++) {
		if (w.whole) {
			start[a] = 0;
			span[a] = T->dims[a];
		} else {
			min_wrap_span(w.on[a], T->dims[a], &start[a], &span[a]);
		}
	}
	morton_scale(span, bits, shift);
	for (int32_t k = 0; k < w.ntouched; k++) {
		int32_t i = touched[k];
		int xyz[3];
		unsigned v[3];
		coords_of(T->dims, cell[i], xyz);
		for (int a = 0; a < 3; a++)
			v[a] = (unsigned)((xyz[a] + T->dims[a] - start[a]) % T->dims[a])
			       >> shift[a];
		r->rank[i] = (int64_t)(((uint32_t)(t + 1) << RANK_ID_SHIFT)
				       | morton(v, bits));
	}
done:
	for (int32_t k = 0; k < w.ntouched; k++)
		cell[touched[k]] = -1;
	for (int a = 0; a < 3; a++)
		free(w.on[a]);
}

static void rank_toruses(struct ranker *r, const struct tp__stopo *t)
{
	int32_t nn = tp_alloc_nnodes(r->a);
	int64_t *cell = tp__malloc_array((size_t)nn, sizeof *cell);
	int32_t *touched = tp__malloc_array((size_t)nn, sizeof *touched);
	if (!cell || !touched) {
		r->nomem = true;
	} else {
		for (int32_t i = 0; i < nn; i++)
			cell[i] = -1;
		for (int k = 0; k < t->ntorus && !r->nomem; k++)
			rank_torus(r, &t->torus[k], k, cell, touched);
	}
	free(cell);
	free(touched);
}

/* ---- switches, blocks and rings, from either file ---- */

/* The value of key (case-insensitive) among line's words, cut in place. */
static char *word_value(char *line, const char *key)
{
	size_t kl = strlen(key);
	for (char *p = line; *p;) {
		p += strspn(p, " \t\r");
		char *end = p + strcspn(p, " \t\r");
		if (!strncasecmp(p, key, kl) && p[kl] == '=') {
			*end = '\0';
			char *v = p + kl + 1;
			size_t vl = strlen(v);
			if (vl >= 2 && v[0] == '"' && v[vl - 1] == '"') {
				v[vl - 1] = '\0';   /* Nodes="n[1-4]", as Slurm reads it */
				v++;
			}
			return v;
		}
		p = end;
	}
	return NULL;
}

struct topo_walk {
	struct ranker *r;
	enum kind kind;
	int32_t leaves, blocks, rings;
};

/* One switch (leaf: with nodes), block or ring, in the file's order. */
static void rank_entry(struct topo_walk *w, const char *nodes)
{
	if (w->kind == BY_LEAF) {
		if (!nodes)
			return;         /* a switch above the leaves */
		w->r->current = ++w->leaves;
	} else if (w->kind == BY_BLOCK) {
		w->r->current = w->blocks++;   /* every block has its index */
		if (!nodes)
			return;
	} else {
		w->r->current = w->rings++;    /* so has every ring */
		if (!nodes)
			return;
	}
	struct tp__hostlist *hl;
	int64_t count;
	tp_error e;
	tp_error_clear(&e);
	if (tp__hostlist_parse(nodes, "Nodes=", TP__MAX_TREE_NODES,
			       "the most a topology holds", &hl, &count, &e))
		return;   /* slurmctld refuses such a file; nothing to rank */
	if (w->kind == BY_RING)
		rank_ring(w->r, (uint32_t)w->r->current, hl);
	else
		tp__machine_each_listed(tp_alloc_machine(w->r->a), hl, rank_span,
					w->r);
	tp__hostlist_free(hl);
}

static int topo_line(void *arg, char *line, int number)
{
	(void)number;
	struct topo_walk *w = arg;
	static const char *const first[] = { "SwitchName=", "BlockName=",
					     "RingName=" };
	char *start = line + strspn(line, " \t\r");
	if (w->kind <= BY_RING &&
	    !strncasecmp(start, first[w->kind], strlen(first[w->kind])))
		rank_entry(w, word_value(line, "Nodes"));
	return 0;
}

/* Rank the allocation's nodes by topology.conf; false when it cannot be
 * read (why in how). */
static bool rank_by_file(const char *path, enum kind kind, struct ranker *r,
			 char *how)
{
	char *text;
	size_t len;
	tp_error e;
	tp_error_clear(&e);
	if (tp__read_file(path, TP__MAX_CONF_BYTES, "topology.conf", &text, &len,
			  &e)) {
		snprintf(how, TP_ERROR_MSG_MAX, "the hostlist's order (%.400s)", e.msg);
		return false;
	}
	struct topo_walk w = { .r = r, .kind = kind };
	tp__each_conf_line(text, path, &e, topo_line, &w);
	free(text);
	return true;
}

static int cmp_rank(const void *x, const void *y, void *arg)
{
	const int64_t *rank = arg;
	int32_t a = *(const int32_t *)x, b = *(const int32_t *)y;
	if (rank[a] != rank[b])
		return rank[a] < rank[b] ? -1 : 1;
	return (a > b) - (a < b);
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


/* topology.yaml's topology of the partition: its kind and records into
 * *st; false (how said) when Slurm does not rank by it. */
static bool yaml_topology(const char *slurm_conf, const char *partition,
			  unsigned version, struct tp__slurm_topology *st,
			  enum kind *kind, char *how)
{
	tp_error e;
	tp_error_clear(&e);
	if (tp__slurm_topology_load(slurm_conf, partition, version, st, NULL, &e)) {
		snprintf(how, TP_ERROR_MSG_MAX, "the hostlist's order (%.400s)", e.msg);
		return false;
	}
	switch (st->chosen >= 0 ? st->set.t[st->chosen].kind : TP__STOPO_FLAT) {
	case TP__STOPO_TREE:
		*kind = BY_LEAF;
		return true;
	case TP__STOPO_BLOCK:
		*kind = BY_BLOCK;
		return true;
	case TP__STOPO_RING:
		*kind = BY_RING;
		return true;
	case TP__STOPO_TORUS3D:
		*kind = BY_TORUS;
		return true;
	default:
		return false;   /* flat: the hostlist's order, nothing to say */
	}
}

static const char *order_name(enum kind k)
{
	switch (k) {
	case BY_LEAF:
		return "leaf switch by leaf switch";
	case BY_BLOCK:
		return "block by block";
	case BY_RING:
		return "ring by ring, each from the start of the job's run on it";
	default:
		return "torus by torus, in Morton order of the job's box";
	}
}

void tp__slurm_order(const char *slurm_conf, const char *partition,
		     unsigned version, const tp_alloc *a, int32_t *order,
		     char *how)
{
	int32_t nn = tp_alloc_nnodes(a);
	for (int32_t i = 0; i < nn; i++)
		order[i] = i;
	how[0] = '\0';   /* the hostlist's order, nothing to say */
	/* Slurm ranks only a job of more than one node */
	if (!slurm_conf || !*slurm_conf || version < VERSION_26_05 || nn < 2)
		return;
	struct tp__slurm_keys k;
	tp_error e;
	tp_error_clear(&e);
	if (tp__slurm_conf_keys(slurm_conf, &k, &e)) {
		snprintf(how, TP_ERROR_MSG_MAX, "the hostlist's order (%.400s)", e.msg);
		return;
	}
	const char *plugin = k.topology_plugin ? k.topology_plugin : "";
	enum kind kind = BY_LEAF;
	char yaml[4096], conf[4096];
	tp__beside(slurm_conf, "topology.yaml", yaml, sizeof yaml);
	tp__beside(slurm_conf, "topology.conf", conf, sizeof conf);
	struct tp__slurm_topology st;
	memset(&st, 0, sizeof st);
	bool topo = true, from_yaml = tp__file_exists(yaml);
	if (k.select_type && !strcasecmp(k.select_type, "select/linear")) {
		topo = false;
	} else if (has_word(k.select_params, "CR_NO_DIST_TOPO_BLOCK")) {
		snprintf(how, TP_ERROR_MSG_MAX, "the hostlist's order "
			 "(CR_NO_DIST_TOPO_BLOCK)");
		topo = false;
	} else if (from_yaml) {
		topo = yaml_topology(slurm_conf, partition, version, &st, &kind, how);
	} else if (!strcasecmp(plugin, "topology/tree")) {
		kind = BY_LEAF;
	} else if (!strcasecmp(plugin, "topology/block")) {
		kind = BY_BLOCK;
	} else if (!strcasecmp(plugin, "topology/ring")) {
		kind = BY_RING;
	} else {
		topo = false;
	}
	tp__slurm_keys_free(&k);
	const tp_machine *m = tp_alloc_machine(a);
	int32_t nm = m->nnodes;
	struct ranker r = {
		.a = a,
		.pos_of = topo ? tp__malloc_array((size_t)nm, sizeof(int32_t)) : NULL,
		.rank = topo ? tp__malloc_array((size_t)nn, sizeof(int64_t)) : NULL,
	};
	if (topo && (!r.pos_of || !r.rank))
		r.nomem = true;
	if (r.pos_of && r.rank) {
		for (int32_t j = 0; j < nm; j++)
			r.pos_of[j] = -1;
		for (int32_t i = 0; i < nn; i++) {
			r.pos_of[tp_alloc_node(a, i)] = i;
			r.rank[i] = -1;
		}
		bool ranked = true;
		if (from_yaml) {
			const struct tp__stopo *t = &st.set.t[st.chosen];
			struct topo_walk w = { .r = &r, .kind = kind };
			if (kind == BY_TORUS)
				rank_toruses(&r, t);
			else
				for (int32_t i = 0; i < t->nrec; i++)
					rank_entry(&w, t->rec[i].nodes);
		} else {
			ranked = rank_by_file(conf, kind, &r, how);
		}
		if (ranked && !r.nomem) {
			for (int32_t i = 0; i < nn; i++)
				if (r.rank[i] < 0)
					r.rank[i] = 0;
			qsort_r(order, (size_t)nn, sizeof *order, cmp_rank, r.rank);
			if (from_yaml)
				snprintf(how, TP_ERROR_MSG_MAX, "%s, as Slurm %u.%02u lays "
					 "tasks out (topology %.100s of %.300s)",
					 order_name(kind), version >> 16,
					 (version >> 8) & 0xff, st.set.t[st.chosen].name,
					 yaml);
			else
				snprintf(how, TP_ERROR_MSG_MAX, "%s, as Slurm %u.%02u lays "
					 "tasks out (%.400s)", order_name(kind),
					 version >> 16, (version >> 8) & 0xff, conf);
		}
	}
	if (r.nomem) {
		for (int32_t i = 0; i < nn; i++)
			order[i] = i;
		snprintf(how, TP_ERROR_MSG_MAX, "the hostlist's order (out of memory "
			 "ranking the nodes as Slurm does)");
	}
	free(r.pos_of);
	free(r.rank);
	tp__slurm_topology_free(&st);
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
