/* Unit tests: block networks (core/src/block.c, Slurm's topology/block) and
 * Network=block in topoplace.conf. */
#include <unistd.h>

#include "testutil.h"
#include "internal.h"

#define EXAMPLES TP_SOURCE_DIR "/conf/examples/"

/* 4 blocks of 3 nodes: n00-n02 | n03-n05 | n06-n08 | n09-n11. */
static const char *FOUR =
	"# four small blocks\n"
	"BlockName=b0 Nodes=n[00-02]\n"
	"BlockName=b1 Nodes=n[03-05]\n"
	"BlockName=b2 Nodes=n[06-08]  # a comment\n"
	"BlockName=b3 Nodes=n[09-11]\n"
	"BlockSizes=3,6,12\n";

static int32_t node(const tp_machine *m, const char *name)
{
	int32_t i = tp_machine_find_node(m, name);
	ck_assert_msg(i >= 0, "no node %s", name);
	return i;
}

static tp_machine *blocks(const char *text, const tp_block_opts *o)
{
	tp_machine *m = NULL;
	tp_error err;
	tp_error_clear(&err);
	ck_assert_msg(tp_machine_from_blocks(&m, text, "block.conf", o, &err) == 0,
		      "%s", err.msg);
	return m;
}

/* The generated network: b0 b1 under a1_0, b2 b3 under a1_1, both under
 * a2_0 (BlockSizes=3,6,12: levels 1 and 2).  Tree links between nodes of
 * b0 and b1: node, b0, b1, node = 4; b0 to b2: 6. */
START_TEST(distances_and_routes)
{
	tp_machine *m = blocks(FOUR, NULL);
	ck_assert_str_eq(tp_machine_kind(m), "block");
	ck_assert(tp_machine_is_block(m));
	ck_assert(!tp_machine_is_tree(m));
	ck_assert_int_eq(tp_machine_node_count(m), 12);
	ck_assert_int_eq(tp_machine_block_count(m), 4);
	ck_assert_int_eq(tp_machine_block_base_size(m), 3);
	ck_assert_int_eq(tp_machine_block_network_cost(m), 4);
	ck_assert_str_eq(tp_machine_block_name(m, 2), "b2");
	ck_assert_ptr_null(tp_machine_block_name(m, 4));
	ck_assert_int_eq(tp_machine_node_block(m, node(m, "n05")), 1);
	ck_assert_int_eq(tp_machine_node_block(m, 12), -1);
	/* nodes in file order: one dimension, the node number */
	ck_assert_int_eq(tp_machine_ndims(m), 1);
	ck_assert_int_eq(tp_machine_node_coords(m, node(m, "n07"))[0], 7);
	ck_assert_int_eq(tp_machine_distance(m, node(m, "n00"), node(m, "n00")), 0);
	ck_assert_int_eq(tp_machine_distance(m, node(m, "n00"), node(m, "n02")), 2);
	ck_assert_int_eq(tp_machine_distance(m, node(m, "n00"), node(m, "n03")), 4 * 4);
	ck_assert_int_eq(tp_machine_distance(m, node(m, "n00"), node(m, "n06")), 4 * 6);
	ck_assert_int_eq(tp_machine_distance(m, node(m, "n11"), node(m, "n02")), 4 * 6);
	int64_t l[16];
	char buf[96];
	ck_assert_int_eq(tp_machine_route(m, node(m, "n00"), node(m, "n02"), l, 16), 2);
	tp_machine_link_name(m, l[0], buf, sizeof buf);
	ck_assert_str_eq(buf, "n00->b0(NVLink)");
	tp_machine_link_name(m, l[1], buf, sizeof buf);
	ck_assert_str_eq(buf, "b0(NVLink)->n02");
	/* directed links: n00's port up is 2 x 0, n02's down 2 x 2 + 1; the
	 * way back uses the other direction of both ports */
	ck_assert_int_eq(l[0], 0);
	ck_assert_int_eq(l[1], 5);
	ck_assert_int_eq(tp_machine_route(m, node(m, "n02"), node(m, "n00"), l, 16), 2);
	ck_assert_int_eq(l[0], 4);
	ck_assert_int_eq(l[1], 1);
	ck_assert_int_eq(tp_machine_link_count(m),
			 24 + tp_machine_link_count(tp_machine_block_tree(m)));
	ck_assert_int_eq(tp_machine_route(m, node(m, "n00"), node(m, "n02"), l, 1), TP_EINVAL);
	ck_assert_int_eq(tp_machine_route(m, node(m, "n00"), node(m, "n06"), l, 16), 6);
	tp_machine_link_name(m, l[0], buf, sizeof buf);
	ck_assert_str_eq(buf, "n00->b0");
	tp_machine_link_name(m, l[2], buf, sizeof buf);
	ck_assert_str_eq(buf, "a1_0->a2_0");
	for (int k = 0; k < 6; k++)
		ck_assert(l[k] >= 24 && l[k] < tp_machine_link_count(m));
	ck_assert_int_eq(tp_machine_route(m, node(m, "n00"), node(m, "n06"), l, 5), TP_EINVAL);
	/* every pair: a route no longer than the tree's diameter, in range */
	for (int32_t a = 0; a < 12; a++)
		for (int32_t b = 0; b < 12; b++) {
			int len = tp_machine_route(m, a, b, l, 16);
			ck_assert_int_ge(len, 0);
			ck_assert_int_le(len, 6);
			ck_assert_int_eq(tp_machine_distance(m, a, b),
					 len == 2 && tp_machine_node_block(m, a) ==
					 tp_machine_node_block(m, b) ? 2 : 4 * len);
		}
	tp_machine_destroy(m);
	/* Slurm's default without BlockSizes=: levels up to 16 blocks, base
	 * = the first block's size */
	m = blocks("BlockName=x Nodes=a[0-1]\nBlockName=y Nodes=a[2-4]\n"
		   "BlockName=z Nodes=a[5-6]\n", NULL);
	ck_assert_int_eq(tp_machine_block_base_size(m), 2);
	/* x y under a1_0, z under a1_1, both under a2_0 */
	ck_assert_int_eq(tp_machine_distance(m, node(m, "a0"), node(m, "a2")), 16);
	ck_assert_int_eq(tp_machine_distance(m, node(m, "a0"), node(m, "a5")), 24);
	tp_machine_destroy(m);
	/* one block: a single switch between its nodes' ports */
	m = blocks("BlockName=only Nodes=z[1-4]\n", NULL);
	ck_assert_int_eq(tp_machine_distance(m, node(m, "z1"), node(m, "z4")), 2);
	tp_machine_destroy(m);
}
END_TEST

