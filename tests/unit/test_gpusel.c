/* Unit tests: GPU selection (MAGC phase 3, core/src/node/gpusel*.c) and
 * socket placement (phase 2, core/src/node/node_cpus.c).  Expected
 * assignments are worked out by hand in the comments. */
#include "testutil.h"
#include "node/node_internal.h"
#include "pattern/pattern_internal.h"
#include <topoplace/nodeplace.h>

static tp_node *load(const char *name, const char *links)
{
	tp_node *n = NULL;
	tp_error err;
	char path[512];
	tp_test_node_path(path, sizeof path, name);
	ck_assert_msg(tp_node_load_xml(path, &n, &err) == 0, "%s", err.msg);
	if (links) {
		tp_test_node_path(path, sizeof path, links);
		ck_assert_msg(tp_node_load_links(n, path, &err) == 0, "%s", err.msg);
	}
	return n;
}

static tp_graph *edges(int32_t n, int m, const int32_t *u, const int32_t *v,
		       const double *b)
{
	tp_graph *g = NULL;
	tp_error err;
	ck_assert_msg(tp_graph_from_edges(&g, n, m, u, v, b, "t", &err) == 0, "%s",
		      err.msg);
	return g;
}

/* nvl4: heavy pairs (0,2) and (1,3), light (0,1).
 * MAGC: task 0 first (heaviest, ties to the lower rank), every GPU costs 0 ->
 * GPU0.  Next task 2 (delta 1e9): GPU1 over NVLink costs 1e9/100, GPU2/3 cross
 * the socket link at 10 GB/s -> GPU1.  Then task 1 (delta 1e6 - 1e9 beats
 * task 3's -1e9): GPU2 and GPU3 tie -> GPU2.  Task 3 -> GPU3 (NVLink). */
START_TEST(nvl4_heavy_pairs_on_nvlink)
{
	tp_node *n = load("nvl4.xml", "nvl4.links");
	int32_t u[] = { 0, 1, 0 }, v[] = { 2, 3, 1 };
	double b[] = { 1e9, 1e9, 1e6 };
	tp_graph *g = edges(4, 3, u, v, b);
	int gpus[4];
	tp_gpusel_cost c, lr;
	tp_error err;
	ck_assert_msg(tp_gpusel(&(tp_gpusel_request){ .on = { n, g, NULL, 4 },
			.gpus_per_task = 1, .algo = TP_GPUSEL_MAGC }, gpus, &c,
			&err) == 0, "%s", err.msg);
	int want[4] = { 0, 2, 1, 3 };
	ck_assert_mem_eq(gpus, want, sizeof want);
	ck_assert_int_eq(c.used, TP_GPUSEL_MAGC);
	ck_assert_int_eq(tp_node_gpu_path(n, gpus[0], gpus[2]), TP_PATH_NVL);
	ck_assert_int_eq(tp_node_gpu_path(n, gpus[1], gpus[3]), TP_PATH_NVL);
	/* NVLink 1e9 / (4 x 25 GB/s) = 10 ms; the light pair crosses the
	 * socket link: 1e6 / 10 = 0.1 ms */
	ck_assert_double_eq_tol(c.max_congestion_ms, 10, 1e-9);
	ck_assert_double_eq_tol(c.weighted_ms, 10 * 2 + 0.1, 1e-9);
	ck_assert_double_eq_tol(c.total_bytes, 2e9 + 1e6, 1e-3);

	/* local-rank order: (0,2) and (1,3) both over the socket link:
	 * 2e9 / 10 GB/s = 200 ms */
	int lrg[4];
	ck_assert_int_eq(tp_gpusel(&(tp_gpusel_request){ .on = { n, g, NULL,
			4 }, .gpus_per_task = 1,
			.algo = TP_GPUSEL_LOCAL_RANK }, lrg, &lr, &err), 0);
	int ident[4] = { 0, 1, 2, 3 };
	ck_assert_mem_eq(lrg, ident, sizeof ident);
	ck_assert_double_eq_tol(lr.max_congestion_ms, 200, 1e-9);
	ck_assert_str_eq(tp_node_link_name(n, lr.max_link), "socket0 - socket1");
	tp_gpusel_cost e;
	ck_assert_int_eq(tp_gpusel_eval(&(tp_node_tasks){ n, g, NULL, 4 }, 1,
			lrg, &e, &err), 0);
	ck_assert_double_eq_tol(e.max_congestion_ms, 200, 1e-9);

	/* tasks 0 and 1 bound to socket 1: ties now go to socket-1 GPUs:
	 * task 0 -> GPU2, task 2 -> GPU3 (NVLink), task 1 -> GPU0, task 3 -> GPU1 */
	int pkg[4] = { 1, 1, 0, 0 };
	ck_assert_int_eq(tp_gpusel(&(tp_gpusel_request){ .on = { n, g, NULL,
			4 }, .task_package = pkg, .gpus_per_task = 1,
			.algo = TP_GPUSEL_MAGC }, gpus, &c, &err), 0);
	int want2[4] = { 2, 0, 3, 1 };
	ck_assert_mem_eq(gpus, want2, sizeof want2);
	/* closest: first free GPU on the task's socket */
	ck_assert_int_eq(tp_gpusel(&(tp_gpusel_request){ .on = { n, g, NULL,
			4 }, .task_package = pkg, .gpus_per_task = 1,
			.algo = TP_GPUSEL_CLOSEST }, gpus, &c, &err), 0);
	int want3[4] = { 2, 3, 0, 1 };
	ck_assert_mem_eq(gpus, want3, sizeof want3);

	/* global task ids: the node holds tasks 10..13 of a larger job */
	tp_graph_destroy(g);
	int32_t u2[] = { 10, 11, 10, 0 }, v2[] = { 12, 13, 11, 10 };
	double b2[] = { 1e9, 1e9, 1e6, 5e9 };
	g = edges(14, 4, u2, v2, b2);
	int32_t tasks[4] = { 10, 11, 12, 13 };
	ck_assert_int_eq(tp_gpusel(&(tp_gpusel_request){ .on = { n, g, tasks,
			4 }, .gpus_per_task = 1, .algo = TP_GPUSEL_MAGC },
			gpus, &c, &err), 0);
	ck_assert_mem_eq(gpus, want, sizeof want);
	ck_assert_double_eq_tol(c.total_bytes, 2e9 + 1e6, 1e-3);  /* task 0 is elsewhere */
	tp_graph_destroy(g);
	tp_node_destroy(n);
}
END_TEST

