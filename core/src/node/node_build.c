/* topoplace — a node model built from an hwloc topology: sockets, cores and
 * their PUs, the PCIe tree with its bridges and switches, the GPUs (a
 * partitioned device as several), the network cards for the job's traffic
 * and the xGMI peers hwloc's rsmi backend lists, as vertices and links of
 * the model's graph (node_routes.c's building blocks, then its routes). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <hwloc.h>

#include "util/util_internal.h"
#include "node/node_internal.h"
#include "node/node_model.h"

static bool is_nvidia_gpu(hwloc_obj_t o)
{
	return o->type == HWLOC_OBJ_PCI_DEVICE &&
	       o->attr->pcidev.vendor_id == 0x10de &&
	       (o->attr->pcidev.class_id == 0x0300 ||
		o->attr->pcidev.class_id == 0x0302);
}

/* The ROCm SMI OS device hwloc's rsmi backend puts below an AMD GPU
 * ("rsmi3", subtype RSMI), or NULL. */
static hwloc_obj_t rsmi_osdev(hwloc_obj_t o)
{
	for (hwloc_obj_t c = o->io_first_child; c; c = c->next_sibling)
		if (c->type == HWLOC_OBJ_OS_DEVICE && c->name &&
		    !strncmp(c->name, "rsmi", 4) && c->name[4] >= '0' &&
		    c->name[4] <= '9')
			return c;
	return NULL;
}

int tp__osdev_backend(const char *name)
{
	return name && (!strncmp(name, "rsmi", 4) || !strncmp(name, "nvml", 4)) &&
	       name[4] >= '0' && name[4] <= '9' ? 4 : 0;
}

/* The number after a backend's prefix ("rsmi12": 12). */
static long osdev_number(const char *name)
{
	return strtol(name + 4, NULL, 10);
}

/* The partitions of GPU device o: its OS devices of the partition-counting
 * backend (tp__osdev_backend; ROCm SMI lists every partition of an MI300
 * in CPX, TPX, DPX or QPX mode below the one PCI device, as hwloc 2.12
 * places them), sorted by their number, into out (cap entries); returns
 * how many, 1 (out[0] NULL) when the device has fewer than two.  Other
 * backends (OpenCL, CUDA, the DRM card and render nodes) are not counted:
 * one GPU may have several of them (two OpenCL platforms), and NVIDIA MIG
 * instances are no OS devices in hwloc (its nvml backend lists the
 * physical GPUs, CUDA at most one instance). */
static int partitions_of(hwloc_obj_t o, hwloc_obj_t *out, int cap)
{
	int k = 0;
	for (const char *pre = "rsmi"; pre; pre = pre[0] == 'r' ? "nvml" : NULL) {
		int m = 0;
		for (hwloc_obj_t c = o->io_first_child; c; c = c->next_sibling)
			if (c->type == HWLOC_OBJ_OS_DEVICE && tp__osdev_backend(c->name) &&
			    !strncmp(c->name, pre, 4)) {
				if (m < cap)
					out[m] = c;
				m++;
			}
		if (m > 1) {
			k = m;
			break;
		}
	}
	if (k < 2) {
		out[0] = NULL;
		return 1;
	}
	int got = k < cap ? k : cap;
	for (int i = 1; i < got; i++)     /* insertion sort by number */
		for (int j = i; j > 0 && osdev_number(out[j - 1]->name) >
					 osdev_number(out[j]->name); j--) {
			hwloc_obj_t t = out[j];
			out[j] = out[j - 1];
			out[j - 1] = t;
		}
	return k;
}

/* An OS device of the given subtype below PCI device o: hwloc's opencl
 * backend puts "OpenCL" ones below a GPU ("opencl0d1"), hwloc 2.10 and
 * later a "Slingshot" one below a Slingshot card. */
