/* Unit tests: the SPANK plugin's pure functions (plugin: site.c,
 * hints.c, srun_args.c, lists.c), on real srun command lines. */
#include <dirent.h>
#include <sys/stat.h>
#include <unistd.h>

#include "testutil.h"
#include "tpk.h"
#include <topoplace/conf.h>
#include <topoplace/job.h>

/* ---- srun's command line ---- */

static struct tpk_srun_args scan(int known, const char *line)
{
	/* split on spaces: the tests use no quoting */
	static char buf[1024];
	static char *argv[64];
	snprintf(buf, sizeof buf, "%s", line);
	int argc = 0;
	for (char *save = NULL, *w = strtok_r(buf, " ", &save); w && argc < 63;
	     w = strtok_r(NULL, " ", &save))
		argv[argc++] = w;
	argv[argc] = NULL;
	struct tpk_srun_args a;
	tpk_scan_srun_args(argc, argv, known, &a);
	return a;
}

START_TEST(srun_plain)
{
	struct tpk_srun_args a = scan(0, "srun -n 32 --topo-stencil=4x4x2 ./app -n 5");
	ck_assert_int_eq(a.ntasks, 32);
	ck_assert_str_eq(a.hints.stencil, "4x4x2");
	ck_assert_str_eq(a.ambiguous, "");
	ck_assert(!a.het && !a.layout[0]);
	tpk_srun_args_free(&a);
	/* a cluster of short options, abbreviations, -c */
	a = scan(0, "srun -ln4 --ntasks-per-n=2 --cpus-per-task 3 --topo-pol none ./a");
	ck_assert_int_eq(a.ntasks, 4);
	ck_assert_int_eq(a.ntasks_per_node, 2);
	ck_assert_int_eq(a.cpus_per_task, 3);
	ck_assert_str_eq(a.hints.policy, "none");
	tpk_srun_args_free(&a);
	/* a training job's layout, its value with commas and '=' */
	a = scan(0, "srun -n 64 --topo-parallel tp=8,pp=4,bytes=tp:64,dp:8 ./train");
	ck_assert_int_eq(a.ntasks, 64);
	ck_assert_str_eq(a.hints.parallel, "tp=8,pp=4,bytes=tp:64,dp:8");
	ck_assert(tpk_hints_pattern(&a.hints));
	tpk_srun_args_free(&a);
	/* "--nod" is ambiguous in srun itself (nodes, nodefile, nodelist):
	 * ignored, the command still found */
	a = scan(0, "srun --nod=2 -N 2-4 ./app");
	ck_assert_int_eq(a.nodes_min, 2);
	ck_assert_int_eq(a.nodes_max, 4);
	tpk_srun_args_free(&a);
}
END_TEST

/* --mem=0 (or SLURM_MEM_PER_NODE=0 from salloc) makes srun leave the
 * distribution to slurmctld, which takes block (launch.c, stepmgr.c). */
static const char *mem_env_node, *mem_env_cpu;
static const char *mem_env(const char *name)
{
	return !strcmp(name, "SLURM_MEM_PER_NODE") ? mem_env_node
	       : !strcmp(name, "SLURM_MEM_PER_CPU") ? mem_env_cpu : NULL;
}

START_TEST(srun_mem_zero)
{
	const char *zero[] = { "0", "0M", "00G", "0kb", "0T" };
	const char *other[] = { "", "1", "0x", "0MBs", "-0x", "10", "M", "01" };
	for (size_t i = 0; i < sizeof zero / sizeof *zero; i++)
		ck_assert_msg(tpk_mem_is_zero(zero[i]), "%s", zero[i]);
	for (size_t i = 0; i < sizeof other / sizeof *other; i++)
		ck_assert_msg(!tpk_mem_is_zero(other[i]), "%s", other[i]);
	ck_assert(!tpk_mem_is_zero(NULL));
	struct tpk_srun_args a = scan(0, "srun -n 4 --mem=0 ./app --mem=5");
	ck_assert(a.mem_given && a.mem_zero);
	mem_env_node = "100";
	ck_assert_str_eq(tpk_mem_zero_dist(a.mem_given, a.mem_zero, mem_env), "block");
	tpk_srun_args_free(&a);
	a = scan(0, "srun -n 4 --mem-per-cpu 1G ./app");
	ck_assert(a.mem_given && !a.mem_zero);
	mem_env_node = "0";
	ck_assert_ptr_null(tpk_mem_zero_dist(a.mem_given, a.mem_zero, mem_env));
	tpk_srun_args_free(&a);
	/* from the allocation's environment */
	a = scan(0, "srun -n 4 ./app");
	ck_assert(!a.mem_given);
	ck_assert_str_eq(tpk_mem_zero_dist(a.mem_given, a.mem_zero, mem_env), "block");
	mem_env_node = NULL;
	mem_env_cpu = "0G";
	ck_assert_str_eq(tpk_mem_zero_dist(a.mem_given, a.mem_zero, mem_env), "block");
	mem_env_cpu = "2048";
	ck_assert_ptr_null(tpk_mem_zero_dist(a.mem_given, a.mem_zero, mem_env));
	tpk_srun_args_free(&a);
}
END_TEST

