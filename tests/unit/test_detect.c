/* The node's own model: detection, the root-owned cache and what it
 * trusts, and the model written back as one hwloc XML. */
#include <fcntl.h>
#include <sys/stat.h>

#include "testutil.h"
#include "util/util_internal.h"
#include "node/node_internal.h"

/* A fresh cache directory, root's and 0755 like the plugin's. */
static void fresh_dir(char *dir, size_t len)
{
	snprintf(dir, len, "/tmp/tp-cache-XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(dir));
	ck_assert_int_eq(chmod(dir, 0755), 0);
}

static void remove_dir(const char *dir)
{
	char cmd[512];
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
	ck_assert_int_eq(system(cmd), 0);
}

static tp_node *detect(const char *dir, unsigned flags)
{
	tp_node *n = NULL;
	tp_error err;
	tp_error_clear(&err);
	ck_assert_msg(tp_node_detect(dir, flags, &n, &err) == 0, "%s", err.msg);
	return n;
}

static bool cached(const tp_node *n)
{
	return strstr(tp_node_source(n), "(cached in ") != NULL;
}

/* The example DGX as "this machine": hwloc reads HWLOC_XMLFILE instead of
 * /sys, as it would on such a node. */
static void pretend(const char *model)
{
	char path[512];
	tp_test_node_path(path, sizeof path, model);
	ck_assert_int_eq(setenv("HWLOC_XMLFILE", path, 1), 0);
}

START_TEST(live_without_cache)
{
	pretend("dgx8.xml");
	tp_node *n = detect(NULL, 0);
	ck_assert_int_eq(tp_node_ngpus(n), 8);
	ck_assert_int_eq(tp_node_ncores(n), 16);
	ck_assert_str_eq(tp_node_source(n), "this node (hwloc)");
	tp_node_destroy(n);
	unsetenv("HWLOC_XMLFILE");
}
END_TEST

START_TEST(cache_round_trip)
{
	if (geteuid() != 0)
		return;   /* only root writes a cache anyone trusts */
	char dir[64], path[512];
	fresh_dir(dir, sizeof dir);
	pretend("dgx8.xml");
	/* PREPARE: detected and stored, returned the first time */
	tp_node *n = detect(dir, TP_NODE_DETECT_PREPARE);
	ck_assert_ptr_nonnull(n);
	ck_assert(!cached(n));
	tp_node_destroy(n);
	ck_assert_int_eq(tp__node_cache_path(dir, path, sizeof path), 0);
	struct stat st;
	ck_assert_int_eq(stat(path, &st), 0);
	ck_assert_int_eq((int)st.st_uid, 0);
	ck_assert_int_eq((int)(st.st_mode & 0777), 0644);
	/* then nothing to do */
	ck_assert_ptr_null(detect(dir, TP_NODE_DETECT_PREPARE));
	/* and a plain call reads the cache: the same model */
	n = detect(dir, 0);
	ck_assert(cached(n));
	ck_assert_int_eq(tp_node_ngpus(n), 8);
	ck_assert_int_eq(tp_node_ncores(n), 16);
	ck_assert_int_eq(tp_node_npackages(n), 2);
	ck_assert_str_eq(tp_node_gpu_busid(n, 7), "0000:c4:00.0");
	tp_node_destroy(n);
	/* another machine to hwloc is another file; the host's old one goes */
	pretend("nvl4.xml");
	char path2[512];
	ck_assert_int_eq(tp__node_cache_path(dir, path2, sizeof path2), 0);
	ck_assert_str_ne(path, path2);
	n = detect(dir, TP_NODE_DETECT_STORE);
	ck_assert_int_eq(tp_node_ngpus(n), 4);
	tp_node_destroy(n);
	ck_assert_int_eq(access(path2, R_OK), 0);
	ck_assert_int_ne(access(path, F_OK), 0);
	unsetenv("HWLOC_XMLFILE");
	remove_dir(dir);
}
END_TEST

/* Write text as the cache file of this machine in dir. */
static void plant(const char *dir, const char *text)
{
	char path[512];
	ck_assert_int_eq(tp__node_cache_path(dir, path, sizeof path), 0);
	FILE *f = fopen(path, "w");
	ck_assert_ptr_nonnull(f);
	fputs(text, f);
	fclose(f);
	ck_assert_int_eq(chmod(path, 0644), 0);
}

static char *model_xml(const char *name)
{
	char path[512], *buf;
	size_t len;
	tp_error err;
	tp_test_node_path(path, sizeof path, name);
	ck_assert_int_eq(tp__read_file(path, 1 << 24, "xml", &buf, &len, &err), 0);
	return buf;
}

START_TEST(cache_trust)
{
	if (geteuid() != 0)
		return;
	char dir[64], path[512];
	fresh_dir(dir, sizeof dir);
	pretend("nvl4.xml");
	ck_assert_int_eq(tp__node_cache_path(dir, path, sizeof path), 0);
	/* a planted model of another node, in a trusted place: read */
	char *other = model_xml("dgx8.xml");
	plant(dir, other);
	tp_node *n = detect(dir, 0);
	ck_assert(cached(n));
	ck_assert_int_eq(tp_node_ngpus(n), 8);
	tp_node_destroy(n);
	/* the same file writable by others: not trusted, detected anew */
	ck_assert_int_eq(chmod(path, 0666), 0);
	n = detect(dir, 0);
	ck_assert(!cached(n));
	ck_assert_int_eq(tp_node_ngpus(n), 4);
	tp_node_destroy(n);
	/* owned by someone else */
	ck_assert_int_eq(chmod(path, 0644), 0);
	ck_assert_int_eq(chown(path, 65534, 65534), 0);
	n = detect(dir, 0);
	ck_assert(!cached(n));
	tp_node_destroy(n);
	ck_assert_int_eq(chown(path, 0, 0), 0);
	/* a directory others may write */
	ck_assert_int_eq(chmod(dir, 01777), 0);
	n = detect(dir, 0);
	ck_assert(!cached(n));
	tp_node_destroy(n);
	/* ... and nothing is stored there */
	unlink(path);
	n = detect(dir, TP_NODE_DETECT_STORE);
	tp_node_destroy(n);
	ck_assert_int_ne(access(path, F_OK), 0);
	ck_assert_int_eq(chmod(dir, 0755), 0);
	/* a link is not followed */
	char target[600];
	snprintf(target, sizeof target, "%s/elsewhere.xml", dir);
	FILE *f = fopen(target, "w");
	fputs(other, f);
	fclose(f);
	ck_assert_int_eq(symlink(target, path), 0);
	n = detect(dir, 0);
	ck_assert(!cached(n));
	ck_assert_int_eq(tp_node_ngpus(n), 4);
	tp_node_destroy(n);
	/* a cache hwloc cannot read is replaced when storing */
	unlink(path);
	plant(dir, "<topology version=\"2.0\">broken");
	n = detect(dir, TP_NODE_DETECT_STORE);
	ck_assert(!cached(n));
	tp_node_destroy(n);
	n = detect(dir, 0);
	ck_assert(cached(n));
	ck_assert_int_eq(tp_node_ngpus(n), 4);
	tp_node_destroy(n);
	free(other);
	unsetenv("HWLOC_XMLFILE");
	remove_dir(dir);
}
END_TEST

/* ---- only complete answers are kept for the boot ---- */

#ifndef TP_STANDIN_DIR
#define TP_STANDIN_DIR "build/standin"
#endif
#define STANDIN_NVML TP_STANDIN_DIR "/libnvidia-ml.so.1"
#define DESC TP_SOURCE_DIR "/tests/standin/"

static tp_node *detect_with(const char *dir, unsigned flags,
			    const struct tp_vendor_opts *o)
{
	tp_node *n = NULL;
	tp_error err;
	tp_error_clear(&err);
	ck_assert_msg(tp__node_detect_opts(dir, flags, o, &n, &err) == 0, "%s",
		      err.msg);
	return n;
}

/* The source after "cached in PATH": "hwloc, NVML", or the whole source. */
static const char *answered(const tp_node *n)
{
	static char buf[512];
	const char *s = tp_node_source(n), *p = strstr(s, ".xml: ");
	snprintf(buf, sizeof buf, "%s", p ? p + 6 : s);
	size_t k = strlen(buf);
	if (p && k && buf[k - 1] == ')')
		buf[k - 1] = '\0';
	return buf;
}

static char *file_text(const char *path)
{
	char *buf;
	size_t len;
	tp_error err;
	ck_assert_int_eq(tp__read_file(path, 1 << 24, "cache", &buf, &len, &err), 0);
	return buf;
}

/* The init calls the stand-in NVML saw since the last call. */
static int nvml_inits(const char *log)
{
	int k = 0;
	FILE *f = fopen(log, "r");
	char line[64];
	while (f && fgets(line, sizeof line, f))
		k += !strcmp(line, "init\n");
	if (f)
		fclose(f);
	unlink(log);
	return k;
}

/* An NVML that does not start (the stand-in without a description) and an
 * nvidia-smi that fails, then one that hangs past its limit: the model is
 * used, hwloc's part cached as partial, and every step asks the vendor
 * again, until NVML answers: then the complete model is stored and NVML is
 * not asked any more. */
START_TEST(cache_partial)
{
	if (geteuid() != 0)
		return;   /* only root writes a cache anyone trusts */
	char dir[64], path[512], tools[64], log[64], tool[128];
	fresh_dir(dir, sizeof dir);
	snprintf(tools, sizeof tools, "/tmp/tp-tools-XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(tools));
	snprintf(tool, sizeof tool, "%s/nvidia-smi", tools);
	snprintf(log, sizeof log, "/tmp/tp-standin-log-%d", (int)getpid());
	setenv("TOPOPLACE_STANDIN_LOG", log, 1);
	unsetenv("TOPOPLACE_STANDIN_NVML");
	pretend("nvl4.xml");
	ck_assert_int_eq(tp__node_cache_path(dir, path, sizeof path), 0);
	struct tp_vendor_opts o = { 0 };
	o.nvml = STANDIN_NVML;
	o.amdsmi = o.rocm_smi = "/nonexistent/libtopoplace-test-none.so";
	o.tool_dir = tools;
	o.tool_timeout_ms = 300;
	FILE *f = fopen(tool, "w");
	ck_assert_ptr_nonnull(f);
	fputs("#!/bin/sh\nexit 1\n", f);
	fclose(f);
	ck_assert_int_eq(chmod(tool, 0755), 0);

	tp_node *n = detect_with(dir, TP_NODE_DETECT_STORE, &o);
	ck_assert_str_eq(tp_node_source(n),
			 "this node (hwloc; NVML not ready, nvidia-smi: failed)");
	ck_assert_int_eq(tp_node_nvlinks(n, 0, 1), 0);
	tp_node_destroy(n);
	ck_assert_int_eq(nvml_inits(log), 1);
	char *text = file_text(path);
	ck_assert_ptr_nonnull(strstr(text, "<!-- topoplace node cache: partial; "
				     "hwloc; NVML not ready, nvidia-smi: failed -->"));
	free(text);
	/* PREPARE does not take a partial cache for done: NVML asked again */
	n = detect_with(dir, TP_NODE_DETECT_PREPARE, &o);
	ck_assert_ptr_nonnull(n);
	ck_assert(cached(n));
	ck_assert_str_eq(answered(n), "hwloc; NVML not ready, nvidia-smi: failed");
	tp_node_destroy(n);
	ck_assert_int_eq(nvml_inits(log), 1);
	/* a tool past its time limit: the same */
	f = fopen(tool, "w");
	fputs("#!/bin/sh\nexec sleep 30\n", f);
	fclose(f);
	n = detect_with(dir, 0, &o);
	ck_assert_str_eq(answered(n), "hwloc; NVML not ready, nvidia-smi: timed out");
	tp_node_destroy(n);
	ck_assert_int_eq(nvml_inits(log), 1);
	/* NVML answers: used, and stored for the boot */
	setenv("TOPOPLACE_STANDIN_NVML", DESC "nvl4.nvml", 1);
	n = detect_with(dir, TP_NODE_DETECT_PREPARE, &o);
	ck_assert_str_eq(answered(n), "hwloc, NVML");
	ck_assert_int_eq(tp_node_nvlinks(n, 0, 1), 4);
	tp_node_destroy(n);
	ck_assert_int_eq(nvml_inits(log), 1);
	text = file_text(path);
	ck_assert_ptr_nonnull(strstr(text, "<!-- topoplace node cache: complete; "
				     "hwloc, NVML -->"));
	free(text);
	/* from now on the cache alone: NVML is not asked, the links stay */
	unsetenv("TOPOPLACE_STANDIN_NVML");
	ck_assert_ptr_null(detect_with(dir, TP_NODE_DETECT_PREPARE, &o));
	n = detect_with(dir, 0, &o);
	ck_assert(cached(n));
	ck_assert_str_eq(answered(n), "hwloc, NVML");
	ck_assert_int_eq(tp_node_nvlinks(n, 0, 1), 4);
	ck_assert_int_eq(tp_node_nvlinks(n, 0, 2), 0);
	tp_node_destroy(n);
	ck_assert_int_eq(nvml_inits(log), 0);
	/* a record whose free text holds "--" stays one comment */
	unlink(path);
	f = fopen(tool, "w");
	fputs("#!/bin/sh\necho 'GPU0 --> -- x'\n", f);
	fclose(f);
	n = detect_with(dir, TP_NODE_DETECT_STORE, &o);
	ck_assert(!cached(n));
	tp_node_destroy(n);
	n = detect_with(dir, 0, &o);
	ck_assert_msg(cached(n), "%s", tp_node_source(n));
	ck_assert_ptr_null(strstr(answered(n), "--"));
	tp_node_destroy(n);
	nvml_inits(log);
	/* planted records: one that names nothing (partial: NVML asked
	 * again), an unknown state (taken as complete), an unterminated
	 * comment (a broken file: detected anew, NVML asked) */
	static const struct { const char *rec; bool cached; int inits; } recs[] = {
		{ "<!-- topoplace node cache: partial; -->\n", true, 1 },
		{ "<!-- topoplace node cache: maybe; hwloc -->\n", true, 0 },
		{ "<!-- topoplace node cache: partial; hwloc\n", false, 1 },
	};
	char *xml = model_xml("nvl4.xml");
	for (int k = 0; k < 3; k++) {
		char *nl = strchr(xml, '\n');
		char *t = malloc(strlen(xml) + strlen(recs[k].rec) + 1);
		size_t head = (size_t)(nl - xml) + 1;
		memcpy(t, xml, head);
		strcpy(t + head, recs[k].rec);
		strcat(t, xml + head);
		unlink(path);
		plant(dir, t);
		free(t);
		n = detect_with(dir, 0, &o);
		ck_assert_msg(cached(n) == recs[k].cached, "%d: %s", k,
			      tp_node_source(n));
		ck_assert_int_eq(tp_node_ngpus(n), 4);
		tp_node_destroy(n);
		ck_assert_int_eq(nvml_inits(log), recs[k].inits);
	}
	free(xml);
	unsetenv("TOPOPLACE_STANDIN_LOG");
	unsetenv("HWLOC_XMLFILE");
	remove_dir(tools);
	remove_dir(dir);
}
END_TEST

START_TEST(write_xml_keeps_model)
{
	char xml[512], links[512];
	tp_test_node_path(xml, sizeof xml, "cpu2.xml");
	tp_error err;
	tp_error_clear(&err);
	tp_node *n = NULL, *m = NULL;
	ck_assert_int_eq(tp_node_load_xml(xml, &n, &err), 0);
	char *buf;
	size_t len;
	ck_assert_msg(tp_node_write_xml(n, &buf, &len, &err) == 0, "%s", err.msg);
	ck_assert_uint_eq(strlen(buf), len);
	ck_assert_int_eq(tp_node_load_xml_buffer(buf, len, "out", &m, &err), 0);
	ck_assert_int_eq(tp_node_ncores(m), tp_node_ncores(n));
	ck_assert_int_eq(tp_node_npackages(m), tp_node_npackages(n));
	free(buf);
	tp_node_destroy(m);
	tp_node_destroy(n);
	/* the fabric goes in as hwloc's NVLinkBandwidth distances */
	tp_test_node_path(xml, sizeof xml, "nvl4.xml");
	tp_test_node_path(links, sizeof links, "nvl4.links");
	ck_assert_int_eq(tp_node_load_xml(xml, &n, &err), 0);
	ck_assert_int_eq(tp_node_load_links(n, links, &err), 0);
	ck_assert_int_eq(tp_node_write_xml(n, &buf, &len, &err), 0);
	ck_assert_ptr_nonnull(strstr(buf, "name=\"NVLinkBandwidth\""));
	/* ... and read back from that one file: the same NVLinks */
	ck_assert_msg(tp_node_load_xml_buffer(buf, len, "out", &m, &err) == 0,
		      "%s", err.msg);
	for (int a = 0; a < 4; a++)
		for (int b = 0; b < 4; b++)
			ck_assert_int_eq(tp_node_nvlinks(m, a, b),
					 tp_node_nvlinks(n, a, b));
	ck_assert_int_eq(tp_node_nvlinks(m, 0, 1), 4);
	ck_assert_int_eq(tp_node_nvlinks(m, 0, 2), 0);
	ck_assert(!tp_node_has_nvswitch(m));
	free(buf);
	tp_node_destroy(m);
	tp_node_destroy(n);
	/* an NVSwitch node stays one; xGMI links go in as XGMIBandwidth */
	static const char *const kinds[][2] = {
		{ "dgx8.xml", "dgx8.links" }, { "mi250x.xml", "mi250x.links" },
	};
	for (int k = 0; k < 2; k++) {
		tp_test_node_path(xml, sizeof xml, kinds[k][0]);
		tp_test_node_path(links, sizeof links, kinds[k][1]);
		ck_assert_int_eq(tp_node_load_xml(xml, &n, &err), 0);
		ck_assert_int_eq(tp_node_load_links(n, links, &err), 0);
		ck_assert_int_eq(tp_node_write_xml(n, &buf, &len, &err), 0);
		ck_assert_msg(tp_node_load_xml_buffer(buf, len, "out", &m, &err) == 0,
			      "%s: %s", kinds[k][0], err.msg);
		int g = tp_node_ngpus(n);
		ck_assert_int_eq(tp_node_ngpus(m), g);
		for (int a = 0; a < g; a++)
			for (int b = 0; b < g; b++) {
				ck_assert_int_eq(tp_node_nvlinks(m, a, b),
						 tp_node_nvlinks(n, a, b));
				ck_assert_int_eq(tp_node_xgmi_links(m, a, b),
						 tp_node_xgmi_links(n, a, b));
			}
		ck_assert_int_eq(tp_node_has_nvswitch(m), tp_node_has_nvswitch(n));
		free(buf);
		tp_node_destroy(m);
		tp_node_destroy(n);
	}
}
END_TEST

START_TEST(bad_arguments)
{
	tp_error err;
	tp_error_clear(&err);
	ck_assert_int_eq(tp_node_detect(NULL, 0, NULL, &err), TP_EINVAL);
	char *buf;
	size_t len;
	ck_assert_int_eq(tp_node_write_xml(NULL, &buf, &len, &err), TP_EINVAL);
	char longdir[5000];
	memset(longdir, 'a', sizeof longdir - 1);
	longdir[0] = '/';
	longdir[sizeof longdir - 1] = '\0';
	tp_node *n = NULL;
	ck_assert_int_eq(tp_node_detect(longdir, 0, &n, &err), TP_EINVAL);
	tp_assert_err_has(&err, "name too long");
	ck_assert_ptr_null(n);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("detect");
	TCase *tc = tcase_create("detect");
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, live_without_cache);
	tcase_add_test(tc, cache_round_trip);
	tcase_add_test(tc, cache_trust);
	tcase_add_test(tc, cache_partial);
	tcase_add_test(tc, write_xml_keeps_model);
	tcase_add_test(tc, bad_arguments);
	suite_add_tcase(s, tc);
	return tp_test_run(s);
}
