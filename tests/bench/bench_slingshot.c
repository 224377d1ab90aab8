/* bench_slingshot — link congestion on a Slingshot-style dragonfly under
 * minimal, adaptive and non-minimal (Valiant) routing.
 *
 * Machine: conf/examples/slingshot.conf (4 groups of 8 chassis x 16 nodes,
 * 16 global links per group pair), its Routing= replaced per column:
 * direct, adaptive with 25 / 50 / 75 % of the traffic non-minimal, Valiant.
 *
 * Jobs: a 3-D 7-point stencil (16 MB per neighbour, one task per node) on
 *   2g: the first 128 nodes of groups 0 and 1 (64 each, Slurm's order),
 *   4g: 32 nodes of each of the 4 groups;
 * and an all-to-all between two halves (every node of group 0 sends 1 MB
 * to every node of group 1: the adversarial case of dragonflies).  Printed:
 * the largest link load in MB for Slurm's order and for topoplace's
 * mapping (policy auto, metric congestion, ranked under that routing), and
 * the mapping time.  Minimal routing piles the traffic of two groups onto
 * their few direct global links; Valiant spreads it over every group at
 * twice the global hops; adaptive lies between.
 *
 *   bench_slingshot [--conf FILE]
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <topoplace/alloc.h>
#include <topoplace/conf.h>
#include "pattern/pattern_internal.h"

#ifndef TP_SOURCE_DIR
#define TP_SOURCE_DIR "."
#endif

static void die(const char *what, const tp_error *err)
{
	fprintf(stderr, "bench_slingshot: %s: %s\n", what, err ? err->msg : "failed");
	exit(1);
}

/* The config's text with its Routing= line replaced. */
static char *with_routing(const char *path, const char *routing)
{
	FILE *f = fopen(path, "r");
	if (!f)
		die(path, NULL);
	size_t cap = 1 << 16, n = 0;
	char *s = malloc(cap), line[1024];
	if (!s)
		die("out of memory", NULL);
	s[0] = '\0';
	while (fgets(line, sizeof line, f)) {
		const char *l = strncmp(line, "Routing=", 8) ? line : routing;
		size_t k = strlen(l);
		if (n + k + 2 >= cap)
			die("config too long", NULL);
		memcpy(s + n, l, k);
		n += k;
		if (l == routing)
			s[n++] = '\n';
		s[n] = '\0';
	}
	fclose(f);
	return s;
}

static tp_graph *all_to_all(int32_t half)
{
	int64_t m = (int64_t)half * half, k = 0;
	int32_t *u = malloc(sizeof(int32_t) * (size_t)m);
	int32_t *v = malloc(sizeof(int32_t) * (size_t)m);
	double *w = malloc(sizeof(double) * (size_t)m);
	if (!u || !v || !w)
		die("out of memory", NULL);
	for (int32_t i = 0; i < half; i++)
		for (int32_t j = 0; j < half; j++) {
			u[k] = i;
			v[k] = half + j;
			w[k++] = 1e6;
		}
	tp_graph *g = NULL;
	tp_error err;
	if (tp_graph_from_edges(&g, 2 * half, m, u, v, w, "a2a", &err) < 0)
		die("all-to-all", &err);
	free(u);
	free(v);
	free(w);
	return g;
}

