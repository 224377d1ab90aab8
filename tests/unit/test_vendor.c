/* Unit tests: the GPU fabric of the live node from the vendor libraries and
 * tools (core/src/node/node_vendor*.c), against the stand-in libraries of
 * tests/standin (built by make into build/standin) answering from node
 * descriptions that match the example nodes dgx8, nvl4 and mi250x, and
 * against shell scripts standing in for nvidia-smi and rocm-smi. */
#include <errno.h>
#include <signal.h>
#include <fcntl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "testutil.h"
#include "util/util_internal.h"
#include "node/node_internal.h"
#include "node/node_vendor.h"

#ifndef TP_STANDIN_DIR
#define TP_STANDIN_DIR "build/standin"
#endif
#define STANDIN TP_STANDIN_DIR "/"
#define DESC TP_SOURCE_DIR "/tests/standin/"
#define NOLIB "/nonexistent/libtopoplace-test-none.so"

static tp_node *load(const char *name)
{
	tp_node *n = NULL;
	tp_error err;
	tp_error_clear(&err);
	char path[512];
	snprintf(path, sizeof path, TP_EXAMPLE_NODES "%s", name);
	ck_assert_msg(tp_node_load_xml(path, &n, &err) == 0, "%s", err.msg);
	return n;
}

/* Options that reach only the stand-ins: no real library, no tool. */
static struct tp_vendor_opts standin_opts(void)
{
	struct tp_vendor_opts o = { 0 };
	o.nvml = STANDIN "libnvidia-ml.so.1";
	o.amdsmi = STANDIN "libamd_smi.so";
	o.rocm_smi = NOLIB;
	o.no_tools = true;
	return o;
}

/* Whether the last add() was complete (may be kept for the boot). */
static bool complete;

/* Add the fabric with the stand-ins answering from description desc; the
 * return code, source in src, completeness in complete. */
static int add(tp_node *n, const struct tp_vendor_opts *o, const char *env,
	       const char *desc, char *src, size_t len)
{
	if (desc)
		setenv(env, desc, 1);
	else
		unsetenv(env);
	tp_error err;
	tp_error_clear(&err);
	complete = false;
	int rc = tp_node_add_vendor_links(n, o, src, len, &complete, &err);
	ck_assert_msg(rc == 0, "%s", err.msg);
	return rc;
}

/* The init and shutdown calls the stand-in saw, then forget them. */
static char *log_take(const char *path)
{
	static char buf[256];
	buf[0] = '\0';
	FILE *f = fopen(path, "r");
	if (f) {
		size_t k = fread(buf, 1, sizeof buf - 1, f);
		buf[k] = '\0';
		fclose(f);
	}
	unlink(path);
	return buf;
}

static char logpath[64];

static void log_setup(void)
{
	snprintf(logpath, sizeof logpath, "/tmp/tp-standin-log-%d", (int)getpid());
	unlink(logpath);
	setenv("TOPOPLACE_STANDIN_LOG", logpath, 1);
}

static void log_teardown(void)
{
	unlink(logpath);
	unsetenv("TOPOPLACE_STANDIN_LOG");
}

START_TEST(dgx8_nvml)
{
	tp_node *n = load("dgx8.xml");
	struct tp_vendor_opts o = standin_opts();
	char src[128];
	add(n, &o, "TOPOPLACE_STANDIN_NVML", DESC "dgx8.nvml", src, sizeof src);
	ck_assert_str_eq(src, "NVML");
	ck_assert(complete);
	ck_assert_str_eq(log_take(logpath), "init\nshutdown\n");
	for (int a = 0; a < 8; a++)
		for (int b = 0; b < 8; b++)
			ck_assert_int_eq(tp_node_nvlinks(n, a, b), a == b ? 0 : 12);
	ck_assert_int_eq(tp_node_has_nvswitch(n), 1);
	int links[8];
	ck_assert_int_eq(tp_node_gpu_route(n, 0, 7, links, 8), 2);
	ck_assert_str_eq(tp_node_link_name(n, links[0]), "GPU0 - NVSwitch");
	tp_node_destroy(n);
}
END_TEST

