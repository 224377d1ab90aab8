/* Unit tests: partitioned GPUs (several ROCm SMI OS devices of one PCI
 * device) read from real hwloc exports of LLNL's Tuolumne, 4 x AMD MI300A
 * in CPX, TPX and SPX modes (tests/data/nodes/real/README.md), and GPU
 * selection on them: partitions of one device share its links. */
#include "testutil.h"
#include <topoplace/nodeplace.h>
#include "util/util_internal.h"
#include "node/node_internal.h"
#include "pattern/pattern_internal.h"

#define REAL TP_TEST_NODES "real/"

static tp_node *load_ok(const char *path)
{
	tp_node *n = NULL;
	tp_error err;
	ck_assert_msg(tp_node_load_xml(path, &n, &err) == 0, "%s", err.msg);
	return n;
}

static int route(const tp_node *n, int a, int b, int *links)
{
	int k = tp_node_gpu_route(n, a, b, links, 16);
	ck_assert_int_ge(k, 0);
	return k;
}

/* The shape every mode shares: 4 sockets of 24 cores, one MI300A (PCI
 * 000d:02:00.0 for d = 0..3) and one Slingshot card per socket, the
 * devices joined pairwise by xGMI (ROCm SMI's placeholder 100000 MB/s:
 * one 50 GB/s link a pair). */
static void check_mode(const char *file, int per)
{
	tp_node *n = load_ok(file);
	ck_assert_int_eq(tp_node_npackages(n), 4);
	ck_assert_int_eq(tp_node_ncores(n), 96);
	ck_assert_int_eq(tp_node_nnics(n), 4);
	ck_assert_int_eq(tp_node_ngpus(n), 4 * per);
	ck_assert_int_eq(tp_node_fabric(n), TP_FABRIC_XGMI);
	for (int g = 0; g < 4 * per; g++) {
		char want[16];
		snprintf(want, sizeof want, "000%d:02:00.0", g / per);
		ck_assert_str_eq(tp_node_gpu_busid(n, g), want);
		ck_assert_int_eq(tp_node_gpu_package(n, g), g / per);
		ck_assert_int_eq(tp_node_gpu_nic(n, g), g / per);
		ck_assert_int_eq(tp__node_gpu_partitioned(n, g), per > 1);
		for (int h = 0; h < 4 * per; h++) {
			bool same = g != h && g / per == h / per;
			ck_assert_int_eq(tp__node_same_device(n, g, h), same);
			enum tp_gpu_path p = tp_node_gpu_path(n, g, h);
			ck_assert_int_eq(p, g == h ? TP_PATH_LOC : same ? TP_PATH_PART
						   : TP_PATH_XGMI);
			ck_assert_int_eq(tp_node_xgmi_links(n, g, h), g == h || same ? 0 : 1);
			if (g != h)
				ck_assert_double_eq_tol(tp_node_gpu_bandwidth(n, g, h),
							same ? TP__PART_BW : TP_XGMI_BW, 1e-9);
		}
	}
	/* one xGMI link a pair of devices: partitions of two devices share
	 * it, and each route passes its partitions' links to their device */
	int a[16], b[16];
	int ka = route(n, 0, per, a);
	ck_assert_int_eq(ka, per > 1 ? 3 : 1);
	int kb = route(n, per - 1, 2 * per - 1, b);
	ck_assert_int_eq(kb, ka);
	ck_assert_int_eq(a[ka / 2], b[kb / 2]);
	ck_assert_double_eq_tol(tp_node_link_bandwidth(n, a[ka / 2]), TP_XGMI_BW, 1e-9);
	int fabric = tp_node_link_count(n) - n->nlinks_pci;
	ck_assert_int_eq(fabric, 6);
	/* the way to the network card: the partitions' routes meet at
	 * their device's PCIe link */
	int c0[16], c1[16];
	int k0 = tp_node_gpu_nic_route(n, 0, c0, 16);
	int k1 = tp_node_gpu_nic_route(n, per - 1, c1, 16);
	ck_assert_int_eq(k0, k1);
	ck_assert_int_gt(k0, 1);
	for (int i = per > 1 ? 1 : 0; i < k0; i++)
		ck_assert_int_eq(c0[i], c1[i]);
	ck_assert_double_eq_tol(tp_node_link_bandwidth(n, c0[per > 1 ? 1 : 0]),
				63.015385, 1e-5);
	tp_node_destroy(n);
}

