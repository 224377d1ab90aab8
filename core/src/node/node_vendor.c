/* topoplace — NVLink and xGMI link counts of the live node from the vendor
 * libraries, opened with dlopen() only when the node model has such GPUs:
 * NVML for NVIDIA (as Slurm's gpu/nvml plugin and hwloc's nvml backend
 * read it), AMD SMI then ROCm SMI for AMD (node_vendor_amd.c), and failing
 * those the vendor tool's text (node_vendor_tool.c).  The plugin links
 * none of these libraries: a node without a GPU driver loads the plugin
 * all the same.
 *
 * NVML has no "lanes between two GPUs" call: every NVLink of every GPU is
 * asked for its state and the PCI address of its far end.  An end that is
 * a GPU of the model is a direct lane of that pair; an NVSwitch (remote
 * type SWITCH, or an address that is no GPU) a lane to the switches.  A
 * node with switch lanes is an NVSwitch node: any two GPUs talk over
 * min(switch lanes of a, of b) lanes (plus direct ones), and the model is
 * told so (tp_node_set_nvswitch), since 4 GPUs with 4 switch lanes each
 * look no different from point to point links in the counts.  Each link's
 * speed comes from its version (nvmlDeviceGetNvLinkVersion, as hwloc's
 * nvml backend reads it): 20 GB/s each way for NVLink 1, 25 for NVLink 2
 * to 4, 50 for NVLink 5; a link whose version NVML does not give (an old
 * NVML, a version it does not know yet) counts at TP_NVLINK_BW.
 *
 * Nothing here keeps state between calls; NVML's own state is
 * process-wide (init and shutdown are reference counted by NVML). */
#include <dlfcn.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "node/node_internal.h"
#include "util/util_internal.h"
#include "node/node_vendor.h"

/* ---- the NVML ABI (nvml.h of CUDA 12/13, NVIDIA/go-nvml gen/nvml/nvml.h
 * at 2f9e261: nvmlPciInfo_st, NVML_SUCCESS, NVML_FEATURE_ENABLED,
 * nvmlIntNvLinkDeviceType_enum, NVML_NVLINK_MAX_LINKS) ---- */

typedef int tp_nvmlReturn_t;                 /* enum nvmlReturn_enum */
#define TP_NVML_SUCCESS 0
#define TP_NVML_FEATURE_ENABLED 1            /* nvmlEnableState_t */
#define TP_NVML_NVLINK_DEVICE_TYPE_GPU 0x00
#define TP_NVML_NVLINK_DEVICE_TYPE_IBMNPU 0x01
#define TP_NVML_NVLINK_DEVICE_TYPE_SWITCH 0x02
/* 36 in current headers (18 in CUDA 12.0, 12 and 6 before): the loop asks
 * every one and skips those a GPU does not have (an error, not ENABLED). */
#define TP_NVML_NVLINK_MAX_LINKS 36
typedef struct tp_nvmlDevice_st *tp_nvmlDevice_t;

/* nvmlPciInfo_t since NVML 2.285 (the _v2/_v3 calls).  The old plain calls
 * fill a layout whose busId[16] is where busIdLegacy is: read that one
 * then. */
typedef struct {
	char busIdLegacy[16];      /* NVML_DEVICE_PCI_BUS_ID_BUFFER_V2_SIZE */
	unsigned int domain;
	unsigned int bus;
	unsigned int device;
	unsigned int pciDeviceId;
	unsigned int pciSubSystemId;
	char busId[32];            /* NVML_DEVICE_PCI_BUS_ID_BUFFER_SIZE */
} tp_nvmlPciInfo_t;

typedef tp_nvmlReturn_t (*nvml_void_fn)(void);
typedef tp_nvmlReturn_t (*nvml_count_fn)(unsigned int *);
typedef tp_nvmlReturn_t (*nvml_handle_fn)(unsigned int, tp_nvmlDevice_t *);
typedef tp_nvmlReturn_t (*nvml_pci_fn)(tp_nvmlDevice_t, tp_nvmlPciInfo_t *);
typedef tp_nvmlReturn_t (*nvml_state_fn)(tp_nvmlDevice_t, unsigned int,
					 unsigned int *);
typedef tp_nvmlReturn_t (*nvml_rpci_fn)(tp_nvmlDevice_t, unsigned int,
					tp_nvmlPciInfo_t *);
typedef tp_nvmlReturn_t (*nvml_rtype_fn)(tp_nvmlDevice_t, unsigned int,
					 int *);
typedef tp_nvmlReturn_t (*nvml_version_fn)(tp_nvmlDevice_t, unsigned int,
					   unsigned int *);