/* Two tasks with two GPUs each take one NVLink pair each. */
START_TEST(nvl4_two_gpus_per_task)
{
	tp_node *n = load("nvl4.xml", "nvl4.links");
	int32_t u[] = { 0 }, v[] = { 1 };
	double b[] = { 1e6 };
	tp_graph *g = edges(2, 1, u, v, b);
	int gpus[4];
	tp_gpusel_cost c;
	tp_error err;
	ck_assert_int_eq(tp_gpusel(&(tp_gpusel_request){ .on = { n, g, NULL,
			2 }, .gpus_per_task = 2, .algo = TP_GPUSEL_MAGC },
			gpus, &c, &err), 0);
	ck_assert_int_eq(tp_node_gpu_path(n, gpus[0], gpus[1]), TP_PATH_NVL);
	ck_assert_int_eq(tp_node_gpu_path(n, gpus[2], gpus[3]), TP_PATH_NVL);
	tp_graph_destroy(g);
	tp_node_destroy(n);
}
END_TEST

/* Only allowed GPUs: with 1..3 allowed, the heavy pair (0,1) must take the
 * NVLink pair 2,3 and task 2 GPU1. */
START_TEST(nvl4_allowed_subset)
{
	tp_node *n = load("nvl4.xml", "nvl4.links");
	int32_t u[] = { 0, 1 }, v[] = { 1, 2 };
	double b[] = { 1e9, 1e3 };
	tp_graph *g = edges(3, 2, u, v, b);
	int allowed[3] = { 3, 1, 2 };
	int gpus[3];
	tp_gpusel_cost c;
	tp_error err;
	ck_assert_int_eq(tp_gpusel(&(tp_gpusel_request){ .on = { n, g, NULL,
			3 }, .allowed = allowed, .nallowed = 3,
			.gpus_per_task = 1, .algo = TP_GPUSEL_MAGC }, gpus, &c,
			&err), 0);
	ck_assert_int_eq(gpus[2], 1);
	ck_assert_int_eq(tp_node_gpu_path(n, gpus[0], gpus[1]), TP_PATH_NVL);
	for (int i = 0; i < 3; i++)
		ck_assert(gpus[i] >= 1 && gpus[i] <= 3);
	/* local rank over the allowed GPUs in index order */
	ck_assert_int_eq(tp_gpusel(&(tp_gpusel_request){ .on = { n, g, NULL,
			3 }, .allowed = allowed, .nallowed = 3,
			.gpus_per_task = 1, .algo = TP_GPUSEL_LOCAL_RANK },
			gpus, &c, &err), 0);
	int want[3] = { 1, 2, 3 };
	ck_assert_mem_eq(gpus, want, sizeof want);
	tp_graph_destroy(g);
	tp_node_destroy(n);
}
END_TEST

START_TEST(gpusel_errors)
{
	tp_node *n = load("nvl4.xml", NULL);
	int gpus[16];
	tp_error err;
	ck_assert_int_eq(tp_gpusel(&(tp_gpusel_request){ .on = { n, NULL, NULL,
			5 }, .gpus_per_task = 1, .algo = TP_GPUSEL_MAGC },
			gpus, NULL, &err), TP_EINVAL);
	tp_assert_err_has(&err, "5 tasks x 1 GPUs per task need 5 GPUs, but");
	tp_assert_err_has(&err, "nvl4.xml has only 4");
	ck_assert_int_eq(tp_gpusel(&(tp_gpusel_request){ .on = { n, NULL, NULL,
			1 }, .gpus_per_task = 5, .algo = TP_GPUSEL_MAGC },
			gpus, NULL, &err), TP_EINVAL);
	tp_assert_err_has(&err, "5 GPUs per task, but");
	ck_assert_int_eq(tp_gpusel(&(tp_gpusel_request){ .on = { n, NULL, NULL,
			1 }, .gpus_per_task = 0, .algo = TP_GPUSEL_MAGC },
			gpus, NULL, &err), TP_EINVAL);
	tp_assert_err_has(&err, "at least 1");
	int bad[2] = { 0, 7 };
	ck_assert_int_eq(tp_gpusel(&(tp_gpusel_request){ .on = { n, NULL, NULL,
			1 }, .allowed = bad, .nallowed = 2, .gpus_per_task = 1,
			.algo = TP_GPUSEL_MAGC }, gpus, NULL, &err), TP_EINVAL);
	tp_assert_err_has(&err, "allowed GPU 7 outside");
	int dup[2] = { 1, 1 };
	ck_assert_int_eq(tp_gpusel(&(tp_gpusel_request){ .on = { n, NULL, NULL,
			1 }, .allowed = dup, .nallowed = 2, .gpus_per_task = 1,
			.algo = TP_GPUSEL_MAGC }, gpus, NULL, &err), TP_EINVAL);
	tp_assert_err_has(&err, "allowed GPU 1 listed twice");
	int two[2] = { 0, 3 };
	ck_assert_int_eq(tp_gpusel(&(tp_gpusel_request){ .on = { n, NULL, NULL,
			3 }, .allowed = two, .nallowed = 2, .gpus_per_task = 1,
			.algo = TP_GPUSEL_MAGC }, gpus, NULL, &err), TP_EINVAL);
	tp_assert_err_has(&err, "need 3 GPUs, but the step may use only 2");
	int32_t tasks[2] = { 0, 9 };
	tp_graph *g = NULL;
	ck_assert_int_eq(tp_graph_from_stencil(&g, "2x2", 4, &err), 0);
	ck_assert_int_eq(tp_gpusel(&(tp_gpusel_request){ .on = { n, g, tasks,
			2 }, .gpus_per_task = 1, .algo = TP_GPUSEL_MAGC },
			gpus, NULL, &err), TP_EINVAL);
	tp_assert_err_has(&err, "task 9 outside the pattern's 0..3");
	int32_t twice[2] = { 1, 1 };
	ck_assert_int_eq(tp_gpusel(&(tp_gpusel_request){ .on = { n, g, twice,
			2 }, .gpus_per_task = 1, .algo = TP_GPUSEL_MAGC },
			gpus, NULL, &err), TP_EINVAL);
	tp_assert_err_has(&err, "task 1 listed twice");
	int out[1] = { 4 };
	ck_assert_int_eq(tp_gpusel_eval(&(tp_node_tasks){ n, g, NULL, 1 }, 1,
			out, NULL, &err), TP_EINVAL);
	tp_assert_err_has(&err, "GPU 4 outside");
	tp_graph_destroy(g);
	tp_node_destroy(n);
	/* a node without GPUs */
	n = load("cpu2.xml", NULL);
	ck_assert_int_eq(tp_gpusel(&(tp_gpusel_request){ .on = { n, NULL, NULL,
			1 }, .gpus_per_task = 1, .algo = TP_GPUSEL_MAGC },
			gpus, NULL, &err), TP_EINVAL);
	tp_assert_err_has(&err, "cpu2.xml: the node has no GPUs");
	tp_node_destroy(n);
	enum tp_gpusel_algo a;
	ck_assert_int_eq(tp_gpusel_algo_parse("closest", &a, NULL), 0);
	ck_assert_int_eq(a, TP_GPUSEL_CLOSEST);
	ck_assert_str_eq(tp_gpusel_algo_name(TP_GPUSEL_LOCAL_RANK), "local-rank");
	ck_assert_int_eq(tp_gpusel_algo_parse("best", &a, &err), TP_EINVAL);
	tp_assert_err_has(&err, "unknown GPU selection 'best'");
	tp_assert_err_has(&err, "bisect");
}
END_TEST

