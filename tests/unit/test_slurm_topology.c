/* Slurm's own topology as the network: topology.yaml read with libyaml,
 * found beside slurm.conf as slurmctld finds it, the partition's topology,
 * and a topoplace.conf without Network=. */
#include <sys/stat.h>
#include <unistd.h>

#include "slurm/slurm_topology.h"
#include "testutil.h"
#include "conf/conf_internal.h"
#include "net/machine_internal.h"
#include "net/network.h"
#include <topoplace/job.h>

/* topology.yaml(5)'s own example (Slurm 26.05). */
static const char man_example[] =
	"---\n"
	"- topology: topo1\n"
	"  cluster_default: true\n"
	"  tree:\n"
	"    switches:\n"
	"      - switch: sw_root\n"
	"        children: s[1-2]\n"
	"      - switch: s1\n"
	"        nodes: node[01-02]\n"
	"      - switch: s2\n"
	"        nodes: node[03-04]\n"
	"- topology: topo2\n"
	"  cluster_default: false\n"
	"  block:\n"
	"    block_sizes:\n"
	"      - 4\n"
	"      - 16\n"
	"    blocks:\n"
	"      - block: b1\n"
	"        nodes: node[01-04]\n"
	"      - block: b2\n"
	"        nodes: node[05-08]\n"
	"      - block: b3\n"
	"        nodes: node[09-12]\n"
	"      - block: b4\n"
	"        nodes: node[13-16]\n"
	"- topology: topo3\n"
	"  cluster_default: false\n"
	"  flat: true\n"
	"- topology: topo3a\n"
	"  cluster_default: false\n"
	"  flat:\n"
	"    alpha_step_rank: true\n"
	"- topology: topo4\n"
	"  cluster_default: false\n"
	"  ring:\n"
	"    rings:\n"
	"      - ring: ring0\n"
	"        nodes: node[01-08]\n"
	"      - ring: ring1\n"
	"        nodes: node[09-16]\n"
	"- topology: topo5\n"
	"  cluster_default: false\n"
	"  torus3d:\n"
	"    toruses:\n"
	"      - name: pod1\n"
	"        dims:\n"
	"          x: 4\n"
	"          y: 4\n"
	"          z: 2\n"
	"        nodes: node[01-32]\n"
	"        placements:\n"
	"          - dims:\n"
	"              x: 2\n"
	"              y: 2\n"
	"              z: 1\n";

static int yread(const char *text, struct tp__stopo_set *s,
		 struct tp__warnings *w, tp_error *err)
{
	tp_error_clear(err);
	if (w)
		memset(w, 0, sizeof *w);
	return tp__topology_yaml_read(text, strlen(text), "topology.yaml", s, w, err);
}

START_TEST(yaml_man_example)
{
	struct tp__stopo_set s;
	tp_error err;
	ck_assert_int_eq(yread(man_example, &s, NULL, &err), 0);
	ck_assert_int_eq(s.n, 6);
	static const enum tp__stopo_kind kinds[] = {
		TP__STOPO_TREE, TP__STOPO_BLOCK, TP__STOPO_FLAT, TP__STOPO_FLAT,
		TP__STOPO_RING, TP__STOPO_TORUS3D };
	static const char *const names[] = { "topo1", "topo2", "topo3", "topo3a",
					      "topo4", "topo5" };
	for (int i = 0; i < 6; i++) {
		ck_assert_int_eq(s.t[i].kind, kinds[i]);
		ck_assert_str_eq(s.t[i].name, names[i]);
		ck_assert(s.t[i].cluster_default == (i == 0));
		/* read, as the step layout's ranks need it (slurm_order.c) */
		ck_assert(s.t[i].alpha_step_rank == (i == 3));
	}
	ck_assert_int_eq(s.t[0].nrec, 3);
	ck_assert_str_eq(s.t[0].rec[0].name, "sw_root");
	ck_assert_str_eq(s.t[0].rec[0].switches, "s[1-2]");
	ck_assert_ptr_null(s.t[0].rec[0].nodes);
	ck_assert_int_eq(s.t[0].rec[0].line, 6);
	ck_assert_str_eq(s.t[0].rec[2].nodes, "node[03-04]");
	ck_assert_int_eq(s.t[0].rec[2].line, 10);
	ck_assert_int_eq(s.t[1].sizes.n, 2);
	ck_assert_int_eq(s.t[1].sizes.size[0], 4);
	ck_assert_int_eq(s.t[1].sizes.size[1], 16);
	ck_assert_int_eq(s.t[1].nrec, 4);
	ck_assert_str_eq(s.t[1].rec[3].name, "b4");
	ck_assert_int_eq(s.t[4].nrec, 2);
	ck_assert_str_eq(s.t[4].rec[1].nodes, "node[09-16]");
	ck_assert_int_eq(s.t[5].ntorus, 1);
	ck_assert_str_eq(s.t[5].torus[0].name, "pod1");
	ck_assert_int_eq(s.t[5].torus[0].dims[0], 4);
	ck_assert_int_eq(s.t[5].torus[0].dims[1], 4);
	ck_assert_int_eq(s.t[5].torus[0].dims[2], 2);
	ck_assert_str_eq(s.t[5].torus[0].nodes, "node[01-32]");
	tp__stopo_set_free(&s);
}
END_TEST

/* Slurm's parser takes one topology as a mapping, a list of one entry as
 * the entry, block_sizes as one integer; flow style is YAML too. */
START_TEST(yaml_short_forms)
{
	struct tp__stopo_set s;
	tp_error err;
	ck_assert_int_eq(yread("topology: nvl\n"
			       "block:\n"
			       "  block_sizes: 18\n"
			       "  blocks: {block: b1, nodes: \"gb[001-018]\"}\n",
			       &s, NULL, &err), 0);
	ck_assert_int_eq(s.n, 1);
	ck_assert_int_eq(s.t[0].kind, TP__STOPO_BLOCK);
	ck_assert_int_eq(s.t[0].sizes.n, 1);
	ck_assert_int_eq(s.t[0].sizes.size[0], 18);
	ck_assert_int_eq(s.t[0].nrec, 1);
	ck_assert_str_eq(s.t[0].rec[0].nodes, "gb[001-018]");
	tp__stopo_set_free(&s);

	/* an empty file and a bare "---" hold no topology */
	ck_assert_int_eq(yread("", &s, NULL, &err), 0);
	ck_assert_int_eq(s.n, 0);
	tp__stopo_set_free(&s);
	ck_assert_int_eq(yread("---\n# nothing\n", &s, NULL, &err), 0);
	ck_assert_int_eq(s.n, 0);
	tp__stopo_set_free(&s);

	/* a block with no nodes (a gap topograph leaves) is a record */
	ck_assert_int_eq(yread("- topology: b\n  block:\n    blocks:\n"
			       "      - block: b1\n        nodes: n[1-2]\n"
			       "      - block: b2\n", &s, NULL, &err), 0);
	ck_assert_int_eq(s.t[0].nrec, 2);
	ck_assert_ptr_null(s.t[0].rec[1].nodes);
	ck_assert_int_eq(s.t[0].rec[1].line, 6);
	tp__stopo_set_free(&s);

	/* regions of a torus */
	ck_assert_int_eq(yread("- topology: t\n  torus3d:\n    toruses:\n"
			       "      - name: p\n        dims: {x: 4, y: 2, z: 1}\n"
			       "        regions:\n"
			       "          - anchor: {x: 0, y: 0, z: 0}\n"
			       "            dims: {x: 2, y: 2, z: 1}\n"
			       "            nodes: a[1-4]\n"
			       "          - anchor: {x: 2, y: 0, z: 0}\n"
			       "            dims: {x: 2, y: 2, z: 1}\n"
			       "            nodes: b[1-4]\n", &s, NULL, &err), 0);
	ck_assert_int_eq(s.t[0].torus[0].nregions, 2);
	ck_assert_int_eq(s.t[0].torus[0].region[1].anchor[0], 2);
	ck_assert_int_eq(s.t[0].torus[0].region[1].dims[1], 2);
	ck_assert_str_eq(s.t[0].torus[0].region[1].nodes, "b[1-4]");
	ck_assert_ptr_null(s.t[0].torus[0].nodes);
	tp__stopo_set_free(&s);
}
END_TEST

