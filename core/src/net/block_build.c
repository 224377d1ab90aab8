/* topoplace — block networks built from Slurm's records (topology/block):
 * topology.conf's BlockName= lines or topology.yaml's blocks, as records
 * (records.h), placed into the machine of block.c, with the tree between
 * the blocks from its records or generated from the aggregation Slurm
 * enforces, and the links' weights from the bandwidths. */
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "net/block_internal.h"
#include "net/network.h"
#include "net/records.h"
#include "net/machine_internal.h"

#define DEFAULT_NETWORK_COST 4

/* ---- the blocks, from records (topology.conf's or topology.yaml's) ----
 *
 * What slurmctld 26.05 accepts (src/plugins/topology/block/block_record.c),
 * topoplace accepts:
 *   - a block without nodes (Nodes= left out: a slot for a rack not there
 *     yet, as topograph writes for GB200 racks) and a block with fewer
 *     nodes than the base size: both still count as aggregation slots (an
 *     aggregated block of level k is 2^k consecutive base blocks, empty or
 *     not);
 *   - the base block size: BlockSizes='s first value, else the node count
 *     of the first block that has nodes;
 *   - BlockSizes= in any order, with repeats: each value only marks its
 *     level (the man page's "successive sizes larger" is not checked);
 *   - a node in two blocks: Slurm keeps it in both, without a word;
 *     topoplace's node is in one block, the first that lists it, and says
 *     so in a warning;
 *   - a node slurm.conf lacks: Slurm drops it with a warning; the block
 *     file alone cannot tell, so here it is a node like the others.
 * What it refuses, refused: a duplicate block name, a block size that is
 * not the base size times a power of two up to 2^15, no blocks, no nodes
 * in any block without BlockSizes= (with it Slurm only warns, but there is
 * nothing to place tasks on: refused too).  Older releases were stricter:
 * 23.11 wanted every block to have Nodes= and the same node count (checked
 * with its BlockLevels=, below), 24.11 Nodes= and at least the base size;
 * 25.05 on accepts both. */

struct bparse {
	const char *what;
	bool yaml;              /* messages in topology.yaml's keys */
	struct tp__warnings *warn;
	tp_error *err;
	struct tp_blocks *k;
	struct tp__names by_name;  /* the blocks by k->bname */
	const char **nodes;     /* each block's hostlist; NULL: no nodes */
	bool dup;               /* a node listed twice: make_tree finds the
				   machine's nodes by name */
	bool *dup_in;           /* nblocks: the block lists such a node */
};

/* An error naming the block file (and the line, when not 0). */
#define berr(p, line, code, ...) \
	tp__line_error((p)->err, (p)->what, (line), (code), __VA_ARGS__)

/* A block as the admin wrote it: "BlockName=b1", or "block b1" (YAML). */
#define BKEY(p) ((p)->yaml ? "block " : "BlockName=")

/* The aggregation levels the block sizes enforce (bit k: 2^k base blocks),
 * checked as slurmctld 24.11 to 26.05 checks BlockSizes= and block_sizes:
 * each a multiple of the first (the base) by a power of two up to 2^15.
 * Without sizes, Slurm's default: levels 0 to 4. */
static int size_levels(struct bparse *p, const struct tp__block_sizes *s,
		       unsigned *levels)
{
	*levels = 0x1f;
	if (!s || s->n <= 0)
		return 0;
	int n = s->n, max = (int)(sizeof s->size / sizeof s->size[0]);
	char key[sizeof s->size / sizeof s->size[0] * 12 + 16] = "block_sizes";
	if (!p->yaml) {
		int len = snprintf(key, sizeof key, "BlockSizes=");
		for (int i = 0; i < n && i < max; i++)
			len += snprintf(key + len, sizeof key - (size_t)len, "%s%d",
					i ? "," : "", s->size[i]);
	}
	if (n > max)
		return berr(p, s->line, TP_EINVAL, "%s: more than %d sizes", key, max);
	*levels = 0;
	for (int i = 0; i < n; i++) {
		int x = s->size[i], base = s->size[0];
		if (x < 1)
			return berr(p, s->line, TP_EINVAL,
				    "%s: %d: expected a positive node count", key, x);
		long r = x / base;
		if (x % base || (r & (r - 1)) || r > (1L << TP__BLOCK_MAX_LEVEL))
			return berr(p, s->line, TP_EINVAL,
				    "%s: %d is not the base size %d times a power of "
				    "two (up to 2^%d)", key, x, base, TP__BLOCK_MAX_LEVEL);
		int l = 0;
		while (r > 1) {
			r >>= 1;
			l++;
		}
		*levels |= 1u << l;
	}
	return 0;
}