START_TEST(srun_other_plugin)
{
	/* pyxis's --container-image, given as a separate word: the scan
	 * cannot tell it from the command... */
	struct tpk_srun_args a =
		scan(0, "srun --container-image ubuntu -n 32 --topo-stencil=4x4x2 ./app");
	ck_assert_str_eq(a.ambiguous, "--container-image");
	ck_assert_int_eq(a.ambiguous_at, 1);
	ck_assert_int_eq(a.topo_after, 5);   /* ...until that option's callback */
	tpk_srun_args_free(&a);
	/* which comes with srun's getopt past it (optind 6): settled */
	a = scan(6, "srun --container-image ubuntu -n 32 --topo-stencil=4x4x2 ./app");
	ck_assert_str_eq(a.ambiguous, "");
	ck_assert_int_eq(a.ntasks, 32);
	ck_assert_str_eq(a.hints.stencil, "4x4x2");
	tpk_srun_args_free(&a);
	/* no --topo-* option after it: nothing can settle it */
	a = scan(0, "srun --container-image ubuntu -n 32 ./app");
	ck_assert_str_eq(a.ambiguous, "--container-image");
	ck_assert_int_eq(a.topo_after, 0);
	tpk_srun_args_free(&a);
	/* written with '=', or followed by an option: clear */
	a = scan(0, "srun --container-image=ubuntu -n 32 ./app");
	ck_assert_str_eq(a.ambiguous, "");
	ck_assert_int_eq(a.ntasks, 32);
	tpk_srun_args_free(&a);
	a = scan(0, "srun --container-remap-root -n 8 ./app");
	ck_assert_str_eq(a.ambiguous, "");
	ck_assert_int_eq(a.ntasks, 8);
	tpk_srun_args_free(&a);
}
END_TEST

START_TEST(srun_het_and_end)
{
	struct tpk_srun_args a = scan(0, "srun --het-group=0,1 -n 4 ./app");
	ck_assert(a.het);
	tpk_srun_args_free(&a);
	/* a later component's --topo-* options are noticed */
	a = scan(0, "srun -n4 ./a : -n2 --topo-stencil=2x1 ./b");
	ck_assert(a.het && a.het_topo);
	ck_assert_int_eq(a.ntasks, 4);
	ck_assert_ptr_null(a.hints.stencil);
	tpk_srun_args_free(&a);
	/* "--" ends the options: the program's own -n is not srun's */
	a = scan(0, "srun -n 4 -- ./app -n 8 --topo-stencil=9x9");
	ck_assert_int_eq(a.ntasks, 4);
	ck_assert_ptr_null(a.hints.stencil);
	tpk_srun_args_free(&a);
	/* --multi-prog is a flag: the configuration file is the command */
	a = scan(0, "srun --multi-prog -n 4 --topo-stencil=2x2 mp.conf");
	ck_assert_int_eq(a.ntasks, 4);
	ck_assert_str_eq(a.hints.stencil, "2x2");
	ck_assert_str_eq(a.ambiguous, "");
	tpk_srun_args_free(&a);
	/* the user's layout */
	a = scan(0, "srun -F hosts -n 2 ./app");
	ck_assert_str_eq(a.layout, "--nodefile");
	tpk_srun_args_free(&a);
	a = scan(0, "srun --help");
	ck_assert(a.info_only);
	tpk_srun_args_free(&a);
}
END_TEST

