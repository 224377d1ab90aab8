/* topoplace — block networks: Slurm's topology/block (Slurm 23.11 and
 * later), NVLink domains such as GB200 NVL72 racks.
 *
 *   BlockName=nvl0 Nodes=gb[001-018]      a base block: one NVLink domain
 *   BlockName=nvl1 Nodes=gb[019-036]
 *   BlockSizes=18,36,72                   base block size, then the sizes of
 *                                         the aggregated blocks Slurm enforces
 *
 * As Slurm reads it (topology.conf(5), src/plugins/topology/block): blocks
 * in file order; BlockSizes= starts with the base block size (default: the
 * first block's node count), each later size is the base size times a power
 * of two (at most 2^15), larger than the one before; without BlockSizes=
 * every aggregation level up to 16 blocks counts.  An aggregated block of
 * level k is 2^k consecutive base blocks, aligned (blocks j 2^k ..
 * (j+1) 2^k - 1).  Every block must hold at least the base block size of
 * nodes; a node is in one block only.
 *
 * The model: every node has two ways out.  Its link into its block's NVLink
 * switch carries all traffic to the nodes of its own block (two links: up to
 * the switch, down to the other node).  Traffic to another block leaves
 * through the node's network port into the network between the blocks,
 * which is a tree: either the one of a Slurm topology/tree file given with
 * the blocks (TreeTopologyFile= in the config), or, without one, the
 * aggregation Slurm enforces: a leaf switch per base block, one switch per
 * aggregated block of each enforced level, a top switch over the highest
 * ones.  Routes cross the tree up/down (tree.c); each link of it costs
 * network_cost NVLink-domain links (default 4: a message between two blocks
 * on one leaf switch costs 8, one inside a block 2).
 *
 * Machine: one dimension, the node number (blocks in file order, a block's
 * nodes in its hostlist's order); every node is a router of its own.  Links
 * are full duplex, one id per direction (network.h): node i's NVLink-domain
 * link is 2i going up to the block's switch and 2i + 1 coming down from it;
 * the tree's directed link l (tree.c: 2s up, 2s + 1 down) is 2n + l.
 * Congestion: with bandwidths (GB/s, one direction) a byte weighs
 * 1 / block_bandwidth on an NVLink-domain link and 1 / network_bandwidth on
 * a node's network port; a switch link of the generated tree carries what
 * the nodes below it inject (non-blocking: 1 / (network_bandwidth x nodes
 * below)); a switch link of a tree file weighs 1 / network_bandwidth, or
 * 1 / its level's bandwidth when LevelBandwidth= is given (one value per
 * level of switch links, as for Network=tree).  Without bandwidths every link weighs 1.
 */
#include <limits.h>
#include <math.h>
#include <metis.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "metis_load.h"
#include "network.h"

#define MAX_BLOCK_LEVEL 15          /* Slurm: block sizes up to base x 2^15 */
#define DEFAULT_NETWORK_COST 4
#define TP_BLOCK_NODES_MAX 4096      /* nodes of one block split by METIS */
/* Nodes of a block network: each is added twice (the machine and the tree
 * between the blocks), so the bound is lower than a tree's; the largest
 * NVLink-domain systems have tens of thousands of nodes. */
#define MAX_BLOCK_NODES ((int64_t)1 << 18)

/* The block network (m->net_data). */
struct tp_blocks {
	int32_t n;              /* nodes */
	int32_t nblocks;
	char **bname;           /* block names, owned */
	int *bline;             /* line of each block */
	int32_t *bfirst;        /* nblocks + 1: first node of each block */
	int32_t *node_block;    /* n */
	int base;               /* base block size (BlockSizes= first value) */
	unsigned levels;        /* bit k: aggregation level k enforced */
	tp_machine *tree;       /* the network between the blocks */
	int32_t *tree_node;     /* n: the node's index in tree */
	bool tree_file;         /* tree from a file (else generated) */
	int cost;               /* network link cost */
	double bbw, nbw;        /* bandwidths; 0: links weigh 1 */
	double *weight;         /* every link's weight of one byte, n node
				   ports then the tree's links (bandwidths
				   given; m->link_weight), else NULL */
	int *anchor;            /* nblocks: how many switches of the tree's
				   hierarchy all of the block's nodes share
				   (-1: deeper than TP__HIER_MAX_LEVELS) */
	bool *own_group;        /* nblocks: the block is a group below its
				   anchor (the anchor holds other blocks) */
};

static const struct tp_net_ops block_ops;

static const struct tp_blocks *blocks_of(const tp_machine *m)
{
	return m && m->net == &block_ops ? m->net_data : NULL;
}

/* ---- the network ---- */

