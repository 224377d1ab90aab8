/* Unit tests: the node model (core/src/node/node*.c) and the GPU
 * peer matrix reader (core/src/node/gpu_matrix.c). */
#include <unistd.h>

#include "testutil.h"
#include "util/util_internal.h"
#include "conf/conf_internal.h"
#include "node/node_internal.h"
#include "pattern/pattern_internal.h"

static tp_node *load(const char *name, const char *links)
{
	tp_node *n = NULL;
	tp_error err;
	tp_error_clear(&err);
	char path[512];
	tp_test_node_path(path, sizeof path, name);
	ck_assert_msg(tp_node_load_xml(path, &n, &err) == 0, "%s", err.msg);
	if (links) {
		tp_test_node_path(path, sizeof path, links);
		ck_assert_msg(tp_node_load_links(n, path, &err) == 0, "%s", err.msg);
	}
	return n;
}

START_TEST(nvl4_model)
{
	tp_node *n = load("nvl4.xml", NULL);
	ck_assert_int_eq(tp_node_npackages(n), 2);
	ck_assert_int_eq(tp_node_nnuma(n), 2);
	ck_assert_int_eq(tp_node_ncores(n), 16);
	ck_assert_int_eq(tp_node_ngpus(n), 4);
	ck_assert_str_eq(tp_node_gpu_busid(n, 0), "0000:13:00.0");
	ck_assert_str_eq(tp_node_gpu_busid(n, 3), "0000:94:00.0");
	ck_assert_ptr_null(tp_node_gpu_busid(n, 4));
	int pk[4] = { 0, 0, 1, 1 };
	for (int g = 0; g < 4; g++) {
		ck_assert_int_eq(tp_node_gpu_package(n, g), pk[g]);
		ck_assert_int_eq(tp_node_gpu_numa(n, g), pk[g]);
	}
	/* PCIe only: the pair under one switch is PIX, across sockets SYS */
	ck_assert_int_eq(tp_node_gpu_path(n, 0, 1), TP_PATH_PIX);
	ck_assert_int_eq(tp_node_gpu_path(n, 0, 2), TP_PATH_SYS);
	ck_assert_int_eq(tp_node_gpu_path(n, 2, 2), TP_PATH_LOC);
	ck_assert_double_eq_tol(tp_node_gpu_bandwidth(n, 0, 1), 15.753846, 1e-4);
	ck_assert_double_eq_tol(tp_node_gpu_bandwidth(n, 0, 2), TP_SMP_BW, 1e-9);
	int links[64];
	/* GPU - port - switch ... : 4 links up to the switch's LCA */
	ck_assert_int_eq(tp_node_gpu_route(n, 0, 1, links, 64), 4);
	/* up 5 links to socket 0, the socket link, 5 down */
	ck_assert_int_eq(tp_node_gpu_route(n, 0, 2, links, 64), 11);
	ck_assert_int_eq(tp_node_gpu_route(n, 0, 2, links, 3), TP_EINVAL);
	bool socket_link = false;
	for (int i = 0; i < 11; i++)
		if (!strcmp(tp_node_link_name(n, links[i]), "socket0 - socket1"))
			socket_link = true;
	ck_assert(socket_link);

	/* NVLink pairs from gres.conf */
	tp_error err;
	ck_assert_int_eq(tp_node_load_links(n, TP_EXAMPLE_NODES "nvl4.links", &err), 0);
	ck_assert_int_eq(tp_node_nvlinks(n, 0, 1), 4);
	ck_assert_int_eq(tp_node_nvlinks(n, 1, 2), 0);
	ck_assert_int_eq(tp_node_has_nvswitch(n), 0);
	ck_assert_int_eq(tp_node_gpu_path(n, 0, 1), TP_PATH_NVL);
	ck_assert_int_eq(tp_node_gpu_path(n, 1, 2), TP_PATH_SYS);
	ck_assert_double_eq_tol(tp_node_gpu_bandwidth(n, 2, 3), 4 * TP_NVLINK_BW, 1e-9);
	ck_assert_int_eq(tp_node_gpu_route(n, 2, 3, links, 64), 1);
	ck_assert_str_eq(tp_node_link_name(n, links[0]), "GPU2 - GPU3 NVLink x4");
	/* a links file gives counts only: NVLink 2-4, 25 GB/s a link */
	ck_assert_double_eq_tol(tp_node_link_bandwidth(n, links[0]), 100, 1e-9);
	char b[16];
	ck_assert_str_eq(tp_gpu_path_name(TP_PATH_NVL, 4, b, sizeof b), "NV4");
	ck_assert_str_eq(tp_gpu_path_name(TP_PATH_PXB, 0, b, sizeof b), "PXB");
	/* loading again replaces the NVLinks (no duplicate links) */
	int nl = tp_node_link_count(n);
	ck_assert_int_eq(tp_node_load_links(n, TP_EXAMPLE_NODES "nvl4.links", &err), 0);
	ck_assert_int_eq(tp_node_link_count(n), nl);
	/* the picture names the GPUs and the matrix */
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	tp_node_describe(n, f);
	fclose(f);
	ck_assert_ptr_nonnull(strstr(buf, "GPU3  0000:94:00.0"));
	ck_assert_ptr_nonnull(strstr(buf, "NV4"));
	free(buf);
	tp_node_destroy(n);
}
END_TEST