static bool has_osdev_subtype(hwloc_obj_t o, const char *subtype)
{
	for (hwloc_obj_t c = o->io_first_child; c; c = c->next_sibling)
		if (c->type == HWLOC_OBJ_OS_DEVICE && c->subtype &&
		    !strcmp(c->subtype, subtype))
			return true;
	return false;
}

/* AMD Instinct accelerators: display controllers of class 0x0380 (MI100,
 * MI200 GCDs) or 0x0302, processing accelerators of class 0x1200 (MI300),
 * or any AMD display device with a ROCm SMI or OpenCL device below it (a
 * Radeon under ROCm is a VGA controller, 0x0300).  A plain VGA device
 * without either (a board's video) is not counted. */
static bool is_amd_gpu(hwloc_obj_t o)
{
	if (o->type != HWLOC_OBJ_PCI_DEVICE || o->attr->pcidev.vendor_id != 0x1002)
		return false;
	unsigned cls = o->attr->pcidev.class_id;
	if (cls == 0x0380 || cls == 0x0302 || cls == 0x1200)
		return true;
	return (cls >> 8) == 0x03 &&
	       (rsmi_osdev(o) != NULL || has_osdev_subtype(o, "OpenCL"));
}

static bool is_gpu(hwloc_obj_t o)
{
	return is_nvidia_gpu(o) || is_amd_gpu(o);
}

/* An HPE Slingshot card: Cassini 1 (Cray, 0x17db:0x0501) or Cassini 2
 * (HPE, 0x1590:0x0371), PCI ids of the cxi driver; or a network OS device
 * that hwloc (2.10 and later) marks with subtype "Slingshot".  The cards
 * are Ethernet controllers (class 0x0200) without an OpenFabrics device. */
static bool is_slingshot(hwloc_obj_t o)
{
	unsigned v = o->attr->pcidev.vendor_id, d = o->attr->pcidev.device_id;
	if ((v == 0x17db && d == 0x0501) || (v == 0x1590 && d == 0x0371))
		return true;
	return has_osdev_subtype(o, "Slingshot");
}

/* A network card for the job's traffic: InfiniBand (class 0x0207), other
 * fabrics (0x0208), or a network controller with an OpenFabrics (RDMA)
 * device below it, as hwloc shows ConnectX, Slingshot and EFA cards.  Plain
 * Ethernet ports without RDMA (management networks) are not counted. */
static bool is_fabric_nic(hwloc_obj_t o)
{
	if (o->type != HWLOC_OBJ_PCI_DEVICE)
		return false;
	unsigned cls = o->attr->pcidev.class_id;
	if (cls == 0x0207 || cls == 0x0208)
		return true;
	if ((cls >> 8) != 0x02)
		return false;
	if (is_slingshot(o))
		return true;
	for (hwloc_obj_t c = o->io_first_child; c; c = c->next_sibling)
		if (c->type == HWLOC_OBJ_OS_DEVICE &&
		    c->attr->osdev.type == HWLOC_OBJ_OSDEV_OPENFABRICS)
			return true;
	return false;
}

static int cmp_gpu_obj(const void *x, const void *y)
{
	const struct hwloc_pcidev_attr_s *a = &(*(hwloc_obj_t const *)x)->attr->pcidev;
	const struct hwloc_pcidev_attr_s *b = &(*(hwloc_obj_t const *)y)->attr->pcidev;
	unsigned ka[4] = { a->domain, a->bus, a->dev, a->func };
	unsigned kb[4] = { b->domain, b->bus, b->dev, b->func };
	for (int i = 0; i < 4; i++)
		if (ka[i] != kb[i])
			return ka[i] < kb[i] ? -1 : 1;
	return 0;
}

static double pci_speed(hwloc_obj_t o)
{
	float s = 0;
	if (o->type == HWLOC_OBJ_PCI_DEVICE)
		s = o->attr->pcidev.linkspeed;
	else if (o->type == HWLOC_OBJ_BRIDGE &&
		 o->attr->bridge.upstream_type == HWLOC_OBJ_BRIDGE_PCI)
		s = o->attr->bridge.upstream.pci.linkspeed;
	return s > 0 ? (double)s : TP_PCI_BW;
}

