/* topoplace — inside one node: sockets, cores and GPUs, the PCIe tree and
 * NVLink, and the choice of GPUs and CPUs for the tasks placed on the node.
 *
 * The model comes from hwloc (the live machine, or an hwloc XML export such
 * as `lstopo --of xml`), plus NVLink lane counts from a gres.conf-style file
 * (`Name=gpu ... Links=-1,4,0,0` per GPU) or saved `nvidia-smi topo -m`
 * output.  GPUs are the NVIDIA display/3D controllers (PCI class 0x0300 or
 * 0x0302, vendor 0x10de), numbered in PCI bus order as Slurm numbers them.
 *
 * Path classes between two GPUs follow `nvidia-smi topo -m` and NCCL:
 *   NVL   joined by NVLink (directly or through an NVSwitch)
 *   PIX   at most one PCIe switch between them
 *   PXB   several PCIe switches, no host bridge
 *   PHB   through one PCIe host bridge
 *   NODE  through several host bridges of one NUMA node (one socket)
 *   SYS   through the inter-socket link (QPI/UPI/xGMI)
 *
 * Link graph (for congestion, after MAGC): one link from every GPU and PCI
 * bridge to its parent (bandwidth: the PCIe link speed hwloc reports, else
 * 12 GB/s), one from every host bridge to its socket (the sum of its ports),
 * one between every two sockets (10 GB/s), and the NVLinks: a direct link of
 * lanes x 20 GB/s between two GPUs, or, when every GPU pair has the same lane
 * count and that count cannot be point-to-point (count x (GPUs-1) > 18), one
 * link of count x 20 GB/s from each GPU to an NVSwitch.  A GPU pair with
 * NVLink routes over it; any other pair over PCIe up to the lowest common
 * ancestor (and across the socket link when the sockets differ).  Links are
 * undirected: both directions of a pair's traffic load the same links.
 * Network cards (see below) hang in the PCIe tree like GPUs, each with one
 * more link: its port to the network.
 */
#ifndef TOPOPLACE_NODE_H
#define TOPOPLACE_NODE_H

#include <stdint.h>
#include <stdio.h>
#include <topoplace/error.h>
#include <topoplace/machine.h>
#include <topoplace/pattern.h>

