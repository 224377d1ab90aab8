/* hwloc 3.0 XML, and the GPU fabric from an XML's distance matrices
 * (NVLinkBandwidth, XGMIBandwidth, XGMIHops): real exports from hwloc's
 * test suite (tests/data/nodes/real/README.md) and small made-up ones. */
#include "testutil.h"
#include "node/node_internal.h"

#define REAL TP_TEST_NODES "real/"

static tp_node *load_ok(const char *path)
{
	tp_node *n = NULL;
	tp_error err;
	ck_assert_msg(tp_node_load_xml(path, &n, &err) == 0, "%s", err.msg);
	return n;
}

/* Fill in the length= of every bare <indexes> and <u64values> (malloc'ed). */
static char *with_lengths(const char *t)
{
	char *out = malloc(strlen(t) * 2 + 64), *o = out;
	const char *p = t;
	for (;;) {
		const char *qi = strstr(p, "<indexes>"), *qv = strstr(p, "<u64values>");
		const char *q = qi && (!qv || qi < qv) ? qi : qv;
		if (!q)
			break;
		const char *tag = q == qi ? "indexes" : "u64values";
		size_t tl = strlen(tag) + 2;
		const char *e = strchr(q + tl, '<');
		memcpy(o, p, (size_t)(q - p));
		o += q - p;
		o += sprintf(o, "<%s length=\"%d\">", tag, (int)(e - q - (ptrdiff_t)tl));
		p = q + tl;
	}
	strcpy(o, p);
	return out;
}

/* A made-up node: 2 cores, ngpu GPUs (NVIDIA with nvmlN, or AMD MI250X GCDs
 * with rsmiN) and nsw NVSwitches under one host bridge, a network card,
 * then dist.  gp_index: GPU g 10+g, its OS device 20+g, switch s 30+s,
 * the Package 2. */
static char *xml3(const char *version, int ngpu, bool amd, int nsw,
		  const char *nic_osdev, const char *dist)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	ck_assert_ptr_nonnull(f);
#define S(c, n) "cpuset=\"" c "\" complete_cpuset=\"" c "\" nodeset=\"" n \
		"\" complete_nodeset=\"" n "\""
	fprintf(f, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
		"<topology version=\"%s\">\n"
		"<object type=\"Machine\" os_index=\"0\" " S("0x00000003", "0x00000001")
		" gp_index=\"1\" id=\"obj1\">\n"
		"<object type=\"Package\" os_index=\"0\" " S("0x00000003", "0x00000001")
		" gp_index=\"2\" id=\"obj2\">\n"
		"<object type=\"NUMANode\" os_index=\"0\" " S("0x00000003", "0x00000001")
		" gp_index=\"3\"/>\n"
		"<object type=\"L2Cache\" " S("0x00000003", "0x00000001")
		" gp_index=\"8\" cache_size=\"1048576\" depth=\"2\" cache_linesize=\"64\""
		" cache_type=\"0\" cache_inclusive=\"1\">\n"
		"<object type=\"Core\" os_index=\"0\" " S("0x00000001", "0x00000001")
		" gp_index=\"4\"><object type=\"PU\" os_index=\"0\" "
		S("0x00000001", "0x00000001") " gp_index=\"5\"/></object>\n"
		"<object type=\"Core\" os_index=\"1\" " S("0x00000002", "0x00000001")
		" gp_index=\"6\"><object type=\"PU\" os_index=\"1\" "
		S("0x00000002", "0x00000001") " gp_index=\"7\"/></object>\n"
		"</object>\n"
		"<object type=\"Bridge\" gp_index=\"9\" bridge_type=\"0-1\" depth=\"0\""
		" bridge_pci=\"0000:[01-20]\">\n", version);
