/* Benchmark: the input layer at machine scale — loading the config of a
 * whole machine (tori, and a fat tree from Slurm's topology.conf), and
 * parsing hostlists of hundreds of kilobytes.
 *
 * usage: bench_input [REPEATS]     (prints one table; best of REPEATS runs)
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include <topoplace/topoplace.h>

#include "util/hostlist.h"

static int repeats = 5;

/* CPU time of this thread in ms: the table reports it, as the wall time of
 * a loaded machine says more about the other jobs than about this code. */
static double cpu_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static double best_of(double (*fn)(const void *), const void *arg)
{
	double best = 1e300;
	for (int r = 0; r < repeats; r++) {
		double ms = fn(arg);
		if (ms < best)
			best = ms;
	}
	return best;
}

static double load_conf(const void *arg)
{
	const char *text = arg;
	tp_conf *c;
	tp_error err;
	double t0 = cpu_ms();
	if (tp_conf_load_string(text, "bench.conf", &c, &err)) {
		fprintf(stderr, "bench_input: %s\n", err.msg);
		exit(1);
	}
	double ms = cpu_ms() - t0;
	tp_conf_destroy(c);
	return ms;
}

struct alloc_case {
	const tp_machine *m;
	const char *list;
};

static double make_alloc(const void *arg)
{
	const struct alloc_case *a = arg;
	tp_alloc *al;
	tp_error err;
	double t0 = cpu_ms();
	if (tp_alloc_from_hostlist(a->m, a->list, 1, "bench", &al, &err)) {
		fprintf(stderr, "bench_input: %s\n", err.msg);
		exit(1);
	}
	double ms = cpu_ms() - t0;
	tp_alloc_destroy(al);
	return ms;
}

static double parse_only(const void *arg)
{
	const char *list = arg;
	struct tp__hostlist *hl;
	int64_t n;
	tp_error err;
	char name[TP__HOSTNAME_MAX];
	double t0 = cpu_ms();
	if (tp__hostlist_parse(list, "bench", INT64_MAX, NULL, &hl, &n, &err)) {
		fprintf(stderr, "bench_input: %s\n", err.msg);
		exit(1);
	}
	while (tp__hostlist_next(hl, name))
		;
	double ms = cpu_ms() - t0;
	tp__hostlist_free(hl);
	return ms;
}

/* The machines of 262,144 nodes given by a file of their own: */

/* a coordinate file, a line per node of the 64x64x64 torus */
static void write_coords(FILE *f, int arg)
{
	(void)arg;
	for (int i = 0; i < 262144; i++)
		fprintf(f, "nid%06d %d %d %d\n", i, i % 64, i / 64 % 64, i / 4096);
}

/* a topology.conf: 8,192 leaves of 32 nodes (as ranges, or with arg every
 * node named), 256 aggregation switches, a core */
static void write_tree(FILE *f, int named)
{
	for (int l = 0; l < 8192; l++) {
		fprintf(f, "SwitchName=leaf%d Nodes=", l);
		if (!named)
			fprintf(f, "n[%06d-%06d]", 32 * l, 32 * l + 31);
		for (int k = 0; named && k < 32; k++)
			fprintf(f, "%sn%06d", k ? "," : "", 32 * l + k);
		fputc('\n', f);
	}
	for (int g = 0; g < 256; g++)
		fprintf(f, "SwitchName=agg%d Switches=leaf[%d-%d]\n", g, 32 * g, 32 * g + 31);
	fprintf(f, "SwitchName=core Switches=agg[0-255]\n");
}

/* a block file: 16,384 blocks of 16 */
static void write_blocks(FILE *f, int arg)
{
	(void)arg;
	for (int b = 0; b < 16384; b++)
		fprintf(f, "BlockName=b%d Nodes=g[%06d-%06d]\n", b, 16 * b, 16 * b + 15);
	fprintf(f, "BlockSizes=16,32,64\n");
}

/* One row: the file that write(f, arg) fills, in a temporary file named by
 * the config conf_fmt ("...%s..."), loaded best of repeats.  Non-zero when
 * the file cannot be made. */
