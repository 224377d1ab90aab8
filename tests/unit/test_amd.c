/* Unit tests: AMD GPUs in the node model (core/src/node/node_build.c), the
 * rocm-smi and amd-smi topology readers (core/src/node/node_links_rocm.c,
 * node_links_amd.c), the XGMIPeers rule of the XML checker
 * (core/src/node/node_xml_objects.c) and MAGC over xGMI links
 * (core/src/node/gpusel.c).
 * The example node mi250x is 4 MI250X (8 GCDs) with the xGMI graph
 *   0-1 2-3 4-5 6-7: 4 links (one package), 0-6 2-4: 2, 0-2 1-3 1-5 3-7
 *   4-6 5-7: 1
 * (hwloc alone knows the peers, not the counts: 0-6 and 2-4 read 1). */
#include "testutil.h"
#include <topoplace/nodeplace.h>
#include "node/node_internal.h"
#include "pattern/pattern_internal.h"

#define NODES TP_EXAMPLE_NODES

static tp_node *load(const char *links)
{
	tp_node *n = NULL;
	tp_error err;
	tp_error_clear(&err);
	ck_assert_msg(tp_node_load_xml(NODES "mi250x.xml", &n, &err) == 0, "%s",
		      err.msg);
	if (links)
		ck_assert_msg(tp_node_load_links(n, links, &err) == 0, "%s", err.msg);
	return n;
}

START_TEST(mi250x_from_hwloc)
{
	tp_node *n = load(NULL);
	ck_assert_int_eq(tp_node_ngpus(n), 8);
	ck_assert_int_eq(tp_node_ncores(n), 64);
	ck_assert_int_eq(tp_node_npus(n), 128);
	ck_assert_int_eq(tp_node_nnuma(n), 4);
	ck_assert_int_eq(tp_node_fabric(n), TP_FABRIC_XGMI);
	const char *bus[8] = { "c1", "c6", "c9", "ce", "d1", "d6", "d9", "de" };
	int numa[8] = { 3, 3, 1, 1, 0, 0, 2, 2 };
	for (int g = 0; g < 8; g++) {
		char want[16];
		snprintf(want, sizeof want, "0000:%s:00.0", bus[g]);
		ck_assert_str_eq(tp_node_gpu_busid(n, g), want);
		ck_assert_uint_eq(tp_node_gpu_vendor(n, g), 0x1002);
		ck_assert_int_eq(tp_node_gpu_numa(n, g), numa[g]);
		ck_assert_int_eq(tp_node_gpu_package(n, g), 0);
	}
	ck_assert_uint_eq(tp_node_gpu_vendor(n, 8), 0);
	/* the two GCDs of a package: 4 links; peers otherwise 1 */
	ck_assert_int_eq(tp_node_xgmi_links(n, 0, 1), 4);
	ck_assert_int_eq(tp_node_xgmi_links(n, 6, 7), 4);
	ck_assert_int_eq(tp_node_xgmi_links(n, 0, 6), 1);
	ck_assert_int_eq(tp_node_xgmi_links(n, 1, 5), 1);
	ck_assert_int_eq(tp_node_xgmi_links(n, 0, 3), 0);
	ck_assert_int_eq(tp_node_nvlinks(n, 0, 1), 0);
	ck_assert_int_eq(tp_node_gpu_path(n, 0, 1), TP_PATH_XGMI);
	ck_assert_int_eq(tp_node_gpu_path(n, 0, 3), TP_PATH_XHOP);
	ck_assert_double_eq_tol(tp_node_gpu_bandwidth(n, 0, 1), 4 * TP_XGMI_BW, 1e-9);
	ck_assert_double_eq_tol(tp_node_gpu_bandwidth(n, 0, 3), TP_XGMI_BW, 1e-9);
	char b[16];
	ck_assert_str_eq(tp_gpu_path_name(TP_PATH_XGMI, 4, b, sizeof b), "XGMI4");
	ck_assert_str_eq(tp_gpu_path_name(TP_PATH_XHOP, 2, b, sizeof b), "XHOP2");
	/* 0 -> 3 has no direct link: two xGMI links through GPU 1 (0-1-3 and
	 * 0-2-3 are equally wide; breadth-first order takes GPU 1 first) */
	int links[16];
	ck_assert_int_eq(tp_node_gpu_route(n, 0, 3, links, 16), 2);
	ck_assert_str_eq(tp_node_link_name(n, links[0]), "GPU0 - GPU1 xGMI x4");
	ck_assert_str_eq(tp_node_link_name(n, links[1]), "GPU1 - GPU3 xGMI x1");
	/* Slingshot cards: one per package, on its first GCD's host bridge */
	ck_assert_int_eq(tp_node_nnics(n), 4);
	int nic[8] = { 0, 0, 1, 1, 2, 2, 3, 3 };
	for (int g = 0; g < 8; g++)
		ck_assert_int_eq(tp_node_gpu_nic(n, g), nic[g]);
	ck_assert_str_eq(tp_node_nic_busid(n, 0), "0000:c2:00.0");
	tp_node_destroy(n);
}
END_TEST

