/* Unit tests: policy layer, baselines and hostfiles (core/src/map/place*.c). */
#include <sys/stat.h>
#include <unistd.h>

#include "testutil.h"
#include "input/alloc_internal.h"
#include "map/place_internal.h"
#include "pattern/pattern_internal.h"
#include <topoplace/conf.h>
#include <topoplace/hostfile.h>

static tp_conf *conf4x4(void)
{
	tp_conf *c = NULL;
	tp_error err;
	ck_assert_msg(tp_conf_load_string("Network=torus Dims=4x4 Wrap=yes\n"
					  "NodeName=n[0-15] CoordOrder=x-major\n",
					  "t.conf", &c, &err) == 0, "%s", err.msg);
	return c;
}

START_TEST(policy_names)
{
	enum tp_policy p;
	tp_error err;
	const char *names[] = { "none", "geometric", "block", "cyclic", "random", "zorder" };
	for (size_t i = 0; i < 6; i++) {
		ck_assert_int_eq(tp_policy_parse(names[i], &p, NULL), 0);
		ck_assert_str_eq(tp_policy_name(p), names[i]);
	}
	ck_assert_int_eq(tp_policy_parse("GEOMETRIC", &p, NULL), 0);
	ck_assert_int_eq(p, TP_POLICY_GEOMETRIC);
	ck_assert_int_eq(tp_policy_parse("fastest", &p, &err), TP_EINVAL);
	tp_assert_err_has(&err, "unknown policy 'fastest'");
	tp_assert_err_has(&err, "zorder");
}
END_TEST

START_TEST(block_cyclic_random)
{
	tp_conf *c = conf4x4();
	tp_alloc *a = NULL;
	ck_assert_int_eq(tp_alloc_from_hostlist(tp_conf_machine(c), "n[0-3]", 1, "t", &a, NULL), 0);
	ck_assert_int_eq(tp_alloc_set_slots_spec(a, "3,1,2,2", NULL), 0);
	int32_t map[8];
	ck_assert_int_eq(tp_map_block(a, 8, map, NULL), 0);
	int32_t block[] = { 0, 0, 0, 1, 2, 2, 3, 3 };
	ck_assert_mem_eq(map, block, sizeof block);
	ck_assert_int_eq(tp_map_cyclic(a, 8, map, NULL), 0);
	int32_t cyc[] = { 0, 1, 2, 3, 0, 2, 3, 0 };
	ck_assert_mem_eq(map, cyc, sizeof cyc);
	/* fewer tasks than slots */
	ck_assert_int_eq(tp_map_block(a, 5, map, NULL), 0);
	ck_assert_int_eq(map[4], 2);
	/* too many */
	tp_error err;
	ck_assert_int_eq(tp_map_block(a, 9, map, &err), TP_EINVAL);
	tp_assert_err_has(&err, "8 slots");
	/* random: a valid permutation of the slots, seeded and repeatable */
	int32_t r1[8], r2[8], r3[8];
	ck_assert_int_eq(tp_map_random(a, 8, 42, r1, NULL), 0);
	ck_assert_int_eq(tp_map_random(a, 8, 42, r2, NULL), 0);
	ck_assert_int_eq(tp_map_random(a, 8, 43, r3, NULL), 0);
	ck_assert_mem_eq(r1, r2, sizeof r1);
	int cnt[4] = { 0 };
	for (int t = 0; t < 8; t++)
		cnt[r1[t]]++;
	ck_assert_int_eq(cnt[0], 3);
	ck_assert_int_eq(cnt[1], 1);
	ck_assert_int_eq(cnt[2], 2);
	ck_assert_int_eq(cnt[3], 2);
	ck_assert(memcmp(r1, r3, sizeof r1) != 0);
	tp_alloc_destroy(a);
	tp_conf_destroy(c);
}
END_TEST

