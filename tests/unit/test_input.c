/* Unit tests: the input layer — Slurm hostlists (hostlist.c) and bounded,
 * non-blocking file reading (util.c). */
#include "testutil.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <topoplace/alloc.h>
#include <topoplace/conf.h>
#include <topoplace/hostfile.h>
#include <topoplace/node.h>
#include "util/hostlist.h"
#include "util/util_internal.h"

#if defined(__has_include)
#if __has_include(<valgrind/valgrind.h>)
#include <valgrind/valgrind.h>
#include "net/machine_internal.h"
#include "pattern/pattern_internal.h"
#endif
#endif
#ifndef RUNNING_ON_VALGRIND
#define RUNNING_ON_VALGRIND 0
#endif

/* All names of text, space-separated, into a malloc'ed string. */
static char *expand(const char *text, int64_t max, int64_t *count)
{
	struct tp__hostlist *hl;
	tp_error err;
	tp_error_clear(&err);
	int rc = tp__hostlist_parse(text, "t", max, "test bound", &hl, count, &err);
	ck_assert_msg(rc == 0, "'%s': %s", text, err.msg);
	size_t cap = 64, len = 0;
	char *out = malloc(cap);
	out[0] = '\0';
	char name[TP__HOSTNAME_MAX];
	int64_t n = 0;
	while (tp__hostlist_next(hl, name)) {
		size_t k = strlen(name);
		while (len + k + 2 > cap)
			out = realloc(out, cap *= 2);
		if (len)
			out[len++] = ' ';
		memcpy(out + len, name, k + 1);
		len += k;
		n++;
	}
	ck_assert_int_eq(n, *count);
	ck_assert_int_eq(tp__hostlist_next(hl, name), 0);
	tp__hostlist_free(hl);
	return out;
}

/* text read with tp__hostlist_next_run: names as they are, ranges as
 * {prefix|lo-hi/width|suffix}, space-separated. */
static void runs_are(const char *text, uint64_t min_len, const char *want)
{
	struct tp__hostlist *hl;
	int64_t count, n = 0;
	tp_error err;
	ck_assert_int_eq(tp__hostlist_parse(text, "t", 1000, "b", &hl, &count, &err), 0);
	char got[1024] = "", name[TP__HOSTNAME_MAX];
	struct tp__hostlist_run r;
	int k;
	while ((k = tp__hostlist_next_run(hl, name, min_len, &r))) {
		size_t at = strlen(got);
		if (k == 2) {
			snprintf(got + at, sizeof got - at, "%s{%.*s|%llu-%llu/%u|%.*s}",
				 at ? " " : "", (int)r.plen, r.prefix,
				 (unsigned long long)r.lo, (unsigned long long)r.hi,
				 r.width, (int)r.slen, r.suffix);
			n += (int64_t)(r.hi - r.lo + 1);
		} else {
			snprintf(got + at, sizeof got - at, "%s%s", at ? " " : "", name);
			n++;
		}
	}
	ck_assert_int_eq(n, count);
	ck_assert_msg(!strcmp(got, want), "'%s' gave '%s', want '%s'", text, got, want);
	tp__hostlist_free(hl);
}

/* Numbered ranges whose last number says the name: only one-group
 * entries, a prefix not ending with a digit, a suffix without digits. */
START_TEST(hostlist_runs)
{
	runs_are("n[1-3,5],x[1-2]y[3-4],a1[0-2],b[0-2]c,d[7-9]-ib,e[08-10]2,f", 1,
		 "{n|1-3/1|} {n|5-5/1|} x1y3 x1y4 x2y3 x2y4 a10 a11 a12 {b|0-2/1|c} "
		 "{d|7-9/1|-ib} e082 e092 e102 f");
	runs_are("n[1-3,5,007-009],[1-4],[5-6]", 3, "{n|1-3/1|} n5 {n|7-9/3|} {|1-4/1|} 5 6");
}
END_TEST

static void expands_to(const char *text, const char *want)
{
	int64_t count;
	char *got = expand(text, 1000, &count);
	ck_assert_msg(!strcmp(got, want), "'%s' gave '%s', want '%s'", text, got, want);
	free(got);
}

