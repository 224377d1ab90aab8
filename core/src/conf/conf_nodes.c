/* topoplace — topoplace.conf's NodeName= lines: the nodes they place
 * (Coords=, CoordOrder= and Offset=, or a kind's own placing), the nodes
 * they give node models to, and the bookkeeping of every placed node: the
 * line that placed it ("already placed at FILE:LINE") and its model.
 * tp__conf_hostlist and tp__conf_place are the kinds' way in.
 */
#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <topoplace/conf.h>
#include "conf/conf_kind.h"
#include "util/hostlist.h"
#include "util/util_internal.h"
#include "conf/conf_loader.h"
#include "net/machine_internal.h"

/* ---- node bookkeeping ---- */

int tp__ld_add_src(struct loader *ld, const char *name)
{
	char **ns = realloc(ld->srcs, (size_t)(ld->nsrcs + 1) * sizeof *ns);
	if (!ns)
		return -1;
	ld->srcs = ns;
	if (!(ns[ld->nsrcs] = strdup(name)))
		return -1;
	return ld->nsrcs++;
}

/* Record topology pair t (-1: none) for machine node idx. */
static int node_topo_set(tp_conf *c, int32_t idx, int t)
{
	if (t < 0 && !c->node_topo)
		return 0;
	if (idx >= c->node_topo_cap) {
		int32_t ncap = c->node_topo_cap ? c->node_topo_cap : 1024;
		while (ncap <= idx)
			ncap *= 2;
		int32_t *nt = tp__realloc_array(c->node_topo, (size_t)ncap, sizeof(int32_t));
		if (!nt)
			return -1;
		for (int32_t i = c->node_topo_cap; i < ncap; i++)
			nt[i] = -1;
		c->node_topo = nt;
		c->node_topo_cap = ncap;
	}
	c->node_topo[idx] = t;
	return 0;
}

/* Nodes first..first+count-1 were placed by line of source src (the nodes
 * are appended, so spans stay in node order). */
int tp__ld_origin_add(struct loader *ld, int32_t first, int64_t count, int line,
		      int src, int step)
{
	struct origin *o = ld->norigins ? &ld->origin[ld->norigins - 1] : NULL;
	/* a single node fits either kind of record */
	bool one = count == 1;
	if (o && o->src == src && o->span.first + o->span.count == first) {
		if ((step == 0 || one) && o->step == 0 && o->line == line) {
			o->span.count += (int32_t)count;
			return TP_OK;
		}
		if ((step == 1 || one) && (o->step == 1 || o->span.count == 1) &&
		    line == o->line + o->span.count) {
			o->step = 1;
			o->span.count += (int32_t)count;
			return TP_OK;
		}
	}
	if (tp__grow((void **)&ld->origin, ld->norigins, &ld->origin_cap,
		     sizeof *ld->origin))
		return oom(ld);
	ld->origin[ld->norigins++] = (struct origin){ { first, (int32_t)count },
						      line, one ? 0 : step, src };
	return TP_OK;
}

/* The span that placed node i; NULL for a node no line of this file placed
 * (one of a topology file's). */
static const struct origin *origin_of(const struct loader *ld, int32_t i)
{
	return tp__span_of(ld->origin, ld->norigins, sizeof *ld->origin, i);
}

/* "duplicate node 'NAME' (already placed at FILE:LINE)" for node prev, at
 * file:line. */
static int duplicate(struct loader *ld, const char *file, int line,
		     const char *name, int32_t prev)
{
	const struct origin *o = origin_of(ld, prev);
	if (!o)
		return lerr(ld, file, line, TP_EINVAL, "duplicate node '%s'", name);
	return lerr(ld, file, line, TP_EINVAL,
		    "duplicate node '%s' (already placed at %s:%d)",
		    name, ld->srcs[o->src],
		    (int)(o->line + o->step * (prev - o->span.first)));
}

#define GRID_RESERVE_MAX ((int64_t)1 << 22)

