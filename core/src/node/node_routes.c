/* topoplace — a node model's graph and routes: its building blocks (a
 * vertex, a link), the GPU fabric's links (NVLink, an NVSwitch, xGMI direct
 * or through other GPUs), the path class, bandwidth and links of every pair
 * of GPUs, and each GPU's nearest network card with the way to it.  Made
 * again (tp__node_finish) whenever the fabric's counts change: they are
 * checked and set here too (tp__node_set_fabric). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/util_internal.h"
#include "node/node_internal.h"
#include "node/node_model.h"

/* ---- building blocks ---- */

int tp__node_add_vertex(tp_node *n, int kind, const char *name)
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

int tp__node_add_link(tp_node *n, int a, int b, double bw)
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
int tp__node_vertex_route(const tp_node *n, int a, int b, int numa_a, int numa_b,
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
	return tp__node_vertex_route(n, n->gpu[ga].vertex, n->gpu[gb].vertex,
				     n->gpu[ga].numa, n->gpu[gb].numa, links, cls);
}

/* Every GPU's nearest network card (closest path class, then fewest links,
 * then the lower index) and the links between them. */
int tp__node_nic_routes(tp_node *n)
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
			int k = tp__node_vertex_route(n, n->gpu[g].vertex, n->nic[i].vertex,
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
			k += tp__node_vertex_route(n, n->gpu[g].vertex, n->nic[i].vertex,
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
	int s = tp__node_add_vertex(n, TP_V_NVSWITCH, "NVSwitch");
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
		int l = tp__node_add_link(n, n->gpu[i].fvert, s, bw);
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
			int l = tp__node_add_link(n, a, b, n->fbw[i * ng + j]);
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

double tp__node_link_rate(const tp_node *n, enum tp_gpu_fabric fabric)
{
	if (n && n->link_rate > 0)
		return n->link_rate;
	return fabric == TP_FABRIC_XGMI ? TP_XGMI_BW : TP_NVLINK_BW;
}

void tp__node_set_link_rate(tp_node *n, double gbs)
{
	if (n)
		n->link_rate = gbs > 0 ? gbs : 0;
}

int tp__node_set_fabric(tp_node *n, const int *counts, const double *gbs,
			double rate, int ngpus, const char *what,
			enum tp_gpu_fabric fabric, bool switched, tp_error *err)
{
	const char *kind = fabric == TP_FABRIC_XGMI ? "xGMI links" : "NVLinks";
	unsigned vendor = fabric == TP_FABRIC_XGMI ? 0x1002 : 0x10de;
	if (ngpus != n->ngpus)
		return tp_error_set(err, TP_EINVAL,
				    "%s: %s counts for %d GPUs, but %s has %d",
				    what, fabric == TP_FABRIC_XGMI ? "xGMI" : "NVLink",
				    ngpus, n->source, n->ngpus);
	for (int g = 0; g < ngpus; g++)
		if (n->gpu[g].vendor != vendor)
			return tp_error_set(err, TP_EINVAL,
					    "%s: %s, but GPU %d of %s is %s GPU (%s)",
					    what, kind, g, n->source,
					    vendor == 0x1002 ? "an NVIDIA" : "an AMD",
					    vendor == 0x1002
					    ? "give NVLink lanes: gres.conf Links= or "
					      "nvidia-smi topo -m"
					    : "give xGMI links: gres.conf Links=, amd-smi "
					      "topology or rocm-smi --showtopo");
	bool any = false;
	for (int i = 0; i < ngpus; i++)
		for (int j = 0; j < ngpus; j++) {
			int v = counts[i * ngpus + j];
			if (i == j ? (v != 0 && v != -1)
				   : (v < 0 || v > TP_NODE_MAX_NVLINKS))
				return tp_error_set(err, TP_EINVAL,
						    "%s: GPU %d to GPU %d: %d %s", what,
						    i, j, v, kind);
			if (counts[j * ngpus + i] != v && i != j)
				return tp_error_set(err, TP_EINVAL,
						    "%s: not symmetric: GPU %d to GPU %d is %d, "
						    "GPU %d to GPU %d is %d",
						    what, i, j, v, j, i, counts[j * ngpus + i]);
			any |= i != j && v > 0;
		}
	if (!(rate > 0))
		rate = tp__node_link_rate(n, fabric);
	for (int i = 0; i < ngpus; i++)
		for (int j = 0; j < ngpus; j++) {
			int p = i * ngpus + j;
			n->nvl[p] = i == j ? 0 : counts[p];
			n->fbw[p] = n->nvl[p] <= 0 ? 0
				    : gbs && gbs[p] > 0 ? gbs[p] : n->nvl[p] * rate;
		}
	n->fabric = any ? (int)fabric : TP_FABRIC_NONE;
	n->nvswitch_seen = switched;
	return tp__node_finish(n, err);
}

int tp_node_set_nvlinks(tp_node *n, const int *counts, int ngpus,
			const char *what, tp_error *err)
{
	return tp__node_set_fabric(n, counts, NULL, 0, ngpus,
				   what ? what : "NVLink counts", TP_FABRIC_NVLINK,
				   false, err);
}

int tp_node_set_nvswitch(tp_node *n, const int *counts, int ngpus,
			 const char *what, tp_error *err)
{
	return tp__node_set_fabric(n, counts, NULL, 0, ngpus,
				   what ? what : "NVSwitch lanes", TP_FABRIC_NVLINK,
				   true, err);
}

int tp_node_set_xgmi(tp_node *n, const int *counts, int ngpus,
		     const char *what, tp_error *err)
{
	return tp__node_set_fabric(n, counts, NULL, 0, ngpus,
				   what ? what : "xGMI counts", TP_FABRIC_XGMI,
				   false, err);
}
