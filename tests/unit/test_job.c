/* Unit tests: the job pipeline (tp_job_*): resolution of the defaults, the
 * allocation's slots, the rules phase 1 keeps (never worse than block,
 * auto's margin, pattern-free policies), and phases 2 and 3 agreeing
 * between a whole job and one node's share. */
#include <sched.h>
#include <unistd.h>

#include "util/util_internal.h"
#include "testutil.h"
#include "input/alloc_internal.h"
#include "job/job_internal.h"
#include "node/node_internal.h"
#include "pattern/pattern_internal.h"

static tp_conf *load(const char *text)
{
	tp_conf *c = NULL;
	tp_error err;
	ck_assert_msg(tp_conf_load_string(text, "t.conf", &c, &err) == 0, "%s",
		      err.msg);
	return c;
}

static tp_conf *torus8(const char *extra)
{
	char text[512];
	snprintf(text, sizeof text, "Network=torus Dims=8x8x8 Wrap=yes\n%s"
		 "NodeName=n[000-511] CoordOrder=x-major\n", extra ? extra : "");
	return load(text);
}

static tp_job *job_ok(const tp_job_request *r)
{
	tp_job *job = NULL;
	tp_error err;
	tp_error_clear(&err);
	ck_assert_msg(tp_job_create(r, &job, &err) == 0, "create: %s", err.msg);
	ck_assert_msg(tp_job_run(job, &err) == 0, "run: %s", err.msg);
	return job;
}

static int job_fails(const tp_job_request *r, tp_error *err)
{
	tp_job *job = NULL;
	tp_error_clear(err);
	int rc = tp_job_create(r, &job, err);
	if (!rc) {
		rc = tp_job_run(job, err);
		tp_job_destroy(job);
	}
	ck_assert_msg(rc < 0, "expected a failure");
	return rc;
}

/* ---- what is asked, resolved ---- */

START_TEST(policy_order)
{
	tp_conf *plain = torus8(NULL), *site = torus8("DefaultPolicy=zorder\n");
	tp_job_request r;
	tp_job_request_init(&r);
	r.nodes = "n[000-007]";
	r.ntasks = 8;
	r.stencil = "2x2x2";
	r.conf = plain;                         /* nothing said: auto */
	tp_job *job = job_ok(&r);
	ck_assert_int_eq(tp_job_requested_policy(job), TP_POLICY_AUTO);
	tp_job_destroy(job);
	r.conf = site;                          /* topoplace.conf */
	job = job_ok(&r);
	ck_assert_int_eq(tp_job_requested_policy(job), TP_POLICY_ZORDER);
	tp_job_destroy(job);
	r.default_policy = "cyclic";            /* the site's override */
	job = job_ok(&r);
	ck_assert_int_eq(tp_job_requested_policy(job), TP_POLICY_CYCLIC);
	tp_job_destroy(job);
	r.policy = "graph";                     /* the job's own choice */
	job = job_ok(&r);
	ck_assert_int_eq(tp_job_requested_policy(job), TP_POLICY_GRAPH);
	tp_job_destroy(job);
	tp_error err;
	r.policy = "fastest";
	r.what.policy = "--topo-policy";
	job_fails(&r, &err);
	tp_assert_err_has(&err, "--topo-policy: unknown policy 'fastest'");
	tp_conf_destroy(plain);
	tp_conf_destroy(site);
}
END_TEST

START_TEST(budget_order)
{
	tp_conf *c = torus8("TimeBudgetMs=40\n");
	tp_job_request r;
	tp_job_request_init(&r);
	r.conf = c;
	r.nodes = "n[000-003]";
	r.ntasks = 4;
	tp_job *job = NULL;
	ck_assert_int_eq(tp_job_create(&r, &job, NULL), 0);
	ck_assert(tp_job_time_budget_ms(job) == 40);
	tp_job_destroy(job);
	r.default_time_budget_ms = 300;
	ck_assert_int_eq(tp_job_create(&r, &job, NULL), 0);
	ck_assert(tp_job_time_budget_ms(job) == 300);
	tp_job_destroy(job);
	r.time_budget_ms = 0;                   /* the job: no bound */
	ck_assert_int_eq(tp_job_create(&r, &job, NULL), 0);
	ck_assert(tp_job_time_budget_ms(job) == 0);
	ck_assert_int_eq(tp_job_time_budget_source(job), TP_BUDGET_REQUEST);
	tp_job_destroy(job);
	tp_conf_destroy(c);
}
END_TEST

/* Inside a launch (TP_JOB_LAUNCH_BUDGET) a placement is never unbounded
 * unless someone says so; topoplace map (no flag) keeps none. */
START_TEST(budget_launch_default)
{
	tp_conf *plain = torus8(NULL), *zero = torus8("TimeBudgetMs=0\n"),
		*some = torus8("TimeBudgetMs=40\n");
	tp_job_request r;
	tp_job_request_init(&r);
	r.nodes = "n[000-003]";
	r.ntasks = 4;
	r.conf = plain;
	tp_job *job = NULL;
	ck_assert_int_eq(tp_job_create(&r, &job, NULL), 0);
	ck_assert(tp_job_time_budget_ms(job) == 0);      /* the command */
	ck_assert_int_eq(tp_job_time_budget_source(job), TP_BUDGET_NONE);
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	tp_job_explain(job, f, "");
	fclose(f);
	ck_assert_msg(strstr(buf, ", no time budget\n"), "%s", buf);
	free(buf);
	tp_job_destroy(job);
	r.flags = TP_JOB_LAUNCH_BUDGET;                  /* srun, slurmstepd */
	ck_assert_int_eq(tp_job_create(&r, &job, NULL), 0);
	ck_assert(tp_job_time_budget_ms(job) == TP_JOB_LAUNCH_BUDGET_MS);
	ck_assert(tp_job_time_budget_ms(job) == 1000);
	ck_assert_int_eq(tp_job_time_budget_source(job), TP_BUDGET_LAUNCH);
	f = open_memstream(&buf, &len);
	tp_job_explain(job, f, "");
	fclose(f);
	ck_assert_msg(strstr(buf, "time budget 1000 ms (the default inside a "
			     "launch: no time_budget_ms= or TimeBudgetMs=)\n"),
		      "%s", buf);
	free(buf);
	tp_job_destroy(job);
	r.conf = zero;                        /* the config's explicit none */
	ck_assert_int_eq(tp_job_create(&r, &job, NULL), 0);
	ck_assert(tp_job_time_budget_ms(job) == 0);
	ck_assert_int_eq(tp_job_time_budget_source(job), TP_BUDGET_CONF);
	tp_job_destroy(job);
	r.conf = some;
	ck_assert_int_eq(tp_job_create(&r, &job, NULL), 0);
	ck_assert(tp_job_time_budget_ms(job) == 40);
	ck_assert_int_eq(tp_job_time_budget_source(job), TP_BUDGET_CONF);
	tp_job_destroy(job);
	r.default_time_budget_ms = 300;       /* the plugstack wins */
	ck_assert_int_eq(tp_job_create(&r, &job, NULL), 0);
	ck_assert(tp_job_time_budget_ms(job) == 300);
	ck_assert_int_eq(tp_job_time_budget_source(job), TP_BUDGET_DEFAULT);
	tp_job_destroy(job);
	tp_conf_destroy(plain);
	tp_conf_destroy(zero);
	tp_conf_destroy(some);
}
END_TEST

/* The threads a placement uses: one per CPU the process may run on, held
 * to the request's count and to the config's MaxThreads=. */
START_TEST(thread_limits)
{
	int cpus = tp__cpus();
	tp_conf *c = torus8(NULL), *c1 = torus8("MaxThreads=1\n");
	tp_job_request r;
	tp_job_request_init(&r);
	r.conf = c;
	r.nodes = "n[000-003]";
	r.ntasks = 4;
	tp_job *job = NULL;
	ck_assert_int_eq(tp_job_create(&r, &job, NULL), 0);
	ck_assert_int_eq(tp__job_threads(job), cpus);
	tp_job_destroy(job);
	r.threads = cpus + 5;                  /* never more than the CPUs */
	ck_assert_int_eq(tp_job_create(&r, &job, NULL), 0);
	ck_assert_int_eq(tp__job_threads(job), cpus);
	tp_job_destroy(job);
	r.threads = 1;
	ck_assert_int_eq(tp_job_create(&r, &job, NULL), 0);
	ck_assert_int_eq(tp__job_threads(job), 1);
	tp_job_destroy(job);
	r.threads = 0;
	r.conf = c1;                           /* the site's limit */
	ck_assert_int_eq(tp_job_create(&r, &job, NULL), 0);
	ck_assert_int_eq(tp__job_threads(job), 1);
	tp_job_destroy(job);
	tp_conf_destroy(c);
	tp_conf_destroy(c1);
}
END_TEST