START_TEST(mi250x_with_rocm_smi)
{
	tp_node *n = load(NODES "mi250x.links");
	ck_assert_int_eq(tp_node_fabric(n), TP_FABRIC_XGMI);
	ck_assert_int_eq(tp_node_xgmi_links(n, 0, 1), 4);
	ck_assert_int_eq(tp_node_xgmi_links(n, 0, 6), 2);
	ck_assert_int_eq(tp_node_xgmi_links(n, 2, 4), 2);
	ck_assert_int_eq(tp_node_xgmi_links(n, 3, 7), 1);
	ck_assert_int_eq(tp_node_xgmi_links(n, 0, 4), 0);
	ck_assert_double_eq_tol(tp_node_gpu_bandwidth(n, 0, 6), 100, 1e-9);
	/* 12 direct pairs, the other 16 through one other GCD */
	int direct = 0, hop = 0;
	for (int a = 0; a < 8; a++)
		for (int c = a + 1; c < 8; c++) {
			direct += tp_node_gpu_path(n, a, c) == TP_PATH_XGMI;
			hop += tp_node_gpu_path(n, a, c) == TP_PATH_XHOP;
		}
	ck_assert_int_eq(direct, 12);
	ck_assert_int_eq(hop, 16);
	/* 0 -> 4: 0-2-4 (50, 100) and 0-6-4 (100, 50): both 50 wide; 0-2-4 */
	int links[16];
	ck_assert_int_eq(tp_node_gpu_route(n, 0, 4, links, 16), 2);
	ck_assert_str_eq(tp_node_link_name(n, links[0]), "GPU0 - GPU2 xGMI x1");
	/* nvidia-smi text (NVLink lanes) does not fit AMD GPUs */
	tp_error err;
	char smi[2048];
	size_t o = (size_t)snprintf(smi, sizeof smi, "\tGPU0\tGPU1\tGPU2\tGPU3\tGPU4"
				    "\tGPU5\tGPU6\tGPU7\tCPU Affinity\n");
	for (int i = 0; i < 8; i++) {
		o += (size_t)snprintf(smi + o, sizeof smi - o, "GPU%d", i);
		for (int j = 0; j < 8; j++)
			o += (size_t)snprintf(smi + o, sizeof smi - o, "\t%s",
					      i == j ? "X" : "NV12");
		o += (size_t)snprintf(smi + o, sizeof smi - o, "\t0-63\n");
	}
	ck_assert_int_eq(tp_node_load_links_buffer(n, smi, o, "topo.txt", &err),
			 TP_EINVAL);
	tp_assert_err_has(&err, "topo.txt: NVLinks, but GPU 0 of");
	tp_assert_err_has(&err, "is an AMD GPU (give xGMI links");
	/* gres.conf Links= on AMD GPUs are xGMI links */
	const char *gres =
		"Name=gpu File=/dev/dri/renderD128 Links=-1,4,0,0,0,0,0,0\n"
		"Name=gpu File=/dev/dri/renderD129 Links=4,-1,0,0,0,0,0,0\n"
		"Name=gpu File=/dev/dri/renderD130 Links=0,0,-1,0,0,0,0,0\n"
		"Name=gpu File=/dev/dri/renderD131 Links=0,0,0,-1,0,0,0,0\n"
		"Name=gpu File=/dev/dri/renderD132 Links=0,0,0,0,-1,0,0,0\n"
		"Name=gpu File=/dev/dri/renderD133 Links=0,0,0,0,0,-1,0,0\n"
		"Name=gpu File=/dev/dri/renderD134 Links=0,0,0,0,0,0,-1,0\n"
		"Name=gpu File=/dev/dri/renderD135 Links=0,0,0,0,0,0,0,-1\n";
	ck_assert_msg(tp_node_load_links_buffer(n, gres, strlen(gres), "gres.conf",
						&err) == 0, "%s", err.msg);
	ck_assert_int_eq(tp_node_xgmi_links(n, 0, 1), 4);
	ck_assert_int_eq(tp_node_xgmi_links(n, 0, 6), 0);
	ck_assert_int_eq(tp_node_gpu_path(n, 0, 2), TP_PATH_SYS);
	/* all zero: PCIe only */
	int zero[64] = { 0 };
	ck_assert_int_eq(tp_node_set_xgmi(n, zero, 8, "z", &err), 0);
	ck_assert_int_eq(tp_node_fabric(n), TP_FABRIC_NONE);
	ck_assert_int_eq(tp_node_gpu_path(n, 0, 1), TP_PATH_NODE);
	ck_assert_int_eq(tp_node_set_nvlinks(n, zero, 8, "nv", &err), TP_EINVAL);
	tp_assert_err_has(&err, "GPU 0 of");
	tp_node_destroy(n);
}
END_TEST

/* s with every "from" replaced by "to" (malloc'ed; s is freed). */
static char *replace_all(char *s, const char *from, const char *to)
{
	size_t fl = strlen(from), tl = strlen(to), n = 0;
	for (const char *p = s; (p = strstr(p, from)); p += fl)
		n++;
	char *o = malloc(strlen(s) + n * tl + 1), *w = o;
	const char *p = s, *q;
	while ((q = strstr(p, from))) {
		memcpy(w, p, (size_t)(q - p));
		w += q - p;
		memcpy(w, to, tl);
		w += tl;
		p = q + fl;
	}
	strcpy(w, p);
	free(s);
	return o;
}

static int ngpus_of(const char *xml, tp_node **out)
{
	tp_error err;
	ck_assert_msg(tp_node_load_xml_buffer(xml, strlen(xml), "x", out, &err) == 0,
		      "%s", err.msg);
	return tp_node_ngpus(*out);
}

/* Which AMD devices are GPUs: a VGA controller (0x0300) only with a ROCm
 * SMI or OpenCL device below it; MI300's class 0x1200 always. */
