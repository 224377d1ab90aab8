/* topoplace — what placement inside one node shares, private to node/
 * (node_tasks.c: a node's tasks as a dense traffic matrix and split into
 * parts of exact sizes; node_cpus.c: phase 2, sockets and cores; gpusel.c,
 * gpusel_cost.c, gpusel_search.c: phase 3, the GPUs). */
#ifndef TOPOPLACE_NODE_PLACE_H
#define TOPOPLACE_NODE_PLACE_H

#include <stdbool.h>
#include <stdint.h>

#include <topoplace/nodeplace.h>
#include "node/node_internal.h"

/* The tasks being split: T[0..n), rows of the dense local matrix c
 * (nt x nt). */
struct subset {
	const double *c;
	int32_t nt;
	const int32_t *T;
	int n;
};

/* node_tasks.c: a below b by more than rounding; the dense local traffic
 * matrix of tasks (nt x nt into *out, malloc'ed; each task's traffic to
 * tasks not listed on the diagonal); the subset split into k parts of
 * exactly cnt[p] tasks (exact: then the bounded exact search). */
bool tp__node_lt(double a, double b);
int tp__node_local_matrix(const tp_graph *g, const int32_t *tasks, int32_t nt,
			  double **out, tp_error *err);
int tp__node_split_small(const struct subset *s, int k, const int *cnt,
			 bool exact, int *part);

/* One node's GPU selection problem: the node, the dense local matrix c
 * (nt x nt, each task's traffic to other nodes on the diagonal), gpt GPUs
 * per task, the tasks' sockets pkg (NULL when unknown) and the allowed
 * GPUs al[0..na), sorted. */
struct gsel {
	const tp_node *n;
	const double *c;
	int32_t nt;
	int gpt;
	const int *pkg;
	const int *al;
	int na;
};

/* Scratch of the greedy and the refinement. */
struct gsel_work {
	bool *used;          /* n->ngpus: GPUs taken */
	bool *mapped;        /* nt: tasks placed */
	double *load, *tmp;  /* n->nlinks: link loads */
	double *vol;         /* nt: each task's traffic */
};

/* magc's first move left to the greedy. */
#define FREE_START (-1)

/* gpusel_cost.c: the cost of an assignment (task-major; load: nlinks
 * scratch) and the order of two costs; a task's traffic on a tentative
 * GPU added to load (its weighted cost returned, that to the card in
 * *remote_w); the largest load / bandwidth of the links (arg: which). */
void tp__gpusel_evaluate(const struct gsel *sel, const int *gpus, double *load,
			 tp_gpusel_cost *cost);
bool tp__gpusel_cost_lt(const tp_gpusel_cost *a, const tp_gpusel_cost *b);
double tp__gpusel_add_gpu_traffic(const struct gsel *sel, const int *gpus,
				  const bool *mapped, int32_t p, int a,
				  double *load, double *remote_w);
double tp__gpusel_max_cong(const tp_node *n, const double *load, int *arg);

/* gpusel_search.c: the candidates, each into gpus (task-major): local-rank
 * order, the closest GPUs, one run of the MAGC greedy (first: a GPU, or
 * FREE_START), the bisection over the PCIe tree (TP_EINVAL: the GPUs too
 * fragmented for it), and the refinement of g in place. */
void tp__gpusel_local_rank(const struct gsel *sel, int *gpus);
void tp__gpusel_closest(const struct gsel *sel, bool *used, int *gpus);
void tp__gpusel_magc(const struct gsel *sel, struct gsel_work *wk, int first,
		     int *gpus);
int tp__gpusel_bisect_gpus(const struct gsel *sel, bool exact, int *gpus);
void tp__gpusel_refine_gpus(const struct gsel *sel, struct gsel_work *wk,
			    int *g);

#endif
