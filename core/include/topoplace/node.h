/* topoplace — inside one node: sockets, cores and GPUs, the PCIe tree and
 * the GPU fabric (NVLink or AMD Infinity Fabric), and the choice of GPUs and
 * CPUs for the tasks placed on the node.
 *
 * The model comes from hwloc (the live machine, or an hwloc XML export such
 * as `lstopo --of xml`), plus GPU fabric link counts from a gres.conf-style
 * file (`Name=gpu ... Links=-1,4,0,0` per GPU), saved `nvidia-smi topo -m`
 * output, saved `amd-smi topology` output (text or `--json`), or saved
 * `rocm-smi --showtopo --shownodesbw` output.  GPUs are
 *   - the NVIDIA display/3D controllers (vendor 0x10de, PCI class 0x0300 or
 *     0x0302), and
 *   - the AMD accelerators (vendor 0x1002): display controllers of class
 *     0x0380 (MI100, MI200: every MI250X GCD is a PCI device of its own) or
 *     0x0302, processing accelerators of class 0x1200 (MI300), and any AMD
 *     display device with a ROCm SMI ("rsmiN") or OpenCL OS device below
 *     it (Radeon cards under ROCm are VGA controllers, 0x0300),
 * numbered in PCI bus order as Slurm numbers them (gpu/nvml and gpu/rsmi
 * both sort by PCI bus ID).  A device with several ROCm SMI (or NVML) OS
 * devices below it, an MI300A or MI300X in CPX or TPX mode, is that many
 * GPUs (partitions, numbered by their rsmiN within the device): they share
 * the device's PCIe and fabric links, and hang below it by a link of
 * 1000 GB/s (path class PART between two of them).
 *
 * Path classes between two GPUs follow `nvidia-smi topo -m` and NCCL:
 *   PART  two partitions of one device (through the device, on its package)
 *   NVL   joined by NVLink (directly or through an NVSwitch)
 *   XGMI  joined by direct AMD xGMI (Infinity Fabric) links
 *   XHOP  joined by xGMI links through other GPUs (rocm-smi: XGMI with a
 *         weight of 15 per hop)
 *   PIX   at most one PCIe switch between them
 *   PXB   several PCIe switches, no host bridge
 *   PHB   through one PCIe host bridge
 *   NODE  through several host bridges of one NUMA node (one socket)
 *   SYS   through the inter-socket link (QPI/UPI/xGMI)
 *
 * Link graph (for congestion, after MAGC): one link from every GPU and PCI
 * bridge to its parent (bandwidth: the PCIe link speed hwloc reports, else
 * 12 GB/s), one from every host bridge to its socket (the sum of its ports),
 * one between every two sockets (10 GB/s), and the GPU fabric:
 *   NVLink: a direct link between two GPUs of its lanes at the rate of
 *     their generation (20 GB/s each way for NVLink 1, 25 for NVLink 2 to
 *     4, 50 for NVLink 5; lanes counted without a speed at TP_NVLINK_BW),
 *     or, when every GPU pair has the same lane count and that count cannot
 *     be point-to-point (count x (GPUs-1) > 18), one such link from each
 *     GPU to an NVSwitch.  A GPU pair with NVLink routes over it.
 *   xGMI: a direct link between two GPUs of the bandwidth reported for it
 *     (hwloc's XGMIBandwidth), else links x 50 GB/s (one xGMI link of
 *     CDNA2 runs at 25 GT/s x 16 bits = 50 GB/s per direction; the two
 *     GCDs of an MI250X share 4 of them, GCDs of different MI250X 1 or 2).
 *     A GPU pair of one xGMI hive routes over the fewest xGMI links (the
 *     widest such route, then the lowest GPU numbers), through other GPUs
 *     when they have no direct link, as the fabric forwards it.
 * Any other pair routes over PCIe up to the lowest common ancestor (and
 * across the socket link when the sockets differ).  Links are undirected:
 * both directions of a pair's traffic load the same links.  Network cards
 * (see below) hang in the PCIe tree like GPUs, each with one more link: its
 * port to the network.
 */
#ifndef TOPOPLACE_NODE_H
#define TOPOPLACE_NODE_H

#include <stdint.h>
#include <stdio.h>
#include <topoplace/error.h>
#include <topoplace/export.h>
#include <topoplace/machine.h>
#include <topoplace/pattern.h>