/* Options of later releases: 23.02's --tres-per-task (a value), 24.11's
 * --oom-kill-step (an optional value, so only attached).  srun_args.o
 * knows them when built for those releases, and then reads them as srun
 * does; built against older headers (Debian 12's 22.05) they are another
 * plugin's options to it.  tests/slurm/options.sh checks which releases
 * have which, against each release's srun. */
static bool srun_knows(const char *opt)
{
	char line[128];
	snprintf(line, sizeof line, "srun %s word ./app", opt);
	struct tpk_srun_args a = scan(0, line);
	bool known = !a.ambiguous[0];
	tpk_srun_args_free(&a);
	return known;
}

START_TEST(srun_later_releases)
{
	bool tres = srun_knows("--tres-per-task");
	bool oom = srun_knows("--oom-kill-step");
	struct tpk_srun_args a =
		scan(0, "srun --tres-per-task gpu:1 -n 2 --topo-stencil=2x1 ./a -n 5");
	if (tres) {
		ck_assert_str_eq(a.ambiguous, "");
	} else {
		/* 22.05: "gpu:1" may be the command; the line stays */
		ck_assert_str_eq(a.ambiguous, "--tres-per-task");
		ck_assert_int_eq(a.ambiguous_at, 1);
		ck_assert_int_eq(a.topo_after, 5);
	}
	ck_assert_int_eq(a.ntasks, 2);
	ck_assert_str_eq(a.hints.stencil, "2x1");
	tpk_srun_args_free(&a);
	/* with '=' every release places */
	a = scan(0, "srun --tres-per-task=gres/gpu:1 -n 2 ./app -n 5");
	ck_assert_str_eq(a.ambiguous, "");
	ck_assert_int_eq(a.ntasks, 2);
	tpk_srun_args_free(&a);

	a = scan(0, "srun --oom-kill-step ./app -n 5");
	if (oom) {
		/* its value is only ever attached: ./app is the command */
		ck_assert_str_eq(a.ambiguous, "");
		ck_assert_int_eq(a.ntasks, 0);
	} else {
		ck_assert_str_eq(a.ambiguous, "--oom-kill-step");
		ck_assert_int_eq(a.ntasks, 5);
	}
	tpk_srun_args_free(&a);
	a = scan(0, "srun --oom-kill-step=1 -n 2 ./app");
	ck_assert_str_eq(a.ambiguous, "");
	ck_assert_int_eq(a.ntasks, 2);
	tpk_srun_args_free(&a);
	a = scan(0, "srun --oom-kill-step -n 2 ./app");
	ck_assert_str_eq(a.ambiguous, "");
	ck_assert_int_eq(a.ntasks, 2);
	tpk_srun_args_free(&a);
}
END_TEST

/* ---- plugstack arguments ---- */