/* A tree file between the blocks, bandwidths and the network cost. */
START_TEST(tree_and_bandwidths)
{
	/* b0 and b2 share leaf l0, b1 and b3 leaf l1 */
	const char *tree = "SwitchName=l0 Nodes=n[00-02],n[06-08]\n"
			   "SwitchName=l1 Nodes=n[03-05],n[09-11],other1\n"
			   "SwitchName=s Switches=l[0-1]\n";
	tp_block_opts o = { .tree_text = tree, .tree_what = "fabric.conf",
			    .block_bandwidth = 900, .network_bandwidth = 50 };
	tp_machine *m = blocks(FOUR, &o);
	ck_assert_int_eq(tp_machine_block_network_cost(m), 18);
	ck_assert_int_eq(tp_machine_node_count(m), 12);   /* other1: not a block node */
	ck_assert_int_eq(tp_machine_distance(m, node(m, "n00"), node(m, "n06")), 18 * 2);
	ck_assert_int_eq(tp_machine_distance(m, node(m, "n00"), node(m, "n03")), 18 * 4);
	ck_assert_ptr_nonnull(tp_machine_block_tree(m));
	ck_assert(tp_machine_is_tree(tp_machine_block_tree(m)));
	/* congestion in time units: 1e9 bytes n00 -> n01 over NVLink loads two
	 * links at 1e9 / 900; n00 -> n06 loads the two node ports at 1e9 / 50 */
	tp_alloc *al = NULL;
	tp_error err;
	ck_assert_int_eq(tp_alloc_from_hostlist(m, "n00,n01,n06", 1, "t", &al, &err), 0);
	int32_t u[] = { 0 }, v[] = { 1 };
	double w[] = { 1e9 };
	tp_graph *g = NULL;
	ck_assert_int_eq(tp_graph_from_edges(&g, 2, 1, u, v, w, "t", &err), 0);
	int32_t map[2] = { 0, 1 };
	tp_metrics x;
	ck_assert_int_eq(tp_metrics_compute(g, al, map, true, &x, &err), 0);
	ck_assert_double_eq_tol(x.max_congestion_bytes, 1e9 / 900, 1e-3);
	map[1] = 2;
	ck_assert_int_eq(tp_metrics_compute(g, al, map, true, &x, &err), 0);
	ck_assert_double_eq_tol(x.max_congestion_bytes, 1e9 / 50, 1e-3);
	tp_graph_destroy(g);
	tp_alloc_destroy(al);
	tp_machine_destroy(m);

	/* generated network with bandwidths: switch links carry what the
	 * nodes below inject (b0's uplink: 3 x 50) */
	tp_block_opts o2 = { .block_bandwidth = 400, .network_bandwidth = 50,
			     .network_cost = 3 };
	m = blocks(FOUR, &o2);
	ck_assert_int_eq(tp_machine_block_network_cost(m), 3);
	ck_assert_int_eq(tp_alloc_from_hostlist(m, "n00,n03", 1, "t", &al, &err), 0);
	ck_assert_int_eq(tp_graph_from_edges(&g, 2, 1, u, v, w, "t", &err), 0);
	map[0] = 0;
	map[1] = 1;
	ck_assert_int_eq(tp_metrics_compute(g, al, map, true, &x, &err), 0);
	ck_assert_double_eq_tol(x.max_congestion_bytes, 1e9 / 50, 1e-3);
	tp_graph_destroy(g);
	tp_alloc_destroy(al);
	tp_machine_destroy(m);
}
END_TEST