static int file_conf(const char *label, const char *conf_fmt,
		     void (*write)(FILE *f, int arg), int arg)
{
	char path[] = "/tmp/bench_input.XXXXXX";
	int fd = mkstemp(path);
	FILE *f = fd < 0 ? NULL : fdopen(fd, "w");
	if (!f) {
		perror("bench_input: temporary file");
		return 1;
	}
	write(f, arg);
	fclose(f);
	char text[256];
	snprintf(text, sizeof text, conf_fmt, path);
	printf("%-34s %10d %12.1f\n", label, 262144, best_of(load_conf, text));
	unlink(path);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc > 1)
		repeats = atoi(argv[1]) > 0 ? atoi(argv[1]) : 1;
	static const struct {
		const char *name, *text;
		int32_t nodes;
	} confs[] = {
		{ "6-D torus 24x23x24x2x3x2",
		  "Network=torus Dims=24x23x24x2x3x2 Wrap=yes,yes,yes,no,yes,no\n"
		  "NodeName=nid[000000-158975] CoordOrder=x-major\n", 158976 },
		{ "3-D torus 64x64x64",
		  "Network=torus Dims=64x64x64\n"
		  "NodeName=nid[000000-262143] CoordOrder=x-major\n", 262144 },
	};
	printf("%-34s %10s %12s\n", "case", "items", "best CPU ms");
	for (size_t i = 0; i < sizeof confs / sizeof *confs; i++)
		printf("%-34s %10ld %12.1f\n", confs[i].name, (long)confs[i].nodes,
		       best_of(load_conf, confs[i].text));

	/* the 64x64x64 torus from a coordinate file, as a fabric manager
	 * writes one: a line per node, "nid000000 0 0 0" */
	if (file_conf("3-D torus 64x64x64, CoordFile",
		      "Network=torus Dims=64x64x64\nCoordFile=%s\n", write_coords, 0))
		return 1;
	/* a fat tree of 262,144 nodes: 8,192 leaf switches of 32 nodes, 256
	 * aggregation switches, one core; its leaves as Slurm sites write
	 * them (ranges), and with every node named on its own */
	if (file_conf("fat tree, leaves as ranges",
		      "Network=tree TopologyFile=%s\nNodeName=n[000000-262143]\n",
		      write_tree, 0) ||
	    file_conf("fat tree, every node named",
		      "Network=tree TopologyFile=%s\nNodeName=n[000000-262143]\n",
		      write_tree, 1))
		return 1;
	/* a block network of 262,144 nodes: 16,384 blocks of 16 (Slurm's
	 * topology/block), the network between them generated */
	if (file_conf("blocks of 16, ranges",
		      "Network=block TopologyFile=%s\nNodeName=g[000000-262143]\n",
		      write_blocks, 0))
		return 1;

	/* 500 kB hostlists: 80,000 single names, 40,000 ranges */
	tp_conf *c;
	tp_error err;
	if (tp_conf_load_string(confs[1].text, "bench.conf", &c, &err)) {
		fprintf(stderr, "bench_input: %s\n", err.msg);
		return 1;
	}
	size_t cap = 4 << 20, len = 0;
	char *singles = malloc(cap), *ranges = malloc(cap);
	for (int i = 0; i < 80000; i++)
		len += (size_t)snprintf(singles + len, cap - len, "%snid%06d", i ? "," : "",
					3 * i);
	size_t len2 = 0;
	for (int i = 0; i < 40000; i++)
		len2 += (size_t)snprintf(ranges + len2, cap - len2, "%snid[%06d-%06d]",
					 i ? "," : "", 6 * i, 6 * i + 1);
	char l1[64], l2[64];
	snprintf(l1, sizeof l1, "hostlist %zu kB, single names", len / 1000);
	snprintf(l2, sizeof l2, "hostlist %zu kB, ranges", len2 / 1000);
	printf("%-34s %10d %12.1f\n", l1, 80000, best_of(parse_only, singles));
	printf("%-34s %10d %12.1f\n", l2, 80000, best_of(parse_only, ranges));
	struct alloc_case a1 = { tp_conf_machine(c), singles };
	struct alloc_case a2 = { tp_conf_machine(c), ranges };
	printf("%-34s %10d %12.1f\n", "allocation from the single names", 80000,
	       best_of(make_alloc, &a1));
	printf("%-34s %10d %12.1f\n", "allocation from the ranges", 80000,
	       best_of(make_alloc, &a2));
	struct rusage ru;
	getrusage(RUSAGE_SELF, &ru);
	printf("peak RSS %ld MB\n", ru.ru_maxrss / 1024);
	free(singles);
	free(ranges);
	tp_conf_destroy(c);
	return 0;
}