START_TEST(site_arguments)
{
	struct tpk_site s;
	char err[512];
	tpk_site_defaults(&s);
	ck_assert_str_eq(s.conf_path, TPK_DEFAULT_CONF);
	ck_assert(s.time_budget_ms < 0 && s.cpu_bind);
	ck_assert_int_eq(tpk_site_arg(&s, "conf=/etc/x.conf", err, sizeof err), 0);
	ck_assert_str_eq(s.conf_path, "/etc/x.conf");
	ck_assert_int_eq(tpk_site_arg(&s, "policy=zorder", err, sizeof err), 0);
	ck_assert_str_eq(s.policy, "zorder");
	ck_assert_int_eq(tpk_site_arg(&s, "time_budget_ms=250.5", err, sizeof err), 0);
	ck_assert(s.time_budget_ms == 250.5);
	ck_assert_int_eq(tpk_site_arg(&s, "max_tasks=4096", err, sizeof err), 0);
	ck_assert_int_eq(s.max_tasks, 4096);
	ck_assert_int_eq(s.max_threads, 0);
	ck_assert_int_eq(tpk_site_arg(&s, "max_threads=6", err, sizeof err), 0);
	ck_assert_int_eq(s.max_threads, 6);
	ck_assert_int_eq(tpk_site_arg(&s, "cpu_bind=no", err, sizeof err), 0);
	ck_assert(!s.cpu_bind);
	/* the node's detected model: on, cached in /run/topoplace by default */
	ck_assert(s.node_detect);
	ck_assert_str_eq(s.node_cache, "/run/topoplace");
	ck_assert_int_eq(tpk_site_arg(&s, "node_cache=/var/cache/tp", err, sizeof err), 0);
	ck_assert_str_eq(s.node_cache, "/var/cache/tp");
	ck_assert_int_eq(tpk_site_arg(&s, "node_cache=no", err, sizeof err), 0);
	ck_assert_str_eq(s.node_cache, "");
	ck_assert_int_eq(tpk_site_arg(&s, "node_detect=no", err, sizeof err), 0);
	ck_assert(!s.node_detect);
	static const struct { const char *arg, *frag; } bad[] = {
		{ "conf=relative.conf", "absolute path" },
		{ "policy=fastest", "unknown policy" },
		{ "time_budget_ms=-5", "0..3600000" },
		{ "time_budget_ms=nan", "0..3600000" },
		{ "max_file_bytes=0", "1..1073741824" },
		{ "max_file_bytes=2147483648", "1..1073741824" },
		{ "max_tasks=12x", "task count" },
		{ "max_threads=0", "thread count in 1..256" },
		{ "max_threads=257", "thread count in 1..256" },
		{ "cpu_bind=maybe", "yes or no" },
		{ "node_detect=1", "yes or no" },
		{ "node_cache=run/tp", "absolute path or no" },
		{ "frobnicate=1", "unknown plugstack argument" },
		{ "novalue", "not key=value" },
	};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		ck_assert_int_eq(tpk_site_arg(&s, bad[i].arg, err, sizeof err), -1);
		ck_assert_msg(strstr(err, bad[i].frag), "%s: %s", bad[i].arg, err);
	}
	/* a bad argument changes nothing */
	ck_assert_str_eq(s.policy, "zorder");
	ck_assert_int_eq(s.max_tasks, 4096);
	ck_assert_int_eq(s.max_threads, 6);
}
END_TEST

/* The request srun and slurmstepd build: with no time_budget_ms= and no
 * TimeBudgetMs= the placement gets 1000 ms, not auto's whole search. */
START_TEST(request_budget)
{
	struct tpk_site s;
	tpk_site_defaults(&s);
	tp_conf *c = NULL, *c40 = NULL;
	tp_error err;
	ck_assert_int_eq(tp_conf_load_string("Network=torus Dims=4x4 Wrap=yes\n"
					     "NodeName=n[00-15] CoordOrder=x-major\n",
					     "t.conf", &c, &err), 0);
	ck_assert_int_eq(tp_conf_load_string("Network=torus Dims=4x4 Wrap=yes\n"
					     "TimeBudgetMs=40\n"
					     "NodeName=n[00-15] CoordOrder=x-major\n",
					     "t.conf", &c40, &err), 0);
	tp_job_request q;
	tp_job_request_init(&q);
	q.conf = c;
	q.nodes = "n[00-03]";
	q.ntasks = 4;
	q.stencil = "2x2";
	tpk_request_budget(&s, &q);
	tp_job *job = NULL;
	ck_assert_int_eq(tp_job_create(&q, &job, &err), 0);
	ck_assert(tp_job_time_budget_ms(job) == 1000);
	ck_assert_int_eq(tp_job_time_budget_source(job), TP_BUDGET_LAUNCH);
	tp_job_destroy(job);
	/* topoplace.conf's TimeBudgetMs= */
	q.conf = c40;
	ck_assert_int_eq(tp_job_create(&q, &job, &err), 0);
	ck_assert(tp_job_time_budget_ms(job) == 40);
	tp_job_destroy(job);
	/* the plugstack's time_budget_ms=, 0 (no bound) included */
	char e[256];
	ck_assert_int_eq(tpk_site_arg(&s, "time_budget_ms=0", e, sizeof e), 0);
	tp_job_request_init(&q);
	q.conf = c40;
	q.nodes = "n[00-03]";
	q.ntasks = 4;
	tpk_request_budget(&s, &q);
	ck_assert_int_eq(tp_job_create(&q, &job, &err), 0);
	ck_assert(tp_job_time_budget_ms(job) == 0);
	ck_assert_int_eq(tp_job_time_budget_source(job), TP_BUDGET_DEFAULT);
	tp_job_destroy(job);
	tp_conf_destroy(c);
	tp_conf_destroy(c40);
}
END_TEST