START_TEST(amd_device_classes)
{
	char *xml = NULL;
	size_t len = 0;
	FILE *f = fopen(NODES "mi250x.xml", "r");
	ck_assert_ptr_nonnull(f);
	ck_assert_int_eq(getdelim(&xml, &len, '\0', f) > 0, 1);
	fclose(f);
	tp_node *n = NULL;
	/* every GCD a VGA controller: still GPUs through their rsmi devices */
	char *a = replace_all(strdup(xml), "\"0380 [1002:740c]", "\"0300 [1002:740c]");
	ck_assert_int_eq(ngpus_of(a, &n), 8);
	tp_node_destroy(n);
	/* ... with OpenCL devices instead */
	a = replace_all(a, "subtype=\"RSMI\" osdev_type=\"1\"",
			"subtype=\"OpenCL\" osdev_type=\"5\"");
	a = replace_all(a, "name=\"rsmi", "name=\"opencl0d");
	ck_assert_int_eq(ngpus_of(a, &n), 8);
	ck_assert_int_eq(tp_node_fabric(n), TP_FABRIC_NONE);
	tp_node_destroy(n);
	/* ... with neither: a board's video, not a GPU */
	a = replace_all(a, "subtype=\"OpenCL\"", "subtype=\"Other\"");
	ck_assert_int_eq(ngpus_of(a, &n), 0);
	tp_node_destroy(n);
	free(a);
	/* MI300X: a processing accelerator; not MI250X GCDs, so hwloc's peers
	 * count one link each */
	a = replace_all(strdup(xml), "\"0380 [1002:740c]", "\"1200 [1002:74a1]");
	ck_assert_int_eq(ngpus_of(a, &n), 8);
	ck_assert_int_eq(tp_node_xgmi_links(n, 0, 1), 1);
	ck_assert_int_eq(tp_node_gpu_path(n, 0, 1), TP_PATH_XGMI);
	tp_node_destroy(n);
	free(a);
	free(xml);
}
END_TEST

/* NVIDIA nodes refuse rocm-smi text. */
START_TEST(rocm_smi_on_nvidia)
{
	tp_node *n = NULL;
	tp_error err;
	ck_assert_int_eq(tp_node_load_xml(NODES "dgx8.xml", &n, &err), 0);
	ck_assert_int_eq(tp_node_load_links(n, NODES "mi250x.links", &err), TP_EINVAL);
	tp_assert_err_has(&err, "xGMI links, but GPU 0 of");
	tp_assert_err_has(&err, "is an NVIDIA GPU");
	tp_node_destroy(n);
}
END_TEST

static int parse(const char *text, int **c, int *ng, enum tp_links_kind *k,
		 tp_error *err)
{
	tp_error_clear(err);
	return tp_links_parse_kind(text, strlen(text), "smi.txt", c, ng, k, err);
}

/* rocm_smi_lib issue #108: four GPUs on PCIe (weights 52, hops 3). */
static const char *PCIE4 =
	"======================= ROCm System Management Interface =======================\n"
	"=========================== Weight between two GPUs ============================\n"
	"       GPU0         GPU1         GPU2         GPU3         \n"
	"GPU0   0            52           52           52           \n"
	"GPU1   52           0            52           52           \n"
	"GPU2   52           52           0            52           \n"
	"GPU3   52           52           52           0            \n"
	"\n"
	"============================ Hops between two GPUs =============================\n"
	"       GPU0         GPU1         GPU2         GPU3         \n"
	"GPU0   0            3            3            3            \n"
	"GPU1   3            0            3            3            \n"
	"GPU2   3            3            0            3            \n"
	"GPU3   3            3            3            0            \n"
	"\n"
	"========================== Link Type between two GPUs ==========================\n"
	"       GPU0         GPU1         GPU2         GPU3         \n"
	"GPU0   0            PCIE         PCIE         PCIE         \n"
	"GPU1   PCIE         0            PCIE         PCIE         \n"
	"GPU2   PCIE         PCIE         0            PCIE         \n"
	"GPU3   PCIE         PCIE         PCIE         0            \n"
	"\n"
	"================================== Numa Nodes ==================================\n"
	"GPU[0]\t\t: (Topology) Numa Node: 0\n"
	"GPU[0]\t\t: (Topology) Numa Affinity: 0\n"
	"GPU[1]\t\t: (Topology) Numa Node: 1\n"
	"GPU[1]\t\t: (Topology) Numa Affinity: 1\n"
	"============================= End of ROCm SMI Log ==============================\n";

/* A hive of four, fully connected, weights only (--showtopo). */
static const char *HIVE4 =
	"\x1b[1m=========== Weight between two GPUs ===========\x1b[0m\n"
	"       GPU0   GPU1   GPU2   GPU3\n"
	"GPU0   0      15     15     30\n"
	"GPU1   15     0      30     15\n"
	"GPU2   15     30     0      15\n"
	"GPU3   30     15     15     0\n"
	"=========== Link Type between two GPUs ===========\n"
	"       GPU0   GPU1   GPU2   GPU3\n"
	"GPU0   0      XGMI   XGMI   XGMI\n"
	"GPU1   XGMI   0      XGMI   XGMI\n"
	"GPU2   XGMI   XGMI   0      XGMI\n"
	"GPU3   XGMI   XGMI   XGMI   0\n";

START_TEST(rocm_smi_parse)
{
	int *c = NULL, ng = 0;
	enum tp_links_kind k;
	tp_error err;
	ck_assert_msg(parse(PCIE4, &c, &ng, &k, &err) == 0, "%s", err.msg);
	ck_assert_int_eq(ng, 4);
	ck_assert_int_eq(k, TP_LINKS_ROCM_SMI);
	for (int i = 0; i < 16; i++)
		ck_assert_int_eq(c[i], 0);
	free(c);
	/* a ring 0-1-3-2-0: the weight-15 pairs have one link */
	ck_assert_msg(parse(HIVE4, &c, &ng, &k, &err) == 0, "%s", err.msg);
	ck_assert_int_eq(ng, 4);
	int want[16] = { 0, 1, 1, 0, 1, 0, 0, 1, 1, 0, 0, 1, 0, 1, 1, 0 };
	ck_assert_mem_eq(c, want, sizeof want);
	free(c);
	/* nvidia-smi and gres.conf are still told apart */
	const char *gres = "Name=gpu Links=-1,2\nName=gpu Links=2,-1\n";
	ck_assert_int_eq(parse(gres, &c, &ng, &k, &err), 0);
	ck_assert_int_eq(k, TP_LINKS_GRES);
	free(c);
	/* the shipped example: counts from the bandwidth matrix */
	char *text = NULL;
	size_t len = 0;
	FILE *f = fopen(NODES "mi250x.links", "r");
	ck_assert_ptr_nonnull(f);
	ck_assert_int_eq(getdelim(&text, &len, '\0', f) > 0, 1);
	fclose(f);
	ck_assert_msg(parse(text, &c, &ng, &k, &err) == 0, "%s", err.msg);
	ck_assert_int_eq(ng, 8);
	ck_assert_int_eq(c[0 * 8 + 1], 4);
	ck_assert_int_eq(c[6 * 8 + 0], 2);
	ck_assert_int_eq(c[7 * 8 + 5], 1);
	ck_assert_int_eq(c[7 * 8 + 0], 0);
	free(c);
	free(text);
}
END_TEST