/* ---- the allocation ---- */

START_TEST(slots_bound_tasks)
{
	/* a task count beyond the slots Slurm gave (a user's SLURM_NTASKS)
	 * is refused, naming both */
	tp_conf *c = torus8(NULL);
	tp_job_request r;
	tp_job_request_init(&r);
	r.conf = c;
	r.nodes = "n[000-001]";
	r.slots = "1(x2)";
	r.ntasks = 10000000;
	r.what.ntasks = "SLURM_NTASKS";
	r.what.slots = "SLURM_TASKS_PER_NODE";
	tp_error err;
	job_fails(&r, &err);
	tp_assert_err_has(&err, "SLURM_NTASKS: 10000000 tasks, but "
			  "SLURM_TASKS_PER_NODE gives the nodes 2 task slots");
	/* fewer tasks than slots: the first slots are used */
	r.ntasks = 1;
	tp_job *job = job_ok(&r);
	ck_assert_int_eq(tp_job_ntasks(job), 1);
	tp_job_destroy(job);
	/* and a limit of its own */
	r.slots = "4(x2)";
	r.ntasks = 8;
	r.max_tasks = 6;
	job_fails(&r, &err);
	tp_assert_err_has(&err, "8 tasks: more than the limit of 6");
	tp_conf_destroy(c);
}
END_TEST

START_TEST(spread_within_capacity)
{
	/* 4 tasks on nodes holding 1, 2 and 2: Slurm's even spread (2,1,1)
	 * would put 2 on the first node; within capacity it is 1, 2, 1 */
	tp_conf *c = torus8(NULL);
	tp_job_request r;
	tp_job_request_init(&r);
	r.conf = c;
	r.nodes = "n[000-002]";
	r.ntasks = 4;
	r.capacity = "1,2(x2)";
	r.policy = "block";
	tp_job *job = job_ok(&r);
	const tp_alloc *a = tp_job_alloc(job);
	ck_assert_int_eq(tp_alloc_slots(a, 0), 1);
	ck_assert_int_eq(tp_alloc_slots(a, 1), 2);
	ck_assert_int_eq(tp_alloc_slots(a, 2), 1);
	tp_job_destroy(job);
	r.ntasks = 6;
	tp_error err;
	job_fails(&r, &err);
	tp_assert_err_has(&err, "6 tasks do not fit in the 5");
	tp_conf_destroy(c);
}
END_TEST

START_TEST(task_count_from_pattern)
{
	tp_conf *c = torus8(NULL);
	tp_job_request r;
	tp_job_request_init(&r);
	r.conf = c;
	r.nodes = "n[000-003]";
	r.stencil = "4x2";
	tp_job *job = job_ok(&r);
	ck_assert_int_eq(tp_job_ntasks(job), 8);
	ck_assert_int_eq(tp_alloc_slots(tp_job_alloc(job), 3), 2);
	tp_job_destroy(job);
	r.stencil = NULL;
	tp_error err;
	job_fails(&r, &err);
	tp_assert_err_has(&err, "no task count");
	tp_conf_destroy(c);
}
END_TEST

/* ---- phase 1 rules ---- */

START_TEST(no_pattern)
{
	tp_conf *c = torus8(NULL);
	tp_job_request r;
	tp_job_request_init(&r);
	r.conf = c;
	r.nodes = "n[000-003]";
	r.ntasks = 8;
	tp_job *job = job_ok(&r);              /* auto: nothing to go by */
	ck_assert_int_eq(tp_job_status(job), TP_JOB_KEPT);
	ck_assert_str_eq(tp_job_reason(job), "no communication pattern given");
	tp_job_destroy(job);
	r.policy = "graph";                     /* asked for, impossible */
	tp_error err;
	job_fails(&r, &err);
	tp_assert_err_has(&err, "policy graph needs a communication pattern");
	r.policy = "cyclic";                    /* needs none */
	job = job_ok(&r);
	ck_assert_int_eq(tp_job_status(job), TP_JOB_PLACED);
	ck_assert_str_eq(tp_job_task_node(job, 1), "n001");
	tp_job_destroy(job);
	/* a site default is not forced on a step smaller than its allocation
	 * (a 1-task step would always land on the first node) */
	r.policy = NULL;
	r.default_policy = "cyclic";
	r.ntasks = 1;
	job = job_ok(&r);
	ck_assert_int_eq(tp_job_status(job), TP_JOB_KEPT);
	ck_assert(strstr(tp_job_reason(job), "smaller than its allocation"));
	tp_job_destroy(job);
	r.policy = "cyclic";                    /* the job asked: applied */
	job = job_ok(&r);
	ck_assert_int_eq(tp_job_status(job), TP_JOB_KEPT);  /* = block here */
	tp_job_destroy(job);
	tp_conf_destroy(c);
}
END_TEST

START_TEST(never_worse_than_block)
{
	/* a 4x4x4 stencil on a box in task order: block is exact, so no
	 * policy may replace it */
	static const char *const pols[] = { "geometric", "graph", "random",
					    "cyclic", "zorder", "auto" };
	tp_conf *c = torus8(NULL);
	tp_job_request r;
	tp_job_request_init(&r);
	r.conf = c;
	r.nodes = "n[000-003],n[008-011],n[016-019],n[024-027],"
		  "n[064-067],n[072-075],n[080-083],n[088-091]";
	r.slots = "2";
	r.stencil = "4x4x4";
	r.flags = TP_JOB_METRICS;
	for (size_t i = 0; i < sizeof pols / sizeof pols[0]; i++) {
		r.policy = pols[i];
		tp_job *job = job_ok(&r);
		const tp_metrics *m = tp_job_metrics(job), *mb = tp_job_block_metrics(job);
		ck_assert_msg(m && mb && m->hop_bytes <= mb->hop_bytes,
			      "%s worse than block", pols[i]);
		ck_assert_msg(tp_job_ncandidates(job) >= 1, "%s: no candidates", pols[i]);
		tp_job_destroy(job);
	}
	tp_conf_destroy(c);
}
END_TEST

START_TEST(auto_margin)
{
	/* a ring on a line of nodes whose order is almost right: the best
	 * candidate has 12.6 % fewer hop-bytes than block and half its
	 * maximum congestion (100 against 201 bytes: auto's rule judges by
	 * the congestion, a 50.2 % gain); with a margin above that gain
	 * Slurm's order stays and the reason says so, with no margin the
	 * candidate wins */
	tp_conf *c = torus8(NULL);
	char *path = tp_test_tmpfile(
		"{\"tasks\": 8, \"edges\": [[0,1,100],[1,2,100],[2,3,100],"
		"[3,4,100],[4,5,100],[5,6,100],[6,7,100],[0,7,1]]}");
	tp_job_request r;
	tp_job_request_init(&r);
	r.conf = c;
	r.nodes = "n000,n001,n002,n003,n004,n005,n007,n006";
	r.ntasks = 8;
	r.graph.name = path;
	r.min_gain = 0.6;
	tp_job *job = job_ok(&r);
	ck_assert_int_eq(tp_job_status(job), TP_JOB_KEPT);
	ck_assert_msg(strstr(tp_job_reason(job), "no candidate beats it by 60 %"),
		      "%s", tp_job_reason(job));
	tp_job_candidate cand;
	ck_assert_int_eq(tp_job_candidate_get(job, 0, &cand), 0);
	ck_assert_str_eq(cand.name, "block");
	ck_assert(cand.chosen);
	tp_job_destroy(job);
	r.min_gain = 0;
	job = job_ok(&r);
	ck_assert_int_eq(tp_job_status(job), TP_JOB_PLACED);
	tp_job_destroy(job);
	unlink(path);
	free(path);
	tp_conf_destroy(c);
}
END_TEST

START_TEST(geometric_falls_back_to_graph)
{
	tp_conf *c = torus8(NULL);
	char *path = tp_test_tmpfile("{\"tasks\": 4, \"edges\": [[0,2,5],[1,3,5]]}");
	tp_job_request r;
	tp_job_request_init(&r);
	r.conf = c;
	r.nodes = "n[000-001]";
	r.slots = "2";
	r.graph.name = path;
	r.policy = "geometric";
	tp_job *job = job_ok(&r);
	ck_assert_int_eq(tp_job_policy(job), TP_POLICY_GRAPH);
	ck_assert_int_eq(tp_job_nnotes(job), 1);
	ck_assert(strstr(tp_job_note(job, 0), "no task coordinates"));
	/* 0,2 and 1,3 share nodes */
	ck_assert_str_eq(tp_job_task_node(job, 0), tp_job_task_node(job, 2));
	ck_assert_str_eq(tp_job_task_node(job, 1), tp_job_task_node(job, 3));
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	ck_assert_int_eq(tp_job_explain(job, f, "x: "), 0);
	fclose(f);
	ck_assert(strstr(buf, "x: policy graph, metric hop-bytes"));
	ck_assert(strstr(buf, "x:   block"));
	free(buf);
	tp_job_destroy(job);
	unlink(path);
	free(path);
	tp_conf_destroy(c);
}
END_TEST