/* Room for n more nodes (a line that names many at once). */
int tp__ld_nodes_reserve(struct loader *ld, int64_t n, bool along_grid)
{
	/* at least double: a machine given as many NodeName= lines is then
	 * copied O(log lines) times, not once per line */
	const tp_machine *m = ld->c->b.m;
	int64_t want = (int64_t)m->nnodes + n;
	if (want > m->cap && want < 2 * (int64_t)m->cap)
		want = 2 * (int64_t)m->cap;
	/* Lines along the grid (CoordOrder=) usually fill it: room for every
	 * position at once spares the copies of growing.  Only address space
	 * until nodes are placed; bounded, since a sparse grid may be vast. */
	int64_t grid = m->nrouters > GRID_RESERVE_MAX / m->nodes_per_router
			       ? GRID_RESERVE_MAX
			       : m->nrouters * m->nodes_per_router;
	if (along_grid && want > m->cap && grid > want)
		want = grid;
	if (tp__machine_reserve(ld->c->b.m, want))
		return oom(ld);
	return TP_OK;
}

/* Place one node; file/line name the place it was given. */
int tp__ld_place_node(struct loader *ld, const char *name, const int *coords,
		      int src, int line)
{
	tp_machine *m = ld->c->b.m;
	const char *file = ld->srcs[src];
	tp_error e2;
	tp_error_clear(&e2);
	int32_t prev = -1;
	int idx = tp__machine_add(m, name, coords, &prev, &e2);
	if (idx < 0 && prev >= 0)
		return duplicate(ld, file, line, name, prev);
	if (idx < 0)
		return lerr(ld, file, line, idx, "%s", e2.msg);
	if (tp__ld_origin_add(ld, idx, 1, line, src, 0))
		return TP_ENOMEM;
	return node_topo_set(ld->c, idx, ld->cur_topo) < 0 ? oom(ld) : TP_OK;
}

/* ---- NodeName lines ----
 *
 * A NodeName= line goes through four phases: its keys are sorted out
 * (node_keys), NodeTopology=/GpuLinks= are recorded, the placement keys
 * are checked without expanding the hostlist (node_coords, node_order), and
 * then the hostlist is counted, bounded and its names placed one by one
 * (place_names). */

struct node_keys {
	const struct tp__conf_tok *name, *order, *offset, *coords, *topo, *links,
				  *linkbw;
};

/* The hostlist of a NodeName= line, counted and bounded before any name
 * is expanded. */
static int node_hostlist(struct loader *ld, const struct tp__conf_tok *name,
			 struct tp__hostlist **hl, int64_t *count)
{
	char what[TP_ERROR_MSG_MAX / 2];
	snprintf(what, sizeof what, "NodeName=%s", name->val);
	tp_error e2;
	tp_error_clear(&e2);
	int rc = tp__hostlist_parse(name->val, what, TP__MAX_CONF_NAMES,
				    "the most one config line may name", hl,
				    count, &e2);
	if (rc)
		return lerr(ld, NULL, name->line, rc, "%s", e2.msg);
	if (*count == 0) {
		tp__hostlist_free(*hl);
		*hl = NULL;
		return lerr(ld, NULL, name->line, TP_EINVAL,
			    "NodeName=%s: no node names", name->val);
	}
	return TP_OK;
}

/* How else the nodes of kind are placed, in messages. */
static const char *more_keys(const struct tp__conf_kind *kind)
{
	return kind->more_keys ? kind->more_keys : "";
}

static const char *place_files(const struct tp__conf_kind *kind)
{
	return kind->place_files ? kind->place_files : "CoordFile=";
}

/* A NodeName= line that places nothing: on a tree (whose nodes sit under
 * their switches) a check that every node is under a switch; anywhere it
 * gives nodes placed before (by a CoordFile=, or on a tree) their
 * NodeTopology= and GpuLinks= (a later line wins). */