/* Does child c of a host bridge widen it: a bridge (a port with devices
 * behind it), or a device of a class hwloc keeps by default (GPUs,
 * network, storage, accelerators: HWLOC_TYPE_FILTER_KEEP_IMPORTANT)?  The
 * bridge's own function (class 0600), chipset devices and a VM's virtual
 * ones are in a node's model (it keeps every device) and not in lstopo's
 * export: counted, they gave a VM's H200 host bridge 135 GB/s read from
 * the node and 99 GB/s from lstopo's XML of it. */
static bool widens_hostbridge(hwloc_obj_t c)
{
	if (c->type == HWLOC_OBJ_BRIDGE)
		return true;
	if (c->type != HWLOC_OBJ_PCI_DEVICE)
		return false;
	unsigned cls = c->attr->pcidev.class_id, base = cls >> 8;
	return base == 0x01 || base == 0x02 || base == 0x03 || base == 0x0b ||
	       base == 0x12 || cls == 0x0c04 || cls == 0x0c06;
}

static bool is_hostbridge(hwloc_obj_t o)
{
	return o->type == HWLOC_OBJ_BRIDGE &&
	       o->attr->bridge.upstream_type == HWLOC_OBJ_BRIDGE_HOST;
}

static void obj_name(hwloc_obj_t o, char *buf, size_t len)
{
	if (is_hostbridge(o)) {
		snprintf(buf, len, "host bridge %04x:[%02x-%02x]",
			 o->attr->bridge.downstream.pci.domain,
			 o->attr->bridge.downstream.pci.secondary_bus,
			 o->attr->bridge.downstream.pci.subordinate_bus);
	} else {
		const struct hwloc_pcidev_attr_s *p =
			o->type == HWLOC_OBJ_BRIDGE ? &o->attr->bridge.upstream.pci
						    : &o->attr->pcidev;
		snprintf(buf, len, "%s %04x:%02x:%02x.%x",
			 o->io_arity > 1 ? "switch" : "bridge", p->domain,
			 p->bus, p->dev, p->func);
	}
}

/* The node's PCIe tree being built: objs[v] remembers the hwloc object of
 * vertex v (ocap entries). */
struct pci_tree {
	tp_node *n;
	hwloc_obj_t *objs;
	int ocap;
};

/* Remember that vertex v stands for o (NULL: for no PCI object); -1 when
 * out of memory. */
static int track(struct pci_tree *pt, int v, hwloc_obj_t o)
{
	if (v < 0)
		return -1;
	if (v >= pt->ocap) {
		int nc = v * 2 + 16;
		hwloc_obj_t *no = realloc(pt->objs, sizeof *no * (size_t)nc);
		if (!no)
			return -1;
		memset(no + pt->ocap, 0, sizeof *no * (size_t)(nc - pt->ocap));
		pt->objs = no;
		pt->ocap = nc;
	}
	pt->objs[v] = o;
	return v;
}

/* Finds the vertex of hwloc object o, creating it (and its uplinks) when
 * needed. */
