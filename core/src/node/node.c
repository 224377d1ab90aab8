/* topoplace — the node model: sockets, cores and GPUs from hwloc, the PCIe
 * tree, the GPU fabric (NVLink, xGMI), path classes and the link graph used
 * for congestion. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <hwloc.h>

#include "internal.h"
#include "node/node_internal.h"

const char *tp_gpu_path_name(enum tp_gpu_path p, int lanes, char *buf,
			     size_t len)
{
	static const char *const names[] = { "X", "PART", "NV", "XGMI", "XHOP",
					     "PIX", "PXB", "PHB", "NODE", "SYS" };
	if ((int)p < 0 || (int)p > TP_PATH_SYS)
		snprintf(buf, len, "?");
	else if (p == TP_PATH_NVL || p == TP_PATH_XGMI || p == TP_PATH_XHOP)
		snprintf(buf, len, "%s%d", names[p], lanes);
	else
		snprintf(buf, len, "%s", names[p]);
	return buf;
}

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

/* ---- building blocks ---- */

static int add_vertex(tp_node *n, int kind, const char *name)
{
	if (n->nvert == n->vcap) {
		int nc = n->vcap ? n->vcap * 2 : 32;
		struct tp_node_vertex *v = realloc(n->vert, sizeof *v * (size_t)nc);
		if (!v)
			return -1;
		n->vert = v;
		n->vcap = nc;
	}
	struct tp_node_vertex *v = &n->vert[n->nvert];
	memset(v, 0, sizeof *v);
	v->kind = kind;
	v->parent = -1;
	v->uplink = -1;
	snprintf(v->name, sizeof v->name, "%s", name);
	return n->nvert++;
}

static int add_link(tp_node *n, int a, int b, double bw)
{
	if (n->nlinks == n->lcap) {
		int nc = n->lcap ? n->lcap * 2 : 32;
		struct tp_node_link *l = realloc(n->link, sizeof *l * (size_t)nc);
		if (!l)
			return -1;
		n->link = l;
		n->lcap = nc;
	}
	struct tp_node_link *l = &n->link[n->nlinks];
	l->a = a;
	l->b = b;
	l->bw = bw;
	snprintf(l->name, sizeof l->name, "%s - %s", n->vert[a].name,
		 n->vert[b].name);
	return n->nlinks++;
}

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

/* An OpenCL device hwloc's opencl backend puts below a GPU ("opencl0d1",
 * subtype OpenCL). */
static bool has_opencl(hwloc_obj_t o)
{
	for (hwloc_obj_t c = o->io_first_child; c; c = c->next_sibling)
		if (c->type == HWLOC_OBJ_OS_DEVICE && c->subtype &&
		    !strcmp(c->subtype, "OpenCL"))
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
	return (cls >> 8) == 0x03 && (rsmi_osdev(o) != NULL || has_opencl(o));
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
	for (hwloc_obj_t c = o->io_first_child; c; c = c->next_sibling)
		if (c->type == HWLOC_OBJ_OS_DEVICE && c->subtype &&
		    !strcmp(c->subtype, "Slingshot"))
			return true;
	return false;
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
	int v = track(pt, add_vertex(n, kind, name), o);
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
			bw += pci_speed(c);
		if (bw <= 0)
			bw = TP_PCI_BW;
	}
	if (pv < 0)
		return -1;
	int l = add_link(n, v, pv, bw);
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
	int v = track(pt, add_vertex(n, kind, name), o);
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
	int l = add_link(n, v, pv, pci_speed(o));
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

static int nic_routes(tp_node *n);

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

