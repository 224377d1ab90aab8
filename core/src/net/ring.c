/* topoplace — Slurm's topology/ring (Slurm 26.05): rings of nodes.
 *
 *   RingName=ring0 Nodes=node[01-08]        topology.conf
 *   RingName=ring1 Nodes=node[09-16]
 *
 *   - topology: rings                       topology.yaml (its reader makes
 *     ring:                                 the same records)
 *       rings:
 *         - ring: ring0
 *           nodes: node[01-08]
 *
 * A ring's nodes sit at positions 0, 1, ... in the order its hostlist
 * names them; neighbours in the list are neighbours in the ring, and the
 * last is the first's.  Slurm gives a job (or each --segment of it) a run of
 * consecutive positions of one ring, wrapping round its end, and assumes
 * nothing of what joins two rings (eval_nodes_ring.c).
 *
 * Slurm's rules (src/plugins/topology/ring/ring_record.c), all fatal in
 * slurmctld and refused here with the file and line: no ring at all; a ring
 * without a name (YAML: ring: must be given); two rings of one name; a
 * Nodes= that is no hostlist; more than 16 nodes in a ring (MAX_RING_SIZE;
 * Slurm counts the names slurm.conf knows, topoplace every name, as it
 * reads no slurm.conf here).  Accepted: a ring without Nodes= (empty), and
 * a node listed twice, in two rings or twice in one, which Slurm takes
 * silently: its ranks and addresses (topology_ring.c) find the node at the
 * first place listed.  A node has one place here: it stays there, its
 * later position is kept as a position without a node, so that the ring's
 * other positions stay as far apart as Slurm counts them; a warning says
 * so.  Slurm warns about nodes of slurm.conf on no ring and about names
 * slurm.conf lacks; both need slurm.conf's node list, but for the case
 * where no ring has a node at all (then every node lacks one): warned.
 * topoplace's own bound: at most 65536 rings (Slurm numbers rings in 16
 * bits; more would alias their ranks), so at most 2^20 nodes.
 *
 * topology.conf's RingName= lines are read by slurm/topology_conf.c.
 *
 * The model (torus3d.c, tp__tori_new): each ring is a torus of one
 * dimension, as many positions as names listed; rings share no link.
 * Distance inside a ring: positions apart, the shorter way round; between
 * two rings a fixed cost, the longest distance inside a ring + 1 (at most
 * 9), the same for every pair.  Kind "ring"; coordinates (position, ring
 * in file order); hierarchy(): the ring, then the node.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "net/network.h"
#include "net/records.h"
#include "net/machine_internal.h"

#define MAX_RING_SIZE 16            /* Slurm's ring_record.h */

struct rparse {
	const struct tp__topo_recs *r;
	const char *what;
	tp_error *err;
};

/* An error naming the file (and the line, when not 0). */
#define rerr(p, line, code, ...) \
	tp__line_error((p)->err, (p)->what, (line), (code), __VA_ARGS__)

/* The ring as the file names it: "RingName=r0", YAML's "ring r0". */
static void ring_label(const struct tp__topo_recs *r, int32_t i, char *buf,
		       size_t len)
{
	snprintf(buf, len, r->yaml ? "ring %s" : "RingName=%s", r->rec[i].name);
}

/* Placing ring i's nodes (tp__machine_add_list's callbacks). */
struct rplace {
	struct rparse *p;
	tp_machine *m;
	int32_t ring;
	int pos;                /* position of the next name */
	int dups;               /* names listed a second time */
	char dup_name[TP__HOSTNAME_MAX];
	int32_t dup_ring, dup_first_ring;
	int dup_pos, dup_first_pos;
};

static void place_coord(void *arg, int64_t i, int *c)
{
	const struct rplace *x = arg;
	c[0] = x->pos + (int)i;
	c[1] = x->ring;
}