static int64_t distance(const struct tp_machine *m, const int *a, const int *b)
{
	const struct tp_blocks *k = m->net_data;
	if (a[0] == b[0])
		return 0;
	if (k->node_block[a[0]] == k->node_block[b[0]])
		return 2;
	return k->cost * tp_machine_distance(k->tree, k->tree_node[a[0]],
					     k->tree_node[b[0]]);
}

/* Two distinct nodes are at least 2 apart: 2 inside a block, two network
 * links (2 x cost) between blocks. */
static int64_t range_lower_bound(const struct tp_machine *m, const int *p,
				 const int *lo, const int *hi)
{
	const struct tp_blocks *k = m->net_data;
	if (p[0] >= lo[0] && p[0] <= hi[0])
		return 0;
	int32_t b = k->node_block[p[0]];
	if (k->bfirst[b] <= hi[0] && k->bfirst[b + 1] - 1 >= lo[0])
		return 2;
	return 2 * (int64_t)k->cost;
}

static int route(const struct tp_machine *m, const int *a, const int *b,
		 int64_t *links, int cap)
{
	const struct tp_blocks *k = m->net_data;
	if (a[0] == b[0])
		return 0;
	if (k->node_block[a[0]] == k->node_block[b[0]]) {
		if (cap < 2 || !links)
			return TP_EINVAL;
		links[0] = 2 * (int64_t)a[0];        /* a up to the switch */
		links[1] = 2 * (int64_t)b[0] + 1;    /* down to b */
		return 2;
	}
	int len = tp_machine_route(k->tree, k->tree_node[a[0]], k->tree_node[b[0]],
				   links, cap);
	for (int i = 0; i < len; i++)
		links[i] += 2 * (int64_t)k->n;
	return len;
}

static int64_t max_route_links(const struct tp_machine *m)
{
	const struct tp_blocks *k = m->net_data;
	int64_t t = k->tree->net->max_route_links(k->tree);
	return t > 2 ? t : 2;
}

static int64_t link_count(const struct tp_machine *m)
{
	const struct tp_blocks *k = m->net_data;
	return 2 * (int64_t)k->n + tp_machine_link_count(k->tree);
}

static void link_name(const struct tp_machine *m, int64_t link, char *buf,
		      size_t len)
{
	const struct tp_blocks *k = m->net_data;
	if (link < 2 * (int64_t)k->n) {
		int32_t i = (int32_t)(link >> 1);
		char node[TP__HOSTNAME_MAX];
		tp__machine_name_put(m, i, node);
		const char *blk = k->bname[k->node_block[i]];
		if (link & 1)
			snprintf(buf, len, "%s(NVLink)->%s", blk, node);
		else
			snprintf(buf, len, "%s->%s(NVLink)", node, blk);
	} else {
		tp_machine_link_name(k->tree, link - 2 * (int64_t)k->n, buf, len);
	}
}

static double max_link_bandwidth(const struct tp_machine *m)
{
	const struct tp_blocks *k = m->net_data;
	if (!k->weight)
		return 0.0;
	double mx = k->bbw;
	int64_t nl = tp_machine_link_count(k->tree);
	for (int64_t l = 0; l < nl; l++) {
		double w = k->weight[2 * (int64_t)k->n + l];
		if (w > 0 && 1.0 / w > mx)
			mx = 1.0 / w;
	}
	return mx;
}

/* Block keys in the hierarchy: above every switch id of the tree. */
#define BLOCK_KEY(b) (((int64_t)1 << 32) + (b))

/* The tree's switches that hold all of the node's block, top first, then
 * the block itself unless the lowest of them holds only that block (the
 * generated tree's b<i>): nodes -> blocks -> aggregated blocks or the
 * switches of the tree file. */
static int hierarchy(const struct tp_machine *m, const int *r, int64_t *path,
		     int cap)
{
	const struct tp_blocks *k = m->net_data;
	int32_t b = k->node_block[r[0]];
	int n = k->anchor[b];
	if (n < 0 || n + k->own_group[b] > cap)
		return TP_EINVAL;
	/* the anchor is a prefix of every node's path: the first node's */
	const tp_machine *t = k->tree;
	int64_t full[TP__HIER_MAX_LEVELS];
	const int *tr = &t->coords[(size_t)k->tree_node[k->bfirst[b]] * (size_t)t->ndims];
	if (t->net->hierarchy(t, tr, full, TP__HIER_MAX_LEVELS) < n)
		return TP_EINVAL;
	memcpy(path, full, sizeof(int64_t) * (size_t)n);
	if (k->own_group[b])
		path[n++] = BLOCK_KEY(b);
	return n;
}

