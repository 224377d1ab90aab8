/* topoplace — what the files that make a node model share, private to
 * node/: the graph's building blocks and the steps between the files
 * (node.c loads, node_build.c builds from hwloc, node_routes.c holds the
 * graph and routes it, node_query.c answers); each calls only down that
 * list. */
#ifndef TOPOPLACE_NODE_MODEL_H
#define TOPOPLACE_NODE_MODEL_H

#include "node/node_internal.h"

struct hwloc_topology;

/* A vertex of the model's graph (kind: enum tp_vkind), or a link of bw
 * GB/s between vertices a and b; its index, -1 when out of memory
 * (node_routes.c). */
int tp__node_add_vertex(tp_node *n, int kind, const char *name);
int tp__node_add_link(tp_node *n, int a, int b, double bw);
/* The model of an hwloc topology into n (node_build.c): its CPUs, PCIe
 * tree, GPUs, network cards and xGMI peers, then tp__node_finish. */
int tp__node_build(tp_node *n, struct hwloc_topology *t, tp_error *err);
/* Every GPU's nearest network card and the links to it (node_routes.c);
 * TP_ENOMEM or 0. */
int tp__node_nic_routes(tp_node *n);
/* PCIe route and class between two device vertices (node_routes.c); links
 * may be NULL. */
int tp__node_vertex_route(const tp_node *n, int a, int b, int numa_a,
			  int numa_b, int *links, enum tp_gpu_path *cls);

#endif