static int place_one(void *arg, const char *name)
{
	struct rplace *x = arg;
	int c[2] = { x->pos++, x->ring };
	int32_t dup = -1;
	tp_error e;
	tp_error_clear(&e);
	int idx = tp__machine_add(x->m, name, c, &dup, &e);
	if (idx >= 0)
		return 0;
	const struct tp__topo_rec *rec = &x->p->r->rec[x->ring];
	if (dup < 0) {
		char lab[TP_ERROR_MSG_MAX / 2];
		ring_label(x->p->r, x->ring, lab, sizeof lab);
		return rerr(x->p, rec->line, idx, "%s: %s", lab, e.msg);
	}
	/* Slurm takes it silently; here the node keeps its first place */
	if (x->dups++ == 0) {
		const int *dc = tp_machine_node_coords(x->m, dup);
		snprintf(x->dup_name, sizeof x->dup_name, "%s", name);
		x->dup_first_pos = dc[0];
		x->dup_first_ring = dc[1];
		x->dup_pos = c[0];
		x->dup_ring = x->ring;
	}
	return 0;
}

static int place_ran(void *arg, int32_t first, int32_t count)
{
	struct rplace *x = arg;
	(void)first;
	x->pos += count;
	return 0;
}

static int place_fail(void *arg, int rc, const tp_error *e)
{
	struct rplace *x = arg;
	char lab[TP_ERROR_MSG_MAX / 2];
	ring_label(x->p->r, x->ring, lab, sizeof lab);
	return rerr(x->p, x->p->r->rec[x->ring].line, rc, "%s: %s", lab, e->msg);
}

/* Each ring as Slurm checks it, in Slurm's order (a name, not a duplicate,
 * a hostlist of at most 16 names): its size into size[i]. */
static int check_rings(struct rparse *p, int *size, int64_t *named)
{
	const struct tp__topo_recs *r = p->r;
	struct tp__names by_name;
	memset(&by_name, 0, sizeof by_name);
	char **names = tp__calloc((size_t)r->n, sizeof *names);
	if (!names)
		return rerr(p, 0, TP_ENOMEM, "out of memory");
	int rc = 0;
	for (int32_t i = 0; i < r->n && !rc; i++) {
		const struct tp__topo_rec *rec = &r->rec[i];
		if (!rec->name || !*rec->name) {
			rc = rerr(p, rec->line, TP_EINVAL, r->yaml
				  ? "ring without a name (Slurm refuses it: ring: must be given)"
				  : "RingName=: empty value");
			break;
		}
		char lab[TP_ERROR_MSG_MAX / 2];
		ring_label(r, i, lab, sizeof lab);
		uint32_t h = tp__name_hash(rec->name);
		int32_t prev = tp__names_find(&by_name, names, rec->name, h);
		if (prev >= 0) {
			rc = rerr(p, rec->line, TP_EINVAL, "%s: duplicate ring (first at line %d)",
				  lab, r->rec[prev].line);
			break;
		}
		names[i] = (char *)rec->name;
		if (tp__names_add(&by_name, h, i)) {
			rc = rerr(p, 0, TP_ENOMEM, "out of memory");
			break;
		}
		size[i] = 0;
		if (!rec->nodes)
			continue;       /* an empty ring, as Slurm has it */
		char wh[TP_ERROR_MSG_MAX];
		snprintf(wh, sizeof wh, r->yaml ? "%s: nodes %s" : "%s Nodes=%s", lab,
			 rec->nodes);
		struct tp__hostlist *hl;
		int64_t count;
		tp_error e;
		tp_error_clear(&e);
		rc = tp__hostlist_parse(rec->nodes, wh, MAX_RING_SIZE,
					"the most nodes of a ring, Slurm's MAX_RING_SIZE",
					&hl, &count, &e);
		if (rc) {
			rc = rerr(p, rec->line, rc, "%s", e.msg);
			break;
		}
		*named += tp__add_list_named(hl, TP__LIST_RUN_MIN);
		tp__hostlist_free(hl);
		size[i] = (int)count;
	}
	tp__names_free(&by_name);
	free(names);
	return rc;
}

