/* topoplace — xGMI link counts of the live node from AMD SMI (ROCm 6.1 and
 * later, libamd_smi.so) or, without it, ROCm SMI (librocm_smi64.so.1, its
 * predecessor), both opened with dlopen() (node_vendor.c says why).
 *
 * Both libraries answer per GPU pair: the link type and hops, and the
 * minimum and maximum bandwidth between the two.  A pair of type XGMI, one
 * hop, is an xGMI pair; its links are max / min bandwidth (min being one
 * link's), as node_links_rocm.c reads rocm-smi's "Bandwidth" matrix:
 * 50000-200000 MB/s between the two GCDs of an MI250X is 4 links.  A
 * bandwidth of 0-0 means no direct link (the libraries say one hop for
 * every pair of an xGMI hive); a pair whose bandwidth the library cannot
 * tell counts one link.  The pair's links carry the maximum bandwidth
 * reported (200 GB/s there), as hwloc's rsmi backend puts it in
 * XGMIBandwidth; 50 GB/s a link without one.
 *
 * The link type enum of amdsmi_topo_get_link_type changed with ROCm 7 (AMD
 * SMI library version 26, as hwloc's topology-rsmi.c notes): before, the
 * call wrote an amdsmi_io_link_type_t (UNDEFINED 0, PCIEXPRESS 1, XGMI 2);
 * since, an amdsmi_link_type_t whose values were renumbered to INTERNAL 0,
 * PCIE 1, XGMI 2 (the 6.x amdsmi_link_type_t had XGMI 1, PCIE 2, but was
 * not what this call wrote).  XGMI is 2 either way, so the value is read
 * without asking amdsmi_get_lib_version, whose structure changed too
 * (a leading "year" field was dropped).  ROCm SMI's RSMI_IO_LINK_TYPE has
 * XGMI 2 as well (rocm_smi.h).
 *
 * Headers: ROCm/amdsmi include/amd_smi/amdsmi.h (rocm-6.2.2 and the 26.x
 * header hwloc builds against), ROCm/rocm_smi_lib
 * include/rocm_smi/rocm_smi.h (BDFID layout). */
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "node/node_internal.h"
#include "node/node_vendor.h"

#define TP_AMD_SUCCESS 0          /* AMDSMI_STATUS_SUCCESS, RSMI_STATUS_SUCCESS */
#define TP_AMDSMI_INIT_AMD_GPUS 2 /* 1 << 1 */
#define TP_AMD_LINK_XGMI 2        /* see above */
#define TP_AMD_MAX_SOCKETS 256
#define TP_AMD_MAX_PROCS 256      /* partitions count too (MI300X CPX: 64) */

typedef int (*amd_init_fn)(uint64_t);
typedef int (*amd_void_fn)(void);
typedef int (*amd_sockets_fn)(uint32_t *, void **);
typedef int (*amd_procs_fn)(void *, uint32_t *, void **);
typedef int (*amd_bdf_fn)(void *, uint64_t *);
typedef int (*amd_type_fn)(void *, void *, uint64_t *, uint32_t *);
typedef int (*amd_bw_fn)(void *, void *, uint64_t *, uint64_t *);
typedef int (*rsmi_count_fn)(uint32_t *);
typedef int (*rsmi_pci_fn)(uint32_t, uint64_t *);
typedef int (*rsmi_type_fn)(uint32_t, uint32_t, uint64_t *, uint32_t *);
typedef int (*rsmi_bw_fn)(uint32_t, uint32_t, uint64_t *, uint64_t *);

/* What one pair of devices is: link type, hops and min-max bandwidth
 * (bw false when the library cannot tell). */
struct amd_pair {
	uint32_t type;
	uint64_t hops, lo, hi;
	bool bw;
};

/* The library by name, then in ROCm's default place. */
static void *amd_dlopen(const char *given, const char *name)
{
	if (given)
		return dlopen(given, RTLD_NOW | RTLD_LOCAL);
	void *h = dlopen(name, RTLD_NOW | RTLD_LOCAL);
	if (!h) {
		char path[128];
		snprintf(path, sizeof path, "/opt/rocm/lib/%s", name);
		h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	}
	return h;
}

/* The pair's xGMI links: see the top of the file. */
static int pair_links(const struct amd_pair *p)
{
	if (p->type != TP_AMD_LINK_XGMI || p->hops != 1)
		return 0;
	if (!p->bw)
		return 1;
	return p->lo ? tp_vendor_xgmi_count(p->lo, p->hi) : 0;
}

/* The pair of model GPUs (a, b): its links, and the largest bandwidth the
 * library reports for them (MB/s, as hwloc's XGMIBandwidth takes it) as
 * their GB/s; 0 (count x TP_XGMI_BW) without one. */
static void pair_set(struct tp_vendor_fab *f, int a, int b,
		     const struct amd_pair *p)
{
	int l = pair_links(p);
	f->lanes[a * f->ng + b] = l;
	f->gbs[a * f->ng + b] = l > 0 && p->bw && p->lo ? (double)p->hi / 1000 : 0;
}

