/* topoplace — the node model's parts and links as a forest, for front ends
 * that draw it (topoplace node-info --format svg).  The model itself is
 * built in node_build.c; this file only reads it. */
#include "node/node_internal.h"

int tp_node_nparts(const tp_node *n)
{
	return n ? n->nvert : 0;
}

static enum tp_node_part_kind part_kind(int vkind)
{
	switch (vkind) {
	case TP_V_PACKAGE: return TP_PART_SOCKET;
	case TP_V_HOSTBRIDGE: return TP_PART_HOSTBRIDGE;
	case TP_V_GPU: return TP_PART_GPU;
	case TP_V_NVSWITCH: return TP_PART_NVSWITCH;
	case TP_V_NIC: return TP_PART_NIC;
	case TP_V_PORT: return TP_PART_PORT;
	/* a partitioned GPU's device: a bridge above its partitions (GPUs) */
	case TP_V_GPUDEV: return TP_PART_BRIDGE;
	default: return TP_PART_BRIDGE;
	}
}

/* The socket, GPU or card number of vertex v; -1 for the others. */
static int part_index(const tp_node *n, int v)
{
	const struct tp_node_vertex *x = &n->vert[v];
	if (x->kind == TP_V_PACKAGE)
		return v;
	if (x->kind == TP_V_PORT && x->parent >= 0)
		v = x->parent;
	for (int g = 0; g < n->ngpus && x->kind == TP_V_GPU; g++)
		if (n->gpu[g].vertex == v)
			return g;
	for (int i = 0; i < n->nnics && (x->kind == TP_V_NIC || x->kind == TP_V_PORT); i++)
		if (n->nic[i].vertex == v)
			return i;
	return -1;
}

int tp_node_part_get(const tp_node *n, int p, tp_node_part *out)
{
	if (!n || !out || p < 0 || p >= n->nvert)
		return TP_EINVAL;
	const struct tp_node_vertex *x = &n->vert[p];
	out->kind = part_kind(x->kind);
	out->parent = x->parent;
	out->uplink = x->uplink;
	out->index = part_index(n, p);
	out->name = x->name;
	return TP_OK;
}

int tp_node_link_parts(const tp_node *n, int l, int *a, int *b)
{
	if (!n || !a || !b || l < 0 || l >= n->nlinks)
		return TP_EINVAL;
	*a = n->link[l].a;
	*b = n->link[l].b;
	return TP_OK;
}