START_TEST(nvl4_nvml)
{
	tp_node *n = load("nvl4.xml");
	struct tp_vendor_opts o = standin_opts();
	char src[128];
	add(n, &o, "TOPOPLACE_STANDIN_NVML", DESC "nvl4.nvml", src, sizeof src);
	ck_assert_str_eq(src, "NVML");
	ck_assert_int_eq(tp_node_nvlinks(n, 0, 1), 4);
	ck_assert_int_eq(tp_node_nvlinks(n, 2, 3), 4);
	ck_assert_int_eq(tp_node_nvlinks(n, 0, 2), 0);
	ck_assert_int_eq(tp_node_nvlinks(n, 1, 3), 0);
	ck_assert_int_eq(tp_node_has_nvswitch(n), 0);
	ck_assert_int_eq(tp_node_gpu_path(n, 0, 1), TP_PATH_NVL);
	ck_assert_int_eq(tp_node_gpu_path(n, 0, 2), TP_PATH_SYS);
	ck_assert_str_eq(log_take(logpath), "init\nshutdown\n");
	tp_node_destroy(n);
}
END_TEST

/* The speed of each link by the version NVML gives: NVLink 1 (version 1)
 * at 20 GB/s, NVLink 5 (version 7) at 50; without the call (nvl4.nvml,
 * nvs4.nvml) at TP_NVLINK_BW. */
START_TEST(nvlink_versions)
{
	tp_node *n = load("nvl4.xml");
	struct tp_vendor_opts o = standin_opts();
	char src[128];
	int links[8];
	add(n, &o, "TOPOPLACE_STANDIN_NVML", DESC "nvl4-v1.nvml", src, sizeof src);
	ck_assert_str_eq(src, "NVML");
	ck_assert_int_eq(tp_node_nvlinks(n, 0, 1), 4);
	ck_assert_double_eq_tol(tp_node_gpu_bandwidth(n, 0, 1), 4 * 20, 1e-9);
	ck_assert_int_eq(tp_node_gpu_route(n, 2, 3, links, 8), 1);
	ck_assert_double_eq_tol(tp_node_link_bandwidth(n, links[0]), 4 * 20, 1e-9);
	ck_assert_str_eq(log_take(logpath), "init\nshutdown\n");
	add(n, &o, "TOPOPLACE_STANDIN_NVML", DESC "nvl4.nvml", src, sizeof src);
	ck_assert_double_eq_tol(tp_node_gpu_bandwidth(n, 0, 1), 4 * TP_NVLINK_BW, 1e-9);
	ck_assert_str_eq(log_take(logpath), "init\nshutdown\n");
	add(n, &o, "TOPOPLACE_STANDIN_NVML", DESC "nvs4-v7.nvml", src, sizeof src);
	ck_assert_int_eq(tp_node_has_nvswitch(n), 1);
	ck_assert_int_eq(tp_node_nvlinks(n, 1, 2), 4);
	ck_assert_double_eq_tol(tp_node_gpu_bandwidth(n, 1, 2), 4 * 50, 1e-9);
	ck_assert_int_eq(tp_node_gpu_route(n, 1, 2, links, 8), 2);
	ck_assert_double_eq_tol(tp_node_link_bandwidth(n, links[0]), 4 * 50, 1e-9);
	ck_assert_str_eq(log_take(logpath), "init\nshutdown\n");
	tp_node_destroy(n);
}
END_TEST

/* A partitioned node (Tuolumne's MI300A in CPX mode): the libraries are
 * not asked (they list each partition under its device's address); the
 * links hwloc saw stay. */
