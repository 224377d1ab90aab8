/* bench_output — what `topoplace map` spends after the mapping: the report's
 * metrics and each output format, on the 6-D half machine of Fugaku's shape
 * (24x23x24x2x3x2, wrap yes,yes,yes,no,yes,no; a random half of its
 * 158,976 nodes, 4 tasks each: 317,952 tasks, stencil 96x92x36).
 *
 *   bench_output [--runs N] [--budget-ms MS] [--seed N]
 *
 * The machine is loaded with tp_conf_load_string (one NodeName= line of
 * CoordOrder=x-major per 65,536 nodes, as bench_scale), the allocation is
 * a seeded splitmix64 draw of half the nodes, written as the Slurm hostlist
 * a job gets; tp_job maps it once (geometric, the budget, default 300 ms)
 * with TP_JOB_METRICS, as `map --format json` does.  Then, each the median
 * of `runs` (default 5) runs, in ms:
 *   metrics   tp_job_run with TP_JOB_METRICS minus tp_job_run without (the
 *             same request; both under the budget, so noisy: the pairs'
 *             median), i.e. what the JSON report costs beyond the hostfile
 *             in the core: the mapping's and the block order's metrics;
 *   hostfile, json, rankfile, mpich, tasks, svg: the command's own
 *             writers (cli_map_hostfile, cli_map_json,
 *             cli_map_launcher_format, cli_map_svg: the picture of both
 *             orders with their link loads; linked from cli/), writing to
 *             /dev/null.
 * The mapping's time is printed beside them: the goal is writers no slower
 * than the mapping they print, the JSON within 200 ms of the hostfile
 * (metrics + json - hostfile).  Benchmarks print figures; nothing here
 * fails on time.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <topoplace/topoplace.h>
#include "cli.h"
#include "bench_alloc.h"
#include "bench_time.h"

#define MAX_RUNS 31
#define CHUNK 65536

static const char *const dims = "24x23x24x2x3x2";
static const char *const wrap = "yes,yes,yes,no,yes,no";
static const int64_t nnodes = 24 * 23 * 24 * 2 * 3 * 2;

/* Half the nodes, in node order, as a Slurm hostlist "n[000001,...]". */
static char *half_hostlist(uint64_t seed)
{
	bool *in = calloc((size_t)nnodes, sizeof *in);
	int64_t *idx = malloc(sizeof *idx * (size_t)nnodes);
	char *s = malloc((size_t)nnodes * 15 + 16);
	if (!in || !idx || !s) {
		free(in);
		free(idx);
		free(s);
		return NULL;
	}
	for (int64_t i = 0; i < nnodes; i++)
		idx[i] = i;
	for (int64_t i = 0; i < nnodes / 2; i++) {   /* partial Fisher-Yates */
		int64_t j = i + (int64_t)(splitmix64(&seed) % (uint64_t)(nnodes - i));
		int64_t t = idx[i];
		idx[i] = idx[j];
		idx[j] = t;
		in[idx[i]] = true;
	}
	size_t len = (size_t)sprintf(s, "n[");
	for (int64_t i = 0; i < nnodes;) {
		if (!in[i]) {
			i++;
			continue;
		}
		int64_t j = i;
		while (j + 1 < nnodes && in[j + 1])
			j++;
		len += (size_t)(j > i ? sprintf(s + len, "%s%06lld-%06lld",
					       len > 2 ? "," : "", (long long)i,
					       (long long)j)
				  : sprintf(s + len, "%s%06lld", len > 2 ? "," : "",
					    (long long)i));
		i = j + 1;
	}
	sprintf(s + len, "]");
	free(in);
	free(idx);
	return s;
}

static char *machine_conf(void)
{
	char *s = malloc(4096);
	if (!s)
		return NULL;
	size_t len = (size_t)sprintf(s, "Network=torus Dims=%s Wrap=%s\n", dims, wrap);
	for (int64_t off = 0; off < nnodes; off += CHUNK) {
		int64_t n = nnodes - off < CHUNK ? nnodes - off : CHUNK;
		len += (size_t)sprintf(s + len,
				       "NodeName=n[%06lld-%06lld] CoordOrder=x-major Offset=%lld\n",
				       (long long)off, (long long)(off + n - 1),
				       (long long)off);
	}
	return s;
}