/* ---- inside the nodes ---- */

/* GpuLinkBandwidth= gives the speed of the links GpuLinks= counts: nvl4's
 * 4-link pairs at 20 GB/s a link (NVLink 1) weigh 80 GB/s; without it 4 x
 * 25.  An XML's own distances are not changed by it. */
START_TEST(gpu_link_bandwidth_key)
{
	for (int slow = 0; slow < 2; slow++) {
		char conf[1024];
		snprintf(conf, sizeof conf, "Network=mesh Dims=2\nNodeName=g[1-2] "
			 "CoordOrder=x-major NodeTopology=%s/nodes/nvl4.xml "
			 "GpuLinks=%s/nodes/nvl4.links%s\n", TP_SOURCE_DIR "/conf/examples",
			 TP_SOURCE_DIR "/conf/examples", slow ? " GpuLinkBandwidth=20" : "");
		tp_conf *c = load(conf);
		tp_error err;
		ck_assert_msg(tp_conf_check_model(c, 0, &err) == 0, "%s", err.msg);
		tp_job_request r;
		tp_job_request_init(&r);
		r.conf = c;
		r.nodes = "g[1-2]";
		r.ntasks = 8;
		r.stencil = "8x1";
		tp_job *job = job_ok(&r);
		int32_t nid = tp_machine_find_node(tp_conf_machine(c), "g2");
		const tp_node *n = tp__job_model_of(job, nid, &err);
		ck_assert_msg(n != NULL, "%s", err.msg);
		ck_assert_int_eq(tp_node_nvlinks(n, 2, 3), 4);
		ck_assert_double_eq_tol(tp_node_gpu_bandwidth(n, 2, 3),
					slow ? 4 * 20 : 4 * TP_NVLINK_BW, 1e-9);
		tp_job_destroy(job);
		tp_conf_destroy(c);
	}
}
END_TEST

START_TEST(node_share_equals_whole_job)
{
	/* the placement a task computes for its node equals the whole job's */
	char conf[1024];
	snprintf(conf, sizeof conf, "Network=mesh Dims=2\nNodeName=g[1-2] "
		 "CoordOrder=x-major NodeTopology=%s/nodes/nvl4.xml "
		 "GpuLinks=%s/nodes/nvl4.links\n", TP_SOURCE_DIR "/conf/examples",
		 TP_SOURCE_DIR "/conf/examples");
	tp_conf *c = load(conf);
	char *gm = tp_test_tmpfile("{\"tasks\": 8, \"traffic\": [[0,4,1e9],"
				   "[1,5,1e9],[2,6,1e9],[3,7,1e9]]}");
	tp_job_request r;
	tp_job_request_init(&r);
	r.conf = c;
	r.nodes = "g[1-2]";
	r.ntasks = 8;
	r.stencil = "8x1";
	r.gpu_matrix.name = gm;
	r.flags = TP_JOB_NODE_PLACEMENT;
	tp_job *job = job_ok(&r);
	for (int32_t i = 0; i < 2; i++) {
		int32_t tasks[8], n = 0;
		for (int32_t t = 0; t < 8; t++)
			if (tp_job_map(job)[t] == i)
				tasks[n++] = t;
		ck_assert_int_eq(n, 4);
		tp_node_share sh = { .node = i ? "g2" : "g1", .tasks = tasks,
				     .ntasks = n, .want_cpus = true,
				     .want_gpus = true };
		tp_node_placement p;
		tp_error err;
		ck_assert_int_eq(tp_job_place_node(job, &sh, &p, &err), 0);
		ck_assert_msg(p.cpus_set && p.gpus_set, "%s / %s", p.cpu_note,
			      p.gpu_note);
		for (int32_t k = 0; k < n; k++) {
			ck_assert_str_eq(p.cpus[k], tp_job_task_cpus(job, tasks[k]));
			int ng = 0;
			const int *g = tp_job_task_gpus(job, tasks[k], &ng);
			ck_assert_int_eq(ng, 1);
			ck_assert_int_eq(g[0], p.gpus[p.gpu_start[k]]);
		}
		tp_node_placement_free(&p);
	}
	/* the heavy pairs share a node and sit on an NVLink pair */
	for (int a = 0; a < 4; a++)
		ck_assert_str_eq(tp_job_task_node(job, a), tp_job_task_node(job, a + 4));
	tp_job_destroy(job);
	unlink(gm);
	free(gm);
	tp_conf_destroy(c);
}
END_TEST

/* A node without a model where the request requires one: TP_ENOMODEL,
 * so that a front end can say which option gives one. */
START_TEST(require_models_code)
{
	char conf[512];
	snprintf(conf, sizeof conf, "Network=mesh Dims=2\nNodeName=g1 Coords=0 "
		 "NodeTopology=%s/nodes/duo.xml\nNodeName=g2 Coords=1\n",
		 TP_TEST_DATA);
	tp_conf *c = load(conf);
	tp_job_request r;
	tp_job_request_init(&r);
	r.conf = c;
	r.nodes = "g[1-2]";
	r.slots = "2";
	r.stencil = "4x1";
	r.flags = TP_JOB_NODE_PLACEMENT | TP_JOB_REQUIRE_MODELS;
	tp_job *job = NULL;
	tp_error err;
	ck_assert_msg(tp_job_create(&r, &job, &err) == 0, "%s", err.msg);
	ck_assert_int_eq(tp_job_run(job, &err), TP_ENOMODEL);
	ck_assert_str_eq(err.msg, "no NodeTopology= for node g2");
	tp_job_destroy(job);
	tp_conf_destroy(c);
}
END_TEST

/* The node models are loaded by tp_job_create, only for a run that needs
 * them (node placement, or phase 1 ranking by the GPU links: a GPU matrix
 * under auto, graph, or geometric without coordinates), and a node's
 * missing model is told where the run meets it, after the mapping's own
 * error. */
static tp_job *created(const tp_job_request *r)
{
	tp_job *job = NULL;
	tp_error err;
	tp_error_clear(&err);
	ck_assert_msg(tp_job_create(r, &job, &err) == 0, "create: %s", err.msg);
	return job;
}

START_TEST(models_loaded_by_create)
{
	char conf[512];
	snprintf(conf, sizeof conf, "Network=mesh Dims=2\nNodeName=g1 Coords=0 "
		 "NodeTopology=%s/nodes/duo.xml\nNodeName=g2 Coords=1\n",
		 TP_TEST_DATA);
	tp_conf *c = load(conf);
	char *gm = tp_test_tmpfile("{\"tasks\": 4, \"traffic\": [[0,2,1e9],"
				   "[1,3,1e9]]}");
	tp_job_request r;
	tp_job_request_init(&r);
	r.conf = c;
	r.nodes = "g[1-2]";
	r.slots = "2";
	r.stencil = "4x1";
	r.flags = TP_JOB_NODE_PLACEMENT | TP_JOB_REQUIRE_MODELS;
	tp_job *job = created(&r);
	/* g1's loaded, g2's missing: kept for the run, not given out yet */
	ck_assert(job->models_tried);
	ck_assert_int_eq(job->nmodels, 1);
	ck_assert_ptr_nonnull(job->models[0].node);
	ck_assert_int_eq(job->models_rc, TP_ENOMODEL);
	ck_assert_ptr_null(tp_job_node_model(job, 0));
	tp_error err;
	ck_assert_int_eq(tp_job_run(job, &err), TP_ENOMODEL);
	ck_assert_str_eq(err.msg, "no NodeTopology= for node g2");
	tp_job_destroy(job);

	/* the mapping's error comes first */
	r.stencil = NULL;
	r.policy = "graph";
	job = created(&r);
	ck_assert(job->models_tried);
	ck_assert_int_eq(tp_job_run(job, &err), TP_EINVAL);
	ck_assert_msg(strstr(err.msg, "needs a communication pattern"), "%s",
		      err.msg);
	tp_job_destroy(job);

	/* phase 1 ranking by the GPU links needs them too ... */
	const char *ranking[] = { "auto", "graph", "geometric" };
	r.flags = TP_JOB_REQUIRE_MODELS;
	r.gpu_matrix.name = gm;
	for (int i = 0; i < 3; i++) {
		r.policy = ranking[i];
		job = created(&r);
		ck_assert_msg(job->models_tried, "%s", ranking[i]);
		ck_assert_int_eq(tp_job_run(job, &err), TP_ENOMODEL);
		ck_assert_str_eq(err.msg, "no NodeTopology= for node g2");
		tp_job_destroy(job);
	}
	/* ... and nothing else: none loaded, and g2 lacks nothing */
	r.policy = "cyclic";
	job = created(&r);
	ck_assert(!job->models_tried);
	ck_assert_int_eq(job->nmodels, 0);
	ck_assert_msg(tp_job_run(job, &err) == 0, "%s", err.msg);
	tp_job_destroy(job);
	r.policy = NULL;
	r.gpu_matrix.name = NULL;
	r.stencil = "4x1";
	job = created(&r);
	ck_assert(!job->models_tried);
	ck_assert_msg(tp_job_run(job, &err) == 0, "%s", err.msg);
	ck_assert_ptr_null(tp_job_node_model(job, 0));
	tp_job_destroy(job);
	unlink(gm);
	free(gm);
	tp_conf_destroy(c);
}
END_TEST