/* Each bad input: one line naming the file (and line) and the problem. */
START_TEST(rocm_smi_errors)
{
	static const struct { const char *text, *frag; } bad[] = {
		{ "== Link Type between two GPUs ==\n GPU0 GPU1\nGPU0 0 XGMI\nGPU1 XGMI 0\n",
		  "smi.txt: XGMI pairs but neither the weight matrix" },
		{ "== Link Type between two GPUs ==\nGPU0 GPU1\nGPU0 0 NVL\nGPU1 XGMI 0\n",
		  "smi.txt:3: GPU0 to GPU1: link type 'NVL'" },
		{ "== Link Type between two GPUs ==\nGPU0 GPU1\nGPU0 0 PCIE\nGPU1 XGMI 0\n",
		  "Link Type between two GPUs not symmetric: GPU0 to GPU1 (line 3)" },
		{ "== Link Type between two GPUs ==\nGPU0 GPU1\nGPU0 0 PCIE\n",
		  "smi.txt: Link Type between two GPUs: no row for GPU1 of 2" },
		{ "== Link Type between two GPUs ==\nGPU0 GPU1\nGPU0 0 PCIE\nGPU0 0 PCIE\n",
		  "smi.txt:4: Link Type between two GPUs: row GPU0 again (first on line 3)" },
		{ "== Link Type between two GPUs ==\nGPU0 GPU1\nGPU0 0\n",
		  "smi.txt:3: row GPU0 has 1 entries, expected 2" },
		{ "== Link Type between two GPUs ==\nGPU0 GPU1\nGPU2 0 0\n",
		  "smi.txt:3: row GPU2, but the header has 2 GPUs" },
		{ "== Link Type between two GPUs ==\nGPU0 GPU2\n",
		  "smi.txt:2: Link Type between two GPUs: expected the header GPU0 GPU1" },
		{ "== Weight between two GPUs ==\nGPU0 GPU1\nGPU0 0 x15\nGPU1 15 0\n",
		  "smi.txt:3: GPU0 to GPU1: weight 'x15' is not a number" },
		{ "== Weight between two GPUs ==\nGPU0 GPU1\nGPU0 0 15\nGPU1 15 0\n",
		  "neither a 'Link Type between two GPUs'" },
		{ "== Bandwidth ==\nGPU0 GPU1\nGPU0 N/A 50000-200000\nGPU1 50000 N/A\n",
		  "smi.txt:4: GPU1 to GPU0: bandwidth '50000' is not min-max" },
		{ "== Bandwidth ==\nGPU0 GPU1\nGPU0 N/A 0-5\nGPU1 0-5 N/A\n",
		  "smi.txt:3: GPU0 to GPU1: bandwidth '0-5'" },
		{ "== Bandwidth ==\nGPU0 GPU1\nGPU0 N/A 9-5\nGPU1 9-5 N/A\n",
		  "bandwidth '9-5'" },
		{ "== Bandwidth ==\nGPU0 GPU1\nGPU0 N/A 5-9\nGPU1 5-10 N/A\n",
		  "Bandwidth not symmetric" },
		{ "== Link Type between two GPUs ==\nGPU0 GPU1\nGPU0 0 PCIE\nGPU1 PCIE 0\n"
		  "== Bandwidth ==\nGPU0 GPU1\nGPU0 N/A 5-9\nGPU1 5-9 N/A\n",
		  "smi.txt:7: GPU0 to GPU1 has xGMI bandwidth 5-9 but link type PCIE (line 3)" },
		{ "== Link Type between two GPUs ==\nGPU0 GPU1\nGPU0 0 PCIE\nGPU1 PCIE 0\n"
		  "== Bandwidth ==\nGPU0 GPU1 GPU2\n",
		  "smi.txt:6: Bandwidth: 3 GPUs, but an earlier matrix has 2" },
		{ "== Link Type between two GPUs ==\nGPU0\nGPU0 0\n== Link Type between two GPUs ==\n",
		  "smi.txt:4: a second 'Link Type between two GPUs' matrix (the first on line 2)" },
		{ "ROCm System Management Interface\n== Numa Nodes ==\nGPU[0] : x\n",
		  "smi.txt: no rocm-smi matrix" },
	};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		int *c = (int *)1, ng = -1;
		tp_error err;
		ck_assert_int_eq(parse(bad[i].text, &c, &ng, NULL, &err), TP_EINVAL);
		ck_assert_ptr_null(c);
		ck_assert_int_eq(ng, 0);
		tp_assert_err_has(&err, bad[i].frag);
		ck_assert_ptr_null(strchr(err.msg, '\n'));
	}
}
END_TEST

/* ---- amd-smi topology ---- */

#define REAL TP_TEST_NODES "real/"

static char *slurp(const char *path)
{
	char *text = NULL;
	size_t len = 0;
	FILE *f = fopen(path, "r");
	ck_assert_ptr_nonnull(f);
	ck_assert_int_eq(getdelim(&text, &len, '\0', f) > 0, 1);
	fclose(f);
	return text;
}