static void hostlist_bad(const char *text, int64_t max, const char *frag)
{
	struct tp__hostlist *hl = (struct tp__hostlist *)1;
	int64_t count = 7;
	tp_error err;
	tp_error_clear(&err);
	int rc = tp__hostlist_parse(text, "src", max, "test bound", &hl, &count, &err);
	ck_assert_msg(rc == TP_EINVAL, "'%s': rc %d", text, rc);
	ck_assert_ptr_null(hl);
	ck_assert_msg(strstr(err.msg, frag) != NULL, "'%s': error \"%s\" lacks \"%s\"",
		      text, err.msg, frag);
	ck_assert_msg(!strncmp(err.msg, "src: ", 5), "%s", err.msg);
}

/* ---- hostlists ---- */

START_TEST(hostlist_syntax)
{
	expands_to("n1", "n1");
	expands_to("n[1-3]", "n1 n2 n3");
	expands_to("nid[008-011]", "nid008 nid009 nid010 nid011");
	expands_to("n[8-010]", "n8 n9 n10");          /* width of the low end */
	expands_to("n[01-3],n5", "n01 n02 n03 n5");
	expands_to("n[1,3-4,9]", "n1 n3 n4 n9");
	expands_to("n[1,1]", "n1 n1");                /* duplicates are kept */
	expands_to("a,,b c\td\ne", "a b c d e");      /* Slurm's separators */
	expands_to(" , ", "");
	expands_to("", "");
	expands_to("[1-3]", "1 2 3");
	expands_to("x[1][2]", "x12");
	expands_to("n[1-2]-ib", "n1-ib n2-ib");       /* suffix */
	expands_to("r[1-2]n[1-2]x", "r1n1x r1n2x r2n1x r2n2x");
	/* Slurm's order: the last group fastest, then the first, the second... */
	expands_to("a[1-2]b[3-4]c[5-6]",
		   "a1b3c5 a1b3c6 a2b3c5 a2b3c6 a1b4c5 a1b4c6 a2b4c5 a2b4c6");
	expands_to("w[1-2]x[3-4]y[5-6]z[7-8]",
		   "w1x3y5z7 w1x3y5z8 w2x3y5z7 w2x3y5z8 w1x4y5z7 w1x4y5z8 w2x4y5z7 w2x4y5z8 "
		   "w1x3y6z7 w1x3y6z8 w2x3y6z7 w2x3y6z8 w1x4y6z7 w1x4y6z8 w2x4y6z7 w2x4y6z8");
	expands_to("n[1-2,5]m[0-1]", "n1m0 n1m1 n2m0 n2m1 n5m0 n5m1");
	/* several ranges in every group, read again from the text at each
	 * wrap-around (nothing is recorded) */
	expands_to("a[1,3-4]b[0,7-8],x[08-9,10]y[1-2]",
		   "a1b0 a1b7 a1b8 a3b0 a3b7 a3b8 a4b0 a4b7 a4b8 "
		   "x08y1 x08y2 x09y1 x09y2 x10y1 x10y2");
	expands_to("p[1-2]q[3,5]r[6-7,9]",
		   "p1q3r6 p1q3r7 p1q3r9 p2q3r6 p2q3r7 p2q3r9 "
		   "p1q5r6 p1q5r7 p1q5r9 p2q5r6 p2q5r7 p2q5r9");
	expands_to("big[999999999999999998-999999999999999999]",
		   "big999999999999999998 big999999999999999999");
}
END_TEST