static void blocks_free(struct tp_blocks *k)
{
	if (!k)
		return;
	for (int32_t b = 0; b < k->nblocks; b++)
		free(k->bname[b]);
	free(k->bname);
	free(k->bline);
	free(k->bfirst);
	free(k->node_block);
	free(k->tree_node);
	free(k->weight);
	free(k->anchor);
	free(k->own_group);
	tp_machine_destroy(k->tree);
	free(k);
}

static void destroy(void *net_data)
{
	blocks_free(net_data);
}

static const struct tp_net_ops block_ops = {
	.kind = "block",
	.distance = distance,
	.range_lower_bound = range_lower_bound,
	.route = route,
	.max_route_links = max_route_links,
	.link_count = link_count,
	.link_name = link_name,
	.max_link_bandwidth = max_link_bandwidth,
	.destroy = destroy,
	.hierarchy = hierarchy,
};

/* ---- the block file ---- */

struct bparse {
	const char *what;
	tp_error *err;
	struct tp_blocks *k;
	struct tp__names by_name;  /* the blocks by k->bname */
	char **nodes;           /* each block's Nodes= */
	int32_t cap;
	int sizes_line;         /* BlockSizes= line, 0: not given */
	int nsizes;
	int sizes[MAX_BLOCK_LEVEL + 2];
};

/* An error naming the block file (and the line, when not 0). */
#define berr(p, line, code, ...) \
	tp__line_error((p)->err, (p)->what, (line), (code), __VA_ARGS__)

static int parse_sizes(struct bparse *p, const char *v, int line)
{
	if (p->sizes_line)
		return berr(p, line, TP_EINVAL, "BlockSizes= given twice (first on line %d)",
			    p->sizes_line);
	p->sizes_line = line;
	const char *s = v;
	while (*s) {
		char *end;
		long x = strtol(s, &end, 10);
		if (end == s || (*end && *end != ',') || x < 1 || x > INT_MAX / 2)
			return berr(p, line, TP_EINVAL,
				    "BlockSizes=%s: expected node counts separated by commas", v);
		if (p->nsizes == MAX_BLOCK_LEVEL + 1)
			return berr(p, line, TP_EINVAL, "BlockSizes=%s: more than %d sizes",
				    v, MAX_BLOCK_LEVEL + 1);
		int prev = p->nsizes ? p->sizes[p->nsizes - 1] : 0;
		if (p->nsizes) {
			long r = x / p->sizes[0];
			if (x % p->sizes[0] || x <= prev || (r & (r - 1)) ||
			    r > (1L << MAX_BLOCK_LEVEL))
				return berr(p, line, TP_EINVAL,
					    "BlockSizes=%s: %ld is not the base size %d times a "
					    "power of two (up to 2^%d) larger than %d",
					    v, x, p->sizes[0], MAX_BLOCK_LEVEL, prev);
		}
		p->sizes[p->nsizes++] = (int)x;
		s = *end ? end + 1 : end;
	}
	if (!p->nsizes)
		return berr(p, line, TP_EINVAL, "BlockSizes=: empty value");
	return 0;
}

static int find_block(const struct bparse *p, const char *name)
{
	return tp__names_find(&p->by_name, p->k->bname, name, tp__name_hash(name));
}

static int add_block(struct bparse *p, const char *name, const char *nodes,
		     int line)
{
	struct tp_blocks *k = p->k;
	if (!nodes)
		return berr(p, line, TP_EINVAL, "BlockName=%s without Nodes=", name);
	int prev = find_block(p, name);
	if (prev >= 0)
		return berr(p, line, TP_EINVAL,
			    "BlockName=%s: duplicate block (first at line %d)", name,
			    k->bline[prev]);
	if (k->nblocks == p->cap) {
		int32_t nc = p->cap ? p->cap * 2 : 16;
		char **nb = realloc(k->bname, sizeof *nb * (size_t)nc);
		if (nb)
			k->bname = nb;
		int *nl = nb ? realloc(k->bline, sizeof *nl * (size_t)nc) : NULL;
		if (nl)
			k->bline = nl;
		char **nn = nl ? realloc(p->nodes, sizeof *nn * (size_t)nc) : NULL;
		if (!nn)
			return berr(p, 0, TP_ENOMEM, "out of memory");
		p->nodes = nn;
		p->cap = nc;
	}
	k->bname[k->nblocks] = strdup(name);
	p->nodes[k->nblocks] = strdup(nodes);
	k->bline[k->nblocks] = line;
	k->nblocks++;
	if (!k->bname[k->nblocks - 1] || !p->nodes[k->nblocks - 1] ||
	    tp__names_add(&p->by_name, tp__name_hash(name), k->nblocks - 1))
		return berr(p, 0, TP_ENOMEM, "out of memory");
	return 0;
}