/* Parse a file with its bus ids; every pair of the 8 GPUs has links. */
static void check_full8(const char *file, const char *const bus[8], int links)
{
	char *text = slurp(file);
	int *c = NULL, ng = 0;
	enum tp_links_kind k;
	struct tp_links_bdf *b = NULL;
	tp_error err;
	tp_error_clear(&err);
	ck_assert_msg(tp_links_parse_bdf(text, strlen(text), file, &c, &ng, &k, &b,
					 &err) == 0, "%s", err.msg);
	ck_assert_int_eq(k, TP_LINKS_AMD_SMI);
	ck_assert_int_eq(ng, 8);
	for (int i = 0; i < 8; i++) {
		char want[16];
		snprintf(want, sizeof want, "0000:%s:00.0", bus[i]);
		ck_assert_str_eq(b[i].busid, want);
		for (int j = 0; j < 8; j++)
			ck_assert_int_eq(c[i * 8 + j], i == j ? 0 : links);
	}
	free(b);
	free(c);
	free(text);
}

static const char *const MI300X_BUS[8] = { "0c", "22", "38", "5c",
					   "9f", "af", "bf", "df" };
static const char *const MI355X_BUS[8] = { "0d", "26", "5d", "75",
					   "8e", "a7", "dc", "f4" };

/* The real outputs: MI300X (amd_smi_lib CHANGELOG, ROCm 6.1.0) has
 * 50000-50000 MB/s, one link, between every pair; MI355X (OCI) prints 0
 * weights and 0-0 bandwidths, and XGMI with one hop everywhere: one link
 * each pair too (the K8 mesh of 7 links per GPU). */
START_TEST(amd_smi_real)
{
	check_full8(REAL "mi300x-amd-smi-topology.txt", MI300X_BUS, 1);
	check_full8(REAL "mi355x-amd-smi-topology.txt", MI355X_BUS, 1);
	/* the JSON of two GPUs on PCIe: no xGMI link */
	char *text = slurp(REAL "2gpu-amd-smi-topology-a-t.json");
	int *c = NULL, ng = 0;
	enum tp_links_kind k;
	tp_error err;
	tp_error_clear(&err);
	ck_assert_msg(tp_links_parse_kind(text, strlen(text), "j", &c, &ng, &k,
					  &err) == 0, "%s", err.msg);
	ck_assert_int_eq(k, TP_LINKS_AMD_SMI);
	ck_assert_int_eq(ng, 2);
	ck_assert_int_eq(c[1] + c[2], 0);
	free(c);
	free(text);
}
END_TEST

/* GPUs come in sorted bus-id order whatever the file's order; the
 * bandwidth's max / min gives the links; JSON reads alike. */
START_TEST(amd_smi_order)
{
	const char *txt =
		"LINK TYPE TABLE:\n"
		"             0000:44:00.0 0000:08:00.0 0000:20:00.0\n"
		"0000:44:00.0 SELF         XGMI         XGMI\n"
		"0000:08:00.0 XGMI         SELF         XGMI\n"
		"0000:20:00.0 XGMI         XGMI         SELF\n"
		"NUMA BW TABLE:\n"
		"             0000:44:00.0 0000:08:00.0 0000:20:00.0\n"
		"0000:44:00.0 N/A          50000-100000 50000-50000\n"
		"0000:08:00.0 50000-100000 N/A          50000-50000\n"
		"0000:20:00.0 50000-50000  50000-50000  N/A\n";
	const char *json =
		"[{\"gpu\": 0, \"bdf\": \"0000:44:00.0\", \"links\": ["
		"{\"bdf\": \"0000:44:00.0\", \"link_type\": \"SELF\", \"bandwidth\": \"N/A\"},"
		"{\"bdf\": \"0000:08:00.0\", \"link_type\": \"XGMI\", \"bandwidth\": \"50000-100000\"},"
		"{\"bdf\": \"0000:20:00.0\", \"link_type\": \"XGMI\", \"bandwidth\": \"50000-50000\"}]},"
		"{\"gpu\": 1, \"bdf\": \"0000:08:00.0\", \"links\": ["
		"{\"bdf\": \"0000:44:00.0\", \"link_type\": \"XGMI\", \"bandwidth\": \"50000-100000\"},"
		"{\"bdf\": \"0000:08:00.0\", \"link_type\": \"SELF\", \"bandwidth\": \"N/A\"},"
		"{\"bdf\": \"0000:20:00.0\", \"link_type\": \"XGMI\", \"bandwidth\": \"50000-50000\"}]},"
		"{\"gpu\": 2, \"bdf\": \"0000:20:00.0\", \"links\": ["
		"{\"bdf\": \"0000:44:00.0\", \"link_type\": \"XGMI\", \"bandwidth\": \"50000-50000\"},"
		"{\"bdf\": \"0000:08:00.0\", \"link_type\": \"XGMI\", \"bandwidth\": \"50000-50000\"},"
		"{\"bdf\": \"0000:20:00.0\", \"link_type\": \"SELF\", \"bandwidth\": \"N/A\"}]}]";
	const char *in[2] = { txt, json };
	for (int t = 0; t < 2; t++) {
		int *c = NULL, ng = 0;
		tp_error err;
		tp_error_clear(&err);
		ck_assert_msg(tp_links_parse(in[t], strlen(in[t]), "o", &c, &ng,
					     &err) == 0, "%s", err.msg);
		ck_assert_int_eq(ng, 3);
		/* 08 20 44: 08-44 two links, the others one */
		int want[9] = { 0, 1, 2, 1, 0, 1, 2, 1, 0 };
		ck_assert_mem_eq(c, want, sizeof want);
		free(c);
	}
}
END_TEST

static tp_node *load_real(const char *xml, const char *links, tp_error *err)
{
	tp_node *n = NULL;
	tp_error_clear(err);
	ck_assert_msg(tp_node_load_xml(xml, &n, err) == 0, "%s", err->msg);
	if (links && tp_node_load_links(n, links, err)) {
		tp_node_destroy(n);
		return NULL;
	}
	return n;
}