/* ---- options from the environment ---- */

static const char *fake_env(const char *name)
{
	if (!strcmp(name, "SLURM_SPANK__SLURM_SPANK_OPTION_topoplace_topo_stencil"))
		return "8x8";
	if (!strcmp(name, "_SLURM_SPANK_OPTION_topoplace_topo_report"))
		return "";
	if (!strcmp(name, "SLURM_SPANK__SLURM_SPANK_OPTION_topoplace_topo_parallel"))
		return "tp=8,pp=4";
	return NULL;
}

START_TEST(hints_env_and_overlay)
{
	struct tpk_hints env, cmd;
	memset(&env, 0, sizeof env);
	memset(&cmd, 0, sizeof cmd);
	tpk_hints_from_env(&env, fake_env);
	ck_assert(env.seen && env.report);
	ck_assert_str_eq(env.stencil, "8x8");
	/* sbatch's --topo-parallel reaches srun as the others do */
	ck_assert_str_eq(env.parallel, "tp=8,pp=4");
	tpk_hints_set(&cmd, TPK_OPT_PARALLEL, "tp=4,pp=2,mesh=pp,dp,tp");
	tpk_hints_set(&cmd, TPK_OPT_STENCIL, "4x4");
	tpk_hints_set(&cmd, TPK_OPT_POLICY, "none");
	tpk_hints_overlay(&env, &cmd);
	ck_assert_str_eq(env.stencil, "4x4");
	ck_assert_str_eq(env.parallel, "tp=4,pp=2,mesh=pp,dp,tp");
	ck_assert_str_eq(tpk_opt_name(TPK_OPT_PARALLEL), "topo-parallel");
	ck_assert(tpk_hints_policy_none(&env) && tpk_hints_pattern(&env));
	ck_assert_str_eq(tpk_opt_name(TPK_OPT_GPU_MATRIX), "topo-gpu-matrix");
	ck_assert_ptr_null(tpk_opt_name(99));
	tpk_hints_free(&env);
	tpk_hints_free(&cmd);
}
END_TEST

/* --topo-report takes an optional value, attached only */
static const char *svg_env(const char *name)
{
	if (!strcmp(name, "_SLURM_SPANK_OPTION_topoplace_topo_report"))
		return "svg";
	return NULL;
}

START_TEST(report_svg)
{
	struct tpk_srun_args a = scan(0, "srun --topo-report=svg -n4 ./a");
	ck_assert(a.hints.report && tpk_hints_report_svg(&a.hints));
	ck_assert_str_eq(a.hints.report_as, "svg");
	ck_assert_int_eq(a.ntasks, 4);
	tpk_srun_args_free(&a);
	/* the plain flag, and a detached word: that is the command */
	a = scan(0, "srun --topo-report svg -n4");
	ck_assert(a.hints.report && !tpk_hints_report_svg(&a.hints));
	ck_assert_ptr_null(a.hints.report_as);
	ck_assert_int_eq(a.ntasks, 0);
	tpk_srun_args_free(&a);
	/* the last one wins; an unknown value is kept, to be reported */
	struct tpk_hints h;
	memset(&h, 0, sizeof h);
	tpk_hints_set(&h, TPK_OPT_REPORT, "svg");
	tpk_hints_set(&h, TPK_OPT_REPORT, NULL);
	ck_assert(h.report && !tpk_hints_report_svg(&h) && !h.report_as);
	tpk_hints_set(&h, TPK_OPT_REPORT, "png");
	ck_assert(!tpk_hints_report_svg(&h));
	ck_assert_str_eq(h.report_as, "png");
	/* from sbatch through the environment, and onto srun's own */
	struct tpk_hints env;
	memset(&env, 0, sizeof env);
	tpk_hints_from_env(&env, svg_env);
	ck_assert(tpk_hints_report_svg(&env));
	tpk_hints_overlay(&env, &h);
	ck_assert_str_eq(env.report_as, "png");
	tpk_hints_free(&h);
	tpk_hints_overlay(&h, &env);
	ck_assert_str_eq(h.report_as, "png");
	tpk_hints_free(&h);
	tpk_hints_free(&env);
	/* the plain flag from the environment: "" in the step, "(null)" where
	 * sbatch and salloc export it to the job's sruns */
	memset(&env, 0, sizeof env);
	tpk_hints_from_env(&env, fake_env);
	ck_assert(env.report && !env.report_as);
	tpk_hints_free(&env);
	tpk_hints_set(&env, TPK_OPT_REPORT, "(null)");
	ck_assert(env.report && !env.report_as);
	tpk_hints_free(&env);
}
END_TEST

