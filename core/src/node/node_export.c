/* topoplace — a node model written back as one hwloc XML.
 *
 * The model keeps the hwloc XML it was built from (the checked rewrite of
 * a file, or hwloc's export of the live machine).  Written back, that XML
 * gets the GPU fabric as hwloc's own NVML and ROCm SMI backends record it,
 * so that the file alone gives the same model again (node_xml_dist.c
 * reads these distances):
 *   NVLinkBandwidth  the pair's NVLink bandwidth in MB/s each way (its
 *                    links at the rate of their generation, as hwloc
 *                    writes them: 25000 a link of NVLink 2-4), 1000000 on
 *                    the diagonal;
 *   XGMIBandwidth    the pair's direct xGMI bandwidth in MB/s;
 * both over the GPUs' PCI objects, or for a partitioned device over its
 * partitions' OS devices (rsmiN), as hwloc's rsmi backend writes them.  This is what the plugin caches, and
 * what `topoplace node-info --format xml` prints for an admin to pin.
 */
#include <stdlib.h>
#include <string.h>

#include <hwloc.h>

#include "node/node_internal.h"

#define LOCAL_MBS 1000000ull

/* The hwloc object a matrix names GPU g by: its PCI device, or the OS
 * device of its partition. */
static hwloc_obj_t gpu_obj(hwloc_topology_t t, const struct tp_node_gpu *gp)
{
	hwloc_obj_t o = hwloc_get_pcidev_by_busid(t, gp->domain, gp->bus, gp->dev,
						  gp->func);
	if (!o || gp->nparts <= 1)
		return o;
	for (hwloc_obj_t c = o->io_first_child; c; c = c->next_sibling)
		if (c->type == HWLOC_OBJ_OS_DEVICE && c->name &&
		    !strncmp(c->name, gp->osdev, sizeof gp->osdev - 1) &&
		    strlen(c->name) < sizeof gp->osdev)
			return c;
	return NULL;
}

static int add_fabric(hwloc_topology_t t, const tp_node *n, tp_error *err)
{
	int g = n->ngpus;
	if (n->fabric == TP_FABRIC_NONE || g < 2)
		return 0;
	hwloc_obj_t *objs = calloc((size_t)g, sizeof *objs);
	hwloc_uint64_t *val = calloc((size_t)g * (size_t)g, sizeof *val);
	if (!objs || !val) {
		free(objs);
		free(val);
		return tp_error_set(err, TP_ENOMEM, "%s: out of memory", n->source);
	}
	bool nv = n->fabric == TP_FABRIC_NVLINK;
	for (int a = 0; a < g; a++) {
		const struct tp_node_gpu *gp = &n->gpu[a];
		objs[a] = gpu_obj(t, gp);
		for (int b = 0; b < g; b++) {
			int p = a * g + b;
			val[p] = a == b ? LOCAL_MBS
				 : n->nvl[p] > 0 ? (hwloc_uint64_t)(n->fbw[p] * 1000 + 0.5)
				 : 0;
		}
	}
	int rc = 0;
	for (int a = 0; a < g && !rc; a++)
		if (!objs[a])
			rc = tp_error_set(err, TP_EINVAL, "%s: GPU %s is not in "
					  "its own XML", n->source, n->gpu[a].busid);
	hwloc_distances_add_handle_t h = NULL;
	if (!rc)
		h = hwloc_distances_add_create(t, nv ? "NVLinkBandwidth"
					       : "XGMIBandwidth",
					       HWLOC_DISTANCES_KIND_FROM_OS |
					       HWLOC_DISTANCES_KIND_MEANS_BANDWIDTH, 0);
	if (!rc && (!h ||
		    hwloc_distances_add_values(t, h, (unsigned)g, objs, val, 0) < 0 ||
		    hwloc_distances_add_commit(t, h, 0) < 0))
		rc = tp_error_set(err, TP_EINVAL, "%s: hwloc refuses the GPU "
				  "fabric as distances", n->source);
	free(objs);
	free(val);
	return rc;
}

int tp_node_write_xml(const tp_node *n, char **xml, size_t *len, tp_error *err)
{
	if (!n || !xml || !len)
		return tp_error_set(err, TP_EINVAL, "tp_node_write_xml: NULL argument");
	*xml = NULL;
	*len = 0;
	if (!n->xml)
		return tp_error_set(err, TP_EINVAL, "%s: no hwloc XML kept", n->source);
	hwloc_topology_t t;
	if (hwloc_topology_init(&t) < 0)
		return tp_error_set(err, TP_ENOMEM, "%s: hwloc: cannot initialise",
				    n->source);
	int rc = 0;
	char *buf = NULL;
	int blen = 0;
	/* the whole node, as the model was read (node.c topo_init) */
	if (hwloc_topology_set_flags(t, HWLOC_TOPOLOGY_FLAG_INCLUDE_DISALLOWED) < 0 ||
	    hwloc_topology_set_io_types_filter(t, HWLOC_TYPE_FILTER_KEEP_ALL) < 0 ||
	    hwloc_topology_set_xmlbuffer(t, n->xml, (int)n->xml_len + 1) < 0 ||
	    hwloc_topology_load(t) < 0)
		rc = tp_error_set(err, TP_EINVAL, "%s: hwloc cannot read the "
				  "model's XML again", n->source);
	if (!rc)
		rc = add_fabric(t, n, err);
	if (!rc && hwloc_topology_export_xmlbuffer(t, &buf, &blen, 0) < 0)
		rc = tp_error_set(err, TP_EIO, "%s: hwloc cannot export XML",
				  n->source);
	if (!rc && blen > 0) {
		/* hwloc counts the terminating NUL */
		size_t n_out = (size_t)blen - 1;
		if (!(*xml = malloc(n_out + 1)))
			rc = tp_error_set(err, TP_ENOMEM, "out of memory");
		else {
			memcpy(*xml, buf, n_out);
			(*xml)[n_out] = '\0';
			*len = n_out;
		}
	}
	if (buf)
		hwloc_free_xmlbuffer(t, buf);
	hwloc_topology_destroy(t);
	return rc;
}