#undef S
	for (int g = 0; g < ngpu; g++)
		fprintf(f, "<object type=\"PCIDev\" gp_index=\"%d\" id=\"obj%d\""
			" pci_busid=\"0000:%02x:00.0\" pci_type=\"%s 00\""
			" pci_link_speed=\"31.5\">\n"
			"<object type=\"OSDev\" gp_index=\"%d\" name=\"%s%d\" osdev_type=\"%s\"/>\n"
			"</object>\n", 10 + g, 10 + g, 1 + g,
			amd ? "0380 [1002:740c] [1002:0b0c] 01" : "0302 [10de:2330] [10de:16c1] a1",
			20 + g, amd ? "rsmi" : "nvml", g, version[0] == '3' ? "12" : "1");
	for (int s = 0; s < nsw; s++)
		fprintf(f, "<object type=\"PCIDev\" gp_index=\"%d\" subtype=\"NVSwitch\""
			" pci_busid=\"0000:%02x:00.0\" pci_type=\"0680 [10de:22a3] [0000:0000] a1 01\"/>\n",
			30 + s, 0x10 + s);
	if (nic_osdev)
		fprintf(f, "<object type=\"PCIDev\" gp_index=\"40\" pci_busid=\"0000:1f:00.0\""
			" pci_type=\"0200 [15b3:101d] [15b3:0040] 00 00\">\n%s\n</object>\n",
			nic_osdev);
	char *d = with_lengths(dist ? dist : "");
	fprintf(f, "</object>\n</object>\n</object>\n"
		"<info name=\"hwlocVersion\" value=\"3.0.0\"/>\n"
		"<pci_locality domain=\"0x0\" bus_min=\"0x1\" bus_max=\"0x20\" cpuset=\"0x00000003\"/>\n"
		"%s</topology>\n", d);
	free(d);
	fclose(f);
	return buf;
}

static tp_node *load_buf(const char *xml)
{
	tp_node *n = NULL;
	tp_error err;
	ck_assert_msg(tp_node_load_xml_buffer(xml, strlen(xml), "x.xml", &n, &err) == 0,
		      "%s", err.msg);
	return n;
}

static void load_bad(const char *xml, const char *frag)
{
	tp_node *n = (tp_node *)1;
	tp_error err;
	tp_error_clear(&err);
	ck_assert_msg(tp_node_load_xml_buffer(xml, strlen(xml), "x.xml", &n, &err) == TP_EINVAL,
		      "accepted: %s", frag);
	ck_assert_ptr_null(n);
	tp_assert_err_has(&err, frag);
	ck_assert_msg(!strncmp(err.msg, "x.xml: hwloc XML line ", 22), "%s", err.msg);
	ck_assert_ptr_null(strchr(err.msg, '\n'));
}

/* hwloc's nvidiaDGX2.xml (3.0): 16 V100 on 12 NVSwitches, each GPU one
 * NVLink 2 link (25000 MB/s) to each of the 6 switches of its board. */
START_TEST(dgx2_nvswitch)
{
	tp_node *n = load_ok(REAL "nvidiaDGX2.xml");
	ck_assert_int_eq(tp_node_ngpus(n), 16);
	ck_assert_int_eq(tp_node_npackages(n), 2);
	ck_assert_int_eq(tp_node_nnuma(n), 2);
	ck_assert_int_eq(tp_node_ncores(n), 4);
	ck_assert_int_eq(tp_node_npus(n), 4);
	ck_assert_int_eq(tp_node_has_nvswitch(n), 1);
	for (int a = 0; a < 16; a++)
		for (int b = 0; b < 16; b++) {
			ck_assert_int_eq(tp_node_nvlinks(n, a, b), a == b ? 0 : 6);
			if (a != b)
				ck_assert_int_eq(tp_node_gpu_path(n, a, b), TP_PATH_NVL);
		}
	/* GPUs 0-7 on socket 0, 8-15 on socket 1 */
	ck_assert_int_eq(tp_node_gpu_package(n, 0), 0);
	ck_assert_int_eq(tp_node_gpu_package(n, 15), 1);
	/* NVLink 2: 6 links of 25 GB/s each way, 150 GB/s a GPU (not 6 x 20) */
	int l[4];
	ck_assert_int_eq(tp_node_gpu_route(n, 3, 12, l, 4), 2);
	ck_assert_str_eq(tp_node_link_name(n, l[0]), "GPU3 - NVSwitch");
	ck_assert_double_eq_tol(tp_node_link_bandwidth(n, l[0]), 150, 1e-9);
	ck_assert_double_eq_tol(tp_node_link_bandwidth(n, l[1]), 150, 1e-9);
	ck_assert_double_eq_tol(tp_node_gpu_bandwidth(n, 3, 12), 150, 1e-9);
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);
	tp_node_describe(n, f);
	fclose(f);
	ck_assert_ptr_nonnull(strstr(text, "NVLink: GPU0 - NVSwitch  (150 GB/s)"));
	free(text);
	tp_node_destroy(n);
}
END_TEST

/* hwloc's power8gpudistances.xml (3.0): 4 P100, two NVLink 1 links
 * (2 x 20000 MB/s) between GPU 0 and 1 and between 2 and 3, and from each
 * GPU to its CPU package (not a GPU: not read). */
