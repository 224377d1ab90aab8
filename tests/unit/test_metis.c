/* Unit tests: METIS loaded at run time (core/src/map/metis_load.c), as the SPANK
 * plugin does on compute nodes.  This binary is linked with a copy of
 * metis_load.c built with TP_METIS_DLOPEN and a library name that does not
 * exist (Makefile), so it sees a node without libmetis5: policy auto goes
 * on without the blocks and hierarchical candidates, policy hierarchical
 * fails with one line, and bipartition and policy graph, which split with
 * their own partitioner, work as anywhere. */
#include <metis.h>

#include <topoplace/conf.h>
#include <topoplace/job.h>
#include "map/block_map.h"
#include "map/metis_load.h"
#include "map/metis_split.h"
#include "testutil.h"
#include "map/graphmap_internal.h"
#include "map/place_internal.h"
#include "net/machine_internal.h"

static tp_conf *torus4x4(void)
{
	tp_conf *c = NULL;
	tp_error err;
	ck_assert_msg(tp_conf_load_string("Network=torus Dims=4x4 Wrap=yes\n"
					  "NodeName=n[0-15] CoordOrder=x-major\n",
					  "t.conf", &c, &err) == 0, "%s", err.msg);
	return c;
}

/* A ring of 8 vertices split in two: dlopen()ed METIS gives what the
 * linked one gives. */
START_TEST(loaded_metis_matches_linked)
{
	struct tp__metis m;
	tp_error err;
	ck_assert_msg(tp__metis_load(&m, "libmetis.so.5", &err) == 0, "%s", err.msg);
	ck_assert_ptr_nonnull(m.handle);
	idx_t xadj[9], adj[16];
	for (int i = 0; i < 8; i++) {
		xadj[i] = 2 * i;
		adj[2 * i] = (i + 7) % 8;
		adj[2 * i + 1] = (i + 1) % 8;
	}
	xadj[8] = 16;
	idx_t nv = 8, ncon = 1, np = 2, cut1 = 0, cut2 = 0, o1[METIS_NOPTIONS],
	      o2[METIS_NOPTIONS], p1[8], p2[8];
	ck_assert_int_eq(m.set_default_options(o1), METIS_OK);
	ck_assert_int_eq(METIS_SetDefaultOptions(o2), METIS_OK);
	o1[METIS_OPTION_SEED] = o2[METIS_OPTION_SEED] = 1;
	ck_assert_int_eq(m.part_graph_recursive(&nv, &ncon, xadj, adj, NULL, NULL,
						NULL, &np, NULL, NULL, o1, &cut1, p1),
			 METIS_OK);
	ck_assert_int_eq(METIS_PartGraphRecursive(&nv, &ncon, xadj, adj, NULL, NULL,
						  NULL, &np, NULL, NULL, o2, &cut2, p2),
			 METIS_OK);
	ck_assert_int_eq(cut1, 2);
	ck_assert_int_eq(cut1, cut2);
	ck_assert_mem_eq(p1, p2, sizeof p1);
	tp__metis_close(&m);
	ck_assert_ptr_null(m.handle);
}
END_TEST

START_TEST(missing_library_is_one_line)
{
	struct tp__metis m;
	tp_error err;
	ck_assert_int_eq(tp__metis_load(&m, "libtopoplace-no-such-metis.so.5", &err),
			 TP_ENOMETIS);
	ck_assert_ptr_null(m.part_graph_recursive);
	ck_assert_msg(!strncmp(err.msg, TP__METIS_MISSING " (", strlen(TP__METIS_MISSING) + 2),
		      "%s", err.msg);
	tp_assert_err_has(&err, "libtopoplace-no-such-metis.so.5");
	ck_assert_ptr_null(strchr(err.msg, '\n'));
	/* a library without METIS's functions */
	ck_assert_int_eq(tp__metis_load(&m, "libm.so.6", &err), TP_ENOMETIS);
	tp_assert_err_has(&err, TP__METIS_MISSING " (libm.so.6 lacks METIS_PartGraphRecursive)");
	/* this binary's tp__metis_open is the plugin's, on a node without it */
	ck_assert_int_eq(tp__metis_open(&m, &err), TP_ENOMETIS);
	tp_assert_err_has(&err, TP__METIS_MISSING);
}
END_TEST