#ifdef __cplusplus
extern "C" {
#endif

#define TP_NODE_MAX_GPUS 64      /* GPUs per node */
#define TP_NODE_MAX_NICS 64      /* network cards per node */
#define TP_NODE_MAX_NVLINKS 64   /* NVLink lanes between two GPUs */

/* Bandwidth constants in GB/s (NCCL's values for Ampere and Skylake). */
#define TP_NVLINK_BW 20.0        /* per NVLink lane */
#define TP_PCI_BW 12.0           /* PCIe link whose speed hwloc does not know */
#define TP_SMP_BW 10.0           /* inter-socket link */

enum tp_gpu_path {
	TP_PATH_LOC = 0,   /* the same GPU */
	TP_PATH_NVL,
	TP_PATH_PIX,
	TP_PATH_PXB,
	TP_PATH_PHB,
	TP_PATH_NODE,
	TP_PATH_SYS,
};

/* "X", "NV4", "PIX", ... as nvidia-smi topo -m prints them (NVL with the
 * lane count); buf gets at least 8 bytes. */
const char *tp_gpu_path_name(enum tp_gpu_path p, int lanes, char *buf,
			     size_t len);

typedef struct tp_node tp_node;

/* Load an hwloc XML file (version 1 or 2).  Errors name the file. */
int tp_node_load_xml(const char *path, tp_node **out, tp_error *err);
/* Same from a buffer; what names it in messages. */
int tp_node_load_xml_buffer(const char *xml, size_t len, const char *what,
			    tp_node **out, tp_error *err);
/* The machine this runs on. */
int tp_node_load_live(tp_node **out, tp_error *err);
void tp_node_destroy(tp_node *n);

/* Where the model came from ("dgx.xml", "this machine"). */
const char *tp_node_source(const tp_node *n);

int tp_node_npackages(const tp_node *n);
int tp_node_nnuma(const tp_node *n);
int tp_node_ncores(const tp_node *n);
int tp_node_npus(const tp_node *n);
/* Socket of core c (logical order, 0-based). */
int tp_node_core_package(const tp_node *n, int core);
/* Operating-system indices of the hardware threads of core c: writes up to
 * cap entries to pus and returns how many the core has. */
int tp_node_core_pus(const tp_node *n, int core, int *pus, int cap);

int tp_node_ngpus(const tp_node *n);
/* "0000:07:00.0" */
const char *tp_node_gpu_busid(const tp_node *n, int gpu);
/* Socket and NUMA node (logical indices) the GPU is attached to, -1 when
 * hwloc does not say. */
int tp_node_gpu_package(const tp_node *n, int gpu);
int tp_node_gpu_numa(const tp_node *n, int gpu);

/* ---- NVLink ---- */

/* Set NVLink lane counts: counts is ngpus x ngpus, row-major, symmetric,
 * -1 or 0 on the diagonal, 0..TP_NODE_MAX_NVLINKS elsewhere. */
int tp_node_set_nvlinks(tp_node *n, const int *counts, int ngpus,
			const char *what, tp_error *err);
/* Read lane counts from a file: gres.conf lines "Name=gpu ... Links=..."
 * (one per GPU; the -1 marks the GPU's own index) or the text of
 * `nvidia-smi topo -m` (NV# entries).  The format is recognised from the
 * content.  Errors name the file and line. */
int tp_node_load_links(tp_node *n, const char *path, tp_error *err);
int tp_node_load_links_buffer(tp_node *n, const char *text, size_t len,
			      const char *what, tp_error *err);
/* Parse lane counts without a node (for checking a file): *counts_out is
 * malloc'ed ngpus x ngpus. */
int tp_links_parse(const char *text, size_t len, const char *what,
		   int **counts_out, int *ngpus_out, tp_error *err);

int tp_node_nvlinks(const tp_node *n, int a, int b);
/* True when the NVLinks were read as an NVSwitch fabric. */
int tp_node_has_nvswitch(const tp_node *n);

/* ---- Paths and links ---- */

enum tp_gpu_path tp_node_gpu_path(const tp_node *n, int a, int b);
/* Bandwidth of the path from a to b in GB/s: lanes x TP_NVLINK_BW over
 * NVLink, else the smallest link bandwidth on the PCIe route (0 for a == b). */
double tp_node_gpu_bandwidth(const tp_node *n, int a, int b);

int tp_node_link_count(const tp_node *n);
double tp_node_link_bandwidth(const tp_node *n, int link);
/* "GPU3-bridge 0000:02:01.0", "socket0-socket1", "GPU0-NV-GPU1", ... */
const char *tp_node_link_name(const tp_node *n, int link);
/* Links of the route from GPU a to GPU b, written to links (capacity cap).
 * Returns how many, or TP_EINVAL when cap is too small. */
int tp_node_gpu_route(const tp_node *n, int a, int b, int *links, int cap);

/* ---- Network cards ----
 * The cards that carry the job's traffic to other nodes: InfiniBand and
 * other fabric controllers (PCI class 0x0207, 0x0208) and network
 * controllers with an RDMA (OpenFabrics) device, as hwloc lists them; plain
 * Ethernet ports are left out.  Numbered in PCI bus order.  A task's GPU
 * traffic to tasks on other nodes leaves through the card nearest its GPU
 * (NCCL's GPU-NIC affinity): tp_gpusel loads that route too. */
int tp_node_nnics(const tp_node *n);
const char *tp_node_nic_busid(const tp_node *n, int nic);
int tp_node_nic_package(const tp_node *n, int nic);
/* The card nearest GPU gpu (closest path class, then fewest links, then the
 * lower index); -1 when the node has none. */
int tp_node_gpu_nic(const tp_node *n, int gpu);
/* Links of the route from GPU gpu to that card (capacity cap); the count,
 * 0 without a card, or TP_EINVAL. */
int tp_node_gpu_nic_route(const tp_node *n, int gpu, int *links, int cap);

/* A picture of the node: sockets, PCIe tree, GPU path matrix. */
void tp_node_describe(const tp_node *n, FILE *f);

/* ---- Choosing GPUs and CPUs for the tasks of one node ---- */

enum tp_gpusel_algo {
	TP_GPUSEL_MAGC = 0,     /* MAGC max-congestion greedy (default) */
	TP_GPUSEL_LOCAL_RANK,   /* local rank i takes the i-th allowed GPU(s) */
	TP_GPUSEL_CLOSEST,      /* --gpu-bind=closest: first free GPU on the
				   task's socket, else the first free one */
};

int tp_gpusel_algo_parse(const char *s, enum tp_gpusel_algo *out,
			 tp_error *err);
const char *tp_gpusel_algo_name(enum tp_gpusel_algo a);

typedef struct tp_gpusel_cost {
	/* Largest load / bandwidth over the node's links, in milliseconds
	 * (bytes / (GB/s) / 1e6). */
	double max_congestion_ms;
	/* Sum over task pairs of bytes / path bandwidth, in milliseconds. */
	double weighted_ms;
	/* The same for each task's traffic to tasks on other nodes, on the
	 * way from its GPU to the GPU's network card (0 without cards). */
	double nic_weighted_ms;
	/* GPUs not on their task's socket (0 when the sockets are unknown) */
	int socket_misses;
	double total_bytes;     /* GPU traffic between tasks of the node */
	int max_link;           /* link carrying the maximum, -1 when none */
	enum tp_gpusel_algo used;  /* which candidate tp_gpusel kept */
} tp_gpusel_cost;

/* Tasks of one node: tasks[0..ntasks-1] are global task ids (rows of gm,
 * which may be NULL for no GPU traffic) in local-rank order (tasks NULL:
 * 0..ntasks-1);
 * task_package[i] the socket task i's CPUs are on (NULL, or -1 entries, when
 * unknown).  allowed[0..nallowed-1] are the GPU indices the step may use
 * (NULL: all of the node's GPUs).  Writes ntasks x gpus_per_task GPU indices,
 * task-major, to gpus.  MAGC runs the greedy once plus once from every
 * allowed first GPU (up to 32 GPUs), then also evaluates the two baselines and
 * keeps the best (max congestion, then weighted cost, then GPUs away from
 * their task's socket, then the weighted cost to the network cards), so it is never worse than local-rank order or
 * closest.  Traffic to tasks not in tasks[] (on other nodes) runs from a
 * task's GPU to that GPU's network card and loads those links (ignored on
 * nodes without a card).  Deterministic.  cost may be NULL. */
int tp_gpusel(const tp_node *n, const tp_graph *gm, const int32_t *tasks,
	      int32_t ntasks, const int *task_package, const int *allowed,
	      int nallowed, int gpus_per_task, enum tp_gpusel_algo algo,
	      int *gpus, tp_gpusel_cost *cost, tp_error *err);

/* Cost of a given assignment (same arguments). */
int tp_gpusel_eval(const tp_node *n, const tp_graph *gm, const int32_t *tasks,
		   int32_t ntasks, int gpus_per_task, const int *gpus,
		   tp_gpusel_cost *cost, tp_error *err);

/* Phase 2: tasks to sockets minimising the maximum inter-socket message
 * size (MIMS; Wu et al.: balanced split then pair swaps, each candidate
 * judged by the true MIMS after the swap, strict decrease only), then each
 * task to cores_per_task cores of its socket (cores in logical order).
 * g is the CPU graph (may be NULL: block order), tasks as for tp_gpusel.
 * Writes task_package[ntasks] and task_core[ntasks] (first core of each
 * task); *mims receives the result's MIMS in bytes (may be NULL). */
int tp_node_place_cpus(const tp_node *n, const tp_graph *g,
		       const int32_t *tasks, int32_t ntasks, int cores_per_task,
		       int *task_package, int *task_core, double *mims,
		       tp_error *err);

/* The same on some of the node's cores only (the cores a Slurm step was
 * given): cores[0..ncores-1] are logical core indices (any order, repeats
 * ignored; NULL: all).  The allowed cores, sorted, form a list; task i gets
 * the cores_per_task cores at positions task_core[i].. of that list (always
 * on one socket when the task fits in one).  tp_node_place_cpus is this
 * with cores NULL, where positions and core indices agree. */
int tp_node_place_cpus_within(const tp_node *n, const tp_graph *g,
			      const int32_t *tasks, int32_t ntasks,
			      const int *cores, int ncores, int cores_per_task,
			      int *task_package, int *task_core, double *mims,
			      tp_error *err);

/* After GPU selection: exchange all tasks of two sockets that hold as many
 * tasks each when more of them then sit on their GPU's socket (MIMS does not
 * change: the sockets only trade names), then swap the CPU slots (socket and
 * cores) of two tasks whose GPUs sit on each other's socket, as long as MIMS
 * does not grow, so that a task's CPUs end up next to its GPUs (MAGC's phase
 * 3 ignores the cores of phase 2).  gpus as written by tp_gpusel; the first GPU of a task
 * decides its socket. */
int tp_node_align_cpus(const tp_node *n, const tp_graph *g,
		       const int32_t *tasks, int32_t ntasks, const int *gpus,
		       int gpus_per_task, int *task_package, int *task_core,
		       double *mims, tp_error *err);

/* MAGC phases 2 and 3 on every node of a whole mapping (map[t]: the
 * allocation node of task t; models[i]: the model of allocation node i, NULL
 * when it has none): the largest tp_gpusel max_congestion_ms over the nodes,
 * GPU traffic to other nodes included up to the network cards' ports.  cpu
 * places the sockets (the CPU + GPU traffic, as phase 1 saw it); gm is the
 * GPU matrix.  Nodes without a model, or with fewer GPUs than their tasks
 * need, are left out.  Used to rank phase 1's candidates (tp_place_opts
 * rank). */
int tp_nodes_gpu_congestion(const tp_alloc *a, const int32_t *map,
			    int32_t ntasks, const tp_node *const *models,
			    const tp_graph *cpu, const tp_graph *gm,
			    int gpus_per_task, double *max_ms, tp_error *err);

/* The same as a tp_place_opts rank function: rank = tp_nodes_gpu_rank,
 * rank_arg = a tp_nodes_gpu_rank_arg; HUGE_VAL when it fails. */
typedef struct tp_nodes_gpu_rank_arg {
	const tp_alloc *alloc;
	const tp_node *const *models;
	const tp_graph *cpu, *gm;
	int32_t ntasks;
	int gpus_per_task;
} tp_nodes_gpu_rank_arg;
double tp_nodes_gpu_rank(const int32_t *map, void *arg);

/* The CPU list ("0-3,16-19") of cores first..first+count-1. */
int tp_node_cpuset_string(const tp_node *n, int first_core, int count,
			  char *buf, size_t len);
/* The CPU list (operating-system indices of the hardware threads) of the
 * given logical cores. */
int tp_node_cpuset_string_cores(const tp_node *n, const int *cores, int count,
				char *buf, size_t len);

#ifdef __cplusplus
}
#endif
#endif