/* Device address to model GPU; map[i] gets it.  false with the reason. */
static bool amd_map(struct tp_vendor_fab *f, const char *lib, int i,
		    const struct tp_pci *p, int *map, bool *listed)
{
	int g = tp_vendor_gpu_at(f, p);
	if (g < 0 || listed[g]) {
		tp_vendor_why(f, "%s: GPU %04lx:%02x:%02x.%x is not in the model",
			      lib, p->dom, p->bus, p->dev, p->fn);
		return false;
	}
	listed[g] = true;
	map[i] = g;
	return true;
}

/* The counts into the model as xGMI links; TP_VENDOR_DONE or a TP_E*. */
static int amd_set(struct tp_vendor_fab *f, const char *lib, tp_error *err)
{
	int ng = f->ng;
	for (int i = 0; i < ng; i++)
		for (int j = 0; j < i; j++) {
			/* symmetric whatever one direction said */
			int a = f->lanes[i * ng + j], b = f->lanes[j * ng + i];
			f->lanes[i * ng + j] = f->lanes[j * ng + i] = a > b ? a : b;
			double x = f->gbs[i * ng + j], y = f->gbs[j * ng + i];
			f->gbs[i * ng + j] = f->gbs[j * ng + i] = x > y ? x : y;
		}
	int rc = tp__node_set_fabric(f->n, f->lanes, f->gbs, 0, ng, lib,
				     TP_FABRIC_XGMI, false, err);
	if (rc)
		return rc;
	tp_vendor_why(f, "%s", lib);
	f->set = true;
	return TP_VENDOR_DONE;
}

/* ---- AMD SMI ---- */

struct amdsmi {
	void *h;
	amd_init_fn init;
	amd_void_fn shut_down;
	amd_sockets_fn sockets;
	amd_procs_fn procs;
	amd_bdf_fn bdf;
	amd_type_fn type;
	amd_bw_fn bw;
};

static bool amdsmi_open(struct amdsmi *a, const char *lib)
{
	memset(a, 0, sizeof *a);
	a->h = amd_dlopen(lib, "libamd_smi.so");
	if (!a->h)
		return false;
	*(void **)&a->init = dlsym(a->h, "amdsmi_init");
	*(void **)&a->shut_down = dlsym(a->h, "amdsmi_shut_down");
	*(void **)&a->sockets = dlsym(a->h, "amdsmi_get_socket_handles");
	*(void **)&a->procs = dlsym(a->h, "amdsmi_get_processor_handles");
	*(void **)&a->bdf = dlsym(a->h, "amdsmi_get_gpu_device_bdf");
	*(void **)&a->type = dlsym(a->h, "amdsmi_topo_get_link_type");
	*(void **)&a->bw = dlsym(a->h, "amdsmi_get_minmax_bandwidth_between_processors");
	if (a->init && a->shut_down && a->sockets && a->procs && a->bdf &&
	    a->type && a->bw)
		return true;
	dlclose(a->h);
	return false;
}

/* Every GPU processor of every socket into procs; their count, or -1 with
 * the reason. */
static int amdsmi_list(struct tp_vendor_fab *f, const struct amdsmi *a,
		       void **procs)
{
	void *sock[TP_AMD_MAX_SOCKETS];
	uint32_t ns = 0;
	if (a->sockets(&ns, NULL) != TP_AMD_SUCCESS || ns > TP_AMD_MAX_SOCKETS ||
	    a->sockets(&ns, sock) != TP_AMD_SUCCESS || ns > TP_AMD_MAX_SOCKETS) {
		tp_vendor_why(f, "AMD SMI: no socket handles");
		return -1;
	}
	int np = 0;
	for (uint32_t s = 0; s < ns; s++) {
		uint32_t k = 0;
		if (a->procs(sock[s], &k, NULL) != TP_AMD_SUCCESS ||
		    k > (uint32_t)(TP_AMD_MAX_PROCS - np) ||
		    a->procs(sock[s], &k, procs + np) != TP_AMD_SUCCESS) {
			tp_vendor_why(f, "AMD SMI: no processor handles");
			return -1;
		}
		np += (int)k;
	}
	return np;
}

/* amdsmi_bdf_t: function [2:0], device [7:3], bus [15:8], domain
 * [63:16], bit fields of a uint64_t (x86-64 and aarch64 lay them out from
 * bit 0). */
static struct tp_pci amdsmi_addr(uint64_t v)
{
	return (struct tp_pci){ (unsigned long)(v >> 16), (unsigned)(v >> 8) & 0xff,
				(unsigned)(v >> 3) & 0x1f, (unsigned)v & 7 };
}