/* The blocks of the records: names (one each), lines, hostlists. */
static int add_blocks(struct bparse *p, const struct tp__topo_recs *r)
{
	struct tp_blocks *k = p->k;
	k->bname = calloc((size_t)r->n, sizeof *k->bname);
	k->bline = calloc((size_t)r->n, sizeof *k->bline);
	p->nodes = calloc((size_t)r->n, sizeof *p->nodes);
	if (!k->bname || !k->bline || !p->nodes)
		return berr(p, 0, TP_ENOMEM, "out of memory");
	for (int32_t b = 0; b < r->n; b++) {
		const struct tp__topo_rec *c = &r->rec[b];
		if (!c->name)
			return berr(p, c->line, TP_EINVAL, "a block without a name%s",
				    p->yaml ? " (block:)" : "");
		uint32_t h = tp__name_hash(c->name);
		int prev = tp__names_find(&p->by_name, k->bname, c->name, h);
		if (prev >= 0)
			return berr(p, c->line, TP_EINVAL,
				    "%s%s: duplicate block (first at line %d)", BKEY(p),
				    c->name, k->bline[prev]);
		k->bname[b] = strdup(c->name);
		k->bline[b] = c->line;
		p->nodes[b] = c->nodes && *c->nodes ? c->nodes : NULL;
		k->nblocks = b + 1;
		if (!k->bname[b] || tp__names_add(&p->by_name, h, b))
			return berr(p, 0, TP_ENOMEM, "out of memory");
	}
	return 0;
}

/* Placing the nodes of block b (tp__machine_add_list's callbacks): the
 * next node is i.  A node placed before (in an earlier block, or earlier
 * in this one) is left where it is and counted for the warning. */
struct place_ctx {
	struct bparse *p;
	tp_machine *m;
	int32_t b, i;
	int64_t ndup;           /* this block's nodes placed before */
	int32_t dup_block;      /* the block of the first of them */
	char dup_name[TP__HOSTNAME_MAX];
};

static void place_coord(void *arg, int64_t j, int *c)
{
	const struct place_ctx *x = arg;
	*c = x->i + (int)j;
}

static int place_one(void *arg, const char *h)
{
	struct place_ctx *x = arg;
	struct tp_blocks *k = x->p->k;
	int coord = x->i;
	/* a block known to list a node twice, in a machine sized without
	 * those: the name first, the coordinate may be past the end */
	int32_t dup = x->p->dup_in[x->b] ? tp_machine_find_node(x->m, h) : -1;
	tp_error e;
	tp_error_clear(&e);
	int idx = dup >= 0 ? TP_EINVAL : tp__machine_add(x->m, h, &coord, &dup, &e);
	if (idx < 0 && dup >= 0) {
		if (!x->ndup++) {
			x->dup_block = k->node_block[dup];
			snprintf(x->dup_name, sizeof x->dup_name, "%s", h);
		}
		return 0;
	}
	if (idx < 0)
		return berr(x->p, k->bline[x->b], idx, "%s%s: %s", BKEY(x->p),
			    k->bname[x->b], e.msg);
	k->node_block[x->i++] = x->b;
	return 0;
}

static int place_ran(void *arg, int32_t first, int32_t count)
{
	struct place_ctx *x = arg;
	(void)first;   /* == x->i: nodes are numbered as placed */
	for (int32_t j = 0; j < count; j++)
		x->p->k->node_block[x->i++] = x->b;
	return 0;
}

static int place_fail(void *arg, int rc, const tp_error *e)
{
	struct place_ctx *x = arg;
	struct tp_blocks *k = x->p->k;
	return berr(x->p, k->bline[x->b], rc, "%s%s: %s", BKEY(x->p),
		    k->bname[x->b], e->msg);
}