START_TEST(pcie16_classes)
{
	tp_node *n = load("pcie16.xml", NULL);
	ck_assert_int_eq(tp_node_ngpus(n), 16);
	ck_assert_int_eq(tp_node_ncores(n), 24);
	/* same K80 board, same PLX switch, same host bridge, other socket */
	ck_assert_int_eq(tp_node_gpu_path(n, 0, 1), TP_PATH_PIX);
	ck_assert_int_eq(tp_node_gpu_path(n, 0, 2), TP_PATH_PXB);
	ck_assert_int_eq(tp_node_gpu_path(n, 0, 4), TP_PATH_PHB);
	ck_assert_int_eq(tp_node_gpu_path(n, 0, 8), TP_PATH_SYS);
	ck_assert_int_eq(tp_node_gpu_path(n, 9, 15), TP_PATH_PHB);
	for (int g = 0; g < 16; g++)
		ck_assert_int_eq(tp_node_gpu_package(n, g), g / 8);
	/* bus order: GPU indices increase with the bus number */
	for (int g = 1; g < 16; g++)
		ck_assert_int_lt(strcmp(tp_node_gpu_busid(n, g - 1),
					tp_node_gpu_busid(n, g)), 0);
	tp_node_destroy(n);
}
END_TEST

START_TEST(dgx8_nvswitch)
{
	tp_node *n = load("dgx8.xml", NULL);
	ck_assert_int_eq(tp_node_ngpus(n), 8);
	ck_assert_int_eq(tp_node_gpu_path(n, 0, 1), TP_PATH_PIX);
	ck_assert_int_eq(tp_node_gpu_path(n, 0, 2), TP_PATH_NODE);
	ck_assert_int_eq(tp_node_gpu_path(n, 0, 4), TP_PATH_SYS);
	tp_error err;
	ck_assert_int_eq(tp_node_load_links(n, TP_EXAMPLE_NODES "dgx8.links", &err), 0);
	ck_assert_int_eq(tp_node_has_nvswitch(n), 1);
	ck_assert_int_eq(tp_node_gpu_path(n, 0, 7), TP_PATH_NVL);
	ck_assert_double_eq_tol(tp_node_gpu_bandwidth(n, 0, 7), 12 * 25, 1e-9);
	int links[8];
	ck_assert_int_eq(tp_node_gpu_route(n, 0, 7, links, 8), 2);
	ck_assert_str_eq(tp_node_link_name(n, links[0]), "GPU0 - NVSwitch");
	ck_assert_str_eq(tp_node_link_name(n, links[1]), "GPU7 - NVSwitch");
	tp_node_destroy(n);
}
END_TEST

START_TEST(cpu2_cores)
{
	tp_node *n = load("cpu2.xml", NULL);
	ck_assert_int_eq(tp_node_ngpus(n), 0);
	ck_assert_int_eq(tp_node_ncores(n), 16);
	ck_assert_int_eq(tp_node_npus(n), 32);
	int pus[4];
	ck_assert_int_eq(tp_node_core_pus(n, 9, pus, 4), 2);
	ck_assert_int_eq(pus[0], 9);
	ck_assert_int_eq(pus[1], 25);
	ck_assert_int_eq(tp_node_core_package(n, 7), 0);
	ck_assert_int_eq(tp_node_core_package(n, 8), 1);
	char buf[64];
	ck_assert_int_eq(tp_node_cpuset_string(n, 0, 4, buf, sizeof buf), 0);
	ck_assert_str_eq(buf, "0-3,16-19");
	ck_assert_int_eq(tp_node_cpuset_string(n, 15, 1, buf, sizeof buf), 0);
	ck_assert_str_eq(buf, "15,31");
	ck_assert_int_eq(tp_node_cpuset_string(n, 15, 2, buf, sizeof buf), TP_EINVAL);
	ck_assert_int_eq(tp_node_cpuset_string(n, 0, 16, buf, 4), TP_EINVAL);
	/* Links for a node without GPUs */
	tp_error err;
	ck_assert_int_eq(tp_node_load_links(n, TP_EXAMPLE_NODES "nvl4.links", &err), TP_EINVAL);
	tp_assert_err_has(&err, "NVLink counts for 4 GPUs, but");
	tp_assert_err_has(&err, "cpu2.xml has 0");
	tp_node_destroy(n);
}
END_TEST

/* XML that crashed hwloc 2.9.0 (SIGSEGV, assertion) or cost it
 * 0.5 GB and seconds is refused before hwloc sees it. */
