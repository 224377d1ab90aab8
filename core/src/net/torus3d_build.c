/* topoplace — tori side by side built from Slurm's records: topology/torus3d
 * (Slurm 26.05, topology.yaml only), into the tori of torus3d.c.
 *
 *   - topology: pods
 *     torus3d:
 *       toruses:
 *         - name: pod1
 *           dims: {x: 4, y: 4, z: 2}
 *           nodes: node[01-32]           x-major: node01 (0,0,0), node02
 *                                        (1,0,0), ..., node05 (0,1,0)
 *         - name: pod2
 *           dims: {x: 4, y: 4, z: 2}
 *           regions:                     or parts of the torus, each a box
 *             - anchor: {x: 0, y: 0, z: 0}   anchor .. anchor + dims - 1,
 *               dims: {x: 4, y: 4, z: 1}     x-major inside the box
 *               nodes: node[33-48]
 *           placements:                  the allocation shapes Slurm allows
 *             - dims: {x: 2, y: 2, z: 1}
 *
 * As Slurm reads it (src/plugins/topology/torus3d/torus3d_record.c): a
 * torus needs a name, x, y and z of 1..65535 (YAML's uint16) whose product
 * fits 32 bits, and nodes or regions, not both (or neither: a torus without
 * nodes).  nodes must name exactly x*y*z nodes; a region must have nodes,
 * fit inside the torus without wrapping, name exactly as many nodes as it
 * has cells and overlap no earlier region.  A placement's dims must be 1..
 * the torus's, its anchor_spacing (0: its dims) at most the torus's, its
 * anchor_seed inside the torus.  Two toruses may not share a name or a
 * node.  All of these Slurm refuses (fatal), and so does topoplace, naming
 * the line.  A node listed twice inside one torus Slurm accepts (both cells
 * map to it); a node has one place here: it stays at the first cell listed,
 * the second is left without a node, and a warning says so.  Coordinates
 * without a node (outside every region) are routers without nodes: the
 * torus keeps its links.  Slurm's own order of checks is kept, but for
 * toruses sharing a node, found when the nodes are placed, after every
 * torus is checked (only a file with two faults tells).
 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "net/network.h"
#include "net/records.h"
#include "net/machine_internal.h"

#define MAX_AXIS 65535                     /* Slurm reads x, y, z as uint16 */
#define MAX_CELLS ((uint64_t)UINT32_MAX)   /* Slurm: x*y*z fits 32 bits */

/* ---- Slurm's toruses ---- */

struct tparse {
	const char *what;
	tp_error *err;
	struct tp__warnings *warn;
	const struct tp__torus3d *t;
	int n;
	int64_t total;          /* nodes named so far */
	int64_t named;          /* of them, names the index holds (not runs) */
};

/* An error naming the file (and the line, when not 0). */
#define terr(p, line, code, ...) \
	tp__line_error((p)->err, (p)->what, (line), (code), __VA_ARGS__)

static uint64_t cells_of(const int *dims)
{
	return (uint64_t)dims[0] * (uint64_t)dims[1] * (uint64_t)dims[2];
}

/* Count and bound a hostlist of nodes (wh names it in messages). */
static int count_list(struct tparse *p, const char *list, const char *wh,
		      int line, int64_t *count)
{
	struct tp__hostlist *hl;
	tp_error e;
	tp_error_clear(&e);
	int rc = tp__hostlist_parse(list, wh, TP__MAX_TREE_NODES,
				    "the most nodes a topology may have", &hl, count, &e);
	if (rc)
		return terr(p, line, rc, "%s", e.msg);
	p->named += tp__add_list_named(hl, TP__LIST_RUN_MIN);
	tp__hostlist_free(hl);
	if (*count > TP__MAX_TREE_NODES - p->total)
		return terr(p, line, TP_EINVAL, "more than %lld nodes in the toruses",
			    (long long)TP__MAX_TREE_NODES);
	p->total += *count;
	return 0;
}

