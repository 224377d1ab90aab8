/* bench_gpu — topoplace's three MAGC phases against Slurm's defaults on the
 * micro-benchmark patterns of Mirsadeghi et al. ("MAGC"): 64 tasks, 1 MB
 * messages each way, as GPU peer matrices.
 *
 * Patterns.  Ranks are numbered as MPI_Cart_create numbers them: the FIRST
 * dimension varies slowest (rank = i*8 + j on the 8x8 grid, i*16 + j*4 + k
 * on the 4x4x4 grid).  2D and 3D are the 5- and 7-point stencils; -W makes
 * the messages along the first dimension 3x larger; COL is an all-to-all
 * inside each sub-communicator along the first dimension (ranks k, k+16,
 * k+32, k+48).  The same patterns with the first dimension varying FASTEST
 * (-Wx, COL-x) and COL along the middle dimension (COL-y) are printed too:
 * there rank order already follows the heavy traffic.
 *
 * Machine.  64 / GPUs-per-node nodes of one example kind under one switch
 * (as the paper's clusters).  A GPU's traffic to other nodes goes through
 * its nearest network card of the node model and that card's port
 * (tp_node_gpu_nic_route; the port runs at the card's PCIe speed).
 *
 * Mappings.
 *   lr    Slurm's default: tasks to nodes in block order, CUDA device =
 *         local rank;
 *   cl    block order, sockets cyclic inside the node (-m block:cyclic) and
 *         --gpu-bind=closest;
 *   topo  topoplace: phase 1 (policy auto on the GPU matrix over the
 *         switch, candidates ranked by the GPU-link congestion after
 *         phases 2 and 3), phase 2 (MIMS sockets) and phase 3 (MAGC greedy).
 *
 * Printed per pattern and node kind:
 *   sys-*   maximum link congestion over every link the GPU traffic crosses
 *           (PCIe, NVLink, the socket link and each node's network link),
 *           ms = bytes / (GB/s) / 1e6, as MAGC measures it;
 *   node-*  the same over the links inside the nodes only;
 *   wt-*    bandwidth-weighted cost: sum over task pairs of bytes / path
 *           bandwidth (ms);
 *   ms      topoplace's time for all three phases (best of --reps), and the
 *           slowest single-node GPU selection.
 *
 *   bench_gpu [--nodes DIR] [--reps N]
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <topoplace/nodeplace.h>
#include <topoplace/place.h>
#include "util/util_internal.h"
#include "input/alloc_internal.h"
#include "net/machine_internal.h"
#include "node/node_internal.h"
#include "pattern/pattern_internal.h"

#ifndef TP_SOURCE_DIR
#define TP_SOURCE_DIR "."
#endif

#define MB 1048576.0
#define NTASKS 64

static void die(const char *what, const tp_error *err)
{
	fprintf(stderr, "bench_gpu: %s: %s\n", what, err ? err->msg : "failed");
	exit(1);
}

static tp_graph *stencil(const char *spec)
{
	tp_graph *g = NULL;
	tp_error err;
	if (tp_graph_from_stencil(&g, spec, NTASKS, &err) < 0)
		die(spec, &err);
	return g;
}

/* All-to-all inside the sub-communicators of the 4x4x4 grid whose ranks
 * differ by multiples of stride (and agree elsewhere): stride 16 is the
 * first (slowest) dimension, 4 the middle one, 1 the fastest. */
static tp_graph *col(int stride)
{
	static int32_t u[NTASKS * NTASKS], v[NTASKS * NTASKS];
	static double b[NTASKS * NTASKS];
	int m = 0;
	for (int i = 0; i < NTASKS; i++)
		for (int j = i + 1; j < NTASKS; j++) {
			/* the other two coordinates must agree */
			int ci = i - (i / stride % 4) * stride;
			int cj = j - (j / stride % 4) * stride;
			if (ci != cj)
				continue;
			u[m] = i;
			v[m] = j;
			b[m] = 2 * MB;     /* 1 MB each way */
			m++;
		}
	tp_graph *g = NULL;
	tp_error err;
	if (tp_graph_from_edges(&g, NTASKS, m, u, v, b, "col", &err) < 0)
		die("col", &err);
	return g;
}

struct kind {
	const char *name, *xml, *links;
	tp_node *node;
	tp_machine *m;
	tp_alloc *a;
};


