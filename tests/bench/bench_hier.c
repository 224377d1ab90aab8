/* bench_hier — policy auto under the plugin's time budget on large switch
 * trees and dragonflies, against auto without a budget and Slurm's block
 * order.
 *
 *   bench_hier [--case NAME[,NAME...]] [--list] [--runs N] [--budget-ms MS]
 *              [--no-full]
 *
 * Each case builds its machine with tp_conf_load_string (a tree from a
 * topology.conf written to a temporary file), an allocation of random
 * nodes drawn as bench_geom draws them (bench_alloc.h) and listed in node
 * order, as Slurm lists them, or the whole machine, and a 7-point stencil;
 * then runs tp_place_ex (auto, hop-bytes) with the budget `runs` times,
 * and once without a budget (skipped by --no-full).  Columns: map = wall
 * ms of tp_place_ex (median and max of the runs); avg hop-bytes (hops per
 * byte) of the budget runs' worst, of the full run and of block; vs full
 * and vs block are that worst against them; kept = the candidate the last
 * budget run kept, and the full run's.
 * Benchmarks print figures; nothing here fails on time.
 */
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <topoplace/topoplace.h>

#include "bench_alloc.h"
#include "input/alloc_internal.h"
#include "map/place_internal.h"
#include "pattern/pattern_internal.h"
#include "bench_time.h"

struct hcase {
	const char *name;
	bool tree;                 /* else a dragonfly */
	int a, b, c;               /* tree: leaves, nodes a leaf, leaves an
				      aggregation switch; dragonfly: groups,
				      routers a group, nodes a router */
	int64_t nodes;             /* random nodes (0: the whole machine) */
	int tpn;
	const char *stencil;
	bool no_full;              /* too large to run without a budget here */
	const char *what;
};

static const struct hcase cases[] = {
	{ "tree-64k-half", true, 2048, 32, 32, 32768, 1, "32x32x32:7pt", false,
	  "3-level fat tree, 2,048 leaves of 32 nodes: a random half, 1/node" },
	{ "tree-16k-4", true, 512, 32, 16, 8192, 4, "32x32x32:7pt", false,
	  "3-level fat tree, 512 leaves of 32 nodes: 8,192 random nodes, 4/node" },
	{ "dfly-64k-half", false, 128, 32, 16, 32768, 1, "32x32x32:7pt", false,
	  "dragonfly 128 groups x 32 routers x 16 nodes: a random half, 1/node" },
	{ "dfly-32k-whole", false, 64, 32, 16, 0, 1, "32x32x32:7pt", false,
	  "dragonfly 64 groups x 32 routers x 16 nodes: the whole machine" },
	{ "dfly-64k-4", false, 128, 32, 16, 8192, 4, "32x32x32:7pt", false,
	  "dragonfly 128 x 32 x 16: 8,192 random nodes, 4/node" },
	{ "dfly-128k-whole", false, 128, 32, 32, 0, 1, "64x64x32:7pt", true,
	  "dragonfly 128 x 32 x 32, the whole machine (no full run: greedy alone takes minutes)" },
	{ "dfly-1m-whole", false, 256, 64, 64, 0, 1, "128x128x64:7pt", true,
	  "dragonfly 256 x 64 x 64, the whole machine (no full run)" },
};
#define NCASES ((int)(sizeof cases / sizeof cases[0]))
#define MAX_RUNS 15

static double opt_budget = 300;
static int opt_runs = 5;
static bool opt_full = true;