struct nvml {
	void *h;
	nvml_void_fn init, shutdown;
	nvml_count_fn count;
	nvml_handle_fn handle;
	nvml_pci_fn pci;
	bool pci_v3;               /* busId, else busIdLegacy */
	nvml_state_fn state;
	nvml_rpci_fn rpci;
	bool rpci_v2;
	nvml_rtype_fn rtype;       /* NULL: NVML before 10.x */
	nvml_version_fn version;   /* NULL: not in this NVML */
};

/* ---- shared with node_vendor_amd.c and node_vendor_tool.c ---- */

bool tp_vendor_pci_parse(const char *s, struct tp_pci *p)
{
	unsigned long dom;
	unsigned bus, dev, fn;
	int end = 0;
	if (!s || sscanf(s, "%lx:%x:%x.%x%n", &dom, &bus, &dev, &fn, &end) != 4 ||
	    s[end] || bus > 0xff || dev > 0x1f || fn > 7)
		return false;
	*p = (struct tp_pci){ dom, bus, dev, fn };
	return true;
}

int tp_vendor_gpu_at(const struct tp_vendor_fab *f, const struct tp_pci *p)
{
	for (int g = 0; g < f->ng; g++)
		if (f->pci[g].dom == p->dom && f->pci[g].bus == p->bus &&
		    f->pci[g].dev == p->dev && f->pci[g].fn == p->fn)
			return g;
	return -1;
}

void tp_vendor_why(struct tp_vendor_fab *f, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	if (f->why_len)
		vsnprintf(f->why, f->why_len, fmt, ap);
	va_end(ap);
}

bool tp_vendor_all_listed(struct tp_vendor_fab *f, const bool *listed,
			  const char *lib)
{
	for (int g = 0; g < f->ng; g++)
		if (!listed[g]) {
			tp_vendor_why(f, "%s: GPU %s of the model is not listed",
				      lib, tp_node_gpu_busid(f->n, g));
			return false;
		}
	return true;
}

int tp_vendor_xgmi_count(unsigned long long lo, unsigned long long hi)
{
	if (lo == 0)
		return 1;
	unsigned long long k = (hi + lo / 2) / lo;
	return k < 1 ? 1 : k > TP_NODE_MAX_NVLINKS ? TP_NODE_MAX_NVLINKS : (int)k;
}

/* ---- NVML ---- */

static void *sym(void *h, const char *name)
{
	return dlsym(h, name);
}

/* The newest of the names the library has. */
static void *sym_any(void *h, const char *a, const char *b, const char *c)
{
	void *p = sym(h, a);
	if (!p && b)
		p = sym(h, b);
	if (!p && c)
		p = sym(h, c);
	return p;
}

/* Object pointers to function pointers through void **: the idiom of
 * dlsym(3). */
static bool nvml_open(struct nvml *a, const char *lib)
{
	memset(a, 0, sizeof *a);
	a->h = dlopen(lib, RTLD_NOW | RTLD_LOCAL);
	if (!a->h)
		return false;
	void *h = a->h;
	*(void **)&a->init = sym(h, "nvmlInit_v2");
	*(void **)&a->shutdown = sym(h, "nvmlShutdown");
	*(void **)&a->count = sym(h, "nvmlDeviceGetCount_v2");
	*(void **)&a->handle = sym(h, "nvmlDeviceGetHandleByIndex_v2");
	*(void **)&a->pci = sym(h, "nvmlDeviceGetPciInfo_v3");
	a->pci_v3 = a->pci != NULL;
	if (!a->pci)
		*(void **)&a->pci = sym_any(h, "nvmlDeviceGetPciInfo_v2",
					    "nvmlDeviceGetPciInfo", NULL);
	*(void **)&a->state = sym(h, "nvmlDeviceGetNvLinkState");
	*(void **)&a->rpci = sym(h, "nvmlDeviceGetNvLinkRemotePciInfo_v2");
	a->rpci_v2 = a->rpci != NULL;
	if (!a->rpci)
		*(void **)&a->rpci = sym(h, "nvmlDeviceGetNvLinkRemotePciInfo");
	*(void **)&a->rtype = sym(h, "nvmlDeviceGetNvLinkRemoteDeviceType");
	*(void **)&a->version = sym(h, "nvmlDeviceGetNvLinkVersion");
	if (a->init && a->shutdown && a->count && a->handle && a->pci &&
	    a->state && a->rpci)
		return true;
	dlclose(a->h);
	a->h = NULL;
	return false;
}

