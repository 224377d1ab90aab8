/* topoplace — topoplace.conf's Network=torus and Network=mesh: the box
 * conf.c reads (Dims=, Wrap=, NodesPerRouter=, LinkBandwidth=, Distance=)
 * into net/torus.c's machine, and check-config's account of it. */
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>

#include "conf/conf_kind.h"
#include "net/network.h"
#include "net/machine_internal.h"

/* ---- topoplace.conf: Network=torus and Network=mesh (conf_kind.h) ----
 *
 * Their shape is the box conf.c reads: Dims=, Wrap= (default: every
 * dimension wraps on a torus, none on a mesh), NodesPerRouter=,
 * LinkBandwidth= (one value, or one per dimension) and Distance=. */

/* Wrap= (1 value or one per dimension) over the kind's default. */
static int conf_wrap(struct tp__conf_reader *r, bool dflt, bool *wrap)
{
	for (int d = 0; d < r->ndims; d++)
		wrap[d] = dflt;
	if (!r->nwrap)
		return TP_OK;
	if (r->nwrap != 1 && r->nwrap != r->ndims)
		return tp__conf_error(r, NULL, r->wrap_line, TP_EINVAL,
				      "Wrap=%s: %d values, Dims=%s has %d dimensions (give 1 or %d)",
				      r->wrap_text, r->nwrap, r->dims_text, r->ndims,
				      r->ndims);
	for (int d = 0; d < r->ndims; d++)
		wrap[d] = r->wrap[r->nwrap == 1 ? 0 : d];
	return TP_OK;
}

/* LinkBandwidth= (1 value or one per dimension), checked before the
 * machine is made. */
static int conf_bandwidth(struct tp__conf_reader *r, double *bw)
{
	if (!r->nbw)
		return TP_OK;
	if (r->nbw != 1 && r->nbw != r->ndims)
		return tp__conf_error(r, NULL, r->bw_line, TP_EINVAL,
				      "LinkBandwidth=%s: %d values, Dims=%s has %d dimensions (give 1 or %d)",
				      r->bw_text, r->nbw, r->dims_text, r->ndims, r->ndims);
	for (int d = 0; d < r->ndims; d++)
		bw[d] = r->bw[r->nbw == 1 ? 0 : d];
	return TP_OK;
}

/* Distance=bandwidth: the hop cost of each dimension is the fastest
 * bandwidth / its own. */
static int conf_hop_costs(struct tp__conf_reader *r, tp_machine *m)
{
	int cost[TP_MAX_DIMS];
	double top = 0;
	for (int d = 0; d < r->ndims; d++)
		if (tp_machine_link_bandwidth(m, d) > top)
			top = tp_machine_link_bandwidth(m, d);
	for (int d = 0; d < r->ndims; d++) {
		double q = floor(top / tp_machine_link_bandwidth(m, d) + 0.5);
		cost[d] = q < 1 ? 1 : q > 1000000 ? 1000000 : (int)q;
	}
	tp_error e2;
	tp_error_clear(&e2);
	int rc = tp_machine_set_hop_cost(m, cost, &e2);
	return rc ? tp__conf_error(r, NULL, r->dist_line, rc, "%s", e2.msg) : TP_OK;
}

static int conf_build_box(struct tp__conf_reader *r, bool wraps, int line,
			  const char *key)
{
	int tl = r->topo_line ? r->topo_line : r->cost_line ? r->cost_line
		 : r->lbw_line ? r->lbw_line : r->uplinks_line ? r->uplinks_line
		 : r->routing_line;
	if (tl)
		return tp__conf_error(r, NULL, tl, TP_EINVAL, "%s= needs Network=tree",
				      tl == r->topo_line ? "TopologyFile" : tl == r->cost_line
				      ? "LevelCost" : tl == r->lbw_line ? "LevelBandwidth"
				      : tl == r->uplinks_line ? "LevelUplinks"
				      : "UplinkRouting");
	if (!r->dims_line)
		return tp__conf_error(r, NULL, line, TP_EINVAL,
				      "%s before Dims= (Network= and Dims= must come first)",
				      key);
	bool wrap[TP_MAX_DIMS];
	double bw[TP_MAX_DIMS];
	int rc = conf_wrap(r, wraps, wrap);
	if (!rc)
		rc = conf_bandwidth(r, bw);
	if (rc)
		return rc;
	tp_error e2;
	tp_error_clear(&e2);
	tp_machine **m = &r->out->m;
	if ((rc = tp_machine_create(m, r->ndims, r->dims, wrap, &e2)))
		return tp__conf_error(r, NULL, r->dims_line, rc, "Dims=%s: %s",
				      r->dims_text, e2.msg);
	if (r->npr_line && (rc = tp_machine_set_nodes_per_router(*m, r->npr, &e2)))
		return tp__conf_error(r, NULL, r->npr_line, rc, "%s", e2.msg);
	if (r->nbw) {
		if ((rc = tp_machine_set_link_bandwidth(*m, bw, &e2)))
			return tp__conf_error(r, NULL, r->bw_line, rc, "%s", e2.msg);
		r->out->bw_set = true;
	}
	return r->dist_bw ? conf_hop_costs(r, *m) : TP_OK;
}

static int conf_build_torus(struct tp__conf_reader *r, void *state, int line,
			    const char *key)
{
	(void)state;
	return conf_build_box(r, true, line, key);
}

static int conf_build_mesh(struct tp__conf_reader *r, void *state, int line,
			   const char *key)
{
	(void)state;
	return conf_build_box(r, false, line, key);
}

/* "torus 4x4x4 (wrap yes,yes,yes), 64 nodes, 1 per router" and the
 * bandwidths and hop costs when given. */
static void conf_describe_box(const char *name, const struct tp__conf_built *b,
			      FILE *out)
{
	const tp_machine *m = b->m;
	fprintf(out, "%s ", name);
	for (int d = 0; d < m->ndims; d++)
		fprintf(out, "%s%d", d ? "x" : "", m->dims[d]);
	fputs(" (wrap ", out);
	for (int d = 0; d < m->ndims; d++)
		fprintf(out, "%s%s", d ? "," : "", m->wrap[d] ? "yes" : "no");
	fprintf(out, "), %ld nodes, %d per router\n", (long)m->nnodes,
		m->nodes_per_router);
	if (b->bw_set) {
		fputs("link bandwidth ", out);
		for (int d = 0; d < m->ndims; d++)
			fprintf(out, "%s%g", d ? "," : "", tp_machine_link_bandwidth(m, d));
		fputc('\n', out);
	}
	if (!m->plain_hops) {
		fputs("distance weighted by 1/bandwidth: hop costs ", out);
		for (int d = 0; d < m->ndims; d++)
			fprintf(out, "%s%d", d ? "," : "", tp_machine_hop_cost(m, d));
		fputc('\n', out);
	}
}

static void conf_describe_torus(const struct tp__conf_built *b, FILE *out)
{
	conf_describe_box("torus", b, out);
}

static void conf_describe_mesh(const struct tp__conf_built *b, FILE *out)
{
	conf_describe_box("mesh", b, out);
}


const struct tp__conf_kind tp__conf_torus = {
	.name = "torus",
	.selectable = true,
	.machines = tp__torus_machines,
	.build = conf_build_torus,
	.dims_shape = true,
	.describe = conf_describe_torus,
};

const struct tp__conf_kind tp__conf_mesh = {
	.name = "mesh",
	.selectable = true,
	.machines = tp__mesh_machines,
	.build = conf_build_mesh,
	.dims_shape = true,
	.describe = conf_describe_mesh,
};