/* The case's topoplace.conf (and the tree's topology.conf, into topo). */
static char *conf_text(const struct hcase *c, int64_t total, char *topo, size_t cap)
{
	size_t n = 4096;
	char *t = malloc(n);
	if (!t)
		return NULL;
	if (!c->tree) {
		snprintf(t, n, "Network=dragonfly Groups=%d RoutersPerGroup=%d "
			 "NodesPerRouter=%d Routing=valiant\n"
			 "NodeName=n[0000000-%07lld] CoordOrder=x-major\n",
			 c->a, c->b, c->c, (long long)total - 1);
		return t;
	}
	snprintf(topo, cap, "/tmp/bench_hier.XXXXXX");
	int fd = mkstemp(topo);
	FILE *f = fd < 0 ? NULL : fdopen(fd, "w");
	if (!f) {
		free(t);
		return NULL;
	}
	for (int l = 0; l < c->a; l++)
		fprintf(f, "SwitchName=l%d Nodes=n[%07d-%07d]\n", l, l * c->b,
			l * c->b + c->b - 1);
	int aggs = c->a / c->c;
	for (int g = 0; g < aggs; g++)
		fprintf(f, "SwitchName=g%d Switches=l[%d-%d]\n", g, g * c->c,
			g * c->c + c->c - 1);
	fprintf(f, "SwitchName=top Switches=g[0-%d]\n", aggs - 1);
	fclose(f);
	snprintf(t, n, "Network=tree TopologyFile=%s LevelCost=1,2\n"
		 "NodeName=n[0000000-%07lld]\n", topo, (long long)total - 1);
	return t;
}

static int cmp_int32(const void *x, const void *y)
{
	int32_t a = *(const int32_t *)x, b = *(const int32_t *)y;
	return a < b ? -1 : a > b;
}

/* Random nodes (bench_geom's rule, bench_alloc.h) or all, in node order. */
static int32_t *make_alloc(const struct hcase *c, int64_t total, int64_t *count)
{
	int64_t want = c->nodes > 0 ? c->nodes : total;
	int32_t *ids = malloc(sizeof(int32_t) * (size_t)want);
	if (!ids)
		return NULL;
	if (c->nodes > 0) {
		if (bench_random_nodes(c->name, BENCH_GEOM_SEED, total, (int32_t)want, ids)) {
			free(ids);
			return NULL;
		}
		qsort(ids, (size_t)want, sizeof *ids, cmp_int32);
	} else {
		for (int64_t i = 0; i < total; i++)
			ids[i] = (int32_t)i;
	}
	*count = want;
	return ids;
}

static void run_case(const struct hcase *c)
{
	int64_t total = c->tree ? (int64_t)c->a * c->b : (int64_t)c->a * c->b * c->c;
	char topo[64] = "";
	char *text = conf_text(c, total, topo, sizeof topo);
	int64_t nalloc = 0;
	int32_t *ids = make_alloc(c, total, &nalloc);
	tp_conf *conf = NULL;
	tp_alloc *a = NULL;
	tp_graph *g = NULL;
	int32_t *map = NULL;
	tp_error err;
	if (!text || !ids) {
		printf("%-15s out of memory\n", c->name);
		goto out;
	}
	if (tp_conf_load_string(text, "bench.conf", &conf, &err) ||
	    tp_alloc_from_nodes(tp_conf_machine(conf), ids, (int32_t)nalloc, c->tpn, &a,
				&err) ||
	    tp_graph_from_stencil(&g, c->stencil, 0, &err)) {
		printf("%-15s %s\n", c->name, err.msg);
		goto out;
	}
	int32_t n = tp_graph_ntasks(g);
	map = malloc(sizeof(int32_t) * (size_t)n);
	if (!map)
		goto out;
	double bytes = tp_graph_total_bytes(g);
	if (tp_map_block(a, n, map, &err)) {
		printf("%-15s %s\n", c->name, err.msg);
		goto out;
	}
	double blk = tp_metrics_hop_bytes(g, a, map) / bytes;
	tp_place_opts po;
	tp_place_opts_default(&po);
	po.policy = TP_POLICY_AUTO;
	tp_place_report rep;
	double ms[MAX_RUNS], hb = 0, worst = 0;
	char kept[48] = "", kept_full[48] = "-";
	po.geom.time_budget_ms = opt_budget;
	for (int r = 0; r < opt_runs; r++) {
		double t = now_ms();
		if (tp_place_ex(g, a, &po, map, &rep, &err)) {
			printf("%-15s %s\n", c->name, err.msg);
			goto out;
		}
		ms[r] = now_ms() - t;
		hb = tp_metrics_hop_bytes(g, a, map) / bytes;
		worst = hb > worst ? hb : worst;
		snprintf(kept, sizeof kept, "%s", rep.best >= 0 ? rep.cand[rep.best].name : "-");
	}
	double full = NAN, full_ms = NAN;
	bool full_run = opt_full && !c->no_full;
	if (full_run) {
		po.geom.time_budget_ms = 0;
		double t = now_ms();
		if (tp_place_ex(g, a, &po, map, &rep, &err)) {
			printf("%-15s %s\n", c->name, err.msg);
			goto out;
		}
		full_ms = now_ms() - t;
		full = tp_metrics_hop_bytes(g, a, map) / bytes;
		snprintf(kept_full, sizeof kept_full, "%s",
			 rep.best >= 0 ? rep.cand[rep.best].name : "-");
	}
	double sorted[MAX_RUNS];
	memcpy(sorted, ms, sizeof(double) * (size_t)opt_runs);
	qsort(sorted, (size_t)opt_runs, sizeof(double), cmp_double);
	char vsfull[16] = "-";
	if (full_run)
		snprintf(vsfull, sizeof vsfull, "%+.1f%%", 100 * (worst / full - 1));
	printf("%-15s %8lld %8d %4.0f | %6.0f %6.0f | %6.3f %6.3f %6.3f | %7s %+6.0f%% | "
	       "%-20s | %-20s %6.0f\n",
	       c->name, (long long)nalloc, n, opt_budget, sorted[opt_runs / 2],
	       sorted[opt_runs - 1], worst, full, blk, vsfull, 100 * (worst / blk - 1),
	       kept, kept_full, full_ms);
	fflush(stdout);
out:
	free(map);
	tp_graph_destroy(g);
	tp_alloc_destroy(a);
	tp_conf_destroy(conf);
	free(text);
	free(ids);
	if (topo[0])
		unlink(topo);
}

