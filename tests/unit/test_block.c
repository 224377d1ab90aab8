/* Unit tests: block networks (core/src/net/block.c, Slurm's topology/block,
 * its lines read by core/src/slurm/topology_conf.c) and Network=block in
 * topoplace.conf. */
#include <unistd.h>

#include "testutil.h"
#include <topoplace/conf.h>
#include "map/block_map.h"
#include "net/records.h"
#include "util/util_internal.h"
#include "net/network.h"
#include "slurm/slurm_topo.h"
#include "input/alloc_internal.h"
#include "map/graphmap_internal.h"
#include "map/place_internal.h"
#include "net/machine_internal.h"
#include "pattern/pattern_internal.h"
#include "conf/conf_records.h"

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
	ck_assert(tp_machine_has(m, TP_CAP_BLOCKS));
	ck_assert(!tp_machine_has(m, TP_CAP_SWITCHES));
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
	ck_assert(tp_machine_has(tp_machine_block_tree(m), TP_CAP_SWITCHES));
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
	{ "BlockName=a Nodes=n[0-3]\nBlockSizes=2,6\n",
	  "block.conf:2: BlockSizes=2,6: 6 is not the base size 2 times a power of two (up to 2^15)" },
	{ "BlockName=a Nodes=n[0-3]\nBlockSizes=2,4,12\n",
	  "block.conf:2: BlockSizes=2,4,12: 12 is not the base size 2" },
	{ "BlockName=a Nodes=n[0-3]\nBlockSizes=4,262144\n",
	  "block.conf:2: BlockSizes=4,262144: 262144 is not the base size 4 times a power of two (up to 2^15)" },
	{ "BlockName=a Nodes=n[0-3]\nBlockSizes=2,x\n", "expected node counts separated by commas" },
	{ "BlockName=a Nodes=n[0-3]\nBlockSizes=0\n",
	  "block.conf:2: BlockSizes=0: expected node counts separated by commas" },
	{ "BlockName=a Nodes=n[0-3]\nBlockSizes=,\n",
	  "block.conf:2: BlockSizes=,: expected node counts separated by commas" },
	{ "SwitchName=s Nodes=n[0-3]\n",
	  "block.conf:1: unknown key 'SwitchName' (expected BlockName=, Nodes=, BlockSizes=, BlockLevels=); a switch tree goes in a file of its own" },
	{ "BlockName=a Nodes=n0 Foo=1\n", "block.conf:1: unknown key 'Foo'" },
	{ "Nodes=n[0-3]\n", "block.conf:1: Nodes= without BlockName=" },
	{ "BlockName=a BlockSizes=1 Nodes=n0\n",
	  "block.conf:1: Nodes= after BlockSizes=: Slurm reads Nodes= only right after its BlockName=" },
	/* Slurm refuses this without BlockSizes= and only warns with it: a
	 * skeleton whose nodes join at run time, no network until they do */
	{ "BlockName=a\n", "block.conf: no block has nodes and BlockSizes= is not set (slurmctld refuses it)" },
	{ "BlockName=a\nBlockName=b\nBlockSizes=4\n", "block.conf: empty blocks (Slurm only warns), " TP_CONF_SKELETON },
	{ "BlockName=a Nodes=n[0-\n", "block.conf:1: BlockName=a Nodes=n[0-: malformed hostlist" },
	{ "BlockName=a Nodes=\n", "block.conf:1: Nodes=: empty value" },
	{ "BlockName Nodes=n0\n", "block.conf:1: 'BlockName': expected Key=Value" },
	{ "# nothing\n", "block.conf: no BlockName= lines" },
	{ "BlockName=a Nodes=n[0-299999]\n",
	  "block.conf:1: BlockName=a Nodes=n[0-299999]: 300000 names, more than 262144" },
	{ "BlockName=a Nodes=n[0-199999]\nBlockName=b Nodes=m[0-199999]\n",
	  "block.conf:2: more than 262144 nodes in the blocks" },
	/* BlockLevels= (Slurm 23.11) */
	{ "BlockName=a Nodes=n[0-3]\nBlockLevels=16\n",
	  "block.conf:2: BlockLevels=16: expected levels 0..15 separated by commas (ranges such as 0-2 allowed)" },
	{ "BlockName=a Nodes=n[0-3]\nBlockLevels=2-1\n", "block.conf:2: BlockLevels=2-1: expected levels" },
	{ "BlockName=a Nodes=n[0-3]\nBlockLevels=0-x\n", "block.conf:2: BlockLevels=0-x: expected levels" },
	{ "BlockName=a Nodes=n[0-3]\nBlockLevels=0-20:4\n", "block.conf:2: BlockLevels=0-20:4: expected levels" },
	{ "BlockName=a Nodes=n[0-3]\nBlockLevels=0-4:0\n", "block.conf:2: BlockLevels=0-4:0: expected levels" },
	{ "BlockName=a Nodes=n[0-3]\nBlockSizes=4\nBlockLevels=0-2\n",
	  "block.conf:3: BlockLevels= (line 3, Slurm 23.11) and BlockSizes= (line 2, Slurm 24.11 and later): no Slurm release reads both" },
	{ "BlockName=a Nodes=n[0-3]\nBlockName=b Nodes=n[4-5]\nBlockLevels=0-1\n",
	  "block.conf:2: BlockName=b has 2 nodes, BlockName=a 4: Slurm 23.11 (BlockLevels=) wants blocks of one size" },
	{ "BlockName=a Nodes=n[0-3]\nBlockName=b\nBlockLevels=0-1\n",
	  "block.conf:2: BlockName=b without Nodes= (Slurm 23.11, which reads BlockLevels=, wants one)" },
	{ "BlockName=a Nodes=n[0-\nBlockLevels=0-1\n", "block.conf:1: BlockName=a Nodes=n[0-: malformed hostlist" },
};