static bool amdsmi_counts(struct tp_vendor_fab *f, const struct amdsmi *a)
{
	void *procs[TP_AMD_MAX_PROCS];
	int np = amdsmi_list(f, a, procs);
	if (np < 0)
		return false;
	int map[TP_AMD_MAX_PROCS];
	bool listed[TP_NODE_MAX_GPUS] = { false };
	for (int i = 0; i < np; i++) {
		uint64_t v = 0;
		struct tp_pci p = { 0, 0, 0, 0 };
		if (a->bdf(procs[i], &v) == TP_AMD_SUCCESS)
			p = amdsmi_addr(v);
		if (!amd_map(f, "AMD SMI", i, &p, map, listed))
			return false;
	}
	if (!tp_vendor_all_listed(f, listed, "AMD SMI"))
		return false;
	for (int i = 0; i < np; i++)
		for (int j = 0; j < np; j++) {
			struct amd_pair p = { 0, 0, 0, 0, false };
			if (i == j || a->type(procs[i], procs[j], &p.hops, &p.type) !=
				      TP_AMD_SUCCESS)
				continue;
			p.bw = a->bw(procs[i], procs[j], &p.lo, &p.hi) == TP_AMD_SUCCESS;
			pair_set(f, map[i], map[j], &p);
		}
	return true;
}

int tp_vendor_amdsmi(struct tp_vendor_fab *f, const char *lib, tp_error *err)
{
	struct amdsmi a;
	if (!amdsmi_open(&a, lib))
		return TP_VENDOR_NONE;
	if (a.init(TP_AMDSMI_INIT_AMD_GPUS) != TP_AMD_SUCCESS) {
		dlclose(a.h);
		if (!f->not_ready)
			f->not_ready = "AMD SMI";   /* the driver, not yet */
		return TP_VENDOR_NONE;
	}
	bool ok = amdsmi_counts(f, &a);
	a.shut_down();
	dlclose(a.h);
	return ok ? amd_set(f, "AMD SMI", err) : TP_VENDOR_DONE;
}

/* ---- ROCm SMI ---- */

struct rsmi {
	void *h;
	amd_init_fn init;
	amd_void_fn shut_down;
	rsmi_count_fn count;
	rsmi_pci_fn pci;
	rsmi_type_fn type;
	rsmi_bw_fn bw;
};

static bool rsmi_open(struct rsmi *a, const char *lib)
{
	memset(a, 0, sizeof *a);
	a->h = amd_dlopen(lib, "librocm_smi64.so.1");
	if (!a->h)
		return false;
	*(void **)&a->init = dlsym(a->h, "rsmi_init");
	*(void **)&a->shut_down = dlsym(a->h, "rsmi_shut_down");
	*(void **)&a->count = dlsym(a->h, "rsmi_num_monitor_devices");
	*(void **)&a->pci = dlsym(a->h, "rsmi_dev_pci_id_get");
	*(void **)&a->type = dlsym(a->h, "rsmi_topo_get_link_type");
	*(void **)&a->bw = dlsym(a->h, "rsmi_minmax_bandwidth_get");
	if (a->init && a->shut_down && a->count && a->pci && a->type && a->bw)
		return true;
	dlclose(a->h);
	return false;
}

/* BDFID: domain [63:32], partition [31:28] (not part of the address),
 * bus [15:8], device [7:3], function [2:0]. */
static struct tp_pci rsmi_addr(uint64_t v)
{
	return (struct tp_pci){ (unsigned long)(v >> 32), (unsigned)(v >> 8) & 0xff,
				(unsigned)(v >> 3) & 0x1f, (unsigned)v & 7 };
}

static bool rsmi_counts(struct tp_vendor_fab *f, const struct rsmi *a)
{
	uint32_t nd = 0;
	if (a->count(&nd) != TP_AMD_SUCCESS || nd > TP_AMD_MAX_PROCS) {
		tp_vendor_why(f, "ROCm SMI: no device count");
		return false;
	}
	int map[TP_AMD_MAX_PROCS];
	bool listed[TP_NODE_MAX_GPUS] = { false };
	for (uint32_t i = 0; i < nd; i++) {
		uint64_t v = 0;
		struct tp_pci p = { 0, 0, 0, 0 };
		if (a->pci(i, &v) == TP_AMD_SUCCESS)
			p = rsmi_addr(v);
		if (!amd_map(f, "ROCm SMI", (int)i, &p, map, listed))
			return false;
	}
	if (!tp_vendor_all_listed(f, listed, "ROCm SMI"))
		return false;
	for (uint32_t i = 0; i < nd; i++)
		for (uint32_t j = 0; j < nd; j++) {
			struct amd_pair p = { 0, 0, 0, 0, false };
			if (i == j || a->type(i, j, &p.hops, &p.type) != TP_AMD_SUCCESS)
				continue;
			p.bw = a->bw(i, j, &p.lo, &p.hi) == TP_AMD_SUCCESS;
			pair_set(f, map[i], map[j], &p);
		}
	return true;
}

int tp_vendor_rocm_smi(struct tp_vendor_fab *f, const char *lib,
		       tp_error *err)
{
	struct rsmi a;
	if (!rsmi_open(&a, lib))
		return TP_VENDOR_NONE;
	if (a.init(0) != TP_AMD_SUCCESS) {
		dlclose(a.h);
		if (!f->not_ready)
			f->not_ready = "ROCm SMI";
		return TP_VENDOR_NONE;
	}
	bool ok = rsmi_counts(f, &a);
	a.shut_down();
	dlclose(a.h);
	return ok ? amd_set(f, "ROCm SMI", err) : TP_VENDOR_DONE;
}
