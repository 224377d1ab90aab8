/* topoplace — the node model: the part of <topoplace/node.h> that is not
 * exported.  The core's modules, the unit tests, the benchmarks and the
 * fuzzers (all linked with the static archive) use it; the front ends and
 * outside programs see only the public header. */
#ifndef TOPOPLACE_NODE_INTERNAL_H
#define TOPOPLACE_NODE_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <topoplace/node.h>

/* What a links file holds (tp_links_parse_kind). */
enum tp_links_kind {
	TP_LINKS_GRES = 0,      /* gres.conf Links=: NVLink lanes on NVIDIA
				   GPUs, xGMI links on AMD GPUs */
	TP_LINKS_NVIDIA_SMI,    /* nvidia-smi topo -m: NVLink lanes */
	TP_LINKS_ROCM_SMI,      /* rocm-smi --showtopo [--shownodesbw]: xGMI
				   links */
	TP_LINKS_AMD_SMI,       /* amd-smi topology (text or --json): xGMI
				   links, GPUs keyed by PCI bus id */
};

/* A GPU of a links file that keys GPUs by PCI bus id (amd-smi): the bus id
 * as "0000:0c:00.0" (lower case) and the line first naming it (0: none,
 * JSON). */
struct tp_links_bdf {
	char busid[16];
	int line;
};

enum tp_gpu_fabric {
	TP_FABRIC_NONE = 0,     /* PCIe only */
	TP_FABRIC_NVLINK,
	TP_FABRIC_XGMI,
};

enum tp_gpu_path {
	TP_PATH_LOC = 0,   /* the same GPU */
	TP_PATH_PART,      /* two partitions of one device (MI300 CPX, ...) */
	TP_PATH_NVL,
	TP_PATH_XGMI,      /* direct xGMI links */
	TP_PATH_XHOP,      /* xGMI links through other GPUs */
	TP_PATH_PIX,
	TP_PATH_PXB,
	TP_PATH_PHB,
	TP_PATH_NODE,
	TP_PATH_SYS,
};

/* Link speeds, GB/s each way (hwloc's nvml backend, topology-nvml.c: the
 * rate of a link by the version NVML reports). */
#define TP__NVLINK1_BW 20.0     /* NVLink 1 (P100) */
#define TP__NVLINK5_BW 50.0     /* NVLink 5 (B100, B200, GB200) */
/* NVLink 2 to 4 (V100, A100, H100): TP_NVLINK_BW. */
/* Between a GPU partition and its device: on the package, far above any
 * link out of it; hwloc's figure for a GPU to itself (1000000 MB/s on the
 * diagonal of its NVLinkBandwidth and XGMIBandwidth). */
#define TP__PART_BW 1000.0
/* GPUs a != b are partitions of one device. */
bool tp__node_same_device(const tp_node *n, int a, int b);
/* The GPU is one of several partitions of its device (then
 * tp_node_gpu_busid is the device's, shared with the others). */
bool tp__node_gpu_partitioned(const tp_node *n, int gpu);

/* "X", "PART", "NV4", "PIX", ... as nvidia-smi topo -m prints them (NVL with the
 * lane count in lanes), "XGMI4" (direct xGMI, lanes = the link count),
 * "XHOP2" (xGMI through other GPUs, lanes = the hops); buf gets at least 8
 * bytes. */
const char *tp_gpu_path_name(enum tp_gpu_path p, int lanes, char *buf,
			     size_t len);
/* tp_node_load_xml from a buffer; what names it in messages. */
int tp_node_load_xml_buffer(const char *xml, size_t len, const char *what,
			    tp_node **out, tp_error *err);
int tp_node_nnuma(const tp_node *n);
/* The GPU's PCI vendor: 0x10de (NVIDIA) or 0x1002 (AMD); 0 for a bad
 * index. */
unsigned tp_node_gpu_vendor(const tp_node *n, int gpu);
/* Socket and NUMA node (logical indices) the GPU is attached to, -1 when
 * hwloc does not say. */
int tp_node_gpu_package(const tp_node *n, int gpu);
int tp_node_gpu_numa(const tp_node *n, int gpu);
enum tp_gpu_fabric tp_node_fabric(const tp_node *n);
/* Set NVLink lane counts: counts is ngpus x ngpus, row-major, symmetric,
 * -1 or 0 on the diagonal, 0..TP_NODE_MAX_NVLINKS elsewhere.  Every GPU of
 * the node must be an NVIDIA GPU. */