/* The warning for block b's nodes listed before. */
static void warn_dups(const struct place_ctx *x)
{
	const struct bparse *p = x->p;
	const struct tp_blocks *k = p->k;
	char more[48] = "";
	if (x->ndup > 1)
		snprintf(more, sizeof more, " and %lld more", (long long)(x->ndup - 1));
	if (x->dup_block == x->b)
		tp__warn(p->warn, "%s:%d: %s%s lists node '%s'%s twice; each counts once",
			 p->what, k->bline[x->b], BKEY(p), k->bname[x->b], x->dup_name,
			 more);
	else
		tp__warn(p->warn, "%s:%d: node '%s'%s %s in two blocks ('%s' at line %d "
			 "and '%s'); Slurm puts such a node in both, topoplace in the "
			 "first only", p->what, k->bline[x->b], x->dup_name, more,
			 x->ndup > 1 ? "are" : "is", k->bname[x->dup_block],
			 k->bline[x->dup_block], k->bname[x->b]);
}

/* Every block's nodes into a new machine of total nodes: node i at
 * coordinate i.  *placed: the nodes placed (fewer than total when a node
 * is listed twice); warn: say which. */
static int place_all(struct bparse *p, int32_t total, int named, bool warn,
		     tp_machine **out, int32_t *placed)
{
	struct tp_blocks *k = p->k;
	tp_machine *m = NULL;
	tp_error e;
	tp_error_clear(&e);
	int dims = (int)total, rc;
	bool wrap = false;
	if ((rc = tp__machine_new(&m, 1, &dims, &wrap, tp__block_machines[0], NULL, &e)))
		return berr(p, 0, rc, "%s", e.msg);
	if (tp__machine_reserve(m, total) || tp__names_reserve(&m->by_name, (size_t)named)) {
		tp_machine_destroy(m);
		return berr(p, 0, TP_ENOMEM, "out of memory");
	}
	struct place_ctx x = { p, m, 0, 0, 0, 0, "" };
	for (int32_t b = 0; b < k->nblocks && !rc; b++) {
		k->bfirst[b] = x.i;
		if (!p->nodes[b])
			continue;
		x.b = b;
		x.ndup = 0;
		struct tp__hostlist *hl;
		int64_t cnt;
		tp_error_clear(&e);
		/* parsed once already: only memory can fail here */
		if (tp__hostlist_parse(p->nodes[b], "Nodes=", TP__BLOCK_MAX_NODES, "",
				       &hl, &cnt, &e)) {
			rc = berr(p, k->bline[b], TP_ENOMEM, "out of memory");
			break;
		}
		/* a block that lists a node twice goes name by name: a range
		 * is placed whole or not at all, and a range over such a node
		 * would not fit the machine sized without it */
		static const struct tp__add_list ops = { TP__LIST_RUN_MIN, place_coord,
							 place_one, place_ran, place_fail };
		static const struct tp__add_list by_name = { UINT64_MAX, place_coord,
							     place_one, place_ran, place_fail };
		rc = tp__machine_add_list(m, hl, p->dup_in[b] ? &by_name : &ops, &x);
		tp__hostlist_free(hl);
		if (!rc && x.ndup)
			p->dup_in[b] = true;
		if (!rc && x.ndup && warn)
			warn_dups(&x);
	}
	if (rc) {
		tp_machine_destroy(m);
		return rc;
	}
	k->bfirst[k->nblocks] = x.i;
	*placed = x.i;
	*out = m;
	return 0;
}