/* Models at the real bus ids load the real outputs; a bus id that is not
 * one of the model's GPUs is refused with the file's line. */
START_TEST(amd_smi_models)
{
	tp_error err;
	const char *xml[2] = { REAL "mi300x.xml", REAL "mi355x.xml" };
	const char *txt[2] = { REAL "mi300x-amd-smi-topology.txt",
			       REAL "mi355x-amd-smi-topology.txt" };
	for (int m = 0; m < 2; m++) {
		tp_node *n = load_real(xml[m], NULL, &err);
		ck_assert_int_eq(tp_node_fabric(n), TP_FABRIC_NONE);
		tp_node_destroy(n);
		n = load_real(xml[m], txt[m], &err);
		ck_assert_msg(n != NULL, "%s", err.msg);
		ck_assert_int_eq(tp_node_fabric(n), TP_FABRIC_XGMI);
		for (int i = 0; i < 8; i++)
			for (int j = 0; j < 8; j++) {
				ck_assert_int_eq(tp_node_xgmi_links(n, i, j), i != j);
				if (i != j)
					ck_assert_int_eq(tp_node_gpu_path(n, i, j),
							 TP_PATH_XGMI);
			}
		tp_node_destroy(n);
	}
	ck_assert_ptr_null(load_real(xml[0], txt[1], &err));
	tp_assert_err_has(&err, "mi355x-amd-smi-topology.txt:12: 0000:0d:00.0 "
			  "is not a GPU of");
	ck_assert_ptr_null(strchr(err.msg, '\n'));
}
END_TEST

/* amd-smi text at the bus ids of an NVIDIA node: xGMI needs AMD GPUs. */
START_TEST(amd_smi_on_nvidia)
{
	tp_error err;
	tp_node *n = load_real(NODES "dgx8.xml", NULL, &err);
	char text[4096] = "LINK TYPE TABLE:\n            ";
	for (int i = 0; i < 8; i++)
		snprintf(text + strlen(text), sizeof text - strlen(text), " %s",
			 tp_node_gpu_busid(n, i));
	for (int i = 0; i < 8; i++) {
		snprintf(text + strlen(text), sizeof text - strlen(text), "\n%s",
			 tp_node_gpu_busid(n, i));
		for (int j = 0; j < 8; j++)
			snprintf(text + strlen(text), sizeof text - strlen(text),
				 " %s", i == j ? "SELF" : "PCIE");
	}
	strcat(text, "\n");
	tp_error_clear(&err);
	ck_assert_int_eq(tp_node_load_links_buffer(n, text, strlen(text), "a.txt",
						   &err), TP_EINVAL);
	tp_assert_err_has(&err, "xGMI links, but GPU 0 of");
	tp_assert_err_has(&err, "is an NVIDIA GPU");
	tp_node_destroy(n);
}
END_TEST

#define H2 "             0000:0c:00.0 0000:22:00.0\n"
#define T2 "LINK TYPE TABLE:\n" H2 "0000:0c:00.0 SELF XGMI\n0000:22:00.0 XGMI SELF\n"