static int build(tp_node *n, hwloc_topology_t t, tp_error *err)
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
		if (add_vertex(n, TP_V_PACKAGE, name) < 0)
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
			int l = add_link(n, i, j, TP_SMP_BW);
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
			gp->vertex = track(&pt, add_vertex(n, TP_V_GPU, name), NULL);
			int l = gp->vertex < 0 ? -1 : add_link(n, gp->vertex, dv, TP__PART_BW);
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
		int pv = nc->vertex < 0 ? -1 : track(&pt, add_vertex(n, TP_V_PORT, name),
						     NULL);
		nc->port_link = pv < 0 ? -1 : add_link(n, pv, nc->vertex, pci_speed(o));
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
	if (nic_routes(n)) {
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

/* Climb from v to the ancestor at depth d. */
static int climb(const tp_node *n, int v, int d)
{
	while (v >= 0 && n->vert[v].depth > d)
		v = n->vert[v].parent;
	return v;
}

static int root_of(const tp_node *n, int v)
{
	while (n->vert[v].parent >= 0)
		v = n->vert[v].parent;
	return v;
}

/* PCIe route and class between two device vertices a and b (NUMA nodes
 * numa_a, numa_b; no NVLink); links may be NULL. */
static int vertex_route(const tp_node *n, int a, int b, int numa_a, int numa_b,
			int *links, enum tp_gpu_path *cls)
{
	int k = 0;
	int ra = root_of(n, a), rb = root_of(n, b);
	if (ra != rb) {
		for (int v = a; v != ra; v = n->vert[v].parent)
			if (links)
				links[k++] = n->vert[v].uplink;
			else
				k++;
		int l = n->pkg_link[ra * n->npackages + rb];
		if (links)
			links[k] = l;
		k++;
		for (int v = b; v != rb; v = n->vert[v].parent)
			if (links)
				links[k++] = n->vert[v].uplink;
			else
				k++;
		*cls = TP_PATH_SYS;
		return k;
	}
	int d = n->vert[a].depth < n->vert[b].depth ? n->vert[a].depth
						    : n->vert[b].depth;
	int x = climb(n, a, d), y = climb(n, b, d);
	while (x != y) {
		x = n->vert[x].parent;
		y = n->vert[y].parent;
	}
	int lca = x;
	int switches = n->vert[lca].kind == TP_V_BRIDGE && n->vert[lca].fanout > 1;
	for (int side = 0; side < 2; side++)
		for (int v = side ? b : a; v != lca; v = n->vert[v].parent) {
			if (links)
				links[k] = n->vert[v].uplink;
			k++;
			if (v != a && v != b && n->vert[v].kind == TP_V_BRIDGE &&
			    n->vert[v].fanout > 1)
				switches++;
		}
	switch (n->vert[lca].kind) {
	case TP_V_BRIDGE:
		*cls = switches <= 1 ? TP_PATH_PIX : TP_PATH_PXB;
		break;
	case TP_V_HOSTBRIDGE:
		*cls = TP_PATH_PHB;
		break;
	default:
		*cls = numa_a == numa_b ? TP_PATH_NODE : TP_PATH_SYS;
	}
	return k;
}

static int pcie_route(const tp_node *n, int ga, int gb, int *links,
		      enum tp_gpu_path *cls)
{
	return vertex_route(n, n->gpu[ga].vertex, n->gpu[gb].vertex,
			    n->gpu[ga].numa, n->gpu[gb].numa, links, cls);
}

/* Every GPU's nearest network card (closest path class, then fewest links,
 * then the lower index) and the links between them. */
static int nic_routes(tp_node *n)
{
	int ng = n->ngpus;
	n->gpu_nic = tp__malloc_array((size_t)ng + 1, sizeof(int));
	n->nic_route_off = tp__calloc((size_t)ng + 1, sizeof(int));
	if (!n->gpu_nic || !n->nic_route_off)
		return TP_ENOMEM;
	int total = 0;
	for (int g = 0; g < ng; g++) {
		int best = -1, bk = 0;
		enum tp_gpu_path bc = TP_PATH_SYS;
		for (int i = 0; i < n->nnics; i++) {
			enum tp_gpu_path c;
			int k = vertex_route(n, n->gpu[g].vertex, n->nic[i].vertex,
					     n->gpu[g].numa, n->nic[i].numa, NULL, &c);
			if (best < 0 || c < bc || (c == bc && k < bk)) {
				best = i;
				bc = c;
				bk = k;
			}
		}
		n->gpu_nic[g] = best;
		total += best >= 0 ? bk + 1 : 0;     /* + the card's port */
	}
	n->nic_route = tp__calloc((size_t)total + 1, sizeof(int));
	if (!n->nic_route)
		return TP_ENOMEM;
	int k = 0;
	for (int g = 0; g < ng; g++) {
		n->nic_route_off[g] = k;
		int i = n->gpu_nic[g];
		if (i >= 0) {
			enum tp_gpu_path c;
			k += vertex_route(n, n->gpu[g].vertex, n->nic[i].vertex,
					  n->gpu[g].numa, n->nic[i].numa,
					  n->nic_route + k, &c);
			n->nic_route[k++] = n->nic[i].port_link;
		}
	}
	n->nic_route_off[ng] = k;
	return 0;
}

bool tp__node_same_device(const tp_node *n, int a, int b)
{
	return a != b && a >= 0 && b >= 0 && a < n->ngpus && b < n->ngpus &&
	       n->gpu[a].pdev == n->gpu[b].pdev;
}

bool tp__node_gpu_partitioned(const tp_node *n, int gpu)
{
	return gpu >= 0 && gpu < n->ngpus && n->gpu[gpu].nparts > 1;
}

/* The first GPU of g's device: the one that owns the device's fabric
 * links. */
static int device_head(const tp_node *n, int g)
{
	return g - n->gpu[g].part;
}

/* The link from a partition to its device, -1 for a GPU that is a whole
 * device. */
static int part_uplink(const tp_node *n, int g)
{
	return n->gpu[g].nparts > 1 ? n->vert[n->gpu[g].vertex].uplink : -1;
}

/* Counts alone: every pair of GPUs on different devices the same lane
 * count, more lanes per device than point to point NVLink has (18 on
 * Hopper). */
static bool nvswitch_by_counts(const tp_node *n)
{
	int ng = n->ngpus, c = -1, devs = 0;
	for (int i = 0; i < ng; i++) {
		devs += n->gpu[i].part == 0;
		for (int j = 0; j < ng; j++) {
			if (i == j || tp__node_same_device(n, i, j))
				continue;
			if (c < 0)
				c = n->nvl[i * ng + j];
			if (n->nvl[i * ng + j] != c)
				return false;
		}
	}
	return devs >= 3 && c > 0 && c * (devs - 1) > 18;
}

/* Seen by a vendor library (tp_node_set_nvswitch): every pair linked, or
 * the switch vertex would route a pair that has no lanes. */
static bool nvswitch_seen(const tp_node *n)
{
	int ng = n->ngpus;
	if (!n->nvswitch_seen || ng < 2)
		return false;
	for (int i = 0; i < ng; i++)
		for (int j = 0; j < ng; j++)
			if (i != j && !tp__node_same_device(n, i, j) &&
			    n->nvl[i * ng + j] <= 0)
				return false;
	return true;
}

/* A GPU's lanes to the switch: its widest pair, and their bandwidth.  The
 * pair counts are the smaller switch lane count of the two, so this is the
 * GPU's own count, except for a GPU with more lanes than every other: it
 * gets the next widest count (the counts keep no more). */
static int nvswitch_lanes(const tp_node *n, int g, double *bw)
{
	int ng = n->ngpus, c = 0;
	*bw = 0;
	for (int j = 0; j < ng; j++)
		if (j != g && n->nvl[g * ng + j] > c) {
			c = n->nvl[g * ng + j];
			*bw = n->fbw[g * ng + j];
		}
	return c;
}

/* NVSwitch: one link from every device to the switch vertex (the
 * partitions of a device share it). */
static int nvswitch_links(tp_node *n, bool *made, tp_error *err)
{
	int ng = n->ngpus;
	*made = false;
	if (!nvswitch_by_counts(n) && !nvswitch_seen(n))
		return 0;
	int s = add_vertex(n, TP_V_NVSWITCH, "NVSwitch");
	if (s < 0)
		return tp_error_set(err, TP_ENOMEM, "%s: out of memory", n->source);
	n->nvswitch = 1;
	for (int i = 0; i < ng; i++) {
		if (device_head(n, i) != i) {
			n->nvs_link[i] = n->nvs_link[device_head(n, i)];
			continue;
		}
		double bw;
		nvswitch_lanes(n, i, &bw);
		int l = add_link(n, n->gpu[i].fvert, s, bw);
		if (l < 0)
			return tp_error_set(err, TP_ENOMEM, "%s: out of memory", n->source);
		n->nvs_link[i] = l;
	}
	*made = true;
	return 0;
}

/* A direct fabric link between every linked pair of devices: the pairs of
 * their partitions share it. */
static int direct_links(tp_node *n, tp_error *err)
{
	int ng = n->ngpus;
	bool xgmi = n->fabric == TP_FABRIC_XGMI;
	for (int i = 0; i < ng; i++)
		for (int j = i + 1; j < ng; j++) {
			int cnt = n->nvl[i * ng + j];
			if (cnt <= 0 || tp__node_same_device(n, i, j))
				continue;
			int hi = device_head(n, i), hj = device_head(n, j);
			if (hi != i || hj != j) {
				/* (hi, hj) came first: hi <= i, hj <= j, and the
				 * devices are in bus order */
				int l = n->nvl_link[hi * ng + hj];
				n->nvl_link[i * ng + j] = n->nvl_link[j * ng + i] = l;
				continue;
			}
			int a = n->gpu[i].fvert, b = n->gpu[j].fvert;
			int l = add_link(n, a, b, n->fbw[i * ng + j]);
			if (l < 0)
				return tp_error_set(err, TP_ENOMEM, "%s: out of memory",
						    n->source);
			snprintf(n->link[l].name, sizeof n->link[l].name,
				 "%.40s - %.40s %s x%d", n->vert[a].name, n->vert[b].name,
				 xgmi ? "xGMI" : "NVLink", cnt % 1000);
			n->nvl_link[i * ng + j] = n->nvl_link[j * ng + i] = l;
		}
	return 0;
}

/* xGMI routes through other GPUs: for every source s, pred[s * ng + v] is
 * v's predecessor on the chosen route from s (-1: unreachable or v == s)
 * and hops[s * ng + v] the route's links.  Fewest links first, then the
 * widest bottleneck, then the lowest predecessor: deterministic.  Two
 * partitions of one device have no xGMI link between them (the route
 * never steps from one to the other). */
static void xgmi_routes(const tp_node *n, int *pred, int *hops)
{
	int ng = n->ngpus;
	double bott[TP_NODE_MAX_GPUS];
	int queue[TP_NODE_MAX_GPUS];
	for (int s = 0; s < ng; s++) {
		int *pr = pred + (size_t)s * ng, *h = hops + (size_t)s * ng;
		for (int v = 0; v < ng; v++) {
			pr[v] = -1;
			h[v] = -1;
			bott[v] = 0;
		}
		h[s] = 0;
		int qh = 0, qt = 0;
		queue[qt++] = s;
		while (qh < qt) {
			int u = queue[qh++];
			for (int v = 0; v < ng; v++) {
				int cnt = n->nvl[u * ng + v];
				if (v == u || cnt <= 0 || (h[v] >= 0 && h[v] <= h[u]))
					continue;
				double b = n->fbw[u * ng + v];
				if (u != s && bott[u] < b)
					b = bott[u];
				if (h[v] < 0) {
					h[v] = h[u] + 1;
					queue[qt++] = v;
				} else if (!(b > bott[v])) {
					continue;     /* as wide or narrower: keep */
				}
				pr[v] = u;
				bott[v] = b;
			}
		}
	}
}

/* The links of GPU a's fabric route to b (hops[a][b] of them) into out. */
static void fabric_route(const tp_node *n, const int *pred, const int *hops,
			 int a, int b, int *out)
{
	int ng = n->ngpus;
	int k = hops[(size_t)a * ng + b];
	for (int v = b; v != a; v = pred[(size_t)a * ng + v])
		out[--k] = n->nvl_link[pred[(size_t)a * ng + v] * ng + v];
}

/* The fabric links of the pair p = (i, j) (none: 0) into out (may be
 * NULL: count only), between the partitions' links to their devices. */
static int fabric_pair(const tp_node *n, const int *pred, const int *hops,
		       int i, int j, int *out)
{
	int ng = n->ngpus, p = i * ng + j, k = 0;
	bool xgmi = n->fabric == TP_FABRIC_XGMI;
	int mid = xgmi ? (hops[p] > 0 ? hops[p] : 0)
		       : n->nvl[p] > 0 ? (n->nvswitch ? 2 : 1) : 0;
	if (!mid)
		return 0;
	int ui = part_uplink(n, i), uj = part_uplink(n, j);
	if (ui >= 0 && out)
		out[k] = ui;
	k += ui >= 0;
	if (out && xgmi) {
		fabric_route(n, pred, hops, i, j, out + k);
	} else if (out && n->nvswitch) {
		out[k] = n->nvs_link[i];
		out[k + 1] = n->nvs_link[j];
	} else if (out) {
		out[k] = n->nvl_link[p];
	}
	k += mid;
	if (uj >= 0 && out)
		out[k] = uj;
	return k + (uj >= 0);
}

/* A pair's fabric bandwidth where nothing else set it: its links at the
 * rate of their kind. */
static void default_fbw(tp_node *n)
{
	double rate = n->fabric == TP_FABRIC_XGMI ? TP_XGMI_BW : TP_NVLINK_BW;
	for (int p = 0; p < n->ngpus * n->ngpus; p++)
		if (n->nvl[p] > 0 && !(n->fbw[p] > 0))
			n->fbw[p] = n->nvl[p] * rate;
		else if (n->nvl[p] <= 0)
			n->fbw[p] = 0;
}

/* The partitions of two devices share one set of links: every pair of
 * them gets the widest any pair of them was given (a links file may name
 * them unevenly), so that one link serves them all. */
static void share_device_links(tp_node *n)
{
	int ng = n->ngpus;
	for (int pass = 0; pass < 2; pass++)
		for (int i = 0; i < ng; i++)
			for (int j = 0; j < ng; j++) {
				int p = i * ng + j;
				int h = device_head(n, i) * ng + device_head(n, j);
				if (p == h || i == j || tp__node_same_device(n, i, j))
					continue;
				if (pass == 0) {
					n->nvl[h] = n->nvl[p] > n->nvl[h] ? n->nvl[p] : n->nvl[h];
					n->fbw[h] = n->fbw[p] > n->fbw[h] ? n->fbw[p] : n->fbw[h];
				} else {
					n->nvl[p] = n->nvl[h];
					n->fbw[p] = n->fbw[h];
				}
			}
}

int tp__node_finish(tp_node *n, tp_error *err)
{
	int ng = n->ngpus;
	n->nlinks = n->nlinks_pci;
	if (n->nvswitch) {
		/* drop an earlier NVSwitch vertex */
		if (n->nvert > 0 && n->vert[n->nvert - 1].kind == TP_V_NVSWITCH)
			n->nvert--;
	}
	n->nvswitch = 0;
	for (int i = 0; i < ng * ng; i++)
		n->nvl_link[i] = -1;
	for (int i = 0; i < ng; i++)
		n->nvs_link[i] = -1;
	/* partitions of one device share the package, no fabric link */
	for (int i = 0; i < ng; i++)
		for (int j = 0; j < ng; j++)
			if (tp__node_same_device(n, i, j))
				n->nvl[i * ng + j] = 0;
	default_fbw(n);
	share_device_links(n);
	bool xgmi = n->fabric == TP_FABRIC_XGMI, sw = false;
	int rc = n->fabric == TP_FABRIC_NVLINK ? nvswitch_links(n, &sw, err) : 0;
	if (!rc && !sw)
		rc = direct_links(n, err);
	if (rc)
		return rc;
	size_t g2 = (size_t)ng * (size_t)ng + 1;
	int *pred = xgmi ? tp__malloc_array(g2, sizeof(int)) : NULL;
	int *hops = xgmi ? tp__malloc_array(g2, sizeof(int)) : NULL;
	if (xgmi && (!pred || !hops)) {
		free(pred);
		free(hops);
		return tp_error_set(err, TP_ENOMEM, "%s: out of memory", n->source);
	}
	if (xgmi)
		xgmi_routes(n, pred, hops);
	/* routes: count, then fill */
	int total = 0;
	for (int i = 0; i < ng; i++)
		for (int j = 0; j < ng; j++) {
			enum tp_gpu_path cls;
			int k = 0;
			if (i == j)
				k = 0;
			else if (tp__node_same_device(n, i, j))
				k = 2;
			else if (!(k = fabric_pair(n, pred, hops, i, j, NULL)))
				k = pcie_route(n, i, j, NULL, &cls);
			total += k;
		}
	free(n->route);
	n->route = tp__calloc((size_t)total + 1, sizeof(int));
	if (!n->route) {
		free(pred);
		free(hops);
		return tp_error_set(err, TP_ENOMEM, "%s: out of memory", n->source);
	}
	int k = 0;
	for (int i = 0; i < ng; i++)
		for (int j = 0; j < ng; j++) {
			int p = i * ng + j;
			n->route_off[p] = k;
			if (i == j) {
				n->path[p] = TP_PATH_LOC;
				n->pbw[p] = 0;
				continue;
			}
			enum tp_gpu_path cls;
			int m;
			if (tp__node_same_device(n, i, j)) {
				/* through the device, on its package */
				n->route[k] = part_uplink(n, i);
				n->route[k + 1] = part_uplink(n, j);
				m = 2;
				cls = TP_PATH_PART;
			} else if ((m = fabric_pair(n, pred, hops, i, j, n->route + k))) {
				cls = !xgmi ? TP_PATH_NVL
				      : hops[p] == 1 ? TP_PATH_XGMI : TP_PATH_XHOP;
			} else {
				m = pcie_route(n, i, j, n->route + k, &cls);
			}
			double bw = 0;
			for (int q = 0; q < m; q++) {
				double b = n->link[n->route[k + q]].bw;
				if (q == 0 || b < bw)
					bw = b;
			}
			/* an NVLink pair: its own links, though a switch route
			 * passes the wider links of both GPUs */
			if (cls == TP_PATH_NVL && n->fbw[p] < bw)
				bw = n->fbw[p];
			n->path[p] = (int)cls;
			n->pbw[p] = bw;
			k += m;
		}
	n->route_off[ng * ng] = k;
	free(pred);
	free(hops);
	return 0;
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
	int rc = build(n, t, err);
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

/* ---- accessors ---- */

const char *tp_node_source(const tp_node *n) { return n->source; }
int tp_node_npackages(const tp_node *n) { return n->npackages; }
int tp_node_nnuma(const tp_node *n) { return n->nnuma; }
int tp_node_ncores(const tp_node *n) { return n->ncores; }
int tp_node_npus(const tp_node *n) { return n->npus; }
int tp_node_ngpus(const tp_node *n) { return n->ngpus; }
int tp_node_has_nvswitch(const tp_node *n) { return n->nvswitch; }
int tp_node_link_count(const tp_node *n) { return n->nlinks; }

int tp_node_core_package(const tp_node *n, int core)
{
	return core >= 0 && core < n->ncores ? n->core_pkg[core] : -1;
}

int tp_node_core_pus(const tp_node *n, int core, int *pus, int cap)
{
	if (core < 0 || core >= n->ncores)
		return 0;
	int k = n->core_pu_off[core + 1] - n->core_pu_off[core];
	for (int i = 0; i < k && i < cap; i++)
		pus[i] = n->core_pus[n->core_pu_off[core] + i];
	return k;
}

static bool gpu_ok(const tp_node *n, int g)
{
	return g >= 0 && g < n->ngpus;
}

const char *tp_node_gpu_busid(const tp_node *n, int gpu)
{
	return gpu_ok(n, gpu) ? n->gpu[gpu].busid : NULL;
}

int tp_node_gpu_package(const tp_node *n, int gpu)
{
	return gpu_ok(n, gpu) ? n->gpu[gpu].package : -1;
}

int tp_node_gpu_numa(const tp_node *n, int gpu)
{
	return gpu_ok(n, gpu) ? n->gpu[gpu].numa : -1;
}

unsigned tp_node_gpu_vendor(const tp_node *n, int gpu)
{
	return gpu_ok(n, gpu) ? n->gpu[gpu].vendor : 0;
}

enum tp_gpu_fabric tp_node_fabric(const tp_node *n)
{
	return (enum tp_gpu_fabric)n->fabric;
}

int tp_node_nvlinks(const tp_node *n, int a, int b)
{
	if (!gpu_ok(n, a) || !gpu_ok(n, b) || a == b ||
	    n->fabric != TP_FABRIC_NVLINK)
		return 0;
	return n->nvl[a * n->ngpus + b];
}

int tp_node_xgmi_links(const tp_node *n, int a, int b)
{
	if (!gpu_ok(n, a) || !gpu_ok(n, b) || a == b ||
	    n->fabric != TP_FABRIC_XGMI)
		return 0;
	return n->nvl[a * n->ngpus + b];
}

enum tp_gpu_path tp_node_gpu_path(const tp_node *n, int a, int b)
{
	if (!gpu_ok(n, a) || !gpu_ok(n, b))
		return TP_PATH_SYS;
	return (enum tp_gpu_path)n->path[a * n->ngpus + b];
}

double tp_node_gpu_bandwidth(const tp_node *n, int a, int b)
{
	if (!gpu_ok(n, a) || !gpu_ok(n, b))
		return 0;
	return n->pbw[a * n->ngpus + b];
}

double tp_node_link_bandwidth(const tp_node *n, int link)
{
	return link >= 0 && link < n->nlinks ? n->link[link].bw : 0;
}

const char *tp_node_link_name(const tp_node *n, int link)
{
	return link >= 0 && link < n->nlinks ? n->link[link].name : "?";
}

int tp_node_gpu_route(const tp_node *n, int a, int b, int *links, int cap)
{
	if (!gpu_ok(n, a) || !gpu_ok(n, b))
		return TP_EINVAL;
	int p = a * n->ngpus + b;
	int k = n->route_off[p + 1] - n->route_off[p];
	if (k > cap)
		return TP_EINVAL;
	memcpy(links, n->route + n->route_off[p], sizeof(int) * (size_t)k);
	return k;
}

int tp_node_nnics(const tp_node *n)
{
	return n->nnics;
}

const char *tp_node_nic_busid(const tp_node *n, int nic)
{
	return nic >= 0 && nic < n->nnics ? n->nic[nic].busid : NULL;
}

int tp_node_nic_package(const tp_node *n, int nic)
{
	return nic >= 0 && nic < n->nnics ? n->nic[nic].package : -1;
}

int tp_node_gpu_nic(const tp_node *n, int gpu)
{
	return gpu >= 0 && gpu < n->ngpus ? n->gpu_nic[gpu] : -1;
}

int tp_node_gpu_nic_route(const tp_node *n, int gpu, int *links, int cap)
{
	if (gpu < 0 || gpu >= n->ngpus)
		return TP_EINVAL;
	int k = n->nic_route_off[gpu + 1] - n->nic_route_off[gpu];
	if (k > cap)
		return TP_EINVAL;
	memcpy(links, n->nic_route + n->nic_route_off[gpu], sizeof(int) * (size_t)k);
	return k;
}

int tp_node_cpuset_string_cores(const tp_node *n, const int *cores, int count,
				char *buf, size_t len)
{
	if (len == 0)
		return TP_EINVAL;
	buf[0] = '\0';
	if (!cores || count < 1)
		return TP_EINVAL;
	int m = 0;
	for (int i = 0; i < count; i++) {
		if (cores[i] < 0 || cores[i] >= n->ncores)
			return TP_EINVAL;
		m += n->core_pu_off[cores[i] + 1] - n->core_pu_off[cores[i]];
	}
	int *pu = tp__malloc_array((size_t)m + 1, sizeof(int));
	if (!pu)
		return TP_ENOMEM;
	m = 0;
	for (int i = 0; i < count; i++)
		for (int k = n->core_pu_off[cores[i]];
		     k < n->core_pu_off[cores[i] + 1]; k++)
			pu[m++] = n->core_pus[k];
	/* insertion sort: a handful of entries */
	for (int i = 1; i < m; i++)
		for (int j = i; j > 0 && pu[j - 1] > pu[j]; j--) {
			int x = pu[j];
			pu[j] = pu[j - 1];
			pu[j - 1] = x;
		}
	size_t used = 0;
	int rc = 0;
	for (int i = 0; i < m;) {
		int j = i;
		while (j + 1 < m && pu[j + 1] <= pu[j] + 1)
			j++;
		int w = pu[j] > pu[i] ? snprintf(buf + used, len - used, "%s%d-%d",
						 used ? "," : "", pu[i], pu[j])
				      : snprintf(buf + used, len - used, "%s%d",
						 used ? "," : "", pu[i]);
		if (w < 0 || (size_t)w >= len - used) {
			rc = TP_EINVAL;
			break;
		}
		used += (size_t)w;
		i = j + 1;
	}
	free(pu);
	return rc;
}

int tp_node_cpuset_string(const tp_node *n, int first_core, int count,
			  char *buf, size_t len)
{
	if (len == 0)
		return TP_EINVAL;
	buf[0] = '\0';
	if (first_core < 0 || count < 1 || first_core > n->ncores - count)
		return TP_EINVAL;
	int *c = tp__malloc_array((size_t)count, sizeof(int));
	if (!c)
		return TP_ENOMEM;
	for (int i = 0; i < count; i++)
		c[i] = first_core + i;
	int rc = tp_node_cpuset_string_cores(n, c, count, buf, len);
	free(c);
	return rc;
}

/* ---- picture ---- */

static void describe_tree(const tp_node *n, FILE *f, int v, int indent)
{
	for (int c = 0; c < n->nvert; c++) {
		if (n->vert[c].parent != v)
			continue;
		const struct tp_node_vertex *x = &n->vert[c];
		fprintf(f, "%*s+- %s", indent, "", x->name);
		for (int g = 0; g < n->ngpus; g++) {
			const struct tp_node_gpu *gp = &n->gpu[g];
			if (x->kind == TP_V_GPU && gp->vertex == c)
				fprintf(f, "  %s", gp->nparts > 1 ? gp->osdev : gp->busid);
			else if (x->kind == TP_V_GPUDEV && gp->fvert == c && gp->part == 0)
				fprintf(f, "  %s, %d partitions", gp->busid, gp->nparts);
		}
		if (x->kind == TP_V_NIC) {
			for (int i = 0; i < n->nnics; i++)
				if (n->nic[i].vertex == c)
					fprintf(f, "  %s", n->nic[i].busid);
		}
		if (x->kind == TP_V_PORT)
			fprintf(f, "  (%.4g GB/s to the network)", n->link[x->uplink].bw);
		else if (x->uplink >= 0)
			fprintf(f, "  (%.4g GB/s up)", n->link[x->uplink].bw);
		fputc('\n', f);
		describe_tree(n, f, c, indent + 3);
	}
}

void tp_node_describe(const tp_node *n, FILE *f)
{
	bool amd = n->ngpus > 0 && n->gpu[0].vendor == 0x1002;
	fprintf(f, "%s: %d socket%s, %d NUMA node%s, %d cores, %d PUs, %d %sGPU%s%s",
		n->source, n->npackages, n->npackages == 1 ? "" : "s", n->nnuma,
		n->nnuma == 1 ? "" : "s", n->ncores, n->npus, n->ngpus,
		amd ? "AMD " : "", n->ngpus == 1 ? "" : "s",
		n->nvswitch ? " on an NVSwitch"
		: n->fabric == TP_FABRIC_XGMI ? " joined by xGMI" : "");
	int devs = 0;
	for (int g = 0; g < n->ngpus; g++)
		devs += n->gpu[g].part == 0;
	if (devs < n->ngpus)
		fprintf(f, " (partitions of %d devices)", devs);
	if (n->nnics)
		fprintf(f, ", %d network card%s", n->nnics, n->nnics == 1 ? "" : "s");
	fputc('\n', f);
	for (int p = 0; p < n->npackages; p++) {
		int lo = -1, hi = -1;
		for (int c = 0; c < n->ncores; c++)
			if (n->core_pkg[c] == p) {
				if (lo < 0)
					lo = c;
				hi = c;
			}
		fprintf(f, "socket%d: cores %d-%d\n", p, lo, hi);
		describe_tree(n, f, p, 0);
	}
	if (n->npackages > 1)
		fprintf(f, "socket link: %.4g GB/s\n", TP_SMP_BW);
	for (int l = n->nlinks_pci; l < n->nlinks; l++)
		fprintf(f, "%s: %s  (%.4g GB/s)\n",
			n->fabric == TP_FABRIC_XGMI ? "xGMI" : "NVLink",
			n->link[l].name, n->link[l].bw);
	if (n->ngpus == 0)
		return;
	/* the path matrix, with the network cards as nvidia-smi topo -m
	 * shows them, and each GPU's card */
	fprintf(f, "\n      ");
	for (int j = 0; j < n->ngpus; j++)
		fprintf(f, " GPU%-3d", j);
	for (int j = 0; j < n->nnics; j++)
		fprintf(f, " NIC%-3d", j);
	fprintf(f, "  socket%s\n", n->nnics ? "  its NIC" : "");
	for (int i = 0; i < n->ngpus; i++) {
		char b[16];
		fprintf(f, "GPU%-3d", i);
		for (int j = 0; j < n->ngpus; j++) {
			int p = i * n->ngpus + j;
			/* XHOP shows its hops, the others their links */
			int cnt = n->path[p] == TP_PATH_XHOP
				  ? n->route_off[p + 1] - n->route_off[p] : n->nvl[p];
			fprintf(f, " %-6s", tp_gpu_path_name((enum tp_gpu_path)n->path[p],
							     cnt, b, sizeof b));
		}
		for (int j = 0; j < n->nnics; j++) {
			enum tp_gpu_path c;
			vertex_route(n, n->gpu[i].vertex, n->nic[j].vertex,
				     n->gpu[i].numa, n->nic[j].numa, NULL, &c);
			fprintf(f, " %-6s", tp_gpu_path_name(c, 0, b, sizeof b));
		}
		if (n->gpu[i].package >= 0)
			fprintf(f, "  %d", n->gpu[i].package);
		else
			fprintf(f, "  -");
		if (n->nnics)
			fprintf(f, "       NIC%d", n->gpu_nic[i]);
		fputc('\n', f);
	}
}