START_TEST(partitions_left_to_hwloc)
{
	tp_node *n = NULL;
	tp_error err;
	ck_assert_msg(tp_node_load_xml(TP_TEST_NODES "real/tuo.CPX.xml", &n, &err) == 0,
		      "%s", err.msg);
	struct tp_vendor_opts o = standin_opts();
	char src[128];
	add(n, &o, "TOPOPLACE_STANDIN_AMDSMI", DESC "mi250x.amdsmi", src, sizeof src);
	ck_assert_str_eq(src, "");
	ck_assert_str_eq(log_take(logpath), "");
	ck_assert_int_eq(tp_node_ngpus(n), 24);
	ck_assert_int_eq(tp_node_xgmi_links(n, 0, 6), 1);
	tp_node_destroy(n);
}
END_TEST

/* 4 GPUs with 4 switch lanes each: the counts alone say point to point,
 * the switches NVML saw say NVSwitch. */
START_TEST(nvswitch_small)
{
	tp_node *n = load("nvl4.xml");
	struct tp_vendor_opts o = standin_opts();
	char src[128];
	add(n, &o, "TOPOPLACE_STANDIN_NVML", DESC "nvs4.nvml", src, sizeof src);
	ck_assert_str_eq(src, "NVML");
	for (int a = 0; a < 4; a++)
		for (int b = 0; b < 4; b++)
			ck_assert_int_eq(tp_node_nvlinks(n, a, b), a == b ? 0 : 4);
	ck_assert_int_eq(tp_node_has_nvswitch(n), 1);
	int links[8];
	ck_assert_int_eq(tp_node_gpu_route(n, 1, 2, links, 8), 2);
	ck_assert_str_eq(tp_node_link_name(n, links[0]), "GPU1 - NVSwitch");
	ck_assert(tp_node_link_bandwidth(n, links[0]) == 4 * TP_NVLINK_BW);
	/* the same counts set plainly: point to point, the mark is gone */
	int c[16];
	for (int i = 0; i < 16; i++)
		c[i] = i % 5 ? 4 : 0;
	tp_error err;
	ck_assert_int_eq(tp_node_set_nvlinks(n, c, 4, "test", &err), 0);
	ck_assert_int_eq(tp_node_has_nvswitch(n), 0);
	ck_assert_int_eq(tp_node_gpu_route(n, 1, 2, links, 8), 1);
	/* and marked again */
	ck_assert_int_eq(tp_node_set_nvswitch(n, c, 4, "test", &err), 0);
	ck_assert_int_eq(tp_node_has_nvswitch(n), 1);
	/* a pair without lanes cannot be switched */
	c[1] = c[4] = 0;
	ck_assert_int_eq(tp_node_set_nvswitch(n, c, 4, "test", &err), 0);
	ck_assert_int_eq(tp_node_has_nvswitch(n), 0);
	tp_node_destroy(n);
}
END_TEST

/* The xGMI graph of mi250x (test_amd.c). */
static void check_mi250x(const tp_node *n)
{
	static const int four[][2] = { { 0, 1 }, { 2, 3 }, { 4, 5 }, { 6, 7 } };
	static const int two[][2] = { { 0, 6 }, { 2, 4 } };
	static const int one[][2] = { { 0, 2 }, { 1, 3 }, { 1, 5 },
				      { 3, 7 }, { 4, 6 }, { 5, 7 } };
	int want[8][8] = { { 0 } };
	for (int k = 0; k < 4; k++)
		want[four[k][0]][four[k][1]] = 4;
	for (int k = 0; k < 2; k++)
		want[two[k][0]][two[k][1]] = 2;
	for (int k = 0; k < 6; k++)
		want[one[k][0]][one[k][1]] = 1;
	for (int a = 0; a < 8; a++)
		for (int b = a + 1; b < 8; b++) {
			ck_assert_msg(tp_node_xgmi_links(n, a, b) == want[a][b],
				      "GPU%d-GPU%d: %d xGMI links, expected %d", a, b,
				      tp_node_xgmi_links(n, a, b), want[a][b]);
			ck_assert_int_eq(tp_node_xgmi_links(n, b, a), want[a][b]);
		}
	ck_assert_int_eq(tp_node_fabric(n), TP_FABRIC_XGMI);
	ck_assert_int_eq(tp_node_gpu_path(n, 0, 1), TP_PATH_XGMI);
	ck_assert_int_eq(tp_node_gpu_path(n, 0, 3), TP_PATH_XHOP);
}