/* A network card's port (the last link of a GPU's way to its card). */
static bool is_port(const tp_node *n, int l)
{
	for (int i = 0; i < n->nnics; i++)
		if (n->nic[i].port_link == l)
			return true;
	return false;
}

struct cost {
	double sys, node, weighted;
};

/* Congestion and weighted cost of a whole mapping: node_of[t] (allocation
 * index), gpu_of[t]. */
static struct cost evaluate(const struct kind *k, const tp_graph *g,
			    const int32_t *node_of, const int *gpu_of)
{
	const tp_node *n = k->node;
	int nn = tp_alloc_nnodes(k->a);
	int L = n->nlinks;      /* the node's links, the cards' ports among them */
	double *load = calloc((size_t)nn * (size_t)L, sizeof(double));
	int route[256];
	struct cost c = { 0, 0, 0 };
	const int64_t *xadj = tp_graph_xadj(g);
	const int32_t *adj = tp_graph_adjncy(g);
	const double *w = tp_graph_weights(g);
	for (int32_t s = 0; s < NTASKS; s++)
		for (int64_t e = xadj[s]; e < xadj[s + 1]; e++) {
			int32_t t = adj[e];
			if (t <= s)
				continue;
			double bytes = w ? w[e] : 1;
			if (node_of[s] == node_of[t]) {
				int r = tp_node_gpu_route(n, gpu_of[s], gpu_of[t], route, 256);
				for (int i = 0; i < r; i++)
					load[(size_t)node_of[s] * L + route[i]] += bytes;
				double bw = tp_node_gpu_bandwidth(n, gpu_of[s], gpu_of[t]);
				if (bw > 0)
					c.weighted += bytes / bw / 1e6;
				continue;
			}
			double bw = 0;
			for (int side = 0; side < 2; side++) {
				int32_t x = side ? t : s;
				int r = tp_node_gpu_nic_route(n, gpu_of[x], route, 256);
				for (int i = 0; i < r; i++) {
					load[(size_t)node_of[x] * L + route[i]] += bytes;
					if (bw == 0 || n->link[route[i]].bw < bw)
						bw = n->link[route[i]].bw;
				}
			}
			if (bw > 0)
				c.weighted += bytes / bw / 1e6;
		}
	for (int i = 0; i < nn; i++)
		for (int l = 0; l < L; l++) {
			double x = load[(size_t)i * L + l] / n->link[l].bw / 1e6;
			if (x > c.sys)
				c.sys = x;
			if (!is_port(n, l) && x > c.node)
				c.node = x;
		}
	free(load);
	return c;
}

/* The node's tasks in rank order. */
static int tasks_on(const int32_t *node_of, int32_t node, int32_t *tasks)
{
	int k = 0;
	for (int32_t t = 0; t < NTASKS; t++)
		if (node_of[t] == node)
			tasks[k++] = t;
	return k;
}

/* GPUs inside every node: Slurm's two defaults, or topoplace's phases 2
 * and 3.  Returns the slowest node's selection time (ms). */
enum how { LOCAL_RANK, CLOSEST, TOPOPLACE };
static double choose_gpus(const struct kind *k, const tp_graph *g,
			  const int32_t *node_of, enum how how, int *gpu_of)
{
	const tp_node *n = k->node;
	int G = tp_node_ngpus(n), S = tp_node_npackages(n);
	double slowest = 0;
	tp_error err;
	for (int32_t i = 0; i < tp_alloc_nnodes(k->a); i++) {
		int32_t tasks[NTASKS];
		int pkg[NTASKS], core[NTASKS], gpus[NTASKS];
		int cnt = tasks_on(node_of, i, tasks);
		if (cnt == 0)
			continue;
		tp_gpusel_cost c;
		double t0 = tp__now_ms();
		int rc;
		if (how == LOCAL_RANK) {
			rc = tp_gpusel(&(tp_gpusel_request){ .on = { n, g,
					tasks, cnt }, .gpus_per_task = 1,
					.algo = TP_GPUSEL_LOCAL_RANK }, gpus,
					&c, &err);
		} else if (how == CLOSEST) {
			for (int t = 0; t < cnt; t++)
				pkg[t] = t % S;
			rc = tp_gpusel(&(tp_gpusel_request){ .on = { n, g,
					tasks, cnt }, .task_package = pkg,
					.gpus_per_task = 1,
					.algo = TP_GPUSEL_CLOSEST }, gpus, &c,
					&err);
		} else {
			rc = tp_node_place_cpus(&(tp_node_tasks){ n, g, tasks,
					cnt }, tp_node_ncores(n) / G,
					&(tp_cpu_slots){ pkg, core, 0 }, &err);
			if (rc == 0)
				rc = tp_gpusel(&(tp_gpusel_request){ .on = { n,
						g, tasks, cnt },
						.task_package = pkg,
						.gpus_per_task = 1,
						.algo = TP_GPUSEL_MAGC }, gpus,
						&c, &err);
		}
		if (rc < 0)
			die(k->name, &err);
		double dt = tp__now_ms() - t0;
		if (dt > slowest)
			slowest = dt;
		for (int t = 0; t < cnt; t++)
			gpu_of[tasks[t]] = gpus[t];
	}
	return slowest;
}