static int parse_line(void *arg, char *s, int line)
{
	struct bparse *p = arg;
	const char *name = NULL, *nodes = NULL;
	char *save = NULL;
	for (char *tok = strtok_r(s, " \t\r", &save); tok;
	     tok = strtok_r(NULL, " \t\r", &save)) {
		char *eq = strchr(tok, '=');
		if (!eq || eq == tok)
			return berr(p, line, TP_EINVAL, "'%s': expected Key=Value", tok);
		*eq = '\0';
		const char *v = eq + 1;
		if (!*v)
			return berr(p, line, TP_EINVAL, "%s=: empty value", tok);
		const char **slot;
		if (!strcasecmp(tok, "BlockName"))
			slot = &name;
		else if (!strcasecmp(tok, "Nodes"))
			slot = &nodes;
		else if (!strcasecmp(tok, "BlockSizes")) {
			int rc = parse_sizes(p, v, line);
			if (rc)
				return rc;
			continue;
		} else
			return berr(p, line, TP_EINVAL,
				    "unknown key '%s' (expected BlockName=, Nodes=, BlockSizes=)%s",
				    tok, !strcasecmp(tok, "SwitchName")
				    ? "; a switch tree goes in a file of its own" : "");
		if (*slot)
			return berr(p, line, TP_EINVAL, "%s= given twice", tok);
		*slot = v;
	}
	if (nodes && !name)
		return berr(p, line, TP_EINVAL, "Nodes= without BlockName=");
	if (name && (strchr(name, '[') || strchr(name, ',')))
		return berr(p, line, TP_EINVAL, "BlockName=%s: one block per line", name);
	return name ? add_block(p, name, nodes, line) : 0;
}

/* Placing the nodes of block b (tp__machine_add_list's callbacks): the
 * next node is i. */
struct place_ctx {
	struct bparse *p;
	tp_machine *m;
	int32_t b, i;
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
	int32_t dup = -1;
	tp_error e;
	tp_error_clear(&e);
	int idx = tp__machine_add(x->m, h, &coord, &dup, &e);
	if (idx < 0 && dup >= 0)
		return berr(x->p, k->bline[x->b], TP_EINVAL,
			    "node '%s' is in two blocks ('%s' at line %d and '%s')",
			    h, k->bname[k->node_block[dup]],
			    k->bline[k->node_block[dup]], k->bname[x->b]);
	if (idx < 0)
		return berr(x->p, k->bline[x->b], idx, "BlockName=%s: %s",
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
	return berr(x->p, k->bline[x->b], rc, "BlockName=%s: %s", k->bname[x->b],
		    e->msg);
}

/* Each block's nodes, counted, bounded and placed: node i at coordinate i. */
static int place_nodes(struct bparse *p, tp_machine **out)
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
		char what[TP_ERROR_MSG_MAX / 2];
		snprintf(what, sizeof what, "BlockName=%s Nodes=%s", k->bname[b],
			 p->nodes[b]);
		tp_error e;
		tp_error_clear(&e);
		struct tp__hostlist *hl;
		rc = tp__hostlist_parse(p->nodes[b], what, MAX_BLOCK_NODES,
					"the most nodes a block network may have", &hl,
					&cnt[b], &e);
		if (rc) {
			rc = berr(p, k->bline[b], rc, "%s", e.msg);
		} else {
			named += tp__add_list_named(hl, TP__LIST_RUN_MIN);
			tp__hostlist_free(hl);
		}
		if (!rc && cnt[b] > MAX_BLOCK_NODES - total)
			rc = berr(p, k->bline[b], TP_EINVAL,
				  "more than %lld nodes in the blocks",
				  (long long)MAX_BLOCK_NODES);
		total += rc ? 0 : cnt[b];
	}
	if (!rc && total == 0)
		rc = berr(p, 0, TP_EINVAL, "no nodes in the blocks");
	if (!rc) {
		k->base = p->nsizes ? p->sizes[0] : (int)cnt[0];
		for (int32_t b = 0; b < k->nblocks && !rc; b++)
			if (cnt[b] < k->base)
				rc = berr(p, k->bline[b], TP_EINVAL,
					  "BlockName=%s has %lld node%s, fewer than the base "
					  "block size %d%s", k->bname[b], (long long)cnt[b],
					  cnt[b] == 1 ? "" : "s", k->base,
					  p->nsizes ? " (BlockSizes=)" : " (the first block's)");
	}
	k->n = (int32_t)total;
	k->node_block = rc ? NULL : tp__malloc_array((size_t)total, sizeof(int32_t));
	if (!rc && !k->node_block)
		rc = berr(p, 0, TP_ENOMEM, "out of memory");
	tp_machine *m = NULL;
	if (!rc) {
		tp_error e;
		tp_error_clear(&e);
		int dims = (int)total;
		bool wrap = false;
		if ((rc = tp__machine_new(&m, 1, &dims, &wrap, &block_ops, NULL, &e)))
			rc = berr(p, 0, rc, "%s", e.msg);
		else if (tp__machine_reserve(m, total) ||
			 tp__names_reserve(&m->by_name, (size_t)named))
			rc = berr(p, 0, TP_ENOMEM, "out of memory");
	}
	struct place_ctx x = { p, m, 0, 0 };
	for (int32_t b = 0; b < k->nblocks && !rc; b++) {
		k->bfirst[b] = x.i;
		x.b = b;
		struct tp__hostlist *hl;
		tp_error e;
		tp_error_clear(&e);
		/* parsed once already: only memory can fail here */
		if (tp__hostlist_parse(p->nodes[b], "Nodes=", MAX_BLOCK_NODES, "",
				       &hl, &cnt[b], &e)) {
			rc = berr(p, k->bline[b], TP_ENOMEM, "out of memory");
			break;
		}
		static const struct tp__add_list ops = { TP__LIST_RUN_MIN, place_coord,
							 place_one, place_ran, place_fail };
		rc = tp__machine_add_list(m, hl, &ops, &x);
		tp__hostlist_free(hl);
	}
	int32_t i = x.i;
	if (!rc)
		k->bfirst[k->nblocks] = i;
	free(cnt);
	if (rc) {
		tp_machine_destroy(m);
		return rc;
	}
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
	for (int l = 1; l <= MAX_BLOCK_LEVEL; l++) {
		if (!(k->levels >> l & 1))
			continue;
		lv[n++] = l;
		if (((int64_t)1 << l) >= k->nblocks)
			break;
	}
	return n;
}