/* pcie16: task i talks to task i+8 (1 GB).  Local-rank order sends all eight
 * pairs over the socket link; MAGC puts each pair on one K80 board (PIX). */
START_TEST(pcie16_pairs_on_boards)
{
	tp_node *n = load("pcie16.xml", NULL);
	int32_t u[8], v[8];
	double b[8];
	for (int i = 0; i < 8; i++) {
		u[i] = i;
		v[i] = i + 8;
		b[i] = 1e9;
	}
	tp_graph *g = edges(16, 8, u, v, b);
	int gpus[16], again[16];
	tp_gpusel_cost c, lr;
	tp_error err;
	ck_assert_int_eq(tp_gpusel(&(tp_gpusel_request){ .on = { n, g, NULL,
			16 }, .gpus_per_task = 1, .algo = TP_GPUSEL_MAGC },
			gpus, &c, &err), 0);
	for (int i = 0; i < 8; i++)
		ck_assert_int_eq(tp_node_gpu_path(n, gpus[i], gpus[i + 8]), TP_PATH_PIX);
	ck_assert_int_eq(tp_gpusel(&(tp_gpusel_request){ .on = { n, g, NULL,
			16 }, .gpus_per_task = 1,
			.algo = TP_GPUSEL_LOCAL_RANK }, again, &lr, &err), 0);
	/* 8 GB over the 10 GB/s socket link: 800 ms; one board's GPU link:
	 * 1 GB / 15.75 GB/s */
	ck_assert_double_eq_tol(lr.max_congestion_ms, 800, 1e-9);
	ck_assert_double_eq_tol(c.max_congestion_ms, 1e9 / 15.753846 / 1e6, 1e-3);
	ck_assert(c.max_congestion_ms <= 0.6 * lr.max_congestion_ms);
	/* deterministic */
	ck_assert_int_eq(tp_gpusel(&(tp_gpusel_request){ .on = { n, g, NULL,
			16 }, .gpus_per_task = 1, .algo = TP_GPUSEL_MAGC },
			again, &c, &err), 0);
	ck_assert_mem_eq(gpus, again, sizeof gpus);
	tp_graph_destroy(g);
	tp_node_destroy(n);
}
END_TEST

/* A 4x4 stencil on pcie16 whose edges between rows (the first MPI
 * dimension) carry 3 MB and those inside a row 1 MB.
 *   Phase 2: consecutive ranks put rows 0-1 and 2-3 on the sockets (MIMS
 *   3 MB) and no pair swap helps; the bisection start splits the columns
 *   (MIMS 1 MB).
 *   Phase 3: the greedy (before: 0.800 ms, 8 MB over the 10 GB/s socket
 *   link) loses to the bisection over the PCIe tree: one column per bridge
 *   of four GPUs, whose uplink carries at most 8 MB (an inner column's 4 MB
 *   to each neighbouring column): 8e6 B / 15.753846 GB/s = 0.508 ms, which
 *   is also an inner task's own traffic over its own GPU's link, so the
 *   least any assignment can do (TreeMatch and Scotch reach it too). */