static int vertex_of(struct pci_tree *pt, hwloc_obj_t o)
{
	tp_node *n = pt->n;
	for (int v = 0; v < n->nvert; v++)
		if (pt->objs[v] == o)
			return v;
	int kind = is_hostbridge(o) ? TP_V_HOSTBRIDGE : TP_V_BRIDGE;
	char name[40];
	obj_name(o, name, sizeof name);
	int v = track(pt, tp__node_add_vertex(n, kind, name), o);
	if (v < 0)
		return -1;
	n->vert[v].fanout = (int)o->io_arity;
	hwloc_obj_t p = o->parent;
	int pv;
	double bw;
	if (p && (p->type == HWLOC_OBJ_BRIDGE || p->type == HWLOC_OBJ_PCI_DEVICE)) {
		pv = vertex_of(pt, p);
		bw = pci_speed(o);
	} else {
		hwloc_obj_t pk = p;
		while (pk && pk->type != HWLOC_OBJ_PACKAGE)
			pk = pk->parent;
		pv = pk && (int)pk->logical_index < n->npackages
		     ? (int)pk->logical_index : 0;
		/* a host bridge carries what its ports carry */
		bw = 0;
		for (hwloc_obj_t c = o->io_first_child; c; c = c->next_sibling)
			if (widens_hostbridge(c))
				bw += pci_speed(c);
		if (bw <= 0)
			bw = TP_PCI_BW;
	}
	if (pv < 0)
		return -1;
	int l = tp__node_add_link(n, v, pv, bw);
	if (l < 0)
		return -1;
	n->vert[v].parent = pv;
	n->vert[v].uplink = l;
	return v;
}

/* "0000:07:00.0" */
static void busid_of(hwloc_obj_t o, char *buf, size_t len)
{
	const struct hwloc_pcidev_attr_s *a = &o->attr->pcidev;
	snprintf(buf, len, "%04x:%02x:%02x.%x", a->domain & 0xffff, a->bus,
		 a->dev, a->func);
}

/* The socket and NUMA node of a PCI device from its first non-I/O
 * ancestor. */
static void pci_locality(tp_node *n, hwloc_topology_t t, hwloc_obj_t o,
			 int *package, int *numa)
{
	hwloc_obj_t a = hwloc_get_non_io_ancestor_obj(t, o);
	*package = -1;
	*numa = -1;
	if (!a)
		return;
	hwloc_obj_t pk = a;
	while (pk && pk->type != HWLOC_OBJ_PACKAGE)
		pk = pk->parent;
	if (pk && (int)pk->logical_index < n->npackages)
		*package = (int)pk->logical_index;
	if (a->nodeset && hwloc_bitmap_weight(a->nodeset) == 1) {
		hwloc_obj_t nn = hwloc_get_numanode_obj_by_os_index(
			t, (unsigned)hwloc_bitmap_first(a->nodeset));
		if (nn)
			*numa = (int)nn->logical_index;
	}
	if (*package < 0 && n->npackages == 1)
		*package = 0;
}

/* A PCI device (GPU or NIC) as a leaf vertex below its bridge (or its
 * socket); returns the vertex or -1 (out of memory). */
static int attach_device(struct pci_tree *pt, hwloc_obj_t o, int kind,
			 const char *name, int package)
{
	tp_node *n = pt->n;
	int v = track(pt, tp__node_add_vertex(n, kind, name), o);
	if (v < 0)
		return -1;
	hwloc_obj_t p = o->parent;
	int pv;
	if (p && (p->type == HWLOC_OBJ_BRIDGE || p->type == HWLOC_OBJ_PCI_DEVICE))
		pv = vertex_of(pt, p);
	else
		pv = package >= 0 ? package : 0;
	if (pv < 0)
		return -1;
	int l = tp__node_add_link(n, v, pv, pci_speed(o));
	if (l < 0)
		return -1;
	n->vert[v].parent = pv;
	n->vert[v].uplink = l;
	return v;
}

/* PCI devices that pred accepts, sorted in bus order: *out malloc'ed. */
static int collect_pci(hwloc_topology_t t, bool (*pred)(hwloc_obj_t),
		       int max, hwloc_obj_t **out, int *count)
{
	int k = 0, cap = 8;
	hwloc_obj_t *a = tp__malloc_array((size_t)cap, sizeof *a);
	if (!a)
		return TP_ENOMEM;
	for (hwloc_obj_t o = NULL; (o = hwloc_get_next_pcidev(t, o));) {
		if (!pred(o))
			continue;
		if (k == max) {
			free(a);
			return TP_ENOTSUP;
		}
		if (k == cap) {
			cap *= 2;
			hwloc_obj_t *b = realloc(a, sizeof *a * (size_t)cap);
			if (!b) {
				free(a);
				return TP_ENOMEM;
			}
			a = b;
		}
		a[k++] = o;
	}
	qsort(a, (size_t)k, sizeof *a, cmp_gpu_obj);
	*out = a;
	*count = k;
	return 0;
}