/* The tree Slurm's aggregation makes, as topology.conf text: "b<i>" over
 * block i's nodes, "a<l>_<j>" over the switches of aggregate j of level l
 * (those of the next lower level in use), "top" over the highest ones when
 * there are several.  below[] (switches in text order) gets the nodes
 * under each switch.  nodes: each block's Nodes= hostlist. */
static int generated_tree(char *const *nodes, const struct tp_blocks *k,
			  char **out, int64_t **below_out, int32_t *nsw_out)
{
	struct text t = { malloc(4096), 0, 4096, false };
	int lv[MAX_BLOCK_LEVEL + 1];
	int nl = agg_levels(k, lv);
	int64_t nsw = k->nblocks + 1;
	for (int i = 0; i < nl; i++)
		nsw += (k->nblocks + ((int64_t)1 << lv[i]) - 1) >> lv[i];
	int64_t *below = tp__calloc((size_t)nsw, sizeof(int64_t));
	if (!below || !t.s) {
		free(below);
		free(t.s);
		return TP_ENOMEM;
	}
	int32_t s = 0;
	for (int32_t b = 0; b < k->nblocks; b++) {
		/* the block's own hostlist: checked, and short */
		put(&t, "SwitchName=b%d Nodes=%s\n", b, nodes[b]);
		below[s++] = k->bfirst[b + 1] - k->bfirst[b];
	}
	int prev = 0;            /* level of the switches below (0: blocks) */
	int64_t nprev = k->nblocks;
	for (int i = 0; i < nl && nprev > 1; i++) {
		int l = lv[i];
		int64_t na = (k->nblocks + ((int64_t)1 << l) - 1) >> l;
		for (int64_t j = 0; j < na; j++) {
			/* the lower switches j 2^(l-prev) .. (j+1) 2^(l-prev) - 1 */
			int64_t lo = j << (l - prev), hi = ((j + 1) << (l - prev)) - 1;
			if (hi >= nprev)
				hi = nprev - 1;
			if (prev)
				put(&t, "SwitchName=a%d_%lld Switches=a%d_[%lld-%lld]\n", l,
				    (long long)j, prev, (long long)lo, (long long)hi);
			else
				put(&t, "SwitchName=a%d_%lld Switches=b[%lld-%lld]\n", l,
				    (long long)j, (long long)lo, (long long)hi);
			int64_t bl = j << l, bh = ((j + 1) << l);
			if (bh > k->nblocks)
				bh = k->nblocks;
			below[s++] = k->bfirst[bh] - k->bfirst[bl];
		}
		prev = l;
		nprev = na;
	}
	if (nprev > 1) {
		if (prev)
			put(&t, "SwitchName=top Switches=a%d_[0-%lld]\n", prev,
			    (long long)nprev - 1);
		else
			put(&t, "SwitchName=top Switches=b[0-%lld]\n", (long long)nprev - 1);
		below[s++] = k->n;
	}
	if (t.oom) {
		free(t.s);
		free(below);
		return TP_ENOMEM;
	}
	*out = t.s;
	*below_out = below;
	*nsw_out = s;
	return 0;
}