START_TEST(xml_hwloc_crashes)
{
	static const struct { const char *file, *msg; } bad[] = {
		{ "bad-no-complete-cpuset.xml",
		  "bad-no-complete-cpuset.xml: hwloc XML line 8: Package object without complete_cpuset" },
		{ "bad-nodeset-syntax.xml",
		  "bad-nodeset-syntax.xml: hwloc XML line 5: nodeset=\",x00000001\": not an hwloc bitmap" },
		{ "bad-numa-no-os-index.xml",
		  "bad-numa-no-os-index.xml: hwloc XML line 5: NUMANode object without an os_index below 8192" },
	};
	for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
		tp_node *n = (tp_node *)1;
		tp_error err;
		double t0 = tp__now_ms();
		char path[512];
		snprintf(path, sizeof path, TP_TEST_NODES "%s", bad[i].file);
		ck_assert_int_eq(tp_node_load_xml(path, &n, &err), TP_EINVAL);
		ck_assert_ptr_null(n);
		tp_assert_err_has(&err, bad[i].msg);
		ck_assert(tp__now_ms() - t0 < 1000);
	}
}
END_TEST

static void xml_bad(const char *xml, const char *frag)
{
	tp_node *n = (tp_node *)1;
	tp_error err;
	tp_error_clear(&err);
	ck_assert_msg(tp_node_load_xml_buffer(xml, strlen(xml), "x.xml", &n, &err) == TP_EINVAL,
		      "accepted: %s", xml);
	ck_assert_ptr_null(n);
	ck_assert_msg(strstr(err.msg, frag) != NULL, "error \"%s\" lacks \"%s\"", err.msg, frag);
	ck_assert_msg(!strncmp(err.msg, "x.xml: hwloc XML line ", 22), "%s", err.msg);
}

#define SETS(c, n) " cpuset=\"" c "\" complete_cpuset=\"" c "\" nodeset=\"" n \
	"\" complete_nodeset=\"" n "\""
#define HEAD "<?xml version=\"1.0\"?>\n<topology version=\"2.0\">\n"
#define MACHINE "<object type=\"Machine\"" SETS("0x00000003", "0x00000001") ">\n"
#define NUMA "<object type=\"NUMANode\" os_index=\"0\"" SETS("0x00000003", "0x00000001") "/>\n"
#define PU(i, c) "<object type=\"PU\" os_index=\"" #i "\"" SETS(c, "0x00000001") "/>\n"
#define TAIL "</object>\n</topology>\n"

START_TEST(xml_checks)
{
	/* a minimal good one, with what is dropped */
	const char *good = HEAD MACHINE "<info name=\"a\" value=\"b&amp;c\"/>" NUMA
		PU(0, "0x00000001") PU(1, "0x00000002") TAIL
		"<!-- a comment -->\n";
	tp_node *n = NULL;
	tp_error err;
	ck_assert_msg(tp_node_load_xml_buffer(good, strlen(good), "x.xml", &n, &err) == 0,
		      "%s", err.msg);
	ck_assert_int_eq(tp_node_npus(n), 2);
	tp_node_destroy(n);
	xml_bad("<topology>" MACHINE NUMA PU(0, "0x00000001") TAIL,
		"no version: only hwloc 2.x and 3.x XML is read");
	xml_bad("<topology version=\"1.0\">" MACHINE NUMA PU(0, "0x00000001") TAIL,
		"version=\"1.0\": only hwloc 2.x and 3.x XML is read");
	xml_bad(HEAD "<object type=\"Package\"" SETS("0x1", "0x1") ">" NUMA TAIL,
		"the root object is a Package, expected Machine");
	xml_bad(HEAD MACHINE NUMA PU(0, "0x00000002") TAIL,
		"PU P#0: its cpuset is not exactly bit 0");
	xml_bad(HEAD MACHINE NUMA PU(0, "0x00000001") PU(0, "0x00000001") TAIL,
		"PU P#0 given twice");
	xml_bad(HEAD MACHINE NUMA "<object type=\"Core\"" SETS("0x3", "0x1") ">" PU(0, "0x1")
		"</object><object type=\"Core\"" SETS("0x2", "0x1") ">" PU(1, "0x2") "</object>" TAIL,
		"Core object: its cpuset overlaps a sibling's (line 5)");
	xml_bad(HEAD MACHINE NUMA PU(0, "0x00000004") TAIL, "not inside its parent's");
	xml_bad(HEAD MACHINE NUMA "<object type=\"Sprocket\"/>" TAIL,
		"unknown object type \"Sprocket\"");
	xml_bad(HEAD MACHINE NUMA "<object type=\"PCIDev\" pci_busid=\"0000:01:00.0\" "
		"pci_type=\"0302 [10de:1db1] [10de:1212] a1\"" SETS("0x1", "0x1") "/>" TAIL,
		"PCIDev object with cpuset");
	xml_bad(HEAD MACHINE NUMA "<object type=\"PCIDev\" pci_busid=\"0:1:0.0\" "
		"pci_type=\"0302 [10de:1db1] [10de:1212] a1\"/>" TAIL,
		"pci_busid=\"0:1:0.0\": expected DDDD:BB:DD.F");
	xml_bad(HEAD MACHINE NUMA "<object type=\"PCIDev\" pci_busid=\"0000:01:00.0\"/>" TAIL,
		"PCIDev object without pci_type");
	xml_bad(HEAD MACHINE NUMA "<object type=\"Bridge\" bridge_type=\"0-1\"/>" TAIL,
		"Bridge object without bridge_pci");
	xml_bad(HEAD MACHINE NUMA "<object type=\"OSDev\" name=\"x\"/>" TAIL,
		"OSDev object without osdev_type");
	xml_bad(HEAD MACHINE NUMA "<object type=\"Misc\"><object type=\"Core\"" SETS("0x1", "0x1")
		"/></object>" TAIL, "Core object inside a Misc object");
	xml_bad(HEAD MACHINE NUMA "<object type=\"L2Cache\" depth=\"3\"" SETS("0x1", "0x1") "/>" TAIL,
		"L2Cache with depth=\"3\"");
	xml_bad(HEAD MACHINE NUMA "<object type=\"Misc\" name=\"a\x1b[31m\"/>" TAIL,
		"name: not printable ASCII");
	xml_bad(HEAD MACHINE NUMA PU(0, "0x00000001") "</object></topology><x/>", "data after </topology>");
	xml_bad(HEAD MACHINE NUMA PU(0, "0x00000001") "</objekt></topology>", "</objekt> closes <object>");
	xml_bad(HEAD MACHINE NUMA "<object type=\"PU\" os_index=\"0\" os_index=\"1\"/>" TAIL,
		"attribute os_index given twice");
	xml_bad("<!DOCTYPE topology [<!ENTITY a \"b\">]>" HEAD MACHINE NUMA TAIL,
		"a DOCTYPE with an internal subset");
	xml_bad(HEAD MACHINE NUMA "<object type=\"PU\" os_index=\"0\" cpuset=\"0x1,\"/>" TAIL,
		"cpuset=\"0x1,\": not an hwloc bitmap");
	xml_bad(HEAD MACHINE NUMA TAIL, "no PU object");
	/* nesting and object counts are bounded */
	size_t cap = 200 * 80 + 256, len = 0;
	char *deep = malloc(cap);
	len += (size_t)snprintf(deep, cap, HEAD MACHINE NUMA);
	for (int i = 0; i < 70; i++)
		len += (size_t)snprintf(deep + len, cap - len,
					"<object type=\"Group\"" SETS("0x3", "0x1") ">");
	xml_bad(deep, "objects nested deeper than 64");
	free(deep);
}
END_TEST

