/* topoplace — placement inside the node: which GPUs and which cores each
 * task of a node gets (MAGC's phases 2 and 3), on the node model of
 * topoplace/node.h.
 *
 * Phase 2 places tasks on sockets by the maximum inter-socket message size
 * (MIMS), then on cores; phase 3 chooses GPUs by the max-congestion greedy
 * over the node's PCIe and NVLink links; a final pass moves each task's
 * cores next to its GPUs.
 */
#ifndef TOPOPLACE_NODEPLACE_H
#define TOPOPLACE_NODEPLACE_H

#include <stdint.h>
#include <topoplace/alloc.h>
#include <topoplace/error.h>
#include <topoplace/export.h>
#include <topoplace/node.h>
#include <topoplace/pattern.h>

#ifdef __cplusplus
extern "C" {
#endif

enum tp_gpusel_algo {
	TP_GPUSEL_MAGC = 0,     /* MAGC max-congestion greedy (default) */
	TP_GPUSEL_LOCAL_RANK,   /* local rank i takes the i-th allowed GPU(s) */
	TP_GPUSEL_CLOSEST,      /* --gpu-bind=closest: first free GPU on the
				   task's socket, else the first free one */
	TP_GPUSEL_BISECT,       /* recursive bisection over the node's PCIe
				   tree: sockets, host bridges, switches;
				   each split keeps the most bytes inside (a
				   candidate of magc too) */
	TP_GPUSEL_RAIL,         /* on a rail-optimised network (Rails=):
				   local rank k the GPU nearest the card of
				   rail k; chosen by the job, not by name */
};

TP_EXPORT int tp_gpusel_algo_parse(const char *s, enum tp_gpusel_algo *out,
			 tp_error *err);
TP_EXPORT const char *tp_gpusel_algo_name(enum tp_gpusel_algo a);

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

/* The tasks of one node and their traffic, as every function below takes
 * them: tasks[0..ntasks-1] are global task ids (rows of g, which may be
 * NULL for no traffic) in local-rank order (tasks NULL: 0..ntasks-1).
 * g is the GPU matrix for the GPU functions, the CPU graph for the CPU
 * ones.  The structs of this header are passed by pointer and are part
 * of the ABI like a function's parameters: their layout changes only with
 * the library's soname. */
typedef struct tp_node_tasks {
	const tp_node *node;
	const tp_graph *g;
	const int32_t *tasks;
	int32_t ntasks;
} tp_node_tasks;

/* What tp_gpusel chooses for: the node's tasks (on.g: the GPU matrix);
 * task_package[i] the socket task i's CPUs are on (NULL, or -1 entries,
 * when unknown); allowed[0..nallowed-1] the GPU indices the step may use
 * (NULL: all of the node's GPUs); gpus_per_task GPUs for each task, chosen
 * by algo.  Zero-initialise it, then set what applies. */
typedef struct tp_gpusel_request {
	tp_node_tasks on;
	const int *task_package;
	const int *allowed;
	int nallowed;
	int gpus_per_task;
	enum tp_gpusel_algo algo;
} tp_gpusel_request;

/* Writes on.ntasks x gpus_per_task GPU indices, task-major, to gpus.  MAGC
 * runs the greedy once plus once from every allowed first GPU (up to 32
 * GPUs), then also evaluates the two baselines and the recursive bisection
 * over the PCIe tree (TP_GPUSEL_BISECT) and keeps the best (max
 * congestion, then weighted cost, then GPUs away from their task's socket,
 * then the weighted cost to the network cards), then improves it by single
 * moves (two tasks trade their GPUs, or a one-GPU task moves to a free
 * allowed GPU) judged by that same cost, so it is never worse than
 * local-rank order, closest or the bisection.  Traffic to tasks not in
 * on.tasks[] (on other nodes) runs from a task's GPU to that GPU's network
 * card and loads those links (ignored on nodes without a card).
 * Deterministic.  cost may be NULL. */
TP_EXPORT int tp_gpusel(const tp_gpusel_request *rq, int *gpus,
			tp_gpusel_cost *cost, tp_error *err);

/* Cost of a given assignment (gpus as tp_gpusel writes them; the tasks'
 * sockets unknown). */
TP_EXPORT int tp_gpusel_eval(const tp_node_tasks *on, int gpus_per_task,
			     const int *gpus, tp_gpusel_cost *cost,
			     tp_error *err);

/* Where phase 2 puts a node's tasks: task_package[ntasks] the socket of
 * each task and task_core[ntasks] its first core (both written, or read
 * and rewritten by tp_node_align_cpus); mims the result's maximum
 * inter-socket message in bytes (written on success). */
typedef struct tp_cpu_slots {
	int *task_package;
	int *task_core;
	double mims;
} tp_cpu_slots;

/* Phase 2: tasks to sockets minimising the maximum inter-socket message
 * size (MIMS; Wu et al.: balanced split then pair swaps, each candidate
 * judged by the true MIMS after the swap, strict decrease only), then each
 * task to cores_per_task cores of its socket (cores in logical order).
 * on->g is the CPU graph (may be NULL: block order).  Writes slots'
 * task_package, task_core (first core of each task) and mims. */
TP_EXPORT int tp_node_place_cpus(const tp_node_tasks *on, int cores_per_task,
				 tp_cpu_slots *slots, tp_error *err);

/* The same on some of the node's cores only (the cores a Slurm step was
 * given): cores[0..ncores-1] are logical core indices (any order, repeats
 * ignored; NULL: all).  The allowed cores, sorted, form a list; task i gets
 * the cores_per_task cores at positions task_core[i].. of that list (always
 * on one socket when the task fits in one).  tp_node_place_cpus is this
 * with cores NULL, where positions and core indices agree. */
TP_EXPORT int tp_node_place_cpus_within(const tp_node_tasks *on,
					const int *cores, int ncores,
					int cores_per_task, tp_cpu_slots *slots,
					tp_error *err);

/* After GPU selection: exchange all tasks of two sockets that hold as many
 * tasks each when more of them then sit on their GPU's socket (MIMS does not
 * change: the sockets only trade names), then swap the CPU slots (socket and
 * cores) of two tasks whose GPUs sit on each other's socket, as long as MIMS
 * does not grow, so that a task's CPUs end up next to its GPUs (MAGC's phase
 * 3 ignores the cores of phase 2).  gpus as written by tp_gpusel; the first
 * GPU of a task decides its socket.  slots as tp_node_place_cpus wrote
 * them, rewritten in place (mims too). */
TP_EXPORT int tp_node_align_cpus(const tp_node_tasks *on, const int *gpus,
				 int gpus_per_task, tp_cpu_slots *slots,
				 tp_error *err);

/* A whole mapping's tasks on their nodes' models, for the GPU congestion
 * of phase 1's candidates: ntasks tasks on allocation alloc; models[i] the
 * model of allocation node i (NULL when it has none); cpu the CPU + GPU
 * traffic (as phase 1 saw it), which places the sockets; gm the GPU
 * matrix; gpus_per_task 0 gives each task an equal share of its node's
 * GPUs. */
typedef struct tp_nodes_gpu_rank_arg {
	const tp_alloc *alloc;
	const tp_node *const *models;
	const tp_graph *cpu, *gm;
	int32_t ntasks;
	int gpus_per_task;
} tp_nodes_gpu_rank_arg;

/* MAGC phases 2 and 3 on every node of mapping map (map[t]: the allocation
 * node of task t): the largest tp_gpusel max_congestion_ms over the nodes,
 * GPU traffic to other nodes included up to the network cards' ports.
 * Nodes without a model, or with fewer GPUs than their tasks need, are
 * left out.  Used to rank phase 1's candidates (tp_place_opts rank). */
TP_EXPORT int tp_nodes_gpu_congestion(const tp_nodes_gpu_rank_arg *on,
				      const int32_t *map, double *max_ms,
				      tp_error *err);

/* The same as a tp_place_opts rank function: rank = tp_nodes_gpu_rank,
 * rank_arg = a tp_nodes_gpu_rank_arg; HUGE_VAL when it fails. */
TP_EXPORT double tp_nodes_gpu_rank(const int32_t *map, void *arg);

#ifdef __cplusplus
}
#endif
#endif