/* The address NVML gives: its string (busId of the new layout,
 * busIdLegacy of the old), else the numbers (function 0). */
static void nvml_addr(const tp_nvmlPciInfo_t *pi, bool v3, struct tp_pci *p)
{
	char s[33];
	snprintf(s, sizeof s, "%.*s", v3 ? 32 : 16, v3 ? pi->busId : pi->busIdLegacy);
	if (!tp_vendor_pci_parse(s, p))
		*p = (struct tp_pci){ pi->domain, pi->bus & 0xff, pi->device & 0x1f, 0 };
}

static void pci_str(const struct tp_pci *p, char *buf, size_t len)
{
	snprintf(buf, len, "%04lx:%02x:%02x.%x", p->dom, p->bus, p->dev, p->fn);
}

/* GB/s each way of link l by its version (NVML's nvmlNvlinkVersion_t:
 * 1 is NVLink 1.0, 2-3 are 2.x, 4-5 3.x, 6 4.0, 7 5.0; hwloc's
 * topology-nvml.c reads it the same way). */
static double nvml_rate(const struct nvml *a, tp_nvmlDevice_t d, unsigned l)
{
	unsigned v = 0;
	if (!a->version || a->version(d, l, &v) != TP_NVML_SUCCESS)
		return TP_NVLINK_BW;
	return v == 1 ? TP__NVLINK1_BW : v >= 2 && v <= 6 ? TP_NVLINK_BW
	       : v == 7 ? TP__NVLINK5_BW : TP_NVLINK_BW;
}

/* One active link of model GPU g: a lane to a GPU or to the switches. */
static void nvml_link(struct tp_vendor_fab *f, const struct nvml *a,
		      tp_nvmlDevice_t d, unsigned l, int g)
{
	int type = -1;
	if (a->rtype && a->rtype(d, l, &type) != TP_NVML_SUCCESS)
		type = -1;
	double rate = nvml_rate(a, d, l);
	if (type == TP_NVML_NVLINK_DEVICE_TYPE_SWITCH) {
		f->sw[g]++;
		f->swgbs[g] += rate;
		return;
	}
	if (type == TP_NVML_NVLINK_DEVICE_TYPE_IBMNPU)
		return;          /* a POWER9 CPU: no GPU fabric */
	tp_nvmlPciInfo_t pi;
	memset(&pi, 0, sizeof pi);
	if (a->rpci(d, l, &pi) != TP_NVML_SUCCESS)
		return;
	struct tp_pci p;
	nvml_addr(&pi, a->rpci_v2, &p);
	int r = tp_vendor_gpu_at(f, &p);
	if (r >= 0 && r != g) {
		f->lanes[g * f->ng + r]++;
		f->gbs[g * f->ng + r] += rate;
	} else if (r < 0 && type != TP_NVML_NVLINK_DEVICE_TYPE_GPU) {
		f->sw[g]++;      /* no GPU at the far end: an NVSwitch */
		f->swgbs[g] += rate;
	}
}

/* Device i of NVML: its model GPU (listed[] marks it) and its links.
 * false with the reason when the model lacks it. */
static bool nvml_device(struct tp_vendor_fab *f, const struct nvml *a,
			unsigned i, bool *listed)
{
	tp_nvmlDevice_t d;
	tp_nvmlPciInfo_t pi;
	memset(&pi, 0, sizeof pi);
	if (a->handle(i, &d) != TP_NVML_SUCCESS ||
	    a->pci(d, &pi) != TP_NVML_SUCCESS) {
		tp_vendor_why(f, "NVML: no PCI address for device %u", i);
		return false;
	}
	struct tp_pci p;
	nvml_addr(&pi, a->pci_v3, &p);
	int g = tp_vendor_gpu_at(f, &p);
	if (g < 0 || listed[g]) {
		char s[32];
		pci_str(&p, s, sizeof s);
		tp_vendor_why(f, "NVML: GPU %s is not in the model", s);
		return false;
	}
	listed[g] = true;
	for (unsigned l = 0; l < TP_NVML_NVLINK_MAX_LINKS; l++) {
		unsigned st = 0;
		if (a->state(d, l, &st) == TP_NVML_SUCCESS &&
		    st == TP_NVML_FEATURE_ENABLED)
			nvml_link(f, a, d, l, g);
	}
	return true;
}