static int load_cpus(tp_node *n, hwloc_topology_t t)
{
	int np = hwloc_get_nbobjs_by_type(t, HWLOC_OBJ_PACKAGE);
	n->npackages = np > 0 ? np : 1;
	int nn = hwloc_get_nbobjs_by_type(t, HWLOC_OBJ_NUMANODE);
	n->nnuma = nn > 0 ? nn : 1;
	hwloc_obj_type_t ct = HWLOC_OBJ_CORE;
	int nc = hwloc_get_nbobjs_by_type(t, ct);
	if (nc <= 0) {
		ct = HWLOC_OBJ_PU;
		nc = hwloc_get_nbobjs_by_type(t, ct);
	}
	if (nc <= 0)
		return TP_EINVAL;
	int npu = hwloc_get_nbobjs_by_type(t, HWLOC_OBJ_PU);
	n->ncores = nc;
	n->npus = npu > 0 ? npu : nc;
	n->core_pkg = tp__calloc((size_t)nc, sizeof(int));
	n->core_pu_off = tp__calloc((size_t)nc + 1, sizeof(int));
	if (!n->core_pkg || !n->core_pu_off)
		return TP_ENOMEM;
	int total = 0;
	for (int c = 0; c < nc; c++) {
		hwloc_obj_t o = hwloc_get_obj_by_type(t, ct, (unsigned)c);
		int w = o && o->cpuset ? hwloc_bitmap_weight(o->cpuset) : 0;
		total += w > 0 ? w : 0;
	}
	n->core_pus = tp__calloc((size_t)total + 1, sizeof(int));
	if (!n->core_pus)
		return TP_ENOMEM;
	int k = 0;
	for (int c = 0; c < nc; c++) {
		hwloc_obj_t o = hwloc_get_obj_by_type(t, ct, (unsigned)c);
		n->core_pu_off[c] = k;
		hwloc_obj_t pk = o;
		while (pk && pk->type != HWLOC_OBJ_PACKAGE)
			pk = pk->parent;
		n->core_pkg[c] = pk && (int)pk->logical_index < n->npackages
				 ? (int)pk->logical_index : 0;
		if (o && o->cpuset) {
			unsigned id;
			hwloc_bitmap_foreach_begin(id, o->cpuset)
				if (k < total)
					n->core_pus[k++] = (int)id;
			hwloc_bitmap_foreach_end();
		}
	}
	n->core_pu_off[nc] = k;
	return 0;
}

static int depth_of(tp_node *n, int v)
{
	int d = 0;
	for (int p = n->vert[v].parent; p >= 0 && d <= n->nvert; p = n->vert[p].parent)
		d++;
	return d;
}

/* The rsmi index of a ROCm SMI device ("rsmi3": 3), -1 without. */
static int rsmi_index(hwloc_obj_t r)
{
	if (!r || strncmp(r->name, "rsmi", 4))
		return -1;
	long v = strtol(r->name + 4, NULL, 10);
	return v >= 0 && v < TP__XML_MAX_RSMI ? (int)v : -1;
}

/* "rsmi1 rsmi5 " as a bit set of rsmi indices (the XML checker has
 * checked the syntax; the live hwloc is trusted as far as this goes). */