/* A key Slurm does not know is a warning naming its line, as Slurm's
 * parser ignores it with one. */
START_TEST(yaml_unknown_key_warns)
{
	struct tp__stopo_set s;
	struct tp__warnings w;
	tp_error err;
	ck_assert_int_eq(yread("- topology: t\n  color: blue\n  tree:\n    switches:\n"
			       "      - switch: s1\n        nodes: n1\n"
			       "        speed: 100\n", &s, &w, &err), 0);
	ck_assert_int_eq(w.n, 2);
	ck_assert_msg(strstr(w.line[0], "topology.yaml:2: unknown key 'color'"),
		      "%s", w.line[0]);
	ck_assert_msg(strstr(w.line[1], "topology.yaml:7: unknown key 'speed'"),
		      "%s", w.line[1]);
	tp__stopo_set_free(&s);
	/* slurmctld loads a topology without a name, and two of one name */
	ck_assert_int_eq(yread("- cluster_default: true\n  flat: true\n"
			       "- topology: a\n  flat: true\n- topology: a\n  tree:\n"
			       "    switches:\n      - {switch: s, nodes: n1}\n"
			       "- topology: a\n  flat: true\n", &s, &w, &err), 0);
	ck_assert_int_eq(s.n, 4);
	ck_assert_str_eq(s.t[0].name, "(null)");
	ck_assert_int_eq(w.n, 3);
	ck_assert_msg(strstr(w.line[0], "topology.yaml:1: a topology without topology:"),
		      "%s", w.line[0]);
	ck_assert_msg(strstr(w.line[1], "topology.yaml:5: topology a: a second topology "
			     "of that name (first on line 3): Topology=a finds the first"),
		      "%s", w.line[1]);
	tp__stopo_set_free(&s);
}
END_TEST

static const struct { const char *text, *msg; } bad_yaml[] = {
	{ "- topology: a\n  tree: &x\n    switches:\n      - switch: s\n        nodes: n1\n"
	  "- topology: b\n  tree: *x\n", "topology.yaml:7: YAML alias *x: aliases are not supported" },
	{ "- topology: a\n  flat: true\n---\n- topology: b\n  flat: true\n",
	  "topology.yaml:3: a second YAML document" },
	{ "- topology: a\n  flat: true\n  tree:\n    switches:\n      - switch: s\n        nodes: n\n",
	  "topology.yaml:3: tree: a topology has one kind, and this one is flat (line 2)" },
	{ "- topology: a\n  cluster_default: true\n",
	  "topology.yaml:1: topology a: no tree:, block:, flat:, ring: or torus3d:" },
	{ "- topology: a\n  block:\n    block_sizes: x\n",
	  "topology.yaml:3: block_sizes: x: expected an integer" },
	{ "- topology: a\n  tree:\n    switches:\n      - switch: [s1, s2]\n",
	  "topology.yaml:4: switch: expected a string, not a list" },
	{ "- topology: a\n  tree:\n    switches:\n      - nodes: n1\n",
	  "topology.yaml:4: switches: an entry without switch:" },
	{ "- topology: a\n  tree: {switches: [\n", "topology.yaml:3: YAML:" },
	{ "- topology: a\n  cluster_default: maybe\n  flat: true\n",
	  "topology.yaml:2: cluster_default: maybe: expected true or false" },
	{ "- topology: a\n  flat:\n    alpha_step_rank: often\n",
	  "topology.yaml:3: alpha_step_rank: often: expected true or false" },
	{ "- topology: a\n  torus3d:\n    toruses:\n      - name: p\n        dims: {x: 70000}\n",
	  "topology.yaml:5: dims: x: 70000: expected an integer in 0..65535" },
	{ "42\n", "topology.yaml:1: topology.yaml: expected a list, not a value" },
	{ "[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]\n",
	  "nested more than 32 levels deep" },
	{ "- topology: a\n  flat: true\0- topology: b\n", "NUL" },
};

START_TEST(yaml_bad)
{
	struct tp__stopo_set s;
	tp_error err;
	tp_error_clear(&err);
	const char *t = bad_yaml[_i].text;
	/* the NUL case: its length reaches past the NUL */
	size_t len = strlen(t);
	if (strstr(bad_yaml[_i].msg, "NUL"))
		len += 1 + strlen(t + len + 1);
	int rc = tp__topology_yaml_read(t, len, "topology.yaml", &s, NULL, &err);
	ck_assert_int_ne(rc, 0);
	tp_assert_err_has(&err, bad_yaml[_i].msg);
	ck_assert_ptr_null(strchr(err.msg, '\n'));
	ck_assert_int_eq(s.n, 0);
}
END_TEST

/* ---- found beside slurm.conf ---- */

static char dir[64];

static void put(const char *name, const char *text)
{
	char path[128];
	snprintf(path, sizeof path, "%s/%s", dir, name);
	if (!text) {
		unlink(path);
		return;
	}
	FILE *f = fopen(path, "w");
	ck_assert_ptr_nonnull(f);
	fputs(text, f);
	fclose(f);
}

static const char slurm_conf[] =
	"ClusterName=t\n"
	"NodeName=node[01-16] CPUs=4\n"
	"PartitionName=DEFAULT MaxTime=10\n"
	"PartitionName=batch Nodes=ALL Default=YES\n"
	"PartitionName=gpu Nodes=ALL Topology=topo2\n"
	"PartitionName=ring Nodes=ALL Topology=topo4\n"
	"PartitionName=flat Nodes=ALL Topology=topo3\n"
	"PartitionName=typo Nodes=ALL Topology=nosuch\n";