int tp_node_set_nvlinks(tp_node *n, const int *counts, int ngpus,
			const char *what, tp_error *err);
/* tp_node_set_nvlinks for lanes that run through NVSwitches, as a vendor
 * library saw them (counts: each pair the smaller of the two GPUs' switch
 * lanes): the node is an NVSwitch node (tp_node_has_nvswitch) even where
 * the counts alone would not say so (4 GPUs with 4 lanes each), provided
 * every pair is linked. */
int tp_node_set_nvswitch(tp_node *n, const int *counts, int ngpus,
			 const char *what, tp_error *err);
/* The same for xGMI link counts (every GPU an AMD GPU); all zero clears
 * the fabric. */
int tp_node_set_xgmi(tp_node *n, const int *counts, int ngpus,
		     const char *what, tp_error *err);
/* What the three above do, with the links' bandwidth: gbs (GB/s each way,
 * ngpus x ngpus, may be NULL) where it is above 0, else count x rate (GB/s
 * a link; 0: tp__node_link_rate); switched as tp_node_set_nvswitch. */
int tp__node_set_fabric(tp_node *n, const int *counts, const double *gbs,
			double rate, int ngpus, const char *what,
			enum tp_gpu_fabric fabric, bool switched, tp_error *err);
/* GB/s of one link counted without its speed (a links file, XGMIPeers,
 * NVML without nvmlDeviceGetNvLinkVersion): what tp__node_set_link_rate
 * set (topoplace.conf's GpuLinkBandwidth=), else TP_NVLINK_BW (NVLink 2
 * to 4) or TP_XGMI_BW.  An hwloc XML's NVLinkBandwidth or XGMIBandwidth
 * (what tp_node_write_xml keeps of a model) carries the real speed. */
double tp__node_link_rate(const tp_node *n, enum tp_gpu_fabric fabric);
/* Set that speed for the counts set afterwards (GB/s; 0 or less: by the
 * links' kind); n may be NULL. */
void tp__node_set_link_rate(tp_node *n, double gbs);
/* tp_node_load_links from a buffer. */
int tp_node_load_links_buffer(tp_node *n, const char *text, size_t len,
			      const char *what, tp_error *err);
/* Parse link counts without a node (for checking a file): *counts_out is
 * malloc'ed ngpus x ngpus. */
int tp_links_parse(const char *text, size_t len, const char *what,
		   int **counts_out, int *ngpus_out, tp_error *err);
/* The same, and which format it was (kind may be NULL).  rocm-smi text:
 * its "Weight between two GPUs", "Hops between two GPUs", "Link Type
 * between two GPUs" and "Bandwidth" (min-max, MB/s) matrices, GPU0..GPUn
 * headers, one row per GPU; the "Numa Nodes" lines and other sections are
 * skipped.  With the bandwidth matrix a pair has max / min xGMI links
 * ("0-0": none; 50000-200000 on the two GCDs of an MI250X: 4); without it
 * (or when no pair has a bandwidth) a pair of type XGMI whose weight is the
 * smallest XGMI weight (one hop, 15) has one link; when no XGMI pair has a
 * weight either, an XGMI pair of one hop has one link.  Hops are not used
 * otherwise: rocm-smi prints 1 for every xGMI pair. */
int tp_links_parse_kind(const char *text, size_t len, const char *what,
			int **counts_out, int *ngpus_out,
			enum tp_links_kind *kind, tp_error *err);
/* The same, and for files keyed by bus id (amd-smi) *bdfs_out, malloc'ed,
 * the GPUs' bus ids in the order of the counts: sorted, the order the node
 * model numbers GPUs in (NULL for the other formats).  amd-smi topology
 * text: the tables "WEIGHT TABLE:", "HOPS TABLE:", "LINK TYPE TABLE:"
 * (SELF, XGMI, PCIE, UNKNOWN, N/A) and "NUMA BW TABLE:" (min-max in MB/s,
 * N/A), each a header of bus ids and one row per bus id; other tables
 * (ACCESS, CACHE COHERANCY, ATOMICS, DMA, BI-DIRECTIONAL, ...) and the
 * legend are skipped.  amd-smi topology --json: an array of { "bdf",
 * "links": [ { "bdf", "weight", "num_hops", "link_type", "bandwidth" } ] }.
 * Counts by the rocm-smi rules; where every bandwidth is 0-0 (amd-smi on
 * MI355X) they say nothing, and where no XGMI pair has a weight either
 * (MI355X prints 0) an XGMI pair of one hop has one link. */