START_TEST(pcie16_bisection)
{
	tp_node *n = load("pcie16.xml", NULL);
	tp_graph *g = NULL;
	ck_assert_int_eq(tp_graph_from_stencil(&g, "4x4:5pt:bytes=1000000:weights=1,3",
					       16, NULL), 0);
	int pkg[16], core[16], gpus[16];
	tp_cpu_slots sl = { pkg, core, 0 };
	tp_error err;
	ck_assert_int_eq(tp_node_place_cpus(&(tp_node_tasks){ n, g, NULL, 16 },
			1, &sl, &err), 0);
	ck_assert_double_eq_tol(sl.mims, 1e6, 1e-6);
	/* columns 0-1 | 2-3 (x = t % 4) */
	ck_assert_int_ne(pkg[0], pkg[2]);
	for (int t = 0; t < 16; t++)
		ck_assert_int_eq(pkg[t], pkg[t % 4 < 2 ? 0 : 2]);
	tp_gpusel_cost c, b;
	ck_assert_int_eq(tp_gpusel(&(tp_gpusel_request){ .on = { n, g, NULL,
			16 }, .task_package = pkg, .gpus_per_task = 1,
			.algo = TP_GPUSEL_MAGC }, gpus, &c, &err), 0);
	ck_assert_double_eq_tol(c.max_congestion_ms, 8e6 / 15.753846 / 1e6, 1e-3);
	ck_assert_int_eq(c.used, TP_GPUSEL_BISECT);
	/* the bisection alone, by name */
	enum tp_gpusel_algo a;
	ck_assert_int_eq(tp_gpusel_algo_parse("bisect", &a, NULL), 0);
	ck_assert_int_eq(a, TP_GPUSEL_BISECT);
	ck_assert_str_eq(tp_gpusel_algo_name(TP_GPUSEL_BISECT), "bisect");
	int again[16];
	ck_assert_int_eq(tp_gpusel(&(tp_gpusel_request){ .on = { n, g, NULL,
			16 }, .task_package = pkg, .gpus_per_task = 1,
			.algo = a }, again, &b, &err), 0);
	ck_assert_mem_eq(gpus, again, sizeof gpus);
	ck_assert_int_eq(b.used, TP_GPUSEL_BISECT);
	/* every GPU once; each column under one bridge of four GPUs */
	int seen[16] = { 0 };
	for (int t = 0; t < 16; t++)
		seen[gpus[t]]++;
	for (int x = 0; x < 16; x++)
		ck_assert_int_eq(seen[x], 1);
	for (int t = 0; t < 16; t++)
		ck_assert_int_eq(gpus[t] / 4, gpus[t % 4] / 4);
	/* two GPUs per task: 8 tasks, still valid and deterministic */
	int g2[16], g2b[16];
	ck_assert_int_eq(tp_gpusel(&(tp_gpusel_request){ .on = { n, g, NULL,
			8 }, .gpus_per_task = 2, .algo = TP_GPUSEL_BISECT },
			g2, &b, &err), 0);
	ck_assert_int_eq(tp_gpusel(&(tp_gpusel_request){ .on = { n, g, NULL,
			8 }, .gpus_per_task = 2, .algo = TP_GPUSEL_BISECT },
			g2b, &b, &err), 0);
	ck_assert_mem_eq(g2, g2b, sizeof g2);
	memset(seen, 0, sizeof seen);
	for (int k = 0; k < 16; k++)
		seen[g2[k]]++;
	for (int x = 0; x < 16; x++)
		ck_assert_int_eq(seen[x], 1);
	/* a task's two GPUs share a board */
	for (int t = 0; t < 8; t++)
		ck_assert_int_eq(tp_node_gpu_path(n, g2[2 * t], g2[2 * t + 1]), TP_PATH_PIX);
	/* allowed GPUs 0, 1, 4 (socket 0) and 8 (socket 1), two tasks of two
	 * GPUs: the sockets hold one such task between them, so bisect falls
	 * back to local-rank order, still valid */
	int allowed[4] = { 0, 1, 4, 8 };
	ck_assert_int_eq(tp_gpusel(&(tp_gpusel_request){ .on = { n, g, NULL,
			2 }, .allowed = allowed, .nallowed = 4,
			.gpus_per_task = 2, .algo = TP_GPUSEL_BISECT }, g2, &b,
			&err), 0);
	ck_assert_int_eq(b.used, TP_GPUSEL_LOCAL_RANK);
	int lr[4] = { 0, 1, 4, 8 };
	ck_assert_mem_eq(g2, lr, sizeof lr);
	tp_graph_destroy(g);
	tp_node_destroy(n);
}
END_TEST

/* The least maximum congestion any assignment can reach: every byte of a
 * task crosses the uplink of its own GPU, so no assignment goes below the
 * largest task traffic over the widest GPU uplink (the tasks 0..nt-1 of g,
 * all on the node). */
static double own_link_bound(const tp_node *n, const tp_graph *g)
{
	double widest = 0, most = 0;
	tp_node_part part;
	for (int p = 0; p < tp_node_nparts(n); p++) {
		ck_assert_int_eq(tp_node_part_get(n, p, &part), 0);
		if (part.kind == TP_PART_GPU &&
		    tp_node_link_bandwidth(n, part.uplink) > widest)
			widest = tp_node_link_bandwidth(n, part.uplink);
	}
	const int64_t *xadj = tp_graph_xadj(g);
	const double *w = tp_graph_weights(g);
	for (int32_t t = 0; t < tp_graph_ntasks(g); t++) {
		double v = 0;
		for (int64_t e = xadj[t]; e < xadj[t + 1]; e++)
			v += w[e];
		if (v > most)
			most = v;
	}
	return most / widest / 1e6;
}

/* Phases 2 and 3 as tp_nodes_gpu_congestion runs them, on all of n's GPUs. */
static tp_gpusel_cost phases_2_3(const tp_node *n, const tp_graph *g, int *gpus)
{
	int nt = tp_graph_ntasks(g), pkg[64], core[64];
	tp_gpusel_cost c;
	tp_error err;
	ck_assert_msg(tp_node_place_cpus(&(tp_node_tasks){ n, g, NULL, nt },
			tp_node_ncores(n) / nt, &(tp_cpu_slots){ pkg, core,
			0 }, &err) == 0, "%s", err.msg);
	ck_assert_msg(tp_gpusel(&(tp_gpusel_request){ .on = { n, g, NULL, nt },
			.task_package = pkg, .gpus_per_task = 1,
			.algo = TP_GPUSEL_MAGC }, gpus, &c, &err) == 0, "%s",
			err.msg);
	return c;
}

/* bench_peers' pcie16 case: the 4x4 stencil with 4 MiB per edge inside a
 * row and 1 MiB between rows.  An inner task sends 4 + 4 + 1 + 1 MiB, all of
 * it over its own GPU's 15.75 GB/s link: 10 MiB / 15.753846 GB/s = 0.666 ms
 * is the least any assignment can do, and phases 2 and 3 reach it.  (The
 * 0.508 ms bound is the other pattern's, 3 MB between rows and 1 MB
 * inside them, 8 MB per inner task: pcie16_bisection.) */