struct model_ctx {
	struct loader *ld;
	const struct tp__conf_tok *name;
};

/* Nodes of a NodeName= line without placement: placed already (by the
 * topology, the block file or an earlier line); NodeTopology= for each. */
static int model_nodes(void *arg, int32_t first, int32_t count,
		       const struct tp__listed *l)
{
	struct model_ctx *x = arg;
	struct loader *ld = x->ld;
	const struct tp__conf_kind *kind = ld->c->kind;
	char host[TP__HOSTNAME_MAX];
	/* Slurm's topology is the partition's: other nodes are another's */
	if (first < 0 && ld->c->from_slurm)
		return 0;
	if (first < 0 && kind->nodes_sit)
		return lerr(ld, NULL, x->name->line, TP_EINVAL,
			    "NodeName=%s: node '%s' is %s of %s", x->name->val,
			    tp__listed_name(l, 0, host), kind->unplaced,
			    ld->c->b.topo_path);
	if (first < 0)
		return lerr(ld, NULL, x->name->line, TP_EINVAL,
			    "NodeName=%s: node '%s' is not placed (give Coords= or CoordOrder=%s, or place it with a %s line before this one)",
			    x->name->val, tp__listed_name(l, 0, host), more_keys(kind),
			    place_files(kind));
	if (ld->cur_topo >= 0)
		for (int32_t i = count; i-- > 0;)   /* the last first: one growth */
			if (node_topo_set(ld->c, first + i, ld->cur_topo) < 0)
				return oom(ld);
	return TP_OK;
}

static int model_line(struct loader *ld, const struct tp__conf_tok *name)
{
	struct tp__hostlist *hl;
	int64_t count;
	int rc = node_hostlist(ld, name, &hl, &count);
	if (rc)
		return rc;
	struct model_ctx x = { ld, name };
	rc = tp__machine_each_listed(ld->c->b.m, hl, model_nodes, &x);
	tp__hostlist_free(hl);
	return rc;
}

/* Sort the keys of a NodeName= line into k; each at most once. */
static int node_keys(struct loader *ld, const struct tp__conf_tok *toks, int n,
		     struct node_keys *k)
{
	memset(k, 0, sizeof *k);
	for (int i = 0; i < n; i++) {
		const struct tp__conf_tok *t = &toks[i];
		const struct tp__conf_tok **slot;
		if (!strcasecmp(t->key, "NodeName"))
			slot = &k->name;
		else if (!strcasecmp(t->key, "NodeTopology"))
			slot = &k->topo;
		else if (!strcasecmp(t->key, "GpuLinks"))
			slot = &k->links;
		else if (!strcasecmp(t->key, "GpuLinkBandwidth"))
			slot = &k->linkbw;
		else if (!strcasecmp(t->key, "CoordOrder"))
			slot = &k->order;
		else if (!strcasecmp(t->key, "Offset"))
			slot = &k->offset;
		else if (!strcasecmp(t->key, "Coords"))
			slot = &k->coords;
		else
			return lerr(ld, NULL, t->line, TP_EINVAL,
				    "%s=%s: not allowed on a NodeName= line (only CoordOrder=, Offset=, Coords=, NodeTopology=, GpuLinks=, GpuLinkBandwidth=)",
				    t->key, t->val);
		if (*slot)
			return lerr(ld, NULL, t->line, TP_EINVAL,
				    "%s= given twice on one line", t->key);
		*slot = t;
	}
	return TP_OK;
}