/* Each block's nodes, counted, bounded and placed; the base block size. */
static int place_nodes(struct bparse *p, const struct tp__block_sizes *sizes,
		       tp_machine **out)
{
	struct tp_blocks *k = p->k;
	int64_t total = 0;
	k->bfirst = tp__calloc((size_t)k->nblocks + 1, sizeof(int32_t));
	int64_t *cnt = tp__calloc((size_t)k->nblocks, sizeof(int64_t));
	if (!k->bfirst || !cnt) {
		free(cnt);
		return berr(p, 0, TP_ENOMEM, "out of memory");
	}
	int rc = 0, named = 0;
	for (int32_t b = 0; b < k->nblocks && !rc; b++) {
		if (!p->nodes[b])
			continue;
		char what[TP_ERROR_MSG_MAX / 2];
		snprintf(what, sizeof what, p->yaml ? "block %s: nodes %s" : "BlockName=%s Nodes=%s",
			 k->bname[b], p->nodes[b]);
		tp_error e;
		tp_error_clear(&e);
		struct tp__hostlist *hl;
		rc = tp__hostlist_parse(p->nodes[b], what, TP__BLOCK_MAX_NODES,
					"the most nodes a block network may have", &hl,
					&cnt[b], &e);
		if (rc) {
			rc = berr(p, k->bline[b], rc, "%s", e.msg);
		} else {
			named += tp__add_list_named(hl, TP__LIST_RUN_MIN);
			tp__hostlist_free(hl);
		}
		if (!rc && cnt[b] > TP__BLOCK_MAX_NODES - total)
			rc = berr(p, k->bline[b], TP_EINVAL,
				  "more than %lld nodes in the blocks",
				  (long long)TP__BLOCK_MAX_NODES);
		total += rc ? 0 : cnt[b];
	}
	/* Slurm refuses blocks without nodes when BlockSizes= is not set, and
	 * only warns when it is: a skeleton, whose nodes join at run time
	 * (slurm_join.c); until they do there is nothing to place on */
	if (!rc && total == 0 && (!sizes || sizes->n == 0))
		rc = berr(p, 0, TP_EINVAL, "no block has nodes and %s is not set "
			  "(slurmctld refuses it)", p->yaml ? "block_sizes:" : "BlockSizes=");
	else if (!rc && total == 0)
		rc = berr(p, 0, TP_ENOENT, "empty blocks (Slurm only warns), %s; "
			  "until then jobs keep Slurm's placement", TP__NET_SKELETON);
	if (!rc) {
		/* Slurm: BlockSizes='s first, else the first block with nodes */
		int32_t b = 0;
		while (!cnt[b])
			b++;
		k->base = sizes && sizes->n > 0 ? sizes->size[0] : (int)cnt[b];
	}
	free(cnt);
	k->node_block = rc ? NULL : tp__malloc_array((size_t)total, sizeof(int32_t));
	p->dup_in = rc ? NULL : tp__calloc((size_t)k->nblocks, sizeof(bool));
	if (!rc && (!k->node_block || !p->dup_in))
		rc = berr(p, 0, TP_ENOMEM, "out of memory");
	tp_machine *m = NULL;
	int32_t placed = 0;
	if (!rc)
		rc = place_all(p, (int32_t)total, named, false, &m, &placed);
	if (!rc && placed < total) {
		/* a node listed twice: again, one router per node placed, and
		 * the warnings said */
		tp_machine_destroy(m);
		m = NULL;
		p->dup = true;
		rc = place_all(p, placed, named, true, &m, &placed);
	}
	if (rc)
		return rc;
	k->n = placed;
	*out = m;
	return 0;
}

/* ---- the network between the blocks ---- */

struct text {
	char *s;
	size_t n, cap;
	bool oom;
};

__attribute__((format(printf, 2, 3)))
static void put(struct text *t, const char *fmt, ...)
{
	for (int tries = 0; tries < 2 && !t->oom; tries++) {
		va_list ap;
		va_start(ap, fmt);
		int k = vsnprintf(t->s + t->n, t->cap - t->n, fmt, ap);
		va_end(ap);
		if (k < 0) {
			t->oom = true;
			return;
		}
		if ((size_t)k < t->cap - t->n) {
			t->n += (size_t)k;
			return;
		}
		size_t nc = (t->cap + (size_t)k + 1) * 2;
		char *ns = realloc(t->s, nc);
		if (!ns) {
			t->oom = true;
			return;
		}
		t->s = ns;
		t->cap = nc;
	}
}

/* The aggregation levels in use: the enforced ones below the first that
 * covers every block (Slurm stops there too). */
static int agg_levels(const struct tp_blocks *k, int *lv)
{
	int n = 0;
	for (int l = 1; l <= TP__BLOCK_MAX_LEVEL; l++) {
		if (!(k->levels >> l & 1))
			continue;
		lv[n++] = l;
		if (((int64_t)1 << l) >= k->nblocks)
			break;
	}
	return n;
}

/* Nodes of blocks j 2^l .. (j+1) 2^l - 1: aggregated block j of level l
 * (level 0: block j); an aggregate with none gets no switch. */
static int64_t agg_nodes(const struct tp_blocks *k, int l, int64_t j)
{
	int64_t lo = j << l, hi = (j + 1) << l;
	if (lo >= k->nblocks)
		return 0;
	if (hi > k->nblocks)
		hi = k->nblocks;
	return k->bfirst[hi] - k->bfirst[lo];
}

/* The switches of level l (prefix "b" or "a<l>_") among lo..hi that have
 * nodes, as one hostlist: "b[0-2,5]". */
