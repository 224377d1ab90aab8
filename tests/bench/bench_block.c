/* bench_block — tensor-parallel groups on GB200 NVL72 racks (Slurm's
 * topology/block): topoplace against Slurm's order.
 *
 * Machine: conf/examples/block.conf, 8 racks of 18 nodes x 4 GPUs, each
 * rack one NVLink domain (a block), the racks joined by Slurm's block
 * aggregation; NVLink 3600 GB/s per node, network 200 GB/s per node.
 *
 * Jobs: one task per GPU (4 per node).  Tensor-parallel groups of G
 * consecutive ranks exchange 100 MB between every two of their ranks (the
 * all-reduces of tensor parallelism); data parallelism joins rank i and
 * rank i + G with 10 MB.  The allocations are what a busy machine leaves:
 * parts of racks.  Slurm's order fills the nodes in order, so a group is
 * cut by the network wherever a rack's share is not a multiple of the
 * group; topoplace (policy auto: on block networks it also tries the
 * partition that follows the blocks) keeps whole groups inside racks
 * where the shares allow it.
 *
 * Printed per allocation and group size:
 *   split   groups spread over more than one rack (Slurm -> topoplace)
 *   net-GB  bytes that cross the network (between racks)
 *   hb      topoplace's hop-bytes / Slurm's
 *   cong    topoplace's largest link load / Slurm's (bytes / GB/s)
 *   ms      topoplace's mapping time (best of --reps)
 *
 *   bench_block [--conf FILE] [--reps N]
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <topoplace/alloc.h>
#include <topoplace/conf.h>
#include "util/util_internal.h"
#include "net/machine_internal.h"
#include "pattern/pattern_internal.h"

#ifndef TP_SOURCE_DIR
#define TP_SOURCE_DIR "."
#endif

#define TP_BYTES 100e6
#define DP_BYTES 10e6

static void die(const char *what, const tp_error *err)
{
	fprintf(stderr, "bench_block: %s: %s\n", what, err ? err->msg : "failed");
	exit(1);
}

static tp_graph *tp_groups(int32_t n, int G)
{
	int64_t m = (int64_t)n / G * G * (G - 1) / 2 + (n - G);
	int32_t *u = malloc(sizeof(int32_t) * (size_t)m);
	int32_t *v = malloc(sizeof(int32_t) * (size_t)m);
	double *w = malloc(sizeof(double) * (size_t)m);
	if (!u || !v || !w)
		die("tp_groups", NULL);
	int64_t k = 0;
	for (int32_t g0 = 0; g0 < n; g0 += G)
		for (int32_t i = g0; i < g0 + G; i++)
			for (int32_t j = i + 1; j < g0 + G; j++) {
				u[k] = i;
				v[k] = j;
				w[k++] = TP_BYTES;
			}
	for (int32_t i = 0; i + G < n; i++) {
		u[k] = i;
		v[k] = i + G;
		w[k++] = DP_BYTES;
	}
	tp_graph *g = NULL;
	tp_error err;
	if (tp_graph_from_edges(&g, n, k, u, v, w, "tp groups", &err) < 0)
		die("tp_groups", &err);
	free(u);
	free(v);
	free(w);
	return g;
}

static int32_t block_of(const tp_alloc *a, const int32_t *map, int32_t t)
{
	return tp_machine_node_block(tp_alloc_machine(a), tp_alloc_node(a, map[t]));
}

static int split_groups(const tp_alloc *a, const int32_t *map, int32_t n, int G)
{
	int split = 0;
	for (int32_t g0 = 0; g0 < n; g0 += G)
		for (int32_t t = g0 + 1; t < g0 + G; t++)
			if (block_of(a, map, t) != block_of(a, map, g0)) {
				split++;
				break;
			}
	return split;
}

static double network_bytes(const tp_graph *g, const tp_alloc *a,
			    const int32_t *map)
{
	double s = 0;
	for (int32_t t = 0; t < g->ntasks; t++)
		for (int64_t e = g->xadj[t]; e < g->xadj[t + 1]; e++)
			if (g->adjncy[e] > t &&
			    block_of(a, map, t) != block_of(a, map, g->adjncy[e]))
				s += g->weights[e];
	return s;
}

int main(int argc, char **argv)
{
	const char *conf = TP_SOURCE_DIR "/conf/examples/block.conf";
	char guess[1024];
	FILE *probe = fopen(conf, "r");
	if (probe) {
		fclose(probe);
	} else {
		const char *slash = strrchr(argv[0], '/');
		int len = slash ? (int)(slash - argv[0]) : 1;
		snprintf(guess, sizeof guess, "%.*s/../../conf/examples/block.conf", len,
			 slash ? argv[0] : ".");
		conf = guess;
	}
	int reps = 3;
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--conf") && i + 1 < argc) {
			conf = argv[++i];
		} else if (!strcmp(argv[i], "--reps") && i + 1 < argc) {
			reps = atoi(argv[++i]);
			if (reps < 1)
				reps = 1;
		} else {
			fprintf(stderr, "usage: bench_block [--conf FILE] [--reps N]\n");
			return 2;
		}
	}
	tp_conf *c = NULL;
	tp_error err;
	if (tp_conf_load(conf, &c, &err) < 0)
		die(conf, &err);
	const tp_machine *m = tp_conf_machine(c);
	const struct {
		const char *name, *nodes;
	} allocs[] = {
		{ "10+18+18+2", "gb[009-056]" },
		{ "16+12+18+2", "gb[003-018],gb[025-036],gb[055-074]" },
		{ "6+14+10+18", "gb[013-032],gb[045-054],gb[055-072]" },
		{ "4 racks", "gb[001-072]" },
	};
	const int groups[] = { 8, 16, 32, 64 };
	printf("Tensor-parallel groups on GB200 NVL72 racks (%s): 4 tasks per node,\n"
	       "100 MB between the ranks of a group, 10 MB to the next group (data "
	       "parallel)\n\n", conf);
	printf("%-11s %5s %7s %15s %6s %6s %7s\n", "racks", "group", "split",
	       "net-GB", "hb", "cong", "ms");
	int worse = 0;
	for (size_t ai = 0; ai < sizeof allocs / sizeof allocs[0]; ai++) {
		tp_alloc *a = NULL;
		if (tp_alloc_from_hostlist(m, allocs[ai].nodes, 4, "alloc", &a, &err) < 0)
			die(allocs[ai].nodes, &err);
		int32_t n = (int32_t)tp_alloc_total_slots(a);
		for (size_t gi = 0; gi < sizeof groups / sizeof groups[0]; gi++) {
			int G = groups[gi];
			if (n % G)
				continue;
			tp_graph *g = tp_groups(n, G);
			int32_t *blk = malloc(sizeof(int32_t) * (size_t)n);
			int32_t *tpm = malloc(sizeof(int32_t) * (size_t)n);
			if (!blk || !tpm)
				die("out of memory", NULL);
			if (tp_map_block(a, n, blk, &err) < 0)
				die("block", &err);
			double best = 1e300;
			for (int r = 0; r < reps; r++) {
				tp_place_opts o;
				tp_place_opts_default(&o);
				o.policy = TP_POLICY_AUTO;
				double t0 = tp__now_ms();
				if (tp_place(g, a, &o, tpm, NULL, &err) < 0)
					die("auto", &err);
				double dt = tp__now_ms() - t0;
				if (dt < best)
					best = dt;
			}
			tp_metrics mb, mt;
			if (tp_metrics_compute(g, a, blk, true, &mb, &err) < 0 ||
			    tp_metrics_compute(g, a, tpm, true, &mt, &err) < 0)
				die("metrics", &err);
			if (mt.hop_bytes > mb.hop_bytes * (1 + 1e-9))
				worse++;
			char split[24], net[32];
			snprintf(split, sizeof split, "%d->%d", split_groups(a, blk, n, G),
				 split_groups(a, tpm, n, G));
			snprintf(net, sizeof net, "%.1f->%.1f", network_bytes(g, a, blk) / 1e9,
				 network_bytes(g, a, tpm) / 1e9);
			printf("%-11s %5d %7s %15s %5.1f%% %5.1f%% %7.1f\n", allocs[ai].name,
			       G, split, net, 100 * mt.hop_bytes / mb.hop_bytes,
			       100 * mt.max_congestion_bytes / mb.max_congestion_bytes, best);
			free(blk);
			free(tpm);
			tp_graph_destroy(g);
		}
		tp_alloc_destroy(a);
	}
	printf("\nsplit: groups over more than one rack, Slurm's order -> topoplace; "
	       "net-GB: bytes between racks;\nhb, cong: topoplace's hop-bytes and "
	       "largest link load (bytes / GB/s) as a share of Slurm's order's\n");
	printf("topoplace is %s than Slurm's order in hop-bytes\n",
	       worse ? "WORSE somewhere" : "never worse");
	tp_conf_destroy(c);
	return worse ? 1 : 0;
}