/* Each region as Slurm checks it, in order: nodes given, inside the torus
 * without wrapping, as many nodes as cells, no cell of an earlier region. */
static int check_regions(struct tparse *p, const struct tp__torus3d *T)
{
	struct tp__routers cells;       /* cell -> region + 1 */
	memset(&cells, 0, sizeof cells);
	cells.nrouters = (int64_t)cells_of(T->dims);
	int rc = 0;
	for (int j = 0; j < T->nregions && !rc; j++) {
		const struct tp__torus_region *g = &T->region[j];
		const int *a = g->anchor, *s = g->dims;
		int line = g->line ? g->line : T->line;
		char where[TP_ERROR_MSG_MAX / 2];
		snprintf(where, sizeof where, "torus %s: region at (%d,%d,%d) of %dx%dx%d",
			 T->name, a[0], a[1], a[2], s[0], s[1], s[2]);
		bool range = true;
		for (int d = 0; d < 3; d++)
			range &= a[d] >= 0 && a[d] <= MAX_AXIS && s[d] >= 0 && s[d] <= MAX_AXIS;
		/* out of uint16's range: Slurm's reader refuses it first */
		if (!range) {
			rc = terr(p, line, TP_EINVAL, "%s: anchor and dims must be 0..%d",
				  where, MAX_AXIS);
			break;
		}
		if (!g->nodes || !*g->nodes) {
			rc = terr(p, line, TP_EINVAL, "%s has no nodes (Slurm refuses it)", where);
			break;
		}
		for (int d = 0; d < 3 && !rc; d++)
			if (a[d] + s[d] > T->dims[d])
				rc = terr(p, line, TP_EINVAL,
					  "%s reaches past the torus's %dx%dx%d (regions do not "
					  "wrap)", where, T->dims[0], T->dims[1], T->dims[2]);
		char wh[TP_ERROR_MSG_MAX];
		snprintf(wh, sizeof wh, "%s: nodes %s", where, g->nodes);
		int64_t count;
		if (rc || (rc = count_list(p, g->nodes, wh, line, &count)))
			break;
		if ((uint64_t)count != cells_of(s)) {
			rc = terr(p, line, TP_EINVAL, "%s: %llu cells, but its nodes name %lld",
				  where, (unsigned long long)cells_of(s), (long long)count);
			break;
		}
		/* the region's cells: as many as its nodes, which are bounded */
		for (int z = a[2]; z < a[2] + s[2] && !rc; z++)
			for (int y = a[1]; y < a[1] + s[1] && !rc; y++)
				for (int x = a[0]; x < a[0] + s[0] && !rc; x++) {
					int64_t c = x + (int64_t)T->dims[0] *
						(y + (int64_t)T->dims[1] * z);
					int32_t *slot = tp__routers_slot(&cells, c, true);
					if (!slot) {
						rc = terr(p, 0, TP_ENOMEM, "out of memory");
					} else if (*slot) {
						const struct tp__torus_region *o = &T->region[*slot - 1];
						rc = terr(p, line, TP_EINVAL,
							  "%s overlaps the region at (%d,%d,%d) of "
							  "%dx%dx%d (line %d) at (%d,%d,%d) (Slurm "
							  "refuses it)", where, o->anchor[0],
							  o->anchor[1], o->anchor[2], o->dims[0],
							  o->dims[1], o->dims[2],
							  o->line ? o->line : T->line, x, y, z);
					} else {
						*slot = j + 1;
					}
				}
	}
	tp__routers_free(&cells);
	return rc;
}