static uint64_t xgmi_peer_set(const char *s)
{
	uint64_t set = 0;
	while (s && (s = strstr(s, "rsmi"))) {
		char *e;
		long v = strtol(s + 4, &e, 10);
		if (e != s + 4 && v >= 0 && v < TP__XML_MAX_RSMI)
			set |= (uint64_t)1 << v;
		s = e;
	}
	return set;
}

/* The two GCDs of one MI250 / MI250X package (PCI device 0x7408 or
 * 0x740c): consecutive in PCI bus order, the first at an even position
 * among these GPUs (GCD 0-1, 2-3, ... in the OLCF Frontier node diagram
 * and in rocm-smi --shownodesbw of 4 x MI250, where each such pair shows
 * 50000-200000 MB/s).  hwloc does not say how many xGMI links join two
 * GPUs; these pairs have 4, other peers are counted as 1 (a rocm-smi
 * GpuLinks= file gives the true counts). */
bool tp__node_mi250_pair(const tp_node *n, int a, int b)
{
	int pos = 0, pa = -1;
	for (int g = 0; g < n->ngpus; g++) {
		unsigned d = n->gpu[g].device;
		if (n->gpu[g].vendor != 0x1002 || (d != 0x7408 && d != 0x740c))
			continue;
		if (g == a)
			pa = pos;
		if (g == b)
			return pa >= 0 && pa % 2 == 0 && pos == pa + 1;
		pos++;
	}
	return false;
}

/* xGMI links between AMD GPUs from ROCm SMI's XGMIPeers info (hwloc's rsmi
 * backend; gos: each GPU's ROCm SMI device, its partition's when the
 * device has several), into n->nvl; the fabric is xGMI when any pair is
 * linked.  Partitions of one device list each other as peers: they share
 * the package, not an xGMI link. */
static void hwloc_xgmi(tp_node *n, hwloc_obj_t *gos)
{
	int ng = n->ngpus;
	int rsmi[TP_NODE_MAX_GPUS];
	uint64_t peers[TP_NODE_MAX_GPUS];
	for (int g = 0; g < ng; g++) {
		hwloc_obj_t r = gos[g];
		rsmi[g] = rsmi_index(r);
		peers[g] = r ? xgmi_peer_set(hwloc_obj_get_info_by_name(r, "XGMIPeers")) : 0;
	}
	bool any = false;
	for (int a = 0; a < ng; a++)
		for (int b = a + 1; b < ng; b++) {
			if (rsmi[a] < 0 || rsmi[b] < 0 || tp__node_same_device(n, a, b) ||
			    !((peers[a] >> rsmi[b] & 1) || (peers[b] >> rsmi[a] & 1)))
				continue;
			int links = tp__node_mi250_pair(n, a, b) ? 4 : 1;
			n->nvl[a * ng + b] = n->nvl[b * ng + a] = links;
			any = true;
		}
	if (any)
		n->fabric = TP_FABRIC_XGMI;
}