/* Each bad input: one line naming the file (and line) and the problem. */
START_TEST(amd_smi_errors)
{
	static const struct { const char *text, *frag; } bad[] = {
		{ "NUMA BW TABLE:\n" H2 "0000:0c:00.0 N/A 50000\n0000:22:00.0 50000-50000 N/A\n",
		  "a.txt:3: 0000:0c:00.0 to 0000:22:00.0: bandwidth '50000' is not min-max" },
		{ "LINK TYPE TABLE:\n" H2 "0000:0c:00.0 SELF XGMI\n",
		  "a.txt:1: LINK TYPE TABLE: no row for 0000:22:00.0" },
		{ "LINK TYPE TABLE:\n" H2 "0000:0c:00.0 SELF XGMI\nLegend:\n",
		  "a.txt:1: LINK TYPE TABLE: no row for 0000:22:00.0" },
		{ "LINK TYPE TABLE:\n             0000:0c:00.0 0000:0c:00.0\n",
		  "a.txt:2: LINK TYPE TABLE: 0000:0c:00.0 twice in the header" },
		{ T2 "0000:0c:00.0 SELF XGMI\n",
		  "a.txt:5: LINK TYPE TABLE: row 0000:0c:00.0 again (first on line 3)" },
		{ "LINK TYPE TABLE:\n" H2 "0000:0c:00.0 SELF XGMI PCIE\n",
		  "a.txt:3: LINK TYPE TABLE: row 0000:0c:00.0 has 3 entries, expected 2" },
		{ "LINK TYPE TABLE:\n" H2 "0000:0c:00.0 SELF\n",
		  "row 0000:0c:00.0 has 1 entries, expected 2" },
		{ "LINK TYPE TABLE:\n" H2 "0000:38:00.0 SELF XGMI\n",
		  "a.txt:3: LINK TYPE TABLE: row 0000:38:00.0, not in the header" },
		{ "LINK TYPE TABLE:\n" H2 "0000:0c:00.0 SELF NVL\n",
		  "a.txt:3: 0000:0c:00.0 to 0000:22:00.0: link type 'NVL'" },
		{ "LINK TYPE TABLE:\n" H2 "0000:0c:00.0 SELF XGMI\n0000:22:00.0 PCIE SELF\n",
		  "LINK TYPE TABLE not symmetric: 0000:0c:00.0 to 0000:22:00.0 (line 3)" },
		{ T2 "NUMA BW TABLE:\n             0000:22:00.0 0000:0c:00.0\n",
		  "a.txt:6: NUMA BW TABLE: the header's 2 bus ids differ" },
		{ T2 "LINK TYPE TABLE:\n",
		  "a.txt:5: a second LINK TYPE TABLE (the first's header on line 2)" },
		{ "LINK TYPE TABLE:\n             0000:0c:00.0 GPU1\n",
		  "a.txt:2: LINK TYPE TABLE: header entry 1 'GPU1' is not a bus id" },
		{ "LINK TYPE TABLE:\nLegend:\n",
		  "a.txt:1: LINK TYPE TABLE: no header of bus ids under it" },
		{ "WEIGHT TABLE:\n" H2 "0000:0c:00.0 0 x15\n",
		  "a.txt:3: 0000:0c:00.0 to 0000:22:00.0: weight 'x15' is not a number" },
		{ "WEIGHT TABLE:\n" H2 "0000:0c:00.0 0 15\n0000:22:00.0 15 0\n",
		  "a.txt: neither a LINK TYPE TABLE nor a NUMA BW TABLE" },
		{ T2 "NUMA BW TABLE:\n" H2 "0000:0c:00.0 N/A 0-0\n0000:22:00.0 0-0 N/A\n",
		  "a.txt: XGMI pairs but neither the weight" },
		{ "LINK TYPE TABLE:\n" H2 "0000:0c:00.0 SELF PCIE\n0000:22:00.0 PCIE SELF\n"
		  "NUMA BW TABLE:\n" H2 "0000:0c:00.0 N/A 5-9\n0000:22:00.0 5-9 N/A\n",
		  "a.txt:7: 0000:0c:00.0 to 0000:22:00.0 has xGMI bandwidth 5-9 but link type PCIE (line 3)" },
		{ "[{\"bdf\": \"0000:0c:00.0\", \"links\": []}",
		  "a.txt: JSON parse error" },
		{ "[{\"bdf\": \"0000:0c:00.0\", \"links\": []}]",
		  "a.txt: 0000:0c:00.0: \"links\" must be an array of 1 links" },
		{ "[{\"gpu\": 0, \"links\": []}]",
		  "a.txt: GPU entry 0: no \"bdf\" bus id" },
		{ "[{\"bdf\": \"0000:0c:00.0\", \"links\": [{\"bdf\": \"0000:0c:00.0\"}]},"
		  " {\"bdf\": \"0000:0C:00.0\", \"links\": []}]",
		  "a.txt: GPU entry 1: bus id 0000:0C:00.0 twice" },
		{ "[{\"bdf\": \"0000:0c:00.0\", \"links\": [{\"bdf\": \"0000:22:00.0\"}]}]",
		  "a.txt: 0000:0c:00.0: link 0: bus id not among the GPUs" },
		{ "[{\"bdf\": \"0000:0c:00.0\", \"links\": [{\"bdf\": \"0000:0c:00.0\","
		  " \"link_type\": \"SELF\", \"bandwidth\": 5}]}]",
		  "bandwidth '5' is not min-max" },
		{ "[{\"bdf\": \"0000:0c:00.0\", \"links\": [{\"bdf\": \"0000:0c:00.0\"},"
		  "{\"bdf\": \"0000:22:00.0\", \"link_type\": \"XGMI\"}]},"
		  " {\"bdf\": \"0000:22:00.0\", \"links\": [{\"bdf\": \"0000:22:00.0\"},"
		  "{\"bdf\": \"0000:0c:00.0\"}]}]",
		  "a.txt: 0000:0c:00.0: \"link_type\" in 1 of its 2 links" },
	};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		int *c = (int *)1, ng = -1;
		tp_error err;
		tp_error_clear(&err);
		ck_assert_int_eq(tp_links_parse(bad[i].text, strlen(bad[i].text),
						"a.txt", &c, &ng, &err), TP_EINVAL);
		ck_assert_ptr_null(c);
		ck_assert_int_eq(ng, 0);
		tp_assert_err_has(&err, bad[i].frag);
		ck_assert_ptr_null(strchr(err.msg, '\n'));
	}
}
END_TEST

/* The checker keeps an OSDev's XGMIPeers and refuses a bad one. */
START_TEST(xml_xgmi_peers)
{
	char *xml = NULL;
	size_t len = 0;
	FILE *f = fopen(NODES "mi250x.xml", "r");
	ck_assert_ptr_nonnull(f);
	ck_assert_int_eq(getdelim(&xml, &len, '\0', f) > 0, 1);
	fclose(f);
	char *canon;
	size_t clen;
	tp_error err;
	ck_assert_msg(tp__node_xml_check(xml, strlen(xml), "x.xml", &canon, &clen,
					 &err) == 0, "%s", err.msg);
	ck_assert_ptr_nonnull(strstr(canon, "<info name=\"XGMIPeers\" value=\"rsmi1 rsmi2 rsmi6\"/>"));
	ck_assert_ptr_null(strstr(canon, "GPUModel"));     /* other info dropped */
	/* the canonical document loads to the same model */
	tp_node *a = NULL, *b = NULL;
	ck_assert_int_eq(tp_node_load_xml_buffer(canon, clen, "canon", &a, &err), 0);
	ck_assert_int_eq(tp_node_load_xml_buffer(xml, strlen(xml), "orig", &b, &err), 0);
	for (int i = 0; i < 8; i++)
		for (int j = 0; j < 8; j++)
			ck_assert_int_eq(tp_node_xgmi_links(a, i, j),
					 tp_node_xgmi_links(b, i, j));
	tp_node_destroy(a);
	tp_node_destroy(b);
	free(canon);
	static const struct { const char *from, *to, *frag; } bad[] = {
		{ "value=\"rsmi1 rsmi2 rsmi6 \"", "value=\"rsmi1 gpu2\"",
		  "info XGMIPeers=\"rsmi1 gpu2\": expected rsmiN names" },
		{ "value=\"rsmi1 rsmi2 rsmi6 \"", "value=\"rsmi1 rsmi64\"",
		  "expected rsmiN names, N below 64" },
		{ "value=\"rsmi1 rsmi2 rsmi6 \"", "value=\"rsmi1x\"",
		  "expected rsmiN names" },
		{ "<info name=\"XGMIPeers\" value=\"rsmi1 rsmi2 rsmi6 \"/>",
		  "<info name=\"XGMIPeers\"/>", "info XGMIPeers without a value" },
		{ "<info name=\"XGMIPeers\" value=\"rsmi1 rsmi2 rsmi6 \"/>",
		  "<info name=\"XGMIPeers\" value=\"rsmi1\"/><info name=\"XGMIPeers\" value=\"rsmi2\"/>",
		  "info XGMIPeers given twice" },
	};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		const char *at = strstr(xml, bad[i].from);
		ck_assert_ptr_nonnull(at);
		size_t pre = (size_t)(at - xml), fl = strlen(bad[i].from);
		char *t = malloc(strlen(xml) + strlen(bad[i].to) + 1);
		memcpy(t, xml, pre);
		strcpy(t + pre, bad[i].to);
		strcat(t, at + fl);
		canon = NULL;
		ck_assert_int_eq(tp__node_xml_check(t, strlen(t), "x.xml", &canon, &clen,
						    &err), TP_EINVAL);
		ck_assert_ptr_null(canon);
		tp_assert_err_has(&err, "x.xml: hwloc XML line ");
		tp_assert_err_has(&err, bad[i].frag);
		free(t);
	}
	free(xml);
}
END_TEST