/* One split into parts of exact sizes (metis_split.c): a part of size 0
 * gets no task (METIS is not asked for it), every other exactly its size;
 * a deadline already past leaves the parts in order (TP_ETIME), and a
 * subset's tasks are told apart from the others by T[local[t]]. */
START_TEST(split_exact_sizes)
{
	struct tp__metis m;
	tp_error err;
	ck_assert_msg(tp__metis_load(&m, "libmetis.so.5", &err) == 0, "%s", err.msg);
	tp_graph *g = NULL;
	ck_assert_int_eq(tp_graph_from_stencil(&g, "4x3:5pt", 12, NULL), 0);
	int32_t T[12], local[12];
	for (int32_t i = 0; i < 12; i++)
		T[i] = local[i] = i;
	struct tp__metis_sub sub = { g, T, 12, local };
	const int64_t want[4] = { 5, 0, 4, 3 };
	idx_t part[12];
	struct tp__metis_split s = { &m, 1, 0, METIS_OK };
	ck_assert_int_eq(tp__metis_split_exact(&s, &sub, want, 4, part), 0);
	ck_assert_int_eq(s.metis_rc, METIS_OK);
	int64_t cnt[4] = { 0 };
	for (int i = 0; i < 12; i++) {
		ck_assert(part[i] >= 0 && part[i] < 4);
		cnt[part[i]]++;
	}
	for (int p = 0; p < 4; p++)
		ck_assert_int_eq(cnt[p], want[p]);
	/* a deadline already past: nothing cut, the parts in order */
	s.deadline = 1;
	ck_assert_int_eq(tp__metis_split_exact(&s, &sub, want, 4, part), TP_ETIME);
	const idx_t in_order[12] = { 0, 0, 0, 0, 0, 2, 2, 2, 2, 3, 3, 3 };
	ck_assert_mem_eq(part, in_order, sizeof part);
	/* the first row and the third (tasks 0-3, 8-11) in two parts of 4;
	 * local[] of the row left out still holds its own indices */
	int32_t T2[8] = { 0, 1, 2, 3, 8, 9, 10, 11 };
	for (int32_t i = 0; i < 8; i++)
		local[T2[i]] = i;
	struct tp__metis_sub sub2 = { g, T2, 8, local };
	const int64_t half[2] = { 4, 4 };
	s.deadline = 0;
	ck_assert_int_eq(tp__metis_split_exact(&s, &sub2, half, 2, part), 0);
	/* the rows are apart: each part one whole row */
	for (int i = 1; i < 4; i++) {
		ck_assert_int_eq(part[i], part[0]);
		ck_assert_int_eq(part[4 + i], part[4]);
	}
	ck_assert_int_ne(part[0], part[4]);
	tp_graph_destroy(g);
	tp__metis_close(&m);
}
END_TEST

START_TEST(policies_without_metis)
{
	tp_conf *c = torus4x4();
	tp_alloc *a = NULL;
	tp_graph *g = NULL;
	tp_error err;
	ck_assert_int_eq(tp_alloc_from_hostlist(tp_conf_machine(c), "n[0-15]", 1, "t",
						&a, NULL), 0);
	ck_assert_int_eq(tp_graph_from_stencil(&g, "4x4:5pt", 16, NULL), 0);
	int32_t map[16];
	/* neither bipartition nor greedy needs METIS */
	ck_assert_msg(tp_graphmap_bipartition(g, a, NULL, map, &err) == 0, "%s", err.msg);
	ck_assert_int_eq(tp_mapping_validate(g, a, map, NULL), 0);
	ck_assert_int_eq(tp_graphmap_greedy(g, a, NULL, map, NULL), 0);

	tp_place_opts o;
	tp_place_opts_default(&o);
	tp_place_report r;
	o.policy = TP_POLICY_AUTO;
	ck_assert_msg(tp_place_ex(g, a, &o, map, &r, &err) == 0, "%s", err.msg);
	int bip = -1;
	for (int i = 0; i < r.ncandidates; i++)
		if (!strcmp(r.cand[i].name, "bipartition"))
			bip = i;
	ck_assert_int_ge(bip, 0);
	ck_assert(r.cand[bip].ran);
	ck_assert(r.cand[r.best].ran);
	ck_assert_int_eq(tp_mapping_validate(g, a, map, NULL), 0);

	o.policy = TP_POLICY_GRAPH;
	ck_assert_msg(tp_place_ex(g, a, &o, map, &r, &err) == 0, "%s", err.msg);
	ck_assert_int_eq(tp_mapping_validate(g, a, map, NULL), 0);
	tp_graph_destroy(g);
	tp_alloc_destroy(a);
	tp_conf_destroy(c);
}
END_TEST