static void setup(void)
{
	snprintf(dir, sizeof dir, "/tmp/tp-stopo-XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(dir));
	put("slurm.conf", slurm_conf);
	put("topology.yaml", man_example);
}

static void teardown(void)
{
	put("slurm.conf", NULL);
	put("topology.yaml", NULL);
	put("topology.conf", NULL);
	put("tp.conf", NULL);
	rmdir(dir);
}

static int load(const char *conf_text, const char *partition, unsigned version,
		tp_conf **c, tp_error *err)
{
	char sc[128], tc[128];
	snprintf(sc, sizeof sc, "%s/slurm.conf", dir);
	snprintf(tc, sizeof tc, "%s/tp.conf", dir);
	put("tp.conf", conf_text);
	tp_error_clear(err);
	tp_conf_slurm o = { .slurm_conf = sc, .partition = partition,
			    .slurm_version = version };
	return tp_conf_load_slurm(tc, &o, c, err);
}

/* topology.yaml's blocks over the file's tree: LevelUplinks= counts that
 * tree's cables up (the time model's lanes: 2 a node's NVLink link, 2 a
 * node's port, 2 a cable above each of the two leaves); over Slurm's
 * aggregation (no tree in the file) it is ignored. */
START_TEST(yaml_block_tree_uplinks)
{
	static const char blocks[] =
		"- topology: nvl\n"
		"  cluster_default: true\n"
		"  block:\n"
		"    block_sizes: 4\n"
		"    blocks:\n"
		"      - block: b1\n"
		"        nodes: n[01-04]\n"
		"      - block: b2\n"
		"        nodes: n[05-08]\n"
		"      - block: b3\n"
		"        nodes: n[09-12]\n"
		"      - block: b4\n"
		"        nodes: n[13-16]\n";
	static const char tree[] =
		"- topology: fabric\n"
		"  cluster_default: false\n"
		"  tree:\n"
		"    switches:\n"
		"      - switch: top\n"
		"        children: l[0-1]\n"
		"      - switch: l0\n"
		"        nodes: n[01-08]\n"
		"      - switch: l1\n"
		"        nodes: n[09-16]\n";
	char yaml[2048];
	snprintf(yaml, sizeof yaml, "---\n%s%s", blocks, tree);
	put("slurm.conf", "NodeName=n[01-16] CPUs=4\nPartitionName=p Nodes=ALL Default=YES\n");
	put("topology.yaml", yaml);
	static const struct { const char *conf; int64_t lanes; } cases[] = {
		{ "HopLatency=1us\n", 32 + 2 * (16 + 2 * 2) },   /* 8 / 4 assumed */
		{ "LevelUplinks=3\n", 32 + 2 * (16 + 2 * 3) },
		{ "LevelUplinks=3 UplinkRouting=adaptive\n", 32 + 2 * (16 + 2 * 1) },
	};
	tp_conf *c;
	tp_error err;
	for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
		ck_assert_msg(load(cases[i].conf, NULL, 0, &c, &err) == 0, "%s", err.msg);
		const tp_machine *m = tp_conf_machine(c);
		ck_assert_msg(m->net->lane_count(m) == cases[i].lanes, "%s: %lld lanes",
			      cases[i].conf, (long long)m->net->lane_count(m));
		tp_conf_destroy(c);
	}
	ck_assert_int_eq(load("LevelUplinks=3,3\n", NULL, 0, &c, &err), TP_EINVAL);
	ck_assert_msg(strstr(err.msg, "tp.conf:1: LevelUplinks= has 2 values, the tree "
			     "has 1 level of links"), "%s", err.msg);
	/* no tree in the file: the aggregation, the key ignored */
	snprintf(yaml, sizeof yaml, "---\n%s", blocks);
	put("topology.yaml", yaml);
	ck_assert_msg(load("LevelUplinks=3\n", NULL, 0, &c, &err) == 0, "%s", err.msg);
	ck_assert_ptr_nonnull(strstr(tp_conf_network_source(c),
				     "LevelUplinks= (line 1, not for blocks: ignored)"));
	tp_conf_destroy(c);
}
END_TEST

/* No Network= at all: the partition's topology of topology.yaml. */
START_TEST(zero_config)
{
	tp_conf *c;
	tp_error err;
	ck_assert_int_eq(load("DefaultPolicy=geometric\n", NULL, 0, &c, &err), 0);
	const tp_machine *m = tp_conf_machine(c);
	ck_assert(tp_machine_has(m, TP_CAP_SWITCHES));
	ck_assert_int_eq(tp_machine_node_count(m), 4);
	ck_assert_msg(strstr(tp_conf_network_used(c), "topology topo1 (tree)") &&
		      strstr(tp_conf_network_used(c), "partition batch (Default=YES) "
			     "has no Topology=: the cluster default"),
		      "%s", tp_conf_network_used(c));
	const char *src = tp_conf_network_source(c);
	ck_assert_msg(strstr(src, "topology.yaml beside") &&
		      strstr(src, "topology topo2 (block): partitions gpu") &&
		      strstr(src, "topology topo1 (tree, cluster default): partitions batch, typo") &&
		      strstr(src, "from topoplace.conf: DefaultPolicy= (line 1)"), "%s", src);
	ck_assert_int_eq(tp_conf_slurm_ntopologies(c), 6);
	ck_assert_int_eq(tp_conf_slurm_topology_used(c), 0);
	ck_assert_int_eq(tp_conf_default_policy(c), TP_POLICY_GEOMETRIC);
	tp_conf_destroy(c);

	/* torus3d by name: a real torus, nodes x-major */
	char sc[128];
	snprintf(sc, sizeof sc, "%s/slurm.conf", dir);
	ck_assert_int_eq(tp_conf_load_slurm(NULL, NULL, &c, &err), TP_EINVAL);
	put("tp.conf", "");
	char tc[128];
	snprintf(tc, sizeof tc, "%s/tp.conf", dir);
	ck_assert_int_eq(tp_conf_load_slurm(tc, &(tp_conf_slurm){ .slurm_conf = sc,
		.topology = "topo5" }, &c, &err), 0);
	const tp_machine *t = tp_conf_machine(c);
	ck_assert_str_eq(tp_machine_kind(t), "torus");
	ck_assert_int_eq(tp_machine_node_count(t), 32);
	ck_assert_int_eq(tp_machine_ndims(t), 3);
	const int *xyz = tp_machine_node_coords(t, tp_machine_find_node(t, "node06"));
	ck_assert_int_eq(xyz[0], 1);   /* node06: the 6th, x fastest on 4x4x2 */
	ck_assert_int_eq(xyz[1], 1);
	ck_assert_int_eq(xyz[2], 0);
	tp_conf_destroy(c);

	/* the gpu partition's Topology=topo2: blocks; topo1's tree lacks their
	 * nodes, so the network between them is Slurm's aggregation */
	ck_assert_int_eq(load("Network=slurm\n", "gpu", 0, &c, &err), 0);
	ck_assert(tp_machine_has(tp_conf_machine(c), TP_CAP_BLOCKS));
	ck_assert_int_eq(tp_machine_block_count(tp_conf_machine(c)), 4);
	ck_assert_int_eq(tp_conf_slurm_topology_used(c), 1);
	char *dsc = NULL;
	size_t dlen = 0;
	FILE *df = open_memstream(&dsc, &dlen);
	tp_conf_describe(c, df);
	fclose(df);
	ck_assert_msg(strstr(dsc, "between blocks: Slurm's block aggregation"), "%s", dsc);
	free(dsc);
	tp_conf_destroy(c);

	/* rings (Slurm 26.05's topology/ring) */
	ck_assert_int_eq(load("", "ring", 0, &c, &err), 0);
	ck_assert_str_eq(tp_machine_kind(tp_conf_machine(c)), "ring");
	ck_assert_int_eq(tp_machine_node_count(tp_conf_machine(c)), 16);
	char *d = NULL;
	size_t dl = 0;
	FILE *f = open_memstream(&d, &dl);
	tp_conf_describe(c, f);
	fclose(f);
	ck_assert_msg(strstr(d, "rings from ") && strstr(d, "topology.yaml: 2 rings of at "
			     "most 8 nodes, 16 nodes; no link between them\n"), "%s", d);
	free(d);
	tp_conf_destroy(c);
	/* a partition without Topology= that slurm.conf lacks: the default */
	ck_assert_int_eq(load("", "other", 0, &c, &err), 0);
	ck_assert(tp_machine_has(tp_conf_machine(c), TP_CAP_SWITCHES));
	tp_conf_destroy(c);
}
END_TEST