/* Weights of every directed link (one table, read by the congestion loops
 * through m->link_weight; both directions of a cable alike): a node's NVLink
 * port 1 / block bandwidth; the tree's node ports 1 / network bandwidth; its
 * switch links from below (nodes under each generated switch, in text
 * order), else the tree's own (LevelBandwidth=) or the network
 * bandwidth. */
static int link_weights(struct tp_blocks *k, const int64_t *below, int32_t nsw)
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
		if (sw < nreal && below) {
			/* switch sw is "b<i>", "a<l>_<j>" or "top": its position
			 * in the generated text */
			const char *nm = tp_machine_switch_name(k->tree, (int32_t)sw);
			int32_t pos = -1;
			if (nm[0] == 'b') {
				pos = (int32_t)strtol(nm + 1, NULL, 10);
			} else if (nm[0] == 't') {
				pos = nsw - 1;
			} else {
				/* a<l>_<j>: count the switches of the levels before */
				int lev = (int)strtol(nm + 1, NULL, 10);
				int64_t j = strtoll(strchr(nm, '_') + 1, NULL, 10);
				int lv[MAX_BLOCK_LEVEL + 1];
				int n = agg_levels(k, lv);
				int64_t off = k->nblocks;
				for (int i = 0; i < n && lv[i] < lev; i++)
					off += (k->nblocks + ((int64_t)1 << lv[i]) - 1) >> lv[i];
				pos = (int32_t)(off + j);
			}
			if (pos >= 0 && pos < nsw && below[pos] > 0)
				w = 1.0 / (k->nbw * (double)below[pos]);
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
			    "node '%s' of BlockName=%s is under no switch of %s",
			    tp__listed_name(l, 0, name), k->bname[x->b], x->tw);
	}
	for (int32_t j = 0; j < count; j++)
		k->tree_node[x->i++] = first + j;
	return 0;
}

/* The tree: from tree_text, or generated; every block node must be in it. */
static int make_tree(struct bparse *p, const tp_block_opts *o)
{
	struct tp_blocks *k = p->k;
	char *gen = NULL;
	int64_t *below = NULL;
	int32_t nsw = 0;
	int rc;
	const char *tw = o && o->tree_what ? o->tree_what : "tree topology";
	if (o && o->tree_text) {
		k->tree_file = true;
		rc = tp_machine_from_topology(&k->tree, o->tree_text, tw, NULL, 0,
					      p->err);
		if (!rc && o->nlevel_bandwidth > 0 && k->nbw > 0)
			rc = tp_machine_set_tree_level_bandwidth(k->tree, o->level_bandwidth,
								 o->nlevel_bandwidth, p->err);
		if (rc)
			return rc;
	} else {
		if (generated_tree(p->nodes, k, &gen, &below, &nsw))
			return berr(p, 0, TP_ENOMEM, "out of memory");
		tp_error e;
		tp_error_clear(&e);
		rc = tp_machine_from_topology(&k->tree, gen, "the blocks' network", NULL,
					      0, &e);
		free(gen);
		if (rc) {
			free(below);
			return berr(p, 0, rc, "%s", e.msg);
		}
	}
	k->tree_node = tp__malloc_array((size_t)k->n + 1, sizeof(int32_t));
	if (!k->tree_node) {
		free(below);
		return berr(p, 0, TP_ENOMEM, "out of memory");
	}
	/* each block's nodes in the tree, by its hostlist (the block's nodes
	 * in order): a numbered range a span of the tree's nodes at a time */
	struct tree_ctx x = { p, tw, 0, 0 };
	for (int32_t b = 0; b < k->nblocks && !rc; b++) {
		struct tp__hostlist *hl = NULL;
		int64_t cnt;
		tp_error e;
		tp_error_clear(&e);
		x.b = b;
		x.i = k->bfirst[b];
		rc = tp__hostlist_parse(p->nodes[b], "Nodes=", MAX_BLOCK_NODES, "",
					&hl, &cnt, &e)
			     ? berr(p, k->bline[b], TP_ENOMEM, "out of memory")
			     : tp__machine_each_listed(k->tree, hl, tree_nodes, &x);
		if (hl)
			tp__hostlist_free(hl);
	}
	if (rc) {
		free(below);
		return rc;
	}
	rc = k->nbw > 0 ? link_weights(k, below, nsw) : 0;
	free(below);
	if (!rc)
		rc = find_anchors(k);
	return rc ? berr(p, 0, TP_ENOMEM, "out of memory") : 0;
}