START_TEST(power8_nvlink1)
{
	tp_node *n = load_ok(REAL "power8gpudistances.xml");
	ck_assert_int_eq(tp_node_ngpus(n), 4);
	ck_assert_int_eq(tp_node_npackages(n), 2);
	ck_assert_int_eq(tp_node_ncores(n), 8);
	ck_assert_int_eq(tp_node_npus(n), 16);
	ck_assert_int_eq(tp_node_has_nvswitch(n), 0);
	static const int want[4][4] = {
		{ 0, 2, 0, 0 }, { 2, 0, 0, 0 }, { 0, 0, 0, 2 }, { 0, 0, 2, 0 }
	};
	for (int a = 0; a < 4; a++)
		for (int b = 0; b < 4; b++)
			ck_assert_int_eq(tp_node_nvlinks(n, a, b), want[a][b]);
	/* NVLink 1: 20 GB/s a link */
	int l[4];
	ck_assert_int_eq(tp_node_gpu_route(n, 2, 3, l, 4), 1);
	ck_assert_double_eq_tol(tp_node_link_bandwidth(n, l[0]), 2 * 20, 1e-9);
	ck_assert_double_eq_tol(tp_node_gpu_bandwidth(n, 0, 1), 2 * 20, 1e-9);
	tp_node_destroy(n);
}
END_TEST

static char *slurp(const char *path, size_t *len)
{
	char *buf = NULL;
	size_t cap = 0;
	FILE *f = fopen(path, "r");
	ck_assert_ptr_nonnull(f);
	ssize_t k = getdelim(&buf, &cap, '\0', f);
	ck_assert_int_gt(k, 0);
	fclose(f);
	*len = (size_t)k;
	return buf;
}

/* hwloc's cxlmem+dax.v3.xml and its v2 twin (hwloc 3's v2 export): the same
 * model, and the same canonical document (OS device types mapped as hwloc's
 * v2 export maps them; prog-if, id, cache_inclusive, pci_locality
 * dropped). */
START_TEST(cxl_v3_v2_twins)
{
	tp_node *a = load_ok(REAL "cxlmem+dax.v3.xml");
	tp_node *b = load_ok(REAL "cxlmem+dax.v2.xml");
	ck_assert_int_eq(tp_node_npackages(a), 1);
	ck_assert_int_eq(tp_node_ncores(a), 4);
	ck_assert_int_eq(tp_node_npackages(a), tp_node_npackages(b));
	ck_assert_int_eq(tp_node_ncores(a), tp_node_ncores(b));
	ck_assert_int_eq(tp_node_npus(a), tp_node_npus(b));
	ck_assert_int_eq(tp_node_nnuma(a), tp_node_nnuma(b));
	ck_assert_int_eq(tp_node_ngpus(a), tp_node_ngpus(b));
	tp_node_destroy(a);
	tp_node_destroy(b);
	size_t la, lb, ca, cb;
	char *xa = slurp(REAL "cxlmem+dax.v3.xml", &la), *xb = slurp(REAL "cxlmem+dax.v2.xml", &lb);
	char *oa, *ob;
	tp_error err;
	ck_assert_msg(tp__node_xml_check(xa, la, "v3", &oa, &ca, &err) == 0, "%s", err.msg);
	ck_assert_msg(tp__node_xml_check(xb, lb, "v2", &ob, &cb, &err) == 0, "%s", err.msg);
	ck_assert_str_eq(oa, ob);
	ck_assert_ptr_nonnull(strstr(oa, "osdev_type=\"0\""));
	free(oa);
	free(ob);
	free(xa);
	free(xb);
}
END_TEST

/* Version 3.x is read, 4.0 is not; 3.0's OS device type bitmask becomes
 * the 2.x enum node_build.c classifies network cards by. */
START_TEST(v3_versions_and_osdev_types)
{
	char *x = xml3("3.1", 0, false, 0,
		       "<object type=\"OSDev\" gp_index=\"41\" name=\"mlx5_0\" osdev_type=\"48\"/>",
		       NULL);
	tp_node *n = load_buf(x);
	ck_assert_int_eq(tp_node_nnics(n), 1);     /* Network|OpenFabrics: OFED */
	tp_node_destroy(n);
	char *canon;
	size_t clen;
	tp_error err;
	ck_assert_int_eq(tp__node_xml_check(x, strlen(x), "x", &canon, &clen, &err), 0);
	ck_assert_ptr_nonnull(strstr(canon, "osdev_type=\"3\""));
	ck_assert_ptr_nonnull(strstr(canon, "<topology version=\"2.0\">"));
	ck_assert_ptr_null(strstr(canon, "cache_inclusive"));
	ck_assert_ptr_null(strstr(canon, "pci_locality"));
	free(canon);
	free(x);
	/* Network alone (Ethernet without RDMA): not a fabric card */
	x = xml3("3.0", 0, false, 0,
		 "<object type=\"OSDev\" gp_index=\"41\" name=\"eth0\" osdev_type=\"16\"/>", NULL);
	n = load_buf(x);
	ck_assert_int_eq(tp_node_nnics(n), 0);
	tp_node_destroy(n);
	free(x);
	x = xml3("4.0", 0, false, 0, NULL, NULL);
	load_bad(x, "version=\"4.0\": only hwloc 2.x and 3.x XML is read");
	free(x);
	x = xml3("3.0", 0, false, 0,
		 "<object type=\"OSDev\" gp_index=\"41\" name=\"e\" osdev_type=\"x\"/>", NULL);
	load_bad(x, "osdev_type=\"x\": expected an hwloc 3 type bitmask");
	free(x);
}
END_TEST