START_TEST(zero_config_errors)
{
	tp_conf *c;
	tp_error err;
	/* flat: no network to place on (TP_ENOENT) */
	ck_assert_int_eq(load("", "flat", 0, &c, &err), TP_ENOENT);
	tp_assert_err_has(&err, "topology.yaml:27: topology topo3 is flat");
	ck_assert_ptr_null(c);
	/* a partition naming a topology topology.yaml lacks */
	ck_assert_int_ne(load("", "typo", 0, &c, &err), 0);
	tp_assert_err_has(&err, "slurm.conf:8: PartitionName=typo Topology=nosuch: "
			  "no topology of that name in");
	/* shape keys of topoplace's own networks */
	ck_assert_int_ne(load("Network=slurm\nDims=4x4\n", NULL, 0, &c, &err), 0);
	tp_assert_err_has(&err, "tp.conf:2: Dims= does not apply to Slurm's topology");
	ck_assert_int_ne(load("TopologyFile=topology.conf\n", NULL, 0, &c, &err), 0);
	tp_assert_err_has(&err, "tp.conf:1: TopologyFile= needs Network=tree or Network=block");
	ck_assert_int_ne(load("Network=slurm\nNodeName=node01 Coords=0,0\n", NULL, 0, &c, &err), 0);
	tp_assert_err_has(&err, "tp.conf:2: NodeName=node01: Coords= does not apply to Slurm's topology");
	/* without Network=, a line that places nodes forgot it */
	ck_assert_int_ne(load("NodeName=node01 Coords=0,0\n", NULL, 0, &c, &err), 0);
	tp_assert_err_has(&err, "tp.conf:1: NodeName= before Network=");
	ck_assert_int_ne(load("CoordFile=x.coords\n", NULL, 0, &c, &err), 0);
	tp_assert_err_has(&err, "tp.conf:1: CoordFile= before Network=");
	/* a bad topology.yaml: its own file and line */
	put("topology.yaml", "- topology: a\n  tree:\n    switches:\n      - switch: s1\n"
	    "        children: s9\n");
	ck_assert_int_ne(load("", NULL, 0, &c, &err), 0);
	tp_assert_err_has(&err, "/topology.yaml:4:");
	tp_assert_err_has(&err, "s9");
	/* no topology.yaml and no TopologyPlugin=: Slurm's flat default */
	put("topology.yaml", NULL);
	ck_assert_int_eq(load("", NULL, 0, &c, &err), TP_ENOENT);
	tp_assert_err_has(&err, "and TopologyPlugin=topology/flat (Slurm's default): "
			  "no network topology");
	/* no slurm.conf */
	put("slurm.conf", NULL);
	ck_assert_int_ne(load("", NULL, 0, &c, &err), 0);
	tp_assert_err_has(&err, "slurm.conf");
}
END_TEST

/* Blocks of topology.yaml take the network between them from a tree
 * topology of the same file that holds all their nodes: the first such. */
START_TEST(blocks_over_yaml_tree)
{
	put("slurm.conf", "NodeName=n[1-8]\nPartitionName=g Nodes=ALL Topology=nvl\n");
	put("topology.yaml",
	    "- topology: small\n  tree:\n    switches:\n      - {switch: s, nodes: \"n[1-2]\"}\n"
	    "- topology: ib\n  tree:\n    switches:\n"
	    "      - {switch: top, children: \"l[1-2]\"}\n"
	    "      - {switch: l1, nodes: \"n[1-2],n[5-6]\"}\n"
	    "      - {switch: l2, nodes: \"n[3-4],n[7-8]\"}\n"
	    "- topology: nvl\n  block:\n    blocks:\n"
	    "      - {block: b1, nodes: \"n[1-4]\"}\n      - {block: b2, nodes: \"n[5-8]\"}\n");
	tp_conf *c;
	tp_error err;
	ck_assert_int_eq(load("", "g", 0, &c, &err), 0);
	const tp_machine *m = tp_conf_machine(c);
	ck_assert(tp_machine_has(m, TP_CAP_BLOCKS));
	/* n1 and n5 share leaf l1 of ib: 2 network links of cost 4 apart;
	 * n1 and n7 meet at top: 4 links */
	ck_assert_int_eq(tp_machine_distance(m, tp_machine_find_node(m, "n1"),
					     tp_machine_find_node(m, "n5")), 8);
	ck_assert_int_eq(tp_machine_distance(m, tp_machine_find_node(m, "n1"),
					     tp_machine_find_node(m, "n7")), 16);
	ck_assert_int_eq(tp_machine_distance(m, tp_machine_find_node(m, "n1"),
					     tp_machine_find_node(m, "n3")), 2);
	char *d = NULL;
	size_t dl = 0;
	FILE *f = open_memstream(&d, &dl);
	tp_conf_describe(c, f);
	fclose(f);
	ck_assert_msg(strstr(d, "between blocks: the tree of topology ib of "), "%s", d);
	free(d);
	tp_conf_destroy(c);
}
END_TEST

/* Without topology.yaml, or before 25.05: topology.conf under
 * TopologyPlugin=; topoplace.conf's tree settings apply. */