START_TEST(pcie16_rows_at_the_bound)
{
	tp_node *n = load("pcie16.xml", NULL);
	tp_graph *g = NULL;
	ck_assert_int_eq(tp_graph_from_stencil(&g, "4x4:5pt:bytes=1048576:weights=4,1",
					       16, NULL), 0);
	double bound = own_link_bound(n, g);
	ck_assert_double_eq_tol(bound, 10485760 / 15.753846 / 1e6, 1e-6);
	int gpus[16];
	tp_gpusel_cost c = phases_2_3(n, g, gpus);
	ck_assert_double_eq_tol(c.max_congestion_ms, bound, 1e-9);
	tp_graph_destroy(g);
	tp_node_destroy(n);
}
END_TEST

/* Cut of the parts part[0..nt) (bytes between tasks of different parts). */
static double cut_bytes(const tp_graph *g, const int *part)
{
	const int64_t *xadj = tp_graph_xadj(g);
	const int32_t *adj = tp_graph_adjncy(g);
	const double *w = tp_graph_weights(g);
	double cut = 0;
	for (int32_t t = 0; t < tp_graph_ntasks(g); t++)
		for (int64_t e = xadj[t]; e < xadj[t + 1]; e++)
			if (adj[e] > t && part[adj[e]] != part[t])
				cut += w[e];
	return cut;
}

/* The least cut over every split of the tasks in T[0..nT) into parts
 * 0..k-1 of exactly room[p] tasks (exhaustive: a few thousand splits). */
static double min_cut(const tp_graph *g, const int32_t *T, int nT, int i,
		      int *part, int *room, int k)
{
	if (i == nT)
		return cut_bytes(g, part);
	double best = HUGE_VAL;
	for (int p = 0; p < k; p++) {
		if (!room[p])
			continue;
		room[p]--;
		part[T[i]] = p;
		double c = min_cut(g, T, nT, i + 1, part, room, k);
		best = c < best ? c : best;
		room[p]++;
	}
	return best;
}

/* uneven3: 3 sockets holding 3, 4 and 2 GPUs, socket 1's four split 3 | 1
 * (a switch with a board and a GPU, and a GPU on a root port of its own).
 * The 3x3 9-point stencil, 1 MB per edge: the centre task sends 8 MB over
 * its own GPU's link, 8e6 / 15.753846 GB/s = 0.508 ms, the least any
 * assignment can do.  The greedy alone stops at 0.571, the least-cut
 * bisection at 0.762 and the Kernighan-Lin one at 0.700 (the least cut is
 * not the least congestion); the refinement by the exact cost reaches the
 * bound.  Local-rank order: 0.889.
 * The bisection splits the tasks 3 | 4 | 2 over the sockets with the least
 * cut of all 1260 such splits, and socket 1's four 3 | 1 with the least cut
 * of those. */
START_TEST(uneven3_bound_and_min_cut)
{
	tp_node *n = load("uneven3.xml", NULL);
	ck_assert_int_eq(tp_node_npackages(n), 3);
	ck_assert_int_eq(tp_node_ngpus(n), 9);
	tp_graph *g = NULL;
	ck_assert_int_eq(tp_graph_from_stencil(&g, "3x3:9pt:bytes=1000000", 9, NULL), 0);
	int gpus[9], lrg[9], bi[9];
	tp_gpusel_cost c = phases_2_3(n, g, gpus), lr, b;
	tp_error err;
	ck_assert_int_eq(tp_gpusel(&(tp_gpusel_request){ .on = { n, g, NULL,
			9 }, .gpus_per_task = 1,
			.algo = TP_GPUSEL_LOCAL_RANK }, lrg, &lr, &err), 0);
	ck_assert_double_eq_tol(own_link_bound(n, g), 8e6 / 15.753846 / 1e6, 1e-6);
	ck_assert_double_eq_tol(c.max_congestion_ms, own_link_bound(n, g), 1e-9);
	ck_assert(c.max_congestion_ms < lr.max_congestion_ms);
	int seen[9] = { 0 };
	for (int t = 0; t < 9; t++)
		seen[gpus[t]]++;
	for (int x = 0; x < 9; x++)
		ck_assert_int_eq(seen[x], 1);

	ck_assert_int_eq(tp_gpusel(&(tp_gpusel_request){ .on = { n, g, NULL,
			9 }, .gpus_per_task = 1, .algo = TP_GPUSEL_BISECT },
			bi, &b, &err), 0);
	ck_assert_int_eq(b.used, TP_GPUSEL_BISECT);
	ck_assert(b.max_congestion_ms <= lr.max_congestion_ms);
	/* the sockets: 3 | 4 | 2 tasks, the least cut */
	int sock[9], room[3] = { 3, 4, 2 }, part[9];
	int32_t all[9];
	for (int t = 0; t < 9; t++) {
		all[t] = t;
		sock[t] = tp_node_gpu_package(n, bi[t]);
	}
	ck_assert_double_eq_tol(cut_bytes(g, sock),
				min_cut(g, all, 9, 0, part, room, 3), 1e-6);
	/* socket 1: GPUs 3-5 under the switch, GPU 6 alone */
	int32_t s1[4];
	int n1 = 0, sub[9];
	for (int t = 0; t < 9; t++) {
		sub[t] = 2 + sock[t];      /* other sockets: parts of their own */
		if (sock[t] == 1) {
			s1[n1++] = t;
			sub[t] = bi[t] == 6;
		}
	}
	ck_assert_int_eq(n1, 4);
	int room1[2] = { 3, 1 };
	memcpy(part, sub, sizeof part);
	ck_assert_double_eq_tol(cut_bytes(g, sub),
				min_cut(g, s1, 4, 0, part, room1, 2), 1e-6);
	tp_graph_destroy(g);
	tp_node_destroy(n);
}
END_TEST

/* Never worse than local-rank order or closest, on a few pseudo-random
 * patterns (fixed seed). */