#define NVL2(vals) \
	"<distances2hetero nbobjs=\"4\" kind=\"25\" name=\"NVLinkBandwidth\">\n" \
	"<indexes>OSDev:20 OSDev:21 PCIDev:30 PCIDev:31 </indexes>\n" \
	"<u64values" vals "</u64values>\n</distances2hetero>\n"

/* Two GPUs on NVSwitches: the counts alone (18 and 18) would not make a
 * switch of two GPUs, the matrix says so; a GpuLinks= file still wins. */
START_TEST(nvswitch_two_gpus)
{
	char *x = xml3("3.0", 2, false, 2, NULL,
		       NVL2(">1000000 0 225000 225000 0 1000000 225000 225000 "
			    "225000 225000 1000000 0 225000 225000 0 1000000 "));
	tp_node *n = load_buf(x);
	ck_assert_int_eq(tp_node_ngpus(n), 2);
	ck_assert_int_eq(tp_node_nvlinks(n, 0, 1), 18);
	ck_assert_int_eq(tp_node_has_nvswitch(n), 1);
	/* an H100's 18 NVLink 4 links: 450 GB/s */
	ck_assert_double_eq_tol(tp_node_gpu_bandwidth(n, 0, 1), 450, 1e-9);
	tp_error err;
	const char *gres = "Name=gpu Links=-1,4\nName=gpu Links=4,-1\n";
	ck_assert_msg(tp_node_load_links_buffer(n, gres, strlen(gres), "g.conf", &err) == 0,
		      "%s", err.msg);
	ck_assert_int_eq(tp_node_nvlinks(n, 0, 1), 4);
	ck_assert_int_eq(tp_node_has_nvswitch(n), 0);
	/* counts without a speed: NVLink 2-4 */
	ck_assert_double_eq_tol(tp_node_gpu_bandwidth(n, 0, 1), 4 * TP_NVLINK_BW, 1e-9);
	tp_node_destroy(n);
	free(x);
}
END_TEST

/* Made up (no real export was found): two B200-like GPUs, 9 NVLink 5 links
 * (9 x 50000 MB/s) to each of two switches.  900000 MB/s in all is more
 * than 18 NVLink 4 links carry: NVLink 5, 18 links of 50 GB/s.  Written
 * back as one pair of 900000 and read again: the same.  Two NVLink 5
 * links between two GPUs alone (100000) read as four NVLink 4 ones: the
 * count is off, the bandwidth is not. */
START_TEST(nvlink5_by_total)
{
	char *x = xml3("3.0", 2, false, 2, NULL,
		       NVL2(">1000000 0 450000 450000 0 1000000 450000 450000 "
			    "450000 450000 1000000 0 450000 450000 0 1000000 "));
	tp_node *n = load_buf(x);
	ck_assert_int_eq(tp_node_nvlinks(n, 0, 1), 18);
	ck_assert_int_eq(tp_node_has_nvswitch(n), 1);
	ck_assert_double_eq_tol(tp_node_gpu_bandwidth(n, 0, 1), 900, 1e-9);
	char *xml = NULL;
	size_t len = 0;
	tp_error err;
	ck_assert_msg(tp_node_write_xml(n, &xml, &len, &err) == 0, "%s", err.msg);
	ck_assert_ptr_nonnull(strstr(xml, "900000"));
	tp_node *m = NULL;
	ck_assert_msg(tp_node_load_xml_buffer(xml, len, "again.xml", &m, &err) == 0,
		      "%s", err.msg);
	ck_assert_int_eq(tp_node_nvlinks(m, 0, 1), 18);
	ck_assert_double_eq_tol(tp_node_gpu_bandwidth(m, 0, 1), 900, 1e-9);
	tp_node_destroy(m);
	free(xml);
	tp_node_destroy(n);
	free(x);
	x = xml3("3.0", 2, false, 0, NULL,
		 "<distances2 type=\"OSDev\" nbobjs=\"2\" kind=\"25\" "
		 "name=\"NVLinkBandwidth\" indexing=\"gp\">\n"
		 "<indexes>20 21 </indexes>\n"
		 "<u64values>1000000 100000 100000 1000000 </u64values>\n"
		 "</distances2>\n");
	n = load_buf(x);
	ck_assert_int_eq(tp_node_nvlinks(n, 0, 1), 4);
	ck_assert_double_eq_tol(tp_node_gpu_bandwidth(n, 0, 1), 100, 1e-9);
	tp_node_destroy(n);
	free(x);
}
END_TEST