START_TEST(zorder_follows_morton_after_shift)
{
	tp_conf *c = conf4x4();
	tp_alloc *a = NULL;
	/* a 2x2 block across the x seam, listed in reverse: x in {3,0}, y {0,1};
	 * after the shift x=3 is the low side, so Morton order is
	 * (3,0) (0,0) (3,1) (0,1) = n3, n0, n7, n4 */
	ck_assert_int_eq(tp_alloc_from_hostlist(tp_conf_machine(c), "n4,n7,n0,n3", 1, "t", &a, NULL), 0);
	int32_t map[4];
	ck_assert_int_eq(tp_map_zorder(a, 4, map, NULL), 0);
	const char *want[] = { "n3", "n0", "n7", "n4" };
	for (int t = 0; t < 4; t++)
		ck_assert_str_eq(tp_machine_node_name(tp_conf_machine(c), tp_alloc_node(a, map[t])),
				 want[t]);
	tp_alloc_destroy(a);
	tp_conf_destroy(c);
}
END_TEST

START_TEST(place_dispatch)
{
	tp_conf *c = conf4x4();
	tp_alloc *a = NULL;
	ck_assert_int_eq(tp_alloc_from_hostlist(tp_conf_machine(c), "n[0-15]", 1, "t", &a, NULL), 0);
	tp_graph *g = NULL;
	ck_assert_int_eq(tp_graph_from_stencil(&g, "4x4:5pt:periodic=all", 16, NULL), 0);
	tp_place_opts o;
	tp_place_opts_default(&o);
	ck_assert_int_eq(o.policy, TP_POLICY_GEOMETRIC);
	int32_t map[16];
	tp_geom_report rep;
	ck_assert_int_eq(tp_place(g, a, &o, map, &rep, NULL), 0);
	tp_metrics mt;
	ck_assert_int_eq(tp_metrics_compute(g, a, map, true, &mt, NULL), 0);
	ck_assert_double_eq(mt.avg_hop_bytes, 1.0);   /* whole torus: optimal */
	ck_assert_int_gt(rep.variants_scored, 0);
	o.policy = TP_POLICY_CYCLIC;
	ck_assert_int_eq(tp_place(g, a, &o, map, &rep, NULL), 0);
	ck_assert_int_eq(rep.variants_scored, 0);
	tp_graph_destroy(g);
	tp_alloc_destroy(a);
	tp_conf_destroy(c);
}
END_TEST

/* auto on a graph of over 2^20 edges scores Slurm's block order on a
 * second thread while geometric runs: the same score to the bit as
 * scoring it alone, and the kept mapping is the better one. */
START_TEST(auto_scores_block_beside_geometric)
{
	tp_conf *c = NULL;
	tp_error err;
	ck_assert_int_eq(tp_conf_load_string("Network=torus Dims=32x32x32 Wrap=yes\n"
					     "NodeName=n[0-32767] CoordOrder=z-major\n",
					     "big.conf", &c, &err), 0);
	tp_alloc *a = NULL;
	ck_assert_int_eq(tp_alloc_from_hostlist(tp_conf_machine(c), "n[0-32767]", 12,
						"t", &a, &err), 0);
	tp_graph *g = NULL;
	ck_assert_int_eq(tp_graph_from_stencil(&g, "96x64x64:7pt", 0, &err), 0);
	ck_assert_int_ge(tp_graph_nedges(g), (int64_t)1 << 20);
	int32_t n = tp_graph_ntasks(g);
	int32_t *map = malloc(sizeof(int32_t) * (size_t)n);
	int32_t *blk = malloc(sizeof(int32_t) * (size_t)n);
	tp_place_opts o;
	tp_place_opts_default(&o);
	o.policy = TP_POLICY_AUTO;
	o.geom.time_budget_ms = 1;   /* block and geometric only */
	tp_place_report rep;
	ck_assert_int_eq(tp_place_ex(g, a, &o, map, &rep, &err), 0);
	ck_assert_str_eq(rep.cand[0].name, "block");
	ck_assert(rep.cand[0].ran);
	ck_assert_int_eq(tp_map_block(a, n, blk, &err), 0);
	ck_assert(rep.cand[0].score == tp_metrics_hop_bytes(g, a, blk));
	ck_assert_str_eq(rep.cand[1].name, "geometric");
	ck_assert(rep.cand[1].ran);
	ck_assert_int_eq(rep.best, 1);
	ck_assert(rep.cand[1].score < rep.cand[0].score);
	ck_assert(rep.cand[1].score == tp_metrics_hop_bytes(g, a, map));
	free(map);
	free(blk);
	tp_graph_destroy(g);
	tp_alloc_destroy(a);
	tp_conf_destroy(c);
}
END_TEST

