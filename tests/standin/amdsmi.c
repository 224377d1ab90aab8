/* topoplace tests — a stand-in for AMD SMI (libamd_smi.so) and ROCm SMI
 * (librocm_smi64.so.1; the same file built under both names) that answers
 * the calls core/src/node/node_vendor_amd.c makes from a node description
 * (standin.h) named by TOPOPLACE_STANDIN_AMDSMI.  Values as amdsmi.h and
 * rocm_smi.h have them: status 0 for success, link type XGMI 2, one
 * xGMI link 50000 MB/s, bandwidth 0-0 between GPUs of the hive that have
 * no direct link, one hop for every pair of the hive. */
#include <stdint.h>

#include "standin.h"

#define ST_SUCCESS 0
#define ST_INVAL 1
#define ST_NOT_INIT 32       /* AMDSMI_STATUS_NOT_INIT */
#define LINK_PCIE 1
#define LINK_XGMI 2
#define ONE_LINK 50000ULL

static struct si_node node;
static int up;
/* socket handles: pointers to these (one per distinct socket number) */
static int sockets[SI_MAX_GPUS];
static int nsockets;

int amdsmi_init(uint64_t flags);
int amdsmi_shut_down(void);
int amdsmi_get_socket_handles(uint32_t *count, void **handles);
int amdsmi_get_processor_handles(void *socket, uint32_t *count, void **procs);
int amdsmi_get_gpu_device_bdf(void *proc, uint64_t *bdf);
int amdsmi_topo_get_link_type(void *a, void *b, uint64_t *hops, uint32_t *type);
int amdsmi_get_minmax_bandwidth_between_processors(void *a, void *b,
						   uint64_t *lo, uint64_t *hi);
int rsmi_init(uint64_t flags);
int rsmi_shut_down(void);
int rsmi_num_monitor_devices(uint32_t *n);
int rsmi_dev_pci_id_get(uint32_t i, uint64_t *bdfid);
int rsmi_topo_get_link_type(uint32_t a, uint32_t b, uint64_t *hops, uint32_t *type);
int rsmi_minmax_bandwidth_get(uint32_t a, uint32_t b, uint64_t *lo, uint64_t *hi);

static int start(void)
{
	si_log("init");
	if (si_load(&node, "TOPOPLACE_STANDIN_AMDSMI"))
		return ST_NOT_INIT;
	nsockets = 0;
	for (int i = 0; i < node.ngpus; i++) {
		int k = 0;
		while (k < nsockets && sockets[k] != node.gpu[i].socket)
			k++;
		if (k == nsockets)
			sockets[nsockets++] = node.gpu[i].socket;
	}
	up++;
	return ST_SUCCESS;
}

static int stop(void)
{
	si_log("shutdown");
	if (!up)
		return ST_NOT_INIT;
	up--;
	return ST_SUCCESS;
}

static int index_of(void *proc)
{
	struct si_gpu *g = proc;
	int i = (int)(g - node.gpu);
	return up && i >= 0 && i < node.ngpus ? i : -1;
}

/* A pair of the hive: xGMI when any GPU has xGMI links. */
static int pair(int a, int b, uint64_t *hops, uint32_t *type)
{
	if (a < 0 || b < 0 || a >= node.ngpus || b >= node.ngpus)
		return ST_INVAL;
	int hive = 0;
	for (int i = 0; i < node.ngpus; i++)
		for (int j = 0; j < node.ngpus; j++)
			hive |= node.links[i][j] > 0;
	*hops = hive ? 1 : 2;
	*type = hive ? LINK_XGMI : LINK_PCIE;
	return ST_SUCCESS;
}

static int bandwidth(int a, int b, uint64_t *lo, uint64_t *hi)
{
	if (a < 0 || b < 0 || a >= node.ngpus || b >= node.ngpus)
		return ST_INVAL;
	int n = node.links[a][b];
	uint64_t one = node.link_mbs > 0 ? (uint64_t)node.link_mbs : ONE_LINK;
	*lo = n ? one : 0;
	*hi = (uint64_t)n * one;
	return ST_SUCCESS;
}

int amdsmi_init(uint64_t flags)
{
	return flags == 2 ? start() : ST_INVAL;      /* AMDSMI_INIT_AMD_GPUS */
}

int amdsmi_shut_down(void)
{
	return stop();
}

int amdsmi_get_socket_handles(uint32_t *count, void **handles)
{
	if (!up)
		return ST_NOT_INIT;
	if (handles)
		for (int k = 0; k < nsockets && k < (int)*count; k++)
			handles[k] = &sockets[k];
	*count = (uint32_t)nsockets;
	return ST_SUCCESS;
}

int amdsmi_get_processor_handles(void *socket, uint32_t *count, void **procs)
{
	if (!up)
		return ST_NOT_INIT;
	int k = (int)((int *)socket - sockets);
	if (k < 0 || k >= nsockets)
		return ST_INVAL;
	uint32_t n = 0;
	for (int i = 0; i < node.ngpus; i++)
		if (node.gpu[i].socket == sockets[k]) {
			if (procs && n < *count)
				procs[n] = &node.gpu[i];
			n++;
		}
	*count = n;
	return ST_SUCCESS;
}

/* amdsmi_bdf_t: function [2:0], device [7:3], bus [15:8], domain [63:16] */
int amdsmi_get_gpu_device_bdf(void *proc, uint64_t *bdf)
{
	int i = index_of(proc);
	if (i < 0)
		return ST_INVAL;
	const struct si_gpu *g = &node.gpu[i];
	*bdf = (uint64_t)g->dom << 16 | g->b << 8 | g->d << 3 | g->f;
	return ST_SUCCESS;
}

int amdsmi_topo_get_link_type(void *a, void *b, uint64_t *hops, uint32_t *type)
{
	return pair(index_of(a), index_of(b), hops, type);
}

int amdsmi_get_minmax_bandwidth_between_processors(void *a, void *b,
						   uint64_t *lo, uint64_t *hi)
{
	return bandwidth(index_of(a), index_of(b), lo, hi);
}

int rsmi_init(uint64_t flags)
{
	return flags == 0 ? start() : ST_INVAL;
}

int rsmi_shut_down(void)
{
	return stop();
}

int rsmi_num_monitor_devices(uint32_t *n)
{
	if (!up)
		return ST_NOT_INIT;
	*n = (uint32_t)node.ngpus;
	return ST_SUCCESS;
}

/* BDFID: domain << 32 | partition << 28 | bus << 8 | device << 3 | function;
 * partition 0 here, yet set a stray bit in it to check it is masked. */
int rsmi_dev_pci_id_get(uint32_t i, uint64_t *bdfid)
{
	if (!up || i >= (uint32_t)node.ngpus)
		return ST_INVAL;
	const struct si_gpu *g = &node.gpu[i];
	*bdfid = (uint64_t)g->dom << 32 | 1ULL << 28 | g->b << 8 | g->d << 3 | g->f;
	return ST_SUCCESS;
}

int rsmi_topo_get_link_type(uint32_t a, uint32_t b, uint64_t *hops, uint32_t *type)
{
	return up ? pair((int)a, (int)b, hops, type) : ST_NOT_INIT;
}

int rsmi_minmax_bandwidth_get(uint32_t a, uint32_t b, uint64_t *lo, uint64_t *hi)
{
	return up ? bandwidth((int)a, (int)b, lo, hi) : ST_NOT_INIT;
}