/* The rewrite keeps everything the node model reads: every example node
 * gives the same model as before (GPU paths, links, cores). */
START_TEST(xml_canonical_same_model)
{
	static const char *files[] = { "cpu2.xml", "dgx8.xml", "nvl4.xml", "pcie16.xml", "duo.xml" };
	for (size_t i = 0; i < sizeof files / sizeof *files; i++) {
		char path[512];
		tp_test_node_path(path, sizeof path, files[i]);
		tp_node *n = NULL;
		tp_error err;
		ck_assert_msg(tp_node_load_xml(path, &n, &err) == 0, "%s", err.msg);
		ck_assert_int_gt(tp_node_npus(n), 0);
		ck_assert_int_gt(tp_node_link_count(n), 0);
		tp_node_destroy(n);
	}
}
END_TEST

START_TEST(xml_errors)
{
	tp_node *n = (tp_node *)1;
	tp_error err;
	ck_assert_int_eq(tp_node_load_xml("/nonexistent/node.xml", &n, &err), TP_ENOENT);
	ck_assert_ptr_null(n);
	tp_assert_err_has(&err, "/nonexistent/node.xml: cannot read: No such file");
	char *p = tp_test_tmpfile("<topology version=\"2.0\"><object type=\"Machine\"");
	ck_assert_int_eq(tp_node_load_xml(p, &n, &err), TP_EINVAL);
	tp_assert_err_has(&err, p);
	tp_assert_err_has(&err, ": hwloc XML line 1: unterminated element");
	unlink(p);
	free(p);
	p = tp_test_tmpfile("this is not XML at all\n");
	ck_assert_int_eq(tp_node_load_xml(p, &n, &err), TP_EINVAL);
	tp_assert_err_has(&err, "hwloc XML line 1: unexpected text");
	unlink(p);
	free(p);
	ck_assert_int_eq(tp_node_load_xml_buffer("", 0, "empty", &n, &err), TP_EINVAL);
	tp_assert_err_has(&err, "empty: empty hwloc XML");
	ck_assert_int_eq(tp_node_load_xml("/", &n, &err), TP_EIO);
	tp_assert_err_has(&err, "/: not a regular file (a directory)");
}
END_TEST

START_TEST(live_machine)
{
	tp_node *n = NULL;
	tp_error err;
	/* hwloc's PCI discovery (libpciaccess) leaks a little inside
	 * hwloc_topology_load, which would fail `make valgrind`; the live path is
	 * the same without it. */
	setenv("HWLOC_COMPONENTS", "-pci", 1);
	int rc = tp_node_load_live(&n, &err);
	unsetenv("HWLOC_COMPONENTS");
	ck_assert_msg(rc == 0, "%s", err.msg);
	ck_assert_int_ge(tp_node_ncores(n), 1);
	ck_assert_int_ge(tp_node_npackages(n), 1);
	ck_assert_str_eq(tp_node_source(n), "this machine");
	tp_node_destroy(n);
}
END_TEST