int tp__node_build(tp_node *n, hwloc_topology_t t, tp_error *err)
{
	int rc = load_cpus(n, t);
	if (rc == TP_EINVAL)
		return tp_error_set(err, rc, "%s: no cores or processing units",
				    n->source);
	if (rc)
		return tp_error_set(err, rc, "%s: out of memory", n->source);
	for (int p = 0; p < n->npackages; p++) {
		char name[24];
		snprintf(name, sizeof name, "socket%d", p);
		if (tp__node_add_vertex(n, TP_V_PACKAGE, name) < 0)
			return tp_error_set(err, TP_ENOMEM, "%s: out of memory", n->source);
	}
	int np = n->npackages;
	n->pkg_link = tp__malloc_array((size_t)np * (size_t)np, sizeof(int));
	if (!n->pkg_link)
		return tp_error_set(err, TP_ENOMEM, "%s: out of memory", n->source);
	for (int i = 0; i < np * np; i++)
		n->pkg_link[i] = -1;
	for (int i = 0; i < np; i++)
		for (int j = i + 1; j < np; j++) {
			int l = tp__node_add_link(n, i, j, TP_SMP_BW);
			if (l < 0)
				return tp_error_set(err, TP_ENOMEM, "%s: out of memory",
						    n->source);
			n->pkg_link[i * np + j] = n->pkg_link[j * np + i] = l;
		}

	/* GPUs, then network cards, in PCI bus order */
	int ng = 0, nnic = 0;
	hwloc_obj_t *gobj = NULL, *nobj = NULL;
	struct pci_tree pt = { n, tp__calloc(64, sizeof(hwloc_obj_t)), 64 };
	if (!pt.objs)
		return tp_error_set(err, TP_ENOMEM, "%s: out of memory", n->source);
	rc = collect_pci(t, is_gpu, TP_NODE_MAX_GPUS, &gobj, &ng);
	if (!rc)
		rc = collect_pci(t, is_fabric_nic, TP_NODE_MAX_NICS, &nobj, &nnic);
	if (rc) {
		free(gobj);
		free(pt.objs);
		return rc == TP_ENOTSUP
		       ? tp_error_set(err, TP_ENOTSUP, "%s: more than %d %s",
				      n->source, gobj ? TP_NODE_MAX_NICS
						      : TP_NODE_MAX_GPUS,
				      gobj ? "network cards" : "GPUs")
		       : tp_error_set(err, TP_ENOMEM, "%s: out of memory", n->source);
	}
	/* a device of several partitions is that many GPUs */
	int ndev = ng, total = 0;
	hwloc_obj_t *gos = tp__calloc(TP_NODE_MAX_GPUS, sizeof *gos);
	hwloc_obj_t *parts = tp__calloc(TP_NODE_MAX_GPUS, sizeof *parts);
	if (!gos || !parts) {
		free(gobj);
		free(nobj);
		free(pt.objs);
		free(gos);
		free(parts);
		return tp_error_set(err, TP_ENOMEM, "%s: out of memory", n->source);
	}
	for (int d = 0; d < ndev; d++)
		total += partitions_of(gobj[d], parts, TP_NODE_MAX_GPUS);
	if (total > TP_NODE_MAX_GPUS) {
		free(gobj);
		free(nobj);
		free(pt.objs);
		free(gos);
		free(parts);
		return tp_error_set(err, TP_ENOTSUP, "%s: more than %d GPUs (%d "
				    "partitions of %d devices)", n->source,
				    TP_NODE_MAX_GPUS, total, ndev);
	}
	ng = total;
	n->ngpus = ng;
	n->nnics = nnic;
	n->gpu = tp__calloc((size_t)ng + 1, sizeof *n->gpu);
	n->nic = tp__calloc((size_t)nnic + 1, sizeof *n->nic);
	if (!n->gpu || !n->nic) {
		free(gobj);
		free(nobj);
		free(pt.objs);
		free(gos);
		free(parts);
		return tp_error_set(err, TP_ENOMEM, "%s: out of memory", n->source);
	}
	rc = 0;
	for (int d = 0, g = 0; d < ndev && !rc; d++) {
		hwloc_obj_t o = gobj[d];
		int nparts = partitions_of(o, parts, TP_NODE_MAX_GPUS);
		const struct hwloc_pcidev_attr_s *a = &o->attr->pcidev;
		char name[40];
		int dv = -1;
		if (nparts > 1) {
			/* the device in the PCIe tree, its partitions below it */
			snprintf(name, sizeof name, "GPU%d-%d", g, g + nparts - 1);
			int pkg, numa;
			pci_locality(n, t, o, &pkg, &numa);
			dv = attach_device(&pt, o, TP_V_GPUDEV, name, pkg);
			rc = dv < 0 ? -1 : 0;
		}
		for (int k = 0; k < nparts && !rc; k++, g++) {
			struct tp_node_gpu *gp = &n->gpu[g];
			gp->domain = a->domain;
			gp->bus = a->bus;
			gp->dev = a->dev;
			gp->func = a->func;
			gp->vendor = a->vendor_id;
			gp->device = a->device_id;
			gp->pdev = d;
			gp->part = k;
			gp->nparts = nparts;
			busid_of(o, gp->busid, sizeof gp->busid);
			pci_locality(n, t, o, &gp->package, &gp->numa);
			snprintf(name, sizeof name, "GPU%d", g);
			if (nparts == 1) {
				gp->vertex = attach_device(&pt, o, TP_V_GPU, name,
							   gp->package);
				gp->fvert = gp->vertex;
				gos[g] = rsmi_osdev(o);
				rc = gp->vertex < 0 ? -1 : 0;
				continue;
			}
			snprintf(gp->osdev, sizeof gp->osdev, "%s", parts[k]->name);
			gos[g] = parts[k];
			gp->fvert = dv;
			gp->vertex = track(&pt, tp__node_add_vertex(n, TP_V_GPU, name), NULL);
			int l = gp->vertex < 0 ? -1 : tp__node_add_link(n, gp->vertex, dv, TP__PART_BW);
			if (l < 0) {
				rc = -1;
			} else {
				n->vert[gp->vertex].parent = dv;
				n->vert[gp->vertex].uplink = l;
			}
		}
	}
	free(parts);
	for (int i = 0; i < nnic && !rc; i++) {
		hwloc_obj_t o = nobj[i];
		struct tp_node_nic *nc = &n->nic[i];
		busid_of(o, nc->busid, sizeof nc->busid);
		pci_locality(n, t, o, &nc->package, &nc->numa);
		char name[24];
		snprintf(name, sizeof name, "NIC%d", i);
		nc->vertex = attach_device(&pt, o, TP_V_NIC, name, nc->package);
		/* the card's port to the network: hwloc does not know its speed,
		 * the card's own PCIe link bounds it */
		snprintf(name, sizeof name, "NIC%d port", i);
		int pv = nc->vertex < 0 ? -1 : track(&pt, tp__node_add_vertex(n, TP_V_PORT, name),
						     NULL);
		nc->port_link = pv < 0 ? -1 : tp__node_add_link(n, pv, nc->vertex, pci_speed(o));
		if (nc->port_link < 0) {
			rc = -1;
		} else {
			n->vert[pv].parent = nc->vertex;
			n->vert[pv].uplink = nc->port_link;
		}
	}
	free(nobj);
	free(pt.objs);
	free(gobj);
	if (rc) {
		free(gos);
		return tp_error_set(err, TP_ENOMEM, "%s: out of memory", n->source);
	}
	for (int v = 0; v < n->nvert; v++)
		n->vert[v].depth = depth_of(n, v);
	n->nlinks_pci = n->nlinks;
	if (tp__node_nic_routes(n)) {
		free(gos);
		return tp_error_set(err, TP_ENOMEM, "%s: out of memory", n->source);
	}
	size_t g2 = (size_t)(ng > 0 ? ng : 1) * (size_t)(ng > 0 ? ng : 1);
	n->nvl = tp__calloc(g2, sizeof(int));
	n->fbw = tp__calloc(g2, sizeof(double));
	n->nvl_link = tp__malloc_array(g2, sizeof(int));
	n->nvs_link = tp__malloc_array((size_t)ng + 1, sizeof(int));
	n->path = tp__calloc(g2, sizeof(int));
	n->pbw = tp__calloc(g2, sizeof(double));
	n->route_off = tp__calloc(g2 + 1, sizeof(int));
	if (!n->nvl || !n->fbw || !n->nvl_link || !n->nvs_link || !n->path ||
	    !n->pbw || !n->route_off) {
		free(gos);
		return tp_error_set(err, TP_ENOMEM, "%s: out of memory", n->source);
	}
	hwloc_xgmi(n, gos);
	free(gos);
	return tp__node_finish(n, err);
}