int tp_links_parse_bdf(const char *text, size_t len, const char *what,
		       int **counts_out, int *ngpus_out,
		       enum tp_links_kind *kind_out,
		       struct tp_links_bdf **bdfs_out, tp_error *err);
/* Where the GPU fabric of the live node came from (node_vendor.c). */
struct tp_vendor_opts {
	const char *nvml;      /* library to dlopen; NULL: "libnvidia-ml.so.1" */
	const char *amdsmi;    /* NULL: "libamd_smi.so" (then
				  /opt/rocm/lib/libamd_smi.so) */
	const char *rocm_smi;  /* NULL: "librocm_smi64.so.1" (then
				  /opt/rocm/lib/librocm_smi64.so.1) */
	bool no_tools;         /* do not run nvidia-smi / amd-smi / rocm-smi */
	const char *tool_dir;  /* ':'-separated folders the tools are looked
				  for in, never $PATH (slurmstepd's is the
				  user's); NULL: TP_VENDOR_TOOL_DIRS */
	int tool_timeout_ms;   /* a tool's limit; 0: TP_VENDOR_TOOL_TIMEOUT_MS */
};
#define TP_VENDOR_TOOL_DIRS "/usr/bin:/usr/local/bin:/opt/rocm/bin"
#define TP_VENDOR_TOOL_TIMEOUT_MS 10000
#define TP_VENDOR_TOOL_MAX_BYTES ((size_t)1 << 20)   /* a tool's output */
/* Add NVLink or xGMI link counts of this machine to n (a model of the live
 * node): NVML for NVIDIA GPUs, AMD SMI then ROCm SMI for AMD GPUs, each
 * opened with dlopen only when the model has such GPUs; failing those,
 * the vendor tool's text (nvidia-smi topo -m; amd-smi topology, then
 * rocm-smi --showtopo --shownodesbw) run with a timeout.  source gets
 * "NVML", "AMD SMI", "ROCm SMI", "nvidia-smi", "amd-smi", "rocm-smi"; or
 * which one answered and why nothing was set ("NVML: GPU 0000:3b:00.0 is
 * not in the model", "nvidia-smi: timed out", "nvidia-smi: not read:
 * ..."), the model left as it was; "NVML not ready" (or "NVML not ready,
 * nvidia-smi: failed") when a library is installed but does not start;
 * or "" when nothing is installed (not an error: a PCIe-only node).
 * *complete (may be NULL) is false when a part may answer later and the
 * result must not be kept for the boot: a library that did not start, a
 * library's answer that failed, a tool that failed, timed out or was not
 * read.  o may be NULL (the defaults).  Returns 0, or a negative TP_E*
 * with err set for a real failure (memory). */
int tp_node_add_vendor_links(tp_node *n, const struct tp_vendor_opts *o,
			     char *source, size_t len, bool *complete,
			     tp_error *err);
/* Direct xGMI links between two GPUs (0 on an NVLink node). */
int tp_node_xgmi_links(const tp_node *n, int a, int b);
enum tp_gpu_path tp_node_gpu_path(const tp_node *n, int a, int b);
/* Bandwidth of the path from a to b in GB/s: the pair's NVLinks (their
 * count x the rate of their generation, or what hwloc reported), else the
 * smallest link bandwidth on the route (xGMI, PCIe, a partition's link to
 * its device; 0 for a == b). */
double tp_node_gpu_bandwidth(const tp_node *n, int a, int b);
int tp_node_link_count(const tp_node *n);
/* Links of the route from GPU a to GPU b, written to links (capacity cap).
 * Returns how many, or TP_EINVAL when cap is too small. */
int tp_node_gpu_route(const tp_node *n, int a, int b, int *links, int cap);
int tp_node_nic_package(const tp_node *n, int nic);
/* GPUs by rail (gpusel.c), for a rail-optimised network (Rails=rails):
 * local rank k (ntasks of them, one GPU each) takes an allowed GPU whose
 * nearest card serves rail k mod rails.  The rails are the distinct
 * nearest cards of all the node's GPUs, in card (PCI bus) order, so that
 * one model numbers them alike on every node.  A task whose rail has no
 * free allowed GPU takes the lowest free one.  Returns how many tasks are
 * off their rail (>= 0); TP_ENOENT when the cards do not give the rails
 * (none, or not `rails` distinct cards nearest to the GPUs), TP_EINVAL
 * for too few allowed GPUs, each with why in err. */