/* Parse links text and expect an error containing frag. */
static void links_bad(const char *text, const char *frag)
{
	int *c = NULL, ng = 0;
	tp_error err;
	tp_error_clear(&err);
	ck_assert_int_eq(tp_links_parse(text, strlen(text), "g.conf", &c, &ng, &err),
			 TP_EINVAL);
	ck_assert_ptr_null(c);
	tp_assert_err_has(&err, frag);
	ck_assert_ptr_null(strchr(err.msg, '\n'));
}

START_TEST(links_gres_errors)
{
	links_bad("Name=gpu Links=-1,2,0\nName=gpu Links=2,-1\n",
		  "g.conf:2: Links= has 2 entries, but earlier lines have 3");
	links_bad("Name=gpu Links=-1,2\nName=gpu Links=1,-1\n",
		  "g.conf: Links= not symmetric: GPU 0 to GPU 1 is 2 (line 1) but GPU 1 to GPU 0 is 1 (line 2)");
	links_bad("Name=gpu Links=0,2\n", "g.conf:1: Links= has no -1");
	links_bad("Name=gpu Links=-1,-1\n", "g.conf:1: Links= has -1 (self) twice");
	links_bad("Name=gpu Links=-1,2\nName=gpu Links=-1,2\n",
		  "g.conf:2: Links= for GPU 0 again (first on line 1)");
	links_bad("Name=gpu Links=-1,2,0\nName=gpu Links=2,-1,0\n",
		  "g.conf: Links=: no row for GPU 2 of 3");
	links_bad("Name=gpu Links=-1,x\n", "g.conf:1: Links= entry 1 'x' is not an integer");
	links_bad("Name=gpu Links=-1,99\n", "g.conf:1: Links= entry 1 is 99");
	links_bad("Name=gpu Links=-1,-3\n", "entry 1 is -3");
	links_bad("# nothing here\nName=mps Count=100\n",
		  "g.conf: no gres.conf 'Name=gpu ... Links=' lines");
	links_bad("", "no gres.conf");
	/* good: comments, other keys, other GRES, NodeName */
	const char *ok = "# a comment\nNodeName=gpu[01-04] Name=gpu Type=a100 "
			 "File=/dev/nvidia1 Links=2,-1 # GPU 1\n"
			 "Name=mps Count=200\nname=GPU links=-1,2\n";
	int *c = NULL, ng = 0;
	tp_error err;
	ck_assert_msg(tp_links_parse(ok, strlen(ok), "ok", &c, &ng, &err) == 0, "%s",
		      err.msg);
	ck_assert_int_eq(ng, 2);
	ck_assert_int_eq(c[0], 0);
	ck_assert_int_eq(c[1], 2);
	ck_assert_int_eq(c[2], 2);
	ck_assert_int_eq(c[3], 0);
	free(c);
}
END_TEST

START_TEST(links_nvidia_smi)
{
	const char *smi =
		"\t\x1b[4mGPU0\tGPU1\tGPU2\tGPU3\tNIC0\tCPU Affinity\tNUMA Affinity\x1b[0m\n"
		"GPU0\t X \tNV4\tSYS\tSYS\tPIX\t0-7\t0\n"
		"GPU1\tNV4\t X \tSYS\tSYS\tPIX\t0-7\t0\n"
		"GPU2\tSYS\tSYS\t X \tNV4\tSYS\t8-15\t1\n"
		"GPU3\tSYS\tSYS\tNV4\t X \tSYS\t8-15\t1\n"
		"NIC0\tPIX\tPIX\tSYS\tSYS\t X \n\n"
		"Legend:\n\n  X    = Self\n  NV#  = Connection traversing a bonded set of # NVLinks\n";
	int *c = NULL, ng = 0;
	tp_error err;
	ck_assert_msg(tp_links_parse(smi, strlen(smi), "topo.txt", &c, &ng, &err) == 0,
		      "%s", err.msg);
	ck_assert_int_eq(ng, 4);
	ck_assert_int_eq(c[0 * 4 + 1], 4);
	ck_assert_int_eq(c[2 * 4 + 3], 4);
	ck_assert_int_eq(c[0 * 4 + 2], 0);
	/* the same counts as nvl4.links on the nvl4 node */
	tp_node *n = load("nvl4.xml", NULL);
	ck_assert_int_eq(tp_node_set_nvlinks(n, c, ng, "topo.txt", &err), 0);
	ck_assert_int_eq(tp_node_gpu_path(n, 0, 1), TP_PATH_NVL);
	free(c);
	/* asymmetric counts through the direct interface */
	int bad[16] = { 0, 4, 0, 0, 2, 0, 0, 0, 0, 0, 0, 4, 0, 0, 4, 0 };
	ck_assert_int_eq(tp_node_set_nvlinks(n, bad, 4, "m", &err), TP_EINVAL);
	tp_assert_err_has(&err, "m: not symmetric");
	tp_node_destroy(n);

	links_bad("\tGPU0\tGPU1\nGPU0\t X \tNV4\nGPU1\tNV2\t X \n",
		  "g.conf: topology matrix not symmetric");
	links_bad("\tGPU0\tGPU1\nGPU0\t X \tFOO\n",
		  "g.conf:2: GPU0 to GPU1: unknown entry 'FOO'");
	links_bad("\tGPU0\tGPU1\nGPU0\tNV1\tNV4\n", "GPU0 to itself is 'NV1', expected X");
	links_bad("\tGPU0\tGPU1\nGPU0\t X\n", "g.conf:2: row GPU0 has 1 entries, expected 2");
	links_bad("\tGPU0\tGPU1\nGPU5\t X\tX\n", "row GPU5, but the header has 2 GPUs");
	links_bad("\tGPU0\tGPU1\nGPU0\t X \tNV0\n", "'NV0' is not NV1..NV64");
	links_bad("\tGPU0\tGPU1\nGPU0\t X \tSYS\n", "topology matrix: no row for GPU 1 of 2");
}
END_TEST