static int place_nodes(struct rparse *p, tp_machine *m)
{
	const struct tp__topo_recs *r = p->r;
	struct rplace x;
	memset(&x, 0, sizeof x);
	x.p = p;
	x.m = m;
	int rc = 0;
	for (int32_t i = 0; i < r->n && !rc; i++) {
		if (!r->rec[i].nodes)
			continue;
		x.ring = i;
		x.pos = 0;
		struct tp__hostlist *hl;
		int64_t count;
		tp_error e;
		tp_error_clear(&e);
		/* parsed once already: only memory can fail here */
		if (tp__hostlist_parse(r->rec[i].nodes, "nodes", MAX_RING_SIZE, "", &hl,
				       &count, &e))
			return rerr(p, r->rec[i].line, TP_ENOMEM, "out of memory");
		static const struct tp__add_list ops = { TP__LIST_RUN_MIN, place_coord,
							 place_one, place_ran, place_fail };
		rc = tp__machine_add_list(m, hl, &ops, &x);
		tp__hostlist_free(hl);
	}
	if (!rc && x.dups)
		tp__warn(r->warn, "%s:%d: node '%s' is at %s:%d (line %d) and again at "
			 "%s:%d%s; it stays at the first place, where Slurm's ranks and "
			 "addresses find it, and the second position is left without a "
			 "node", p->what, r->rec[x.dup_ring].line, x.dup_name,
			 r->rec[x.dup_first_ring].name, x.dup_first_pos,
			 r->rec[x.dup_first_ring].line, r->rec[x.dup_ring].name, x.dup_pos,
			 x.dups > 1 ? " (and more nodes listed twice)" : "");
	return rc;
}

int tp__rings_from_records(tp_machine **out, const struct tp__topo_recs *r,
			   tp_error *err)
{
	if (!out || !r || (!r->rec && r->n > 0))
		return tp_error_set(err, TP_EINVAL, "rings: missing records or output");
	*out = NULL;
	struct rparse p = { r, r->what ? r->what : r->yaml ? "topology.yaml"
							   : "topology.conf", err };
	if (r->n <= 0)
		return rerr(&p, 0, TP_EINVAL, "%s (Slurm refuses a ring topology without "
			    "one)", r->yaml ? "no rings" : "no RingName= lines");
	if (r->n > TP__MAX_RINGS)
		return rerr(&p, r->rec[TP__MAX_RINGS].line, TP_EINVAL,
			    "more than %d rings (Slurm numbers rings in 16 bits)", TP__MAX_RINGS);
	int *size = tp__malloc_array((size_t)r->n, sizeof *size);
	struct tp__tori_domain *dom = tp__malloc_array((size_t)r->n, sizeof *dom);
	int64_t named = 0, total = 0;
	int rc = size && dom ? check_rings(&p, size, &named)
			     : rerr(&p, 0, TP_ENOMEM, "out of memory");
	tp_machine *m = NULL;
	if (!rc) {
		for (int32_t i = 0; i < r->n; i++) {
			dom[i].name = r->rec[i].name;
			dom[i].dims[0] = size[i];
			dom[i].dims[1] = dom[i].dims[2] = 1;
			total += size[i];
		}
		tp_error e;
		tp_error_clear(&e);
		if ((rc = tp__tori_new(&m, 1, dom, r->n, &e)))
			rc = rerr(&p, 0, rc, "%s", e.msg);
	}
	if (!rc && (tp__machine_reserve(m, total) ||
		    tp__names_reserve(&m->by_name, (size_t)named)))
		rc = rerr(&p, 0, TP_ENOMEM, "out of memory");
	if (!rc)
		rc = place_nodes(&p, m);
	free(size);
	free(dom);
	if (rc) {
		tp_machine_destroy(m);
		return rc;
	}
	if (m->nnodes == 0)
		tp__warn(r->warn, "%s: no ring has nodes (Slurm warns that the rings lack "
			 "access to every node)", p.what);
	*out = m;
	return 0;
}