START_TEST(tuolumne_cpx)
{
	check_mode(REAL "tuo.CPX.xml", 6);
	tp_node *n = load_ok(REAL "tuo.CPX.xml");
	/* within a device: the two partitions' links to it, on the package */
	int l[16];
	ck_assert_int_eq(route(n, 2, 4, l), 2);
	ck_assert_str_eq(tp_node_link_name(n, l[0]), "GPU2 - GPU0-5");
	ck_assert_str_eq(tp_node_link_name(n, l[1]), "GPU4 - GPU0-5");
	ck_assert_int_eq(route(n, 3, 20, l), 3);
	ck_assert_str_eq(tp_node_link_name(n, l[1]), "GPU0-5 - GPU18-23 xGMI x1");
	char b[16];
	ck_assert_str_eq(tp_gpu_path_name(TP_PATH_PART, 0, b, sizeof b), "PART");
	/* the picture names the device once and each partition by its OS
	 * device */
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);
	tp_node_describe(n, f);
	fclose(f);
	ck_assert_ptr_nonnull(strstr(text, "24 AMD GPUs joined by xGMI (partitions of 4 devices)"));
	ck_assert_ptr_nonnull(strstr(text, "+- GPU18-23  0003:02:00.0, 6 partitions  (63.02 GB/s up)"));
	ck_assert_ptr_nonnull(strstr(text, "+- GPU19  rsmi19  (1000 GB/s up)"));
	ck_assert_ptr_nonnull(strstr(text, "xGMI: GPU0-5 - GPU6-11 xGMI x1  (50 GB/s)"));
	ck_assert_ptr_nonnull(strstr(text, "GPU0   X      PART   PART"));
	free(text);
	/* parts: each partition a GPU part below its device (a bridge part) */
	tp_node_part p, d;
	bool seen = false;
	for (int i = 0; i < tp_node_nparts(n); i++) {
		ck_assert_int_eq(tp_node_part_get(n, i, &p), TP_OK);
		if (p.kind != TP_PART_GPU || p.index != 7)
			continue;
		ck_assert_int_eq(tp_node_part_get(n, p.parent, &d), TP_OK);
		ck_assert_int_eq(d.kind, TP_PART_BRIDGE);
		ck_assert_str_eq(d.name, "GPU6-11");
		seen = true;
	}
	ck_assert(seen);
	tp_node_destroy(n);
}
END_TEST

START_TEST(tuolumne_tpx_spx)
{
	check_mode(REAL "tuo.TPX.xml", 3);
	check_mode(REAL "tuo.SPX.xml", 1);
}
END_TEST

/* Written back (what the node cache and NodeTopology= pin) and read again:
 * the same partitions and links, the matrix over the rsmiN devices. */
START_TEST(cpx_round_trip)
{
	tp_node *n = load_ok(REAL "tuo.CPX.xml");
	char *xml = NULL;
	size_t len = 0;
	tp_error err;
	ck_assert_msg(tp_node_write_xml(n, &xml, &len, &err) == 0, "%s", err.msg);
	ck_assert_ptr_nonnull(strstr(xml, "name=\"XGMIBandwidth\""));
	tp_node *m = NULL;
	ck_assert_msg(tp_node_load_xml_buffer(xml, len, "again.xml", &m, &err) == 0,
		      "%s", err.msg);
	ck_assert_int_eq(tp_node_ngpus(m), 24);
	for (int g = 0; g < 24; g++)
		for (int h = 0; h < 24; h++) {
			ck_assert_int_eq(tp_node_gpu_path(m, g, h), tp_node_gpu_path(n, g, h));
			ck_assert_int_eq(tp_node_xgmi_links(m, g, h), tp_node_xgmi_links(n, g, h));
			ck_assert_double_eq_tol(tp_node_gpu_bandwidth(m, g, h),
						tp_node_gpu_bandwidth(n, g, h), 1e-9);
		}
	ck_assert_int_eq(tp_node_link_count(m), tp_node_link_count(n));
	tp_node_destroy(m);
	free(xml);
	tp_node_destroy(n);
}
END_TEST

/* The real file with one matrix naming a partition twice: refused, one
 * line naming the file, the line and the partition. */