START_TEST(node_share_notes)
{
	char conf[512];
	snprintf(conf, sizeof conf, "Network=mesh Dims=2\nNodeName=g1 Coords=0 "
		 "NodeTopology=%s/nodes/duo.xml\nNodeName=g2 Coords=1\n",
		 TP_TEST_DATA);
	tp_conf *c = load(conf);
	tp_job_request r;
	tp_job_request_init(&r);
	r.conf = c;
	r.stencil = "4x1";          /* no node list: a task's view */
	tp_job *job = NULL;
	tp_error err;
	ck_assert_msg(tp_job_create(&r, &job, &err) == 0, "%s", err.msg);
	int32_t tasks[2] = { 0, 1 };
	int cores[2] = { 0, 9 };   /* core 9: not in the model */
	tp_node_share sh = { .node = "g1", .tasks = tasks, .ntasks = 2,
			     .cores = cores, .ncores = 2, .want_cpus = true };
	tp_node_placement p;
	ck_assert_int_eq(tp_job_place_node(job, &sh, &p, &err), 0);
	ck_assert(!p.cpus_set && p.cpu_error);
	ck_assert_msg(strstr(p.cpu_note, "Slurm's core 9 is not in duo.xml"), "%s",
		      p.cpu_note);
	tp_node_placement_free(&p);
	sh.node = "g2";            /* no model: a remark, not an error */
	ck_assert_int_eq(tp_job_place_node(job, &sh, &p, &err), 0);
	ck_assert(!p.cpus_set && !p.cpu_error);
	ck_assert(strstr(p.cpu_note, "no NodeTopology= for node g2"));
	tp_node_placement_free(&p);
	/* the same as a code, for callers that act on it */
	ck_assert_int_eq(tp_job_preload_node(job, "g2", &err), TP_ENOMODEL);
	ck_assert_str_eq(err.msg, "no NodeTopology= for node g2");
	ck_assert_int_eq(tp_job_preload_node(job, "g1", &err), 0);
	ck_assert_int_eq(tp_job_preload_node(job, "g9", &err), TP_ENOENT);
	/* GPUs without a matrix: Slurm's split, no model needed */
	int gpus[3] = { 4, 5, 6 };
	tp_node_share gs = { .node = "g2", .tasks = tasks, .ntasks = 2,
			     .gpus = gpus, .ngpus = 3, .want_gpus = true };
	ck_assert_int_eq(tp_job_place_node(job, &gs, &p, &err), 0);
	ck_assert(p.gpus_set);
	ck_assert_int_eq(p.gpu_start[1] - p.gpu_start[0], 1);
	ck_assert_int_eq(p.gpu_start[2] - p.gpu_start[1], 2);
	ck_assert_int_eq(p.gpus[0], 4);
	ck_assert_int_eq(p.gpus[1], 5);
	ck_assert_int_eq(p.gpus[2], 6);
	tp_node_placement_free(&p);
	tp_job_destroy(job);
	tp_conf_destroy(c);
}
END_TEST

START_TEST(split_local_rank)
{
	int g[4] = { 0, 1, 2, 3 }, out[4];
	ck_assert_int_eq(tp_gpus_split_local_rank(g, 4, 1, 2, out, 4), 2);
	ck_assert_int_eq(out[0], 2);
	ck_assert_int_eq(out[1], 3);
	/* fewer GPUs than tasks: neighbours share */
	ck_assert_int_eq(tp_gpus_split_local_rank(g, 2, 3, 4, out, 4), 1);
	ck_assert_int_eq(out[0], 1);
	ck_assert_int_lt(tp_gpus_split_local_rank(g, 4, 4, 4, out, 4), 0);
	ck_assert_int_lt(tp_gpus_split_local_rank(g, 4, 0, 1, out, 2), 0);
}
END_TEST

/* A JSON graph without coordinates that is a stencil (a traced halo
 * exchange) is mapped as --stencil would map it, and a note says so. */
START_TEST(traced_stencil_mapped_as_stencil)
{
	tp_conf *c = torus8(NULL);
	tp_graph *g = NULL;
	tp_error err;
	ck_assert_int_eq(tp_graph_from_stencil(&g, "8x4x4:7pt:periodic=all:"
					       "bytes=512", 0, &err), 0);
	char *json = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&json, &len);
	fprintf(f, "{\"tasks\": 128, \"directed\": true, \"edges\": [");
	int first = 1;
	for (int32_t t = 0; t < 128; t++) {   /* both directions, half each */
		const int32_t *adj;
		const double *w;
		int32_t n = tp_graph_neighbors(g, t, &adj, &w);
		for (int32_t k = 0; k < n; k++) {
			fprintf(f, "%s[%d, %d, %g]", first ? "" : ", ", t, adj[k],
				w[k] / 2);
			first = 0;
		}
	}
	fprintf(f, "]}");
	fclose(f);
	tp_graph_destroy(g);
	tp_job_request r;
	tp_job_request_init(&r);
	r.conf = c;
	r.nodes = "n[000-015]";
	r.slots = "8";
	r.policy = "geometric";
	r.graph = (tp_job_input){ "trace.json", json, len };
	tp_job *traced = job_ok(&r);
	r.graph = (tp_job_input){ NULL, NULL, 0 };
	r.stencil = "8x4x4:7pt:periodic=all:bytes=512";
	tp_job *st = job_ok(&r);
	ck_assert_int_eq(tp_job_status(traced), TP_JOB_PLACED);
	ck_assert_int_eq(memcmp(tp_job_map(traced), tp_job_map(st),
				128 * sizeof(int32_t)), 0);
	bool noted = false;
	for (int i = 0; i < tp_job_nnotes(traced); i++)
		noted |= !strcmp(tp_job_note(traced, i), "trace.json: a regular "
				 "7-point stencil, mapped as --stencil "
				 "8x4x4:7pt:periodic=xyz:bytes=512");
	ck_assert_msg(noted, "no note: %s", tp_job_nnotes(traced) ?
		      tp_job_note(traced, 0) : "(none)");
	int dims[3];
	ck_assert_int_eq(tp_graph_grid_dims(tp_job_graph(traced), dims), 3);
	ck_assert_int_eq(dims[0], 8);
	tp_job_destroy(traced);
	tp_job_destroy(st);
	free(json);
	tp_conf_destroy(c);
}
END_TEST

/* What pictures need from a job: Slurm's block order as scored, and each
 * node's model. */
START_TEST(block_map_and_models)
{
	tp_conf *c = torus8(NULL);
	tp_job_request r;
	tp_job_request_init(&r);
	r.conf = c;
	r.nodes = "n[000-007]";
	r.slots = "2";
	r.stencil = "4x4";
	tp_job *job = NULL;
	ck_assert_int_eq(tp_job_create(&r, &job, NULL), 0);
	ck_assert_ptr_null(tp_job_block_map(job));
	ck_assert_int_eq(tp_job_run(job, NULL), 0);
	const int32_t *b = tp_job_block_map(job);
	ck_assert_ptr_nonnull(b);
	int32_t want[16];
	ck_assert_int_eq(tp_map_block(tp_job_alloc(job), 16, want, NULL), 0);
	for (int t = 0; t < 16; t++)
		ck_assert_int_eq(b[t], want[t]);
	ck_assert_int_eq(b[3], 1);
	/* no node placement asked: no models */
	ck_assert_ptr_null(tp_job_node_model(job, 0));
	tp_job_destroy(job);
	tp_conf_destroy(c);

	char conf[512];
	snprintf(conf, sizeof conf, "Network=mesh Dims=3\nNodeName=g[1-2] "
		 "CoordOrder=x-major NodeTopology=%s/nodes/nvl4.xml\n"
		 "NodeName=h1 Coords=2\n", TP_SOURCE_DIR "/conf/examples");
	c = load(conf);
	tp_job_request_init(&r);
	r.conf = c;
	r.nodes = "g2,h1";
	r.ntasks = 2;
	r.flags = TP_JOB_NODE_PLACEMENT;
	job = job_ok(&r);
	const tp_node *n = tp_job_node_model(job, 0);
	ck_assert_ptr_nonnull(n);
	ck_assert_int_eq(tp_node_ngpus(n), 4);
	ck_assert_ptr_null(tp_job_node_model(job, 1));   /* h1 has none */
	ck_assert_ptr_null(tp_job_node_model(job, 2));
	ck_assert_ptr_null(tp_job_node_model(job, -1));
	tp_job_destroy(job);
	tp_conf_destroy(c);
}
END_TEST

