/* topoplace — private structure layouts shared by the core's modules.
 * Not installed; front ends use the accessors in the public headers. */
#ifndef TOPOPLACE_INTERNAL_H
#define TOPOPLACE_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <topoplace/topoplace.h>

struct lh_table; /* json-c linkhash: name -> node index */

struct tp_machine {
	int ndims;
	int dims[TP_MAX_DIMS];
	bool wrap[TP_MAX_DIMS];
	int64_t stride[TP_MAX_DIMS];   /* router id = sum coords[d]*stride[d] */
	int64_t nrouters;
	int nodes_per_router;
	double link_bw[TP_MAX_DIMS];

	int32_t nnodes, cap;
	char **names;                  /* nnodes names, owned */
	int *coords;                   /* nnodes x ndims router coordinates */
	struct lh_table *by_name;      /* name -> (intptr_t)(index + 1) */
	struct lh_table *router_use;   /* router id -> nodes on it (sparse) */
};

struct tp_alloc {
	const tp_machine *m;
	int32_t nnodes;
	int32_t *node;                 /* machine node index, Slurm's order */
	int *slots;                    /* task slots per allocated node */
	int64_t total_slots;
};

struct tp_graph {
	int32_t ntasks;
	int64_t nedges;                /* undirected */
	int64_t *xadj;                 /* ntasks + 1 */
	int32_t *adjncy;               /* 2 * nedges */
	double *weights;               /* 2 * nedges */
	double total_bytes;
	int coord_dims;                /* 0 = no coordinates */
	double *coords;                /* ntasks x coord_dims */
	int grid_ndims;                /* > 0 when built from a stencil */
	int grid[3];
};

/* Minimal hops between router coordinates (inlined in hot loops). */
static inline int tp__coord_dist(const struct tp_machine *m, const int *a,
				 const int *b)
{
	int h = 0;
	for (int d = 0; d < m->ndims; d++) {
		int x = a[d] > b[d] ? a[d] - b[d] : b[d] - a[d];
		if (m->wrap[d] && m->dims[d] - x < x)
			x = m->dims[d] - x;
		h += x;
	}
	return h;
}

/* Hop-bytes, but free to stop early and return any value above bound once
 * the sum exceeds it (used to discard losing candidates quickly). */
double tp__hop_bytes_bounded(const tp_graph *g, const tp_alloc *a,
			     const int32_t *map, double bound);

/* Same from per-task router coordinates tc (ntasks x ndims of m). */
double tp__hop_bytes_task_coords(const tp_graph *g, const tp_machine *m,
				 const int *tc, double bound);

/* Overflow-checked allocation helpers (NULL on overflow or failure). */
void *tp__calloc(size_t n, size_t size);
void *tp__malloc_array(size_t n, size_t size);

/* Check a hostlist expression before handing it to libslurm (which leaks
 * and logs on malformed ranges); why receives the problem. */
bool tp__hostlist_ok(const char *s, char *why, size_t len);

/* Monotonic clock in milliseconds. */
double tp__now_ms(void);

/* ---- core/node: one node's inside (node.c, node_links.c, gpusel.c) ---- */

enum tp_vkind { TP_V_PACKAGE, TP_V_HOSTBRIDGE, TP_V_BRIDGE, TP_V_GPU, TP_V_NVSWITCH };

struct tp_node_vertex {
	int kind;
	int parent;         /* vertex index, -1 for sockets and the NVSwitch */
	int uplink;         /* link to the parent, -1 when none */
	int depth;          /* 0 for sockets */
	int fanout;         /* PCI children (bridges: > 1 means a switch) */
	char name[40];      /* "GPU0", "switch 0000:01:00.0", "socket1" */
};

struct tp_node_link {
	int a, b;           /* vertices */
	double bw;          /* GB/s */
	char name[96];
};

struct tp_node_gpu {
	char busid[16];
	unsigned domain, bus, dev, func;
	int package, numa;  /* logical indices, -1 unknown */
	int vertex;
};

struct tp_node {
	char *source;
	int npackages, nnuma, ncores, npus;
	int *core_pkg;                 /* ncores */
	int *core_pu_off, *core_pus;   /* PU os indices of each core (CSR) */
	int ngpus;
	struct tp_node_gpu *gpu;
	int nvert, vcap;
	struct tp_node_vertex *vert;
	int nlinks, lcap, nlinks_pci;  /* links [0, nlinks_pci) are PCIe/socket */
	struct tp_node_link *link;
	int *pkg_link;                 /* npackages^2: inter-socket link or -1 */
	int *nvl;                      /* ngpus^2 NVLink lanes */
	int nvswitch;                  /* NVLinks read as an NVSwitch fabric */
	int *nvl_link;                 /* ngpus^2: direct NVLink link id or -1 */
	int *nvs_link;                 /* ngpus: GPU-NVSwitch link id or -1 */
	int *path;                     /* ngpus^2 enum tp_gpu_path */
	double *pbw;                   /* ngpus^2 path bandwidth */
	int *route_off, *route;        /* ngpus^2 + 1 offsets; links */
};

/* Recompute NVLink links, path classes, bandwidths and routes after the
 * lane counts (nvl) changed. */
int tp__node_finish(tp_node *n, tp_error *err);

#endif