START_TEST(topology_conf_plugin)
{
	tp_conf *c;
	tp_error err;
	put("slurm.conf", "NodeName=n[1-4]\nTopologyPlugin=topology/tree\n");
	put("topology.conf", "SwitchName=l1 Nodes=n[1-2]\nSwitchName=l2 Nodes=n[3-4]\n"
	    "SwitchName=top Switches=l[1-2]\n");
	/* Slurm 24.11 does not read topology.yaml: topology.conf */
	ck_assert_int_eq(load("LevelCost=3\n", NULL, TP_SLURM_VERSION(24, 11, 7), &c,
			      &err), 0);
	ck_assert(tp_machine_has(tp_conf_machine(c), TP_CAP_SWITCHES));
	ck_assert_int_eq(tp_machine_distance(tp_conf_machine(c), 0, 2), 8);
	ck_assert_msg(strstr(tp_conf_network_source(c), "TopologyPlugin=topology/tree "
			     "reads topology.conf"), "%s", tp_conf_network_source(c));
	tp_conf_destroy(c);
	/* 26.05 reads the topology.yaml beside it instead */
	ck_assert_int_eq(load("", NULL, TP_SLURM_VERSION(26, 5, 3), &c, &err), 0);
	ck_assert_int_eq(tp_machine_node_count(tp_conf_machine(c)), 4);
	ck_assert_int_ge(tp_machine_find_node(tp_conf_machine(c), "node03"), 0);
	tp_conf_destroy(c);
	/* a block setting for a tree: ignored, said by check-config only (a
	 * warning would follow every job of a tree partition) */
	put("topology.yaml", NULL);
	ck_assert_int_eq(load("DefaultPolicy=auto\nBlockBandwidth=900 NetworkBandwidth=50\n",
			      NULL, 0, &c, &err), 0);
	ck_assert_int_eq(tp_conf_nwarnings(c), 0);
	ck_assert_msg(strstr(tp_conf_network_source(c), "from topoplace.conf: DefaultPolicy= "
			     "(line 1), BlockBandwidth= (line 2, not for a tree: ignored), "
			     "NetworkBandwidth= (line 2, not for a tree: ignored)\n"),
		      "%s", tp_conf_network_source(c));
	tp_conf_destroy(c);
	/* an unknown plugin */
	put("slurm.conf", "NodeName=n[1-4]\nTopologyPlugin=topology/3d_torus\n");
	ck_assert_int_ne(load("", NULL, 0, &c, &err), 0);
	tp_assert_err_has(&err, "TopologyPlugin=topology/3d_torus: not a topology");
}
END_TEST

/* Slurm 26.05 lays tasks out by the partition's topology of
 * topology.yaml: leaf by leaf, block by block. */
START_TEST(slurm_order_from_yaml)
{
	char sc[128];
	snprintf(sc, sizeof sc, "%s/slurm.conf", dir);
	put("topology.yaml", "- topology: t\n  cluster_default: true\n  tree:\n"
	    "    switches:\n      - switch: l1\n        nodes: n[2,4]\n"
	    "      - switch: l2\n        nodes: n[1,3]\n"
	    "- topology: b\n  block:\n    blocks:\n      - block: b1\n        nodes: n[3-4]\n"
	    "      - block: b2\n        nodes: n[1-2]\n");
	put("slurm.conf", "NodeName=n[1-4]\nPartitionName=p Nodes=ALL Topology=b\n");
	tp_conf *c;
	tp_error err;
	ck_assert_int_eq(load("", NULL, 0, &c, &err), 0);
	tp_alloc *a;
	ck_assert_int_eq(tp_alloc_from_hostlist(tp_conf_machine(c), "n[1-4]", 1, "nodes",
						&a, &err), 0);
	char how[TP_ERROR_MSG_MAX];
	ck_assert_int_eq(tp_alloc_take_slurm_order(a, sc, NULL, TP_SLURM_VERSION(26, 5, 0),
						   how), 0);
	const char *want_t[] = { "n2", "n4", "n1", "n3" };
	for (int i = 0; i < 4; i++)
		ck_assert_str_eq(tp_machine_node_name(tp_conf_machine(c), tp_alloc_node(a, i)),
				 want_t[i]);
	ck_assert_msg(strstr(how, "leaf switch by leaf switch, as Slurm 26.05 lays tasks "
			     "out (topology t of"), "%s", how);
	tp_alloc_destroy(a);
	tp_conf_destroy(c);
	ck_assert_int_eq(load("", "p", 0, &c, &err), 0);
	ck_assert_int_eq(tp_alloc_from_hostlist(tp_conf_machine(c), "n[1-4]", 1, "nodes",
						&a, &err), 0);
	ck_assert_int_eq(tp_alloc_take_slurm_order(a, sc, "p", TP_SLURM_VERSION(26, 5, 0),
						   how), 0);
	const char *want_b[] = { "n3", "n4", "n1", "n2" };
	for (int i = 0; i < 4; i++)
		ck_assert_str_eq(tp_machine_node_name(tp_conf_machine(c), tp_alloc_node(a, i)),
				 want_b[i]);
	tp_alloc_destroy(a);
	tp_conf_destroy(c);
}
END_TEST

/* A warning of c that holds frag (NULL: none). */
static const char *warning_with(const tp_conf *c, const char *frag)
{
	for (int i = 0; i < tp_conf_nwarnings(c); i++)
		if (strstr(tp_conf_warning(c, i), frag))
			return tp_conf_warning(c, i);
	return NULL;
}

/* The leaf switch (tree) or block of node name in c's machine. */
static const char *node_unit(const tp_conf *c, const char *name, char *buf, size_t len)
{
	const tp_machine *m = tp_conf_machine(c);
	int32_t k = tp_machine_find_node(m, name);
	if (k < 0)
		return "(none)";
	int32_t b = tp_machine_node_block(m, k);
	snprintf(buf, len, "%s", b >= 0 ? tp_machine_block_name(m, b)
		 : tp_machine_switch_name(m, tp_machine_node_switch(m, k)));
	return buf;
}

/* A skeleton topology.yaml (Slurm's test_150_7: leaves without nodes) and
 * slurm.conf's NodeName=... Topology=: the nodes take their place as
 * slurmctld gives it, over what the file says. */