/* tp_job_link_loads: both orders' loads as tp_metrics_link_loads gives
 * them, whether the two passes run at once (a graph over the threshold,
 * two threads) or one after the other (one thread), for messages of one
 * size (counted) and of several (weights= per axis); either side alone;
 * refused without a pattern and before the run. */
START_TEST(link_loads_of_both_orders)
{
	tp_conf *c = torus8(NULL);
	const tp_machine *m = tp_conf_machine(c);
	int64_t nl = tp_machine_link_count(m);
	double *mine = malloc(sizeof(double) * (size_t)nl);
	double *blk = malloc(sizeof(double) * (size_t)nl);
	double *want = malloc(sizeof(double) * (size_t)nl);
	/* 786,432 messages: the counted pass splits over the threads */
	static const char *const stencils[] = { "64x64x32:7pt", "64x64x32:7pt:weights=3,2,1",
						"8x8x8:7pt" };
	for (int si = 0; si < 3; si++)
		for (int threads = 1; threads <= 2; threads++) {
			tp_job_request r;
			tp_job_request_init(&r);
			r.conf = c;
			r.nodes = "n[000-511]";
			r.slots = si < 2 ? "256" : "1";
			r.stencil = stencils[si];
			r.policy = "geometric";
			r.threads = threads;
			tp_job *job = NULL;
			ck_assert_int_eq(tp_job_create(&r, &job, NULL), 0);
			tp_error err;
			ck_assert_int_eq(tp_job_link_loads(job, mine, blk, nl, &err), TP_EINVAL);
			tp_assert_err_has(&err, "has not been run");
			ck_assert_int_eq(tp_job_run(job, NULL), 0);
			ck_assert_int_eq(tp_job_link_loads(job, mine, blk, nl, &err), 0);
			const int32_t *maps[2] = { tp_job_map(job), tp_job_block_map(job) };
			double *got[2] = { mine, blk };
			double top[2] = { 0, 0 };
			for (int side = 0; side < 2; side++) {
				ck_assert_int_eq(tp_metrics_link_loads(tp_job_graph(job),
								       tp_job_alloc(job), maps[side],
								       want, NULL, nl, NULL), 0);
				for (int64_t l = 0; l < nl; l++) {
					ck_assert_msg(got[side][l] == want[l],
						      "%s, %d threads, side %d, link %lld: %g, want %g",
						      stencils[si], threads, side, (long long)l,
						      got[side][l], want[l]);
					top[side] = got[side][l] > top[side] ? got[side][l] : top[side];
				}
			}
			ck_assert(top[0] > 0 && top[1] > 0);
			memset(blk, 0, sizeof(double) * (size_t)nl);
			ck_assert_int_eq(tp_job_link_loads(job, NULL, blk, nl, NULL), 0);
			for (int64_t l = 0; l < nl; l++)
				ck_assert(blk[l] == want[l]);   /* want: the block order's */
			ck_assert_int_eq(tp_job_link_loads(job, mine, NULL, nl - 1, &err), TP_EINVAL);
			tp_assert_err_has(&err, "room for");
			tp_job_destroy(job);
		}
	tp_job_request r;
	tp_job_request_init(&r);
	r.conf = c;
	r.nodes = "n[000-001]";
	r.ntasks = 2;
	tp_job *job = job_ok(&r);
	tp_error err;
	ck_assert_int_eq(tp_job_link_loads(job, mine, blk, nl, &err), TP_EINVAL);
	tp_assert_err_has(&err, "no communication pattern");
	ck_assert_int_eq(tp_job_link_loads(NULL, mine, blk, nl, &err), TP_EINVAL);
	tp_job_destroy(job);
	free(mine);
	free(blk);
	free(want);
	tp_conf_destroy(c);
}
END_TEST

/* The stencil graph built on a second thread while the machine and the
 * allocation load (a job that states its task count, 65,536 tasks or more)
 * is the graph built in turn, and a failing input still gets its own
 * message, first in the order they are read. */
static tp_job *stencil_job(const char *conf_path, const tp_conf *c,
			   const char *nodes, const char *stencil, int threads,
			   tp_error *err)
{
	tp_job_request r;
	tp_job_request_init(&r);
	r.conf = c;
	r.conf_path = conf_path;
	r.nodes = nodes;
	r.ntasks = 65536;
	r.stencil = stencil;
	r.policy = "block";
	r.threads = threads;
	tp_job *job = NULL;
	tp_error_clear(err);
	if (tp_job_create(&r, &job, err))
		return NULL;
	return job;
}

START_TEST(early_stencil)
{
	tp_conf *c = load("Network=torus Dims=64x32x32 Wrap=yes\n"
			  "NodeName=n[00000-65535] CoordOrder=x-major\n");
	const char *st = "64x32x32:7pt:periodic=all:bytes=3";
	tp_error err;
	tp_job *early = stencil_job(NULL, c, "n[00000-65535]", st, 2, &err);
	ck_assert_msg(early, "%s", err.msg);
	tp_job *plain = stencil_job(NULL, c, "n[00000-65535]", st, 1, &err);
	ck_assert_msg(plain, "%s", err.msg);
	const tp_graph *a = tp_job_graph(early), *b = tp_job_graph(plain);
	int32_t n = tp_graph_ntasks(a);
	ck_assert_int_eq(n, 65536);
	ck_assert_int_eq(tp_graph_ntasks(b), n);
	ck_assert_int_eq(tp_graph_nedges(a), 3 * 65536);
	ck_assert_int_eq(tp_graph_nedges(b), tp_graph_nedges(a));
	int64_t m = tp_graph_xadj(a)[n];
	ck_assert(memcmp(tp_graph_xadj(a), tp_graph_xadj(b), sizeof(int64_t) * (size_t)(n + 1)) == 0);
	ck_assert(memcmp(tp_graph_adjncy(a), tp_graph_adjncy(b), sizeof(int32_t) * (size_t)m) == 0);
	ck_assert(memcmp(tp_graph_weights(a), tp_graph_weights(b), sizeof(double) * (size_t)m) == 0);
	ck_assert_int_eq(tp_graph_coord_dims(a), 3);
	ck_assert(memcmp(tp_graph_coords(a), tp_graph_coords(b), sizeof(double) * 3 * (size_t)n) == 0);
	ck_assert(tp_graph_total_bytes(a) == 3.0 * 3 * 65536);
	ck_assert(tp_graph_total_bytes(b) == tp_graph_total_bytes(a));
	tp_job_destroy(early);
	tp_job_destroy(plain);

	/* the inputs fail in their order, the early graph given back */
	ck_assert_ptr_null(stencil_job(NULL, c, "n[00000-65534],x9", st, 2, &err));
	ck_assert_msg(strstr(err.msg, "x9"), "%s", err.msg);
	ck_assert_ptr_null(stencil_job("/nonexistent/topoplace.conf", NULL,
				       "n[00000-65535]", st, 2, &err));
	ck_assert_msg(strstr(err.msg, "/nonexistent/topoplace.conf"), "%s", err.msg);
	/* another task count: refused before any graph is built */
	ck_assert_ptr_null(stencil_job(NULL, c, "n[00000-65535]", "64x32x33:7pt",
				       2, &err));
	ck_assert_int_eq(err.code, TP_EINVAL);
	ck_assert_str_eq(err.msg, "stencil 64x32x33: 67584 tasks, but the job "
			 "has 65536 tasks");
	tp_conf_destroy(c);
}
END_TEST

/* Threads follow the CPUs the process may run on (a Slurm step's cpuset),
 * not the node's count. */