START_TEST(cpx_partition_twice)
{
	char *buf;
	size_t len;
	tp_error err;
	ck_assert_int_eq(tp__read_file(REAL "tuo.CPX.xml", TP__MAX_XML_BYTES, "x",
				       &buf, &len, &err), 0);
	char *hops = strstr(buf, "name=\"XGMIHops\"");
	ck_assert_ptr_nonnull(hops);
	char *idx = strstr(hops, "919 920 ");
	ck_assert_ptr_nonnull(idx);
	memcpy(idx, "919 919 ", 8);
	tp_node *n = (tp_node *)1;
	ck_assert_int_eq(tp_node_load_xml_buffer(buf, len, "tuo.xml", &n, &err), TP_EINVAL);
	ck_assert_ptr_null(n);
	tp_assert_err_has(&err, "tuo.xml: hwloc XML line ");
	tp_assert_err_has(&err, "XGMIHops: objects 0 and 1 are one GPU partition (line 376)");
	ck_assert_ptr_null(strchr(err.msg, '\n'));
	free(buf);
}
END_TEST

/* A matrix not symmetric between two partitions: the line names each by
 * its OS device and device; amd-smi text (GPUs named by bus id) cannot
 * name partitions and is refused in one line. */
START_TEST(cpx_bad_inputs_name_partitions)
{
	char *buf;
	size_t len;
	tp_error err;
	ck_assert_int_eq(tp__read_file(REAL "tuo.CPX.xml", TP__MAX_XML_BYTES, "x",
				       &buf, &len, &err), 0);
	char *bw = strstr(buf, "name=\"XGMIBandwidth\"");
	ck_assert_ptr_nonnull(bw);
	char *row = strstr(bw, ">1000000 100000 ");
	ck_assert_ptr_nonnull(row);
	memcpy(row, ">1000000 200000 ", 16);
	tp_node *n = (tp_node *)1;
	ck_assert_int_eq(tp_node_load_xml_buffer(buf, len, "tuo.xml", &n, &err), TP_EINVAL);
	ck_assert_ptr_null(n);
	tp_assert_err_has(&err, "XGMIBandwidth: not symmetric: GPU0 (rsmi0 of 0000:02:00.0) "
			  "to GPU1 (rsmi1 of 0000:02:00.0) is 200000, GPU1 (rsmi1 of "
			  "0000:02:00.0) to GPU0 (rsmi0 of 0000:02:00.0) is 100000");
	free(buf);
	n = load_ok(REAL "tuo.CPX.xml");
	ck_assert_int_eq(tp_node_load_links(n, REAL "mi300x-amd-smi-topology.txt", &err),
			 TP_EINVAL);
	tp_assert_err_has(&err, "mi300x-amd-smi-topology.txt: GPUs named by PCI bus id, "
			  "but the 6 GPUs of ");
	tp_assert_err_has(&err, "at 0000:02:00.0 are partitions of one device");
	ck_assert_ptr_null(strchr(err.msg, '\n'));
	/* the model is as it was */
	ck_assert_int_eq(tp_node_xgmi_links(n, 0, 6), 1);
	tp_node_destroy(n);
}
END_TEST

/* Counts that name the partitions of two devices unevenly (a links file):
 * the devices' one link takes the widest, for every pair of them. */
START_TEST(uneven_counts_one_link)
{
	tp_node *n = load_ok(REAL "tuo.CPX.xml");
	int c[24 * 24] = { 0 };
	c[1 * 24 + 7] = c[7 * 24 + 1] = 2;
	c[2 * 24 + 3] = c[3 * 24 + 2] = 4;     /* one device: no xGMI link */
	tp_error err;
	ck_assert_msg(tp_node_set_xgmi(n, c, 24, "x.links", &err) == 0, "%s", err.msg);
	ck_assert_int_eq(tp_node_xgmi_links(n, 0, 6), 2);
	ck_assert_int_eq(tp_node_xgmi_links(n, 11, 5), 2);
	ck_assert_int_eq(tp_node_xgmi_links(n, 2, 3), 0);
	ck_assert_int_eq(tp_node_xgmi_links(n, 0, 12), 0);
	ck_assert_int_eq(tp_node_gpu_path(n, 2, 3), TP_PATH_PART);
	ck_assert_int_eq(tp_node_gpu_path(n, 4, 10), TP_PATH_XGMI);
	ck_assert_double_eq_tol(tp_node_gpu_bandwidth(n, 4, 10), 2 * TP_XGMI_BW, 1e-9);
	/* devices 0 and 2: no xGMI link, PCIe and the socket link */
	ck_assert_int_eq(tp_node_gpu_path(n, 0, 12), TP_PATH_SYS);
	int a[16], b[16];
	ck_assert_int_eq(route(n, 0, 6, a), 3);
	ck_assert_int_eq(route(n, 5, 11, b), 3);
	ck_assert_int_eq(a[1], b[1]);
	ck_assert_int_eq(tp_node_link_count(n) - n->nlinks_pci, 1);
	tp_node_destroy(n);
}
END_TEST