START_TEST(hostlist_errors)
{
	hostlist_bad("n[0-", 10, "malformed hostlist: unbalanced brackets in 'n[0-'");
	hostlist_bad("n0]", 10, "unbalanced brackets in 'n0]'");
	hostlist_bad("n[[1]]", 10, "nested brackets");
	hostlist_bad("n[3-1]", 10, "bad range '3-1' (decreasing)");
	hostlist_bad("n[1,a]", 10, "bad range 'a'");
	hostlist_bad("n[]", 10, "bad range ''");
	hostlist_bad("n[1,]", 10, "bad range ''");
	hostlist_bad("n[-1]", 10, "bad range '-1'");
	hostlist_bad("n[1-]", 10, "bad range '1-'");
	hostlist_bad("n[ 1]", 10, "bad range ' 1'");
	hostlist_bad("n[+1]", 10, "bad range '+1'");
	hostlist_bad("n[1--2]", 10, "bad range '1--2'");
	hostlist_bad("n[1x2]", 10, "bad range '1x2'");
	hostlist_bad("n[0-1234567890123456789]", 10, "more than 18 digits");
	hostlist_bad("ok,n\x1b[31m", 10, "control character 0x1b");
	hostlist_bad("bad\rname", 10, "control character 0x0d");
	hostlist_bad("n\xb8[1-2]", 10, "non-ASCII byte 0xb8");
	/* the echo of the input in the message cannot drive a terminal */
	{
		struct tp__hostlist *hl;
		int64_t count;
		tp_error err;
		ck_assert_int_eq(tp__hostlist_parse("n\x1b[31mRED", "src", 10, "b", &hl, &count,
						    &err), TP_EINVAL);
		ck_assert_ptr_null(strchr(err.msg, 0x1b));
		tp_assert_err_has(&err, "in 'n?[31mRED'");
	}
	char longname[300];
	memset(longname, 'x', 299);
	longname[299] = '\0';
	hostlist_bad(longname, 10, "names longer than 255 characters");
	/* the bound, before any expansion */
	hostlist_bad("n[1-11]", 10, "src: 11 names, more than 10 (test bound)");
	hostlist_bad("a[0-65535]b[0-65535]c[0-1]", 1000,
		     "src: 8589934592 names, more than 1000 (test bound)");
	/* libslurm wraps this count and then says "empty node list" */
	hostlist_bad("n[0-53827]n[0-53827],1,2,1,2", 1000000,
		     "src: 2897453588 names, more than 1000000");
	hostlist_bad("a[0-999999999999999999]b[0-999999999999999999]c[0-9]", 5,
		     "src: more than 18446744073709551614 names, more than 5");
}
END_TEST

/* Nodes=a[0-9999]b[0-9999] in topology.conf once expanded its hundred
 * million names, for minutes and gigabytes; NodeName=a[0-65535]b[0-65535] said "no node names". */
START_TEST(config_hostlists_bounded)
{
	tp_machine *m = (tp_machine *)1;
	tp_error err;
	double t0 = tp__now_ms();
	ck_assert_int_eq(tp_machine_from_topology(&m, "SwitchName=s0 Nodes=a[0-9999]b[0-9999]\n",
						  "topology.conf", NULL, 0, &err), TP_EINVAL);
	ck_assert_ptr_null(m);
	ck_assert_str_eq(err.msg, "topology.conf:1: Nodes=a[0-9999]b[0-9999]: 100000000 names, "
			 "more than 1048576 (the most nodes a tree may have)");
	tp_conf *c = (tp_conf *)1;
	ck_assert_int_eq(tp_conf_load_string("Network=mesh Dims=4x4\n"
					     "NodeName=a[0-65535]b[0-65535] CoordOrder=x-major\n",
					     "cfg", &c, &err), TP_EINVAL);
	ck_assert_ptr_null(c);
	ck_assert_str_eq(err.msg, "cfg:2: NodeName=a[0-65535]b[0-65535]: 4294967296 names, "
			 "more than 4194304 (the most one config line may name)");
	ck_assert(tp__now_ms() - t0 < 100);
}
END_TEST

/* 2^33 names from 27 bytes: refused in well under a millisecond. */
START_TEST(hostlist_no_expansion)
{
	double t0 = tp__now_ms();
	hostlist_bad("a[0-65535]b[0-65535]c[0-1]", 1 << 30,
		     "8589934592 names");
	ck_assert(tp__now_ms() - t0 < 50);
}
END_TEST

/* A 500 kB list: 80,000 single names, or 40,000 ranges; linear time (a
 * generous bound here, for loaded test machines: bench_input times it). */