START_TEST(never_worse)
{
	const char *nodes[4][2] = { { "pcie16.xml", NULL },
				    { "nvl4.xml", "nvl4.links" },
				    { "dgx8.xml", "dgx8.links" },
				    { "uneven3.xml", NULL } };
	uint64_t s = 12345;
	for (int k = 0; k < 4; k++) {
		tp_node *n = load(nodes[k][0], nodes[k][1]);
		int ng = tp_node_ngpus(n);
		for (int rep = 0; rep < 20; rep++) {
			int32_t u[64], v[64];
			double b[64];
			int m = 0;
			for (int e = 0; e < 3 * ng && m < 64; e++) {
				s = s * 6364136223846793005ULL + 1442695040888963407ULL;
				int32_t x = (int32_t)((s >> 33) % (uint64_t)ng);
				int32_t y = (int32_t)((s >> 13) % (uint64_t)ng);
				if (x == y)
					continue;
				u[m] = x;
				v[m] = y;
				b[m] = (double)((s >> 40) % 1000 + 1) * 1e6;
				m++;
			}
			tp_graph *g = edges(ng, m, u, v, b);
			int gp[64];
			tp_gpusel_cost cm, cl, cc;
			int pkg[64];
			for (int i = 0; i < ng; i++)
				pkg[i] = i * tp_node_npackages(n) / ng;
			ck_assert_int_eq(tp_gpusel(&(tp_gpusel_request){
					.on = { n, g, NULL, ng },
					.task_package = pkg,
					.gpus_per_task = 1,
					.algo = TP_GPUSEL_MAGC }, gp, &cm,
					NULL), 0);
			ck_assert_int_eq(tp_gpusel(&(tp_gpusel_request){
					.on = { n, g, NULL, ng },
					.task_package = pkg,
					.gpus_per_task = 1,
					.algo = TP_GPUSEL_LOCAL_RANK }, gp,
					&cl, NULL), 0);
			ck_assert_int_eq(tp_gpusel(&(tp_gpusel_request){
					.on = { n, g, NULL, ng },
					.task_package = pkg,
					.gpus_per_task = 1,
					.algo = TP_GPUSEL_CLOSEST }, gp, &cc,
					NULL), 0);
			ck_assert(cm.max_congestion_ms <= cl.max_congestion_ms * (1 + 1e-9));
			ck_assert(cm.max_congestion_ms <= cc.max_congestion_ms * (1 + 1e-9));
			tp_graph_destroy(g);
		}
		tp_node_destroy(n);
	}
}
END_TEST

/* Phase 2 on cpu2: heavy (0,2), (1,3), light (0,1), (2,3).  The balanced
 * block start {0,1 | 2,3} cuts both heavy edges (MIMS 1e9); one swap puts
 * 0 with 2 and 1 with 3, leaving the light edges cut (MIMS 1e3). */
START_TEST(cpu2_mims)
{
	tp_node *n = load("cpu2.xml", NULL);
	int32_t u[] = { 0, 1, 0, 2 }, v[] = { 2, 3, 1, 3 };
	double b[] = { 1e9, 1e9, 1e3, 1e3 };
	tp_graph *g = edges(4, 4, u, v, b);
	int pkg[4], core[4];
	tp_cpu_slots sl = { pkg, core, 0 };
	tp_error err;
	ck_assert_int_eq(tp_node_place_cpus(&(tp_node_tasks){ n, g, NULL, 4 },
			4, &sl, &err), 0);
	ck_assert_double_eq_tol(sl.mims, 1e3, 1e-9);
	ck_assert_int_eq(pkg[0], pkg[2]);
	ck_assert_int_eq(pkg[1], pkg[3]);
	ck_assert_int_ne(pkg[0], pkg[1]);
	/* cores: each socket's two tasks take cores 0-3 / 4-7 (or 8-11 / 12-15) */
	for (int i = 0; i < 4; i++)
		ck_assert_int_eq(tp_node_core_package(n, core[i]), pkg[i]);
	ck_assert_int_ne(core[0], core[2]);
	/* no graph: the balanced block order */
	ck_assert_int_eq(tp_node_place_cpus(&(tp_node_tasks){ n, NULL, NULL,
			4 }, 4, &sl, &err), 0);
	int wp[4] = { 0, 0, 1, 1 }, wc[4] = { 0, 4, 8, 12 };
	ck_assert_mem_eq(pkg, wp, sizeof wp);
	ck_assert_mem_eq(core, wc, sizeof wc);
	/* too many */
	ck_assert_int_eq(tp_node_place_cpus(&(tp_node_tasks){ n, NULL, NULL,
			5 }, 4, &sl, &err),
			 TP_EINVAL);
	tp_assert_err_has(&err, "5 tasks x 4 cores per task do not fit");
	tp_graph_destroy(g);
	tp_node_destroy(n);
}
END_TEST


/* After GPU selection on nvl4, tasks 1 (socket 0) and 2 (socket 1) hold
 * GPUs of the other socket: their CPU slots are exchanged; MIMS (1 byte on
 * the chain 0-1-2-3) does not grow. */
START_TEST(align_cpus_with_gpus)
{
	tp_node *n = load("nvl4.xml", "nvl4.links");
	tp_graph *g = NULL;
	tp_error err;
	ck_assert_int_eq(tp_graph_from_stencil(&g, "4x1", 4, &err), 0);
	int pkg[4], core[4];
	tp_cpu_slots sl = { pkg, core, 0 };
	ck_assert_int_eq(tp_node_place_cpus(&(tp_node_tasks){ n, g, NULL, 4 },
			4, &sl, &err), 0);
	int wp[4] = { 0, 0, 1, 1 }, wc[4] = { 0, 4, 8, 12 };
	ck_assert_mem_eq(pkg, wp, sizeof wp);
	ck_assert_mem_eq(core, wc, sizeof wc);
	ck_assert_double_eq_tol(sl.mims, 1, 1e-12);
	int gpus[4] = { 0, 2, 1, 3 };
	ck_assert_int_eq(tp_node_align_cpus(&(tp_node_tasks){ n, g, NULL, 4 },
			gpus, 1, &sl, &err), 0);
	int ap[4] = { 0, 1, 0, 1 }, ac[4] = { 0, 8, 4, 12 };
	ck_assert_mem_eq(pkg, ap, sizeof ap);
	ck_assert_mem_eq(core, ac, sizeof ac);
	ck_assert_double_eq_tol(sl.mims, 1, 1e-12);
	/* a swap that would raise MIMS is not made: heavy edge (0,1) */
	tp_graph_destroy(g);
	int32_t u[] = { 0 }, v[] = { 1 };
	double b[] = { 1e9 };
	g = edges(4, 1, u, v, b);
	int p2[4] = { 0, 0, 1, 1 }, c2[4] = { 0, 4, 8, 12 };
	tp_cpu_slots sl2 = { p2, c2, 0 };
	ck_assert_int_eq(tp_node_align_cpus(&(tp_node_tasks){ n, g, NULL, 4 },
			gpus, 1, &sl2, &err), 0);
	ck_assert_mem_eq(p2, wp, sizeof wp);
	ck_assert_double_eq_tol(sl2.mims, 0, 1e-12);
	int bad[4] = { 0, 9, 1, 3 };
	ck_assert_int_eq(tp_node_align_cpus(&(tp_node_tasks){ n, g, NULL, 4 },
			bad, 1, &sl2, &err),
			 TP_EINVAL);
	tp_assert_err_has(&err, "GPU 9 outside");
	tp_graph_destroy(g);
	tp_node_destroy(n);
}
END_TEST