/* Made up, not hwloc's output (hwloc lists no MIG instances: its NVML
 * backend gives the physical GPUs): three NVIDIA devices of two nvmlN OS
 * devices each, 12 NVLinks between every two devices (through NVSwitches
 * by the counts: 12 x 2 > 18).  The partitions of a device share its one
 * link to the switch; none between partitions of one device. */
START_TEST(nvidia_partitions_on_nvswitch)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	ck_assert_ptr_nonnull(f);
#define S(c) "cpuset=\"" c "\" complete_cpuset=\"" c "\" nodeset=\"0x1\" " \
		"complete_nodeset=\"0x1\""
	fprintf(f, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
		"<topology version=\"2.0\">\n"
		"<object type=\"Machine\" os_index=\"0\" " S("0x3") " gp_index=\"1\">\n"
		"<object type=\"Package\" os_index=\"0\" " S("0x3") " gp_index=\"2\">\n"
		"<object type=\"NUMANode\" os_index=\"0\" " S("0x3") " gp_index=\"3\"/>\n"
		"<object type=\"Core\" os_index=\"0\" " S("0x1") " gp_index=\"4\">"
		"<object type=\"PU\" os_index=\"0\" " S("0x1") " gp_index=\"5\"/></object>\n"
		"<object type=\"Core\" os_index=\"1\" " S("0x2") " gp_index=\"6\">"
		"<object type=\"PU\" os_index=\"1\" " S("0x2") " gp_index=\"7\"/></object>\n"
		"<object type=\"Bridge\" gp_index=\"9\" bridge_type=\"0-1\" depth=\"0\""
		" bridge_pci=\"0000:[01-20]\">\n");
#undef S
	for (int d = 0; d < 3; d++) {
		fprintf(f, "<object type=\"PCIDev\" gp_index=\"%d\" pci_busid=\"0000:%02x:00.0\""
			" pci_type=\"0302 [10de:2330] [10de:16c1] a1\" pci_link_speed=\"31.5\">\n",
			10 + d, 1 + d);
		for (int k = 0; k < 2; k++)
			fprintf(f, "<object type=\"OSDev\" gp_index=\"%d\" name=\"nvml%d\""
				" osdev_type=\"1\"/>\n", 20 + 2 * d + k, 2 * d + k);
		fprintf(f, "</object>\n");
	}
	fprintf(f, "</object>\n</object>\n</object>\n"
		"<distances2 type=\"OSDev\" nbobjs=\"6\" kind=\"25\" name=\"NVLinkBandwidth\""
		" indexing=\"gp\">\n<indexes length=\"17\">20 21 22 23 24 25</indexes>\n");
	for (int i = 0; i < 6; i++) {
		char row[128] = "";
		for (int j = 0; j < 6; j++)
			snprintf(row + strlen(row), sizeof row - strlen(row), "%s%s",
				 j ? " " : "", i == j ? "1000000" : i / 2 == j / 2 ? "0"
				 : "300000");
		fprintf(f, "<u64values length=\"%d\">%s</u64values>\n", (int)strlen(row), row);
	}
	fprintf(f, "</distances2>\n</topology>\n");
	fclose(f);
	tp_node *n = NULL;
	tp_error err;
	ck_assert_msg(tp_node_load_xml_buffer(buf, len, "mig.xml", &n, &err) == 0, "%s",
		      err.msg);
	ck_assert_int_eq(tp_node_ngpus(n), 6);
	ck_assert_int_eq(tp_node_has_nvswitch(n), 1);
	ck_assert_int_eq(tp_node_nvlinks(n, 0, 1), 0);
	ck_assert_int_eq(tp_node_nvlinks(n, 1, 4), 12);
	ck_assert_int_eq(tp_node_gpu_path(n, 0, 1), TP_PATH_PART);
	ck_assert_int_eq(tp_node_gpu_path(n, 0, 5), TP_PATH_NVL);
	ck_assert_double_eq_tol(tp_node_gpu_bandwidth(n, 0, 5), 12 * 25, 1e-9);
	int a[16], b[16];
	ck_assert_int_eq(route(n, 0, 5, a), 4);
	ck_assert_int_eq(route(n, 1, 4, b), 4);
	ck_assert_str_eq(tp_node_link_name(n, a[1]), "GPU0-1 - NVSwitch");
	ck_assert_int_eq(a[1], b[1]);
	ck_assert_int_eq(a[2], b[2]);
	ck_assert_int_eq(tp_node_link_count(n) - n->nlinks_pci, 3);
	tp_node_destroy(n);
	free(buf);
}
END_TEST