START_TEST(join_tree_from_slurm_conf)
{
	put("topology.yaml", "- topology: tree_topo\n  cluster_default: true\n  tree:\n"
	    "    switches:\n      - switch: sw_root\n        children: sw_plain,sw_other\n"
	    "      - switch: sw_plain\n      - switch: sw_other\n        nodes: n[5-6]\n"
	    "- topology: blk\n  block:\n    block_sizes: [2]\n    blocks:\n"
	    "      - block: b1\n        nodes: n[5-6]\n      - block: b2\n");
	put("slurm.conf", "NodeName=n[1-2] CPUs=1 Topology=tree_topo:sw_plain\n"
	    /* a switch made on the way, under one that exists */
	    "NodeName=n3 Topology=tree_topo:sw_root:sw_new,blk:b2\n"
	    /* NodeName=DEFAULT's Topology= for the lines after it */
	    "NodeName=DEFAULT Topology=tree_topo:sw_other\n"
	    "NodeName=n4\n"
	    /* overrides the file: n6 leaves sw_other for sw_plain, and leaves
	     * blk, which its Topology= does not name */
	    "NodeName=n6 Topology=tree_topo:sw_plain\n"
	    "NodeName=n5\n"
	    "PartitionName=p Nodes=ALL Default=YES\n"
	    "PartitionName=b Nodes=ALL Topology=blk\n");
	tp_conf *c;
	tp_error err;
	ck_assert_int_eq(load("", NULL, 0, &c, &err), 0);
	ck_assert_int_eq(tp_machine_node_count(tp_conf_machine(c)), 6);
	char u[64];
	ck_assert_str_eq(node_unit(c, "n1", u, sizeof u), "sw_plain");
	ck_assert_str_eq(node_unit(c, "n2", u, sizeof u), "sw_plain");
	ck_assert_str_eq(node_unit(c, "n3", u, sizeof u), "sw_new");
	ck_assert_str_eq(node_unit(c, "n4", u, sizeof u), "sw_other");
	ck_assert_str_eq(node_unit(c, "n5", u, sizeof u), "sw_other");
	ck_assert_str_eq(node_unit(c, "n6", u, sizeof u), "sw_plain");
	const char *src = tp_conf_network_source(c);
	ck_assert_msg(strstr(src, "placed by slurm.conf's Topology=: 6 nodes"), "%s", src);
	ck_assert_int_eq(tp_conf_nwarnings(c), 0);
	tp_conf_destroy(c);

	/* the block topology: n3 joins b2; n5 and n6 leave b1, as their
	 * Topology= (n5's from NodeName=DEFAULT) names only tree_topo */
	ck_assert_int_eq(load("", "b", 0, &c, &err), 0);
	ck_assert_int_eq(tp_machine_node_count(tp_conf_machine(c)), 1);
	ck_assert_str_eq(node_unit(c, "n3", u, sizeof u), "b2");
	ck_assert_str_eq(node_unit(c, "n5", u, sizeof u), "(none)");
	ck_assert_str_eq(node_unit(c, "n6", u, sizeof u), "(none)");
	tp_conf_destroy(c);
}
END_TEST

/* What slurmctld refuses: one warning naming the nodes, which stay out
 * (their jobs keep Slurm's placement); the rest is placed. */
START_TEST(join_refused)
{
	put("topology.yaml", "- topology: t\n  tree:\n    switches:\n"
	    "      - switch: root\n        children: l[1-2]\n"
	    "      - switch: l1\n        nodes: n1\n      - switch: l2\n"
	    "- topology: b\n  block:\n    block_sizes: [2]\n    blocks:\n      - block: b1\n");
	put("slurm.conf", "NodeName=n2 Topology=t:nosuch\n"
	    "NodeName=n3 Topology=t:root\n"
	    "NodeName=n4 Topology=other:x\n"
	    "NodeName=n5 Topology=b:b9\n"
	    "NodeName=n6 Topology=t:l2\n"
	    "PartitionName=p Nodes=ALL Default=YES\n");
	tp_conf *c;
	tp_error err;
	ck_assert_int_eq(load("", NULL, 0, &c, &err), 0);
	const tp_machine *m = tp_conf_machine(c);
	ck_assert_int_eq(tp_machine_node_count(m), 2);   /* n1, n6 */
	ck_assert_int_ge(tp_machine_find_node(m, "n6"), 0);
	const char *w;
	ck_assert_ptr_nonnull(w = warning_with(c, "NodeName=n2 Topology=t:nosuch: no switch "
					       "nosuch in topology t"));
	ck_assert_msg(strstr(w, "slurm.conf:1:") && strstr(w, "keep Slurm's placement"), "%s", w);
	ck_assert_ptr_nonnull(warning_with(c, "slurm.conf:2: NodeName=n3 Topology=t:root: "
					   "switch root of topology t is not a leaf"));
	ck_assert_ptr_nonnull(warning_with(c, "slurm.conf:3: NodeName=n4 Topology=other:x: "
					   "no topology other in"));
	ck_assert_ptr_nonnull(warning_with(c, "slurm.conf:4: NodeName=n5 Topology=b:b9: "
					   "no block b9 in topology b"));
	tp_conf_destroy(c);

	/* a NodeName= that is no hostlist: one line naming slurm.conf's line */
	put("slurm.conf", "NodeName=n[1- Topology=t:l2\nPartitionName=p Nodes=ALL Default=YES\n");
	c = (tp_conf *)1;
	ck_assert_int_eq(load("", NULL, 0, &c, &err), TP_EINVAL);
	ck_assert_msg(strstr(err.msg, "slurm.conf:1: NodeName=n[1-: malformed hostlist") &&
		      !strchr(err.msg, '\n'), "%s", err.msg);
}
END_TEST

/* A skeleton with no node anywhere: no network yet, said as such
 * (TP_ENOENT, TP_CONF_SKELETON), not a bad file; the nodes' Topology=
 * makes it one. */
START_TEST(skeleton_then_joined)
{
	put("topology.yaml", "- topology: t\n  block:\n    block_sizes: [2]\n    blocks:\n"
	    "      - block: b1\n      - block: b2\n");
	put("slurm.conf", "NodeName=n[1-4]\nPartitionName=p Nodes=ALL Default=YES\n");
	tp_conf *c = (tp_conf *)1;
	tp_error err;
	ck_assert_int_eq(load("", NULL, 0, &c, &err), TP_ENOENT);
	ck_assert_msg(strstr(err.msg, "topology.yaml: empty blocks (Slurm only warns), "
			     TP_CONF_SKELETON), "%s", err.msg);
	put("slurm.conf", "NodeName=n[1-2] Topology=t:b2\nNodeName=n[3-4] Topology=t:b1\n"
	    "PartitionName=p Nodes=ALL Default=YES\n");
	ck_assert_int_eq(load("", NULL, 0, &c, &err), 0);
	ck_assert_int_eq(tp_machine_node_count(tp_conf_machine(c)), 4);
	char u[64];
	ck_assert_str_eq(node_unit(c, "n1", u, sizeof u), "b2");
	ck_assert_str_eq(node_unit(c, "n4", u, sizeof u), "b1");
	tp_conf_destroy(c);
}
END_TEST

/* tp_conf_load_slurm_live with load()'s files. */
static int load_live(const char *live, const char *topology, const char *partition,
		     tp_conf **c, tp_error *err)
{
	char sc[128], tc[128];
	snprintf(sc, sizeof sc, "%s/slurm.conf", dir);
	snprintf(tc, sizeof tc, "%s/tp.conf", dir);
	put("tp.conf", "");
	tp_error_clear(err);
	tp_conf_slurm o = { .slurm_conf = sc, .partition = partition };
	return tp_conf_load_slurm_live(tc, &o, live, live ? strlen(live) : 0, topology,
				       "scontrol show topology", c, err);
}