int tp__gpus_by_rail(const tp_node *n, const int *allowed, int nallowed,
		     int rails, int32_t ntasks, int *gpus, tp_error *err);
/* Links of the route from GPU gpu to that card (capacity cap); the count,
 * 0 without a card, or TP_EINVAL. */
int tp_node_gpu_nic_route(const tp_node *n, int gpu, int *links, int cap);
/* The CPU list ("0-3,16-19") of cores first..first+count-1. */
int tp_node_cpuset_string(const tp_node *n, int first_core, int count,
			  char *buf, size_t len);
/* The CPU list (operating-system indices of the hardware threads) of the
 * given logical cores. */
int tp_node_cpuset_string_cores(const tp_node *n, const int *cores, int count,
				char *buf, size_t len);

/* tp_node_detect with the vendor options (NULL: the defaults), for tests
 * that stand in for the vendor's library and tools. */
int tp__node_detect_opts(const char *cache_dir, unsigned flags,
			 const struct tp_vendor_opts *vo, tp_node **out,
			 tp_error *err);
/* The cache file of this node's model in dir (node_detect.c). */
int tp__node_cache_path(const char *dir, char *out, size_t len);

/* ---- core/node: one node's inside (node.c and node_*.c, gpusel*.c) ---- */

enum tp_vkind { TP_V_PACKAGE, TP_V_HOSTBRIDGE, TP_V_BRIDGE, TP_V_GPU,
		TP_V_NVSWITCH, TP_V_NIC, TP_V_PORT,
		TP_V_GPUDEV };   /* a partitioned GPU's device: its partitions
				    (TP_V_GPU) hang below it */

struct tp_node_vertex {
	int kind;
	int parent;         /* vertex index, -1 for sockets and the NVSwitch */
	int uplink;         /* link to the parent, -1 when none */
	int depth;          /* 0 for sockets */
	int fanout;         /* PCI children (bridges: > 1 means a switch) */
	char name[40];      /* "GPU0", "switch 0000:01:00.0", "socket1" */
};

struct tp_node_link {
	int a, b;           /* vertices */
	double bw;          /* GB/s */
	char name[96];
};

struct tp_node_gpu {
	char busid[16];
	unsigned domain, bus, dev, func;
	unsigned vendor, device;   /* PCI ids */
	int package, numa;  /* logical indices, -1 unknown */
	int vertex;
	/* Partitions (node_build.c): the GPUs of one PCI device share its
	 * number (pdev, the device's place in bus order), its links and its
	 * bandwidth.  nparts 1 and osdev "" for a device that is one GPU. */
	int pdev;
	int part, nparts;   /* which partition of the device, how many */
	char osdev[16];     /* its OS device ("rsmi3", "nvml1") when nparts > 1 */
	int fvert;          /* where its fabric links end: the device's vertex
			       for a partition, else its own */
};

struct tp_node_nic {
	char busid[16];
	int package, numa;  /* logical indices, -1 unknown */
	int vertex;
	int port_link;      /* the card's link to the network */
};

struct tp_node {
	char *source;
	char *xml;                     /* the hwloc XML it was built from */
	size_t xml_len;
	int npackages, nnuma, ncores, npus;
	int *core_pkg;                 /* ncores */
	int *core_pu_off, *core_pus;   /* PU os indices of each core (CSR) */
	int ngpus;
	struct tp_node_gpu *gpu;
	int nvert, vcap;
	struct tp_node_vertex *vert;
	int nlinks, lcap, nlinks_pci;  /* links [0, nlinks_pci) are PCIe/socket */
	struct tp_node_link *link;
	int *pkg_link;                 /* npackages^2: inter-socket link or -1 */
	int *nvl;                      /* ngpus^2 fabric links: NVLink lanes
					  or xGMI links (fabric says which) */
	double *fbw;                   /* ngpus^2: GB/s of those links, each
					  way (0: none) */
	double link_rate;              /* GB/s of a link counted without its
					  speed (0: by its kind) */
	int fabric;                    /* enum tp_gpu_fabric */
	int nvswitch;                  /* NVLinks read as an NVSwitch fabric */
	int nvswitch_seen;             /* a vendor library saw the switches:
					  switched whatever the counts say */
	int *nvl_link;                 /* ngpus^2: direct fabric link id or -1 */
	int *nvs_link;                 /* ngpus: GPU-NVSwitch link id or -1 */
	int *path;                     /* ngpus^2 enum tp_gpu_path */
	double *pbw;                   /* ngpus^2 path bandwidth */
	int *route_off, *route;        /* ngpus^2 + 1 offsets; links */
	int nnics;
	struct tp_node_nic *nic;       /* network cards, PCI bus order */
	int *gpu_nic;                  /* ngpus: nearest NIC, -1 without */
	int *nic_route_off, *nic_route;   /* ngpus + 1 offsets; links from
					     the GPU to its NIC */
};