/* The allocation shapes, as Slurm validates them (no part of the model). */
static int check_placements(struct tparse *p, const struct tp__torus3d *T)
{
	const int *D = T->dims;
	for (int k = 0; k < T->nplacements; k++) {
		const struct tp__torus_placement *q = &T->placement[k];
		int line = q->line ? q->line : T->line;
		const int *s = q->dims, *sp = q->spacing, *seed = q->seed;
		for (int d = 0; d < 3; d++)
			if (s[d] < 1 || s[d] > MAX_AXIS)
				return terr(p, line, TP_EINVAL,
					    "torus %s: placement dims %dx%dx%d: x, y and z must be "
					    "1..%d", T->name, s[0], s[1], s[2], MAX_AXIS);
		for (int d = 0; d < 3; d++)
			if (s[d] > D[d])
				return terr(p, line, TP_EINVAL,
					    "torus %s: placement dims %dx%dx%d exceed the torus's "
					    "%dx%dx%d", T->name, s[0], s[1], s[2], D[0], D[1], D[2]);
		int e[3];
		for (int d = 0; d < 3; d++)
			e[d] = sp[d] ? sp[d] : s[d];   /* Slurm's default: the dims */
		for (int d = 0; d < 3; d++)
			if (sp[d] < 0 || e[d] > D[d])
				return terr(p, line, TP_EINVAL,
					    "torus %s: placement anchor_spacing %dx%dx%d exceeds the "
					    "torus's %dx%dx%d", T->name, e[0], e[1], e[2], D[0],
					    D[1], D[2]);
		for (int d = 0; d < 3; d++)
			if (seed[d] < 0 || seed[d] >= D[d])
				return terr(p, line, TP_EINVAL,
					    "torus %s: placement anchor_seed (%d,%d,%d) lies outside "
					    "the torus's %dx%dx%d", T->name, seed[0], seed[1],
					    seed[2], D[0], D[1], D[2]);
	}
	return 0;
}

/* Torus i as Slurm checks it, in Slurm's order. */
static int check_torus(struct tparse *p, int i, struct tp__names *by_name,
		       char **names)
{
	const struct tp__torus3d *T = &p->t[i];
	if (!T->name || !*T->name)
		return terr(p, T->line, TP_EINVAL,
			    "torus without a name (Slurm refuses it: name: must be given)");
	if (T->nodes && T->nregions > 0)
		return terr(p, T->line, TP_EINVAL,
			    "torus %s: nodes and regions are mutually exclusive (Slurm "
			    "refuses both)", T->name);
	if (T->nregions < 0 || (T->nregions && !T->region) || T->nplacements < 0 ||
	    (T->nplacements && !T->placement))
		return terr(p, T->line, TP_EINVAL, "torus %s: bad region or placement list",
			    T->name);
	const int *D = T->dims;
	for (int d = 0; d < 3; d++)
		if (D[d] < 1 || D[d] > MAX_AXIS)
			return terr(p, T->line, TP_EINVAL,
				    "torus %s: dims %dx%dx%d: x, y and z must be 1..%d",
				    T->name, D[0], D[1], D[2], MAX_AXIS);
	if (cells_of(D) > MAX_CELLS)
		return terr(p, T->line, TP_EINVAL,
			    "torus %s: dims %dx%dx%d = %llu cells, more than Slurm's %llu",
			    T->name, D[0], D[1], D[2], (unsigned long long)cells_of(D),
			    (unsigned long long)MAX_CELLS);
	int rc = 0;
	if (T->nregions > 0) {
		rc = check_regions(p, T);
	} else if (T->nodes && *T->nodes) {
		char wh[TP_ERROR_MSG_MAX];
		snprintf(wh, sizeof wh, "torus %s: nodes %s", T->name, T->nodes);
		int64_t count;
		rc = count_list(p, T->nodes, wh, T->line, &count);
		if (!rc && (uint64_t)count != cells_of(D))
			rc = terr(p, T->line, TP_EINVAL,
				  "torus %s: dims %dx%dx%d = %llu cells, but nodes names %lld "
				  "(x-major, one node a cell)", T->name, D[0], D[1], D[2],
				  (unsigned long long)cells_of(D), (long long)count);
	}
	if (!rc)
		rc = check_placements(p, T);
	if (rc)
		return rc;
	uint32_t h = tp__name_hash(T->name);
	int32_t prev = tp__names_find(by_name, names, T->name, h);
	if (prev >= 0)
		return terr(p, T->line, TP_EINVAL, "torus %s: duplicate torus (first at line %d)",
			    T->name, p->t[prev].line);
	names[i] = (char *)T->name;
	if (tp__names_add(by_name, h, i))
		return terr(p, 0, TP_ENOMEM, "out of memory");
	return 0;
}

