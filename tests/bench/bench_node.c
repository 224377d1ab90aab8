/* bench_node — what finding a node's model on the node costs, cold and
 * warm: tp_node_detect without a cache (hwloc's live discovery of the
 * PCIe tree plus the vendor's fabric), with a cache that already holds the
 * model (one hwloc XML read through node_xml.c), and the XML of a pinned
 * NodeTopology= for comparison.
 *
 * Cases: this machine as it is, and each example GPU node as hwloc sees it
 * through HWLOC_XMLFILE (its PCIe tree then comes from the XML, not from
 * /sys: the cold figure is hwloc's XML import, a lower bound of a real
 * node's discovery, which reads /sys for every PCI device).
 *
 * Printed: medians of --reps runs in ms.
 *   bench_node [--nodes DIR] [--reps N]
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "node/node_internal.h"
#include "bench_time.h"

#ifndef TP_SOURCE_DIR
#define TP_SOURCE_DIR "."
#endif

static void die(const char *what, const tp_error *err)
{
	fprintf(stderr, "bench_node: %s: %s\n", what, err->msg);
	exit(1);
}

/* One detection, timed; the model's GPU count in *gpus. */
static double detect_ms(const char *dir, unsigned flags, int *gpus)
{
	tp_node *n = NULL;
	tp_error err;
	tp_error_clear(&err);
	double t0 = now_ms();
	if (tp_node_detect(dir, flags, &n, &err) < 0)
		die("detect", &err);
	double t = now_ms() - t0;
	if (n)
		*gpus = tp_node_ngpus(n);
	tp_node_destroy(n);
	return t;
}

static double pinned_ms(const char *xml)
{
	tp_node *n = NULL;
	tp_error err;
	tp_error_clear(&err);
	double t0 = now_ms();
	if (tp_node_load_xml(xml, &n, &err) < 0)
		die(xml, &err);
	double t = now_ms() - t0;
	tp_node_destroy(n);
	return t;
}

static void run_case(const char *name, const char *xml, const char *dir,
		     int reps)
{
	double *cold = calloc((size_t)reps, sizeof *cold);
	double *warm = calloc((size_t)reps, sizeof *warm);
	double *pin = calloc((size_t)reps, sizeof *pin);
	if (!cold || !warm || !pin) {
		fprintf(stderr, "bench_node: out of memory\n");
		exit(1);
	}
	if (xml)
		setenv("HWLOC_XMLFILE", xml, 1);
	else
		unsetenv("HWLOC_XMLFILE");
	int gpus = 0;
	for (int r = 0; r < reps; r++)
		cold[r] = detect_ms(NULL, 0, &gpus);
	/* fill the cache once, then read it */
	detect_ms(dir, TP_NODE_DETECT_STORE, &gpus);
	char path[4200];
	tp__node_cache_path(dir, path, sizeof path);
	bool have = access(path, R_OK) == 0;
	for (int r = 0; have && r < reps; r++)
		warm[r] = detect_ms(dir, 0, &gpus);
	for (int r = 0; have && r < reps; r++)
		pin[r] = pinned_ms(path);
	struct stat st;
	long size = have && stat(path, &st) == 0 ? (long)st.st_size : 0;
	if (have)
		printf("%-14s %5d %9.2f %9.2f %9.2f %9ld\n", name, gpus,
		       median(cold, reps), median(warm, reps), median(pin, reps),
		       size);
	else
		printf("%-14s %5d %9.2f %9s %9s %9s  (no cache: not root)\n",
		       name, gpus, median(cold, reps), "-", "-", "-");
	free(cold);
	free(warm);
	free(pin);
}

int main(int argc, char **argv)
{
	const char *nodes = TP_SOURCE_DIR "/conf/examples/nodes";
	int reps = 21;
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--nodes") && i + 1 < argc)
			nodes = argv[++i];
		else if (!strcmp(argv[i], "--reps") && i + 1 < argc)
			reps = atoi(argv[++i]);
		else {
			fprintf(stderr, "usage: bench_node [--nodes DIR] [--reps N]\n");
			return 2;
		}
	}
	if (reps < 1)
		reps = 1;
	char dir[] = "/tmp/bench-node-XXXXXX";
	if (!mkdtemp(dir) || chmod(dir, 0755) < 0) {
		perror("bench_node: mkdtemp");
		return 1;
	}
	printf("node model found on the node: median of %d runs, ms\n", reps);
	printf("%-14s %5s %9s %9s %9s %9s\n", "node", "GPUs", "cold", "cached",
	       "pinned", "XML bytes");
	run_case("this machine", NULL, dir, reps);
	static const char *const kinds[] = { "dgx8", "nvl4", "mi250x", "pcie16" };
	for (size_t k = 0; k < sizeof kinds / sizeof kinds[0]; k++) {
		char xml[4096];
		snprintf(xml, sizeof xml, "%s/%s.xml", nodes, kinds[k]);
		run_case(kinds[k], xml, dir, reps);
	}
	unsetenv("HWLOC_XMLFILE");
	char cmd[128];
	snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
	if (system(cmd) != 0)
		fprintf(stderr, "bench_node: cannot remove %s\n", dir);
	return 0;
}