/* A dynamic node (slurmd -Z --conf "Topology=t:l2") is in no file: only
 * slurmctld's live view places it; nodes the files place keep their
 * place whatever the view says, upper switches' Nodes= place nobody, and a
 * leaf the file lacks joins under the switch above it. */
START_TEST(live_tree)
{
	put("topology.yaml", "- topology: t\n  tree:\n    switches:\n"
	    "      - switch: root\n        children: l[1-2]\n"
	    "      - switch: l1\n        nodes: n[1-2]\n      - switch: l2\n");
	put("slurm.conf", "NodeName=n[1-2]\nPartitionName=p Nodes=ALL Default=YES\n");
	static const char view[] =
		"SwitchName=root Level=1 LinkSpeed=1 Nodes=n[1-6] Switches=l[1-3]\n"
		/* n1 where the file does not have it: the file wins */
		"SwitchName=l1 Level=0 LinkSpeed=1 Nodes=n[2-3]\n"
		"SwitchName=l2 Level=0 LinkSpeed=1 Nodes=n[1,4]\n"
		/* a leaf slurmctld made under root */
		"SwitchName=l3 Level=0 LinkSpeed=1 Nodes=n5\n";
	tp_conf *c;
	tp_error err;
	ck_assert_int_eq(load_live(view, "t", NULL, &c, &err), 0);
	const tp_machine *m = tp_conf_machine(c);
	ck_assert_int_eq(tp_machine_node_count(m), 5);
	char u[64];
	ck_assert_str_eq(node_unit(c, "n1", u, sizeof u), "l1");
	ck_assert_str_eq(node_unit(c, "n3", u, sizeof u), "l1");
	ck_assert_str_eq(node_unit(c, "n4", u, sizeof u), "l2");
	ck_assert_str_eq(node_unit(c, "n5", u, sizeof u), "l3");
	/* n6: only under root, in no leaf */
	ck_assert_str_eq(node_unit(c, "n6", u, sizeof u), "(none)");
	ck_assert_int_eq(tp_machine_distance(m, tp_machine_find_node(m, "n5"),
					     tp_machine_find_node(m, "n1")), 4);
	ck_assert_int_eq(tp_conf_nwarnings(c), 0);
	const char *src = tp_conf_network_source(c);
	ck_assert_msg(strstr(src, "placed by slurmctld's live view: 3 nodes"), "%s", src);
	tp_conf_destroy(c);

	/* without the view: n3 to n5 are nowhere */
	ck_assert_int_eq(load_live(NULL, NULL, NULL, &c, &err), 0);
	ck_assert_int_eq(tp_machine_node_count(tp_conf_machine(c)), 2);
	tp_conf_destroy(c);
}
END_TEST

/* The skeleton of blocks: slurmctld's base blocks place the nodes,
 * aggregated blocks do not; slurm.conf's Topology= comes first. */
START_TEST(live_blocks)
{
	put("topology.yaml", "- topology: b\n  block:\n    block_sizes: [2]\n    blocks:\n"
	    "      - block: b1\n      - block: b2\n");
	put("slurm.conf", "NodeName=n1 Topology=b:b2\nNodeName=n[2-4]\n"
	    "PartitionName=p Nodes=ALL Default=YES\n");
	static const char view[] =
		"BlockName=b1 BlockIndex=0 Nodes=n[1-2] BlockSize=2\n"
		"BlockName=b2 BlockIndex=1 Nodes=n[3-4] BlockSize=2\n"
		"AggregatedBlock=b[1-2] BlockIndex=0 Nodes=n[1-4] BlockSize=4\n";
	tp_conf *c;
	tp_error err;
	ck_assert_int_eq(load_live(view, NULL, NULL, &c, &err), 0);
	ck_assert_int_eq(tp_machine_node_count(tp_conf_machine(c)), 4);
	char u[64];
	ck_assert_str_eq(node_unit(c, "n1", u, sizeof u), "b2");
	ck_assert_str_eq(node_unit(c, "n2", u, sizeof u), "b1");
	ck_assert_str_eq(node_unit(c, "n3", u, sizeof u), "b2");
	tp_conf_destroy(c);
}
END_TEST

/* Garbage from slurmctld (or what SLURM_TOPO_LEN cut short): one warning
 * naming the line, and no node placed from it; the files' nodes stay. */
static const char *const bad_views[][2] = {
	{ "SwitchName=l1 Level=0 Nodes=n[3-", "malformed hostlist" },
	{ "SwitchName=l1 Level=0 LinkSpeed=1 Nodes=n3 Bogus=1", "unknown key 'Bogus'" },
	{ "slurm_load_topo error: Unable to contact slurm controller", "expected Key=Value" },
	{ "SwitchName=l1 Nodes=n3", "SwitchName= without Level=" },
	{ "SwitchName=l1 Level=x Nodes=n3", "not a number" },
	{ "Nodes=n3 SwitchName=l1 Level=0", "not a SwitchName= line" },
	{ "SwitchName=a:b Level=0 Nodes=n3", "not one switch name" },
	{ "BlockName=b1 BlockIndex=0 Nodes=n3", "unknown key 'BlockName'" },
	{ "SwitchName=l1 Level=0 Nodes=n3 Nodes=n4", "not one node list" },
	{ "SwitchName=l1 Level=0 Nodes=n3\n\xff\xfe", "expected Key=Value" },
};

START_TEST(live_bad)
{
	put("topology.yaml", "- topology: t\n  tree:\n    switches:\n"
	    "      - switch: root\n        children: l[1-2]\n"
	    "      - switch: l1\n        nodes: n[1-2]\n      - switch: l2\n");
	put("slurm.conf", "NodeName=n[1-2]\nPartitionName=p Nodes=ALL Default=YES\n");
	tp_conf *c;
	tp_error err;
	ck_assert_int_eq(load_live(bad_views[_i][0], NULL, NULL, &c, &err), 0);
	ck_assert_int_eq(tp_machine_node_count(tp_conf_machine(c)), 2);
	const char *w = warning_with(c, bad_views[_i][1]);
	ck_assert_msg(w, "no warning with '%s'", bad_views[_i][1]);
	ck_assert_msg(strstr(w, "scontrol show topology:") &&
		      strstr(w, "topoplace takes no node's place from it") &&
		      !strchr(w, '\n'), "%s", w);
	tp_conf_destroy(c);
}
END_TEST

/* A unit the files do not know: slurmctld's own leaf under a switch the
 * file lacks, a block the file lacks, a topology not in the file: one
 * warning naming the nodes, which keep Slurm's placement. */