/* Placing one list of nodes (the torus's, or a region's) in x-major order
 * over the box anchor .. anchor + ext - 1 (tp__machine_add_list's
 * callbacks). */
struct place {
	struct tparse *p;
	tp_machine *m;
	int torus, line;
	int anchor[3], ext[3];
	int64_t next;           /* listing index of the next name */
	int dups;               /* nodes listed twice in one torus */
	int dup_line;           /* the first of them: its line, */
	char dup_name[TP__HOSTNAME_MAX];   /* name, */
	int dup_at[3], dup_again[3];       /* first and second cell */
	const char *dup_torus;
};

static void cell_of(const struct place *x, int64_t k, int *c)
{
	c[0] = x->anchor[0] + (int)(k % x->ext[0]);
	c[1] = x->anchor[1] + (int)(k / x->ext[0] % x->ext[1]);
	c[2] = x->anchor[2] + (int)(k / ((int64_t)x->ext[0] * x->ext[1]));
	if (x->m->ndims > 3)
		c[3] = x->torus;   /* several toruses: the torus's axis */
}

static void place_coord(void *arg, int64_t i, int *c)
{
	const struct place *x = arg;
	cell_of(x, x->next + i, c);
}

static int place_one(void *arg, const char *name)
{
	struct place *x = arg;
	const struct tp__torus3d *T = &x->p->t[x->torus];
	int c[4];
	cell_of(x, x->next++, c);
	int32_t dup = -1;
	tp_error e;
	tp_error_clear(&e);
	int idx = tp__machine_add(x->m, name, c, &dup, &e);
	if (idx >= 0)
		return 0;
	if (dup < 0)
		return terr(x->p, x->line, idx, "torus %s: %s", T->name, e.msg);
	const int *dc = tp_machine_node_coords(x->m, dup);
	int other = x->m->ndims > 3 ? dc[3] : 0;
	if (other != x->torus)
		return terr(x->p, x->line, TP_EINVAL,
			    "torus %s: node '%s' is in torus %s (line %d) too (Slurm "
			    "refuses toruses that share nodes)", T->name, name,
			    x->p->t[other].name, x->p->t[other].line);
	/* Slurm maps both cells to the node; here it stays at the first */
	if (x->dups++ == 0) {
		x->dup_line = x->line;
		snprintf(x->dup_name, sizeof x->dup_name, "%s", name);
		memcpy(x->dup_at, dc, sizeof x->dup_at);
		memcpy(x->dup_again, c, sizeof x->dup_again);
		x->dup_torus = T->name;
	}
	return 0;
}

static int place_ran(void *arg, int32_t first, int32_t count)
{
	struct place *x = arg;
	(void)first;
	x->next += count;
	return 0;
}

static int place_fail(void *arg, int rc, const tp_error *e)
{
	struct place *x = arg;
	return terr(x->p, x->line, rc, "torus %s: %s", x->p->t[x->torus].name, e->msg);
}

static int place_list(struct place *x, const char *list, const int *anchor,
		      const int *ext, int line)
{
	memcpy(x->anchor, anchor, sizeof x->anchor);
	memcpy(x->ext, ext, sizeof x->ext);
	x->next = 0;
	x->line = line;
	struct tp__hostlist *hl;
	int64_t count;
	tp_error e;
	tp_error_clear(&e);
	/* parsed once already: only memory can fail here */
	if (tp__hostlist_parse(list, "nodes", TP__MAX_TREE_NODES, "", &hl, &count, &e))
		return terr(x->p, line, TP_ENOMEM, "out of memory");
	static const struct tp__add_list ops = { TP__LIST_RUN_MIN, place_coord,
						 place_one, place_ran, place_fail };
	int rc = tp__machine_add_list(x->m, hl, &ops, x);
	tp__hostlist_free(hl);
	return rc;
}