/* ---- GPU peer matrix ---- */

static void matrix_bad(const char *text, int64_t expect, const char *frag)
{
	tp_graph *g = (tp_graph *)1;
	tp_error err;
	tp_error_clear(&err);
	ck_assert_int_eq(tp_graph_from_gpu_matrix_string(&g, text, strlen(text), "m.json",
							 expect, &err),
			 TP_EINVAL);
	ck_assert_ptr_null(g);
	tp_assert_err_has(&err, frag);
}

START_TEST(gpu_matrix_json_csv)
{
	const char *js = "{\"tasks\": 4, \"traffic\": [[0, 2, 1e9], [2, 0, 5e8], "
			 "[1, 3, 1000], [0, 1, 0]]}";
	tp_graph *g = NULL;
	tp_error err;
	ck_assert_msg(tp_graph_from_gpu_matrix_string(&g, js, strlen(js), "m", 4, &err) == 0,
		      "%s", err.msg);
	ck_assert_int_eq(tp_graph_ntasks(g), 4);
	ck_assert_double_eq_tol(tp_graph_total_bytes(g), 1.5e9 + 1000, 1e-3);
	const int32_t *adj;
	const double *w;
	ck_assert_int_eq(tp_graph_neighbors(g, 0, &adj, &w), 2);   /* 1 (0 bytes), 2 */
	ck_assert_int_eq(adj[1], 2);
	ck_assert_double_eq_tol(w[1], 1.5e9, 1e-3);
	tp_graph_destroy(g);

	const char *csv = "src,dst,bytes\n# comment\n0,2,1e9\n\n2,0,5e8 \n1,3,1000\n";
	ck_assert_msg(tp_graph_from_gpu_matrix_string(&g, csv, strlen(csv), "m.csv", 0, &err) == 0,
		      "%s", err.msg);
	ck_assert_int_eq(tp_graph_ntasks(g), 4);           /* largest index + 1 */
	ck_assert_int_eq(tp_graph_nedges(g), 2);
	tp_graph_destroy(g);
	ck_assert_int_eq(tp_graph_from_gpu_matrix_string(&g, csv, strlen(csv), "m.csv", 8, &err), 0);
	ck_assert_int_eq(tp_graph_ntasks(g), 8);
	tp_graph_destroy(g);

	/* file path, and the sum with a CPU graph (phase 1) */
	char *p = tp_test_tmpfile(js);
	ck_assert_int_eq(tp_graph_from_gpu_matrix_file(&g, p, 4, &err), 0);
	tp_graph *cpu = NULL, *sum = NULL;
	ck_assert_int_eq(tp_graph_from_stencil(&cpu, "2x2:bytes=10", 4, &err), 0);
	ck_assert_int_eq(tp_graph_add(cpu, g, "gpu", &sum, &err), 0);
	ck_assert_double_eq_tol(tp_graph_total_bytes(sum), 40 + 1.5e9 + 1000, 1e-3);
	ck_assert_int_eq(tp_graph_coord_dims(sum), 2);
	ck_assert_int_eq(tp_graph_nedges(sum), 4);        /* (0,2), (1,3) are stencil edges */
	tp_graph_destroy(sum);
	tp_graph_destroy(cpu);
	ck_assert_int_eq(tp_graph_from_stencil(&cpu, "2x3", 6, &err), 0);
	ck_assert_int_eq(tp_graph_add(cpu, g, "gpu", &sum, &err), TP_EINVAL);
	tp_assert_err_has(&err, "gpu: 4 tasks, but the graph has 6");
	tp_graph_destroy(cpu);
	tp_graph_destroy(g);
	unlink(p);
	free(p);
	ck_assert_int_eq(tp_graph_from_gpu_matrix_file(&g, "/nonexistent/m.json", 4, &err),
			 TP_ENOENT);
	tp_assert_err_has(&err, "/nonexistent/m.json: cannot read: No such file");
}
END_TEST