/* hwloc 2.x: a plain distances2 of OS devices, direct NVLinks. */
START_TEST(nvlink_direct_v2)
{
	char *x = xml3("2.0", 3, false, 0, NULL,
		       "<distances2 type=\"OSDev\" nbobjs=\"3\" kind=\"25\" "
		       "name=\"NVLinkBandwidth\" indexing=\"gp\">\n"
		       "<indexes>20 21 22 </indexes>\n"
		       "<u64values>1000000 50000 0 50000 1000000 100000 </u64values>\n"
		       "<u64values>0 100000 1000000 </u64values>\n"
		       "</distances2>\n");
	tp_node *n = load_buf(x);
	ck_assert_int_eq(tp_node_nvlinks(n, 0, 1), 2);
	ck_assert_int_eq(tp_node_nvlinks(n, 1, 2), 4);
	ck_assert_int_eq(tp_node_nvlinks(n, 0, 2), 0);
	ck_assert_int_eq(tp_node_has_nvswitch(n), 0);
	tp_node_destroy(n);
	free(x);
}
END_TEST

#define XGMI(name, vals) \
	"<distances2 type=\"OSDev\" nbobjs=\"4\" kind=\"9\" name=\"" name "\" indexing=\"gp\">\n" \
	"<indexes>20 21 22 23 </indexes>\n" \
	"<u64values>" vals "</u64values>\n</distances2>\n"

/* xGMI: one hop apart, max(1, round(bw / 50000)) links; farther, routed. */
START_TEST(xgmi_hops_and_bandwidth)
{
	const char *bw = "5000000 200000 50000 0 200000 5000000 100000 0 "
			 "50000 100000 5000000 100000 0 0 100000 5000000 ";
	char *x = xml3("3.0", 4, true, 0, NULL,
		       XGMI("XGMIBandwidth", "5000000 200000 50000 0 200000 5000000 100000 0 "
			    "50000 100000 5000000 100000 0 0 100000 5000000 ")
		       XGMI("XGMIHops", "0 1 1 2 1 0 1 2 1 1 0 1 2 2 1 0 "));
	tp_node *n = load_buf(x);
	ck_assert_int_eq(tp_node_xgmi_links(n, 0, 1), 4);
	ck_assert_int_eq(tp_node_xgmi_links(n, 0, 2), 1);
	ck_assert_int_eq(tp_node_xgmi_links(n, 1, 2), 2);
	ck_assert_int_eq(tp_node_xgmi_links(n, 2, 3), 2);
	ck_assert_int_eq(tp_node_xgmi_links(n, 0, 3), 0);
	ck_assert_int_eq(tp_node_gpu_path(n, 0, 3), TP_PATH_XHOP);
	ck_assert_int_eq(tp_node_gpu_path(n, 0, 1), TP_PATH_XGMI);
	/* the bandwidth reported: 200 GB/s over the 4 links of (0,1) */
	ck_assert_double_eq_tol(tp_node_gpu_bandwidth(n, 0, 1), 200, 1e-9);
	ck_assert_double_eq_tol(tp_node_gpu_bandwidth(n, 1, 2), 100, 1e-9);
	tp_node_destroy(n);
	free(x);
	/* a reported bandwidth that is no multiple of 50 GB/s stays what it
	 * is (one link of 64 GB/s), not rounded to a link count */
	x = xml3("3.0", 2, true, 0, NULL,
		 "<distances2 type=\"OSDev\" nbobjs=\"2\" kind=\"9\" "
		 "name=\"XGMIBandwidth\" indexing=\"gp\">\n"
		 "<indexes>20 21 </indexes>\n"
		 "<u64values>1000000 64000 64000 1000000 </u64values>\n"
		 "</distances2>\n");
	n = load_buf(x);
	ck_assert_int_eq(tp_node_xgmi_links(n, 0, 1), 1);
	ck_assert_double_eq_tol(tp_node_gpu_bandwidth(n, 0, 1), 64, 1e-9);
	tp_node_destroy(n);
	free(x);
	/* without hops: every pair with bandwidth is direct */
	char v[512];
	snprintf(v, sizeof v, XGMI("XGMIBandwidth", "%s"), bw);
	x = xml3("2.0", 4, true, 0, NULL, v);
	n = load_buf(x);
	ck_assert_int_eq(tp_node_xgmi_links(n, 0, 1), 4);
	ck_assert_int_eq(tp_node_xgmi_links(n, 0, 3), 0);
	ck_assert_int_eq(tp_node_xgmi_links(n, 2, 3), 2);
	tp_node_destroy(n);
	free(x);
	/* hops alone: one link per pair one hop apart */
	x = xml3("3.0", 4, true, 0, NULL, XGMI("XGMIHops", "0 1 1 2 1 0 1 2 1 1 0 1 2 2 1 0 "));
	n = load_buf(x);
	ck_assert_int_eq(tp_node_xgmi_links(n, 0, 1), 1);
	ck_assert_int_eq(tp_node_xgmi_links(n, 0, 3), 0);
	ck_assert_int_eq(tp_node_gpu_path(n, 0, 3), TP_PATH_XHOP);
	tp_node_destroy(n);
	free(x);
}
END_TEST