START_TEST(live_unknown_unit)
{
	put("topology.yaml", "- topology: t\n  tree:\n    switches:\n"
	    "      - switch: root\n        children: l1\n"
	    "      - switch: l1\n        nodes: n[1-2]\n"
	    "- topology: b\n  block:\n    blocks:\n      - block: b1\n        nodes: n[1-2]\n");
	put("slurm.conf", "NodeName=n[1-2]\nPartitionName=p Nodes=ALL Default=YES\n"
	    "PartitionName=q Nodes=ALL Topology=b\n");
	tp_conf *c;
	tp_error err;
	ck_assert_int_eq(load_live("SwitchName=x9 Level=0 LinkSpeed=1 Nodes=n7\n",
				   "t", NULL, &c, &err), 0);
	ck_assert_int_eq(tp_machine_node_count(tp_conf_machine(c)), 2);
	ck_assert_ptr_nonnull(warning_with(c, "scontrol show topology:1: nodes n7 "
					   "(slurmctld: t:x9): no switch x9 in topology t"));
	tp_conf_destroy(c);
	ck_assert_int_eq(load_live("BlockName=b7 BlockIndex=1 Nodes=n7 BlockSize=1\n",
				   "b", "q", &c, &err), 0);
	ck_assert_int_eq(tp_machine_node_count(tp_conf_machine(c)), 2);
	ck_assert_ptr_nonnull(warning_with(c, "nodes n7 (slurmctld: b:b7): no block b7 "
					   "in topology b"));
	tp_conf_destroy(c);
	ck_assert_int_eq(load_live("SwitchName=l1 Level=0 Nodes=n7\n", "nosuch", NULL,
				   &c, &err), 0);
	ck_assert_ptr_nonnull(warning_with(c, "topology nosuch: not in"));
	ck_assert_int_eq(tp_machine_node_count(tp_conf_machine(c)), 2);
	tp_conf_destroy(c);
}
END_TEST

/* topology.conf is the topology "default", and slurmctld applies
 * NodeName=... Topology=default:UNIT to it (topology_g_add_rm_node, 25.11
 * and later): so does topoplace, for a tree and for blocks; and the live
 * view places a dynamic node there too. */
START_TEST(conf_topology_joined)
{
	put("topology.yaml", NULL);
	put("topology.conf", "SwitchName=root Switches=l[1-2]\nSwitchName=l1 Nodes=n[1-2]\n"
	    "SwitchName=l2\n");
	put("slurm.conf", "TopologyPlugin=topology/tree\nNodeName=n[1-2]\n"
	    "NodeName=n[3-4] Topology=default:l2\nNodeName=n5 Topology=default:root:l3\n"
	    "NodeName=n6 Topology=default:nosuch\n"
	    "PartitionName=p Nodes=ALL Default=YES\n");
	tp_conf *c;
	tp_error err;
	ck_assert_int_eq(load("", NULL, 0, &c, &err), 0);
	char u[64];
	ck_assert_int_eq(tp_machine_node_count(tp_conf_machine(c)), 5);
	ck_assert_str_eq(node_unit(c, "n3", u, sizeof u), "l2");
	ck_assert_str_eq(node_unit(c, "n5", u, sizeof u), "l3");
	ck_assert_ptr_nonnull(warning_with(c, "NodeName=n6 Topology=default:nosuch: no "
					   "switch nosuch in topology default"));
	tp_conf_destroy(c);
	/* n7 joined at run time, only slurmctld knows */
	ck_assert_int_eq(load_live("SwitchName=l2 Level=0 LinkSpeed=1 Nodes=n[3-4,7]\n",
				   NULL, NULL, &c, &err), 0);
	ck_assert_int_eq(tp_machine_node_count(tp_conf_machine(c)), 6);
	ck_assert_str_eq(node_unit(c, "n7", u, sizeof u), "l2");
	tp_conf_destroy(c);

	put("topology.conf", "BlockName=b1 Nodes=n[1-2]\nBlockName=b2\nBlockSizes=2\n");
	put("slurm.conf", "TopologyPlugin=topology/block\nNodeName=n[1-2]\n"
	    "NodeName=n[3-4] Topology=default:b2\nPartitionName=p Nodes=ALL Default=YES\n");
	ck_assert_int_eq(load("", NULL, 0, &c, &err), 0);
	ck_assert_int_eq(tp_machine_node_count(tp_conf_machine(c)), 4);
	ck_assert_str_eq(node_unit(c, "n4", u, sizeof u), "b2");
	tp_conf_destroy(c);
	put("topology.conf", NULL);
}
END_TEST

/* topology.conf as slurmctld's parser reads it: a trailing '\\' continues
 * the line (messages keep its first line's number), "\\#" is a '#'. */
START_TEST(conf_continuation)
{
	tp_machine *m;
	tp_error err;
	tp_error_clear(&err);
	ck_assert_int_eq(tp_machine_from_topology(&m,
		"SwitchName=top \\\n  Switches=l[1-2]   # the spine \\\n"
		"SwitchName=l1 Nodes=n[1-2]\n"
		"SwitchName=l2 \\\n\tNodes=n[3-4]\n", "topology.conf", NULL, 0, &err), 0);
	ck_assert_int_eq(tp_machine_node_count(m), 4);
	ck_assert_int_eq(tp_machine_distance(m, tp_machine_find_node(m, "n1"),
					     tp_machine_find_node(m, "n4")), 4);
	tp_machine_destroy(m);
	/* the error of a continued line names its first line */
	ck_assert_int_ne(tp_machine_from_topology(&m, "SwitchName=a Nodes=n1\n"
		"SwitchName=b \\\n Switches=zz\n", "topology.conf", NULL, 0, &err), 0);
	tp_assert_err_has(&err, "topology.conf:2:");
	tp_assert_err_has(&err, "zz");
}
END_TEST

int main(void)
{
	Suite *s = suite_create("slurm_topology");
	TCase *tc = tcase_create("yaml");
	tcase_add_test(tc, yaml_man_example);
	tcase_add_test(tc, yaml_block_tree_uplinks);
	tcase_add_test(tc, yaml_short_forms);
	tcase_add_test(tc, yaml_unknown_key_warns);
	tcase_add_loop_test(tc, yaml_bad, 0, (int)(sizeof bad_yaml / sizeof bad_yaml[0]));
	tcase_add_test(tc, conf_continuation);
	suite_add_tcase(s, tc);
	TCase *tf = tcase_create("found");
	tcase_add_checked_fixture(tf, setup, teardown);
	tcase_add_test(tf, zero_config);
	tcase_add_test(tf, zero_config_errors);
	tcase_add_test(tf, topology_conf_plugin);
	tcase_add_test(tf, blocks_over_yaml_tree);
	tcase_add_test(tf, slurm_order_from_yaml);
	tcase_add_test(tf, join_tree_from_slurm_conf);
	tcase_add_test(tf, join_refused);
	tcase_add_test(tf, skeleton_then_joined);
	tcase_add_test(tf, live_tree);
	tcase_add_test(tf, live_blocks);
	tcase_add_loop_test(tf, live_bad, 0, (int)(sizeof bad_views / sizeof bad_views[0]));
	tcase_add_test(tf, live_unknown_unit);
	tcase_add_test(tf, conf_topology_joined);
	suite_add_tcase(s, tf);
	return tp_test_run(s);
}
