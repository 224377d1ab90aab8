/* Slurm 26.05's own order of a job's nodes on a ring or torus3d topology
 * (topology_p_get_rank of topology/ring and topology/torus3d), the
 * baseline every placement is judged against.  Expected orders are worked
 * out by hand from Slurm 26.05.3's source, in the comments. */
#include <sys/stat.h>
#include <unistd.h>

#include "testutil.h"

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

static void setup(void)
{
	snprintf(dir, sizeof dir, "/tmp/tp-sorder-XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(dir));
}

static void teardown(void)
{
	put("slurm.conf", NULL);
	put("topology.yaml", NULL);
	put("topology.conf", NULL);
	rmdir(dir);
}

/* Every node the topologies below name: the stand-in for slurm.conf's
 * nodes (a ring counts the positions of those alone, a torus is whole when
 * the job has all of those of it).  Loaded once, before the tests fork. */
static tp_conf *all;

static void load_all(void)
{
	tp_error err;
	if (tp_conf_load_string("Network=torus Dims=64x64x32 Wrap=yes\n"
				"NodeName=n[000000-131071] CoordOrder=x-major\n",
				"t.conf", &all, &err)) {
		fprintf(stderr, "%s\n", err.msg);
		abort();
	}
}

static void free_all(void)
{
	tp_conf_destroy(all);
}

/* The job's nodes (a hostlist in node index order: sorted by name, as
 * Slurm writes SLURM_JOB_NODELIST) in Slurm's order, joined by blanks into
 * got; how said into how. */
static void order(const char *nodes, const char *partition, char *got,
		  size_t len, char *how)
{
	char sc[128];
	tp_error err;
	tp_alloc *a = NULL;
	const tp_machine *m = tp_conf_machine(all);
	ck_assert_int_eq(tp_alloc_from_hostlist(m, nodes, 1, "nodes", &a, &err), 0);
	snprintf(sc, sizeof sc, "%s/slurm.conf", dir);
	ck_assert_int_eq(tp_alloc_take_slurm_order(a, sc, partition,
						   TP_SLURM_VERSION(26, 5, 3), how), 0);
	size_t o = 0;
	got[0] = '\0';
	for (int32_t i = 0; i < tp_alloc_nnodes(a); i++)
		o += (size_t)snprintf(got + o, len - o, "%s%s", i ? " " : "",
				      tp_machine_node_name(m, tp_alloc_node(a, i)));
	tp_alloc_destroy(a);
}

static void assert_how(const char *how, const char *want)
{
	ck_assert_msg(strstr(how, want), "\"%s\" lacks \"%s\"", how, want);
}

static const char slurm_conf[] =
	"NodeName=n[000000-131071]\n"
	"PartitionName=rings Nodes=ALL Topology=rings Default=YES\n"
	"PartitionName=pods Nodes=ALL Topology=pods\n"
	"PartitionName=big Nodes=ALL Topology=big\n";

static const char topology_yaml[] =
	"- topology: rings\n"
	"  ring:\n"
	"    rings:\n"
	"      - ring: r0\n"
	"        nodes: n[000000-000007]\n"
	"      - ring: r1\n"
	"        nodes: n000015,n000011,n000014\n"
	"      - ring: r2\n"
	"        nodes: n000013,n000012\n"
	"- topology: pods\n"
	"  torus3d:\n"
	"    toruses:\n"
	"      - name: pod1\n"
	"        dims: {x: 4, y: 4, z: 2}\n"
	"        nodes: n[000000-000031]\n"
	"      - name: pod2\n"
	"        dims: {x: 4, y: 4, z: 2}\n"
	"        regions:\n"
	"          - anchor: {x: 2, y: 0, z: 0}\n"
	"            dims: {x: 2, y: 2, z: 2}\n"
	"            nodes: n[000032-000039]\n"
	"          - anchor: {x: 0, y: 0, z: 0}\n"
	"            dims: {x: 2, y: 2, z: 2}\n"
	"            nodes: n[000040-000047]\n"
	"- topology: big\n"
	"  torus3d:\n"
	"    toruses:\n"
	"      - name: big\n"
	"        dims: {x: 64, y: 64, z: 32}\n"
	"        nodes: n[000000-131071]\n";

static void rings_files(void)
{
	put("slurm.conf", slurm_conf);
	put("topology.yaml", topology_yaml);
}

/* rank = ring index << 16 + position from the start of the job's run. */
START_TEST(ring_wraps)
{
	char got[512], how[TP_ERROR_MSG_MAX];
	rings_files();
	/* r0 = n0..n7 at positions 0..7; the job holds both ends (0, 1 and
	 * 6, 7): its run starts after the gap, at 6: n6 0, n7 1, n0 2, n1 3 */
	order("n000000,n000001,n000006,n000007", NULL, got, sizeof got, how);
	ck_assert_str_eq(got, "n000006 n000007 n000000 n000001");
	assert_how(how, "ring by ring, each from the start of the job's run on it, "
		   "as Slurm 26.05 lays tasks out (topology rings of ");
	assert_how(how, "/topology.yaml)");
	/* two runs, 0 and 2 .. 7: Slurm starts at the first position of the
	 * job's after the first gap, 2: n2 0, n7 5, n0 6 */
	order("n000000,n000002,n000007", NULL, got, sizeof got, how);
	ck_assert_str_eq(got, "n000002 n000007 n000000");
	/* no wrap: from position 0, the hostlist's order here */
	order("n000002,n000003,n000005", "rings", got, sizeof got, how);
	ck_assert_str_eq(got, "n000002 n000003 n000005");
	/* the whole ring: no gap, from 0 */
	order("n[000000-000007]", NULL, got, sizeof got, how);
	ck_assert_str_eq(got, "n000000 n000001 n000002 n000003 n000004 n000005 "
			 "n000006 n000007");
}
END_TEST

/* Two rings: ring 1's nodes after ring 0's, each in its ring order; a
 * node in no ring ranks 0, level with ring 0's first position (ties by
 * node index). */
START_TEST(ring_two_rings)
{
	char got[512], how[TP_ERROR_MSG_MAX];
	rings_files();
	/* n6, n7 of r0 (no wrap: positions 6, 7, ranks 6, 7); r1 = n15 n11
	 * n14, all the job's: 65536 + 0, 1, 2; r2 = n13 n12: 131072 + 0, 1;
	 * n20 in no ring: 0 */
	order("n000006,n000007,n[000011-000015],n000020", NULL, got, sizeof got, how);
	ck_assert_str_eq(got, "n000020 n000006 n000007 n000015 n000011 n000014 "
			 "n000013 n000012");
	/* r1 wrapping: n14 (2) and n15 (0), not n11 (1): start 2: n14 0, n15 1;
	 * n0 of r0 ranks 0 as n20 does: by node index */
	order("n000000,n000014,n000015,n000020", NULL, got, sizeof got, how);
	ck_assert_str_eq(got, "n000000 n000020 n000014 n000015");
}
END_TEST

/* topology/ring from topology.conf (TopologyPlugin=topology/ring), a
 * value in quotes as Slurm's parser reads it. */
START_TEST(ring_from_conf)
{
	char got[512], how[TP_ERROR_MSG_MAX];
	put("slurm.conf", "NodeName=n[000000-000007]\nTopologyPlugin=topology/ring\n");
	put("topology.conf", "RingName=r0 Nodes=\"n[000004-000007]\"\n"
	    "RingName=r1 Nodes=n[000000-000003]\n");
	/* r0: n4 n7 wrap: start 3 (n7 0, n4 1); r1: n0 n1, from 0 */
	order("n000000,n000001,n000004,n000007", NULL, got, sizeof got, how);
	ck_assert_str_eq(got, "n000007 n000004 n000000 n000001");
	assert_how(how, "ring by ring, each from the start of the job's run on it, "
		   "as Slurm 26.05 lays tasks out (");
	assert_how(how, "/topology.conf)");
}
END_TEST

/* The whole 4x4x2 torus: absolute coordinates, 2+2+1 bits interleaved
 * x0 y0 z0 x1 y1; rank (1 << 16) | code.  Code c holds x = c0 + 2 c3,
 * y = c1 + 2 c4, z = c2; node k sits at (k % 4, k / 4 % 4, k / 16). */
START_TEST(torus_whole)
{
	char got[1024], how[TP_ERROR_MSG_MAX], want[1024];
	rings_files();
	order("n[000000-000031]", "pods", got, sizeof got, how);
	static const int by_code[] = { 0, 1, 4, 5, 16, 17, 20, 21, 2, 3, 6, 7, 18,
				       19, 22, 23, 8, 9, 12, 13, 24, 25, 28, 29,
				       10, 11, 14, 15, 26, 27, 30, 31 };
	size_t o = 0;
	for (int i = 0; i < 32; i++)
		o += (size_t)snprintf(want + o, sizeof want - o, "%sn%06d",
				      i ? " " : "", by_code[i]);
	ck_assert_str_eq(got, want);
	assert_how(how, "torus by torus, in Morton order of the job's box, as Slurm "
		   "26.05 lays tasks out (topology pods of ");
}
END_TEST

/* Part of the torus: offsets from the shortest arc round each axis. */
START_TEST(torus_partial_wrap)
{
	char got[512], how[TP_ERROR_MSG_MAX];
	rings_files();
	/* n4 (0,1,0), n7 (3,1,0), n8 (0,2,0), n11 (3,2,0): x {0,3} wraps: from
	 * 3, span 2; y from 1, span 2; z span 1: one bit each of x, y.  n7 0,
	 * n4 1, n11 2, n8 3; n100 in no torus ranks 0 */
	order("n000004,n000007,n000008,n000011,n000100", "pods", got, sizeof got, how);
	ck_assert_str_eq(got, "n000100 n000007 n000004 n000011 n000008");
	/* both toruses: pod1's (1 << 16) before pod2's (2 << 16); n0 (0,0,0)
	 * and n1 (1,0,0) of pod1, n40 (0,0,0) and n41 (1,0,0) of pod2 */
	order("n000000,n000001,n000040,n000041", "pods", got, sizeof got, how);
	ck_assert_str_eq(got, "n000000 n000001 n000040 n000041");
}
END_TEST

/* pod2 in regions: (2,0,0)+2x2x2 = n32..n39 and (0,0,0)+2x2x2 = n40..n47,
 * x-major inside each region; half its cells have no node. */
START_TEST(torus_regions)
{
	char got[512], how[TP_ERROR_MSG_MAX];
	rings_files();
	/* every node of pod2: the whole torus for Slurm (its nodes, not its
	 * cells), absolute coordinates: n40..n47 codes 0..7, n32..n39
	 * (x 2, 3: x1 set) 8..15 */
	order("n[000032-000047]", "pods", got, sizeof got, how);
	ck_assert_str_eq(got, "n000040 n000041 n000042 n000043 n000044 n000045 "
			 "n000046 n000047 n000032 n000033 n000034 n000035 "
			 "n000036 n000037 n000038 n000039");
	/* n33 (3,0,0), n35 (3,1,0), n40 (0,0,0), n42 (0,1,0): x from 3 round
	 * the wrap, y from 0: n33 0, n40 1, n35 2, n42 3 */
	order("n000033,n000035,n000040,n000042", "pods", got, sizeof got, how);
	ck_assert_str_eq(got, "n000033 n000040 n000035 n000042");
}
END_TEST

/* More than 16 bits: 64x64x32, the job's arcs 33, 33, 17 want 6+6+5
 * bits: x gives one up, its lowest bit dropped; bits from 0: x1 y0 z0 x2
 * y1 z1 ...  O (0,0,0) 0, P (1,0,0) 0 too (a tie: node index), R (2,0,0)
 * 1, Q (0,1,0) 2, A (0,0,1) 4, B (4,0,0) 8, E (32,32,16) 2^12 + 2^14 +
 * 2^15; unscaled, R (8) would follow Q (2) and A (4). */
START_TEST(torus_scaled)
{
	char got[512], how[TP_ERROR_MSG_MAX];
	rings_files();
	order("n000000,n000001,n000002,n000004,n000064,n004096,n067616", "big",
	      got, sizeof got, how);
	ck_assert_str_eq(got, "n000000 n000001 n000002 n000064 n004096 n000004 "
			 "n067616");
}
END_TEST

int main(void)
{
	Suite *s = suite_create("slurm_order");
	TCase *tc = tcase_create("ring_torus3d");
	tcase_add_unchecked_fixture(tc, load_all, free_all);
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, ring_wraps);
	tcase_add_test(tc, ring_two_rings);
	tcase_add_test(tc, ring_from_conf);
	tcase_add_test(tc, torus_whole);
	tcase_add_test(tc, torus_partial_wrap);
	tcase_add_test(tc, torus_regions);
	tcase_add_test(tc, torus_scaled);
	suite_add_tcase(s, tc);
	return tp_test_run(s);
}