START_TEST(mi250x_amdsmi)
{
	tp_node *n = load("mi250x.xml");
	struct tp_vendor_opts o = standin_opts();
	char src[128];
	add(n, &o, "TOPOPLACE_STANDIN_AMDSMI", DESC "mi250x.amdsmi", src, sizeof src);
	ck_assert_str_eq(src, "AMD SMI");
	ck_assert_str_eq(log_take(logpath), "init\nshutdown\n");
	check_mi250x(n);
	tp_node_destroy(n);
}
END_TEST

/* The bandwidth AMD SMI reports is what the links carry: 64000 MB/s a
 * link, 4 links between the GCDs of a package: 256 GB/s. */
START_TEST(amdsmi_reported_bandwidth)
{
	tp_node *n = load("mi250x.xml");
	struct tp_vendor_opts o = standin_opts();
	char src[128];
	add(n, &o, "TOPOPLACE_STANDIN_AMDSMI", DESC "mi250x-64.amdsmi", src, sizeof src);
	ck_assert_str_eq(src, "AMD SMI");
	ck_assert_int_eq(tp_node_xgmi_links(n, 0, 1), 4);
	ck_assert_double_eq_tol(tp_node_gpu_bandwidth(n, 0, 1), 4 * 64, 1e-9);
	ck_assert_int_eq(tp_node_xgmi_links(n, 0, 2), 1);
	ck_assert_double_eq_tol(tp_node_gpu_bandwidth(n, 0, 2), 64, 1e-9);
	ck_assert_str_eq(log_take(logpath), "init\nshutdown\n");
	tp_node_destroy(n);
}
END_TEST

START_TEST(mi250x_rocm_smi)
{
	tp_node *n = load("mi250x.xml");
	struct tp_vendor_opts o = standin_opts();
	o.amdsmi = NOLIB;
	o.rocm_smi = STANDIN "librocm_smi64.so.1";
	char src[128];
	add(n, &o, "TOPOPLACE_STANDIN_AMDSMI", DESC "mi250x.amdsmi", src, sizeof src);
	ck_assert_str_eq(src, "ROCm SMI");
	ck_assert_str_eq(log_take(logpath), "init\nshutdown\n");
	check_mi250x(n);
	tp_node_destroy(n);
}
END_TEST

/* No library, or a library without a driver behind it: nothing answered,
 * not an error; the model keeps what it had. */
START_TEST(library_absent)
{
	tp_node *n = load("nvl4.xml");
	struct tp_vendor_opts o = standin_opts();
	o.nvml = NOLIB;
	char src[128] = "stale";
	add(n, &o, "TOPOPLACE_STANDIN_NVML", DESC "nvl4.nvml", src, sizeof src);
	ck_assert_str_eq(src, "");
	ck_assert_int_eq(tp_node_nvlinks(n, 0, 1), 0);
	ck_assert_str_eq(log_take(logpath), "");
	/* the stand-in without a description: nvmlInit_v2 fails, a driver
	 * not ready: asked again later */
	o = standin_opts();
	add(n, &o, "TOPOPLACE_STANDIN_NVML", NULL, src, sizeof src);
	ck_assert_str_eq(src, "NVML not ready");
	ck_assert(!complete);
	ck_assert_int_eq(tp_node_nvlinks(n, 0, 1), 0);
	ck_assert_str_eq(log_take(logpath), "init\n");
	/* AMD: neither library */
	tp_node *m = load("mi250x.xml");
	o.amdsmi = NOLIB;
	add(m, &o, "TOPOPLACE_STANDIN_AMDSMI", DESC "mi250x.amdsmi", src, sizeof src);
	ck_assert_str_eq(src, "");
	ck_assert(complete);     /* nothing installed: nothing to wait for */
	ck_assert_int_eq(tp_node_xgmi_links(m, 0, 6), 1);    /* hwloc's peers */
	/* no GPUs at all: nothing is asked */
	tp_node *c = load("cpu2.xml");
	o = standin_opts();
	add(c, &o, "TOPOPLACE_STANDIN_NVML", DESC "nvl4.nvml", src, sizeof src);
	ck_assert_str_eq(src, "");
	ck_assert(complete);
	ck_assert_str_eq(log_take(logpath), "");
	/* no source buffer, no options */
	tp_error err;
	ck_assert_int_eq(tp_node_add_vendor_links(c, NULL, NULL, 0, NULL, &err), 0);
	ck_assert_int_eq(tp_node_add_vendor_links(NULL, &o, src, sizeof src, NULL, &err),
			 TP_EINVAL);
	tp_node_destroy(c);
	tp_node_destroy(m);
	tp_node_destroy(n);
}
END_TEST