static int check_opts(const char *what, const tp_block_opts *o, tp_error *err)
{
	if (!o)
		return 0;
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
	if (o->nlevel_bandwidth < 0 || (o->nlevel_bandwidth > 0 &&
					(!o->level_bandwidth || !o->tree_text)))
		return tp_error_set(err, TP_EINVAL,
				    "%s: level bandwidths need a tree topology", what);
	return 0;
}

int tp_machine_from_blocks(tp_machine **out, const char *text, const char *what,
			   const tp_block_opts *opts, tp_error *err)
{
	if (!what)
		what = "block topology";
	if (!out || !text)
		return tp_error_set(err, TP_EINVAL, "%s: missing text or output", what);
	*out = NULL;
	int rc = check_opts(what, opts, err);
	if (rc)
		return rc;
	struct bparse p;
	memset(&p, 0, sizeof p);
	p.what = what;
	p.err = err;
	p.k = calloc(1, sizeof *p.k);
	if (!p.k)
		return tp_error_set(err, TP_ENOMEM, "%s: out of memory", what);
	rc = tp__each_conf_line(text, what, err, parse_line, &p);
	if (!rc && p.k->nblocks == 0)
		rc = berr(&p, 0, TP_EINVAL, "no BlockName= lines");
	struct tp_blocks *k = p.k;
	/* enforced levels: BlockSizes=, else Slurm's default 0..4 */
	k->levels = 0x1f;
	if (p.nsizes) {
		k->levels = 0;
		for (int i = 0; i < p.nsizes; i++) {
			int r = p.sizes[i] / p.sizes[0], l = 0;
			while (r > 1) {
				r >>= 1;
				l++;
			}
			k->levels |= 1u << l;
		}
	}
	k->cost = opts && opts->network_cost ? opts->network_cost : DEFAULT_NETWORK_COST;
	if (opts && opts->block_bandwidth > 0) {
		k->bbw = opts->block_bandwidth;
		k->nbw = opts->network_bandwidth;
		if (!opts->network_cost) {
			double r = floor(k->bbw / k->nbw + 0.5);
			k->cost = r < 2 ? 2 : r > 1000000 ? 1000000 : (int)r;
		}
	}
	tp_machine *m = NULL;
	if (!rc)
		rc = place_nodes(&p, &m);
	if (!rc)
		rc = make_tree(&p, opts);
	for (int32_t b = 0; b < k->nblocks; b++)
		free(p.nodes[b]);
	free(p.nodes);
	tp__names_free(&p.by_name);
	if (rc) {
		tp_machine_destroy(m);
		blocks_free(k);
		return rc;
	}
	m->net_data = k;
	m->link_weight = k->weight;
	*out = m;
	return 0;
}

bool tp_machine_is_block(const tp_machine *m)
{
	return blocks_of(m) != NULL;
}

int32_t tp_machine_block_count(const tp_machine *m)
{
	const struct tp_blocks *k = blocks_of(m);
	return k ? k->nblocks : 0;
}

const char *tp_machine_block_name(const tp_machine *m, int32_t b)
{
	const struct tp_blocks *k = blocks_of(m);
	return k && b >= 0 && b < k->nblocks ? k->bname[b] : NULL;
}

int32_t tp_machine_node_block(const tp_machine *m, int32_t node)
{
	const struct tp_blocks *k = blocks_of(m);
	return k && node >= 0 && node < k->n ? k->node_block[node] : -1;
}

int tp_machine_block_base_size(const tp_machine *m)
{
	const struct tp_blocks *k = blocks_of(m);
	return k ? k->base : 0;
}

int tp_machine_block_network_cost(const tp_machine *m)
{
	const struct tp_blocks *k = blocks_of(m);
	return k ? k->cost : 0;
}

const tp_machine *tp_machine_block_tree(const tp_machine *m)
{
	const struct tp_blocks *k = blocks_of(m);
	return k ? k->tree : NULL;
}

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

/* Tasks T[0..nT) into parts 0..k-1 of exactly want[p] tasks each (sum nT):
 * METIS, then the tasks of overfull parts moved, best gain first (bytes to
 * the new part minus bytes to the old), to parts with room. */