static void put_switches(struct text *t, const struct tp_blocks *k, int l,
			 int64_t lo, int64_t hi)
{
	if (l)
		put(t, "a%d_[", l);
	else
		put(t, "b[");
	const char *sep = "";
	for (int64_t j = lo; j <= hi; j++) {
		if (!agg_nodes(k, l, j))
			continue;
		int64_t e = j;
		while (e < hi && agg_nodes(k, l, e + 1))
			e++;
		if (e > j)
			put(t, "%s%lld-%lld", sep, (long long)j, (long long)e);
		else
			put(t, "%s%lld", sep, (long long)j);
		sep = ",";
		j = e;
	}
	put(t, "]");
}

/* The switches of the generated tree, as records (strings owned). */
struct gen_tree {
	struct tp__topo_rec *rec;
	size_t n, cap;
	bool oom;
};

/* A string of up to about cap characters to put() into. */
static struct text text_new(size_t cap)
{
	struct text t = { malloc(cap), 0, cap, false };
	t.oom = !t.s;
	return t;
}

/* The string t holds (the caller frees it), or NULL when memory ran out. */
static char *text_take(struct text *t)
{
	if (!t->oom)
		return t->s;
	free(t->s);
	return NULL;
}

/* One switch: its name and either the nodes or the switches below it (each
 * a text, taken). */
static void gen_switch(struct gen_tree *g, struct text *name, struct text *nodes,
		       struct text *switches)
{
	char *nm = text_take(name);
	char *nd = nodes ? text_take(nodes) : NULL;
	char *sw = switches ? text_take(switches) : NULL;
	if (!g->oom && nm && (nd || sw) &&
	    !tp__grow((void **)&g->rec, g->n, &g->cap, sizeof *g->rec)) {
		/* line: the record's number, as the lines of a file would be */
		g->rec[g->n] = (struct tp__topo_rec){ nm, nd, sw, (int)g->n + 1 };
		g->n++;
		return;
	}
	g->oom = true;
	free(nm);
	free(nd);
	free(sw);
}

static void gen_tree_free(struct gen_tree *g)
{
	for (size_t i = 0; i < g->n; i++) {
		free((char *)g->rec[i].name);
		free((char *)g->rec[i].nodes);
		free((char *)g->rec[i].switches);
	}
	free(g->rec);
}

/* The tree Slurm's aggregation makes, as switch records: "b<i>" over
 * block i's nodes, "a<l>_<j>" over the switches of aggregate j of level l
 * (those of the next lower level in use), "top" over the highest ones when
 * there are several.  A block without nodes, or an aggregate of such
 * blocks only, has no switch: it keeps its slot (the aggregates stay
 * aligned as in Slurm) but no switch without nodes below it is drawn.
 * Slurm leaves out a last, partial aggregate that holds no more blocks than
 * the level below; here it is a switch over a single lower one, so that its
 * blocks still meet the others only at the next level.  nodes: each
 * block's hostlist.  TP_ENOMEM when memory ran out (g holds what was
 * made, for gen_tree_free). */
static int generated_tree(const char *const *nodes, const struct tp_blocks *k,
			  struct gen_tree *g)
{
	int lv[TP__BLOCK_MAX_LEVEL + 1];
	int nl = agg_levels(k, lv);
	for (int32_t b = 0; b < k->nblocks; b++) {
		if (!agg_nodes(k, 0, b))
			continue;
		struct text name = text_new(16), list = text_new(strlen(nodes[b]) + 1);
		put(&name, "b%d", b);
		/* the block's own hostlist, checked; its blanks are
		 * separators, as commas */
		put(&list, "%s", nodes[b]);
		for (size_t i = 0; !list.oom && i < list.n; i++)
			if (list.s[i] == ' ' || list.s[i] == '\t' || list.s[i] == '\n')
				list.s[i] = ',';
		gen_switch(g, &name, &list, NULL);
	}
	int prev = 0;            /* level of the switches below (0: blocks) */
	int64_t nprev = k->nblocks;
	for (int i = 0; i < nl && nprev > 1; i++) {
		int l = lv[i];
		int64_t na = (k->nblocks + ((int64_t)1 << l) - 1) >> l;
		for (int64_t j = 0; j < na; j++) {
			if (!agg_nodes(k, l, j))
				continue;
			/* the lower switches j 2^(l-prev) .. (j+1) 2^(l-prev) - 1 */
			int64_t lo = j << (l - prev), hi = ((j + 1) << (l - prev)) - 1;
			struct text name = text_new(32), below = text_new(64);
			put(&name, "a%d_%lld", l, (long long)j);
			put_switches(&below, k, prev, lo, hi < nprev ? hi : nprev - 1);
			gen_switch(g, &name, NULL, &below);
		}
		prev = l;
		nprev = na;
	}
	int64_t tops = 0;
	for (int64_t j = 0; j < nprev; j++)
		tops += agg_nodes(k, prev, j) > 0;
	if (tops > 1) {
		struct text name = text_new(4), below = text_new(64);
		put(&name, "top");
		put_switches(&below, k, prev, 0, nprev - 1);
		gen_switch(g, &name, NULL, &below);
	}
	return g->oom ? TP_ENOMEM : 0;
}