/* The picture is written as a new file, then renamed: no link followed,
 * nothing left behind on failure. */
START_TEST(user_file_written)
{
	char dir[] = "/tmp/tp-userfile.XXXXXX";
	ck_assert_ptr_nonnull(mkdtemp(dir));
	char path[256], target[256], err[512];
	struct tpk_cred cred = { .drop = false };
	snprintf(path, sizeof path, "%s/pic.svg", dir);
	ck_assert_int_eq(tpk_write_user_file(path, "<svg/>\n", 7, &cred, err,
					     sizeof err), 0);
	struct stat st;
	ck_assert_int_eq(lstat(path, &st), 0);
	ck_assert(S_ISREG(st.st_mode));
	ck_assert_int_eq(st.st_mode & 0777, 0600);
	ck_assert_int_eq(st.st_size, 7);
	/* a link planted at the name is replaced, its target untouched */
	snprintf(target, sizeof target, "%s/target", dir);
	FILE *f = fopen(target, "w");
	ck_assert_ptr_nonnull(f);
	fputs("keep", f);
	fclose(f);
	unlink(path);
	ck_assert_int_eq(symlink(target, path), 0);
	ck_assert_int_eq(tpk_write_user_file(path, "new", 3, &cred, err,
					     sizeof err), 0);
	ck_assert_int_eq(lstat(path, &st), 0);
	ck_assert(S_ISREG(st.st_mode));
	ck_assert_int_eq(stat(target, &st), 0);
	ck_assert_int_eq(st.st_size, 4);
	/* failures: one line, nothing left */
	char missing[300];
	snprintf(missing, sizeof missing, "%s/no/pic.svg", dir);
	ck_assert_int_eq(tpk_write_user_file(missing, "x", 1, &cred, err,
					     sizeof err), -1);
	ck_assert_ptr_nonnull(strstr(err, "cannot write in"));
	ck_assert_int_eq(tpk_write_user_file("rel.svg", "x", 1, &cred, err,
					     sizeof err), -1);
	ck_assert_ptr_nonnull(strstr(err, "not an absolute path"));
	char sub[300];
	snprintf(sub, sizeof sub, "%s/sub", dir);
	ck_assert_int_eq(mkdir(sub, 0700), 0);
	ck_assert_int_eq(tpk_write_user_file(sub, "x", 1, &cred, err,
					     sizeof err), -1);   /* a directory */
	DIR *d = opendir(dir);
	int n = 0;
	for (struct dirent *e; (e = readdir(d));)
		n += e->d_name[0] != '.';
	closedir(d);
	ck_assert_int_eq(n, 3);   /* pic.svg, target, sub: no temporary file */
	unlink(path);
	unlink(target);
	rmdir(sub);
	rmdir(dir);
}
END_TEST

/* ---- Slurm's list formats ---- */