#ifdef __cplusplus
extern "C" {
#endif

#define TP_NODE_MAX_GPUS 64      /* GPUs per node */
#define TP_NODE_MAX_NICS 64      /* network cards per node */
#define TP_NODE_MAX_NVLINKS 64   /* NVLink lanes (or xGMI links) between
				    two GPUs */

/* Bandwidth constants in GB/s, each way.  An NVLink of generation 2 to 4
 * (V100, A100, H100): 25 GB/s; NVLink 1 (P100) runs at 20, NVLink 5
 * (Blackwell) at 50 (hwloc's nvml backend by the version NVML reports).
 * Links counted without their generation (a links file) are taken at this
 * rate unless the admin says otherwise (GpuLinkBandwidth=). */
#define TP_NVLINK_BW 25.0        /* per NVLink 2-4 link */
/* Per xGMI link and direction: 25 GT/s x 16 bits (AMD, "AMD Instinct MI250
 * microarchitecture", ROCm documentation: 50 GB/s for a 16-wide link; the
 * OLCF Frontier User Guide: 200 GB/s between the two GCDs of one MI250X
 * over 4 links, 50-100 GB/s between GCDs of different MI250X). */
#define TP_XGMI_BW 50.0
#define TP_PCI_BW 12.0           /* PCIe link whose speed hwloc does not know */
#define TP_SMP_BW 10.0           /* inter-socket link */

typedef struct tp_node tp_node;

/* Load an hwloc 2.x or 3.x XML file (lstopo --of xml), a regular file of
 * at most 64 MiB.  The XML is checked and rewritten before hwloc sees it, so
 * that malformed input cannot crash or stall hwloc (core/src/node/node_xml.c
 * has the rule; hwloc 1.x XML is refused: convert it with hwloc 2's lstopo).
 * The GPU fabric comes from the XML's distance matrices when it has them
 * (core/src/node/node_dist.c):
 *   - NVLinkBandwidth: the bandwidth as it is (hwloc adds up each link's
 *     rate: 20000 MB/s for NVLink 1, 25000 for NVLink 2 to 4, 50000 for
 *     NVLink 5); lanes = MB/s / that rate, the rate told by the values
 *     (core/src/node/node_dist.c).  GPUs on NVSwitches: each pair gets the
 *     fewer of the two GPUs' lanes to all switches, and the model has the
 *     switch (tp_node_has_nvswitch);
 *   - XGMIBandwidth, XGMIHops: a pair one hop apart (or, without hops, with
 *     bandwidth) has max(1, round(MB/s / 50000)) xGMI links of the
 *     bandwidth reported; pairs farther apart are routed through other
 *     GPUs.  Partitioned GPUs are named by their OS devices (rsmiN).  hwloc on ROCm SMI writes
 *     100000 for every xGMI pair, a placeholder: those pairs get one link,
 *     four between the two GCDs of an MI250 or MI250X.  These replace the
 *     XGMIPeers counts.
 * A matrix that names none of the node's GPUs is ignored; one that is not
 * symmetric or counts more than TP_NODE_MAX_NVLINKS links is refused.  A
 * links file loaded afterwards (tp_node_load_links) still overrides them.
 * Errors name the file and line. */
TP_EXPORT int tp_node_load_xml(const char *path, tp_node **out, tp_error *err);
/* The machine this runs on. */
TP_EXPORT int tp_node_load_live(tp_node **out, tp_error *err);
TP_EXPORT void tp_node_destroy(tp_node *n);

/* The machine this runs on, as the plugin sees it: hwloc's live topology
 * and the GPU fabric from the vendor's library (NVML, AMD SMI, ROCm SMI,
 * opened only when present) or tool.  With a cache_dir, the model is
 * first looked for there: a file named by a fingerprint of this boot and
 * hardware (core/src/node/node_detect.c), read only when it and the
 * directory are root's and writable by root alone.  flags:
 *   TP_NODE_DETECT_STORE    a model detected anew is written there (only
 *                           when running as root; the directory is made);
 *   TP_NODE_DETECT_PREPARE  the same, and when the cache already holds a
 *                           complete model nothing is loaded: *out is NULL.
 * The model is the whole node, CPUs and memory outside this process's
 * cgroup cpuset included.  A vendor part that did not answer (a library
 * that does not start, a failed answer, a tool that failed or timed out)
 * is not kept for the boot: the cache holds hwloc's part, marked partial,
 * and the next call asks the vendor again.  tp_node_source says where the
 * model came from and what answered: "this node (hwloc, NVML)", "this
 * node (hwloc; NVML not ready)", "this node (cached in PATH: hwloc,
 * NVML)". */
#define TP_NODE_DETECT_STORE 1u
#define TP_NODE_DETECT_PREPARE 2u
TP_EXPORT int tp_node_detect(const char *cache_dir, unsigned flags,
			     tp_node **out, tp_error *err);
/* The model as one hwloc XML (the XML it was loaded from, or hwloc's
 * export of the live machine) with the GPU fabric added as hwloc's
 * NVLinkBandwidth or XGMIBandwidth distances, so that loading it gives the
 * same model: what NodeTopology= may pin.  *xml is malloc'ed and
 * NUL-terminated; *len excludes the NUL. */
TP_EXPORT int tp_node_write_xml(const tp_node *n, char **xml, size_t *len,
				tp_error *err);

/* Where the model came from ("dgx.xml", "this machine"). */
TP_EXPORT const char *tp_node_source(const tp_node *n);

TP_EXPORT int tp_node_npackages(const tp_node *n);
TP_EXPORT int tp_node_ncores(const tp_node *n);
TP_EXPORT int tp_node_npus(const tp_node *n);
/* Socket of core c (logical order, 0-based). */
TP_EXPORT int tp_node_core_package(const tp_node *n, int core);
/* Operating-system indices of the hardware threads of core c: writes up to
 * cap entries to pus and returns how many the core has. */
TP_EXPORT int tp_node_core_pus(const tp_node *n, int core, int *pus, int cap);

TP_EXPORT int tp_node_ngpus(const tp_node *n);
/* "0000:07:00.0" */
TP_EXPORT const char *tp_node_gpu_busid(const tp_node *n, int gpu);

/* ---- The GPU fabric: NVLink or xGMI ---- */

/* Read fabric link counts from a file: gres.conf lines "Name=gpu ...
 * Links=..." (one per GPU; the -1 marks the GPU's own index), the text of
 * `nvidia-smi topo -m` (NV# entries), the output of `amd-smi topology`
 * (text or `--json`: its tables are keyed by PCI bus id, matched to the
 * node's GPUs; a bus id that is not one of them is an error), or the text
 * of `rocm-smi --showtopo` and/or `rocm-smi --shownodesbw`.  The format is
 * recognised from the content (core/src/node/node_links.c).  Errors name
 * the file and line. */
TP_EXPORT int tp_node_load_links(tp_node *n, const char *path, tp_error *err);

/* NVLink lanes between two GPUs (0 on an xGMI node). */
TP_EXPORT int tp_node_nvlinks(const tp_node *n, int a, int b);
/* True when the NVLinks were read as an NVSwitch fabric. */
TP_EXPORT int tp_node_has_nvswitch(const tp_node *n);

/* ---- Paths and links ---- */

TP_EXPORT double tp_node_link_bandwidth(const tp_node *n, int link);
/* "GPU3 - bridge 0000:02:01.0", "socket0 - socket1", "GPU0 - GPU1 NVLink
 * x4", "GPU0 - GPU1 xGMI x4", ... */
TP_EXPORT const char *tp_node_link_name(const tp_node *n, int link);

/* ---- Network cards ----
 * The cards that carry the job's traffic to other nodes: InfiniBand and
 * other fabric controllers (PCI class 0x0207, 0x0208), network controllers
 * with an RDMA (OpenFabrics) device, and HPE Slingshot (Cassini) cards
 * (vendor 0x17db device 0x0501, vendor 0x1590 device 0x0371, or a network
 * OS device of subtype "Slingshot" as hwloc 2.10 marks them), as hwloc
 * lists them; plain Ethernet ports are left out.  Numbered in PCI bus order.  A task's GPU
 * traffic to tasks on other nodes leaves through the card nearest its GPU
 * (NCCL's GPU-NIC affinity): tp_gpusel loads that route too. */
TP_EXPORT int tp_node_nnics(const tp_node *n);
TP_EXPORT const char *tp_node_nic_busid(const tp_node *n, int nic);
/* The card nearest GPU gpu (closest path class, then fewest links, then the
 * lower index); -1 when the node has none. */
TP_EXPORT int tp_node_gpu_nic(const tp_node *n, int gpu);

/* ---- The parts, for pictures ----
 * The node as a forest of parts: every socket is a root, with its PCIe host
 * bridges below it, then bridges and PCIe switches, the GPUs and network
 * cards, and each card's port to the network; the NVSwitch (when the
 * NVLinks were read as one) is a root of its own.  Parts are numbered
 * 0..tp_node_nparts()-1, part s being socket s for s < tp_node_npackages();
 * a part's link to its parent is a link of tp_node_link_*. */
enum tp_node_part_kind {
	TP_PART_SOCKET = 0,
	TP_PART_HOSTBRIDGE,
	TP_PART_BRIDGE,      /* a PCIe bridge, or a switch (children > 1) */
	TP_PART_GPU,
	TP_PART_NVSWITCH,
	TP_PART_NIC,
	TP_PART_PORT,        /* a network card's port to the network */
};

typedef struct tp_node_part {
	enum tp_node_part_kind kind;
	int parent;          /* part, -1 for a root */
	int uplink;          /* link to the parent, -1 when none */
	int index;           /* socket, GPU or card number (ports: their
				card's); -1 for the others */
	const char *name;    /* "socket0", "GPU3", "switch 0000:03:00.0" */
} tp_node_part;

TP_EXPORT int tp_node_nparts(const tp_node *n);
/* Part p into out: 0, or TP_EINVAL for a bad argument. */
TP_EXPORT int tp_node_part_get(const tp_node *n, int p, tp_node_part *out);
/* The two parts link l joins (the child first for a tree link): 0 or
 * TP_EINVAL. */
TP_EXPORT int tp_node_link_parts(const tp_node *n, int l, int *a, int *b);

/* A picture of the node: sockets, PCIe tree, GPU path matrix. */
TP_EXPORT void tp_node_describe(const tp_node *n, FILE *f);

#ifdef __cplusplus
}
#endif
#endif