/* Large hostfiles have their second half formatted on a second thread:
 * every line as one loop writes it, in rank order. */
START_TEST(hostfile_large_in_order)
{
	tp_conf *c = NULL;
	tp_error err;
	ck_assert_int_eq(tp_conf_load_string("Network=mesh Dims=64x64\n"
					     "NodeName=n[0-4094] CoordOrder=x-major\n"
					     "NodeName=login1 Coords=63,63\n",
					     "big.conf", &c, &err), 0);
	tp_alloc *a = NULL;
	ck_assert_int_eq(tp_alloc_from_hostlist(tp_conf_machine(c), "login1,n[0-4094]",
						80, "t", &a, &err), 0);
	enum { T = 300001 };
	int32_t *map = malloc(sizeof(int32_t) * T);
	for (int32_t t = 0; t < T; t++)
		map[t] = (int32_t)(((int64_t)t * 7919) % 4096);
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	ck_assert_int_eq(tp_hostfile_write(f, a, map, T), 0);
	fclose(f);
	const char *at = buf;
	for (int32_t t = 0; t < T; t++) {
		const char *name = tp_machine_node_name(tp_conf_machine(c),
							tp_alloc_node(a, map[t]));
		size_t n = strlen(name);
		ck_assert_msg(!strncmp(at, name, n) && at[n] == '\n',
			      "rank %d: '%.20s', want %s", t, at, name);
		at += n + 1;
	}
	ck_assert_uint_eq((size_t)(at - buf), len);
	free(buf);
	free(map);
	tp_alloc_destroy(a);
	tp_conf_destroy(c);
}
END_TEST