START_TEST(cpus_follow_affinity)
{
	cpu_set_t was, one;
	ck_assert_int_eq(sched_getaffinity(0, sizeof was, &was), 0);
	ck_assert_int_eq(tp__cpus(), CPU_COUNT(&was));
	int first = 0;
	while (!CPU_ISSET(first, &was))
		first++;
	CPU_ZERO(&one);
	CPU_SET(first, &one);
	ck_assert_int_eq(sched_setaffinity(0, sizeof one, &one), 0);
	int n = tp__cpus();
	ck_assert_int_eq(sched_setaffinity(0, sizeof was, &was), 0);
	ck_assert_int_eq(n, 1);
}
END_TEST

/* ---- Slurm's own order, the baseline ---- */

/* A directory with slurm.conf (the given lines) and topology.conf. */
static char *slurm_dir(const char *conf, const char *topo)
{
	char *dir = strdup("/tmp/tp-slurm-XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(dir));
	char path[512];
	snprintf(path, sizeof path, "%s/slurm.conf", dir);
	FILE *f = fopen(path, "w");
	ck_assert_ptr_nonnull(f);
	fputs(conf, f);
	fclose(f);
	if (topo) {
		snprintf(path, sizeof path, "%s/topology.conf", dir);
		ck_assert_ptr_nonnull(f = fopen(path, "w"));
		fputs(topo, f);
		fclose(f);
	}
	return dir;
}

static void slurm_dir_free(char *dir)
{
	char path[512];
	const char *names[] = { "slurm.conf", "topology.conf", "topology.yaml",
				"more.conf" };
	for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
		snprintf(path, sizeof path, "%s/%s", dir, names[i]);
		unlink(path);
	}
	rmdir(dir);
	free(dir);
}

/* n[000-007]'s order after tp_alloc_take_slurm_order, as node numbers,
 * with the slots of each ("0:1 2:1 ..."). */
static void order_of(const tp_conf *c, const char *dir, unsigned version,
		     char *out, size_t len, char *how)
{
	tp_alloc *a = NULL;
	tp_error err;
	ck_assert_int_eq(tp_alloc_from_hostlist(tp_conf_machine(c), "n[000-007]",
						1, "nodes", &a, &err), 0);
	for (int32_t i = 0; i < 8; i++)
		tp_alloc_set_slots(a, i, i + 1, &err);
	char conf[512];
	snprintf(conf, sizeof conf, "%s/slurm.conf", dir);
	ck_assert_int_eq(tp_alloc_take_slurm_order(a, conf, NULL, version, how), 0);
	size_t o = 0;
	out[0] = '\0';
	for (int32_t i = 0; i < 8; i++)
		o += (size_t)snprintf(out + o, len - o, "%s%d:%d", i ? " " : "",
				      (int)tp_alloc_node(a, i), tp_alloc_slots(a, i));
	tp_alloc_destroy(a);
}

#define LEAVES "SwitchName=l1 Nodes=n[001,003,005,007]\n" \
	       "SwitchName=l2 Nodes=n[000,002,004,006]\n" \
	       "SwitchName=top Switches=l[1-2]\n"
#define HOSTLIST "0:1 1:2 2:3 3:4 4:5 5:6 6:7 7:8"
#define BY_LEAF "1:2 3:4 5:6 7:8 0:1 2:3 4:5 6:7"

START_TEST(slurm_order_tree)
{
	tp_conf *c = torus8(NULL);
	char got[256], how[TP_ERROR_MSG_MAX];
	const unsigned v2605 = TP_SLURM_VERSION(26, 5, 3);
	char *d = slurm_dir("TopologyPlugin=topology/tree\n", LEAVES);
	order_of(c, d, v2605, got, sizeof got, how);
	ck_assert_str_eq(got, BY_LEAF);   /* slots travel with their nodes */
	ck_assert_msg(strstr(how, "leaf switch by leaf switch, as Slurm 26.05"),
		      "%s", how);
	/* before 26.05, and without a release: the hostlist's order */
	order_of(c, d, TP_SLURM_VERSION(25, 11, 7), got, sizeof got, how);
	ck_assert_str_eq(got, HOSTLIST);
	order_of(c, d, 0, got, sizeof got, how);
	ck_assert_str_eq(got, HOSTLIST);
	ck_assert_str_eq(how, "");   /* nothing to say */
	slurm_dir_free(d);
	/* keys case-insensitive, through an Include, the last line wins */
	d = slurm_dir("topologyplugin=topology/flat\nInclude more.conf\n", LEAVES);
	char more[512];
	snprintf(more, sizeof more, "%s/more.conf", d);
	FILE *f = fopen(more, "w");
	fputs("TOPOLOGYPLUGIN=topology/tree   # the tree\n", f);
	fclose(f);
	order_of(c, d, v2605, got, sizeof got, how);
	ck_assert_str_eq(got, BY_LEAF);
	slurm_dir_free(d);
	/* switched off, another selector, another plugin: the hostlist's */
	const char *off[] = {
		"TopologyPlugin=topology/tree\nSelectTypeParameters=CR_Core,CR_NO_DIST_TOPO_BLOCK\n",
		"TopologyPlugin=topology/tree\nSelectType=select/linear\n",
		"TopologyPlugin=topology/flat\n",
		"ClusterName=x\n",
	};
	for (size_t i = 0; i < sizeof off / sizeof off[0]; i++) {
		d = slurm_dir(off[i], LEAVES);
		order_of(c, d, v2605, got, sizeof got, how);
		ck_assert_msg(!strcmp(got, HOSTLIST), "%s: %s", off[i], got);
		slurm_dir_free(d);
	}
	/* a node in no leaf comes first; a node in two, its first leaf */
	d = slurm_dir("TopologyPlugin=topology/tree\n",
		      "SwitchName=l1 Nodes=n[003,005]\n"
		      "SwitchName=l2 Nodes=n[002,004,005,006]\n"
		      "SwitchName=l3 Nodes=n[001,007]\n");
	order_of(c, d, v2605, got, sizeof got, how);
	ck_assert_str_eq(got, "0:1 3:4 5:6 2:3 4:5 6:7 1:2 7:8");
	slurm_dir_free(d);
	tp_conf_destroy(c);
}
END_TEST

START_TEST(slurm_order_block_and_fallbacks)
{
	tp_conf *c = torus8(NULL);
	char got[256], how[TP_ERROR_MSG_MAX];
	const unsigned v = TP_SLURM_VERSION(26, 5, 0);
	/* blocks by their index, an empty block keeps its place; nodes in
	 * no block rank with block 0 (0 < 1), by node index */
	char *d = slurm_dir("TopologyPlugin=topology/block\n",
			    "BlockName=b0 Nodes=n[006-007]\n"
			    "BlockName=b1\n"
			    "BlockName=b2 Nodes=n[000-001]\n"
			    "BlockName=b3 Nodes=n[002-003]\n"
			    "BlockSizes=2,4\n");
	order_of(c, d, v, got, sizeof got, how);
	ck_assert_str_eq(got, "4:5 5:6 6:7 7:8 0:1 1:2 2:3 3:4");
	ck_assert_msg(strstr(how, "block by block"), "%s", how);
	slurm_dir_free(d);
	/* topology.yaml beside slurm.conf is what Slurm reads: a flat one
	 * keeps the hostlist's order (nothing to say); a ring ranks its
	 * nodes by position, here the hostlist's order */
	d = slurm_dir("TopologyPlugin=topology/tree\n", LEAVES);
	char yaml[512];
	snprintf(yaml, sizeof yaml, "%s/topology.yaml", d);
	FILE *f = fopen(yaml, "w");
	fputs("- topology: t\n  cluster_default: true\n  flat: true\n", f);
	fclose(f);
	order_of(c, d, v, got, sizeof got, how);
	ck_assert_str_eq(got, HOSTLIST);
	ck_assert_str_eq(how, "");
	f = fopen(yaml, "w");
	fputs("- topology: t\n  ring:\n    rings:\n      - ring: r\n        nodes: n[000-007]\n", f);
	fclose(f);
	order_of(c, d, v, got, sizeof got, how);
	ck_assert_str_eq(got, HOSTLIST);
	ck_assert_msg(strstr(how, "along each ring"), "%s", how);
	/* a ring in another order: its positions */
	f = fopen(yaml, "w");
	fputs("- topology: t\n  ring:\n    rings:\n      - ring: r\n        nodes: n[004-007,000-003]\n", f);
	fclose(f);
	order_of(c, d, v, got, sizeof got, how);
	ck_assert_str_eq(got, "4:5 5:6 6:7 7:8 0:1 1:2 2:3 3:4");
	slurm_dir_free(d);
	/* no topology.conf, no slurm.conf: the hostlist's order, and why */
	d = slurm_dir("TopologyPlugin=topology/tree\n", NULL);
	order_of(c, d, v, got, sizeof got, how);
	ck_assert_str_eq(got, HOSTLIST);
	ck_assert_msg(strstr(how, "topology.conf"), "%s", how);
	char conf[512];
	snprintf(conf, sizeof conf, "%s/slurm.conf", d);
	unlink(conf);
	order_of(c, d, v, got, sizeof got, how);
	ck_assert_str_eq(got, HOSTLIST);
	ck_assert_msg(strstr(how, "slurm.conf"), "%s", how);
	slurm_dir_free(d);
	tp_conf_destroy(c);
}
END_TEST