/* NVML and the model disagree: nothing is set, source says why, rc 0. */
START_TEST(model_mismatch)
{
	tp_node *n = load("nvl4.xml");
	struct tp_vendor_opts o = standin_opts();
	char src[128];
	add(n, &o, "TOPOPLACE_STANDIN_NVML", DESC "stranger.nvml", src, sizeof src);
	ck_assert_str_eq(src, "NVML: GPU 0000:3b:00.0 is not in the model");
	ck_assert(!complete);    /* a failed answer is not kept */
	ck_assert_int_eq(tp_node_nvlinks(n, 0, 1), 0);
	ck_assert_str_eq(log_take(logpath), "init\nshutdown\n");
	add(n, &o, "TOPOPLACE_STANDIN_NVML", DESC "missing.nvml", src, sizeof src);
	ck_assert_str_eq(src, "NVML: GPU 0000:94:00.0 of the model is not listed");
	ck_assert_int_eq(tp_node_nvlinks(n, 0, 1), 0);
	/* the wrong vendor's description for the AMD node */
	tp_node *m = load("mi250x.xml");
	add(m, &o, "TOPOPLACE_STANDIN_AMDSMI", DESC "nvl4.nvml", src, sizeof src);
	ck_assert_str_eq(src, "AMD SMI: GPU 0000:13:00.0 is not in the model");
	ck_assert_int_eq(tp_node_xgmi_links(m, 0, 6), 1);    /* hwloc's, unchanged */
	/* a short source buffer is cut, not overrun */
	char tiny[8];
	add(n, &o, "TOPOPLACE_STANDIN_NVML", DESC "stranger.nvml", tiny, sizeof tiny);
	ck_assert_str_eq(tiny, "NVML: G");
	tp_node_destroy(m);
	tp_node_destroy(n);
}
END_TEST

/* ---- the tools ---- */

static char tooldir[64];