/* Coords=X,Y,Z: one position inside the grid. */
static int node_coords(struct loader *ld, const struct tp__conf_tok *coords, int *c)
{
	const tp_machine *m = ld->c->b.m;
	int nd = m->ndims;
	char tmp[256];
	if (strlen(coords->val) >= sizeof tmp)
		return lerr(ld, NULL, coords->line, TP_EINVAL,
			    "Coords=%.40s...: too long", coords->val);
	strcpy(tmp, coords->val);
	char *parts[TP_MAX_DIMS];
	int k = tp__ld_split(tmp, ',', parts, TP_MAX_DIMS);
	if (k != nd)
		return lerr(ld, NULL, coords->line, TP_EINVAL,
			    "Coords=%s: %s%d coordinates, Dims=%s has %d dimensions",
			    coords->val, k > TP_MAX_DIMS ? "more than " : "",
			    k > TP_MAX_DIMS ? TP_MAX_DIMS : k, ld->r.dims_text, nd);
	for (int d = 0; d < nd; d++) {
		long long v;
		int r = tp__conf_parse_ll(parts[d], INT_MIN, INT_MAX, &v);
		if (r == -1)
			return lerr(ld, NULL, coords->line, TP_EINVAL,
				    "Coords=%s: coordinate %d ('%s') is not a number",
				    coords->val, d, parts[d]);
		if (r == -2 || v < 0 || v >= m->dims[d])
			return lerr(ld, NULL, coords->line, TP_EINVAL,
				    "Coords=%s: coordinate %d is outside 0..%d",
				    coords->val, d, m->dims[d] - 1);
		c[d] = (int)v;
	}
	return TP_OK;
}

/* CoordOrder=x-major|z-major and Offset=N. */
static int node_order(struct loader *ld, const struct node_keys *k,
		      bool *x_major, long long *off)
{
	*off = 0;
	if (!strcasecmp(k->order->val, "x-major"))
		*x_major = true;
	else if (!strcasecmp(k->order->val, "z-major"))
		*x_major = false;
	else
		return lerr(ld, NULL, k->order->line, TP_EINVAL,
			    "CoordOrder=%s: expected x-major or z-major",
			    k->order->val);
	if (k->offset) {
		int r = tp__conf_parse_ll(k->offset->val, 0, INT64_MAX / 4, off);
		if (r)
			return lerr(ld, NULL, k->offset->line, TP_EINVAL,
				    "Offset=%s: %s", k->offset->val,
				    r == -1 ? "not a number" : "expected a number >= 0");
	}
	return TP_OK;
}

/* Position p of the grid in CoordOrder= order into c. */
static void order_coords(const tp_machine *m, bool x_major, int64_t p, int *c)
{
	int64_t q = p / m->nodes_per_router;
	if (x_major) {
		for (int d = 0; d < m->ndims; d++) {
			c[d] = (int)(q % m->dims[d]);
			q /= m->dims[d];
		}
	} else {
		for (int d = m->ndims - 1; d >= 0; d--) {
			c[d] = (int)(q % m->dims[d]);
			q /= m->dims[d];
		}
	}
}

/* Ranges shorter than this go name by name (the machine's table of runs
 * stays small whatever the config). */
#define RUN_MIN 256

/* The grid positions of a run, walked in order: an increment per node
 * instead of a division per dimension. */
struct run_place {
	const tp_machine *m;
	bool x_major;
	int64_t from, next;        /* next: the i that c[] holds */
	int sub;                   /* node on the router */
	int c[TP_MAX_DIMS];
};

static void run_coords(void *arg, int64_t i, int *c)
{
	struct run_place *rp = arg;
	const tp_machine *m = rp->m;
	if (i != rp->next) {
		order_coords(m, rp->x_major, rp->from + i, rp->c);
		rp->sub = (int)((rp->from + i) % m->nodes_per_router);
	}
	for (int d = 0; d < m->ndims; d++)
		c[d] = rp->c[d];
	rp->next = i + 1;
	if (++rp->sub < m->nodes_per_router)
		return;
	rp->sub = 0;
	int n = m->ndims;
	for (int k = 0; k < n; k++) {
		int d = rp->x_major ? k : n - 1 - k;
		if (++rp->c[d] < m->dims[d])
			return;
		rp->c[d] = 0;
	}
}