START_TEST(hostfile_roundtrip_and_errors)
{
	tp_conf *c = conf4x4();
	tp_alloc *a = NULL;
	ck_assert_int_eq(tp_alloc_from_hostlist(tp_conf_machine(c), "n[0-3]", 2, "t", &a, NULL), 0);
	int32_t map[8] = { 3, 3, 0, 1, 2, 0, 1, 2 };
	char dir[] = "/tmp/tp-hf-XXXXXX";
	ck_assert_ptr_nonnull(mkdtemp(dir));
	char path[256];
	snprintf(path, sizeof path, "%s/hosts", dir);
	tp_error err;
	ck_assert_int_eq(tp_hostfile_write_path(path, a, map, 8, &err), 0);
	FILE *f = fopen(path, "r");
	char line[64];
	ck_assert_ptr_nonnull(fgets(line, sizeof line, f));
	ck_assert_str_eq(line, "n3\n");
	fclose(f);
	int32_t *back = NULL, n = 0;
	ck_assert_int_eq(tp_hostfile_read(path, a, false, &back, &n, &err), 0);
	ck_assert_int_eq(n, 8);
	ck_assert_mem_eq(back, map, sizeof map);
	free(back);
	/* comma-separated with comments; set_slots takes the counts found */
	char *p2 = tp_test_tmpfile("# job hosts\nn0,n0,n0\nn2 # last\n");
	ck_assert_int_eq(tp_hostfile_read(p2, a, true, &back, &n, &err), 0);
	ck_assert_int_eq(n, 4);
	ck_assert_int_eq(tp_alloc_slots(a, 0), 3);
	ck_assert_int_eq(tp_alloc_slots(a, 1), 0);
	ck_assert_int_eq(tp_alloc_total_slots(a), 4);
	free(back);
	/* too many on a node when slots are fixed */
	ck_assert_int_eq(tp_alloc_set_slots_spec(a, "2(x4)", NULL), 0);
	ck_assert_int_eq(tp_hostfile_read(p2, a, false, &back, &n, &err), TP_EINVAL);
	tp_assert_err_has(&err, "more than its 2 slots");
	unlink(p2);
	free(p2);
	/* a node outside the allocation, an empty file, a missing file */
	char *p3 = tp_test_tmpfile("n0\nn9\n");
	ck_assert_int_eq(tp_hostfile_read(p3, a, false, &back, &n, &err), TP_EINVAL);
	tp_assert_err_has(&err, ":2: node 'n9' is not in the allocation");
	unlink(p3);
	free(p3);
	char *p4 = tp_test_tmpfile("\n# nothing\n");
	ck_assert_int_eq(tp_hostfile_read(p4, a, false, &back, &n, &err), TP_EINVAL);
	tp_assert_err_has(&err, "empty hostfile");
	unlink(p4);
	free(p4);
	ck_assert_int_eq(tp_hostfile_read("/nonexistent/hosts", a, false, &back, &n, &err), TP_ENOENT);
	tp_assert_err_has(&err, "/nonexistent/hosts");
	/* writing into a missing directory fails cleanly, leaving nothing */
	ck_assert_int_eq(tp_hostfile_write_path("/nonexistent/dir/h", a, map, 8, &err), TP_EIO);
	tp_assert_err_has(&err, "/nonexistent/dir/h");
	unlink(path);
	ck_assert_int_eq(rmdir(dir), 0);   /* no temporary file left behind */
	tp_alloc_destroy(a);
	tp_conf_destroy(c);
}
END_TEST

/* Coordinates that contradict the edges: geometric would put the talking
 * pairs apart, so tp_place keeps Slurm's block order instead. */
START_TEST(geometric_never_worse_than_block)
{
	tp_conf *c = conf4x4();
	tp_alloc *a = NULL;
	ck_assert_int_eq(tp_alloc_from_hostlist(tp_conf_machine(c), "n[0-1]", 2, "t", &a, NULL), 0);
	tp_graph *g = NULL;
	const char *json = "{\"tasks\":4,\"edges\":[[0,1,100],[2,3,100]],"
			   "\"coords\":[[0],[2],[1],[3]]}";
	tp_error err;
	ck_assert_msg(tp_graph_from_json_string(&g, json, strlen(json), "adv", 4, &err) == 0,
		      "%s", err.msg);
	tp_place_opts o;
	tp_place_opts_default(&o);
	int32_t map[4];
	tp_geom_report rep;
	ck_assert_int_eq(tp_place(g, a, &o, map, &rep, NULL), 0);
	ck_assert(rep.default_kept);
	ck_assert_double_eq(tp_metrics_hop_bytes(g, a, map), 0.0);
	/* the geometric mapper alone would have split the pairs */
	ck_assert_int_eq(tp_geom_map(g, a, &o.geom, map, NULL, NULL), 0);
	ck_assert(tp_metrics_hop_bytes(g, a, map) > 0.0);
	tp_graph_destroy(g);
	tp_alloc_destroy(a);
	tp_conf_destroy(c);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("place");
	TCase *tc = tcase_create("place");
	tcase_add_test(tc, policy_names);
	tcase_add_test(tc, block_cyclic_random);
	tcase_add_test(tc, zorder_follows_morton_after_shift);
	tcase_add_test(tc, place_dispatch);
	tcase_add_test(tc, hostfile_roundtrip_and_errors);
	tcase_add_test(tc, hostfile_large_in_order);
	tcase_add_test(tc, auto_scores_block_beside_geometric);
	tcase_add_test(tc, geometric_never_worse_than_block);
	suite_add_tcase(s, tc);
	return tp_test_run(s);
}