START_TEST(index_lists)
{
	int out[16];
	ck_assert_int_eq(tpk_parse_index_list("0-3,8,10-11", out, 16), 7);
	ck_assert_int_eq(out[4], 8);
	ck_assert_int_eq(out[6], 11);
	ck_assert_int_eq(tpk_parse_index_list("0-20", out, 16), -1);   /* cap */
	ck_assert_int_eq(tpk_parse_index_list("3-1", out, 16), -1);
	ck_assert_int_eq(tpk_parse_index_list("1,", out, 16), -1);
	ck_assert_int_eq(tpk_parse_index_list("", out, 16), -1);
	ck_assert_int_eq(tpk_parse_index_list("99999999", out, 16), -1);
	ck_assert_int_eq(tpk_parse_gpu_list("0,2,3", out, 16), 3);
	ck_assert_int_eq(tpk_parse_gpu_list("0-3", out, 16), -1);
	ck_assert_int_eq(tpk_parse_gpu_list("NoDevFiles", out, 16), -1);
	ck_assert_int_eq(tpk_parse_gpu_list("GPU-4d8f", out, 16), -1);
	cpu_set_t set;
	ck_assert(tpk_cpu_list_set("0-2,7", &set));
	ck_assert_int_eq(CPU_COUNT(&set), 4);
	ck_assert(CPU_ISSET(7, &set) && !CPU_ISSET(3, &set));
	ck_assert(!tpk_cpu_list_set("0-", &set));
	ck_assert(!tpk_cpu_list_set("", &set));
	char big[32];
	snprintf(big, sizeof big, "%d", CPU_SETSIZE);   /* past cpu_set_t */
	ck_assert(!tpk_cpu_list_set(big, &set));
	ck_assert(tpk_usable_cpus(&set));
	ck_assert_int_gt(CPU_COUNT(&set), 0);
}
END_TEST

/* Which variable carries the step's GPUs, and which follow it. */
START_TEST(gpu_variables)
{
	ck_assert_str_eq(tpk_gpu_vars[TPK_GPU_ROCR], "ROCR_VISIBLE_DEVICES");
	/* Slurm's defaults: all alike; CUDA_VISIBLE_DEVICES leads */
	const char *all[TPK_NGPU_VARS] = { "0,1", "0,1", NULL, "0,1" };
	ck_assert_int_eq(tpk_gpu_list_source(all), TPK_GPU_CUDA);
	for (int i = 0; i < TPK_NGPU_VARS; i++)
		ck_assert(tpk_gpu_var_follows(all, TPK_GPU_CUDA, i) == (i != TPK_GPU_HIP));
	/* AutoDetect=rsmi / Flags=amd_gpu_env: ROCR_VISIBLE_DEVICES only */
	const char *amd[TPK_NGPU_VARS] = { NULL, "4,5,6,7", NULL, NULL };
	ck_assert_int_eq(tpk_gpu_list_source(amd), TPK_GPU_ROCR);
	ck_assert(tpk_gpu_var_follows(amd, TPK_GPU_ROCR, TPK_GPU_ROCR));
	ck_assert(!tpk_gpu_var_follows(amd, TPK_GPU_ROCR, TPK_GPU_CUDA));
	ck_assert(!tpk_gpu_var_follows(amd, TPK_GPU_ROCR, TPK_GPU_HIP));
	/* a site's HIP_VISIBLE_DEVICES alone; an empty CUDA list is not one */
	const char *hip[TPK_NGPU_VARS] = { "", NULL, "0,2", "0,2" };
	ck_assert_int_eq(tpk_gpu_list_source(hip), TPK_GPU_HIP);
	ck_assert(tpk_gpu_var_follows(hip, TPK_GPU_HIP, TPK_GPU_ORDINAL));
	ck_assert(!tpk_gpu_var_follows(hip, TPK_GPU_HIP, TPK_GPU_CUDA));
	/* a different ROCR list (a user's) is left alone */
	const char *mixed[TPK_NGPU_VARS] = { "0,1", "1", NULL, NULL };
	ck_assert(!tpk_gpu_var_follows(mixed, TPK_GPU_CUDA, TPK_GPU_ROCR));
	const char *none[TPK_NGPU_VARS] = { NULL, NULL, NULL, "0" };
	ck_assert_int_eq(tpk_gpu_list_source(none), -1);
	ck_assert(!tpk_gpu_var_follows(none, -1, TPK_GPU_ORDINAL));
}
END_TEST