/* A block network: the blocks candidate partitions with METIS too, so on a
 * node without it auto skips that candidate (the note says why) and still
 * places the job. */
START_TEST(blocks_without_metis)
{
	tp_machine *m = NULL;
	tp_error err;
	ck_assert_msg(tp_machine_from_blocks(&m, "BlockName=b0 Nodes=n[0-3]\n"
					     "BlockName=b1 Nodes=n[4-7]\n",
					     "block.conf", NULL, &err) == 0, "%s", err.msg);
	tp_alloc *a = NULL;
	tp_graph *g = NULL;
	ck_assert_int_eq(tp_alloc_from_hostlist(m, "n[1-6]", 2, "t", &a, NULL), 0);
	ck_assert_int_eq(tp_graph_from_stencil(&g, "4x3:5pt", 12, NULL), 0);
	int32_t map[12];
	ck_assert_int_eq(tp__block_map(g, a, 1, map, &err), TP_ENOMETIS);
	tp_assert_err_has(&err, TP__METIS_MISSING);
	tp_place_opts o;
	tp_place_opts_default(&o);
	o.policy = TP_POLICY_AUTO;
	tp_place_report r;
	ck_assert_msg(tp_place_ex(g, a, &o, map, &r, &err) == 0, "%s", err.msg);
	int blk = -1;
	for (int i = 0; i < r.ncandidates; i++)
		if (!strcmp(r.cand[i].name, "blocks"))
			blk = i;
	ck_assert_int_ge(blk, 0);
	ck_assert(!r.cand[blk].ran);
	ck_assert_str_eq(r.cand[blk].note, "skipped: " TP__METIS_MISSING);
	ck_assert_int_eq(tp_mapping_validate(g, a, map, NULL), 0);
	tp_graph_destroy(g);
	tp_alloc_destroy(a);
	tp_machine_destroy(m);
}
END_TEST

/* A switch tree: the hierarchical candidate splits with METIS, so on a
 * node without it auto skips that candidate (the note says why) and still
 * places the job; policy hierarchical fails with the one line, before any
 * work. */
START_TEST(hierarchical_without_metis)
{
	tp_machine *m = NULL;
	tp_error err;
	ck_assert_msg(tp_machine_from_topology(&m, "SwitchName=l0 Nodes=n[0-3]\n"
					       "SwitchName=l1 Nodes=n[4-7]\n"
					       "SwitchName=top Switches=l[0-1]\n",
					       "topology.conf", NULL, 0, &err) == 0,
		      "%s", err.msg);
	tp_alloc *a = NULL;
	tp_graph *g = NULL;
	ck_assert_int_eq(tp_alloc_from_hostlist(m, "n[1-6]", 2, "t", &a, NULL), 0);
	ck_assert_int_eq(tp_graph_from_stencil(&g, "4x3:5pt", 12, NULL), 0);
	int32_t map[12];
	ck_assert_int_eq(tp_graphmap_hierarchical(g, a, NULL, map, &err), TP_ENOMETIS);
	tp_assert_err_has(&err, TP__METIS_MISSING);
	tp_place_opts o;
	tp_place_opts_default(&o);
	o.policy = TP_POLICY_AUTO;
	tp_place_report r;
	ck_assert_msg(tp_place_ex(g, a, &o, map, &r, &err) == 0, "%s", err.msg);
	int hier = -1;
	for (int i = 0; i < r.ncandidates; i++)
		if (!strcmp(r.cand[i].name, "hierarchical"))
			hier = i;
	ck_assert_int_ge(hier, 0);
	ck_assert(!r.cand[hier].ran);
	ck_assert_str_eq(r.cand[hier].note, "skipped: " TP__METIS_MISSING);
	ck_assert(r.cand[r.best].ran);
	ck_assert_int_eq(tp_mapping_validate(g, a, map, NULL), 0);
	o.policy = TP_POLICY_HIERARCHICAL;
	ck_assert_int_eq(tp_place_ex(g, a, &o, map, &r, &err), TP_ENOMETIS);
	tp_assert_err_has(&err, TP__METIS_MISSING);
	ck_assert_int_eq(r.ncandidates, 0);
	tp_graph_destroy(g);
	tp_alloc_destroy(a);
	tp_machine_destroy(m);
}
END_TEST