/* The names of run along the grid from position from. */
static int place_run(struct loader *ld, const struct tp__hostlist_run *run,
		     bool x_major, int64_t from, int line)
{
	tp_machine *m = ld->c->b.m;
	int32_t first = m->nnodes, prev = -1;
	int64_t count = (int64_t)(run->hi - run->lo) + 1;
	struct run_place rp = { .m = m, .x_major = x_major, .from = from,
				.next = -1 };
	tp_error e2;
	tp_error_clear(&e2);
	int rc = tp__machine_add_run(m, run, run_coords, &rp, &prev, &e2);
	if (rc && prev >= 0) {
		char name[TP__HOSTNAME_MAX];
		tp__machine_name_put(m, prev, name);
		return duplicate(ld, NULL, line, name, prev);
	}
	if (rc)
		return lerr(ld, NULL, line, rc, "%s", e2.msg);
	if (tp__ld_origin_add(ld, first, count, line, 0, 0))
		return TP_ENOMEM;
	if (ld->cur_topo >= 0)
		for (int64_t i = count; i-- > 0;)   /* the last first: one growth */
			if (node_topo_set(ld->c, first + (int32_t)i, ld->cur_topo) < 0)
				return oom(ld);
	return TP_OK;
}

/* Expand the hostlist and place its names: at c (Coords=) or along the
 * grid from position off (CoordOrder=). */
static int place_names(struct loader *ld, const struct node_keys *k, int *c,
		       bool x_major, long long off)
{
	const tp_machine *m = ld->c->b.m;
	const struct tp__conf_tok *name = k->name;
	int line = name->line;
	struct tp__hostlist *hl;
	int64_t count;
	int rc = node_hostlist(ld, name, &hl, &count);
	if (rc)
		return rc;
	int64_t per = m->nodes_per_router;
	int64_t positions = m->nrouters > INT64_MAX / per ? INT64_MAX : m->nrouters * per;
	if (k->coords && count != 1)
		rc = lerr(ld, NULL, line, TP_EINVAL,
			  "NodeName=%s: Coords= places one node, the hostlist has %lld names (use CoordOrder=)",
			  name->val, (long long)count);
	else if (k->order && off + count > positions)
		rc = lerr(ld, NULL, line, TP_EINVAL,
			  "NodeName=%s CoordOrder=%s: %lld nodes from position %lld go beyond the grid's %lld positions (Dims=%s, %lld per router)",
			  name->val, k->order->val, (long long)count, off,
			  (long long)positions, ld->r.dims_text, (long long)per);
	if (rc == TP_OK)
		rc = tp__ld_nodes_reserve(ld, count, k->order != NULL);
	/* Along the grid, a long numbered range ("nid[000000-158975]") is one
	 * record of the machine; other names go one by one. */
	char host[TP__HOSTNAME_MAX];
	struct tp__hostlist_run run;
	int got;
	for (int64_t i = 0; rc == TP_OK; i++) {
		got = tp__hostlist_next_run(hl, host, k->order ? RUN_MIN : UINT64_MAX,
					    &run);
		if (!got)
			break;
		if (got == 2) {
			rc = place_run(ld, &run, x_major, off + i, line);
			i += (int64_t)(run.hi - run.lo);
			continue;
		}
		if (k->order)
			order_coords(m, x_major, off + i, c);
		rc = tp__ld_place_node(ld, host, c, 0, line);
	}
	tp__hostlist_free(hl);
	return rc;
}

int tp__conf_hostlist(struct tp__conf_reader *r, const struct tp__conf_tok *name,
		      struct tp__hostlist **hl, int64_t *count)
{
	struct loader *ld = loader_of(r);
	*hl = NULL;
	int rc = node_hostlist(ld, name, hl, count);
	if (rc == TP_OK)
		rc = tp__ld_nodes_reserve(ld, *count, false);
	if (rc) {
		tp__hostlist_free(*hl);
		*hl = NULL;
	}
	return rc;
}