/* hwloc on ROCm SMI: 100000 MB/s and 1 hop for every xGMI pair, a
 * placeholder: one link, four between the two GCDs of an MI250X (GPUs
 * 0-1 and 2-3 here, PCI device 740c), not a uniform two. */
START_TEST(xgmi_rsmi_placeholder)
{
	char *x = xml3("2.0", 4, true, 0, NULL,
		       XGMI("XGMIBandwidth", "1000000 100000 100000 100000 100000 1000000 "
			    "100000 100000 100000 100000 1000000 100000 100000 100000 "
			    "100000 1000000 ")
		       XGMI("XGMIHops", "0 1 1 1 1 0 1 1 1 1 0 1 1 1 1 0 "));
	tp_node *n = load_buf(x);
	ck_assert_int_eq(tp_node_xgmi_links(n, 0, 1), 4);
	ck_assert_int_eq(tp_node_xgmi_links(n, 2, 3), 4);
	ck_assert_int_eq(tp_node_xgmi_links(n, 0, 2), 1);
	ck_assert_int_eq(tp_node_xgmi_links(n, 1, 3), 1);
	tp_node_destroy(n);
	free(x);
}
END_TEST

/* A matrix that names none of the model's GPUs says nothing: ignored.  So
 * is one hwloc ignores (a single object, os indexing of OS devices). */
START_TEST(useless_matrices)
{
	const char *dist[] = {
		"<distances2hetero nbobjs=\"2\" kind=\"25\" name=\"NVLinkBandwidth\">"
		"<indexes length=\"20\">Package:2 PCIDev:30 </indexes>"
		"<u64values length=\"20\">1000000 0 0 1000000 </u64values></distances2hetero>\n",
		"<distances2 type=\"OSDev\" nbobjs=\"1\" kind=\"25\" name=\"NVLinkBandwidth\" "
		"indexing=\"gp\"><indexes length=\"3\">20 </indexes>"
		"<u64values length=\"8\">1000000 </u64values></distances2>\n",
		"<distances2 type=\"OSDev\" nbobjs=\"2\" kind=\"25\" name=\"NVLinkBandwidth\" "
		"indexing=\"os\"><indexes length=\"4\">0 1 </indexes>"
		"<u64values length=\"8\">1 2 3 4 </u64values></distances2>\n",
		"<distances2 type=\"NUMANode\" nbobjs=\"2\" kind=\"5\" name=\"NUMALatency\" "
		"indexing=\"os\"><indexes length=\"4\">0 1 </indexes>"
		"<u64values length=\"12\">10 21 21 10 </u64values></distances2>\n",
	};
	for (size_t i = 0; i < sizeof dist / sizeof *dist; i++) {
		char *x = xml3("3.0", 2, false, 1, NULL, dist[i]);
		tp_node *n = load_buf(x);
		ck_assert_int_eq(tp_node_ngpus(n), 2);
		ck_assert_int_eq(tp_node_nvlinks(n, 0, 1), 0);
		ck_assert_int_eq(tp_node_has_nvswitch(n), 0);
		tp_node_destroy(n);
		free(x);
	}
}
END_TEST