/* One task wider than a socket takes consecutive cores across sockets. */
START_TEST(task_wider_than_socket)
{
	tp_node *n = load("cpu2.xml", NULL);
	int pkg[1], core[1];
	tp_cpu_slots sl = { pkg, core, -1 };
	tp_error err;
	ck_assert_int_eq(tp_node_place_cpus(&(tp_node_tasks){ n, NULL, NULL,
			1 }, 16, &sl, &err), 0);
	ck_assert_int_eq(core[0], 0);
	ck_assert_int_eq(pkg[0], 0);
	ck_assert_double_eq_tol(sl.mims, 0, 1e-12);
	char buf[64];
	ck_assert_int_eq(tp_node_cpuset_string(n, core[0], 16, buf, sizeof buf), 0);
	ck_assert_str_eq(buf, "0-31");
	ck_assert_int_eq(tp_node_place_cpus(&(tp_node_tasks){ n, NULL, NULL,
			2 }, 9, &sl, &err),
			 TP_EINVAL);
	tp_assert_err_has(&err, "2 tasks x 9 cores per task do not fit");
	tp_node_destroy(n);
}
END_TEST

/* Phase 2 inside the cores a step was given: cpu2 cores {2,3,4,5} on
 * socket 0 and {8,9} on socket 1, listed in any order with a repeat.  Heavy
 * (0,3): MIMS keeps them on one socket; each task's cores are on one socket;
 * the CPU lists are those of the step's cores only.  Bad core numbers and a
 * step too small are errors. */
START_TEST(cpu2_within_step_cores)
{
	tp_node *n = load("cpu2.xml", NULL);
	int32_t u[] = { 0, 1, 2 }, v[] = { 3, 2, 3 };
	double b[] = { 1e9, 1e3, 1e3 };
	tp_graph *g = edges(3 + 1, 3, u, v, b);
	int cores[] = { 9, 2, 3, 4, 5, 8, 3 };
	int pkg[3 + 1], core[3 + 1];
	tp_cpu_slots sl = { pkg, core, 0 };
	tp_error err;
	/* 4 tasks x 1 core: socket 0 has room for 4, socket 1 for 2 */
	ck_assert_int_eq(tp_node_place_cpus_within(&(tp_node_tasks){ n, g,
			NULL, 4 }, cores, 7, 1, &sl, &err), 0);
	ck_assert_int_eq(pkg[0], pkg[3]);
	ck_assert_double_le(sl.mims, 1e3);
	int list[] = { 2, 3, 4, 5, 8, 9 };
	bool taken[6] = { false };
	for (int i = 0; i < 4; i++) {
		ck_assert_int_ge(core[i], 0);
		ck_assert_int_lt(core[i], 6);
		ck_assert(!taken[core[i]]);
		taken[core[i]] = true;
		ck_assert_int_eq(tp_node_core_package(n, list[core[i]]), pkg[i]);
	}
	/* 2 tasks x 2 cores: a task's two cores share a socket */
	ck_assert_int_eq(tp_node_place_cpus_within(&(tp_node_tasks){ n, NULL,
			NULL, 3 }, cores, 7, 2, &sl, &err), 0);
	for (int i = 0; i < 3; i++)
		ck_assert_int_eq(tp_node_core_package(n, list[core[i] + 1]), pkg[i]);
	char buf[64];
	ck_assert_int_eq(tp_node_cpuset_string_cores(n, list + core[2], 2, buf,
						     sizeof buf), 0);
	ck_assert_str_eq(buf, "8-9,24-25");
	int odd[] = { 9, 2 };
	ck_assert_int_eq(tp_node_cpuset_string_cores(n, odd, 2, buf, sizeof buf), 0);
	ck_assert_str_eq(buf, "2,9,18,25");
	/* errors */
	ck_assert_int_eq(tp_node_place_cpus_within(&(tp_node_tasks){ n, NULL,
			NULL, 4 }, cores, 7, 2, &sl, &err), TP_EINVAL);
	tp_assert_err_has(&err, "4 tasks x 2 cores per task do not fit in the 6 "
			  "allowed cores of");
	int bad[] = { 3, 16 };
	ck_assert_int_eq(tp_node_place_cpus_within(&(tp_node_tasks){ n, NULL,
			NULL, 1 }, bad, 2, 1, &sl, &err), TP_EINVAL);
	tp_assert_err_has(&err, "core 16 outside");
	ck_assert_int_eq(tp_node_cpuset_string_cores(n, bad, 2, buf, sizeof buf),
			 TP_EINVAL);
	tp_graph_destroy(g);
	tp_node_destroy(n);
}
END_TEST

/* Traffic to other nodes leaves through the network card: on nvl4 (card
 * on socket 0's GPU switch) a task whose traffic all goes to another node
 * gets GPU0 rather than GPU2, whose way to the card crosses the socket
 * link; the card's route is counted in the cost.  Without a card (duo)
 * that traffic is ignored. */