/* A job's baseline and its -n spread follow Slurm's order: the larger
 * shares go to the first nodes in it. */
START_TEST(slurm_order_job)
{
	tp_conf *c = torus8(NULL);
	char *d = slurm_dir("TopologyPlugin=topology/tree\n", LEAVES);
	char conf[512];
	snprintf(conf, sizeof conf, "%s/slurm.conf", d);
	tp_job_request r;
	tp_job_request_init(&r);
	r.conf = c;
	r.nodes = "n[000-007]";
	r.ntasks = 10;
	r.stencil = "10x1";
	r.policy = "block";
	r.slurm_conf = conf;
	r.slurm_version = TP_SLURM_VERSION(26, 5, 3);
	tp_job *job = job_ok(&r);
	const char *want[] = { "n001", "n001", "n003", "n003", "n005", "n007",
			       "n000", "n002", "n004", "n006" };
	for (int t = 0; t < 10; t++)
		ck_assert_str_eq(tp_job_task_node(job, t), want[t]);
	ck_assert_msg(strstr(tp_job_slurm_order(job), "leaf switch"), "%s",
		      tp_job_slurm_order(job));
	tp_job_destroy(job);
	/* the same with the slots in the hostlist's order (2,1,1,...) */
	r.ntasks = 0;
	r.slots = "2,1(x7)";
	r.stencil = "9x1";
	job = job_ok(&r);
	const char *want2[] = { "n001", "n003", "n005", "n007", "n000", "n000",
				"n002", "n004", "n006" };
	for (int t = 0; t < 9; t++)
		ck_assert_str_eq(tp_job_task_node(job, t), want2[t]);
	tp_job_destroy(job);
	slurm_dir_free(d);
	tp_conf_destroy(c);
}
END_TEST

/* ---- Slurm's step layout (slurm_order.c): one case per rule ---- */

static void put_yaml(const char *dir, const char *text)
{
	char path[512];
	snprintf(path, sizeof path, "%s/topology.yaml", dir);
	FILE *f = fopen(path, "w");
	ck_assert_ptr_nonnull(f);
	fputs(text, f);
	fclose(f);
}

/* The baseline (policy block) of ntasks on nodes with distribution dist,
 * as node numbers ("1 1 3 ..."), and Slurm's order's words in how. */
static void layout_of(const tp_conf *c, const char *dir, unsigned version,
		      const char *partition, const char *nodes, int64_t ntasks,
		      const char *slots, const char *dist, char *out, size_t len,
		      char *how)
{
	char conf[512];
	snprintf(conf, sizeof conf, "%s/slurm.conf", dir);
	tp_job_request r;
	tp_job_request_init(&r);
	r.conf = c;
	r.nodes = nodes;
	r.ntasks = ntasks;
	r.slots = slots;
	r.policy = "block";
	r.slurm_conf = conf;
	r.partition = partition;
	r.slurm_version = version;
	tp_job *job = NULL;
	tp_error err;
	tp_error_clear(&err);
	ck_assert_msg(tp_job_create_step(&r, dist, &job, &err) == 0, "create: %s",
		      err.msg);
	ck_assert_msg(tp_job_run(job, &err) == 0, "run: %s", err.msg);
	size_t o = 0;
	out[0] = '\0';
	for (int32_t t = 0; t < tp_job_ntasks(job); t++)
		o += (size_t)snprintf(out + o, len - o, "%s%d", t ? " " : "",
				      atoi(tp_job_task_node(job, t) + 1));
	snprintf(how, TP_ERROR_MSG_MAX, "%s", tp_job_slurm_order(job));
	tp_job_destroy(job);
}

#define V2605 TP_SLURM_VERSION(26, 5, 3)
#define N8 "n[000-007]"

/* srun's distribution: cyclic for no more tasks than nodes (launch.c),
 * and cyclic and plane ignore the topology's ranks; -m as given. */
START_TEST(layout_distribution)
{
	tp_conf *c = torus8(NULL);
	char got[512], how[TP_ERROR_MSG_MAX];
	char *d = slurm_dir("TopologyPlugin=topology/tree\n", LEAVES);
	layout_of(c, d, V2605, NULL, N8, 8, NULL, NULL, got, sizeof got, how);
	ck_assert_str_eq(got, "0 1 2 3 4 5 6 7");
	ck_assert_msg(strstr(how, "cyclic, srun's default for 8 tasks on 8 nodes"),
		      "%s", how);
	layout_of(c, d, V2605, NULL, N8, 16, NULL, NULL, got, sizeof got, how);
	ck_assert_str_eq(got, "1 1 3 3 5 5 7 7 0 0 2 2 4 4 6 6");
	ck_assert_msg(strstr(how, "block, srun's default for 16 tasks on 8 "
			     "nodes, leaf switch by leaf switch"), "%s", how);
	layout_of(c, d, V2605, NULL, N8, 8, NULL, "block", got, sizeof got, how);
	ck_assert_str_eq(got, "1 3 5 7 0 2 4 6");
	layout_of(c, d, V2605, NULL, N8, 11, NULL, "cyclic", got, sizeof got, how);
	ck_assert_str_eq(got, "0 1 2 3 4 5 6 7 0 1 2");
	/* plane=2: one task a node first, then up to the plane each
	 * (_task_layout_plane) */
	layout_of(c, d, V2605, NULL, N8, 11, NULL, "plane=2", got, sizeof got, how);
	ck_assert_str_eq(got, "0 0 1 1 2 2 3 4 5 6 7");
	layout_of(c, d, V2605, NULL, N8, 20, NULL, "plane=2", got, sizeof got, how);
	ck_assert_str_eq(got, "0 0 1 1 2 2 3 3 4 4 5 5 6 6 7 7 0 0 1 1");
	/* the second level and the Pack flag do not change the nodes' order;
	 * Pack is said to be unmodelled */
	layout_of(c, d, V2605, NULL, N8, 16, NULL, "*:cyclic,Pack", got, sizeof got,
		  how);
	ck_assert_str_eq(got, "1 1 3 3 5 5 7 7 0 0 2 2 4 4 6 6");
	ck_assert_msg(strstr(how, "not modelled for ,Pack"), "%s", how);
	layout_of(c, d, V2605, NULL, N8, 8, NULL, "arbitrary", got, sizeof got, how);
	ck_assert_msg(strstr(how, "not modelled for -m arbitrary"), "%s", how);
	/* the slots given (SLURM_TASKS_PER_NODE) in the hostlist's order */
	layout_of(c, d, V2605, NULL, N8, 0, "2,1(x7)", "cyclic", got, sizeof got, how);
	ck_assert_str_eq(got, "0 1 2 3 4 5 6 7 0");
	/* what srun refuses, one line */
	const char *bad[] = { "blok", "plane=0", "plane=x", "plane=2:cyclic",
			      "block,Packed", "cyclic2" };
	for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
		tp_job_request r;
		tp_job_request_init(&r);
		r.conf = c;
		r.nodes = N8;
		r.ntasks = 8;
		tp_job *job = NULL;
		tp_error err;
		tp_error_clear(&err);
		ck_assert_int_eq(tp_job_create_step(&r, bad[i], &job, &err), TP_EINVAL);
		ck_assert_ptr_null(job);
		ck_assert_msg(strstr(err.msg, bad[i]) && !strchr(err.msg, '\n'), "%s",
			      err.msg);
	}
	/* before 26.05: block in the hostlist's order, the same counts */
	layout_of(c, d, TP_SLURM_VERSION(25, 11, 7), NULL, N8, 11, NULL, NULL, got,
		  sizeof got, how);
	ck_assert_str_eq(got, "0 0 1 1 2 2 3 4 5 6 7");
	layout_of(c, d, TP_SLURM_VERSION(24, 11, 7), NULL, N8, 3, NULL, NULL, got,
		  sizeof got, how);
	ck_assert_str_eq(got, "0 1 2");
	ck_assert_msg(strstr(how, "cyclic, srun's default for 3 tasks"), "%s", how);
	slurm_dir_free(d);
	tp_conf_destroy(c);
}
END_TEST