static int split_exact(struct unit_split *u, const int32_t *T, int32_t nT,
		       const int64_t *want, int k, idx_t *part)
{
	const tp_graph *g = u->g;
	for (int32_t i = 0; i < nT; i++)
		u->local[T[i]] = i;
	int64_t ne;
	double W;
	tp__metis_sub_count(g, T, nT, u->local, &ne, &W);
	/* start: parts in order */
	int64_t acc = 0;
	for (int p = 0, i = 0; p < k; p++)
		for (acc += want[p]; i < acc && i < nT; i++)
			part[i] = p;
	int rc = 0;
	if (k > 1 && ne > 0 && nT >= 3 && ne <= INT32_MAX / 2) {
		idx_t *xadj = tp__malloc_array((size_t)nT + 1, sizeof(idx_t));
		idx_t *adj = tp__malloc_array((size_t)ne, sizeof(idx_t));
		idx_t *wgt = tp__malloc_array((size_t)ne, sizeof(idx_t));
		real_t *tpw = tp__malloc_array((size_t)k, sizeof(real_t));
		idx_t *mp = tp__malloc_array((size_t)nT, sizeof(idx_t));
		if (!xadj || !adj || !wgt || !tpw || !mp) {
			rc = TP_ENOMEM;
		} else {
			tp__metis_sub_fill(g, T, nT, u->local, W, xadj, adj, wgt);
			real_t left = 1;
			for (int p = 0; p < k; p++) {
				tpw[p] = p == k - 1 ? left : (real_t)want[p] / (real_t)nT;
				left -= tpw[p];
			}
			if (tpw[k - 1] < 0)
				tpw[k - 1] = 0;
			idx_t nv = nT, ncon = 1, np = k, obj = 0;
			idx_t opts[METIS_NOPTIONS];
			u->metis.set_default_options(opts);
			opts[METIS_OPTION_SEED] = u->seed;
			opts[METIS_OPTION_NUMBERING] = 0;
			opts[METIS_OPTION_UFACTOR] = 1;
			if (u->metis.part_graph_recursive(&nv, &ncon, xadj, adj, NULL,
							  NULL, wgt, &np, tpw, NULL,
							  opts, &obj, mp) == METIS_OK)
				memcpy(part, mp, sizeof(idx_t) * (size_t)nT);
		}
		free(xadj);
		free(adj);
		free(wgt);
		free(tpw);
		free(mp);
	}
	int64_t *cnt = rc ? NULL : tp__calloc((size_t)k, sizeof(int64_t));
	double *to = rc ? NULL : tp__calloc((size_t)k, sizeof(double));
	if (!rc && (!cnt || !to))
		rc = TP_ENOMEM;
	for (int32_t i = 0; !rc && i < nT; i++)
		cnt[part[i]]++;
	for (;;) {
		/* the best move out of any overfull part into a part with room */
		int32_t bt = -1;
		int bq = -1;
		double bg = 0;
		for (int32_t i = 0; !rc && i < nT; i++) {
			int p = (int)part[i];
			if (cnt[p] <= want[p])
				continue;
			memset(to, 0, sizeof(double) * (size_t)k);
			const int32_t t = T[i];
			for (int64_t e = g->xadj[t]; e < g->xadj[t + 1]; e++) {
				int32_t l = u->local[g->adjncy[e]];
				if (l >= 0)
					to[part[l]] += tp__graph_w(g, e);
			}
			for (int q = 0; q < k; q++)
				if (cnt[q] < want[q] && (bt < 0 || to[q] - to[p] > bg)) {
					bt = i;
					bq = q;
					bg = to[q] - to[p];
				}
		}
		if (rc || bt < 0)
			break;
		cnt[part[bt]]--;
		cnt[bq]++;
		part[bt] = bq;
	}
	for (int32_t i = 0; i < nT; i++)
		u->local[T[i]] = -1;
	free(cnt);
	free(to);
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
	const struct tp_blocks *k = blocks_of(a->m);
	if (!k)
		return tp_error_set(err, TP_ENOTSUP, "blocks: not a block network");
	int32_t nn = a->nnodes, nt = g->ntasks;
	if (nt > a->total_slots)
		return tp_error_set(err, TP_EINVAL, "blocks: %ld tasks, %lld slots",
				    (long)nt, (long long)a->total_slots);
	/* the job's blocks in Slurm's order, each with its nodes in order */
	int32_t *bidx = tp__malloc_array((size_t)k->nblocks, sizeof(int32_t));
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
	/* the plugin on a node without libmetis5: TP_ENOTSUP, auto goes on */
	if ((rc = tp__metis_open(&u.metis, err)))
		goto out;
	metis_open = true;
	for (int32_t b = 0; b < k->nblocks; b++)
		bidx[b] = -1;
	int nb = 0;
	for (int32_t i = 0; i < nn; i++) {
		int32_t b = k->node_block[a->node[i]];
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
			order[fill[bidx[k->node_block[a->node[i]]]]++] = i;
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