static void tool_setup(void)
{
	log_setup();
	snprintf(tooldir, sizeof tooldir, "/tmp/tp-tools-XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(tooldir));
}

static void tool_teardown(void)
{
	char cmd[128];
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", tooldir);
	ck_assert_int_eq(system(cmd), 0);
	log_teardown();
}

/* An executable script NAME in the tool folder. */
static void script(const char *name, const char *body)
{
	char path[128];
	snprintf(path, sizeof path, "%s/%s", tooldir, name);
	FILE *f = fopen(path, "w");
	ck_assert_ptr_nonnull(f);
	fprintf(f, "#!/bin/sh\n%s\n", body);
	fclose(f);
	ck_assert_int_eq(chmod(path, 0755), 0);
}

static struct tp_vendor_opts tool_opts(void)
{
	struct tp_vendor_opts o = standin_opts();
	o.nvml = NOLIB;
	o.amdsmi = NOLIB;
	o.no_tools = false;
	o.tool_dir = tooldir;
	o.tool_timeout_ms = 1000;
	return o;
}

START_TEST(tool_nvidia_smi)
{
	tp_node *n = load("nvl4.xml");
	struct tp_vendor_opts o = tool_opts();
	/* the arguments are checked: topo -m, nothing else */
	script("nvidia-smi", "[ \"$1 $2 $#\" = 'topo -m 2' ] || exit 3\n"
			     "[ -z \"$HOME$TOPOPLACE_STANDIN_LOG\" ] || exit 4\n"
			     "exec cat '" DESC "nvl4-topo.txt'");
	char src[128];
	add(n, &o, "TOPOPLACE_STANDIN_NVML", NULL, src, sizeof src);
	ck_assert_str_eq(src, "nvidia-smi");
	ck_assert(complete);
	ck_assert_int_eq(tp_node_nvlinks(n, 0, 1), 4);
	ck_assert_int_eq(tp_node_nvlinks(n, 2, 3), 4);
	ck_assert_int_eq(tp_node_nvlinks(n, 1, 2), 0);
	/* no_tools: not run */
	tp_node_destroy(n);
	n = load("nvl4.xml");
	o.no_tools = true;
	add(n, &o, "TOPOPLACE_STANDIN_NVML", NULL, src, sizeof src);
	ck_assert_str_eq(src, "");
	ck_assert_int_eq(tp_node_nvlinks(n, 0, 1), 0);
	/* not in the folders: not found ($PATH is not searched) */
	o.no_tools = false;
	o.tool_dir = "/nonexistent:relative/dir";
	add(n, &o, "TOPOPLACE_STANDIN_NVML", NULL, src, sizeof src);
	ck_assert_str_eq(src, "");
	tp_node_destroy(n);
}
END_TEST

START_TEST(tool_rejected)
{
	tp_node *n = load("nvl4.xml");
	struct tp_vendor_opts o = tool_opts();
	script("nvidia-smi", "echo 'NVIDIA-SMI has failed because it could not "
			     "communicate with the NVIDIA driver.'");
	char src[256];
	add(n, &o, "TOPOPLACE_STANDIN_NVML", NULL, src, sizeof src);
	ck_assert_msg(!strncmp(src, "nvidia-smi: not read: ", 22), "%s", src);
	ck_assert(!complete);
	ck_assert_int_eq(tp_node_nvlinks(n, 0, 1), 0);
	script("nvidia-smi", "echo half; exit 1");
	add(n, &o, "TOPOPLACE_STANDIN_NVML", NULL, src, sizeof src);
	ck_assert_str_eq(src, "nvidia-smi: failed");
	ck_assert(!complete);
	/* more than 1 MiB */
	script("nvidia-smi", "exec yes GPU0");
	add(n, &o, "TOPOPLACE_STANDIN_NVML", NULL, src, sizeof src);
	ck_assert_str_eq(src, "nvidia-smi: more than 1 MiB of output");
	tp_node_destroy(n);
}
END_TEST

/* The state of process pid ('Z', 'S', ...), or 0 when it is gone. */
static char proc_state(long pid)
{
	char path[64], buf[256];
	snprintf(path, sizeof path, "/proc/%ld/stat", pid);
	FILE *f = fopen(path, "r");
	if (!f)
		return 0;
	size_t k = fread(buf, 1, sizeof buf - 1, f);
	fclose(f);
	buf[k] = '\0';
	char *p = strrchr(buf, ')');
	return p && p[1] ? p[2] : 0;
}

/* NVML installed but not started, then the tool: its answer completes
 * the model; its failure is said with NVML's. */
START_TEST(tool_after_not_ready)
{
	tp_node *n = load("nvl4.xml");
	struct tp_vendor_opts o = tool_opts();
	o.nvml = STANDIN "libnvidia-ml.so.1";    /* no description: no start */
	script("nvidia-smi", "exit 9");
	char src[256];
	add(n, &o, "TOPOPLACE_STANDIN_NVML", NULL, src, sizeof src);
	ck_assert_str_eq(src, "NVML not ready, nvidia-smi: failed");
	ck_assert(!complete);
	ck_assert_int_eq(tp_node_nvlinks(n, 0, 1), 0);
	script("nvidia-smi", "exec cat '" DESC "nvl4-topo.txt'");
	add(n, &o, "TOPOPLACE_STANDIN_NVML", NULL, src, sizeof src);
	ck_assert_str_eq(src, "nvidia-smi");
	ck_assert(complete);
	ck_assert_int_eq(tp_node_nvlinks(n, 0, 1), 4);
	tp_node_destroy(n);
}
END_TEST

START_TEST(tool_hangs)
{
	tp_node *n = load("nvl4.xml");
	struct tp_vendor_opts o = tool_opts();
	char pidfile[128];
	snprintf(pidfile, sizeof pidfile, "%s/sleep.pid", tooldir);
	char body[512];
	snprintf(body, sizeof body, "echo GPU0\nsleep 100 &\necho $! > '%s'\nwait",
		 pidfile);
	script("nvidia-smi", body);
	char src[128];
	double t0 = tp__now_ms();
	add(n, &o, "TOPOPLACE_STANDIN_NVML", NULL, src, sizeof src);
	double took = tp__now_ms() - t0;
	ck_assert_str_eq(src, "nvidia-smi: timed out");
	ck_assert(!complete);
	ck_assert_msg(took >= 900 && took < 5000, "took %.0f ms", took);
	ck_assert_int_eq(tp_node_nvlinks(n, 0, 1), 0);
	/* no child left, reaped or not */
	errno = 0;
	ck_assert_int_eq(waitpid(-1, NULL, WNOHANG), -1);
	ck_assert_int_eq(errno, ECHILD);
	/* and the tool's own child was killed with it (its zombie, if any,
	 * is init's) */
	FILE *f = fopen(pidfile, "r");
	ck_assert_ptr_nonnull(f);
	long pid = 0;
	ck_assert_int_eq(fscanf(f, "%ld", &pid), 1);
	fclose(f);
	char st = 'S';
	for (int i = 0; i < 200 && st && st != 'Z' && st != 'X'; i++) {
		st = proc_state(pid);
		usleep(10000);
	}
	ck_assert_msg(!st || st == 'Z' || st == 'X', "sleep %ld is '%c'", pid, st);
	tp_node_destroy(n);
}
END_TEST

/* AMD: amd-smi first; without it rocm-smi. */
START_TEST(tool_rocm_smi)
{
	tp_node *n = load("mi250x.xml");
	struct tp_vendor_opts o = tool_opts();
	o.rocm_smi = NOLIB;
	script("rocm-smi", "[ \"$*\" = '--showtopo --shownodesbw' ] || exit 3\n"
			   "exec cat '" TP_EXAMPLE_NODES "mi250x.links'");
	char src[128];
	add(n, &o, "TOPOPLACE_STANDIN_AMDSMI", NULL, src, sizeof src);
	ck_assert_str_eq(src, "rocm-smi");
	check_mi250x(n);
	/* an amd-smi that fails: rocm-smi still answers */
	script("amd-smi", "exit 1");
	add(n, &o, "TOPOPLACE_STANDIN_AMDSMI", NULL, src, sizeof src);
	ck_assert_str_eq(src, "rocm-smi");
	tp_node_destroy(n);
}
END_TEST

/* amd-smi topology's own text, as a real MI300X node prints it. */
START_TEST(tool_amd_smi)
{
	tp_node *n = NULL;
	tp_error err;
	tp_error_clear(&err);
	ck_assert_int_eq(tp_node_load_xml(TP_TEST_DATA "/nodes/real/mi300x.xml",
					  &n, &err), 0);
	struct tp_vendor_opts o = tool_opts();
	o.rocm_smi = NOLIB;
	script("amd-smi", "[ \"$*\" = 'topology' ] || exit 3\n"
			  "exec cat '" TP_TEST_DATA "/nodes/real/mi300x-amd-smi-topology.txt'");
	char src[128];
	add(n, &o, "TOPOPLACE_STANDIN_AMDSMI", NULL, src, sizeof src);
	ck_assert_str_eq(src, "amd-smi");
	for (int a = 0; a < 8; a++)
		for (int b = 0; b < 8; b++)
			ck_assert_int_eq(tp_node_xgmi_links(n, a, b), a != b);
	tp_node_destroy(n);
}
END_TEST

/* ---- closing the child's descriptors ---- */

/* In a child: descriptors 3 and up opened (some far up, one of them a
 * directory), tp_vendor_close_from(3, skip), then which of them are still
 * open, and whether 0-2 are; the exit status says it (0: as wanted). */
static int close_child(unsigned skip)
{
	pid_t pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		int fds[6] = { open("/dev/null", O_RDONLY), open("/", O_RDONLY),
			       dup2(0, 50), dup2(1, 200), dup2(2, 1000), -1 };
		struct rlimit rl;
		if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur > 2000 &&
		    rl.rlim_cur != RLIM_INFINITY)
			fds[5] = dup2(0, (int)rl.rlim_cur - 1);   /* the last one */
		for (int i = 0; i < 5; i++)
			if (fds[i] < 3)
				_exit(2);
		tp_vendor_close_from(3, skip);
		for (int i = 0; i < 6; i++)
			if (fds[i] >= 0 && fcntl(fds[i], F_GETFD) != -1)
				_exit(10 + i);
		for (int fd = 0; fd < 3; fd++)
			if (fcntl(fd, F_GETFD) == -1)
				_exit(20 + fd);
		_exit(0);
	}
	int st = 0;
	ck_assert_int_eq(waitpid(pid, &st, 0), pid);
	ck_assert(WIFEXITED(st));
	return WEXITSTATUS(st);
}

