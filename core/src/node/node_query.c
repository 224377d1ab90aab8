/* topoplace — what a node model answers: its counts, where a core, GPU or
 * network card sits, the path class, bandwidth and route between two GPUs,
 * the CPU list of cores, and the text picture of the node (node-info). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/util_internal.h"
#include "node/node_internal.h"
#include "node/node_model.h"

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
			tp__node_vertex_route(n, n->gpu[i].vertex, n->nic[j].vertex,
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
