/* topoplace — what the readers of the live node's GPU fabric share
 * (node_vendor.c: NVML and the entry point; node_vendor_amd.c: AMD SMI and
 * ROCm SMI; node_vendor_tool.c: the vendor tools' text). */
#ifndef TOPOPLACE_NODE_VENDOR_H
#define TOPOPLACE_NODE_VENDOR_H

#include <stdbool.h>
#include <stddef.h>

#include "node/node_internal.h"

/* A PCI address, compared by value: NVML writes "00000000:07:00.0" with
 * upper-case hex, hwloc "0000:07:00.0". */
struct tp_pci {
	unsigned long dom;
	unsigned bus, dev, fn;
};

/* The link counts one library found, for the model's GPUs. */
struct tp_vendor_fab {
	tp_node *n;
	int ng;
	struct tp_pci *pci;    /* ng: the model's GPUs */
	int *lanes;            /* ng x ng: direct NVLink lanes / xGMI links */
	int *sw;               /* ng: NVLink lanes to NVSwitches */
	double *gbs;           /* ng x ng: GB/s of the direct lanes (NVML:
				  each lane at the rate of its version) */
	double *swgbs;         /* ng: GB/s of the lanes to NVSwitches */
	char *why;             /* the caller's source buffer */
	size_t why_len;
	bool set;              /* the counts are in the model */
	const char *not_ready; /* the first library that is installed but
				  did not start ("NVML"): asked again later */
};

/* What a reader did: answered (counts in fab, or why nothing is set in
 * fab->why), or did not answer (no library, init failed: try the next). */
enum { TP_VENDOR_NONE = 0, TP_VENDOR_DONE = 1 };

/* "0000:07:00.0" / "00000000:07:00.0" (any case) into p; false when it is
 * not one. */
bool tp_vendor_pci_parse(const char *s, struct tp_pci *p);
/* The model GPU at that address, or -1. */
int tp_vendor_gpu_at(const struct tp_vendor_fab *f, const struct tp_pci *p);
/* Write a reason into fab->why: "NVML: GPU 0000:3b:00.0 is not in the
 * model". */
void tp_vendor_why(struct tp_vendor_fab *f, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* Every model GPU listed (listed[g]); else the reason, false. */
bool tp_vendor_all_listed(struct tp_vendor_fab *f, const bool *listed,
			  const char *lib);

/* AMD SMI, then ROCm SMI: TP_VENDOR_DONE, TP_VENDOR_NONE or a TP_E*. */
int tp_vendor_amdsmi(struct tp_vendor_fab *f, const char *lib, tp_error *err);
int tp_vendor_rocm_smi(struct tp_vendor_fab *f, const char *lib,
		       tp_error *err);
/* xGMI links from a min-max bandwidth pair: max / min, rounded, at least
 * 1, as node_links_rocm.c reads rocm-smi's "Bandwidth" matrix. */
int tp_vendor_xgmi_count(unsigned long long lo, unsigned long long hi);

/* Close every descriptor from lo up, async-signal-safe (a forked child of
 * a threaded slurmstepd): close_range(2), else (Linux before 5.9, or
 * refused) each one /proc/self/fd lists, else every one up to
 * RLIMIT_NOFILE.  skip: the ways not to try (the tests force the
 * fallbacks). */
enum { TP_CLOSE_NO_RANGE = 1, TP_CLOSE_NO_PROC = 2 };
void tp_vendor_close_from(int lo, unsigned skip);

/* The vendor tool's text for the model's GPUs (NVIDIA: nvidia-smi; AMD:
 * amd-smi, then rocm-smi) into n: TP_VENDOR_DONE (set, or why not in
 * source), TP_VENDOR_NONE (no tool), or a TP_E*. */
int tp_vendor_tools(tp_node *n, bool amd, const struct tp_vendor_opts *o,
		    char *source, size_t len, tp_error *err);

#endif