START_TEST(close_descriptors)
{
	/* close_range where the kernel has it (5.9 and later) */
	ck_assert_int_eq(close_child(0), 0);
	/* as on RHEL 8's kernel: what /proc/self/fd lists */
	ck_assert_int_eq(close_child(TP_CLOSE_NO_RANGE), 0);
	/* without /proc either: every descriptor up to the limit */
	ck_assert_int_eq(close_child(TP_CLOSE_NO_RANGE | TP_CLOSE_NO_PROC), 0);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("vendor");
	TCase *tc = tcase_create("libraries");
	tcase_add_checked_fixture(tc, log_setup, log_teardown);
	tcase_add_test(tc, dgx8_nvml);
	tcase_add_test(tc, nvl4_nvml);
	tcase_add_test(tc, nvswitch_small);
	tcase_add_test(tc, nvlink_versions);
	tcase_add_test(tc, amdsmi_reported_bandwidth);
	tcase_add_test(tc, partitions_left_to_hwloc);
	tcase_add_test(tc, mi250x_amdsmi);
	tcase_add_test(tc, mi250x_rocm_smi);
	tcase_add_test(tc, library_absent);
	tcase_add_test(tc, model_mismatch);
	suite_add_tcase(s, tc);
	TCase *tt = tcase_create("tools");
	tcase_add_checked_fixture(tt, tool_setup, tool_teardown);
	tcase_set_timeout(tt, 30);
	tcase_add_test(tt, tool_nvidia_smi);
	tcase_add_test(tt, tool_rejected);
	tcase_add_test(tt, tool_hangs);
	tcase_add_test(tt, tool_after_not_ready);
	tcase_add_test(tt, tool_rocm_smi);
	tcase_add_test(tt, tool_amd_smi);
	tcase_add_test(tt, close_descriptors);
	suite_add_tcase(s, tt);
	return tp_test_run(s);
}