static tp_graph *edges(int32_t nt, int m, const int32_t *u, const int32_t *v,
		       const double *b)
{
	tp_graph *g = NULL;
	tp_error err;
	ck_assert_msg(tp_graph_from_edges(&g, nt, m, u, v, b, "t", &err) == 0, "%s",
		      err.msg);
	return g;
}

/* Two tasks of a CPX node sending to a third on another node: on two
 * partitions of one device both flows cross that device's one PCIe link
 * to the card; on two devices each has its own.  Allowed: GPU0 and GPU1
 * (one device) and GPU6 (the next). */
START_TEST(gpusel_partitions_share_uplink)
{
	tp_node *n = load_ok(REAL "tuo.CPX.xml");
	int32_t u[] = { 0, 1 }, v[] = { 2, 2 };
	double b[] = { 1e9, 1e9 };
	tp_graph *g = edges(3, 2, u, v, b);
	int32_t tasks[] = { 0, 1 };
	int allowed[] = { 0, 1, 6 };
	int gpus[2];
	tp_gpusel_cost c, same;
	tp_error err;
	tp_node_tasks on = { n, g, tasks, 2 };
	ck_assert_msg(tp_gpusel(&(tp_gpusel_request){ .on = on, .allowed = allowed,
			.nallowed = 3, .gpus_per_task = 1, .algo = TP_GPUSEL_MAGC },
			gpus, &c, &err) == 0, "%s", err.msg);
	ck_assert(!tp__node_same_device(n, gpus[0], gpus[1]));
	/* each flow alone on the way to its card: its slowest link, the
	 * card's port (31.5 GB/s) */
	ck_assert_double_eq_tol(c.max_congestion_ms, 1e9 / 31.507692 / 1e6, 1e-6);
	/* both on GPU0 and GPU1: the card's port carries both */
	int both[] = { 0, 1 };
	ck_assert_int_eq(tp_gpusel_eval(&on, 1, both, &same, &err), 0);
	ck_assert_double_eq_tol(same.max_congestion_ms, 2 * c.max_congestion_ms, 1e-6);
	tp_graph_destroy(g);
	tp_node_destroy(n);
}
END_TEST

/* Two tasks that talk only to each other: two partitions of one device
 * (on the package) beat two devices (one 50 GB/s xGMI link). */
START_TEST(gpusel_partitions_talk_on_package)
{
	tp_node *n = load_ok(REAL "tuo.CPX.xml");
	int32_t u[] = { 0 }, v[] = { 1 };
	double b[] = { 1e9 };
	tp_graph *g = edges(2, 1, u, v, b);
	int allowed[] = { 0, 6, 7 };
	int gpus[2];
	tp_gpusel_cost c, apart;
	tp_error err;
	tp_node_tasks on = { n, g, NULL, 2 };
	ck_assert_msg(tp_gpusel(&(tp_gpusel_request){ .on = on, .allowed = allowed,
			.nallowed = 3, .gpus_per_task = 1, .algo = TP_GPUSEL_MAGC },
			gpus, &c, &err) == 0, "%s", err.msg);
	ck_assert(tp__node_same_device(n, gpus[0], gpus[1]));
	ck_assert_int_eq(gpus[0] + gpus[1], 13);
	ck_assert_double_eq_tol(c.max_congestion_ms, 1e9 / TP__PART_BW / 1e6, 1e-9);
	int two[] = { 0, 6 };
	ck_assert_int_eq(tp_gpusel_eval(&on, 1, two, &apart, &err), 0);
	ck_assert_double_eq_tol(apart.max_congestion_ms, 1e9 / TP_XGMI_BW / 1e6, 1e-9);
	tp_graph_destroy(g);
	tp_node_destroy(n);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("partitions");
	TCase *tc = tcase_create("partitions");
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, tuolumne_cpx);
	tcase_add_test(tc, tuolumne_tpx_spx);
	tcase_add_test(tc, cpx_round_trip);
	tcase_add_test(tc, cpx_partition_twice);
	tcase_add_test(tc, uneven_counts_one_link);
	tcase_add_test(tc, cpx_bad_inputs_name_partitions);
	tcase_add_test(tc, nvidia_partitions_on_nvswitch);
	tcase_add_test(tc, gpusel_partitions_share_uplink);
	tcase_add_test(tc, gpusel_partitions_talk_on_package);
	suite_add_tcase(s, tc);
	return tp_test_run(s);
}