static bool selected(const struct hcase *c, const char *only)
{
	if (!only)
		return true;
	size_t l = strlen(c->name);
	for (const char *p = only; *p;) {
		const char *e = strchr(p, ',');
		size_t k = e ? (size_t)(e - p) : strlen(p);
		if (k == l && !strncmp(p, c->name, l))
			return true;
		p += k + (e != NULL);
	}
	return false;
}

int main(int argc, char **argv)
{
	const char *only = NULL;
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--case") && i + 1 < argc) {
			only = argv[++i];
		} else if (!strcmp(argv[i], "--runs") && i + 1 < argc) {
			opt_runs = atoi(argv[++i]);
			if (opt_runs < 1 || opt_runs > MAX_RUNS) {
				fprintf(stderr, "bench_hier: --runs takes 1..%d\n", MAX_RUNS);
				return 2;
			}
		} else if (!strcmp(argv[i], "--budget-ms") && i + 1 < argc) {
			opt_budget = atof(argv[++i]);
		} else if (!strcmp(argv[i], "--no-full")) {
			opt_full = false;
		} else if (!strcmp(argv[i], "--list")) {
			for (int k = 0; k < NCASES; k++)
				printf("%-15s %s\n", cases[k].name, cases[k].what);
			return 0;
		} else {
			fprintf(stderr, "usage: bench_hier [--case NAME[,NAME...]] [--list] "
				"[--runs N] [--budget-ms MS] [--no-full]\n");
			return 2;
		}
	}
	printf("bench_hier: topoplace %s; tp_place_ex auto, hop-bytes, budget %.0f ms, "
	       "%d run(s) per case; full = auto without a budget%s.\n"
	       "map = wall ms of tp_place_ex (median, max); avg hop-bytes: the budget "
	       "run's worst, full's, block's.\n\n",
	       tp_version(), opt_budget, opt_runs, opt_full ? "" : " (skipped: --no-full)");
	printf("%-15s %8s %8s %4s | %6s %6s | %6s %6s %6s | %7s %7s | %-20s | %-20s %6s\n",
	       "case", "nodes", "tasks", "bdgt", "map", "max", "run", "full", "block",
	       "vs full", "vs blk", "kept (budget)", "kept (full)", "full ms");
	for (int k = 0; k < NCASES; k++)
		if (selected(&cases[k], only))
			run_case(&cases[k]);
	return 0;
}