int main(int argc, char **argv)
{
	const char *conf = TP_SOURCE_DIR "/conf/examples/slingshot.conf";
	char guess[1024];
	FILE *probe = fopen(conf, "r");
	if (probe) {
		fclose(probe);
	} else {
		const char *slash = strrchr(argv[0], '/');
		int len = slash ? (int)(slash - argv[0]) : 1;
		snprintf(guess, sizeof guess, "%.*s/../../conf/examples/slingshot.conf",
			 len, slash ? argv[0] : ".");
		conf = guess;
	}
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--conf") && i + 1 < argc) {
			conf = argv[++i];
		} else {
			fprintf(stderr, "usage: bench_slingshot [--conf FILE]\n");
			return 2;
		}
	}
	const char *routing[] = { "Routing=direct",
				  "Routing=adaptive AdaptiveShare=0.25",
				  "Routing=adaptive AdaptiveShare=0.5",
				  "Routing=adaptive AdaptiveShare=0.75",
				  "Routing=valiant" };
	const char *rname[] = { "direct", "ad-25%", "ad-50%", "ad-75%", "valiant" };
	enum { NR = 5 };
	const struct {
		const char *name, *nodes, *pattern;
	} jobs[] = {
		{ "3D 2g", "x[1000-1001]c[0-3]s[0-7]b[0-1]n0", "8x4x4:7pt:bytes=16777216" },
		{ "3D 4g", "x[1000-1003]c[0-1]s[0-7]b[0-1]n0", "8x4x4:7pt:bytes=16777216" },
		{ "a2a 2g", "x[1000-1001]c[0-3]s[0-7]b[0-1]n0", NULL },
	};
	printf("Largest link load (MB) on %s under each routing: Slurm's order / "
	       "topoplace (auto, congestion)\n\n", conf);
	printf("%-7s", "job");
	for (int r = 0; r < NR; r++)
		printf(" %17s", rname[r]);
	printf("\n");
	int worse = 0;
	for (size_t j = 0; j < sizeof jobs / sizeof jobs[0]; j++) {
		printf("%-7s", jobs[j].name);
		for (int r = 0; r < NR; r++) {
			char *text = with_routing(conf, routing[r]);
			tp_conf *c = NULL;
			tp_error err;
			if (tp_conf_load_string(text, conf, &c, &err) < 0)
				die(conf, &err);
			free(text);
			const tp_machine *m = tp_conf_machine(c);
			tp_alloc *a = NULL;
			if (tp_alloc_from_hostlist(m, jobs[j].nodes, 1, "alloc", &a, &err) < 0)
				die(jobs[j].nodes, &err);
			int32_t n = (int32_t)tp_alloc_total_slots(a);
			tp_graph *g = NULL;
			if (jobs[j].pattern) {
				if (tp_graph_from_stencil(&g, jobs[j].pattern, n, &err) < 0)
					die(jobs[j].pattern, &err);
			} else {
				g = all_to_all(n / 2);
			}
			int32_t *blk = malloc(sizeof(int32_t) * (size_t)n);
			int32_t *tpm = malloc(sizeof(int32_t) * (size_t)n);
			if (!blk || !tpm)
				die("out of memory", NULL);
			tp_place_opts o;
			tp_place_opts_default(&o);
			o.policy = TP_POLICY_AUTO;
			o.geom.metric = TP_METRIC_CONGESTION;
			tp_metrics mb, mt;
			if (tp_map_block(a, n, blk, &err) < 0 ||
			    tp_place(g, a, &o, tpm, NULL, &err) < 0 ||
			    tp_metrics_compute(g, a, blk, true, &mb, &err) < 0 ||
			    tp_metrics_compute(g, a, tpm, true, &mt, &err) < 0)
				die(jobs[j].name, &err);
			if (mt.max_congestion_bytes > mb.max_congestion_bytes * (1 + 1e-9))
				worse++;
			char cell[32];
			snprintf(cell, sizeof cell, "%.0f/%.0f", mb.max_congestion_bytes / 1e6,
				 mt.max_congestion_bytes / 1e6);
			printf(" %17s", cell);
			free(blk);
			free(tpm);
			tp_graph_destroy(g);
			tp_alloc_destroy(a);
			tp_conf_destroy(c);
		}
		printf("\n");
	}
	printf("\nad-N%%: adaptive routing, N%% of the router pairs' traffic "
	       "non-minimal; topoplace is %s than Slurm's order\n",
	       worse ? "WORSE somewhere" : "never worse");
	return worse ? 1 : 0;
}