/* Every device, once NVML is up: true when the counts are complete. */
static bool nvml_devices(struct tp_vendor_fab *f, const struct nvml *a)
{
	unsigned cnt = 0;
	if (a->count(&cnt) != TP_NVML_SUCCESS) {
		tp_vendor_why(f, "NVML: no device count");
		return false;
	}
	bool listed[TP_NODE_MAX_GPUS] = { false };
	if (cnt > (unsigned)f->ng) {
		tp_vendor_why(f, "NVML: %u GPUs, the model has %d", cnt, f->ng);
		return false;
	}
	for (unsigned i = 0; i < cnt; i++)
		if (!nvml_device(f, a, i, listed))
			return false;
	return tp_vendor_all_listed(f, listed, "NVML");
}

/* TP_VENDOR_NONE without the library or when NVML does not start (no
 * driver); TP_VENDOR_DONE otherwise, with the counts or the reason. */
static int nvml_read(struct tp_vendor_fab *f, const char *lib, bool *ok)
{
	struct nvml a;
	*ok = false;
	if (!nvml_open(&a, lib))
		return TP_VENDOR_NONE;
	if (a.init() != TP_NVML_SUCCESS) {
		/* installed, but the driver does not answer (yet: NVML starts
		 * late on some boots) */
		dlclose(a.h);
		f->not_ready = "NVML";
		return TP_VENDOR_NONE;
	}
	*ok = nvml_devices(f, &a);
	a.shutdown();
	dlclose(a.h);
	return TP_VENDOR_DONE;
}

/* The pair counts of an NVLink node into c (ng x ng): direct lanes, plus
 * min(switch lanes) of the two GPUs on an NVSwitch node, and their GB/s
 * into bw.  true when there are switch lanes. */
static bool nvlink_counts(const struct tp_vendor_fab *f, int *c, double *bw)
{
	int ng = f->ng;
	bool sw = false;
	for (int g = 0; g < ng; g++)
		sw |= f->sw[g] > 0;
	for (int i = 0; i < ng; i++)
		for (int j = 0; j < ng; j++) {
			/* each end counted its own lanes: take the larger
			 * should one end have missed one */
			int d = f->lanes[i * ng + j], e = f->lanes[j * ng + i];
			int v = i == j ? 0 : (d > e ? d : e);
			double b = i == j ? 0 : d > e ? f->gbs[i * ng + j]
						      : f->gbs[j * ng + i];
			if (i != j && sw) {
				bool lo = f->sw[i] < f->sw[j];
				v += lo ? f->sw[i] : f->sw[j];
				b += lo ? f->swgbs[i] : f->swgbs[j];
			}
			c[i * ng + j] = v > TP_NODE_MAX_NVLINKS ? TP_NODE_MAX_NVLINKS : v;
			bw[i * ng + j] = b;
		}
	return sw;
}

static int nvidia_links(struct tp_vendor_fab *f, const char *lib,
			tp_error *err)
{
	bool ok;
	int rc = nvml_read(f, lib ? lib : "libnvidia-ml.so.1", &ok);
	if (rc != TP_VENDOR_DONE || !ok)
		return rc;
	int *c = tp__calloc((size_t)f->ng * (size_t)f->ng, sizeof(int));
	double *bw = tp__calloc((size_t)f->ng * (size_t)f->ng, sizeof(double));
	if (!c || !bw) {
		free(c);
		free(bw);
		return tp_error_set(err, TP_ENOMEM, "NVML: out of memory");
	}
	bool sw = nvlink_counts(f, c, bw);
	rc = tp__node_set_fabric(f->n, c, bw, 0, f->ng, "NVML", TP_FABRIC_NVLINK, sw,
				 err);
	free(c);
	free(bw);
	if (rc)
		return rc;
	tp_vendor_why(f, "NVML");
	f->set = true;
	return TP_VENDOR_DONE;
}

static int amd_links(struct tp_vendor_fab *f, const struct tp_vendor_opts *o,
		     tp_error *err)
{
	int rc = tp_vendor_amdsmi(f, o->amdsmi, err);
	if (rc == TP_VENDOR_NONE)
		rc = tp_vendor_rocm_smi(f, o->rocm_smi, err);
	return rc;
}

/* ---- the entry point ---- */

static void fab_free(struct tp_vendor_fab *f)
{
	free(f->pci);
	free(f->lanes);
	free(f->sw);
	free(f->gbs);
	free(f->swgbs);
}