static const struct bad {
	const char *text, *frag;
} bad_blocks[] = {
	{ "BlockName=a Nodes=n[0-1]\nBlockName=a Nodes=n[2-3]\n",
	  "block.conf:2: BlockName=a: duplicate block (first at line 1)" },
	{ "BlockName=a Nodes=n[0-1]\nBlockName=b Nodes=n[1-2]\n",
	  "block.conf:2: node 'n1' is in two blocks ('a' at line 1 and 'b')" },
	{ "BlockName=a Nodes=n[0-3]\nBlockName=b Nodes=n[4-5]\n",
	  "block.conf:2: BlockName=b has 2 nodes, fewer than the base block size 4 (the first block's)" },
	{ "BlockName=a Nodes=n[0-3]\nBlockSizes=2,6\n",
	  "block.conf:2: BlockSizes=2,6: 6 is not the base size 2 times a power of two" },
	{ "BlockName=a Nodes=n[0-3]\nBlockSizes=2,4,4\n", "4 is not the base size 2" },
	{ "BlockName=a Nodes=n[0-3]\nBlockSizes=2\nBlockSizes=2\n",
	  "block.conf:3: BlockSizes= given twice (first on line 2)" },
	{ "BlockName=a Nodes=n[0-3]\nBlockSizes=2,x\n", "expected node counts separated by commas" },
	{ "BlockName=a Nodes=n[0-3]\nBlockSizes=5\n",
	  "block.conf:1: BlockName=a has 4 nodes, fewer than the base block size 5 (BlockSizes=)" },
	{ "SwitchName=s Nodes=n[0-3]\n",
	  "block.conf:1: unknown key 'SwitchName' (expected BlockName=, Nodes=, BlockSizes=); a switch tree goes in a file of its own" },
	{ "Nodes=n[0-3]\n", "block.conf:1: Nodes= without BlockName=" },
	{ "BlockName=a\n", "block.conf:1: BlockName=a without Nodes=" },
	{ "BlockName=a Nodes=n0 Nodes=n1\n", "block.conf:1: Nodes= given twice" },
	{ "BlockName=a Nodes=n[0-\n", "block.conf:1: BlockName=a Nodes=n[0-: malformed hostlist" },
	{ "BlockName=a Nodes=\n", "block.conf:1: Nodes=: empty value" },
	{ "BlockName=a,b Nodes=n0\n", "block.conf:1: BlockName=a,b: one block per line" },
	{ "BlockName Nodes=n0\n", "block.conf:1: 'BlockName': expected Key=Value" },
	{ "# nothing\n", "block.conf: no BlockName= lines" },
	{ "BlockName=a Nodes=n[0-299999]\n",
	  "block.conf:1: BlockName=a Nodes=n[0-299999]: 300000 names, more than 262144" },
	{ "BlockName=a Nodes=n[0-199999]\nBlockName=b Nodes=m[0-199999]\n",
	  "block.conf:2: more than 262144 nodes in the blocks" },
};