/* The nodes below a switch of the generated tree, by its name (b<i>,
 * a<l>_<j>, top). */
static int64_t generated_below(const struct tp_blocks *k, const char *nm)
{
	if (nm[0] == 'b')
		return agg_nodes(k, 0, strtoll(nm + 1, NULL, 10));
	if (nm[0] == 'a')
		return agg_nodes(k, (int)strtol(nm + 1, NULL, 10),
				 strtoll(strchr(nm, '_') + 1, NULL, 10));
	return k->n;
}

/* Weights of every directed link (one table, read by the congestion loops
 * through m->link_weight; both directions of a cable alike): a node's NVLink
 * port 1 / block bandwidth; the tree's node ports 1 / network bandwidth; its
 * switch links from the nodes below (generated tree), else the tree's own
 * (LevelBandwidth=) or the network bandwidth. */
static int link_weights(struct tp_blocks *k)
{
	int64_t nl = tp_machine_link_count(k->tree);
	int32_t nreal = tp_machine_switch_count(k->tree);
	const int64_t ports = 2 * (int64_t)k->n;
	k->weight = tp__malloc_array((size_t)ports + (size_t)nl + 1, sizeof(double));
	if (!k->weight)
		return TP_ENOMEM;
	for (int64_t i = 0; i < ports; i++)
		k->weight[i] = 1.0 / k->bbw;
	bool level_bw = tp_machine_has_level_bandwidth(k->tree);
	for (int64_t l = 0; l < nl; l++) {
		double w = 1.0 / k->nbw;      /* node ports; switch links default */
		int64_t sw = l >> 1;          /* the switch below the link */
		if (sw < nreal && !k->tree_file) {
			int64_t below = generated_below(k, tp_machine_switch_name(k->tree,
										  (int32_t)sw));
			if (below > 0)
				w = 1.0 / (k->nbw * (double)below);
		} else if (sw < nreal && level_bw) {
			w = tp__link_weight(k->tree, l);
		}
		k->weight[ports + l] = w;
	}
	return 0;
}

/* Each block's place in the tree's hierarchy (see hierarchy()): how many
 * switches, from the top, all its nodes share, and whether the lowest of
 * them (the anchor) holds other blocks' nodes too, so that the block is a
 * group of its own below it. */
static int find_anchors(struct tp_blocks *k)
{
	const tp_machine *t = k->tree;
	int64_t nsw = tp_machine_link_count(t) / 2;   /* ids 0..nsw-1 */
	int32_t *owner = tp__malloc_array((size_t)nsw + 1, sizeof(int32_t));
	int64_t *asw = tp__malloc_array((size_t)k->nblocks, sizeof(int64_t));
	k->anchor = tp__malloc_array((size_t)k->nblocks, sizeof(int));
	k->own_group = tp__calloc((size_t)k->nblocks, sizeof(bool));
	if (!owner || !asw || !k->anchor || !k->own_group) {
		free(owner);
		free(asw);
		return TP_ENOMEM;
	}
	for (int64_t s = 0; s < nsw; s++)
		owner[s] = -1;          /* -1: no block yet, -2: several */
	int64_t first[TP__HIER_MAX_LEVELS], path[TP__HIER_MAX_LEVELS];
	for (int32_t b = 0; b < k->nblocks; b++) {
		int n = -1;
		for (int32_t i = k->bfirst[b]; i < k->bfirst[b + 1]; i++) {
			int64_t *p = i == k->bfirst[b] ? first : path;
			const int *tr = &t->coords[(size_t)k->tree_node[i] * (size_t)t->ndims];
			int len = t->net->hierarchy(t, tr, p, TP__HIER_MAX_LEVELS);
			if (len < 0) {
				n = -1;         /* too deep: no hierarchy */
				break;
			}
			int c = 0;
			while (c < len && (p == first || c < n) && p[c] == first[c])
				c++;
			n = c;
			for (int d = 0; d < len; d++)
				if (owner[p[d]] != b)
					owner[p[d]] = owner[p[d]] == -1 ? b : -2;
		}
		k->anchor[b] = n;
		asw[b] = n > 0 ? first[n - 1] : -1;
	}
	for (int32_t b = 0; b < k->nblocks; b++)
		k->own_group[b] = asw[b] < 0 || owner[asw[b]] != b;
	free(owner);
	free(asw);
	return 0;
}

