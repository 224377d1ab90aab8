/* bench_gpu — GPU selection inside the node (MAGC phase 3) on the
 * micro-benchmark patterns of Mirsadeghi et al. ("MAGC", 64 tasks, 1 MB
 * messages): 2-D 5-point and 3-D 7-point stencils, their weighted variants
 * (3x the bytes along the first dimension) and sub-communicator all-to-all
 * along the first dimension, as GPU peer matrices.
 *
 * COL-Y is the same all-to-all along the second dimension (stride 4), a
 * sub-communicator that does not follow the rank order.
 *
 * Tasks go to nodes in block order (64 / GPUs-per-node nodes of one example
 * kind).  Baselines: local-rank order (CUDA device = local rank) and Slurm's
 * default inside the node (sockets cyclic, -m block:cyclic) with
 * --gpu-bind=closest; topoplace: MIMS socket placement, then the MAGC greedy
 * (timed, best of --reps).  Printed: the maximum GPU-link congestion
 * over all nodes (ms = bytes / (GB/s) / 1e6), the bandwidth-weighted cost
 * (sum of bytes / path bandwidth, ms), topoplace's reduction against
 * local-rank order and the slowest per-node selection time.
 *
 *   bench_gpu [--nodes DIR] [--reps N]
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

#ifndef TP_SOURCE_DIR
#define TP_SOURCE_DIR "."
#endif

#define MB 1048576.0

static tp_graph *stencil(const char *spec)
{
	tp_graph *g = NULL;
	tp_error err;
	if (tp_graph_from_stencil(&g, spec, 64, &err) < 0) {
		fprintf(stderr, "bench_gpu: %s\n", err.msg);
		exit(1);
	}
	return g;
}

/* All-to-all inside the sub-communicators along one dimension of the
 * 4x4x4 task grid (task = x + 4y + 16z): stride 1 is the paper's COL
 * (first dimension), stride 4 the second dimension. */
static tp_graph *col(int stride)
{
	int32_t u[64 * 64], v[64 * 64];
	double b[64 * 64];
	int m = 0;
	for (int i = 0; i < 64; i++)
		for (int j = i + 1; j < 64; j++) {
			int d = j - i;
			bool same = stride == 1 ? i / 4 == j / 4
					        : (d % 4 == 0 && i / 16 == j / 16);
			if (!same)
				continue;
			u[m] = i;
			v[m] = j;
			b[m] = 2 * MB;     /* 1 MB each way */
			m++;
		}
	tp_graph *g = NULL;
	tp_error err;
	if (tp_graph_from_edges(&g, 64, m, u, v, b, "col", &err) < 0) {
		fprintf(stderr, "bench_gpu: %s\n", err.msg);
		exit(1);
	}
	return g;
}

struct kind {
	const char *name, *xml, *links;
	tp_node *node;
};

struct totals {
	double cong, weighted;
};