START_TEST(bad_block_files)
{
	const struct bad *b = &bad_blocks[_i];
	tp_machine *m = (tp_machine *)1;
	tp_error err;
	tp_error_clear(&err);
	ck_assert_int_eq(tp_machine_from_blocks(&m, b->text, "block.conf", NULL, &err),
			 TP_EINVAL);
	ck_assert_ptr_null(m);
	tp_assert_err_has(&err, b->frag);
	ck_assert_ptr_null(strchr(err.msg, '\n'));
}
END_TEST

START_TEST(bad_options)
{
	tp_machine *m = NULL;
	tp_error err;
	tp_block_opts o = { .block_bandwidth = 900 };
	ck_assert_int_eq(tp_machine_from_blocks(&m, FOUR, "b", &o, &err), TP_EINVAL);
	tp_assert_err_has(&err, "b: give both the block and the network bandwidth");
	tp_block_opts o2 = { .network_cost = 1 };
	ck_assert_int_eq(tp_machine_from_blocks(&m, FOUR, "b", &o2, &err), TP_EINVAL);
	tp_assert_err_has(&err, "network cost 1: expected 2..1000000");
	tp_block_opts o3 = { .tree_text = "SwitchName=s Nodes=n[00-10]\n",
			     .tree_what = "fabric.conf" };
	ck_assert_int_eq(tp_machine_from_blocks(&m, FOUR, "block.conf", &o3, &err),
			 TP_EINVAL);
	tp_assert_err_has(&err, "block.conf:5: node 'n11' of BlockName=b3 is under no switch of fabric.conf");
	tp_block_opts o4 = { .tree_text = "SwitchName=s Nodes=n[00-1\n",
			     .tree_what = "fabric.conf" };
	ck_assert_int_eq(tp_machine_from_blocks(&m, FOUR, "block.conf", &o4, &err),
			 TP_EINVAL);
	tp_assert_err_has(&err, "fabric.conf:1:");
	ck_assert_int_eq(tp_machine_from_blocks(&m, NULL, "b", NULL, &err), TP_EINVAL);
	ck_assert_ptr_null(m);
}
END_TEST

/* The shipped GB200 NVL72 example through topoplace.conf. */
START_TEST(example_config)
{
	tp_conf *c = NULL;
	tp_error err;
	ck_assert_msg(tp_conf_load(EXAMPLES "block.conf", &c, &err) == 0, "%s", err.msg);
	const tp_machine *m = tp_conf_machine(c);
	ck_assert(tp_machine_is_block(m));
	ck_assert_int_eq(tp_machine_node_count(m), 144);
	ck_assert_int_eq(tp_machine_block_count(m), 8);
	ck_assert_int_eq(tp_machine_block_base_size(m), 18);
	ck_assert_int_eq(tp_machine_block_network_cost(m), 18);   /* 3600 / 200 */
	/* racks 0-1 under one switch, 0-3, then 0-7 */
	ck_assert_int_eq(tp_machine_distance(m, node(m, "gb001"), node(m, "gb018")), 2);
	ck_assert_int_eq(tp_machine_distance(m, node(m, "gb001"), node(m, "gb019")), 18 * 4);
	ck_assert_int_eq(tp_machine_distance(m, node(m, "gb001"), node(m, "gb037")), 18 * 6);
	ck_assert_int_eq(tp_machine_distance(m, node(m, "gb001"), node(m, "gb144")), 18 * 8);
	char *out = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&out, &len);
	tp_conf_describe(c, f);
	fclose(f);
	ck_assert_ptr_nonnull(strstr(out, "8 blocks of at least 18 nodes, 144 nodes; "
				     "between blocks: Slurm's block aggregation, network "
				     "links cost 18"));
	free(out);
	tp_conf_destroy(c);
}
END_TEST

static char *tmp_write(const char *text)
{
	return tp_test_tmpfile(text);
}