START_TEST(hostlist_large)
{
	size_t cap = 1 << 20, len = 0;
	char *s = malloc(cap);
	for (int i = 0; i < 80000; i++)
		len += (size_t)snprintf(s + len, cap - len, "%snid%05d", i ? "," : "", i);
	ck_assert_uint_ge(len, 500000);
	int64_t count;
	double t0 = tp__now_ms();
	char *all = expand(s, 80000, &count);
	double ms = tp__now_ms() - t0;
	ck_assert_int_eq(count, 80000);
	ck_assert(!strncmp(all, "nid00000 nid00001 ", 18));
	if (!RUNNING_ON_VALGRIND)
		ck_assert_msg(ms < 1000, "80,000 names in %.1f ms", ms);
	free(all);
	len = 0;
	for (int i = 0; i < 40000; i++)
		len += (size_t)snprintf(s + len, cap - len, "%sn[%05d-%05d]", i ? "," : "",
					2 * i, 2 * i + 1);
	t0 = tp__now_ms();
	all = expand(s, 80000, &count);
	ms = tp__now_ms() - t0;
	ck_assert_int_eq(count, 80000);
	if (!RUNNING_ON_VALGRIND)
		ck_assert_msg(ms < 1000, "40,000 ranges in %.1f ms", ms);
	free(all);
	/* one entry with 40,000 ranges inside one bracket */
	len = (size_t)snprintf(s, cap, "n[");
	for (int i = 0; i < 40000; i++)
		len += (size_t)snprintf(s + len, cap - len, "%s%06d-%06d", i ? "," : "",
					3 * i, 3 * i + 1);
	snprintf(s + len, cap - len, "]");
	all = expand(s, 80000, &count);
	ck_assert_int_eq(count, 80000);
	ck_assert(!strncmp(all, "n000000 n000001 n000003 ", 24));
	free(all);
	free(s);
}
END_TEST

/* ---- the machine's name index and router table (hashtab.c) ---- */

/* Many names, found again, missing ones not found, duplicates refused; the
 * router table dense (small machine) and hashed (> 4M routers). */
static void index_case(int ndims, const int *dims, int32_t n)
{
	tp_machine *m;
	tp_error err;
	ck_assert_int_eq(tp_machine_create(&m, ndims, dims, NULL, &err), 0);
	ck_assert_int_eq(tp_machine_set_nodes_per_router(m, 2, &err), 0);
	char name[32];
	int c[3] = { 0, 0, 0 };
	for (int32_t i = 0; i < n; i++) {
		snprintf(name, sizeof name, "node%d", i);
		c[0] = (i / 2) % dims[0];
		c[1] = (i / 2 / dims[0]) % dims[1];
		ck_assert_int_eq(tp_machine_add_node(m, name, c, &err), i);
	}
	for (int32_t i = 0; i < n; i++) {
		snprintf(name, sizeof name, "node%d", i);
		ck_assert_int_eq(tp_machine_find_node(m, name), i);
		ck_assert_str_eq(tp_machine_node_name(m, i), name);
	}
	ck_assert_int_eq(tp_machine_find_node(m, "node-1"), -1);
	ck_assert_int_eq(tp_machine_find_node(m, ""), -1);
	c[0] = c[1] = 0;
	ck_assert_int_eq(tp_machine_add_node(m, "node7", c, &err), TP_EINVAL);
	tp_assert_err_has(&err, "node 'node7': duplicate node name");
	ck_assert_int_eq(tp_machine_add_node(m, "extra", c, &err), TP_EINVAL);
	tp_assert_err_has(&err, "router (0,0) already has 2 nodes");
	ck_assert_int_eq(tp_machine_set_nodes_per_router(m, 1, &err), TP_EINVAL);
	tp_assert_err_has(&err, "already has 2 nodes");
	/* a long name (its own block in the arena) between short ones */
	char longname[5000];
	memset(longname, 'L', sizeof longname - 1);
	longname[sizeof longname - 1] = '\0';
	c[0] = dims[0] - 1;
	c[1] = dims[1] - 1;
	ck_assert_int_eq(tp_machine_add_node(m, longname, c, &err), n);
	ck_assert_int_eq(tp_machine_add_node(m, "after", c, &err), n + 1);
	ck_assert_int_eq(tp_machine_find_node(m, longname), n);
	ck_assert_int_eq(tp_machine_find_node(m, "after"), n + 1);
	ck_assert_int_eq(tp_machine_find_node(m, "node0"), 0);
	tp_machine_destroy(m);
}

START_TEST(name_index)
{
	int small[2] = { 300, 300 };          /* 90,000 routers: dense */
	index_case(2, small, 100000);
	int big[2] = { 4096, 4096 };          /* 16M routers: hashed */
	index_case(2, big, 100000);
}
END_TEST

/* ---- files ---- */

/* The test's scratch directory: one per forked test, removed at its exit
 * (Check ends each test's process with exit()). */
static char tmp_dir[64];