static void add(struct totals *t, const tp_gpusel_cost *c)
{
	if (c->max_congestion_ms > t->cong)
		t->cong = c->max_congestion_ms;
	t->weighted += c->weighted_ms;
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
		{ "pcie16", "pcie16.xml", NULL, NULL },
		{ "dgx8", "dgx8.xml", "dgx8.links", NULL },
		{ "nvl4", "nvl4.xml", "nvl4.links", NULL },
	};
	int nk = (int)(sizeof kinds / sizeof kinds[0]);
	for (int k = 0; k < nk; k++) {
		char path[2200];
		tp_error err;
		snprintf(path, sizeof path, "%s/%s", dir, kinds[k].xml);
		if (tp_node_load_xml(path, &kinds[k].node, &err) < 0) {
			fprintf(stderr, "bench_gpu: %s\n", err.msg);
			return 1;
		}
		if (kinds[k].links) {
			snprintf(path, sizeof path, "%s/%s", dir, kinds[k].links);
			if (tp_node_load_links(kinds[k].node, path, &err) < 0) {
				fprintf(stderr, "bench_gpu: %s\n", err.msg);
				return 1;
			}
		}
	}
	struct {
		const char *name;
		tp_graph *g;
	} pats[] = {
		{ "2D", stencil("8x8:5pt:bytes=2097152") },
		{ "2D-W", stencil("8x8:5pt:bytes=2097152:weights=3,1") },
		{ "3D", stencil("4x4x4:7pt:bytes=2097152") },
		{ "3D-W", stencil("4x4x4:7pt:bytes=2097152:weights=3,1,1") },
		{ "COL", col(1) },
		{ "COL-Y", col(4) },
	};
	int np = (int)(sizeof pats / sizeof pats[0]);

	printf("GPU selection, 64 tasks, 1 MB messages each way; max GPU-link "
	       "congestion and\nbandwidth-weighted cost in ms (bytes / GB/s / 1e6), "
	       "worst node / sum over nodes\n\n");
	printf("%-6s %-7s %10s %10s %10s %7s %7s %10s %10s %10s %8s\n", "pattern",
	       "node", "cong-lr", "cong-cl", "cong-topo", "vs-lr", "vs-cl",
	       "wt-lr", "wt-cl", "wt-topo", "ms/node");
	int fails = 0;
	for (int p = 0; p < np; p++)
		for (int k = 0; k < nk; k++) {
			tp_node *n = kinds[k].node;
			int G = tp_node_ngpus(n);
			int nn = 64 / G;
			struct totals lr = { 0, 0 }, cl = { 0, 0 }, tp = { 0, 0 };
			double worst_ms = 0;
			for (int i = 0; i < nn; i++) {
				int32_t tasks[64];
				int pkg[64], core[64], gpus[64];
				for (int t = 0; t < G; t++)
					tasks[t] = i * G + t;
				tp_error err;
				int cpt = tp_node_ncores(n) / G;
				/* Slurm's default inside a node: sockets cyclic
				 * (-m block:cyclic), then --gpu-bind=closest */
				int S = tp_node_npackages(n);
				for (int t = 0; t < G; t++)
					pkg[t] = t % S;
				tp_gpusel_cost c;
				tp_gpusel(n, pats[p].g, tasks, G, pkg, NULL, 0, 1,
					  TP_GPUSEL_CLOSEST, gpus, &c, &err);
				add(&cl, &c);
				/* CUDA device = local rank */
				tp_gpusel(n, pats[p].g, tasks, G, NULL, NULL, 0, 1,
					  TP_GPUSEL_LOCAL_RANK, gpus, &c, &err);
				add(&lr, &c);
				/* topoplace: phase 2 (MIMS) then phase 3 */
				if (tp_node_place_cpus(n, pats[p].g, tasks, G, cpt, pkg,
						       core, NULL, &err) < 0) {
					fprintf(stderr, "bench_gpu: %s\n", err.msg);
					return 1;
				}
				double best = 1e300;
				for (int r = 0; r < reps; r++) {
					double t0 = tp__now_ms();
					if (tp_gpusel(n, pats[p].g, tasks, G, pkg, NULL, 0, 1,
						      TP_GPUSEL_MAGC, gpus, &c, &err) < 0) {
						fprintf(stderr, "bench_gpu: %s\n", err.msg);
						return 1;
					}
					double dt = tp__now_ms() - t0;
					if (dt < best)
						best = dt;
				}
				add(&tp, &c);
				if (best > worst_ms)
					worst_ms = best;
			}
			double red = lr.cong > 0 ? 100.0 * (1 - tp.cong / lr.cong) : 0;
			double redc = cl.cong > 0 ? 100.0 * (1 - tp.cong / cl.cong) : 0;
			if (tp.cong > lr.cong * (1 + 1e-9))
				fails++;
			printf("%-6s %-7s %10.3f %10.3f %10.3f %6.1f%% %6.1f%% %10.3f %10.3f %10.3f %8.3f\n",
			       pats[p].name, kinds[k].name, lr.cong, cl.cong, tp.cong, red,
			       redc, lr.weighted, cl.weighted, tp.weighted, worst_ms);
		}
	printf("\nlr: local-rank order; cl: sockets cyclic + --gpu-bind=closest; "
	       "topo: topoplace.\nvs-lr, vs-cl: reduction of the maximum "
	       "congestion (%s than local-rank order)\n",
	       fails ? "WORSE somewhere" : "never worse");
	for (int p = 0; p < np; p++)
		tp_graph_destroy(pats[p].g);
	for (int k = 0; k < nk; k++)
		tp_node_destroy(kinds[k].node);
	return fails ? 1 : 0;
}
