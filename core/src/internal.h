/* topoplace — private structure layouts shared by the core's modules.
 * Not installed; front ends use the accessors in the public headers. */
#ifndef TOPOPLACE_INTERNAL_H
#define TOPOPLACE_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <topoplace/topoplace.h>

struct lh_table; /* json-c linkhash: name -> node index */

struct tp_net_ops; /* network.h: one table per kind of network */

/* A machine: named nodes on routers, the routers embedded in a box of
 * integer coordinates, and the network that joins them (network.h). */
struct tp_machine {
	int ndims;                     /* the coordinate box */
	int dims[TP_MAX_DIMS];
	bool wrap[TP_MAX_DIMS];
	int64_t stride[TP_MAX_DIMS];   /* router id = sum coords[d]*stride[d] */
	int64_t nrouters;
	int nodes_per_router;

	const struct tp_net_ops *net;  /* the kind of network */
	void *net_data;                /* its own data, owned */
	bool plain_hops;               /* distance = unweighted hop count in
					  the box (tori and meshes with every
					  hop cost 1): computed inline */
	const double *link_weight;     /* congestion weight of a byte per link
					  (1/bandwidth on trees with
					  LevelBandwidth=), in net_data; NULL:
					  every link weighs 1 */

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
	int64_t merged_dups;           /* input edges summed into an earlier
					  one (tp_graph_merged_duplicates) */
	int grid_ndims;                /* > 0 when built from a stencil */
	int grid[3];
};

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

/* Read a whole regular file of at most max_bytes (NUL-terminated); errors
 * name the file.  *buf_out is malloc'ed. */
int tp__read_file(const char *path, size_t max_bytes, char **buf_out,
		  size_t *len_out, tp_error *err);

/* A NUL-terminated malloc'ed copy of text[0..len-1]; errors (a NUL byte
 * inside, out of memory) name what. */
int tp__text_copy(const char *text, size_t len, const char *what, char **out,
		  tp_error *err);

/* A JSON integer, or a JSON number with no fractional part (json_graph.c). */
struct json_object;
bool tp__json_int(struct json_object *o, int64_t *v);

/* Monotonic clock in milliseconds. */
double tp__now_ms(void);

/* ---- core/node: one node's inside (node.c, node_links.c, gpusel.c) ---- */

enum tp_vkind { TP_V_PACKAGE, TP_V_HOSTBRIDGE, TP_V_BRIDGE, TP_V_GPU,
		TP_V_NVSWITCH, TP_V_NIC, TP_V_PORT };

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

struct tp_node_nic {
	char busid[16];
	int package, numa;  /* logical indices, -1 unknown */
	int vertex;
	int port_link;      /* the card's link to the network */
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
	int nnics;
	struct tp_node_nic *nic;       /* network cards, PCI bus order */
	int *gpu_nic;                  /* ngpus: nearest NIC, -1 without */
	int *nic_route_off, *nic_route;   /* ngpus + 1 offsets; links from
					     the GPU to its NIC */
};

/* Recompute NVLink links, path classes, bandwidths and routes after the
 * lane counts (nvl) changed. */
int tp__node_finish(tp_node *n, tp_error *err);

#endif