/* TopologyParam=SwitchAsNodeRank / BlockAsNodeRank sort slurmctld's node
 * table (read_config.c): every distribution goes in that order, on every
 * release; CR_NO_DIST_TOPO_BLOCK keeps block in it. */
START_TEST(layout_node_rank)
{
	tp_conf *c = torus8(NULL);
	char got[512], how[TP_ERROR_MSG_MAX];
	char *d = slurm_dir("TopologyPlugin=topology/tree\nTopologyParam=SwitchAsNodeRank\n",
			    LEAVES);
	layout_of(c, d, V2605, NULL, N8, 8, NULL, NULL, got, sizeof got, how);
	ck_assert_str_eq(got, "1 3 5 7 0 2 4 6");
	ck_assert_msg(strstr(how, "SwitchAsNodeRank"), "%s", how);
	layout_of(c, d, TP_SLURM_VERSION(24, 11, 7), NULL, N8, 16, NULL, "cyclic", got,
		  sizeof got, how);
	ck_assert_str_eq(got, "1 3 5 7 0 2 4 6 1 3 5 7 0 2 4 6");
	slurm_dir_free(d);
	/* the flag of the other kind does nothing */
	d = slurm_dir("TopologyPlugin=topology/tree\nTopologyParam=BlockAsNodeRank\n",
		      LEAVES);
	layout_of(c, d, V2605, NULL, N8, 8, NULL, NULL, got, sizeof got, how);
	ck_assert_str_eq(got, "0 1 2 3 4 5 6 7");
	slurm_dir_free(d);
	d = slurm_dir("TopologyPlugin=topology/block\nTopologyParam=Dragonfly,BlockAsNodeRank\n",
		      "BlockName=b0 Nodes=n[004-007]\nBlockName=b1 Nodes=n[000-003]\n"
		      "BlockSizes=4\n");
	layout_of(c, d, V2605, NULL, N8, 8, NULL, "cyclic", got, sizeof got, how);
	ck_assert_str_eq(got, "4 5 6 7 0 1 2 3");
	slurm_dir_free(d);
	/* blocks rank from 1: a node in none (rank 0) comes first */
	d = slurm_dir("TopologyPlugin=topology/block\nTopologyParam=BlockAsNodeRank\n",
		      "BlockName=b0 Nodes=n[000-002]\nBlockName=b1 Nodes=n[003-006]\n"
		      "BlockSizes=3\n");
	layout_of(c, d, V2605, NULL, N8, 8, NULL, NULL, got, sizeof got, how);
	ck_assert_str_eq(got, "7 0 1 2 3 4 5 6");
	slurm_dir_free(d);
	/* CR_NO_DIST_TOPO_BLOCK: block in the node order */
	d = slurm_dir("TopologyPlugin=topology/tree\n"
		      "SelectTypeParameters=CR_Core,CR_NO_DIST_TOPO_BLOCK\n", LEAVES);
	layout_of(c, d, V2605, NULL, N8, 16, NULL, NULL, got, sizeof got, how);
	ck_assert_str_eq(got, "0 0 1 1 2 2 3 3 4 4 5 5 6 6 7 7");
	ck_assert_msg(strstr(how, "CR_NO_DIST_TOPO_BLOCK"), "%s", how);
	slurm_dir_free(d);
	tp_conf_destroy(c);
}
END_TEST

/* The ranks of ring, torus3d and flat {alpha_step_rank} (topology_*.c). */
START_TEST(layout_ranks)
{
	tp_conf *c = torus8(NULL);
	char got[512], how[TP_ERROR_MSG_MAX];
	char *d = slurm_dir("NodeName=n[000-007]\nPartitionName=r Nodes=ALL Topology=r\n"
			    "PartitionName=a Nodes=ALL Topology=a\n"
			    "TopologyParam=SwitchAsNodeRank\n", NULL);
	put_yaml(d, "- topology: pod\n  cluster_default: true\n  torus3d:\n"
		 "    toruses:\n      - name: p\n        dims: {x: 4, y: 2, z: 1}\n"
		 "        nodes: n[000-007]\n"
		 "- topology: r\n  ring:\n    rings:\n      - ring: r0\n"
		 "        nodes: n[000-007]\n"
		 "- topology: a\n  flat:\n    alpha_step_rank: true\n"
		 "- topology: t\n  tree:\n    switches:\n      - switch: l1\n"
		 "        nodes: n[001,003,005,007]\n      - switch: l2\n"
		 "        nodes: n[000,002,004,006]\n");
	/* the whole 4x2 torus: Morton codes x0 y0 x1 */
	layout_of(c, d, V2605, NULL, N8, 16, NULL, NULL, got, sizeof got, how);
	ck_assert_str_eq(got, "0 0 1 1 4 4 5 5 2 2 3 3 6 6 7 7");
	ck_assert_msg(strstr(how, "Morton"), "%s", how);
	/* part of it: coordinates from the smallest wrap-aware box, x 3..0 */
	layout_of(c, d, V2605, NULL, "n[000,003,004,007]", 8, NULL, NULL, got,
		  sizeof got, how);
	ck_assert_str_eq(got, "3 3 0 0 7 7 4 4");
	/* a ring: from the allocation's start after its gap */
	layout_of(c, d, V2605, "r", "n[000-001,006-007]", 8, NULL, NULL, got,
		  sizeof got, how);
	ck_assert_str_eq(got, "6 6 7 7 0 0 1 1");
	layout_of(c, d, V2605, "r", "n[000-001,006-007]", 4, NULL, NULL, got,
		  sizeof got, how);
	ck_assert_str_eq(got, "0 1 6 7");   /* cyclic: no ranks */
	/* the tree is not the default: SwitchAsNodeRank does not apply */
	layout_of(c, d, V2605, "t", N8, 8, NULL, NULL, got, sizeof got, how);
	ck_assert_str_eq(got, "0 1 2 3 4 5 6 7");
	slurm_dir_free(d);
	/* alpha_step_rank: block by name, where the node table is not */
	d = slurm_dir("NodeName=n[000-007]\nPartitionName=a Nodes=ALL Topology=a\n"
		      "TopologyParam=SwitchAsNodeRank\n", NULL);
	put_yaml(d, "- topology: t\n  cluster_default: true\n  tree:\n    switches:\n"
		 "      - switch: l1\n        nodes: n[001,003,005,007]\n"
		 "      - switch: l2\n        nodes: n[000,002,004,006]\n"
		 "- topology: a\n  flat:\n    alpha_step_rank: true\n");
	layout_of(c, d, V2605, "a", N8, 8, NULL, "block", got, sizeof got, how);
	ck_assert_str_eq(got, "0 1 2 3 4 5 6 7");
	ck_assert_msg(strstr(how, "alpha_step_rank"), "%s", how);
	layout_of(c, d, V2605, "a", N8, 8, NULL, NULL, got, sizeof got, how);
	ck_assert_str_eq(got, "1 3 5 7 0 2 4 6");   /* cyclic: the table's */
	slurm_dir_free(d);
	tp_conf_destroy(c);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("job");
	TCase *tc = tcase_create("core");
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, policy_order);
	tcase_add_test(tc, budget_order);
	tcase_add_test(tc, budget_launch_default);
	tcase_add_test(tc, thread_limits);
	tcase_add_test(tc, slots_bound_tasks);
	tcase_add_test(tc, spread_within_capacity);
	tcase_add_test(tc, task_count_from_pattern);
	tcase_add_test(tc, no_pattern);
	tcase_add_test(tc, never_worse_than_block);
	tcase_add_test(tc, auto_margin);
	tcase_add_test(tc, geometric_falls_back_to_graph);
	tcase_add_test(tc, node_share_equals_whole_job);
	tcase_add_test(tc, gpu_link_bandwidth_key);
	tcase_add_test(tc, node_share_notes);
	tcase_add_test(tc, require_models_code);
	tcase_add_test(tc, models_loaded_by_create);
	tcase_add_test(tc, split_local_rank);
	tcase_add_test(tc, traced_stencil_mapped_as_stencil);
	tcase_add_test(tc, block_map_and_models);
	tcase_add_test(tc, link_loads_of_both_orders);
	tcase_add_test(tc, early_stencil);
	tcase_add_test(tc, cpus_follow_affinity);
	tcase_add_test(tc, slurm_order_tree);
	tcase_add_test(tc, slurm_order_block_and_fallbacks);
	tcase_add_test(tc, slurm_order_job);
	tcase_add_test(tc, layout_distribution);
	tcase_add_test(tc, layout_node_rank);
	tcase_add_test(tc, layout_ranks);
	suite_add_tcase(s, tc);
	return tp_test_run(s);
}