/* hwloc XML is checked and rewritten before hwloc loads it (node_xml.c):
 * *canon (malloc'ed) is a canonical hwloc 2.0 document holding only the
 * checked objects and attributes topoplace reads. */
#define TP__XML_MAX_DEPTH 64          /* nested elements */
#define TP__XML_MAX_OBJECTS 65536     /* <object> elements */
#define TP__XML_MAX_SET_WORDS 256     /* 32-bit words of a cpuset/nodeset */
/* Of an OS device's <info> elements only ROCm SMI's XGMIPeers ("rsmi1
 * rsmi5 ") is kept: peers rsmi0..rsmi63. */
#define TP__XML_MAX_RSMI 64
int tp__node_xml_check(const char *xml, size_t len, const char *what,
		       char **canon, size_t *canon_len, tp_error *err);

/* The GPU-fabric matrices of an hwloc XML (<distances2> and
 * <distances2hetero> named NVLinkBandwidth, XGMIBandwidth or XGMIHops):
 * node_xml_dist.c checks them and resolves their objects to PCI devices
 * while it still knows the objects; node_dist.c turns them into link counts
 * once the model is built (hwloc never sees them). */
#define TP__XML_MAX_DIST_OBJS 256     /* nbobjs of a kept matrix */
#define TP__XML_MAX_DIST_VALUE INT64_C(999999999999999999)   /* 18 digits */
enum tp__dist_kind { TP__DIST_NVLINK_BW, TP__DIST_XGMI_BW, TP__DIST_XGMI_HOPS,
		     TP__DIST_N };
enum tp__dist_role {
	TP__END_OTHER = 0,      /* a CPU package, a NIC, ...: not used */
	TP__END_DEVICE,         /* a PCI device (a GPU, if the model says so) */
	TP__END_NVSWITCH,
};
struct tp__dist_end {
	int role;
	unsigned dom, bus, dev, fn;   /* TP__END_DEVICE: its PCI address */
	char osdev[16];         /* the partition's OS device ("rsmi3") when
				   the device has several (node_build.c's rule:
				   tp__osdev_backend); "" otherwise */
};
/* The backend of a GPU's OS device that counts partitions: "rsmi" or
 * "nvml" followed by a number (NVML and ROCm SMI list one such device per
 * partition, one per GPU otherwise); 0 for any other name.  Returns the
 * prefix length (4). */
int tp__osdev_backend(const char *name);
struct tp__dist_matrix {
	int n;                  /* objects; 0: the XML has no such matrix */
	int line;               /* of its element, for messages */
	struct tp__dist_end *end;     /* n */
	uint64_t *val;          /* n x n, row-major as hwloc writes them */
};
struct tp__xml_dist {
	struct tp__dist_matrix m[TP__DIST_N];
};
void tp__xml_dist_free(struct tp__xml_dist *d);
/* tp__node_xml_check that also hands back the matrices (dist zeroed by the
 * caller, freed with tp__xml_dist_free even on error). */
int tp__node_xml_check_dist(const char *xml, size_t len, const char *what,
			    char **canon, size_t *canon_len,
			    struct tp__xml_dist *dist, tp_error *err);
/* GPUs a < b are the two GCDs of one MI250 / MI250X (node_build.c): 4 xGMI
 * links where nothing better says how many. */
bool tp__node_mi250_pair(const tp_node *n, int a, int b);
/* Set the node's NVLink or xGMI counts from the matrices (node_dist.c);
 * what names the XML in messages. */
int tp__node_xml_fabric(tp_node *n, const struct tp__xml_dist *d,
			const char *what, tp_error *err);

/* Recompute NVLink links, path classes, bandwidths and routes after the
 * lane counts (nvl) changed. */
int tp__node_finish(tp_node *n, tp_error *err);


#endif