static tp_graph *edges(int32_t n, int m, const int32_t *u, const int32_t *v,
		       const double *w)
{
	tp_graph *g = NULL;
	tp_error err;
	ck_assert_msg(tp_graph_from_edges(&g, n, m, u, v, w, "t", &err) == 0, "%s",
		      err.msg);
	return g;
}

/* MAGC over xGMI: heavy pairs (0,2) (1,3) on GPUs 0..3.  Local-rank order
 * puts both over single links (0-2 and 1-3: 50 GB/s): 1e9 / 50 = 20 ms.
 * MAGC puts each pair on one package (0-1, 2-3: 200 GB/s): 5 ms. */
START_TEST(magc_over_xgmi)
{
	tp_node *n = load(NODES "mi250x.links");
	int32_t u[] = { 0, 1 }, v[] = { 2, 3 };
	double w[] = { 1e9, 1e9 };
	tp_graph *g = edges(4, 2, u, v, w);
	int allowed[4] = { 0, 1, 2, 3 }, gpus[4];
	tp_gpusel_cost c, lr;
	tp_error err;
	ck_assert_msg(tp_gpusel(&(tp_gpusel_request){ .on = { n, g, NULL, 4 },
			.allowed = allowed, .nallowed = 4, .gpus_per_task = 1,
			.algo = TP_GPUSEL_MAGC }, gpus, &c, &err) == 0, "%s",
			err.msg);
	ck_assert_int_eq(tp_node_gpu_path(n, gpus[0], gpus[2]), TP_PATH_XGMI);
	ck_assert_int_eq(tp_node_xgmi_links(n, gpus[0], gpus[2]), 4);
	ck_assert_int_eq(tp_node_xgmi_links(n, gpus[1], gpus[3]), 4);
	ck_assert_double_eq_tol(c.max_congestion_ms, 5, 1e-9);
	ck_assert_int_eq(tp_gpusel(&(tp_gpusel_request){ .on = { n, g, NULL,
			4 }, .allowed = allowed, .nallowed = 4,
			.gpus_per_task = 1, .algo = TP_GPUSEL_LOCAL_RANK },
			gpus, &lr, &err), 0);
	ck_assert_double_eq_tol(lr.max_congestion_ms, 20, 1e-9);
	ck_assert_str_eq(tp_node_link_name(n, lr.max_link), "GPU0 - GPU2 xGMI x1");
	tp_graph_destroy(g);

	/* a ring 0-1-...-7-0 of 1e9 per edge over all GCDs: in local-rank
	 * order 1-2, 3-4, 5-6 and 7-0 have no direct link and
	 * go through another GCD; MAGC is never worse. */
	int32_t ru[8], rv[8];
	double rw[8];
	for (int i = 0; i < 8; i++) {
		ru[i] = i;
		rv[i] = (i + 1) % 8;
		rw[i] = 1e9;
	}
	g = edges(8, 8, ru, rv, rw);
	int g8[8];
	ck_assert_int_eq(tp_gpusel(&(tp_gpusel_request){ .on = { n, g, NULL,
			8 }, .gpus_per_task = 1, .algo = TP_GPUSEL_MAGC }, g8,
			&c, &err), 0);
	ck_assert_int_eq(tp_gpusel(&(tp_gpusel_request){ .on = { n, g, NULL,
			8 }, .gpus_per_task = 1,
			.algo = TP_GPUSEL_LOCAL_RANK }, g8, &lr, &err), 0);
	ck_assert(c.max_congestion_ms <= lr.max_congestion_ms + 1e-9);
	tp_graph_destroy(g);
	tp_node_destroy(n);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("amd");
	TCase *tc = tcase_create("amd");
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, mi250x_from_hwloc);
	tcase_add_test(tc, mi250x_with_rocm_smi);
	tcase_add_test(tc, amd_device_classes);
	tcase_add_test(tc, rocm_smi_on_nvidia);
	tcase_add_test(tc, rocm_smi_parse);
	tcase_add_test(tc, rocm_smi_errors);
	tcase_add_test(tc, amd_smi_real);
	tcase_add_test(tc, amd_smi_order);
	tcase_add_test(tc, amd_smi_models);
	tcase_add_test(tc, amd_smi_on_nvidia);
	tcase_add_test(tc, amd_smi_errors);
	tcase_add_test(tc, xml_xgmi_peers);
	tcase_add_test(tc, magc_over_xgmi);
	suite_add_tcase(s, tc);
	return tp_test_run(s);
}