/* What the plugin sees: the job's error line for hierarchical, a
 * placement with the note in the candidate list for auto, and policy graph
 * placed as anywhere. */
START_TEST(job_without_metis)
{
	tp_conf *c = NULL;
	tp_error err;
	ck_assert_msg(tp_conf_load_string("Network=dragonfly Groups=4 RoutersPerGroup=2 "
					  "NodesPerRouter=2 LinksPerGroupPair=1\n"
					  "NodeName=n[0-15] CoordOrder=x-major\n",
					  "df.conf", &c, &err) == 0, "%s", err.msg);
	tp_job_request q;
	tp_job_request_init(&q);
	q.conf = c;
	q.nodes = "n[0-15]";
	q.slots = "1";
	q.stencil = "4x4:5pt";
	q.policy = "hierarchical";
	tp_job *job = NULL;
	ck_assert_msg(tp_job_create(&q, &job, &err) == 0, "%s", err.msg);
	ck_assert_int_eq(tp_job_run(job, &err), TP_ENOMETIS);
	tp_assert_err_has(&err, TP__METIS_MISSING);
	tp_job_destroy(job);

	q.policy = "graph";
	ck_assert_msg(tp_job_create(&q, &job, &err) == 0, "%s", err.msg);
	ck_assert_msg(tp_job_run(job, &err) == 0, "%s", err.msg);
	ck_assert_int_eq(tp_mapping_validate(tp_job_graph(job), tp_job_alloc(job),
					     tp_job_map(job), NULL), 0);
	tp_job_destroy(job);

	q.policy = "auto";
	ck_assert_msg(tp_job_create(&q, &job, &err) == 0, "%s", err.msg);
	ck_assert_msg(tp_job_run(job, &err) == 0, "%s", err.msg);
	bool hier = false, bip = false;
	for (int i = 0; i < tp_job_ncandidates(job); i++) {
		tp_job_candidate jc;
		ck_assert_int_eq(tp_job_candidate_get(job, i, &jc), 0);
		if (!strcmp(jc.name, "hierarchical")) {
			hier = true;
			ck_assert(!jc.ran);
			ck_assert_str_eq(jc.note, "skipped: " TP__METIS_MISSING);
		}
		if (!strcmp(jc.name, "bipartition")) {
			bip = true;
			ck_assert(jc.ran);
		}
	}
	ck_assert(hier && bip);
	tp_job_destroy(job);
	tp_conf_destroy(c);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("metis");
	TCase *tc = tcase_create("core");
	tcase_add_test(tc, loaded_metis_matches_linked);
	tcase_add_test(tc, missing_library_is_one_line);
	tcase_add_test(tc, split_exact_sizes);
	tcase_add_test(tc, policies_without_metis);
	tcase_add_test(tc, blocks_without_metis);
	tcase_add_test(tc, hierarchical_without_metis);
	tcase_add_test(tc, job_without_metis);
	suite_add_tcase(s, tc);
	return tp_test_run(s);
}