/* Broken matrices: one line naming the file and line. */
START_TEST(bad_matrices)
{
	static const struct { const char *dist, *frag; } bad[] = {
		{ NVL2(" length=\"9\">0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 "),
		  "line 26: distances2hetero NVLinkBandwidth: <u64values length=\"9\"> holds 32 characters" },
		{ NVL2(">0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 "),
		  "NVLinkBandwidth: more than 16 values" },
		{ NVL2(">0 0 0 0 0 0 0 0 0 0 0 0 0 0 "),
		  "NVLinkBandwidth: 4 indexes and 14 values for nbobjs=\"4\" (expected 4 and 16)" },
		{ "<distances2hetero nbobjs=\"2\" kind=\"25\" name=\"NVLinkBandwidth\">"
		  "<indexes length=\"18\">OSDev:20 OSDev:99 </indexes></distances2hetero>\n",
		  "index \"OSDev:99\": no object has gp_index 99" },
		{ "<distances2hetero nbobjs=\"2\" kind=\"25\" name=\"NVLinkBandwidth\">"
		  "<indexes length=\"19\">OSDev:20 PCIDev:21 </indexes></distances2hetero>\n",
		  "index \"PCIDev:21\": object 21 is a OSDev" },
		{ "<distances2hetero nbobjs=\"2\" kind=\"25\" name=\"NVLinkBandwidth\">"
		  "<indexes length=\"18\">OSDev:20 Gizmo:21 </indexes></distances2hetero>\n",
		  "index \"Gizmo:21\": expected Type:gp_index" },
		{ "<distances2hetero nbobjs=\"2\" kind=\"25\" name=\"NVLinkBandwidth\">"
		  "<indexes length=\"19\">OSDev:20 PCIDev:10 </indexes>"
		  "<u64values length=\"8\">0 0 0 0 </u64values></distances2hetero>\n",
		  "objects 0 and 1 are one device" },
		{ "<distances2hetero nbobjs=\"300\" kind=\"25\" name=\"NVLinkBandwidth\"/>\n",
		  "nbobjs=\"300\": more than 256 objects" },
		{ "<distances2hetero kind=\"25\" name=\"XGMIHops\"/>\n",
		  "distances2hetero XGMIHops: without nbobjs=N" },
		{ "<distances2 nbobjs=\"2\" kind=\"25\" name=\"XGMIHops\" indexing=\"gp\"/>\n",
		  "distances2 XGMIHops: without a known type=" },
		{ "<distances2hetero nbobjs=\"2\" kind=\"25\" name=\"NVLinkBandwidth\">"
		  "<bogus/></distances2hetero>\n",
		  "NVLinkBandwidth: unexpected <bogus>" },
		{ "<distances2hetero nbobjs=\"2\" kind=\"25\" name=\"NVLinkBandwidth\">"
		  "<indexes >OSDev:20 OSDev:21 </indexes></distances2hetero>\n",
		  "<indexes> without a length" },
		{ NVL2(">0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 ")
		  NVL2(">0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 "),
		  "NVLinkBandwidth: a second matrix of that name (the first: line 24)" },
		{ NVL2(">0 0 25000 25000 0 0 25000 25000 25000 50000 0 0 25000 25000 0 0 "),
		  "line 24: NVLinkBandwidth: not symmetric: GPU1 (0000:02:00.0) to "
		  "NVSwitch 2 is 25000, NVSwitch 2 to GPU1 (0000:02:00.0) is 50000" },
		{ NVL2(">0 0 30000 30000 0 0 30000 30000 30000 30000 0 0 30000 30000 0 0 "),
		  "NVLinkBandwidth: values not multiples of 25000 MB/s" },
		{ NVL2(">0 0 3300000 0 0 0 0 0 3300000 0 0 0 0 0 0 0 "),
		  "NVLinkBandwidth: GPU0 (0000:01:00.0) to NVSwitch 2: 3300000 MB/s, more than 64 lanes" },
		{ NVL2(">0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 x9 0 0 0 0 0 0 0 0 "),
		  "value \"x9\": expected a number" },
	};
	for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
		char *x = xml3("3.0", 2, false, 2, NULL, bad[i].dist);
		load_bad(x, bad[i].frag);
		free(x);
	}
	/* xGMI hops beyond any route; bandwidth of too many links */
	char *x = xml3("3.0", 4, true, 0, NULL,
		       XGMI("XGMIHops", "0 1 1 99 1 0 1 2 1 1 0 1 99 2 1 0 "));
	load_bad(x, "XGMIHops: GPU0 (0000:01:00.0) to GPU3 (0000:04:00.0): 99 hops, more than 64");
	free(x);
	x = xml3("3.0", 4, true, 0, NULL,
		 XGMI("XGMIBandwidth", "0 9000000 0 0 9000000 0 0 0 0 0 0 0 0 0 0 0 "));
	load_bad(x, "XGMIBandwidth: GPU0 (0000:01:00.0) to GPU1 (0000:02:00.0): 9000000 MB/s, "
		 "more than 64 xGMI links");
	free(x);
	/* an NVLink matrix on AMD GPUs */
	x = xml3("3.0", 2, true, 2, NULL,
		 NVL2(">0 0 25000 0 0 0 0 25000 25000 0 0 0 0 25000 0 0 "));
	load_bad(x, "NVLinkBandwidth: NVLinks, but GPU 0 of x.xml is an AMD GPU");
	free(x);
}
END_TEST