/* Block b's nodes from node i on, in the tree (each_listed's callback). */
struct tree_ctx {
	struct bparse *p;
	const char *tw;
	int32_t b, i;
};

static int tree_nodes(void *arg, int32_t first, int32_t count,
		      const struct tp__listed *l)
{
	struct tree_ctx *x = arg;
	struct tp_blocks *k = x->p->k;
	if (first < 0) {
		char name[TP__HOSTNAME_MAX];
		return berr(x->p, k->bline[x->b], TP_EINVAL,
			    "node '%s' of %s%s is under no switch of %s",
			    tp__listed_name(l, 0, name), BKEY(x->p), k->bname[x->b], x->tw);
	}
	for (int32_t j = 0; j < count; j++)
		k->tree_node[x->i++] = first + j;
	return 0;
}

/* Every node of m in the tree: by each block's hostlist (a numbered range a
 * span of the tree's nodes at a time), or, when a node is listed twice
 * (the hostlists then say more than m), name by name. */
static int tree_nodes_all(struct bparse *p, const tp_machine *m, const char *tw)
{
	struct tp_blocks *k = p->k;
	int rc = 0;
	if (p->dup) {
		for (int32_t i = 0; i < k->n && !rc; i++) {
			const char *nm = tp_machine_node_name(m, i);
			int32_t t = nm ? tp_machine_find_node(k->tree, nm) : -1;
			if (!nm)
				rc = berr(p, 0, TP_ENOMEM, "out of memory");
			else if (t < 0)
				rc = berr(p, k->bline[k->node_block[i]], TP_EINVAL,
					  "node '%s' of %s%s is under no switch of %s", nm,
					  BKEY(p), k->bname[k->node_block[i]], tw);
			else
				k->tree_node[i] = t;
		}
		return rc;
	}
	struct tree_ctx x = { p, tw, 0, 0 };
	for (int32_t b = 0; b < k->nblocks && !rc; b++) {
		if (!p->nodes[b])
			continue;
		struct tp__hostlist *hl = NULL;
		int64_t cnt;
		tp_error e;
		tp_error_clear(&e);
		x.b = b;
		x.i = k->bfirst[b];
		rc = tp__hostlist_parse(p->nodes[b], "Nodes=", TP__BLOCK_MAX_NODES, "",
					&hl, &cnt, &e)
			     ? berr(p, k->bline[b], TP_ENOMEM, "out of memory")
			     : tp__machine_each_listed(k->tree, hl, tree_nodes, &x);
		if (hl)
			tp__hostlist_free(hl);
	}
	return rc;
}

/* The tree between the blocks: from the tree's records (a topology.conf's
 * text, TreeTopologyFile=, comes as records too: the reader turns it into
 * them), else generated; every block node must be in it. */
static int make_tree(struct bparse *p, const tp_machine *m, const tp_block_opts *o,
		     const struct tp__topo_recs *tree)
{
	struct tp_blocks *k = p->k;
	int rc;
	const char *tw = o && o->tree_what ? o->tree_what
		       : tree && tree->what ? tree->what : "tree topology";
	if (tree) {
		struct tp__topo_opts to = { .warn = tree->warn };
		k->tree_file = true;
		rc = tp__tree_from_records(&k->tree, tree, &to, p->err);
	} else {
		struct gen_tree g = { NULL, 0, 0, false };
		if (generated_tree(p->nodes, k, &g)) {
			gen_tree_free(&g);
			return berr(p, 0, TP_ENOMEM, "out of memory");
		}
		struct tp__topo_recs r = { g.rec, (int32_t)g.n, "the blocks' network",
					   false, NULL };
		tp_error e;
		tp_error_clear(&e);
		rc = tp__tree_from_records(&k->tree, &r, NULL, &e);
		gen_tree_free(&g);
		if (rc)
			return berr(p, 0, rc, "%s", e.msg);
	}
	if (!rc && k->tree_file && o && o->nlevel_bandwidth > 0 && k->nbw > 0)
		rc = tp_machine_set_tree_level_bandwidth(k->tree, o->level_bandwidth,
							 o->nlevel_bandwidth, p->err);
	if (rc)
		return rc;
	k->tree_node = tp__malloc_array((size_t)k->n + 1, sizeof(int32_t));
	if (!k->tree_node)
		return berr(p, 0, TP_ENOMEM, "out of memory");
	if ((rc = tree_nodes_all(p, m, tw)))
		return rc;
	rc = k->nbw > 0 ? link_weights(k) : 0;
	if (!rc)
		rc = find_anchors(k);
	return rc ? berr(p, 0, TP_ENOMEM, "out of memory") : 0;
}

