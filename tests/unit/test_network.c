/* Unit tests: the network kinds behind one interface (core/src/network.h). */
#include <stdint.h>

#include "testutil.h"

static tp_machine *mk(int ndims, const int *dims, const bool *wrap)
{
	tp_machine *m = NULL;
	tp_error err;
	tp_error_clear(&err);
	ck_assert_msg(tp_machine_create(&m, ndims, dims, wrap, &err) == 0, "%s",
		      err.msg);
	return m;
}

START_TEST(kinds)
{
	int d3[3] = { 4, 4, 4 };
	bool tw[3] = { true, false, false }, mw[3] = { false, false, false };
	tp_machine *t = mk(3, d3, tw), *m = mk(3, d3, mw);
	ck_assert_str_eq(tp_machine_kind(t), "torus");
	ck_assert_str_eq(tp_machine_kind(m), "mesh");
	ck_assert(!tp_machine_is_tree(t) && !tp_machine_is_dragonfly(m));
	ck_assert_ptr_null(tp_machine_kind(NULL));
	tp_machine_destroy(t);
	tp_machine_destroy(m);

	tp_machine *f = NULL;
	tp_error err;
	tp_error_clear(&err);
	ck_assert_int_eq(tp_machine_create_dragonfly(&f, 5, 4, 2, 3, true, &err), 0);
	ck_assert_str_eq(tp_machine_kind(f), "dragonfly");
	ck_assert_int_eq(tp_machine_dragonfly_links(f), 3);
	ck_assert(tp_machine_dragonfly_valiant(f));
	/* hop costs and link bandwidths belong to tori and meshes */
	int cost[2] = { 2, 2 };
	double bw[2] = { 5, 5 };
	ck_assert_int_eq(tp_machine_set_hop_cost(f, cost, &err), TP_ENOTSUP);
	tp_assert_err_has(&err, "only for tori and meshes");
	ck_assert_int_eq(tp_machine_set_link_bandwidth(f, bw, &err), TP_ENOTSUP);
	tp_assert_err_has(&err, "only for tori and meshes");
	ck_assert_int_eq(tp_machine_hop_cost(f, 0), 1);
	ck_assert(tp_machine_link_bandwidth(f, 1) == 1.0);
	ck_assert_int_eq(tp_machine_tree_levels(f), 0);
	ck_assert_int_eq(tp_machine_switch_count(f), 0);
	tp_machine_destroy(f);

	tp_machine *tr = NULL;
	ck_assert_int_eq(tp_machine_from_topology(&tr, "SwitchName=s Nodes=a,b\n",
						  "topo", NULL, 0, &err), 0);
	ck_assert_str_eq(tp_machine_kind(tr), "tree");
	ck_assert_int_eq(tp_machine_dragonfly_links(tr), 0);
	ck_assert(!tp_machine_dragonfly_valiant(tr));
	char name[64];
	tp_machine_link_name(tr, 0, name, sizeof name);
	ck_assert_str_eq(name, "s->(top)");
	tp_machine_link_name(tr, 1, name, sizeof name);
	ck_assert_str_eq(name, "a->s");
	tp_machine_link_name(tr, 3, name, sizeof name);
	ck_assert_str_eq(name, "(invalid link 3)");
	tp_machine_destroy(tr);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("network");
	TCase *tc = tcase_create("network");
	tcase_add_test(tc, kinds);
	suite_add_tcase(s, tc);
	return tp_test_run(s);
}