static int place_nodes(struct tparse *p, tp_machine *m)
{
	struct place x;
	memset(&x, 0, sizeof x);
	x.p = p;
	x.m = m;
	static const int zero[3] = { 0, 0, 0 };
	int rc = 0;
	for (int i = 0; i < p->n && !rc; i++) {
		const struct tp__torus3d *T = &p->t[i];
		x.torus = i;
		if (T->nregions > 0) {
			for (int j = 0; j < T->nregions && !rc; j++) {
				const struct tp__torus_region *g = &T->region[j];
				rc = place_list(&x, g->nodes, g->anchor, g->dims,
						g->line ? g->line : T->line);
			}
		} else if (T->nodes && *T->nodes) {
			rc = place_list(&x, T->nodes, zero, T->dims, T->line);
		}
	}
	if (!rc && x.dups)
		tp__warn(p->warn, "%s:%d: torus %s: node '%s' is listed at (%d,%d,%d) and "
			 "again at (%d,%d,%d)%s; it stays at the first cell and the second "
			 "is left without a node (Slurm maps both cells to it; a node has "
			 "one place in topoplace)", p->what, x.dup_line, x.dup_torus,
			 x.dup_name, x.dup_at[0], x.dup_at[1], x.dup_at[2], x.dup_again[0],
			 x.dup_again[1], x.dup_again[2],
			 x.dups > 1 ? " (and more nodes listed twice)" : "");
	return rc;
}

int tp__torus3d_from_records(tp_machine **out, const struct tp__torus3d *t,
			     int n, const char *what, struct tp__warnings *warn,
			     tp_error *err)
{
	if (!what)
		what = "topology.yaml";
	if (!out || (!t && n > 0))
		return tp_error_set(err, TP_EINVAL, "%s: missing toruses or output", what);
	*out = NULL;
	struct tparse p = { what, err, warn, t, n, 0, 0 };
	if (n <= 0)
		return terr(&p, 0, TP_EINVAL,
			    "no toruses (Slurm refuses a torus3d topology without one)");
	struct tp__names by_name;
	memset(&by_name, 0, sizeof by_name);
	char **names = tp__calloc((size_t)n, sizeof *names);
	if (!names)
		return terr(&p, 0, TP_ENOMEM, "out of memory");
	int rc = 0;
	for (int i = 0; i < n && !rc; i++)
		rc = check_torus(&p, i, &by_name, names);
	tp__names_free(&by_name);
	free(names);
	if (rc)
		return rc;
	tp_machine *m = NULL;
	tp_error e;
	tp_error_clear(&e);
	if (n == 1) {
		/* one torus: exactly a torus of three wrapped dimensions */
		static const bool wrap[3] = { true, true, true };
		rc = tp_machine_create(&m, 3, t[0].dims, wrap, &e);
	} else {
		struct tp__tori_domain *dom = tp__malloc_array((size_t)n, sizeof *dom);
		if (!dom)
			return terr(&p, 0, TP_ENOMEM, "out of memory");
		for (int i = 0; i < n; i++) {
			dom[i].name = t[i].name;
			memcpy(dom[i].dims, t[i].dims, sizeof dom[i].dims);
		}
		rc = tp__tori_new(&m, 3, dom, n, &e);
		free(dom);
	}
	if (rc)
		return terr(&p, 0, rc, "%s", e.msg);
	if (tp__machine_reserve(m, p.total) ||
	    tp__names_reserve(&m->by_name, (size_t)p.named))
		rc = terr(&p, 0, TP_ENOMEM, "out of memory");
	if (!rc)
		rc = place_nodes(&p, m);
	if (rc) {
		tp_machine_destroy(m);
		return rc;
	}
	*out = m;
	return 0;
}