START_TEST(gpu_matrix_errors)
{
	matrix_bad("{\"tasks\": 4, \"traffic\": []}", 8,
		   "m.json: GPU matrix for 4 tasks, but the job has 8");
	matrix_bad("{\"tasks\": 4, \"traffic\": [[0, 1, -5]]}", 4,
		   "m.json: traffic[0]: negative traffic -5");
	matrix_bad("{\"tasks\": 4, \"traffic\": [[0, 1, 5], [0, 4, 5]]}", 0,
		   "m.json: traffic[1]: task 4 outside 0..3");
	matrix_bad("{\"tasks\": 4, \"traffic\": [[2, 2, 5]]}", 0,
		   "traffic[0]: traffic from task 2 to itself");
	matrix_bad("{\"tasks\": 4, \"traffic\": [[0, 1]]}", 0,
		   "traffic[0]: expected [i, j, bytes]");
	matrix_bad("{\"tasks\": 4, \"traffic\": [[0.5, 1, 2]]}", 0,
		   "traffic[0]: expected [i, j, bytes]");
	matrix_bad("{\"tasks\": 0, \"traffic\": []}", 0, "\"tasks\" must be a positive integer");
	matrix_bad("{\"tasks\": 2}", 0, "\"traffic\" must be an array");
	matrix_bad("{\"tasks\": 2, \"traffic\": [", 0, "m.json: JSON parse error");
	matrix_bad("   \n", 0, "m.json: empty GPU matrix");
	matrix_bad("0,1,5\n1,9,5\n", 4, "m.json: line 2: task 9 outside 0..3");
	matrix_bad("0,1,-1\n", 4, "line 1: negative traffic");
	matrix_bad("0,1,5\n0;1;5\n", 4, "m.json:2: expected \"i,j,bytes\"");
	matrix_bad("0,1,nan\n", 4, "line 1: bytes are not finite");
	matrix_bad("# only a comment\n", 0, "m.json: no traffic lines");
}
END_TEST


/* Every node of the example GPU cluster config loads its model. */
START_TEST(example_cluster_config)
{
	tp_conf *c = NULL;
	tp_error err;
	ck_assert_msg(tp_conf_load(TP_SOURCE_DIR "/conf/examples/gpu-cluster.conf", &c,
				   &err) == 0, "%s", err.msg);
	const tp_machine *m = tp_conf_machine(c);
	int want[8] = { 8, 8, 16, 16, 4, 4, 0, 0 };
	ck_assert_int_eq(tp_machine_node_count(m), 8);
	for (int32_t i = 0; i < 8; i++) {
		const char *x = tp_conf_node_topology(c, i);
		ck_assert_ptr_nonnull(x);
		tp_node *n = NULL;
		ck_assert_msg(tp_node_load_xml(x, &n, &err) == 0, "%s", err.msg);
		const char *l = tp_conf_node_gpu_links(c, i);
		if (l)
			ck_assert_msg(tp_node_load_links(n, l, &err) == 0, "%s", err.msg);
		ck_assert_int_eq(tp_node_ngpus(n), want[i]);
		tp_node_destroy(n);
	}
	tp_conf_destroy(c);
}
END_TEST

/* Network cards: InfiniBand cards found by PCI class, numbered in bus
 * order; each GPU's nearest card and the route to it. */
START_TEST(nics_and_gpu_affinity)
{
	tp_node *n = load("nvl4.xml", "nvl4.links");
	ck_assert_int_eq(tp_node_nnics(n), 1);
	ck_assert_str_eq(tp_node_nic_busid(n, 0), "0000:15:00.0");
	ck_assert_ptr_null(tp_node_nic_busid(n, 1));
	ck_assert_int_eq(tp_node_nic_package(n, 0), 0);
	ck_assert_int_eq(tp_node_nic_package(n, 1), -1);
	for (int g = 0; g < 4; g++)
		ck_assert_int_eq(tp_node_gpu_nic(n, g), 0);
	ck_assert_int_eq(tp_node_gpu_nic(n, 4), -1);
	int links[16];
	/* GPU0 -> its bridge -> the switch <- the card's bridge <- the card,
	 * then the card's port to the network */
	ck_assert_int_eq(tp_node_gpu_nic_route(n, 0, links, 16), 5);
	ck_assert_str_eq(tp_node_link_name(n, links[4]), "NIC0 port - NIC0");
	/* GPU2: up its socket's tree (5 links), across the socket link, down
	 * the other socket's tree to the card (5 links), the port */
	int k = tp_node_gpu_nic_route(n, 2, links, 16);
	ck_assert_int_eq(k, 12);
	bool smp = false;
	for (int i = 0; i < k; i++)
		smp |= strcmp(tp_node_link_name(n, links[i]), "socket0 - socket1") == 0;
	ck_assert(smp);
	ck_assert_int_eq(tp_node_gpu_nic_route(n, 2, links, 3), TP_EINVAL);
	ck_assert_int_eq(tp_node_gpu_nic_route(n, 9, links, 16), TP_EINVAL);
	tp_node_destroy(n);

	/* dgx8: a card on every GPU switch, GPUs 2k and 2k+1 share card k */
	n = load("dgx8.xml", "dgx8.links");
	ck_assert_int_eq(tp_node_nnics(n), 4);
	for (int g = 0; g < 8; g++)
		ck_assert_int_eq(tp_node_gpu_nic(n, g), g / 2);
	tp_node_destroy(n);
	/* no card: no route */
	n = load("cpu2.xml", NULL);
	ck_assert_int_eq(tp_node_nnics(n), 0);
	tp_node_destroy(n);
	n = load("duo.xml", NULL);
	ck_assert_int_eq(tp_node_nnics(n), 0);
	ck_assert_int_eq(tp_node_gpu_nic(n, 0), -1);
	ck_assert_int_eq(tp_node_gpu_nic_route(n, 0, links, 16), 0);
	tp_node_destroy(n);
}
END_TEST