static void tmpdir_remove(void)
{
	char cmd[96];
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmp_dir);
	if (system(cmd) != 0)
		fprintf(stderr, "could not remove %s\n", tmp_dir);
}

static char *tmpdir_path(const char *name)
{
	char *dir = tmp_dir;
	if (!dir[0]) {
		strcpy(dir, "/tmp/tp-input-XXXXXX");
		ck_assert_ptr_nonnull(mkdtemp(dir));
		atexit(tmpdir_remove);
	}
	char *p = malloc(strlen(dir) + strlen(name) + 2);
	sprintf(p, "%s/%s", dir, name);
	return p;
}

static char *write_bytes(const char *name, const char *data, size_t len)
{
	char *p = tmpdir_path(name);
	FILE *f = fopen(p, "wb");
	ck_assert_ptr_nonnull(f);
	ck_assert_uint_eq(fwrite(data, 1, len, f), len);
	fclose(f);
	return p;
}

/* A FIFO nobody writes to: every reader refuses it at once, none blocks
 * (the test's timeout would fire). */
START_TEST(files_fifo_refused)
{
	char *p = tmpdir_path("fifo");
	ck_assert_int_eq(mkfifo(p, 0600), 0);
	tp_error err;
	char *buf;
	size_t len;
	ck_assert_int_eq(tp__read_file(p, 100, "test", &buf, &len, &err), TP_EIO);
	tp_assert_err_has(&err, "not a regular file (a FIFO)");
	tp_conf *c;
	ck_assert_int_eq(tp_conf_load(p, &c, &err), TP_EIO);
	tp_assert_err_has(&err, "not a regular file (a FIFO)");
	tp_graph *g;
	ck_assert_int_eq(tp_graph_from_json_file(&g, p, 0, &err), TP_EIO);
	tp_assert_err_has(&err, "not a regular file");
	ck_assert_int_eq(tp_graph_from_gpu_matrix_file(&g, p, 0, &err), TP_EIO);
	tp_node *n;
	ck_assert_int_eq(tp_node_load_xml(p, &n, &err), TP_EIO);
	char *text;
	ck_assert_int_eq(tp_hostlist_read_file(p, &text, &err), TP_EIO);
	tp_assert_err_has(&err, "not a regular file (a FIFO)");
	/* the same from a config: TopologyFile= and CoordFile= */
	char conf[512];
	snprintf(conf, sizeof conf, "Network=tree TopologyFile=%s\n", p);
	ck_assert_int_eq(tp_conf_load_string(conf, "cfg", &c, &err), TP_EIO);
	tp_assert_err_has(&err, "cfg:1: TopologyFile=");
	tp_assert_err_has(&err, "not a regular file (a FIFO)");
	snprintf(conf, sizeof conf, "Network=mesh Dims=4\nCoordFile=%s\n", p);
	ck_assert_int_eq(tp_conf_load_string(conf, "cfg", &c, &err), TP_EIO);
	tp_assert_err_has(&err, "cfg:2: CoordFile=");
	unlink(p);
	free(p);
}
END_TEST

START_TEST(files_devices_refused)
{
	tp_error err;
	tp_conf *c;
	ck_assert_int_eq(tp_conf_load("/dev/zero", &c, &err), TP_EIO);
	ck_assert_str_eq(err.msg, "/dev/zero: not a regular file (a character device)");
	tp_graph *g;
	ck_assert_int_eq(tp_graph_from_json_file(&g, "/dev/zero", 0, &err), TP_EIO);
	char *text;
	ck_assert_int_eq(tp_hostlist_read_file("/dev/zero", &text, &err), TP_EIO);
	ck_assert_str_eq(err.msg, "/dev/zero: not a regular file (a character device)");
}
END_TEST

START_TEST(files_size_and_nul)
{
	tp_error err;
	char *buf;
	size_t len;
	char *p = write_bytes("ten", "0123456789", 10);
	ck_assert_int_eq(tp__read_file(p, 10, "test", &buf, &len, &err), 0);
	ck_assert_uint_eq(len, 10);
	ck_assert_str_eq(buf, "0123456789");
	free(buf);
	ck_assert_int_eq(tp__read_file(p, 9, "a test file", &buf, &len, &err), TP_EINVAL);
	ck_assert_ptr_null(buf);
	tp_assert_err_has(&err, ": 10 bytes, more than the 9 bytes limit for a test file");
	free(p);
	p = write_bytes("nul", "a\nb\nc\0d\n", 8);
	ck_assert_int_eq(tp__read_file(p, 100, "test", &buf, &len, &err), TP_EINVAL);
	tp_assert_err_has(&err, "nul:3: NUL byte (not a text file)");
	free(p);
}
END_TEST