static int check_opts(const char *what, const tp_block_opts *o, bool tree_recs,
		      tp_error *err)
{
	if (!o)
		return 0;
	if (o->tree_text)   /* conf/'s: tp__blocks_with_tree_text */
		return tp_error_set(err, TP_EINVAL, "%s: the tree between the blocks "
				    "comes as records, not as text", what);
	if ((o->block_bandwidth > 0) != (o->network_bandwidth > 0) ||
	    o->block_bandwidth < 0 || o->network_bandwidth < 0 ||
	    !isfinite(o->block_bandwidth) || !isfinite(o->network_bandwidth))
		return tp_error_set(err, TP_EINVAL,
				    "%s: give both the block and the network bandwidth "
				    "(positive numbers), or neither", what);
	if (o->network_cost < 0 || o->network_cost == 1 || o->network_cost > 1000000)
		return tp_error_set(err, TP_EINVAL,
				    "%s: network cost %d: expected 2..1000000 (a network "
				    "link must cost more than an NVLink-domain link)",
				    what, o->network_cost);
	if (o->network_cards < 0 || o->network_cards > TP__RAILS_MAX)
		return tp_error_set(err, TP_EINVAL, "%s: %d network cards a node: "
				    "expected 1..%d", what, o->network_cards,
				    TP__RAILS_MAX);
	if (o->nlevel_bandwidth < 0 || (o->nlevel_bandwidth > 0 &&
					(!o->level_bandwidth || !tree_recs)))
		return tp_error_set(err, TP_EINVAL,
				    "%s: level bandwidths need a tree topology", what);
	return 0;
}

int tp__blocks_from_records(tp_machine **out, const struct tp__topo_recs *r,
			    const struct tp__block_sizes *sizes,
			    const struct tp__topo_recs *tree,
			    const tp_block_opts *opts, tp_error *err)
{
	const char *what = r && r->what ? r->what : "block topology";
	if (!out || !r || (r->n > 0 && !r->rec))
		return tp_error_set(err, TP_EINVAL, "%s: missing records or output", what);
	*out = NULL;
	int rc = check_opts(what, opts, tree != NULL, err);
	if (rc)
		return rc;
	struct bparse p;
	memset(&p, 0, sizeof p);
	p.what = what;
	p.yaml = r->yaml;
	p.warn = r->warn;
	p.err = err;
	p.k = calloc(1, sizeof *p.k);
	if (!p.k)
		return tp_error_set(err, TP_ENOMEM, "%s: out of memory", what);
	struct tp_blocks *k = p.k;
	if (r->n <= 0)
		rc = berr(&p, 0, TP_EINVAL, "%s", r->yaml ? "no blocks" : "no BlockName= lines");
	if (!rc)
		rc = size_levels(&p, sizes, &k->levels);
	if (!rc)
		rc = add_blocks(&p, r);
	k->cost = opts && opts->network_cost ? opts->network_cost : DEFAULT_NETWORK_COST;
	k->cards = opts ? opts->network_cards : 0;
	if (opts && opts->block_bandwidth > 0) {
		k->bbw = opts->block_bandwidth;
		k->nbw = opts->network_bandwidth;
		if (!opts->network_cost) {
			double q = floor(k->bbw / k->nbw + 0.5);
			k->cost = q < 2 ? 2 : q > 1000000 ? 1000000 : (int)q;
		}
	}
	tp_machine *m = NULL;
	if (!rc)
		rc = place_nodes(&p, sizes, &m);
	if (!rc)
		rc = make_tree(&p, m, opts, tree);
	free(p.nodes);
	free(p.dup_in);
	tp__names_free(&p.by_name);
	if (rc) {
		tp_machine_destroy(m);
		tp__blocks_free(k);
		return rc;
	}
	m->net_data = k;
	m->link_weight = k->weight;
	*out = m;
	return 0;
}