START_TEST(config_keys)
{
	char *blk = tmp_write(FOUR);
	char *tree = tmp_write("SwitchName=l0 Nodes=n[00-05]\nSwitchName=l1 Nodes=n[06-11]\n"
			       "SwitchName=s Switches=l[0-1]\n");
	char text[1024];
	tp_conf *c = NULL;
	tp_error err;
	snprintf(text, sizeof text,
		 "Network=block TopologyFile=%s TreeTopologyFile=%s\n"
		 "BlockBandwidth=900 NetworkBandwidth=100 LevelBandwidth=400\n"
		 "NodeName=n[00-11]\n", blk, tree);
	ck_assert_msg(tp_conf_load_string(text, "cfg", &c, &err) == 0, "%s", err.msg);
	const tp_machine *m = tp_conf_machine(c);
	ck_assert_int_eq(tp_machine_block_network_cost(m), 9);
	ck_assert_int_eq(tp_machine_distance(m, node(m, "n00"), node(m, "n03")), 9 * 2);
	ck_assert_int_eq(tp_machine_distance(m, node(m, "n00"), node(m, "n06")), 9 * 4);
	tp_conf_destroy(c);
	snprintf(text, sizeof text, "Network=block TopologyFile=%s NetworkCost=7\n", blk);
	ck_assert_msg(tp_conf_load_string(text, "cfg", &c, &err) == 0, "%s", err.msg);
	ck_assert_int_eq(tp_machine_block_network_cost(tp_conf_machine(c)), 7);
	tp_conf_destroy(c);

	static const struct { const char *fmt, *frag; } bad[] = {
		{ "Network=block TopologyFile=%s Dims=4\n",
		  "cfg:1: Dims= does not apply to Network=block" },
		{ "Network=block TopologyFile=%s LevelCost=2\n",
		  "cfg:1: LevelCost= does not apply to Network=block" },
		{ "Network=block\nNodeName=n00\nTopologyFile=%s\n",
		  "cfg:2: NodeName= before TopologyFile= (Network=block needs TopologyFile=PATH first)" },
		{ "Network=block TopologyFile=%s BlockBandwidth=900\n",
		  "cfg:1: BlockBandwidth= needs NetworkBandwidth= too" },
		{ "Network=block TopologyFile=%s NetworkBandwidth=0\n",
		  "cfg:1: NetworkBandwidth=0: expected a positive number (GB/s)" },
		{ "Network=block TopologyFile=%s NetworkCost=1\n",
		  "cfg:1: NetworkCost=1: expected an integer in 2..1000000" },
		{ "Network=block TopologyFile=%s LevelBandwidth=5\n",
		  "cfg:1: LevelBandwidth= with Network=block needs TreeTopologyFile=" },
		{ "Network=block TopologyFile=%s TreeTopologyFile=/nonexistent/t.conf\n",
		  "cfg:1: TreeTopologyFile=/nonexistent/t.conf:" },
		{ "Network=block TopologyFile=%s\nNodeName=n00 Coords=0\n",
		  "cfg:2: NodeName=n00: Coords= does not apply to Network=block (nodes sit in their blocks in TopologyFile=)" },
		{ "Network=block TopologyFile=%s\nNodeName=n[11-12]\n",
		  "cfg:2: NodeName=n[11-12]: node 'n12' is in no block of" },
		{ "Network=block TopologyFile=%s\nCoordFile=x.coords\n",
		  "cfg:2: CoordFile= does not apply to Network=block" },
		{ "Network=torus Dims=4 TreeTopologyFile=%s\nNodeName=a Coords=0\n",
		  "cfg:1: TreeTopologyFile= needs Network=block" },
		{ "Network=tree TopologyFile=%s NetworkCost=3\n",
		  "cfg:1: NetworkCost= needs Network=block" },
		{ "Network=block TopologyFile=%s\nRouting=valiant\nGroups=2\n",
		  "cfg:2: Routing= needs Network=dragonfly" },
		{ "Network=blocks TopologyFile=%s\n",
		  "cfg:1: Network=blocks: unknown network, expected torus, mesh, tree, dragonfly or block" },
	};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		snprintf(text, sizeof text, bad[i].fmt, blk);
		c = (tp_conf *)1;
		ck_assert_int_lt(tp_conf_load_string(text, "cfg", &c, &err), 0);
		ck_assert_ptr_null(c);
		tp_assert_err_has(&err, bad[i].frag);
	}
	unlink(blk);
	unlink(tree);
	free(blk);
	free(tree);
}
END_TEST