static int make_job(struct cli_map *mp, const tp_conf *conf, const char *nodes,
		    double budget, bool metrics, double *ms)
{
	memset(mp, 0, sizeof *mp);
	tp_job_request_init(&mp->req);
	mp->req.conf = conf;
	mp->req.nodes = nodes;
	mp->req.slots = "4";
	mp->req.stencil = "96x92x36";
	mp->req.policy = "geometric";
	mp->req.time_budget_ms = budget;
	if (metrics)
		mp->req.flags |= TP_JOB_METRICS;
	mp->output = "/dev/null";
	tp_error err;
	tp_error_clear(&err);
	double t0 = now_ms();
	if (tp_job_create(&mp->req, &mp->job, &err) < 0 ||
	    tp_job_run(mp->job, &err) < 0) {
		fprintf(stderr, "bench_output: %s\n", err.msg);
		tp_job_destroy(mp->job);
		mp->job = NULL;
		return -1;
	}
	*ms = now_ms() - t0;
	return 0;
}

int main(int argc, char **argv)
{
	int runs = 5;
	double budget = 300;
	uint64_t seed = 20261128;
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--runs") && i + 1 < argc)
			runs = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--budget-ms") && i + 1 < argc)
			budget = atof(argv[++i]);
		else if (!strcmp(argv[i], "--seed") && i + 1 < argc)
			seed = strtoull(argv[++i], NULL, 10);
		else {
			fprintf(stderr, "usage: bench_output [--runs N] [--budget-ms MS] [--seed N]\n");
			return 2;
		}
	}
	if (runs < 1)
		runs = 1;
	if (runs > MAX_RUNS)
		runs = MAX_RUNS;

	char *text = machine_conf(), *nodes = half_hostlist(seed);
	tp_conf *conf = NULL;
	tp_error err;
	tp_error_clear(&err);
	if (!text || !nodes ||
	    tp_conf_load_string(text, "bench.conf", &conf, &err)) {
		fprintf(stderr, "bench_output: %s\n", text && nodes ? err.msg
			: "out of memory");
		return 1;
	}

	printf("bench_output: torus %s (wrap %s), %lld of %lld nodes, 4 tasks each,\n"
	       "stencil 96x92x36, geometric, budget %.0f ms; median of %d runs, ms\n\n",
	       dims, wrap, (long long)(nnodes / 2), (long long)nnodes, budget, runs);

	/* the report's metrics: a job with them against one without */
	double with[MAX_RUNS], without[MAX_RUNS], delta[MAX_RUNS];
	struct cli_map mp;
	for (int r = 0; r < runs; r++) {
		if (make_job(&mp, conf, nodes, budget, false, &without[r]))
			return 1;
		tp_job_destroy(mp.job);
		if (make_job(&mp, conf, nodes, budget, true, &with[r]))
			return 1;
		if (r + 1 < runs)
			tp_job_destroy(mp.job);
		delta[r] = with[r] - without[r];
	}
	printf("%-10s %9s   %s\n", "step", "ms", "");
	printf("%-10s %9.1f   %s\n", "map", median(without, runs),
	       "tp_job_run, no metrics (the mapping under its budget)");
	printf("%-10s %9.1f   %s\n", "metrics", median(delta, runs),
	       "tp_job_run with TP_JOB_METRICS, minus without");

	/* the writers, on the last job (which has its metrics) */
	static const struct {
		const char *name;
		enum cli_format f;
	} writers[] = {
		{ "hostfile", CLI_FORMAT_HOSTFILE },
		{ "json", CLI_FORMAT_JSON },
		{ "rankfile", CLI_FORMAT_RANKFILE },
		{ "mpich", CLI_FORMAT_MPICH },
		{ "tasks", CLI_FORMAT_TASKS },
		{ "svg", CLI_FORMAT_SVG },
	};
	for (size_t w = 0; w < sizeof writers / sizeof writers[0]; w++) {
		double t[MAX_RUNS];
		mp.format = writers[w].f;
		int rc = 0;
		for (int r = 0; r < runs && !rc; r++) {
			double t0 = now_ms();
			rc = mp.format == CLI_FORMAT_HOSTFILE ? cli_map_hostfile(&mp)
			     : mp.format == CLI_FORMAT_JSON ? cli_map_json(&mp)
			     : mp.format == CLI_FORMAT_SVG ? cli_map_svg(&mp)
			     : cli_map_launcher_format(&mp);
			t[r] = now_ms() - t0;
		}
		if (rc)
			printf("%-10s %9s   failed (%d)\n", writers[w].name, "-", rc);
		else
			printf("%-10s %9.1f   to /dev/null\n", writers[w].name,
			       median(t, runs));
	}
	tp_job_destroy(mp.job);
	tp_conf_destroy(conf);
	free(text);
	free(nodes);
	return 0;
}