int tp__conf_place(struct tp__conf_reader *r, const char *name,
		   const int *coords, int line)
{
	return tp__ld_place_node(loader_of(r), name, coords, 0, line);
}

int tp__ld_node_line(struct loader *ld, const struct tp__conf_tok *toks, int n)
{
	struct node_keys k;
	ld->cur_topo = -1;
	int rc = node_keys(ld, toks, n, &k);
	if (rc)
		return rc;
	const struct tp__conf_tok *name = k.name;
	int line = name->line;
	if (!ld->r.net_line && !ld->c->b.m && (k.coords || k.order || k.offset))
		return lerr(ld, NULL, line, TP_EINVAL,
			    "NodeName= before Network= (Network= and Dims= must come "
			    "first; without Network=, Slurm's topology places the nodes)");
	if ((rc = tp__ld_ensure_machine(ld, line, "NodeName=")))
		return rc;
	if (k.links && !k.topo)
		return lerr(ld, NULL, k.links->line, TP_EINVAL,
			    "NodeName=%s: GpuLinks= needs NodeTopology=", name->val);
	/* GpuLinkBandwidth=: the speed of the links GpuLinks= only counts */
	if (k.linkbw && !k.links)
		return lerr(ld, NULL, k.linkbw->line, TP_EINVAL,
			    "NodeName=%s: GpuLinkBandwidth= needs GpuLinks= (an XML's "
			    "distances carry their own speed)", name->val);
	double linkbw = 0;
	if (k.linkbw && (rc = tp__conf_bandwidth(&ld->r, k.linkbw, &linkbw)))
		return rc;
	if (k.topo && (rc = tp__ld_add_topo(ld, k.topo, k.links, linkbw)) < 0)
		return rc;
	const struct tp__conf_tok *extra = k.coords ? k.coords : k.order ? k.order : k.offset;
	const struct tp__conf_kind *kind = ld->c->kind;
	bool in_file = ld->c->from_slurm || kind->nodes_sit;
	if (ld->c->from_slurm && extra)
		return lerr(ld, NULL, extra->line, TP_EINVAL,
			    "NodeName=%s: %s= does not apply to Slurm's topology (its file places the nodes)",
			    name->val, extra->key);
	if (in_file && extra)
		return lerr(ld, NULL, extra->line, TP_EINVAL,
			    "NodeName=%s: %s= does not apply to Network=%s (nodes sit %s in TopologyFile=)",
			    name->val, extra->key, kind->name, kind->nodes_sit);
	/* a kind may place the names it reads itself (NodeNameFormat=); a
	 * line without a place otherwise gives models to nodes placed before */
	void *state = tp__ld_state_of(ld, kind);
	if (!in_file && !extra && kind->names_place && kind->names_place(state))
		return kind->place_names(&ld->r, state, name);
	if (in_file || (!extra && k.topo))
		return model_line(ld, name);
	if (!k.coords && !k.order)
		return lerr(ld, NULL, line, TP_EINVAL,
			    "NodeName=%s: needs Coords= or CoordOrder=%s (or NodeTopology= for nodes a %s placed)",
			    name->val, more_keys(kind), place_files(kind));
	if (k.coords && k.order)
		return lerr(ld, NULL, k.coords->line, TP_EINVAL,
			    "NodeName=%s: Coords= and CoordOrder= exclude each other",
			    name->val);
	if (k.offset && !k.order)
		return lerr(ld, NULL, k.offset->line, TP_EINVAL,
			    "NodeName=%s: Offset= needs CoordOrder=", name->val);
	/* Everything cheap is checked before the hostlist is expanded. */
	int c[TP_MAX_DIMS];
	bool x_major = true;
	long long off = 0;
	rc = k.coords ? node_coords(ld, k.coords, c)
		      : node_order(ld, &k, &x_major, &off);
	return rc ? rc : place_names(ld, &k, c, x_major, off);
}