/* Groups of 6 tasks talking all-to-all, 2 tasks per node; the job holds
 * n02 (block b0), n03-n05 (b1) and n06-n07 (b2).  Slurm's order cuts both
 * groups across blocks (n02-n04: b0 and b1; n05-n07: b1 and b2); b1 can
 * hold a whole group, and the "blocks" candidate puts one there. */
static int whole_groups(const tp_machine *m, const tp_alloc *al,
			const int32_t *map)
{
	int whole = 0;
	for (int g0 = 0; g0 < 12; g0 += 6) {
		int32_t b = tp_machine_node_block(m, tp_alloc_node(al, map[g0]));
		bool one = true;
		for (int t = g0; t < g0 + 6; t++)
			one &= tp_machine_node_block(m, tp_alloc_node(al, map[t])) == b;
		whole += one;
	}
	return whole;
}

START_TEST(groups_kept_in_blocks)
{
	tp_machine *m = blocks(FOUR, NULL);
	tp_alloc *al = NULL;
	tp_error err;
	ck_assert_int_eq(tp_alloc_from_hostlist(m, "n[02-07]", 2, "t", &al, &err), 0);
	int32_t u[64], v[64];
	double w[64];
	int ne = 0;
	for (int g0 = 0; g0 < 12; g0 += 6)
		for (int i = g0; i < g0 + 6; i++)
			for (int j = i + 1; j < g0 + 6; j++) {
				u[ne] = i;
				v[ne] = j;
				w[ne++] = 1e6;
			}
	tp_graph *g = NULL;
	ck_assert_int_eq(tp_graph_from_edges(&g, 12, ne, u, v, w, "t", &err), 0);
	int32_t blk[12], best[12];
	ck_assert_int_eq(tp_map_block(al, 12, blk, &err), 0);
	ck_assert_int_eq(whole_groups(m, al, blk), 0);
	tp_place_opts o;
	tp_place_opts_default(&o);
	o.policy = TP_POLICY_AUTO;
	tp_place_report rep;
	ck_assert_msg(tp_place_ex(g, al, &o, best, &rep, &err) == 0, "%s", err.msg);
	ck_assert_int_eq(tp_mapping_validate(g, al, best, &err), 0);
	ck_assert_int_eq(whole_groups(m, al, best), 1);
	double hb_block = tp_metrics_hop_bytes(g, al, blk);
	double hb_best = tp_metrics_hop_bytes(g, al, best);
	ck_assert_msg(hb_best < 0.8 * hb_block, "%g vs %g", hb_best, hb_block);
	bool tried = false;
	for (int i = 0; i < rep.ncandidates; i++)
		tried |= !strcmp(rep.cand[i].name, "blocks") && rep.cand[i].ran;
	ck_assert(tried);
	/* not a block network: the candidate says so */
	ck_assert_int_eq(tp__block_map(g, al, 1, best, &err), 0);
	tp_machine *t = NULL;
	ck_assert_int_eq(tp_machine_create(&t, 1, (int[]){ 12 }, NULL, &err), 0);
	tp_alloc *at = NULL;
	for (int i = 0; i < 12; i++) {
		char nm[8];
		snprintf(nm, sizeof nm, "t%d", i);
		ck_assert_int_ge(tp_machine_add_node(t, nm, (int[]){ i }, &err), 0);
	}
	ck_assert_int_eq(tp_alloc_from_hostlist(t, "t[0-5]", 2, "t", &at, &err), 0);
	ck_assert_int_eq(tp__block_map(g, at, 1, best, &err), TP_ENOTSUP);
	tp_alloc_destroy(at);
	tp_machine_destroy(t);
	tp_graph_destroy(g);
	tp_alloc_destroy(al);
	tp_machine_destroy(m);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("block");
	TCase *tc = tcase_create("block");
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, distances_and_routes);
	tcase_add_test(tc, tree_and_bandwidths);
	tcase_add_loop_test(tc, bad_block_files, 0,
			    (int)(sizeof bad_blocks / sizeof bad_blocks[0]));
	tcase_add_test(tc, bad_options);
	tcase_add_test(tc, example_config);
	tcase_add_test(tc, config_keys);
	tcase_add_test(tc, groups_kept_in_blocks);
	suite_add_tcase(s, tc);
	return tp_test_run(s);
}