/* The parts as a forest: sockets first, every PCI part below a socket,
 * GPUs and cards numbered, links joining child and parent. */
START_TEST(node_parts)
{
	tp_node *n = load("nvl4.xml", "nvl4.links");
	int np = tp_node_nparts(n);
	ck_assert_int_gt(np, 2 + 4 + 2);
	int gpus = 0, nics = 0, ports = 0, sockets = 0;
	for (int p = 0; p < np; p++) {
		tp_node_part x;
		ck_assert_int_eq(tp_node_part_get(n, p, &x), 0);
		ck_assert_ptr_nonnull(x.name);
		if (p < tp_node_npackages(n)) {
			ck_assert_int_eq(x.kind, TP_PART_SOCKET);
			ck_assert_int_eq(x.index, p);
		}
		switch (x.kind) {
		case TP_PART_SOCKET:
			sockets++;
			ck_assert_int_eq(x.parent, -1);
			ck_assert_int_eq(x.uplink, -1);
			continue;
		case TP_PART_GPU: {
			char want[8];
			snprintf(want, sizeof want, "GPU%d", x.index);
			ck_assert_str_eq(x.name, want);
			gpus++;
			break;
		}
		case TP_PART_NIC: nics++; ck_assert_int_eq(x.index, 0); break;
		case TP_PART_PORT: ports++; ck_assert_int_eq(x.index, 0); break;
		default: ck_assert_int_eq(x.index, -1); break;
		}
		/* a PCI part: its uplink joins it to its parent, and it has a
		 * socket above it */
		int a, b;
		ck_assert_int_eq(tp_node_link_parts(n, x.uplink, &a, &b), 0);
		ck_assert_int_eq(a, p);
		ck_assert_int_eq(b, x.parent);
		int up = p, steps = 0;
		tp_node_part y = x;
		while (y.parent >= 0 && steps++ < np) {
			up = y.parent;
			ck_assert_int_eq(tp_node_part_get(n, up, &y), 0);
		}
		ck_assert_int_eq(y.kind, TP_PART_SOCKET);
	}
	ck_assert_int_eq(sockets, 2);
	ck_assert_int_eq(gpus, 4);
	ck_assert_int_eq(nics, 1);
	ck_assert_int_eq(ports, 1);
	tp_node_part x;
	ck_assert_int_eq(tp_node_part_get(n, np, &x), TP_EINVAL);
	ck_assert_int_eq(tp_node_part_get(n, -1, &x), TP_EINVAL);
	int a, b;
	ck_assert_int_eq(tp_node_link_parts(n, tp_node_link_count(n), &a, &b),
			 TP_EINVAL);
	tp_node_destroy(n);
	/* an NVSwitch is a root of its own */
	n = load("dgx8.xml", "dgx8.links");
	int found = 0;
	for (int p = 0; p < tp_node_nparts(n); p++) {
		ck_assert_int_eq(tp_node_part_get(n, p, &x), 0);
		if (x.kind == TP_PART_NVSWITCH) {
			found++;
			ck_assert_int_eq(x.parent, -1);
		}
	}
	ck_assert_int_eq(found, 1);
	tp_node_destroy(n);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("node");
	TCase *tc = tcase_create("node");
	tcase_set_timeout(tc, 30);
	tcase_add_test(tc, nvl4_model);
	tcase_add_test(tc, node_parts);
	tcase_add_test(tc, pcie16_classes);
	tcase_add_test(tc, dgx8_nvswitch);
	tcase_add_test(tc, cpu2_cores);
	tcase_add_test(tc, xml_errors);
	tcase_add_test(tc, xml_hwloc_crashes);
	tcase_add_test(tc, xml_checks);
	tcase_add_test(tc, xml_canonical_same_model);
	tcase_add_test(tc, live_machine);
	tcase_add_test(tc, links_gres_errors);
	tcase_add_test(tc, links_nvidia_smi);
	tcase_add_test(tc, gpu_matrix_json_csv);
	tcase_add_test(tc, gpu_matrix_errors);
	tcase_add_test(tc, example_cluster_config);
	tcase_add_test(tc, nics_and_gpu_affinity);
	suite_add_tcase(s, tc);
	return tp_test_run(s);
}