static int fab_init(struct tp_vendor_fab *f, tp_node *n, char *why,
		    size_t len, tp_error *err)
{
	memset(f, 0, sizeof *f);
	f->n = n;
	f->ng = tp_node_ngpus(n);
	f->why = why;
	f->why_len = len;
	size_t ng = f->ng > 0 ? (size_t)f->ng : 1;
	f->pci = tp__calloc(ng, sizeof *f->pci);
	f->lanes = tp__calloc(ng * ng, sizeof(int));
	f->sw = tp__calloc(ng, sizeof(int));
	f->gbs = tp__calloc(ng * ng, sizeof(double));
	f->swgbs = tp__calloc(ng, sizeof(double));
	if (!f->pci || !f->lanes || !f->sw || !f->gbs || !f->swgbs)
		return tp_error_set(err, TP_ENOMEM, "GPU fabric: out of memory");
	return 0;
}

/* The model's GPU addresses; false with the reason when one has none
 * (nothing to match the library's devices against). */
static bool fab_addresses(struct tp_vendor_fab *f)
{
	for (int g = 0; g < f->ng; g++)
		if (!tp_vendor_pci_parse(tp_node_gpu_busid(f->n, g), &f->pci[g])) {
			tp_vendor_why(f, "GPU %d of the model has no PCI address", g);
			return false;
		}
	return true;
}

/* Which vendor the model's GPUs are: 0x10de, 0x1002, 0 (none, or both:
 * no fabric spans two vendors, and the model takes one kind only). */
static unsigned model_vendor(const tp_node *n)
{
	unsigned v = 0;
	for (int g = 0; g < tp_node_ngpus(n); g++) {
		unsigned w = tp_node_gpu_vendor(n, g);
		if (v && w != v)
			return 0;
		v = w;
	}
	return v == 0x10de || v == 0x1002 ? v : 0;
}

/* What answered, into source (see node_internal.h); *complete false when
 * a part may answer later: a library that did not start, a library's
 * answer that failed, a tool that failed or timed out. */
static void outcome(const struct tp_vendor_fab *f, bool permanent,
		    bool lib_done, bool tool_set, const char *lib,
		    const char *tool, char *source, size_t len, bool *complete)
{
	char none[512];
	const char *why = lib;
	bool ok = true;
	if (f->set || permanent)
		why = lib;                      /* the counts, or the model's
						   own lack: final */
	else if (tool_set)
		why = tool;
	else if (lib_done)
		ok = false;                     /* the library's failure */
	else {
		/* none answered: final when nothing is installed */
		ok = !f->not_ready && !tool[0];
		if (f->not_ready)
			snprintf(none, sizeof none, "%s not ready%s%s", f->not_ready,
				 tool[0] ? ", " : "", tool);
		else
			snprintf(none, sizeof none, "%s", tool);
		why = none;
	}
	if (len)
		snprintf(source, len, "%s", why);
	*complete = ok;
}

int tp_node_add_vendor_links(tp_node *n, const struct tp_vendor_opts *o,
			     char *source, size_t len, bool *complete,
			     tp_error *err)
{
	static const struct tp_vendor_opts defaults = { 0 };
	bool dummy;
	if (!complete)
		complete = &dummy;
	*complete = true;
	if (!o)
		o = &defaults;
	if (source && len)
		source[0] = '\0';
	else
		len = 0;
	if (!n)
		return tp_error_set(err, TP_EINVAL, "GPU fabric: no node model");
	unsigned vendor = model_vendor(n);
	if (!vendor)
		return 0;
	/* Partitioned GPUs (an MI300 in CPX mode): the libraries list every
	 * partition with its device's address (or a made-up function), which
	 * the counts here cannot tell apart; the links hwloc saw (XGMIPeers,
	 * one set per pair of devices) stand, and nothing is said: a
	 * complete answer, nothing to ask again. */
	for (int g = 0; g < tp_node_ngpus(n); g++)
		if (tp__node_gpu_partitioned(n, g))
			return 0;
	char lib[256] = "", tool[256] = "";
	struct tp_vendor_fab f;
	bool permanent = false;      /* the model itself lacks what is asked */
	int rc = fab_init(&f, n, lib, sizeof lib, err);
	if (!rc && !fab_addresses(&f)) {
		rc = TP_VENDOR_DONE;
		permanent = true;
	}
	if (!rc)
		rc = vendor == 0x10de ? nvidia_links(&f, o->nvml, err)
				      : amd_links(&f, o, err);
	bool lib_done = rc == TP_VENDOR_DONE, tool_set = false;
	if (rc == TP_VENDOR_NONE && !o->no_tools) {
		rc = tp_vendor_tools(n, vendor == 0x1002, o, tool, sizeof tool, err);
		tool_set = rc == TP_VENDOR_DONE;
	}
	if (rc >= 0)
		outcome(&f, permanent, lib_done, tool_set, lib, tool, source, len,
			complete);
	fab_free(&f);
	return rc < 0 ? rc : 0;
}
