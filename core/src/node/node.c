/* topoplace — the node model's life: loaded from an hwloc XML (checked and
 * rewritten first, node_xml.c) or from this machine, and freed.  The model
 * is built in node_build.c and routed in node_routes.c; node_query.c
 * answers what it holds. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <hwloc.h>

#include "util/util_internal.h"
#include "node/node_internal.h"
#include "node/node_model.h"

void tp_node_destroy(tp_node *n)
{
	if (!n)
		return;
	free(n->source);
	free(n->xml);
	free(n->core_pkg);
	free(n->core_pu_off);
	free(n->core_pus);
	free(n->gpu);
	free(n->vert);
	free(n->link);
	free(n->pkg_link);
	free(n->nvl);
	free(n->fbw);
	free(n->nvl_link);
	free(n->nvs_link);
	free(n->path);
	free(n->pbw);
	free(n->route_off);
	free(n->route);
	free(n->nic);
	free(n->gpu_nic);
	free(n->nic_route_off);
	free(n->nic_route);
	free(n);
}

static tp_node *node_new(const char *source)
{
	tp_node *n = calloc(1, sizeof *n);
	if (!n)
		return NULL;
	n->source = strdup(source);
	if (!n->source) {
		free(n);
		return NULL;
	}
	return n;
}

static int load_topology(hwloc_topology_t t, tp_node **out, const char *what,
			 tp_error *err)
{
	tp_node *n = node_new(what);
	if (!n)
		return tp_error_set(err, TP_ENOMEM, "%s: out of memory", what);
	int rc = tp__node_build(n, t, err);
	if (rc) {
		tp_node_destroy(n);
		return rc;
	}
	*out = n;
	return 0;
}

/* Every hwloc topology of a node model sees the whole node: with
 * INCLUDE_DISALLOWED the CPUs and memory outside this process's cgroup
 * cpuset are kept (slurmstepd runs the plugin inside the step's cpuset
 * under ConstrainCores=yes), as lstopo --disallowed and Slurm's
 * task/cgroup read it.  The job's own CPUs come from Slurm per step
 * (S_STEP_ALLOC_CORES), never from the model. */
static int topo_init(hwloc_topology_t *t, const char *what, tp_error *err)
{
	if (hwloc_topology_init(t) < 0)
		return tp_error_set(err, TP_ENOMEM, "%s: hwloc: cannot initialise", what);
	if (hwloc_topology_set_flags(*t, HWLOC_TOPOLOGY_FLAG_INCLUDE_DISALLOWED) < 0 ||
	    hwloc_topology_set_io_types_filter(*t, HWLOC_TYPE_FILTER_KEEP_ALL) < 0) {
		hwloc_topology_destroy(*t);
		return tp_error_set(err, TP_ENOTSUP, "%s: hwloc: no I/O support", what);
	}
	return 0;
}

int tp_node_load_xml_buffer(const char *xml, size_t len, const char *what,
			    tp_node **out, tp_error *err)
{
	*out = NULL;
	if (!what)
		what = "hwloc XML";
	if (!xml || len == 0)
		return tp_error_set(err, TP_EINVAL, "%s: empty hwloc XML", what);
	/* hwloc never sees the text itself, only the checked rewrite of it
	 * (node_xml.c): it crashes or stalls on some malformed XML. */
	char *buf;
	size_t blen;
	struct tp__xml_dist dist = { 0 };
	int rc = tp__node_xml_check_dist(xml, len, what, &buf, &blen, &dist, err);
	if (rc) {
		tp__xml_dist_free(&dist);
		return rc;
	}
	hwloc_topology_t t;
	if ((rc = topo_init(&t, what, err))) {
		free(buf);
		tp__xml_dist_free(&dist);
		return rc;
	}
	/* hwloc wants the terminating NUL counted */
	if (hwloc_topology_set_xmlbuffer(t, buf, (int)blen + 1) < 0 ||
	    hwloc_topology_load(t) < 0) {
		free(buf);
		tp__xml_dist_free(&dist);
		hwloc_topology_destroy(t);
		return tp_error_set(err, TP_EINVAL,
				    "%s: not a valid hwloc XML topology (check it with "
				    "lstopo --input)", what);
	}
	rc = load_topology(t, out, what, err);
	hwloc_topology_destroy(t);
	/* the GPU fabric from the XML's distances: GPUs are numbered now */
	if (!rc && (rc = tp__node_xml_fabric(*out, &dist, what, err))) {
		tp_node_destroy(*out);
		*out = NULL;
	}
	tp__xml_dist_free(&dist);
	if (rc) {
		free(buf);
		return rc;
	}
	/* kept for tp_node_write_xml */
	(*out)->xml = buf;
	(*out)->xml_len = blen;
	return 0;
}

int tp_node_load_xml(const char *path, tp_node **out, tp_error *err)
{
	*out = NULL;
	char *buf;
	size_t len;
	int rd = tp__read_file(path, TP__MAX_XML_BYTES, "an hwloc XML file", &buf,
			       &len, err);
	if (rd)
		return rd;
	int rc = tp_node_load_xml_buffer(buf, len, path, out, err);
	free(buf);
	return rc;
}

/* hwloc's own export of the live machine, kept for tp_node_write_xml. */
static int keep_export(hwloc_topology_t t, tp_node *n, tp_error *err)
{
	char *buf = NULL;
	int len = 0;
	if (hwloc_topology_export_xmlbuffer(t, &buf, &len, 0) < 0 || len < 1)
		return tp_error_set(err, TP_EIO, "%s: hwloc cannot export XML",
				    n->source);
	n->xml = malloc((size_t)len);
	if (n->xml) {
		memcpy(n->xml, buf, (size_t)len);
		n->xml_len = (size_t)len - 1;
	}
	hwloc_free_xmlbuffer(t, buf);
	return n->xml ? 0 : tp_error_set(err, TP_ENOMEM, "out of memory");
}

int tp_node_load_live(tp_node **out, tp_error *err)
{
	*out = NULL;
	const char *what = "this machine";
	hwloc_topology_t t;
	int rc = topo_init(&t, what, err);
	if (rc)
		return rc;
	if (hwloc_topology_load(t) < 0) {
		hwloc_topology_destroy(t);
		return tp_error_set(err, TP_EIO, "%s: hwloc cannot read the topology",
				    what);
	}
	/* the export marks everything allowed: a reader of the cache (or of
	 * node-info --format xml) without INCLUDE_DISALLOWED, lstopo or an
	 * older topoplace, sees the whole node too */
	if (hwloc_topology_allow(t, NULL, NULL, HWLOC_ALLOW_FLAG_ALL) < 0) {
		hwloc_topology_destroy(t);
		return tp_error_set(err, TP_EIO, "%s: hwloc cannot include the "
				    "CPUs outside this process's cpuset", what);
	}
	rc = load_topology(t, out, what, err);
	if (!rc)
		rc = keep_export(t, *out, err);
	hwloc_topology_destroy(t);
	if (rc) {
		tp_node_destroy(*out);
		*out = NULL;
	}
	return rc;
}