/* --nodes @FILE with a NUL used to give 2 of 4 nodes and exit 0. */
START_TEST(hostlist_file)
{
	tp_error err;
	char *text;
	char *p = write_bytes("nodes", "n1\nn[2-3]\r\n\nn4\n", 15);
	ck_assert_int_eq(tp_hostlist_read_file(p, &text, &err), 0);
	ck_assert_str_eq(text, "n1,n[2-3],,,n4,");
	free(text);
	free(p);
	p = write_bytes("nodes-nul", "n1\nn2\0n3\nn4\n", 12);
	text = (char *)1;
	ck_assert_int_eq(tp_hostlist_read_file(p, &text, &err), TP_EINVAL);
	ck_assert_ptr_null(text);
	tp_assert_err_has(&err, "nodes-nul:2: NUL byte");
	free(p);
	p = write_bytes("nodes-empty", "\n , \n", 5);
	ck_assert_int_eq(tp_hostlist_read_file(p, &text, &err), TP_EINVAL);
	tp_assert_err_has(&err, "nodes-empty: no node names");
	free(p);
	ck_assert_int_eq(tp_hostlist_read_file("/nonexistent/nodes", &text, &err), TP_ENOENT);
	tp_assert_err_has(&err, "/nonexistent/nodes: cannot read: No such file");
}
END_TEST

/* A NUL in a hostfile dropped the rest of its line (and the
 * error then blamed --stencil); /dev/zero grew one line without bound. */
START_TEST(hostfile_nul_and_devices)
{
	tp_conf *c;
	tp_error err;
	ck_assert_int_eq(tp_conf_load_string("Network=mesh Dims=4\n"
					     "NodeName=n[0-3] CoordOrder=x-major\n",
					     "cfg", &c, &err), 0);
	tp_alloc *a;
	ck_assert_int_eq(tp_alloc_from_hostlist(tp_conf_machine(c), "n[0-3]", 2, "n",
						&a, &err), 0);
	int32_t *map = NULL, n = 0;
	char *p = write_bytes("hosts-nul", "n0\nn1 n2\0n3\nn3\n", 16);
	ck_assert_int_eq(tp_hostfile_read(p, a, true, &map, &n, &err), TP_EINVAL);
	ck_assert_ptr_null(map);
	tp_assert_err_has(&err, "hosts-nul:2: NUL byte (not a text file)");
	free(p);
	ck_assert_int_eq(tp_hostfile_read("/dev/zero", a, true, &map, &n, &err), TP_EIO);
	ck_assert_str_eq(err.msg, "/dev/zero: not a regular file (a character device)");
	p = write_bytes("hosts", "n0\nn1,n2\n\nn3 # comment\n", 23);
	ck_assert_int_eq(tp_hostfile_read(p, a, true, &map, &n, &err), 0);
	ck_assert_int_eq(n, 4);
	free(map);
	free(p);
	tp_alloc_destroy(a);
	tp_conf_destroy(c);
}
END_TEST

int main(void)
{
	signal(SIGPIPE, SIG_IGN);
	Suite *s = suite_create("input");
	TCase *tc = tcase_create("hostlist");
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, hostlist_syntax);
	tcase_add_test(tc, hostlist_errors);
	tcase_add_test(tc, hostlist_no_expansion);
	tcase_add_test(tc, config_hostlists_bounded);
	tcase_add_test(tc, hostlist_large);
	tcase_add_test(tc, hostlist_runs);
	tcase_add_test(tc, name_index);
	suite_add_tcase(s, tc);
	TCase *tf = tcase_create("files");
	tcase_set_timeout(tf, 20);
	tcase_add_test(tf, files_fifo_refused);
	tcase_add_test(tf, files_devices_refused);
	tcase_add_test(tf, files_size_and_nul);
	tcase_add_test(tf, hostlist_file);
	tcase_add_test(tf, hostfile_nul_and_devices);
	suite_add_tcase(s, tf);
	return tp_test_run(s);
}