/* The same as files (also seeds of the node_xml fuzzer): a 3.0 node with
 * two H100 on an NVSwitch and a broken NVLinkBandwidth. */
START_TEST(bad_matrix_files)
{
	static const struct { const char *file, *msg; } bad[] = {
		{ "bad-dist-length.xml", "bad-dist-length.xml: hwloc XML line 26: "
		  "distances2hetero NVLinkBandwidth: <u64values length=\"40\"> holds 56 characters" },
		{ "bad-dist-values.xml", "bad-dist-values.xml: hwloc XML line 26: "
		  "distances2hetero NVLinkBandwidth: more than 9 values" },
		{ "bad-dist-gp-index.xml", "bad-dist-gp-index.xml: hwloc XML line 25: "
		  "distances2hetero NVLinkBandwidth: index \"OSDev:29\": no object has gp_index 29" },
	};
	for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
		tp_node *n = (tp_node *)1;
		tp_error err;
		char path[512];
		snprintf(path, sizeof path, TP_TEST_NODES "%s", bad[i].file);
		ck_assert_int_eq(tp_node_load_xml(path, &n, &err), TP_EINVAL);
		ck_assert_ptr_null(n);
		tp_assert_err_has(&err, bad[i].msg);
	}
}
END_TEST

/* One H200 in a VM (real/README.md): the model the plugin caches (every
 * PCI device) and lstopo's export (the important ones) are one model, the
 * VM's virtual devices and the host bridge's own function left out of the
 * host bridge's width; nvidia-smi's matrix of one GPU, escapes and all,
 * adds no link. */
START_TEST(h200_vm_two_exports)
{
	const char *files[2] = { REAL "h200-vm.topoplace.xml", REAL "h200-vm.lstopo.xml" };
	double hb[2] = { 0, 0 };
	for (int f = 0; f < 2; f++) {
		tp_node *n = load_ok(files[f]);
		ck_assert_int_eq(tp_node_ncores(n), 16);
		ck_assert_int_eq(tp_node_ngpus(n), 1);
		tp_error err;
		ck_assert_msg(tp_node_load_links(n, REAL "h200-vm-nvidia-smi-topo.txt",
						 &err) == 0, "%s", err.msg);
		int seen = 0;
		for (int p = 0; p < tp_node_nparts(n); p++) {
			tp_node_part x;
			ck_assert_int_eq(tp_node_part_get(n, p, &x), 0);
			if (x.kind == TP_PART_GPU) {
				ck_assert_double_eq_tol(tp_node_link_bandwidth(n, x.uplink),
							63.015, 0.001);
				seen++;
			} else if (x.kind == TP_PART_HOSTBRIDGE) {
				hb[f] = tp_node_link_bandwidth(n, x.uplink);
				seen++;
			}
		}
		ck_assert_int_eq(seen, 2);
		tp_node_destroy(n);
	}
	/* the GPU, the two virtio disks and the network card (hwloc gives the
	 * three no speed: the default each) */
	ck_assert_double_eq_tol(hb[0], hb[1], 1e-9);
	ck_assert_double_eq_tol(hb[0], 63.015 + 3 * TP_PCI_BW, 0.001);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("node_xml3");
	TCase *tc = tcase_create("node_xml3");
	tcase_set_timeout(tc, 30);
	tcase_add_test(tc, dgx2_nvswitch);
	tcase_add_test(tc, power8_nvlink1);
	tcase_add_test(tc, cxl_v3_v2_twins);
	tcase_add_test(tc, v3_versions_and_osdev_types);
	tcase_add_test(tc, nvswitch_two_gpus);
	tcase_add_test(tc, nvlink5_by_total);
	tcase_add_test(tc, nvlink_direct_v2);
	tcase_add_test(tc, xgmi_hops_and_bandwidth);
	tcase_add_test(tc, xgmi_rsmi_placeholder);
	tcase_add_test(tc, useless_matrices);
	tcase_add_test(tc, bad_matrices);
	tcase_add_test(tc, bad_matrix_files);
	tcase_add_test(tc, h200_vm_two_exports);
	suite_add_tcase(s, tc);
	return tp_test_run(s);
}