START_TEST(bad_block_files)
{
	const struct bad *b = &bad_blocks[_i];
	tp_machine *m = (tp_machine *)1;
	tp_error err;
	tp_error_clear(&err);
	/* a skeleton is no network yet (TP_ENOENT), not a bad file */
	ck_assert_int_eq(tp_machine_from_blocks(&m, b->text, "block.conf", NULL, &err),
			 strstr(b->frag, "nodes join at run time") ? TP_ENOENT : TP_EINVAL);
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
	/* a tree file the reader refuses (a line without SwitchName=): its
	 * error, after the blocks' own, which comes first */
	tp_block_opts o5 = { .tree_text = "Nodes=n[00-11]\n", .tree_what = "fabric.conf" };
	ck_assert_int_eq(tp_machine_from_blocks(&m, FOUR, "block.conf", &o5, &err),
			 TP_EINVAL);
	tp_assert_err_has(&err, "fabric.conf:1: Nodes= without SwitchName=");
	ck_assert_ptr_null(m);
	ck_assert_int_eq(tp_machine_from_blocks(&m, "BlockName=b0 Nodes=n[0-3]\n"
						"BlockName=b0 Nodes=n[4-7]\n",
						"block.conf", &o5, &err), TP_EINVAL);
	tp_assert_err_has(&err, "block.conf:2:");
	ck_assert_ptr_null(m);
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
	ck_assert(tp_machine_has(m, TP_CAP_BLOCKS));
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
	ck_assert_ptr_nonnull(strstr(out, "8 blocks, base size 18, 144 nodes; "
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
		  "cfg:1: Network=blocks: unknown network, expected slurm, torus, mesh, tree, dragonfly or block" },
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

/* The lanes of the time model: 2 a node (its NVLink-domain link up and
 * down) and, in the tree between the blocks, 2 a node's port and 2 a cable
 * above each leaf switch (the top has none).  FOUR under two leaves of 6
 * nodes: 24 + 2 x 12 + 2 x 2 x U, U the cables up from a leaf. */
static int64_t lanes_of(const tp_conf *c)
{
	const tp_machine *m = tp_conf_machine(c);
	return m->net->lane_count(m);
}

/* LevelUplinks= and UplinkRouting= on the tree between the blocks
 * (TreeTopologyFile=), as on Network=tree: Network=block and Slurm's
 * blocks. */
START_TEST(tree_uplinks)
{
	char *blk = tmp_write(FOUR);
	char *tree = tmp_write("SwitchName=l0 Nodes=n[00-05]\nSwitchName=l1 Nodes=n[06-11]\n"
			       "SwitchName=s Switches=l[0-1]\n");
	char text[1024];
	tp_conf *c = NULL;
	tp_error err;
	static const struct { const char *keys; int64_t lanes; double up_gbs; } cases[] = {
		{ "", 24 + 24 + 2 * 2 * 2, 100 },          /* assumed 4:1: 6 / 4 -> 2 */
		{ "LevelUplinks=1", 24 + 24 + 2 * 2 * 1, 100 },
		{ "LevelUplinks=5", 24 + 24 + 2 * 2 * 5, 100 },
		{ "LevelUplinks=3 UplinkRouting=dmodk", 24 + 24 + 2 * 2 * 3, 100 },
		/* adaptive: one lane of the three cables */
		{ "LevelUplinks=3 UplinkRouting=adaptive", 24 + 24 + 2 * 2 * 1, 300 },
	};
	for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
		snprintf(text, sizeof text,
			 "Network=block TopologyFile=%s TreeTopologyFile=%s %s\n"
			 "BlockBandwidth=900 NetworkBandwidth=100\n", blk, tree,
			 cases[i].keys);
		ck_assert_msg(tp_conf_load_string(text, "cfg", &c, &err) == 0, "%s", err.msg);
		const tp_machine *m = tp_conf_machine(c);
		ck_assert_msg(lanes_of(c) == cases[i].lanes, "%s: %lld lanes, expected %lld",
			      cases[i].keys, (long long)lanes_of(c),
			      (long long)cases[i].lanes);
		/* n00 -> n06: port, a leaf l0 cable up, one down into l1, port */
		int a = node(m, "n00"), b = node(m, "n06");
		int64_t l[8];
		int len = m->net->lane_route(m, &a, &b, l, 8);
		ck_assert_int_eq(len, 4);
		ck_assert_msg(fabs(m->net->lane_bandwidth(m, l[1]) - cases[i].up_gbs * 1e9) < 1,
			      "%s: a cable up at %g", cases[i].keys,
			      m->net->lane_bandwidth(m, l[1]));
		tp_conf_destroy(c);
	}

	/* Slurm's blocks: topology.conf beside slurm.conf, the tree and its
	 * cables from topoplace.conf */
	char dir[] = "/tmp/tp-blkup-XXXXXX", path[256], sc[256];
	ck_assert_ptr_nonnull(mkdtemp(dir));
	static const char *const files[][2] = {
		{ "slurm.conf", "TopologyPlugin=topology/block\nNodeName=n[00-11]\n"
				"PartitionName=p Nodes=ALL Default=YES\n" },
		{ "tree.conf", "SwitchName=l0 Nodes=n[00-05]\nSwitchName=l1 Nodes=n[06-11]\n"
			       "SwitchName=s Switches=l[0-1]\n" },
		{ "with.conf", "TreeTopologyFile=tree.conf\nLevelUplinks=5\n" },
		{ "without.conf", "TreeTopologyFile=tree.conf\n" },
		{ "aggregation.conf", "LevelUplinks=5\n" },
		{ "bad.conf", "TreeTopologyFile=tree.conf\n\nLevelUplinks=5,5\n" },
	};
	snprintf(path, sizeof path, "%s/topology.conf", dir);
	FILE *f = fopen(path, "w");
	ck_assert_ptr_nonnull(f);
	fputs(FOUR, f);
	fclose(f);
	for (size_t i = 0; i < sizeof files / sizeof *files; i++) {
		snprintf(path, sizeof path, "%s/%s", dir, files[i][0]);
		f = fopen(path, "w");
		ck_assert_ptr_nonnull(f);
		fputs(files[i][1], f);
		fclose(f);
	}
	snprintf(sc, sizeof sc, "%s/slurm.conf", dir);
	tp_conf_slurm o = { .slurm_conf = sc };
	static const struct { const char *file; int64_t lanes; } slurm[] = {
		{ "with.conf", 24 + 24 + 2 * 2 * 5 },
		{ "without.conf", 24 + 24 + 2 * 2 * 2 },
	};
	for (size_t i = 0; i < sizeof slurm / sizeof *slurm; i++) {
		snprintf(path, sizeof path, "%s/%s", dir, slurm[i].file);
		ck_assert_msg(tp_conf_load_slurm(path, &o, &c, &err) == 0, "%s", err.msg);
		ck_assert_msg(lanes_of(c) == slurm[i].lanes, "%s: %lld lanes",
			      slurm[i].file, (long long)lanes_of(c));
		tp_conf_destroy(c);
	}
	/* over Slurm's aggregation there are no cables to count: the key is
	 * ignored (check-config says so), as LevelBandwidth= is */
	snprintf(path, sizeof path, "%s/aggregation.conf", dir);
	ck_assert_msg(tp_conf_load_slurm(path, &o, &c, &err) == 0, "%s", err.msg);
	tp_conf_destroy(c);
	snprintf(path, sizeof path, "%s/bad.conf", dir);
	c = (tp_conf *)1;
	ck_assert_int_eq(tp_conf_load_slurm(path, &o, &c, &err), TP_EINVAL);
	ck_assert_ptr_null(c);
	ck_assert_msg(strstr(err.msg, "bad.conf:3: LevelUplinks= has 2 values, the "
			     "tree has 1 level of links"), "%s", err.msg);
	for (size_t i = 0; i < sizeof files / sizeof *files; i++) {
		snprintf(path, sizeof path, "%s/%s", dir, files[i][0]);
		unlink(path);
	}
	snprintf(path, sizeof path, "%s/topology.conf", dir);
	unlink(path);
	rmdir(dir);

	static const struct { const char *fmt, *frag; } bad[] = {
		{ "Network=block TopologyFile=%s TreeTopologyFile=%s\nLevelUplinks=2,2\n",
		  "cfg:2: LevelUplinks= has 2 values, the tree has 1 level of links" },
		{ "Network=block TopologyFile=%s TreeTopologyFile=%s\nLevelUplinks=0\n",
		  "cfg:2: LevelUplinks=0: value 1 is not an integer in 1..65536" },
		{ "Network=block TopologyFile=%s TreeTopologyFile=%s\nLevelUplinks=4,x\n",
		  "cfg:2: LevelUplinks=4,x: value 2 is not an integer in 1..65536" },
		{ "Network=block TopologyFile=%s TreeTopologyFile=%s\nUplinkRouting=valiant\n",
		  "cfg:2: UplinkRouting=valiant: expected dmodk or adaptive" },
		{ "Network=block TopologyFile=%s\nLevelUplinks=4\n%.0s",
		  "cfg:2: LevelUplinks= with Network=block needs TreeTopologyFile=" },
		{ "Network=block TopologyFile=%s\nUplinkRouting=adaptive\n%.0s",
		  "cfg:2: UplinkRouting= with Network=block needs TreeTopologyFile=" },
		{ "Network=dragonfly Groups=2 RoutersPerGroup=2\nLevelUplinks=4\n"
		  "NodeName=d[0-3] CoordOrder=x-major\n%.0s%.0s",
		  "cfg:2: LevelUplinks= needs Network=tree" },
	};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		snprintf(text, sizeof text, bad[i].fmt, blk, tree);
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

/* The groups of every level of the machine's hierarchy (network.h), each
 * level's group sizes largest first: "12/6,6/3,3,3,3". */
static void levels(const tp_machine *m, char *out, size_t len)
{
	int32_t n = m->nnodes;
	int64_t path[64][TP__HIER_MAX_LEVELS];
	int plen[64], maxlen = 0;
	ck_assert_int_le(n, 64);
	for (int32_t i = 0; i < n; i++) {
		plen[i] = m->net->hierarchy(m, &m->coords[i], path[i], TP__HIER_MAX_LEVELS);
		ck_assert_int_ge(plen[i], 1);
		maxlen = plen[i] > maxlen ? plen[i] : maxlen;
	}
	out[0] = '\0';
	for (int d = 0; d < maxlen; d++) {
		int size[64], ng = 0;
		int32_t rep[64];
		for (int32_t i = 0; i < n; i++) {
			if (plen[i] <= d)
				continue;
			int g = 0;
			while (g < ng && memcmp(path[rep[g]], path[i],
						sizeof(int64_t) * (size_t)(d + 1)))
				g++;
			if (g == ng) {
				rep[ng] = i;
				size[ng++] = 0;
			}
			size[g]++;
		}
		for (int a = 0; a < ng; a++)      /* largest first */
			for (int b = a + 1; b < ng; b++)
				if (size[b] > size[a]) {
					int t = size[a];
					size[a] = size[b];
					size[b] = t;
				}
		for (int g = 0; g < ng; g++)
			snprintf(out + strlen(out), len - strlen(out), "%s%d",
				 g ? "," : d ? "/" : "", size[g]);
	}
}

static void assert_levels(const char *text, const char *tree, const char *want)
{
	tp_block_opts o = { .tree_text = tree, .tree_what = "fabric.conf" };
	tp_machine *m = blocks(text, tree ? &o : NULL);
	char got[256];
	levels(m, got, sizeof got);
	ck_assert_msg(!strcmp(got, want), "%s: levels %s, expected %s",
		      tree ? tree : text, got, want);
	tp_machine_destroy(m);
}

/* The hierarchy of a block network: the switches above each block, then
 * the block unless its lowest switch holds it alone. */
START_TEST(hierarchy_levels)
{
	/* generated: a2_0 over a1_0 a1_1 over the blocks (BlockSizes=3,6,12) */
	assert_levels(FOUR, NULL, "12/6,6/3,3,3,3");
	/* BlockSizes=3,12: no pairs, the blocks right under a2_0 */
	assert_levels("BlockName=b0 Nodes=n[00-02]\nBlockName=b1 Nodes=n[03-05]\n"
		      "BlockName=b2 Nodes=n[06-08]\nBlockName=b3 Nodes=n[09-11]\n"
		      "BlockSizes=3,12\n", NULL, "12/3,3,3,3");
	/* a tree file: b0 b2 on leaf l0, b1 b3 on l1, then each block */
	assert_levels(FOUR, "SwitchName=l0 Nodes=n[00-02],n[06-08]\n"
		      "SwitchName=l1 Nodes=n[03-05],n[09-11]\n"
		      "SwitchName=s Switches=l[0-1]\n", "12/6,6/3,3,3,3");
	/* a leaf switch per block: the leaf is the block, no level more */
	assert_levels(FOUR, "SwitchName=l0 Nodes=n[00-02]\nSwitchName=l1 Nodes=n[03-05]\n"
		      "SwitchName=l2 Nodes=n[06-08]\nSwitchName=l3 Nodes=n[09-11]\n"
		      "SwitchName=s Switches=l[0-3]\n", "12/3,3,3,3");
	/* leaves of 4 nodes across blocks of 3: b1 (n03-n05) and b2 span two
	 * leaves (groups of the top switch), b0 and b3 share a leaf with one
	 * node of another block (groups below it) */
	assert_levels(FOUR, "SwitchName=l0 Nodes=n[00-03]\nSwitchName=l1 Nodes=n[04-07]\n"
		      "SwitchName=l2 Nodes=n[08-11]\nSwitchName=s Switches=l[0-2]\n",
		      "12/3,3,3,3/3,3");
	/* a forest: the blocks of each tree under its top, both under the
	 * virtual top */
	assert_levels(FOUR, "SwitchName=l0 Nodes=n[00-05]\nSwitchName=l1 Nodes=n[06-11]\n",
		      "12/6,6/3,3,3,3");
}
END_TEST

/* Tasks per node of map: never above the slots, exactly them when full. */
static void assert_capacities(const tp_alloc *al, const int32_t *map, int32_t nt,
			      bool full)
{
	int32_t nn = tp_alloc_nnodes(al);
	int *cnt = calloc((size_t)nn, sizeof(int));
	for (int32_t t = 0; t < nt; t++)
		cnt[map[t]]++;
	for (int32_t i = 0; i < nn; i++)
		ck_assert_msg(full ? cnt[i] == tp_alloc_slots(al, i)
				   : cnt[i] <= tp_alloc_slots(al, i),
			      "node %d: %d tasks, %d slots", i, cnt[i],
			      tp_alloc_slots(al, i));
	free(cnt);
}

/* The largest load on a link between the blocks (the tree's links). */
static double inter_block_congestion(const tp_graph *g, const tp_alloc *al,
				     const int32_t *map)
{
	const tp_machine *m = tp_alloc_machine(al);
	int64_t nl = tp_machine_link_count(m);
	double *loads = calloc((size_t)nl, sizeof(double));
	ck_assert_int_eq(tp_metrics_link_loads(g, al, map, loads, NULL, nl, NULL), 0);
	double mx = 0;
	for (int64_t l = 2 * (int64_t)tp_machine_node_count(m); l < nl; l++)
		mx = loads[l] > mx ? loads[l] : mx;
	free(loads);
	return mx;
}

/* Edges of an 8-wide grid of 32 tasks that leave block b under map. */
static int edges_leaving(const tp_machine *m, const tp_alloc *al,
			 const int32_t *map, int32_t b)
{
	int n = 0;
	for (int32_t t = 0; t < 32; t++)
		for (int32_t u = 0; u < 32; u++) {
			bool in_t = tp_machine_node_block(m, tp_alloc_node(al, map[t])) == b;
			bool in_u = tp_machine_node_block(m, tp_alloc_node(al, map[u])) == b;
			if (in_t && !in_u && abs(t % 8 - u % 8) + abs(t / 8 - u / 8) == 1)
				n++;
		}
	return n;
}

/* 4 blocks of 6 nodes, the job on 3, 5, 3 and 5 of them, 2 slots each: an
 * 8x4 grid.  Slurm's order cuts the first block's 6 tasks out of row 0
 * (7 edges leave it) and splits the rows over the blocks unevenly; the
 * hierarchy halves the grid between the pairs of blocks, then splits each
 * half 6 / 10 along the grid. */
START_TEST(hierarchical_on_blocks)
{
	const char *text = "BlockName=r0 Nodes=n[00-05]\nBlockName=r1 Nodes=n[06-11]\n"
			   "BlockName=r2 Nodes=n[12-17]\nBlockName=r3 Nodes=n[18-23]\n"
			   "BlockSizes=6,12,24\n";
	tp_machine *m = blocks(text, NULL);
	tp_alloc *al = NULL;
	tp_error err;
	tp_error_clear(&err);
	ck_assert_int_eq(tp_alloc_from_hostlist(m, "n[00-02,06-10,12-14,18-22]", 2, "t",
						&al, &err), 0);
	tp_graph *g = NULL;
	/* bytes=1: latency decides the predicted time, as the hop-bytes this
	 * test measures do (without sizes auto assumes 32 KiB messages) */
	ck_assert_int_eq(tp_graph_from_stencil(&g, "8x4:5pt:bytes=1", 32, &err), 0);
	int32_t blk[32], h[32], best[32];
	ck_assert_int_eq(tp_map_block(al, 32, blk, &err), 0);
	tp_graphmap_opts go;
	tp_graphmap_opts_default(&go);
	go.refine_passes = 0;           /* the construction alone */
	ck_assert_msg(tp_graphmap_hierarchical(g, al, &go, h, &err) == 0, "%s", err.msg);
	ck_assert_int_eq(tp_mapping_validate(g, al, h, &err), 0);
	assert_capacities(al, h, 32, true);
	double hb_h = tp_metrics_hop_bytes(g, al, h), hb_b = tp_metrics_hop_bytes(g, al, blk);
	double cg_h = inter_block_congestion(g, al, h), cg_b = inter_block_congestion(g, al, blk);
	ck_assert_msg(hb_h < hb_b, "hop-bytes: hierarchical %g, block %g", hb_h, hb_b);
	ck_assert_msg(cg_h <= cg_b, "inter-block congestion: hierarchical %g, block %g",
		      cg_h, cg_b);
	/* fewer grid edges leave block r0 than Slurm's order's 7 */
	ck_assert_int_eq(edges_leaving(m, al, blk, 0), 7);
	int out0 = edges_leaving(m, al, h, 0);
	ck_assert_msg(out0 < 7, "%d edges leave block r0", out0);
	/* policy hierarchical, and auto runs the candidate */
	tp_place_opts po;
	tp_place_opts_default(&po);
	tp_place_report rep;
	po.policy = TP_POLICY_HIERARCHICAL;
	ck_assert_msg(tp_place_ex(g, al, &po, best, &rep, &err) == 0, "%s", err.msg);
	ck_assert(tp_metrics_hop_bytes(g, al, best) <= hb_h);
	po.policy = TP_POLICY_AUTO;
	ck_assert_msg(tp_place_ex(g, al, &po, best, &rep, &err) == 0, "%s", err.msg);
	bool ran = false;
	for (int i = 0; i < rep.ncandidates; i++)
		ran |= !strcmp(rep.cand[i].name, "hierarchical") && rep.cand[i].ran;
	ck_assert_msg(ran, "auto did not run hierarchical on a block network");
	ck_assert(tp_metrics_hop_bytes(g, al, best) <= hb_h);
	/* fewer tasks than slots, uneven slots: never above a node's slots,
	 * and a 3x2 grid fits the block of 5 nodes (the larger child) */
	ck_assert_int_eq(tp_alloc_set_slots(al, 3, 3, &err), 0);
	tp_graph *small = NULL;
	ck_assert_int_eq(tp_graph_from_stencil(&small, "3x2:5pt", 6, &err), 0);
	ck_assert_int_eq(tp_graphmap_hierarchical(small, al, &go, h, &err), 0);
	assert_capacities(al, h, 6, false);
	for (int32_t t = 0; t < 6; t++)
		ck_assert_int_eq(tp_machine_node_block(m, tp_alloc_node(al, h[t])), 1);
	tp_graph_destroy(small);
	tp_graph_destroy(g);
	tp_alloc_destroy(al);
	tp_machine_destroy(m);
}
END_TEST

/* A tree file deeper than the mapper's 64 levels: one line from policy
 * hierarchical, a skipped candidate in auto. */
START_TEST(hierarchy_too_deep)
{
	char tree[4096];
	int len = snprintf(tree, sizeof tree, "SwitchName=s0 Nodes=n[00-11]\n");
	for (int i = 1; i <= 70; i++)
		len += snprintf(tree + len, sizeof tree - (size_t)len,
				"SwitchName=s%d Switches=s%d\n", i, i - 1);
	tp_block_opts o = { .tree_text = tree, .tree_what = "fabric.conf" };
	tp_machine *m = blocks(FOUR, &o);
	tp_alloc *al = NULL;
	tp_error err;
	tp_error_clear(&err);
	ck_assert_int_eq(tp_alloc_from_hostlist(m, "n[00-07]", 1, "t", &al, &err), 0);
	tp_graph *g = NULL;
	ck_assert_int_eq(tp_graph_from_stencil(&g, "4x2:5pt", 8, &err), 0);
	int32_t map[8];
	ck_assert_int_eq(tp_graphmap_hierarchical(g, al, NULL, map, &err), TP_ENOTSUP);
	tp_assert_err_has(&err, "hierarchical mapping: the block network's hierarchy is "
			  "deeper than 64 levels");
	tp_place_opts po;
	tp_place_opts_default(&po);
	tp_place_report rep;
	po.policy = TP_POLICY_HIERARCHICAL;
	tp_error_clear(&err);
	ck_assert_int_eq(tp_place_ex(g, al, &po, map, &rep, &err), TP_ENOTSUP);
	tp_assert_err_has(&err, "hierarchical mapping: the block network's hierarchy is "
			  "deeper than 64 levels");
	po.policy = TP_POLICY_AUTO;
	ck_assert_msg(tp_place_ex(g, al, &po, map, &rep, &err) == 0, "%s", err.msg);
	bool skipped = false;
	for (int i = 0; i < rep.ncandidates; i++)
		skipped |= !strcmp(rep.cand[i].name, "hierarchical") && !rep.cand[i].ran &&
			   strstr(rep.cand[i].note, "hierarchy is deeper");
	ck_assert(skipped);
	tp_graph_destroy(g);
	tp_alloc_destroy(al);
	tp_machine_destroy(m);
}
END_TEST

static uint32_t lcg(uint64_t *x)
{
	*x = *x * 6364136223846793005ULL + 1442695040888963407ULL;
	return (uint32_t)(*x >> 33);
}

/* Long numbered ranges of Nodes= become numbered runs of the machine (see
 * tp__machine_add_list): blocks listed by ranges, in any order of their
 * numbers, make the same machine as their names listed one by one, with
 * the generated network and with a tree file given by ranges. */
START_TEST(ranges_same_as_names)
{
	size_t cap = 1 << 20;
	char *ta = malloc(cap), *tb = malloc(cap);
	for (uint64_t seed = 1; seed <= 16; seed++) {
		uint64_t x = seed;
		int nb = 4 + (int)(lcg(&x) % 17), order[20], lo[20], len[20];
		const char *pre = seed % 2 ? "g" : "gpu";
		int width = seed % 3 ? 4 : 0, at = 0;
		for (int b = 0; b < nb; b++) {
			order[b] = b;
			len[b] = 16 + (int)(lcg(&x) % 25);
			lo[b] = at;
			at += len[b] + (int)(lcg(&x) % 3);
		}
		for (int b = nb - 1; b > 0; b--) {
			int j = (int)(lcg(&x) % (uint32_t)(b + 1)), t = order[b];
			order[b] = order[j];
			order[j] = t;
		}
		*ta = *tb = '\0';
		for (int k = 0; k < nb; k++) {
			int b = order[k];
			snprintf(ta + strlen(ta), cap - strlen(ta), "BlockName=b%d Nodes=%s[%0*d-%0*d]\n",
				 k, pre, width, lo[b], width, lo[b] + len[b] - 1);
			snprintf(tb + strlen(tb), cap - strlen(tb), "BlockName=b%d Nodes=", k);
			for (int v = lo[b]; v < lo[b] + len[b]; v++)
				snprintf(tb + strlen(tb), cap - strlen(tb), "%s%s%0*d",
					 v > lo[b] ? "," : "", pre, width, v);
			strcat(tb, "\n");
		}
		strcat(ta, "BlockSizes=16\n");
		strcat(tb, "BlockSizes=16\n");
		for (int with_tree = 0; with_tree < 2; with_tree++) {
			char *tt = NULL;
			if (with_tree) {
				tt = malloc(cap);
				*tt = '\0';
				for (int k = 0; k < nb; k += 2) {
					snprintf(tt + strlen(tt), cap - strlen(tt), "SwitchName=l%d Nodes=", k / 2);
					for (int j = k; j < k + 2 && j < nb; j++)
						snprintf(tt + strlen(tt), cap - strlen(tt), "%s%s[%0*d-%0*d]",
							 j > k ? "," : "", pre, width, lo[order[j]], width,
							 lo[order[j]] + len[order[j]] - 1);
					strcat(tt, "\n");
				}
				snprintf(tt + strlen(tt), cap - strlen(tt), "SwitchName=top Switches=l[0-%d]\n",
					 (nb - 1) / 2);
			}
			tp_block_opts o = { .tree_text = tt, .tree_what = "fabric.conf" };
			tp_machine *ma = blocks(ta, &o), *mb = blocks(tb, &o);
			int32_t n = tp_machine_node_count(ma);
			ck_assert_int_eq(n, tp_machine_node_count(mb));
			for (int32_t i = 0; i < n; i++) {
				const char *na = tp_machine_node_name(ma, i);
				ck_assert_str_eq(na, tp_machine_node_name(mb, i));
				ck_assert_int_eq(tp_machine_find_node(ma, na), i);
				int32_t j = (int32_t)(lcg(&x) % (uint32_t)n);
				ck_assert_int_eq(tp_machine_distance(ma, i, j),
						 tp_machine_distance(mb, i, j));
				int64_t ra[64], rb[64];
				int ka = tp_machine_route(ma, i, j, ra, 64), kb = tp_machine_route(mb, i, j, rb, 64);
				ck_assert_int_eq(ka, kb);
				for (int r = 0; r < ka; r++)
					ck_assert_int_eq(ra[r], rb[r]);
			}
			tp_machine_destroy(ma);
			tp_machine_destroy(mb);
			free(tt);
		}
	}
	free(ta);
	free(tb);

	/* a node of a block that a tree file given by ranges lacks: named */
	tp_block_opts o = { .tree_text = "SwitchName=l0 Nodes=g[000-019],g[021-031]\n",
			    .tree_what = "fabric.conf" };
	tp_machine *m = NULL;
	tp_error err;
	ck_assert_int_eq(tp_machine_from_blocks(&m, "BlockName=a Nodes=g[000-015]\n"
						"BlockName=b Nodes=g[016-031]\n",
						"block.conf", &o, &err), TP_EINVAL);
	tp_assert_err_has(&err, "block.conf:2: node 'g020' of BlockName=b is under no switch of fabric.conf");
}
END_TEST

/* A block network with warnings: what Slurm accepts without a word, or
 * with one, that topoplace's model says differently. */
static tp_machine *blocks_warned(const char *text, const tp_block_opts *o,
				 struct tp__warnings *w)
{
	tp_machine *m = NULL;
	tp_error err;
	tp_error_clear(&err);
	memset(w, 0, sizeof *w);
	ck_assert_msg(tp__machine_from_blocks(&m, text, "block.conf", o, w, &err) == 0,
		      "%s", err.msg);
	return m;
}

static void assert_warned(const struct tp__warnings *w, const char *frag)
{
	for (int i = 0; i < w->n; i++)
		if (strstr(w->line[i], frag)) {
			ck_assert_ptr_null(strchr(w->line[i], '\n'));
			return;
		}
	ck_abort_msg("no warning has \"%s\" (%d: %s)", frag, w->n, w->n ? w->line[0] : "");
}

/* The name of a tree switch, -1 if none has it. */
static int32_t tree_switch(const tp_machine *m, const char *name)
{
	const tp_machine *t = tp_machine_block_tree(m);
	for (int32_t s = 0; s < tp_machine_switch_count(t); s++)
		if (!strcmp(tp_machine_switch_name(t, s), name))
			return s;
	return -1;
}

/* Slurm 25.05 on: a block may hold fewer nodes than the base size (a gap:
 * a node down for good, left out of the file), or none (an empty block: a
 * slot for a rack not there yet); both keep their aggregation slot. */
START_TEST(gaps_and_empty_blocks)
{
	/* gaps: b1 and b3 short; pairs b0 b1 and b2 b3 under level 1 */
	const char *gaps = "BlockName=b0 Nodes=n[00-03]\nBlockName=b1 Nodes=n[04-05]\n"
			   "BlockName=b2 Nodes=n[06-09]\nBlockName=b3 Nodes=n10\n"
			   "BlockSizes=4,8,16\n";
	tp_machine *m = blocks(gaps, NULL);
	ck_assert_int_eq(tp_machine_node_count(m), 11);
	ck_assert_int_eq(tp_machine_block_base_size(m), 4);
	ck_assert_int_eq(tp_machine_distance(m, node(m, "n00"), node(m, "n05")), 2 * 4 * 2);
	ck_assert_int_eq(tp_machine_distance(m, node(m, "n00"), node(m, "n06")), 3 * 4 * 2);
	ck_assert_int_eq(tp_machine_distance(m, node(m, "n06"), node(m, "n10")), 2 * 4 * 2);
	tp_machine_destroy(m);
	assert_levels(gaps, NULL, "11/6,5/4,4,2,1");
	/* without BlockSizes= the base is the first block's count, short or not */
	m = blocks("BlockName=x Nodes=a[0-1]\nBlockName=y Nodes=a[2-5]\n", NULL);
	ck_assert_int_eq(tp_machine_block_base_size(m), 2);
	tp_machine_destroy(m);

	/* an empty first block: the base is the first block with nodes, and
	 * the empty block keeps its slot: x is paired with it, not with y */
	m = blocks("BlockName=e\nBlockName=x Nodes=a[0-2]\nBlockName=y Nodes=a[3-5]\n", NULL);
	ck_assert_int_eq(tp_machine_block_count(m), 3);
	ck_assert_int_eq(tp_machine_block_base_size(m), 3);
	ck_assert_str_eq(tp_machine_block_name(m, 0), "e");
	ck_assert_int_eq(tp_machine_node_block(m, node(m, "a0")), 1);
	ck_assert_int_eq(tp_machine_distance(m, node(m, "a0"), node(m, "a3")), 3 * 4 * 2);
	ck_assert_int_eq(tree_switch(m, "b0"), -1);
	ck_assert_int_ge(tree_switch(m, "a1_0"), 0);
	tp_machine_destroy(m);

	/* topograph's GB200 file: block013 on a line of its own among racks
	 * of 18 (the rack is not there yet) */
	const char *gb200 = "BlockName=block011 Nodes=gb[001-018]\n"
			    "BlockName=block012 Nodes=gb[019-036]\n"
			    "BlockName=block013\n"
			    "BlockName=block014 Nodes=gb[037-054]\n"
			    "BlockSizes=18,36,72\n";
	tp_block_opts bw = { .block_bandwidth = 900, .network_bandwidth = 50 };
	m = blocks(gb200, &bw);
	ck_assert_int_eq(tp_machine_node_count(m), 54);
	ck_assert_int_eq(tp_machine_block_count(m), 4);
	ck_assert_int_eq(tp_machine_node_block(m, node(m, "gb037")), 3);
	int c = tp_machine_block_network_cost(m);
	ck_assert_int_eq(tp_machine_distance(m, node(m, "gb001"), node(m, "gb019")), 4 * c);
	ck_assert_int_eq(tp_machine_distance(m, node(m, "gb001"), node(m, "gb037")), 6 * c);
	ck_assert_int_eq(tp_machine_distance(m, node(m, "gb019"), node(m, "gb037")), 6 * c);
	/* no switch over no node: block013's b2 is not drawn, a1_1 holds
	 * block014 alone */
	const tp_machine *t = tp_machine_block_tree(m);
	ck_assert_int_eq(tp_machine_switch_count(t), 6);
	ck_assert_int_eq(tree_switch(m, "b2"), -1);
	/* a1_1's uplink carries what block014's 18 nodes inject */
	int64_t up = -1;
	char buf[96];
	for (int64_t l = 0; l < tp_machine_link_count(t); l++) {
		tp_machine_link_name(t, l, buf, sizeof buf);
		if (!strcmp(buf, "a1_1->a2_0"))
			up = l;
	}
	ck_assert_int_ge(up, 0);
	ck_assert_double_eq_tol(m->link_weight[2 * 54 + up], 1.0 / (50.0 * 18), 1e-12);
	int64_t l[16];
	ck_assert_int_eq(tp_machine_route(m, node(m, "gb037"), node(m, "gb001"), l, 16), 6);
	tp_machine_destroy(m);
	/* a1_1 holds block014 alone: a level of its own, as a1_0 */
	assert_levels(gb200, NULL, "54/36,18/18,18,18");
	/* the same racks under a tree file: l1 is block014 */
	assert_levels(gb200, "SwitchName=l0 Nodes=gb[001-036]\nSwitchName=l1 Nodes=gb[037-054]\n"
		      "SwitchName=s Switches=l[0-1]\n", "54/36,18/18,18");

	/* one block with nodes among empty ones: one switch, no aggregate */
	m = blocks("BlockName=a\nBlockName=b Nodes=n[0-3]\nBlockName=c\nBlockSizes=4\n", NULL);
	ck_assert_int_eq(tp_machine_switch_count(tp_machine_block_tree(m)), 1);
	ck_assert_int_eq(tp_machine_distance(m, node(m, "n0"), node(m, "n3")), 2);
	tp_machine_destroy(m);
}
END_TEST

/* What Slurm takes as written and topoplace warns about: a node in two
 * blocks (Slurm puts it in both, topoplace in the first), a key given
 * twice (the last counts); what it takes that the old reader refused. */
START_TEST(accepted_with_warnings)
{
	struct tp__warnings w;
	tp_machine *m = blocks_warned("BlockName=a Nodes=n[0-1]\nBlockName=b Nodes=n[1-2]\n",
				      NULL, &w);
	ck_assert_int_eq(w.n, 1);
	assert_warned(&w, "block.conf:2: node 'n1' is in two blocks ('a' at line 1 and 'b'); "
		      "Slurm puts such a node in both, topoplace in the first only");
	ck_assert_int_eq(tp_machine_node_count(m), 3);
	ck_assert_int_eq(tp_machine_dim(m, 0), 3);
	ck_assert_int_eq(tp_machine_node_block(m, node(m, "n1")), 0);
	ck_assert_int_eq(tp_machine_distance(m, node(m, "n0"), node(m, "n1")), 2);
	ck_assert_int_eq(tp_machine_distance(m, node(m, "n1"), node(m, "n2")), 4 * 4);
	tp_machine_destroy(m);
	/* ranges over each other, and a range over an earlier one partly */
	m = blocks_warned("BlockName=a Nodes=n[00-15]\nBlockName=b Nodes=n[10-25]\n", NULL, &w);
	assert_warned(&w, "block.conf:2: node 'n10' and 5 more are in two blocks ('a' at line 1 and 'b')");
	ck_assert_int_eq(tp_machine_node_count(m), 26);
	ck_assert_int_eq(tp_machine_node_block(m, node(m, "n15")), 0);
	ck_assert_int_eq(tp_machine_node_block(m, node(m, "n16")), 1);
	tp_machine_destroy(m);
	m = blocks_warned("BlockName=a Nodes=n[100-115]\nBlockName=b Nodes=n[16-31],n[090-115]\n",
			  NULL, &w);
	assert_warned(&w, "block.conf:2: node 'n100' and 15 more are in two blocks");
	ck_assert_int_eq(tp_machine_node_count(m), 42);
	ck_assert_int_eq(tp_machine_node_coords(m, node(m, "n099"))[0], 41);
	ck_assert_int_eq(tp_machine_node_block(m, node(m, "n090")), 1);
	tp_machine_destroy(m);
	/* twice in one block; with a tree file (the nodes found by name) */
	const char *tree = "SwitchName=l0 Nodes=n[00-02]\nSwitchName=l1 Nodes=n[03-05]\n"
			   "SwitchName=s Switches=l[0-1]\n";
	tp_block_opts o = { .tree_text = tree, .tree_what = "fabric.conf" };
	m = blocks_warned("BlockName=a Nodes=n[00-02],n01\nBlockName=b Nodes=n[02-05]\n", &o, &w);
	assert_warned(&w, "block.conf:1: BlockName=a lists node 'n01' twice; each counts once");
	assert_warned(&w, "block.conf:2: node 'n02' is in two blocks ('a' at line 1 and 'b')");
	ck_assert_int_eq(tp_machine_node_count(m), 6);
	ck_assert_int_eq(tp_machine_distance(m, node(m, "n00"), node(m, "n02")), 2);
	ck_assert_int_eq(tp_machine_distance(m, node(m, "n02"), node(m, "n03")), 4 * 4);
	ck_assert_int_eq(tp_machine_distance(m, node(m, "n03"), node(m, "n05")), 2);
	tp_machine_destroy(m);
	/* a node of a block listed twice that the tree file lacks: named */
	tp_block_opts o2 = { .tree_text = "SwitchName=l0 Nodes=n[00-02]\n",
			     .tree_what = "fabric.conf" };
	tp_error err;
	ck_assert_int_eq(tp__machine_from_blocks(&m, "BlockName=a Nodes=n[00-02]\n"
						 "BlockName=b Nodes=n[02-03]\n", "block.conf",
						 &o2, &w, &err), TP_EINVAL);
	tp_assert_err_has(&err, "block.conf:2: node 'n03' of BlockName=b is under no switch of fabric.conf");

	/* a key twice: the last counts */
	m = blocks_warned("BlockName=a Nodes=n0 Nodes=n[1-2]\nBlockSizes=1\nBlockSizes=2\n",
			  NULL, &w);
	assert_warned(&w, "block.conf:1: BlockName=a: Nodes= given twice; the last one counts, as in Slurm");
	assert_warned(&w, "block.conf:3: BlockSizes= given twice (first on line 2); the last one counts");
	ck_assert_int_eq(tp_machine_node_count(m), 2);
	ck_assert_int_lt(tp_machine_find_node(m, "n0"), 0);
	ck_assert_int_eq(tp_machine_block_base_size(m), 2);
	tp_machine_destroy(m);

	/* silently, as Slurm: two blocks on a line (the first empty), any
	 * name, BlockSizes= in any order with repeats, BlockSizes= on a
	 * block's line */
	m = blocks_warned("BlockName=a,b BlockName=c[1-2] Nodes=n[0-1] BlockSizes=2,2\n",
			  NULL, &w);
	ck_assert_int_eq(w.n, 0);
	ck_assert_int_eq(tp_machine_block_count(m), 2);
	ck_assert_str_eq(tp_machine_block_name(m, 0), "a,b");
	ck_assert_int_eq(tp_machine_node_block(m, node(m, "n1")), 1);
	tp_machine_destroy(m);
	assert_levels("BlockName=b0 Nodes=n[00-02]\nBlockName=b1 Nodes=n[03-05]\n"
		      "BlockName=b2 Nodes=n[06-08]\nBlockName=b3 Nodes=n[09-11]\n"
		      "BlockSizes=3,12,6,6,,\n", NULL, "12/6,6/3,3,3,3");
	/* a block smaller than BlockSizes='s base */
	m = blocks_warned("BlockName=a Nodes=n[0-3]\nBlockSizes=5\n", NULL, &w);
	ck_assert_int_eq(w.n, 0);
	ck_assert_int_eq(tp_machine_block_base_size(m), 5);
	tp_machine_destroy(m);
}
END_TEST

/* BlockLevels= (Slurm 23.11): level k enforces blocks of 2^k base blocks,
 * the base the first block's node count. */
START_TEST(block_levels)
{
	const char *four = "BlockName=b0 Nodes=n[00-02]\nBlockName=b1 Nodes=n[03-05]\n"
			   "BlockName=b2 Nodes=n[06-08]\nBlockName=b3 Nodes=n[09-11]\n";
	char text[512];
	static const struct { const char *levels, *want, *top; } cases[] = {
		{ "0-1,2", "12/6,6/3,3,3,3", "a2_0" },    /* = BlockSizes=3,6,12 */
		{ "0,2", "12/3,3,3,3", "a2_0" },          /* = BlockSizes=3,12 */
		{ "0-3:2", "12/3,3,3,3", "a2_0" },        /* 0, 2 (3 left out) */
		{ "0", "12/3,3,3,3", "top" },             /* no aggregation */
		{ "1", "12/6,6/3,3,3,3", "top" },         /* pairs, then the top */
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		snprintf(text, sizeof text, "%sBlockLevels=%s\n", four, cases[i].levels);
		assert_levels(text, NULL, cases[i].want);
		tp_machine *m = blocks(text, NULL);
		ck_assert_int_eq(tp_machine_block_base_size(m), 3);
		ck_assert_msg(tree_switch(m, cases[i].top) >= 0, "BlockLevels=%s: no %s",
			      cases[i].levels, cases[i].top);
		tp_machine_destroy(m);
	}
	/* the same distances as BlockSizes= */
	snprintf(text, sizeof text, "%sBlockLevels=0-2\n", four);
	tp_machine *a = blocks(text, NULL), *b = blocks(FOUR, NULL);
	for (int32_t i = 0; i < 12; i++)
		for (int32_t j = 0; j < 12; j++)
			ck_assert_int_eq(tp_machine_distance(a, i, j), tp_machine_distance(b, i, j));
	tp_machine_destroy(a);
	tp_machine_destroy(b);
	/* given twice: the last counts */
	struct tp__warnings w;
	snprintf(text, sizeof text, "%sBlockLevels=0\nBlockLevels=0-1\n", four);
	a = blocks_warned(text, NULL, &w);
	assert_warned(&w, "block.conf:6: BlockLevels= given twice (first on line 5)");
	ck_assert_int_ge(tree_switch(a, "a1_1"), 0);
	tp_machine_destroy(a);
}
END_TEST

/* Records straight to tp__blocks_from_records, as the topology.yaml reader
 * gives them: messages in YAML's keys, at the record's line. */
START_TEST(yaml_records)
{
	struct tp__warnings w;
	memset(&w, 0, sizeof w);
	const struct tp__topo_rec ok[] = {
		{ "b1", "n[0-3]", NULL, 5 },
		{ "b2", NULL, NULL, 7 },      /* no nodes: an empty block */
		{ "b3", "n[3-7]", NULL, 8 },
		{ "b4", "", NULL, 10 },       /* nodes: '' is as empty */
		{ "b5", "m0 m[1-2]", NULL, 11 },   /* blanks separate, as commas */
	};
	struct tp__topo_recs r = { ok, 5, "topology.yaml", true, &w };
	struct tp__block_sizes sz = { 2, { 4, 8 }, 3 };
	tp_machine *m = NULL;
	tp_error err;
	tp_error_clear(&err);
	ck_assert_msg(tp__blocks_from_records(&m, &r, &sz, NULL, NULL, &err) == 0, "%s", err.msg);
	ck_assert_int_eq(tp_machine_block_count(m), 5);
	ck_assert_int_eq(tp_machine_node_count(m), 11);
	ck_assert_int_eq(tp_machine_distance(m, node(m, "m0"), node(m, "m2")), 2);
	ck_assert_int_eq(tp_machine_block_base_size(m), 4);
	ck_assert_int_eq(tp_machine_node_block(m, node(m, "n3")), 0);
	ck_assert_int_eq(tp_machine_node_block(m, node(m, "n4")), 2);
	/* b1 b2 pair, b3 b4 pair, b5 alone (level 1), no level 2: the top
	 * over the pairs */
	ck_assert_int_eq(tp_machine_distance(m, node(m, "n0"), node(m, "n4")), 4 * 6);
	ck_assert_int_eq(tp_machine_distance(m, node(m, "n4"), node(m, "m0")), 4 * 6);
	ck_assert_int_eq(w.n, 1);
	assert_warned(&w, "topology.yaml:8: node 'n3' is in two blocks ('b1' at line 5 and 'b3')");
	tp_machine_destroy(m);
	/* no block_sizes: Slurm's default; a tree file between the blocks */
	tp_block_opts o = { .tree_text = "SwitchName=s Nodes=n[0-7],m[0-2]\n", .tree_what = "tree.conf" };
	ck_assert_msg(tp__blocks_with_tree_text(&m, &r, NULL, NULL, &o, &err) == 0, "%s", err.msg);
	ck_assert_int_eq(tp_machine_distance(m, node(m, "n0"), node(m, "n4")), 4 * 2);
	tp_machine_destroy(m);
	/* the builder takes the tree as records only: text is the reader's */
	ck_assert_int_eq(tp__blocks_from_records(&m, &r, NULL, NULL, &o, &err), TP_EINVAL);
	ck_assert_ptr_null(m);

	static const struct tp__topo_rec dup[] = { { "b1", "n[0-3]", NULL, 5 },
						   { "b1", "n[4-7]", NULL, 9 } };
	static const struct tp__topo_rec bad_nodes[] = { { "b1", "n[0-", NULL, 5 } };
	static const struct tp__topo_rec unnamed[] = { { NULL, "n[0-3]", NULL, 6 } };
	static const struct tp__topo_rec empty[] = { { "b1", NULL, NULL, 5 } };
	const struct {
		const struct tp__topo_rec *rec;
		int n;
		struct tp__block_sizes sz;
		bool yaml;
		const char *frag;
	} bad[] = {
		{ dup, 2, { 0 }, true, "topology.yaml:9: block b1: duplicate block (first at line 5)" },
		{ dup, 2, { 0 }, false, "topology.yaml:9: BlockName=b1: duplicate block (first at line 5)" },
		{ ok, 1, { 2, { 4, 12 }, 3 }, true,
		  "topology.yaml:3: block_sizes: 12 is not the base size 4 times a power of two (up to 2^15)" },
		{ ok, 1, { 1, { 0 }, 3 }, true, "topology.yaml:3: block_sizes: 0: expected a positive node count" },
		{ ok, 1, { 2, { 4, -8 }, 3 }, true, "topology.yaml:3: block_sizes: -8: expected a positive node count" },
		{ bad_nodes, 1, { 0 }, true, "topology.yaml:5: block b1: nodes n[0-: malformed hostlist" },
		{ unnamed, 1, { 0 }, true, "topology.yaml:6: a block without a name (block:)" },
		{ empty, 1, { 0 }, true, "topology.yaml: no block has nodes and block_sizes: is not set" },
		{ empty, 1, { 1, { 4 }, 3 }, true, "topology.yaml: empty blocks (Slurm only warns), " TP_CONF_SKELETON },
		{ NULL, 0, { 0 }, true, "topology.yaml: no blocks" },
		{ NULL, 0, { 0 }, false, "topology.yaml: no BlockName= lines" },
	};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		struct tp__topo_recs rb = { bad[i].rec, bad[i].n, "topology.yaml", bad[i].yaml, NULL };
		m = (tp_machine *)1;
		tp_error_clear(&err);
		ck_assert_int_eq(tp__blocks_from_records(&m, &rb, &bad[i].sz, NULL, NULL, &err),
				 strstr(bad[i].frag, "nodes join at run time") ? TP_ENOENT
				 : TP_EINVAL);
		ck_assert_ptr_null(m);
		tp_assert_err_has(&err, bad[i].frag);
		ck_assert_ptr_null(strchr(err.msg, '\n'));
	}
	ck_assert_int_eq(tp__blocks_from_records(&m, NULL, NULL, NULL, NULL, &err), TP_EINVAL);
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
	tcase_add_test(tc, tree_uplinks);
	tcase_add_test(tc, groups_kept_in_blocks);
	tcase_add_test(tc, hierarchy_levels);
	tcase_add_test(tc, hierarchical_on_blocks);
	tcase_add_test(tc, hierarchy_too_deep);
	tcase_add_test(tc, ranges_same_as_names);
	tcase_add_test(tc, gaps_and_empty_blocks);
	tcase_add_test(tc, accepted_with_warnings);
	tcase_add_test(tc, block_levels);
	tcase_add_test(tc, yaml_records);
	suite_add_tcase(s, tc);
	return tp_test_run(s);
}