START_TEST(remote_traffic_to_the_nic)
{
	tp_node *n = load("nvl4.xml", "nvl4.links");
	int32_t u[] = { 0 }, v[] = { 5 };
	double b[] = { 1e9 };
	tp_graph *g = edges(8, 1, u, v, b);
	int32_t tasks[1] = { 0 };
	int allowed[2] = { 2, 0 };
	int gpus[1];
	tp_gpusel_cost c;
	tp_error err;
	ck_assert_int_eq(tp_gpusel(&(tp_gpusel_request){ .on = { n, g, tasks,
			1 }, .allowed = allowed, .nallowed = 2,
			.gpus_per_task = 1, .algo = TP_GPUSEL_MAGC }, gpus, &c,
			&err), 0);
	ck_assert_int_eq(gpus[0], 0);
	/* 1 GB over the slowest link of the way (15.75 GB/s PCIe) */
	ck_assert_double_eq_tol(c.max_congestion_ms, 1e9 / 15.753846 / 1e6, 1e-3);
	ck_assert(c.nic_weighted_ms > 0);
	ck_assert_double_eq_tol(c.weighted_ms, 0, 1e-12);
	/* closest to a task on socket 1 is GPU2: the socket link carries the
	 * gigabyte */
	int pkg[1] = { 1 };
	ck_assert_int_eq(tp_gpusel(&(tp_gpusel_request){ .on = { n, g, tasks,
			1 }, .task_package = pkg, .allowed = allowed,
			.nallowed = 2, .gpus_per_task = 1,
			.algo = TP_GPUSEL_CLOSEST }, gpus, &c, &err), 0);
	ck_assert_int_eq(gpus[0], 2);
	ck_assert_double_eq_tol(c.max_congestion_ms, 100, 1e-6);
	tp_node_destroy(n);
	n = load("duo.xml", NULL);
	int al2[2] = { 1, 0 };
	ck_assert_int_eq(tp_gpusel(&(tp_gpusel_request){ .on = { n, g, tasks,
			1 }, .allowed = al2, .nallowed = 2, .gpus_per_task = 1,
			.algo = TP_GPUSEL_MAGC }, gpus, &c, &err), 0);
	ck_assert_double_eq_tol(c.max_congestion_ms, 0, 1e-12);
	ck_assert_double_eq_tol(c.nic_weighted_ms, 0, 1e-12);
	tp_graph_destroy(g);
	tp_node_destroy(n);
}
END_TEST

/* Rails (tp__gpus_by_rail) on dgx8r, a DGX H100-like node: GPU i shares a
 * PCIe switch with its own card; the storage card NIC4 is nearest no GPU,
 * so the rails are NIC0-3 and NIC5-8, GPU i's card the i-th of them. */
START_TEST(rails_dgx)
{
	tp_node *n = load("dgx8r.xml", NULL);
	tp_error err;
	tp_error_clear(&err);
	ck_assert_int_eq(tp_node_nnics(n), 9);
	ck_assert_int_eq(tp_node_gpu_nic(n, 3), 3);
	ck_assert_int_eq(tp_node_gpu_nic(n, 4), 5);
	int gpus[8];
	/* the step's GPUs in any order: local rank k gets GPU k (rail k) */
	int all[] = { 7, 6, 5, 4, 3, 2, 1, 0 };
	ck_assert_int_eq(tp__gpus_by_rail(n, all, 8, 8, 8, gpus, &err), 0);
	for (int k = 0; k < 8; k++)
		ck_assert_int_eq(gpus[k], k);
	/* four tasks on GPUs 4-7 (the second half of the node): ranks 0-3
	 * want rails 0-3, which the step lacks: all four off their rail,
	 * the lowest free GPUs in rank order */
	int half[] = { 4, 5, 6, 7 };
	ck_assert_int_eq(tp__gpus_by_rail(n, half, 4, 8, 4, gpus, &err), 4);
	for (int k = 0; k < 4; k++)
		ck_assert_int_eq(gpus[k], 4 + k);
	/* Rails=4 on an 8-card node: its GPUs give 8 rails, refused */
	ck_assert_int_eq(tp__gpus_by_rail(n, all, 8, 4, 8, gpus, &err), TP_ENOENT);
	tp_assert_err_has(&err, "nearest to 8 network cards, the network has Rails=4");
	/* too few GPUs for the tasks */
	ck_assert_int_eq(tp__gpus_by_rail(n, half, 4, 8, 5, gpus, &err), TP_EINVAL);
	tp_node_destroy(n);
	/* dgx8: two GPUs a card, four cards: Rails=4 works, ranks 0-3 on
	 * GPUs 0, 2, 4, 6 (one a card), ranks 4-7 on their pairs */
	n = load("dgx8.xml", NULL);
	ck_assert_int_eq(tp__gpus_by_rail(n, all, 8, 4, 8, gpus, &err), 0);
	int want[] = { 0, 2, 4, 6, 1, 3, 5, 7 };
	for (int k = 0; k < 8; k++)
		ck_assert_int_eq(gpus[k], want[k]);
	ck_assert_int_eq(tp__gpus_by_rail(n, all, 8, 8, 8, gpus, &err), TP_ENOENT);
	tp_node_destroy(n);
	/* no card at all: uneven3 */
	n = load("uneven3.xml", NULL);
	ck_assert_int_eq(tp__gpus_by_rail(n, all, 8, 8, 8, gpus, &err), TP_ENOENT);
	tp_assert_err_has(&err, "has no network card in its model");
	tp_node_destroy(n);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("gpusel");
	TCase *tc = tcase_create("gpusel");
	tcase_set_timeout(tc, 30);
	tcase_add_test(tc, nvl4_heavy_pairs_on_nvlink);
	tcase_add_test(tc, nvl4_two_gpus_per_task);
	tcase_add_test(tc, nvl4_allowed_subset);
	tcase_add_test(tc, gpusel_errors);
	tcase_add_test(tc, pcie16_pairs_on_boards);
	tcase_add_test(tc, pcie16_bisection);
	tcase_add_test(tc, pcie16_rows_at_the_bound);
	tcase_add_test(tc, uneven3_bound_and_min_cut);
	tcase_add_test(tc, never_worse);
	tcase_add_test(tc, cpu2_mims);
	tcase_add_test(tc, align_cpus_with_gpus);
	tcase_add_test(tc, task_wider_than_socket);
	tcase_add_test(tc, cpu2_within_step_cores);
	tcase_add_test(tc, remote_traffic_to_the_nic);
	tcase_add_test(tc, rails_dgx);
	suite_add_tcase(s, tc);
	return tp_test_run(s);
}
