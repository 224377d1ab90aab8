/* topoplace — Slurm's rings and toruses side by side (net/torus3d.c) as
 * topoplace.conf knows them: built only from Slurm's topology, described
 * by check-config. */
#include <stdbool.h>
#include <stdio.h>

#include "conf/conf_kind.h"
#include "net/network.h"
#include "net/machine_internal.h"

/* ---- topoplace.conf: Slurm's rings and toruses side by side ----
 *
 * No Network= builds them: they come from Slurm's topology only
 * (conf_kind.h), and check-config describes them. */

/* "rings from FILE: 2 rings of at most 8 nodes, 16 nodes; no link between
 * them": the last coordinate numbers the domain. */
static void conf_describe_rings(const struct tp__conf_built *b, FILE *out)
{
	const tp_machine *m = b->m;
	bool ring = m->net == tp__rings_machines[0];   /* the rings' (torus3d.c) */
	int nd = m->ndims - 1;
	fprintf(out, "%s from %s: %d %s of at most ", ring ? "rings" : "toruses",
		b->topo_path ? b->topo_path : "?", m->dims[nd],
		ring ? (m->dims[nd] == 1 ? "ring" : "rings")
		     : (m->dims[nd] == 1 ? "torus" : "toruses"));
	for (int d = 0; d < nd; d++)
		fprintf(out, "%s%d", d ? "x" : "", m->dims[d]);
	fprintf(out, "%s, %ld nodes; no link between them\n", ring ? " nodes" : "",
		(long)m->nnodes);
}


const struct tp__conf_kind tp__conf_rings = {
	.name = "ring",
	.machines = tp__rings_machines,
	.describe = conf_describe_rings,
};