static void load_kind(struct kind *k, const char *dir)
{
	char path[2200];
	tp_error err;
	snprintf(path, sizeof path, "%s/%s", dir, k->xml);
	if (tp_node_load_xml(path, &k->node, &err) < 0)
		die(path, &err);
	if (k->links) {
		snprintf(path, sizeof path, "%s/%s", dir, k->links);
		if (tp_node_load_links(k->node, path, &err) < 0)
			die(path, &err);
	}
	int G = tp_node_ngpus(k->node), nn = NTASKS / G;
	char topo[128];
	snprintf(topo, sizeof topo, "SwitchName=s0 Nodes=%s[%02d-%02d]\n", k->name,
		 1, nn);
	if (tp_machine_from_topology(&k->m, topo, "one switch", NULL, 0, &err) < 0)
		die(k->name, &err);
	int32_t nodes[NTASKS];
	for (int i = 0; i < nn; i++)
		nodes[i] = i;
	if (tp_alloc_from_nodes(k->m, nodes, nn, G, &k->a, &err) < 0)
		die(k->name, &err);
}

int main(int argc, char **argv)
{
	const char *dir = TP_SOURCE_DIR "/conf/examples/nodes";
	char guess[1024];
	FILE *probe = fopen(TP_SOURCE_DIR "/conf/examples/nodes/nvl4.xml", "r");
	if (probe) {
		fclose(probe);
	} else {
		/* run from elsewhere: BUILD/bench/bench_gpu -> ../../conf */
		const char *slash = strrchr(argv[0], '/');
		int len = slash ? (int)(slash - argv[0]) : 1;
		snprintf(guess, sizeof guess, "%.*s/../../conf/examples/nodes", len,
			 slash ? argv[0] : ".");
		dir = guess;
	}
	int reps = 5;
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--nodes") && i + 1 < argc)
			dir = argv[++i];
		else if (!strcmp(argv[i], "--reps") && i + 1 < argc) {
			reps = atoi(argv[++i]);
			if (reps < 1)
				reps = 1;
		}
		else {
			fprintf(stderr, "usage: bench_gpu [--nodes DIR] [--reps N]\n");
			return 2;
		}
	}
	struct kind kinds[] = {
		{ "pcie16", "pcie16.xml", NULL, NULL, NULL, NULL },
		{ "dgx8", "dgx8.xml", "dgx8.links", NULL, NULL, NULL },
		{ "nvl4", "nvl4.xml", "nvl4.links", NULL, NULL, NULL },
		{ "mi250x", "mi250x.xml", "mi250x.links", NULL, NULL, NULL },
	};
	int nk = (int)(sizeof kinds / sizeof kinds[0]);
	for (int k = 0; k < nk; k++)
		load_kind(&kinds[k], dir);
	/* our stencil specs list the fastest dimension first */
	struct {
		const char *name;
		tp_graph *g;
		bool target;    /* all-to-all or weighted: the 40 % target */
	} pats[] = {
		{ "2D", stencil("8x8:5pt:bytes=2097152"), false },
		{ "2D-W", stencil("8x8:5pt:bytes=2097152:weights=1,3"), true },
		{ "3D", stencil("4x4x4:7pt:bytes=2097152"), false },
		{ "3D-W", stencil("4x4x4:7pt:bytes=2097152:weights=1,1,3"), true },
		{ "COL", col(16), true },
		{ "2D-Wx", stencil("8x8:5pt:bytes=2097152:weights=3,1"), false },
		{ "3D-Wx", stencil("4x4x4:7pt:bytes=2097152:weights=3,1,1"), false },
		{ "COL-y", col(4), false },
		{ "COL-x", col(1), false },
	};
	int np = (int)(sizeof pats / sizeof pats[0]);

	printf("MAGC micro-benchmarks as GPU matrices: 64 tasks, 1 MB each way; "
	       "nodes under one switch,\ntheir network cards from the node models."
	       "  Congestion and cost in ms (bytes / GB/s / 1e6)\n\n");
	printf("%-6s %-7s %8s %8s %8s %6s %6s %8s %8s %6s %8s %8s %7s %7s\n",
	       "pattern", "node", "sys-lr", "sys-cl", "sys-topo", "vs-lr", "vs-cl",
	       "node-lr", "node-tp", "vs-lr", "wt-lr", "wt-topo", "ms-all",
	       "ms-node");
	int worse = 0;
	double min_target = 1e300;
	for (int p = 0; p < np; p++)
		for (int k = 0; k < nk; k++) {
			struct kind *K = &kinds[k];
			const tp_graph *g = pats[p].g;
			int32_t block[NTASKS], topo[NTASKS];
			int glr[NTASKS], gcl[NTASKS], gtp[NTASKS];
			tp_error err;
			if (tp_map_block(K->a, NTASKS, block, &err) < 0)
				die("block", &err);
			choose_gpus(K, g, block, LOCAL_RANK, glr);
			choose_gpus(K, g, block, CLOSEST, gcl);
			double best = 1e300, sel = 0;
			for (int r = 0; r < reps; r++) {
				tp_place_opts o;
				tp_place_opts_default(&o);
				o.policy = TP_POLICY_AUTO;
				/* phase 1 ranks its candidates by phases 2 and 3,
				 * as topoplace map --gpu-matrix does */
				const tp_node *models[NTASKS];
				for (int i = 0; i < NTASKS; i++)
					models[i] = K->node;
				tp_nodes_gpu_rank_arg ra = { K->a, models, g, g,
							     NTASKS, 1 };
				o.rank = tp_nodes_gpu_rank;
				o.rank_arg = &ra;
				double t0 = tp__now_ms();
				if (tp_place(g, K->a, &o, topo, NULL, &err) < 0)
					die("phase 1", &err);
				double s = choose_gpus(K, g, topo, TOPOPLACE, gtp);
				double dt = tp__now_ms() - t0;
				if (dt < best) {
					best = dt;
					sel = s;
				}
			}
			struct cost lr = evaluate(K, g, block, glr);
			struct cost cl = evaluate(K, g, block, gcl);
			struct cost tp = evaluate(K, g, topo, gtp);
			double red = lr.sys > 0 ? 100.0 * (1 - tp.sys / lr.sys) : 0;
			double redc = cl.sys > 0 ? 100.0 * (1 - tp.sys / cl.sys) : 0;
			double redn = lr.node > 0 ? 100.0 * (1 - tp.node / lr.node) : 0;
			if (tp.sys > lr.sys * (1 + 1e-9))
				worse++;
			if (pats[p].target && lr.sys > 0 && red < min_target)
				min_target = red;
			printf("%-6s %-7s %8.3f %8.3f %8.3f %5.1f%% %5.1f%% %8.3f %8.3f "
			       "%5.1f%% %8.3f %8.3f %7.2f %7.3f\n", pats[p].name, K->name,
			       lr.sys, cl.sys, tp.sys, red, redc, lr.node, tp.node, redn,
			       lr.weighted, tp.weighted, best, sel);
		}
	printf("\nlr: block + local rank; cl: block + sockets cyclic + "
	       "--gpu-bind=closest; topo/tp: topoplace (phases 1-3)\n"
	       "vs-lr, vs-cl: reduction of the maximum congestion; ms-all: "
	       "the three phases for 64 tasks, ms-node: slowest node's phases 2+3\n");
	printf("all-to-all and weighted patterns (2D-W, 3D-W, COL): smallest "
	       "reduction against local-rank order %.1f%% (target 40%%)\n",
	       min_target);
	printf("topoplace is %s than local-rank order\n",
	       worse ? "WORSE somewhere" : "never worse");
	for (int p = 0; p < np; p++)
		tp_graph_destroy(pats[p].g);
	for (int k = 0; k < nk; k++) {
		tp_alloc_destroy(kinds[k].a);
		tp_machine_destroy(kinds[k].m);
		tp_node_destroy(kinds[k].node);
	}
	return worse ? 1 : 0;
}