START_TEST(task_specs)
{
	int64_t nodes = 0;
	ck_assert_int_eq(tpk_tasks_per_node_sum("2(x3),1", &nodes), 7);
	ck_assert_int_eq(nodes, 4);
	ck_assert_int_eq(tpk_tasks_per_node_sum("2(x)", NULL), -1);
	ck_assert_int_eq(tpk_tasks_per_node_sum("a", NULL), -1);
	ck_assert_int_eq(tpk_tasks_per_node_sum("1(x2147483648)", NULL), -1);
	/* sums past any Slurm job's 32-bit counts: refused, never wrapped
	 * (three such items overflowed int64: found in review while its
	 * fuzz target was written) */
	ck_assert_int_eq(tpk_tasks_per_node_sum("2147483647,1", NULL), -1);
	ck_assert_int_eq(tpk_tasks_per_node_sum("2147483647", NULL), 2147483647);
	ck_assert_int_eq(tpk_tasks_per_node_sum("2147483647(x2147483647),"
						"2147483647(x2147483647),"
						"2147483647(x2147483647)", NULL), -1);
	ck_assert_int_eq(tpk_tasks_per_node_sum("0(x2147483647),0", NULL), -1);
	ck_assert_int_eq(tpk_tasks_on_node("2147483647(x2),1", 0), -1);
	/* one node's count: what topoplace bind reads at SLURM_NODEID */
	ck_assert_int_eq(tpk_tasks_on_node("2(x3),1", 0), 2);
	ck_assert_int_eq(tpk_tasks_on_node("2(x3),1", 2), 2);
	ck_assert_int_eq(tpk_tasks_on_node("2(x3),1", 3), 1);
	ck_assert_int_eq(tpk_tasks_on_node("2(x3),1", 4), -1);
	ck_assert_int_eq(tpk_tasks_on_node("2(x3),1", -1), -1);
	ck_assert_int_eq(tpk_tasks_on_node("3,0,5", 1), 0);
	ck_assert_int_eq(tpk_tasks_on_node("2(x", 0), -1);
	ck_assert_int_eq(tpk_tasks_on_node(NULL, 0), -1);
	char cap[64];
	ck_assert_int_eq(tpk_capacity_spec("8(x2),4", 2, cap, sizeof cap), 0);
	ck_assert_str_eq(cap, "4(x2),2(x1)");
	ck_assert_int_eq(tpk_capacity_spec("1,2(x2)", 0, cap, sizeof cap), 0);
	ck_assert_str_eq(cap, "1(x1),2(x2)");
	ck_assert_int_eq(tpk_capacity_spec("x", 1, cap, sizeof cap), -1);
	ck_assert_int_eq(tpk_capacity_spec("2147483647(x2)", 1, cap, sizeof cap), -1);
	ck_assert_int_eq(tpk_parse_pos("12"), 12);
	ck_assert_int_eq(tpk_parse_pos("-3"), 0);
	ck_assert_int_eq(tpk_parse_pos("1e3"), 0);
	ck_assert_int_eq(tpk_parse_pos(NULL), 0);
}
END_TEST

START_TEST(log_lines_are_clean)
{
	/* S2: what a user typed cannot reach a log or a terminal raw */
	char out[TPK_LINE_MAX];
	tpk_line(out, sizeof out, "topoplace: error: --topo-stencil=%s", "2x1:bytes=\033[31mRED\nx");
	ck_assert_str_eq(out, "topoplace: error: --topo-stencil=2x1:bytes=\\x1b[31mRED\\x0ax");
	tpk_line(out, sizeof out, "%s", "caf\xc3\xa9\x7f");
	ck_assert_str_eq(out, "caf\\xc3\\xa9\\x7f");
	char tiny[8];
	tpk_line(tiny, sizeof tiny, "%s", "abcdefghij");
	ck_assert_int_lt(strlen(tiny), 8);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("plugin");
	TCase *tc = tcase_create("pure");
	tcase_add_test(tc, srun_plain);
	tcase_add_test(tc, srun_mem_zero);
	tcase_add_test(tc, srun_other_plugin);
	tcase_add_test(tc, srun_het_and_end);
	tcase_add_test(tc, srun_later_releases);
	tcase_add_test(tc, site_arguments);
	tcase_add_test(tc, request_budget);
	tcase_add_test(tc, hints_env_and_overlay);
	tcase_add_test(tc, report_svg);
	tcase_add_test(tc, user_file_written);
	tcase_add_test(tc, index_lists);
	tcase_add_test(tc, gpu_variables);
	tcase_add_test(tc, task_specs);
	tcase_add_test(tc, log_lines_are_clean);
	suite_add_tcase(s, tc);
	return tp_test_run(s);
}
