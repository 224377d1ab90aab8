/* Unit tests: a training job's parallel layout (core/src/pattern/parallel.c),
 * its step graph, its own candidate (core/src/map/parmap.c) and the job
 * (tp_job_create_parallel) on a block network and a switch tree. */
#include "testutil.h"

#include "pattern/pattern_internal.h"
#include "map/parmap.h"
#include "net/machine_internal.h"
#include <topoplace/conf.h>
#include <topoplace/job.h>
#include <topoplace/predict.h>

#define MIB 1048576.0

static tp__parallel parse_ok(const char *spec, int64_t ntasks)
{
	tp__parallel p;
	tp_error err;
	tp_error_clear(&err);
	int rc = tp__parallel_parse(spec, ntasks, &p, &err);
	ck_assert_msg(rc == 0, "%s: %s", spec, err.msg);
	return p;
}

/* The group of rank r of a kind: every rank sharing the other coordinates. */
static void assert_strides(const tp__parallel *p, int64_t tp, int64_t cp,
			   int64_t ep, int64_t dp, int64_t pp)
{
	ck_assert_int_eq(p->stride[TP__PAR_TP], tp);
	ck_assert_int_eq(p->stride[TP__PAR_CP], cp);
	ck_assert_int_eq(p->stride[TP__PAR_EP], ep);
	ck_assert_int_eq(p->stride[TP__PAR_DP], dp);
	ck_assert_int_eq(p->stride[TP__PAR_PP], pp);
}

/* Bytes of edge {u, v} in g, 0 when there is none. */
static double edge(const tp_graph *g, int32_t u, int32_t v)
{
	const int32_t *adj;
	const double *w;
	int32_t n = tp_graph_neighbors(g, u, &adj, &w);
	for (int32_t i = 0; i < n; i++)
		if (adj[i] == v)
			return w[i];
	return 0;
}

static tp_graph *graph_ok(const char *spec, int64_t ntasks, const int32_t *map)
{
	tp_graph *g = NULL;
	tp_error err;
	tp_error_clear(&err);
	ck_assert_msg(tp_graph_from_parallel(&g, spec, ntasks, map, &err) == 0,
		      "%s: %s", spec, err.msg);
	return g;
}

START_TEST(megatron_default)
{
	/* tp-cp-ep-dp-pp: tp fastest, pp slowest; dp what 16 tasks leave */
	tp__parallel p = parse_ok("tp=2,pp=2,cp=2", 16);
	ck_assert_int_eq(p.size[TP__PAR_DP], 2);
	ck_assert_int_eq(p.ntasks, 16);
	assert_strides(&p, 1, 2, 4, 4, 8);
	/* rank 13 = tp 1 + cp 0*2 + dp 1*4 + pp 1*8 */
	ck_assert_int_eq(tp__parallel_coord(&p, 13, TP__PAR_TP), 1);
	ck_assert_int_eq(tp__parallel_coord(&p, 13, TP__PAR_CP), 0);
	ck_assert_int_eq(tp__parallel_coord(&p, 13, TP__PAR_DP), 1);
	ck_assert_int_eq(tp__parallel_coord(&p, 13, TP__PAR_PP), 1);
	/* Megatron's own spelling gives the same */
	tp__parallel q = parse_ok("tp=2,cp=2,ep=1,pp=2,order=tp-cp-ep-dp-pp", 16);
	assert_strides(&q, 1, 2, 4, 4, 8);
	ck_assert_int_eq(q.size[TP__PAR_DP], 2);
	char d[200];
	tp__parallel_describe(&q, d, sizeof d);
	ck_assert_str_eq(d, "tp=2,cp=2,ep=1,dp=2,pp=2,order=tp-cp-ep-dp-pp,"
			 "bytes=tp:64,cp:32,ep:16,dp:8,pp:1,micro=2");
	/* micro= times the pipeline alone: the volumes stay; with model= it
	 * is model's M, whose volumes scale with it */
	tp__parallel m = parse_ok("tp=2,cp=2,pp=2,micro=16", 16);
	ck_assert_double_eq(m.micro, 16);
	ck_assert_double_eq(m.bytes[TP__PAR_PP], 1);
	tp__parallel m1 = parse_ok("tp=2,pp=2,model=hidden:8,layers:2,seq:8", 16);
	tp__parallel m4 = parse_ok("tp=2,pp=2,micro=4,model=hidden:8,layers:2,seq:8", 16);
	ck_assert_double_eq(m1.micro, 2);
	ck_assert_double_eq(m4.micro, 4);
	ck_assert_double_eq_tol(m4.bytes[TP__PAR_PP], 2 * m1.bytes[TP__PAR_PP],
				1e-12 * m4.bytes[TP__PAR_PP]);
}
END_TEST

START_TEST(permuted_and_mesh)
{
	/* dp fastest: rank 0's data-parallel peer is rank 1 */
	tp__parallel p = parse_ok("tp=2,pp=2,dp=2,order=dp-tp-pp", 0);
	ck_assert_int_eq(p.ntasks, 8);
	ck_assert_int_eq(p.stride[TP__PAR_DP], 1);
	ck_assert_int_eq(p.stride[TP__PAR_TP], 2);
	ck_assert_int_eq(p.stride[TP__PAR_PP], 4);
	tp_graph *g = graph_ok("tp=2,pp=2,dp=2,order=dp-tp-pp", 8, NULL);
	ck_assert(edge(g, 0, 2) == 64 * MIB);   /* TP pair */
	ck_assert(edge(g, 0, 1) == 8 * MIB);    /* DP pair */
	ck_assert(edge(g, 0, 4) == 1 * MIB);    /* PP: stage 0 -> 1 */
	tp_graph_destroy(g);
	/* torchtitan's mesh, outermost first: [pp, dp, cp, tp] is
	 * order=tp-cp-dp-pp; commas or dashes */
	tp__parallel m1 = parse_ok("tp=4,cp=2,pp=2,mesh=pp,dp,cp,tp", 32);
	tp__parallel m2 = parse_ok("tp=4,cp=2,pp=2,mesh=pp-dp-cp-tp", 32);
	tp__parallel o = parse_ok("tp=4,cp=2,pp=2,order=tp-cp-dp-pp", 32);
	for (int k = 0; k < TP__PAR_KINDS; k++) {
		ck_assert_int_eq(m1.stride[k], o.stride[k]);
		ck_assert_int_eq(m2.stride[k], o.stride[k]);
	}
	ck_assert_int_eq(o.stride[TP__PAR_TP], 1);
	ck_assert_int_eq(o.stride[TP__PAR_CP], 4);
	ck_assert_int_eq(o.stride[TP__PAR_DP], 8);
	ck_assert_int_eq(o.stride[TP__PAR_PP], 16);
	/* the mesh goes on after a comma, then bytes= after it */
	tp__parallel mb = parse_ok("tp=2,mesh=dp,tp,bytes=tp:10,dp:3", 8);
	ck_assert_int_eq(mb.stride[TP__PAR_TP], 1);
	ck_assert_int_eq(mb.stride[TP__PAR_DP], 2);
	ck_assert(mb.bytes[TP__PAR_TP] == 10 && mb.bytes[TP__PAR_DP] == 3);
	ck_assert(mb.bytes[TP__PAR_PP] == 1);   /* the default stays */
}
END_TEST

START_TEST(dp_defaulted)
{
	tp__parallel p = parse_ok("tp=4,pp=2", 32);
	ck_assert_int_eq(p.size[TP__PAR_DP], 4);
	tp_error err;
	tp_error_clear(&err);
	ck_assert_int_eq(tp__parallel_parse("tp=4,pp=2", 30, &p, &err), TP_EINVAL);
	tp_assert_err_has(&err, "tp x cp x ep x pp = 8 does not divide the 30 tasks");
	ck_assert_int_eq(tp__parallel_parse("tp=4,pp=2", 0, &p, &err), TP_EINVAL);
	tp_assert_err_has(&err, "no dp= and no task count");
	/* dp given: the product must be the task count */
	ck_assert_int_eq(tp__parallel_parse("tp=4,pp=2,dp=3", 32, &p, &err), TP_EINVAL);
	tp_assert_err_has(&err, "tp x cp x ep x dp x pp = 24, but the job has 32 tasks");
}
END_TEST

/* An MoE step's gradients, as Megatron's DDP all-reduces them: the dense
 * parameters' over ep x dp (ring 0-1-2-3: rank = ep + 2 dp), the experts'
 * over dp alone (0-2, 1-3), half of dp's 8 MiB each, each its own phase
 * (TP__PAR_DP, TP__PAR_EDP) of the step's time. */
START_TEST(expert_data_parallel)
{
	tp__parallel p = parse_ok("tp=1,ep=2,dp=2,bytes=ep:0", 4);
	tp_error err;
	tp_error_clear(&err);
	tp_graph *g = NULL;
	ck_assert_int_eq(tp__parallel_graph_kinds(&p, NULL, 1u << TP__PAR_DP, &g, &err), 0);
	ck_assert_int_eq(tp_graph_nedges(g), 4);
	ck_assert(edge(g, 0, 1) == 3 * MIB && edge(g, 1, 2) == 3 * MIB);
	ck_assert(edge(g, 2, 3) == 3 * MIB && edge(g, 0, 3) == 3 * MIB);
	ck_assert(edge(g, 0, 2) == 0);
	tp_graph_destroy(g);
	ck_assert_int_eq(tp__parallel_graph_kinds(&p, NULL, 1u << TP__PAR_EDP, &g, &err), 0);
	ck_assert_int_eq(tp_graph_nedges(g), 2);
	ck_assert(edge(g, 0, 2) == 4 * MIB && edge(g, 1, 3) == 4 * MIB);
	ck_assert(edge(g, 0, 1) == 0);
	tp_graph_destroy(g);
	/* the whole step has both */
	g = graph_ok("tp=1,ep=2,dp=2,bytes=ep:0", 4, NULL);
	ck_assert_int_eq(tp_graph_nedges(g), 6);
	ck_assert(edge(g, 0, 2) == 4 * MIB && edge(g, 0, 1) == 3 * MIB);
	tp_graph_destroy(g);
	/* without experts one ring, all of dp's bytes, no experts' phase */
	p = parse_ok("tp=1,dp=4", 4);
	ck_assert_int_eq(tp__parallel_graph_kinds(&p, NULL, 1u << TP__PAR_EDP, &g, &err), 0);
	ck_assert_int_eq(tp_graph_nedges(g), 0);
	tp_graph_destroy(g);
	g = graph_ok("tp=1,dp=4", 4, NULL);
	ck_assert(edge(g, 0, 1) == 6 * MIB);
	tp_graph_destroy(g);
}
END_TEST

START_TEST(expert_parallel)
{
	/* ep=4 over 4 ranks: an all-to-all (16 MiB / 4 a pair) and, as the
	 * replicas of one dense shard (same tp and pp), the dense DP ring
	 * 0-1-2-3 (half of 8 MiB, x 3/4 an edge); the experts' DP has one
	 * rank (dp=1): none */
	tp_graph *g = graph_ok("tp=1,ep=4,pp=1", 4, NULL);
	ck_assert_int_eq(tp_graph_nedges(g), 6);
	ck_assert(edge(g, 0, 1) == 4 * MIB + 3 * MIB);
	ck_assert(edge(g, 0, 2) == 4 * MIB);
	ck_assert(edge(g, 0, 3) == 4 * MIB + 3 * MIB);
	ck_assert(edge(g, 1, 3) == 4 * MIB);
	tp_graph_destroy(g);
	/* tp=2, ep=2: EP peers two apart (ep varies after tp and cp) */
	tp__parallel p = parse_ok("tp=2,ep=2", 8);
	ck_assert_int_eq(p.stride[TP__PAR_EP], 2);
	ck_assert_int_eq(p.size[TP__PAR_DP], 2);
	g = graph_ok("tp=2,ep=2,bytes=dp:0", 8, NULL);
	ck_assert(edge(g, 0, 2) == 8 * MIB);     /* 16 / 2 */
	ck_assert(edge(g, 0, 1) == 64 * MIB);
	ck_assert(edge(g, 0, 4) == 0);           /* dp only: bytes dp:0 */
	tp_graph_destroy(g);
}
END_TEST

/* What u sends v in g (the time model's one-way bytes). */
static double sends(const tp_graph *g, int32_t u, int32_t v)
{
	for (int64_t e = g->xadj[u]; e < g->xadj[u + 1]; e++)
		if (g->adjncy[e] == v)
			return tp__graph_w_exchange(g, u, e);
	return 0;
}

/* The all-to-all as the time model takes it, step by step (the pairwise
 * exchange): in step d member i sends bytes / ep to member i + d alone,
 * and the steps together send what every pair at once does.  ep=4, 16 MiB:
 * 4 MiB a pair each way. */
START_TEST(expert_pairwise_steps)
{
	tp__parallel p = parse_ok("tp=1,ep=4,pp=1,bytes=dp:0", 4);
	tp_error err;
	tp_graph *all = NULL;
	ck_assert_int_eq(tp__parallel_graph_stages(&p, NULL, 1u << TP__PAR_EP, 0, 0,
						   &all, &err), 0);
	double sum[4][4] = { { 0 } };
	for (int64_t d = 1; d < 4; d++) {
		tp_graph *g = NULL;
		ck_assert_int_eq(tp__parallel_graph_stages(&p, NULL, 1u << TP__PAR_EP,
							   0, d, &g, &err), 0);
		/* d = 2 pairs 0-2 and 1-3 both ways: two edges */
		ck_assert_int_eq(tp_graph_nedges(g), d == 2 ? 2 : 4);
		for (int32_t u = 0; u < 4; u++)
			for (int32_t v = 0; v < 4; v++) {
				double b = sends(g, u, v);
				ck_assert_msg(b == (v == (u + d) % 4 ? 4 * MIB : 0),
					      "step %d: %d -> %d %g", (int)d, u, v, b);
				sum[u][v] += b;
			}
		tp_graph_destroy(g);
	}
	for (int32_t u = 0; u < 4; u++)
		for (int32_t v = 0; v < 4; v++)
			ck_assert(sum[u][v] == (u == v ? 0 : 4 * MIB) &&
				  sends(all, u, v) == sum[u][v]);
	tp_graph_destroy(all);
}
END_TEST

START_TEST(context_parallel)
{
	/* tp=2, cp=2, dp=2 (8 tasks): CP pair {0, 2} at 32 MiB; the DP ring of
	 * tp rank 0 runs over cp and dp: 0-2-4-6 at 8 x 3/4 */
	tp_graph *g = graph_ok("tp=2,cp=2,pp=1", 8, NULL);
	ck_assert(edge(g, 0, 1) == 64 * MIB);
	ck_assert(edge(g, 0, 2) == 32 * MIB + 6 * MIB);
	ck_assert(edge(g, 0, 6) == 6 * MIB);
	ck_assert(edge(g, 0, 4) == 0);
	ck_assert(edge(g, 2, 4) == 6 * MIB);
	tp_graph_destroy(g);
}
END_TEST

START_TEST(small_graph)
{
	/* tp=2, pp=2, dp=2 on 8 ranks, every edge and its bytes */
	tp_graph *g = graph_ok("tp=2,pp=2", 8, NULL);
	ck_assert_int_eq(tp_graph_ntasks(g), 8);
	/* 4 TP pairs, 4 DP pairs, 4 PP pairs */
	ck_assert_int_eq(tp_graph_nedges(g), 12);
	for (int r = 0; r < 8; r += 2)
		ck_assert(edge(g, r, r + 1) == 64 * MIB);
	ck_assert(edge(g, 0, 2) == 8 * MIB && edge(g, 1, 3) == 8 * MIB);
	ck_assert(edge(g, 4, 6) == 8 * MIB && edge(g, 5, 7) == 8 * MIB);
	for (int r = 0; r < 4; r++)
		ck_assert(edge(g, r, r + 4) == 1 * MIB);
	ck_assert(tp_graph_total_bytes(g) == 4 * 64 * MIB + 4 * 8 * MIB + 4 * MIB);
	tp_graph_destroy(g);
	/* a ring of 4: each edge B x 3/4 */
	g = graph_ok("tp=4,pp=1,bytes=tp:4", 4, NULL);
	ck_assert_int_eq(tp_graph_nedges(g), 4);
	ck_assert(edge(g, 0, 1) == 3 * MIB && edge(g, 3, 0) == 3 * MIB);
	ck_assert(edge(g, 0, 2) == 0);
	tp_graph_destroy(g);
}
END_TEST

START_TEST(ring_follows_map)
{
	/* ranks 0, 2 on node 0 and 1, 3 on node 1: NCCL's ring goes
	 * 0-2-1-3: two crossings, not four */
	const int32_t map[4] = { 0, 1, 0, 1 };
	tp_graph *g = graph_ok("tp=4,bytes=tp:4", 4, map);
	ck_assert(edge(g, 0, 2) == 3 * MIB);
	ck_assert(edge(g, 2, 1) == 3 * MIB);
	ck_assert(edge(g, 1, 3) == 3 * MIB);
	ck_assert(edge(g, 3, 0) == 3 * MIB);
	ck_assert(edge(g, 0, 1) == 0);
	tp_graph_destroy(g);
}
END_TEST

/* model=: each kind's bytes from the model's sizes (parallel.c's rule),
 * in MiB a rank a step. */
START_TEST(model_volumes)
{
	/* Llama-2-70B-like, 128 GPUs: a = 4096 x 8192 x 2 B = 64 MiB, 20
	 * layers a stage, 4 micro-batches (pp: none given) */
	tp__parallel p = parse_ok("tp=8,pp=4,model=hidden:8192,layers:80,"
				  "seq:4096,mbs:1", 128);
	ck_assert_int_eq(p.size[TP__PAR_DP], 4);
	ck_assert_double_eq_tol(p.bytes[TP__PAR_TP], 4 * 20 * 4 * 64, 1e-9);
	ck_assert_double_eq_tol(p.bytes[TP__PAR_PP], 4 * 64, 1e-9);
	ck_assert_double_eq_tol(p.bytes[TP__PAR_CP], 3 * 20 * 4 * 64, 1e-9);
	ck_assert_double_eq_tol(p.bytes[TP__PAR_EP], 0, 1e-9);
	/* 12 x 80 x 8192^2 parameters over tp x pp = 32, 2 bytes each */
	ck_assert_double_eq_tol(p.bytes[TP__PAR_DP],
				12.0 * 80 * 8192 * 8192 * 2 / 32 / MIB, 1e-6);
	/* gbs: 1024 / (mbs 1 x ep 1 x dp 4) = 256 micro-batches */
	p = parse_ok("tp=8,pp=4,model=hidden:8192,layers:80,seq:4096,gbs:1024", 128);
	ck_assert_double_eq_tol(p.bytes[TP__PAR_TP], 4 * 20 * 256 * 64, 1e-9);
	ck_assert_double_eq_tol(p.bytes[TP__PAR_PP], 256 * 64, 1e-9);
	/* bytes= overrides the kind it names, the rest stays derived */
	p = parse_ok("tp=8,pp=4,model=hidden:8192,layers:80,seq:4096,bytes=dp:12", 128);
	ck_assert_double_eq_tol(p.bytes[TP__PAR_DP], 12, 1e-9);
	ck_assert_double_eq_tol(p.bytes[TP__PAR_TP], 4 * 20 * 4 * 64, 1e-9);
	/* MoE: 64 experts over ep=8, top-2; a = 4096 x 4096 x 2 B = 32 MiB */
	p = parse_ok("ep=8,pp=2,model=hidden:4096,layers:32,seq:4096,micro:8,"
		     "experts:64,topk:2", 64);
	ck_assert_int_eq(p.size[TP__PAR_DP], 4);
	ck_assert_double_eq_tol(p.bytes[TP__PAR_TP], 4 * 16 * 8 * 32, 1e-9);
	ck_assert_double_eq_tol(p.bytes[TP__PAR_EP], 4 * 16 * 8 * 32 * 2, 1e-9);
	ck_assert_double_eq_tol(p.bytes[TP__PAR_PP], 8 * 32, 1e-9);
	/* a layer: attention 4H^2, 8 experts of 8H^2 on the rank */
	ck_assert_double_eq_tol(p.bytes[TP__PAR_DP],
				2.0 * 16 * 4096 * 4096 * (4 + 8 * 8) / MIB, 1e-6);
	/* context parallel: each rank holds seq / cp */
	p = parse_ok("tp=2,cp=4,model=hidden:1024,layers:4,seq:8192,micro:2", 16);
	ck_assert_double_eq_tol(p.bytes[TP__PAR_CP], 3 * 4 * 4 * 2 * 4, 1e-9);
	ck_assert_double_eq_tol(p.bytes[TP__PAR_TP], 4 * 4 * 2 * 4, 1e-9);
	ck_assert_double_eq_tol(p.bytes[TP__PAR_DP], 2.0 * 4 * 1024 * 1024 * 12 / 2 / MIB,
				1e-9);
	/* the items carry on after model= and stop at the next key */
	p = parse_ok("model=hidden:1024,layers:4,seq:8192,tp=2,dp=1", 0);
	ck_assert_int_eq(p.size[TP__PAR_TP], 2);
	ck_assert_double_eq_tol(p.bytes[TP__PAR_DP], 2.0 * 4 * 1024 * 1024 * 12 / 2 / MIB,
				1e-9);
}
END_TEST

START_TEST(bad_input)
{
	static const struct { const char *spec; int64_t n; const char *frag; } bad[] = {
		{ "", 8, "empty" },
		{ "tp=2,foo=3", 8, "unknown key 'foo'" },
		{ "tp=0", 8, "tp=0: a group has at least 1 rank" },
		{ "tp=-1", 8, "tp=-1: not a count" },
		{ "tp=2x", 8, "tp=2x: not a count" },
		{ "pp=", 8, "pp=: no value" },
		{ "tp=99999999999", 8, "too large" },
		{ "tp=65536,pp=65536", 0, "multiply to more than" },
		{ "tp=2,tp=2", 8, "tp given twice" },
		{ "tp=2,dp=3", 8, "= 6, but the job has 8 tasks" },
		{ "tp=3", 8, "does not divide the 8 tasks" },
		{ "tp=2,order=tp-dp-pp,mesh=pp,dp,tp", 8, "order= and mesh= both" },
		{ "tp=2,order=tp-xp-pp", 8, "'xp' is no group kind" },
		{ "tp=2,order=tp-tp", 8, "tp named twice" },
		{ "tp=2,cp=2,order=tp-dp-pp", 8, "order= does not name cp (cp=2)" },
		{ "tp=2,order=tp--dp", 8, "an empty item" },
		{ "tp=2,,pp=2", 8, "an empty item" },
		{ "tp=2,", 8, "an empty item" },
		{ "tp=2,pp", 8, "'pp': expected KEY=VALUE" },
		{ "tp=2,bytes=tp:x", 8, "the volume must be a number" },
		{ "tp=2,bytes=tp:-1", 8, "the volume must be a number" },
		{ "tp=2,bytes=tp:1,tp:2", 8, "bytes=: tp given twice" },
		{ "tp=2,bytes=zz:1", 8, "'zz' is no group kind" },
		{ "tp=2,bytes=tp", 8, "is not KIND:VOLUME" },
		{ "tp=2,bytes=", 8, "bytes=: no value" },
		{ "ep=8192", 8192 * 4, "all-to-alls would take more than" },
		{ "tp=2,model=hidden:8192,layers:80", 8, "model=: seq: missing" },
		{ "tp=2,model=hidden:0,layers:8,seq:8", 8, "hidden must be a count" },
		{ "tp=2,model=hidden:8x,layers:8,seq:8", 8, "hidden must be a count" },
		{ "tp=2,model=foo:1", 8, "model=: unknown key 'foo'" },
		{ "tp=2,model=hidden:1,hidden:2", 8, "model=: hidden given twice" },
		{ "tp=2,model=hidden", 8, "is not KEY:COUNT" },
		{ "tp=2,model=", 8, "model=: no value" },
		{ "ep=2,model=hidden:8,layers:2,seq:8", 8, "ep=2 needs experts" },
		{ "ep=2,model=hidden:8,layers:2,seq:8,experts:3", 8, "not shared evenly" },
		{ "ep=2,model=hidden:8,layers:2,seq:8,experts:2,topk:3", 8,
		  "topk:3 is more than experts:2" },
		{ "tp=2,model=hidden:8,layers:2,seq:8,topk:1", 8, "topk without experts" },
		{ "tp=2,model=hidden:8,layers:2,seq:8,micro:2,gbs:8", 8,
		  "micro and gbs both" },
		{ "tp=2,model=hidden:8,layers:2,seq:8,gbs:6", 8, "not a whole number" },
		{ "tp=2,model=hidden:2000000000,layers:2000000000,seq:8", 8,
		  "is more than" },
		{ "tp=2,model=hidden:8,layers:2,seq:8,model=hidden:8", 8,
		  "model given twice" },
		{ "tp=2,micro=0", 8, "micro=0: a step has at least 1 micro-batch" },
		{ "tp=2,micro=2.5", 8, "micro=2.5: not a count" },
		{ "tp=2,micro=", 8, "micro=: no value" },
		{ "tp=2,micro=2,micro=4", 8, "micro given twice" },
		{ "tp=2,micro=4,model=hidden:8,layers:2,seq:8,micro:2", 8,
		  "micro= and model='s micro both given" },
		{ "tp=2,model=hidden:8,layers:2,seq:8,gbs:8,micro=4", 8,
		  "micro= and model='s gbs both given" },
	};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		tp__parallel p;
		tp_error err;
		tp_error_clear(&err);
		ck_assert_msg(tp__parallel_parse(bad[i].spec, bad[i].n, &p, &err) == TP_EINVAL,
			      "'%s' accepted", bad[i].spec);
		ck_assert_msg(strstr(err.msg, bad[i].frag) && !strchr(err.msg, '\n'),
			      "'%s': \"%s\" lacks \"%s\"", bad[i].spec, err.msg,
			      bad[i].frag);
	}
	char longer[600];
	memset(longer, 'a', sizeof longer - 1);
	longer[sizeof longer - 1] = '\0';
	tp_graph *g = NULL;
	tp_error err;
	ck_assert_int_eq(tp_graph_from_parallel(&g, longer, 8, NULL, &err), TP_EINVAL);
	tp_assert_err_has(&err, "longer than");
	ck_assert_ptr_null(g);
}
END_TEST

/* ---- placements ---- */

static char *blk_file, *tree_file, *tree6_file;

/* A temporary file with text (outside a test: no Check assertion). */
static char *write_tmp(const char *text)
{
	char *path = strdup("/tmp/tp-test-XXXXXX");
	int fd = path ? mkstemp(path) : -1;
	FILE *f = fd >= 0 ? fdopen(fd, "w") : NULL;
	if (!f || fputs(text, f) < 0 || fclose(f) != 0) {
		perror("temporary file");
		exit(EXIT_FAILURE);
	}
	return path;
}

static tp_conf *conf_of(const char *fmt, const char *file)
{
	char text[512];
	snprintf(text, sizeof text, fmt, file);
	tp_conf *c = NULL;
	tp_error err;
	ck_assert_msg(tp_conf_load_string(text, "cfg", &c, &err) == 0, "%s", err.msg);
	return c;
}

/* 4 blocks of 4 nodes (n00-n03 | n04-n07 | ...), 4 GPUs each. */
static tp_conf *block_conf(void)
{
	return conf_of("Network=block TopologyFile=%s BlockBandwidth=900 "
		       "NetworkBandwidth=50 IntraNodeBandwidth=900\n"
		       "NodeName=n[00-15]\n", blk_file);
}

/* 4 leaf switches of 4 nodes under one top switch; fair sharing stated:
 * the ties below are between orders whose steps fair sharing times alike
 * (not stated, a tree's is the worse of fair and RTT-weighted, which
 * parts them). */
static tp_conf *tree_conf(void)
{
	return conf_of("Network=tree TopologyFile=%s IntraNodeBandwidth=900 "
		       "FlowSharing=fair\nNodeName=n[00-15]\n", tree_file);
}

/* The job's map for spec on nodes (4 slots each). */
static tp_job *run_job(const tp_conf *c, const char *nodes, int64_t ntasks,
		       const char *spec)
{
	tp_job_request r;
	tp_job_request_init(&r);
	r.conf = c;
	r.nodes = nodes;
	r.slots = "4";
	r.ntasks = ntasks;
	r.flags = TP_JOB_METRICS;
	tp_job *job = NULL;
	tp_error err;
	tp_error_clear(&err);
	ck_assert_msg(tp_job_create_parallel(&r, NULL, spec, "--parallel", &job,
					     &err) == 0, "%s", err.msg);
	ck_assert_msg(tp_job_run(job, &err) == 0, "%s", err.msg);
	return job;
}

/* The group (block or leaf) of the node of task t: n00-n03 are 0, ... */
static int group_of(const tp_job *job, int32_t t)
{
	return atoi(tp_job_task_node(job, t) + 1) / 4;
}

/* The task's place among its node's tasks (the local rank). */
static int local_of(const tp_job *job, int32_t t)
{
	const int32_t *map = tp_job_map(job);
	int k = 0;
	for (int32_t u = 0; u < t; u++)
		k += map[u] == map[t];
	return k;
}

/* Every TP group on one node, every PP stage in one group, DP and PP
 * peers at the same local slot. */
static void assert_targets(const tp_job *job, const char *spec)
{
	tp__parallel p = parse_ok(spec, tp_job_ntasks(job));
	const int32_t *map = tp_job_map(job);
	for (int32_t r = 0; r < p.ntasks; r++) {
		int32_t tp0 = (int32_t)(r - tp__parallel_coord(&p, r, TP__PAR_TP) *
					p.stride[TP__PAR_TP]);
		ck_assert_msg(map[r] == map[tp0], "rank %d apart from its TP "
			      "group's first, %d", r, tp0);
		int32_t s0 = (int32_t)(r - tp__parallel_coord(&p, r, TP__PAR_PP) *
				       p.stride[TP__PAR_PP]);
		int64_t st = tp__parallel_coord(&p, r, TP__PAR_PP);
		int32_t first = (int32_t)(st * p.stride[TP__PAR_PP]);
		ck_assert_msg(group_of(job, r) == group_of(job, first),
			      "stage %lld of rank %d spans groups", (long long)st, r);
		ck_assert_int_eq(local_of(job, r), local_of(job, s0));
		int32_t d0 = (int32_t)(r - tp__parallel_coord(&p, r, TP__PAR_DP) *
				       p.stride[TP__PAR_DP]);
		ck_assert_int_eq(local_of(job, r) % 4, local_of(job, d0) % 4);
	}
}

/* A window that runs over a group another stage filled must not take that
 * group's nodes when the stages are laid out again in path order. */
START_TEST(window_keeps_its_groups)
{
	tp_conf *c = tree_conf();
	tp_alloc *a = NULL;
	tp_error err;
	/* leaves: l0 n00-03 (two stages), l1 n04, l2 n08-09 (one stage,
	 * exactly), l3 n12; allocation indices 0-3, 4, 5-6, 7 */
	ck_assert(tp_alloc_from_hostlist(tp_conf_machine(c), "n[00-04,08-09,12]",
					 4, "nodes", &a, &err) == 0);
	tp__parallel p = parse_ok("tp=4,pp=4", 32);
	int32_t map[32];
	ck_assert_int_eq(tp__parallel_map(&p, a, TP__PARMAP_BEST_FIT, map, &err), 0);
	/* best fit: a stage in l2, two in l0, the last over l1 and l3 (l2 is
	 * full when it is chosen); in path order the split one comes third
	 * and must leave l2 to the fourth: one stage over two leaves, not
	 * two */
	for (int r = 0; r < 16; r++)
		ck_assert_int_le(map[r], 3);
	for (int r = 16; r < 24; r++)
		ck_assert_msg(map[r] == 4 || map[r] == 7, "rank %d on %d", r, map[r]);
	for (int r = 24; r < 32; r++)
		ck_assert_msg(map[r] == 5 || map[r] == 6, "rank %d on %d", r, map[r]);
	tp_alloc_destroy(a);
	tp_conf_destroy(c);
}
END_TEST

START_TEST(block_targets)
{
	/* fragmented: b0 has 4 nodes, b1 1, b2 2, b3 1; stages of 2 nodes.
	 * Slurm's order puts stage 2 on n05 (b1) and n08 (b2). */
	tp_conf *c = block_conf();
	const char *spec = "tp=4,pp=3";
	tp_job *job = run_job(c, "n[00-03,05,08-09,12]", 24, spec);
	ck_assert_int_eq(tp_job_status(job), TP_JOB_PLACED);
	assert_targets(job, spec);
	const tp_prediction *pm = tp_job_prediction(job, false);
	const tp_prediction *pb = tp_job_prediction(job, true);
	ck_assert_ptr_nonnull(pm);
	ck_assert_msg(pm->exchange_us < pb->exchange_us, "%g us against Slurm's %g",
		      pm->exchange_us, pb->exchange_us);
	/* the report names the candidate */
	bool seen = false;
	for (int i = 0; i < tp_job_ncandidates(job); i++) {
		tp_job_candidate cd;
		tp_job_candidate_get(job, i, &cd);
		seen |= !strcmp(cd.name, "parallel") && cd.ran;
	}
	ck_assert(seen);
	tp_job_destroy(job);
	tp_conf_destroy(c);
}
END_TEST

START_TEST(tree_targets)
{
	tp_conf *c = tree_conf();
	const char *spec = "tp=4,pp=3,bytes=dp:16";
	tp_job *job = run_job(c, "n[00-03,05,08-09,12]", 24, spec);
	assert_targets(job, spec);
	const tp_prediction *pm = tp_job_prediction(job, false);
	const tp_prediction *pb = tp_job_prediction(job, true);
	ck_assert(pm->exchange_us <= pb->exchange_us);
	tp_job_destroy(job);
	tp_conf_destroy(c);
}
END_TEST

/* The block of allocation node i (n00-n03: 0, ...). */
static int block_of(const tp_alloc *a, int32_t i)
{
	const tp_machine *m = tp_alloc_machine(a);
	return atoi(tp_machine_node_name(m, tp_alloc_node(a, i)) + 1) / 4;
}

START_TEST(torus_no_hierarchy)
{
	/* no groups to pack into: the candidate is Slurm's order, and the
	 * job no worse than it */
	tp_conf *c = NULL;
	tp_error err;
	ck_assert_msg(tp_conf_load_string("Network=torus Dims=2x2x2 Wrap=yes\n"
					  "NodeName=node[1-8] CoordOrder=x-major\n",
					  "cfg", &c, &err) == 0, "%s", err.msg);
	tp_job *job = run_job(c, "node[1-8]", 32, "tp=4,pp=2");
	const tp_prediction *pm = tp_job_prediction(job, false);
	const tp_prediction *pb = tp_job_prediction(job, true);
	ck_assert(pm && pb && pm->exchange_us <= pb->exchange_us);
	tp_job_destroy(job);
	tp_conf_destroy(c);
}
END_TEST

/* Stages over the fullest groups (Kueue's rank by domain): blocks of 3, 2
 * and 1 allocated nodes, b1 first, then b2, then b0; stages of two nodes
 * one after the other, so that the second shares b1 with the first and b2
 * with the third.  In path order b0's node would start stage 0. */
START_TEST(candidate_fullest)
{
	tp_conf *c = block_conf();
	tp_alloc *a = NULL;
	tp_error err;
	ck_assert(tp_alloc_from_hostlist(tp_conf_machine(c), "n[00,04-06,08-09]",
					 4, "nodes", &a, &err) == 0);
	tp__parallel p = parse_ok("tp=4,pp=3", 24);
	int32_t map[24];
	ck_assert_int_eq(tp__parallel_map(&p, a, TP__PARMAP_FULLEST, map, &err), 0);
	/* allocation indices: n00 0, n04 1, n05 2, n06 3, n08 4, n09 5 */
	static const int32_t want[6] = { 1, 2, 3, 4, 5, 0 };
	for (int r = 0; r < 24; r++)
		ck_assert_int_eq(map[r], want[r / 4]);
	ck_assert_int_eq(tp__parallel_map(&p, a, TP__PARMAP_PATH, map, &err), 0);
	ck_assert_int_eq(map[0], 0);
	tp_alloc_destroy(a);
	tp_conf_destroy(c);
}
END_TEST

START_TEST(candidate_layout)
{
	/* the candidate alone: best fit puts each stage of 8 ranks in one
	 * block, TP groups (4) whole on a node */
	tp_conf *c = block_conf();
	tp_alloc *a = NULL;
	tp_error err;
	ck_assert(tp_alloc_from_hostlist(tp_conf_machine(c), "n[00-02,05,08-09]",
					 4, "nodes", &a, &err) == 0);
	tp__parallel p = parse_ok("tp=4,pp=2", 16);
	int32_t map[16];
	ck_assert_int_eq(tp__parallel_map(&p, a, TP__PARMAP_BEST_FIT, map, &err), 0);
	/* one stage best fits b2 (n08, n09: allocation indices 4, 5), the
	 * other goes to b0; in path order, stage 0 in b0, stage 1 in b2 */
	for (int r = 0; r < 8; r++)
		ck_assert_int_eq(map[r], r / 4);
	for (int r = 8; r < 16; r++)
		ck_assert_int_eq(map[r], 4 + (r - 8) / 4);
	/* path order: Slurm's, n05 in stage 1 */
	ck_assert_int_eq(tp__parallel_map(&p, a, TP__PARMAP_PATH, map, &err), 0);
	ck_assert_int_eq(map[15], 3);
	/* replicas by best fit: a data-parallel replica (both stages of one
	 * dp index, 8 ranks) in each block, its pipeline sends inside it */
	tp_alloc *a2 = NULL;
	ck_assert(tp_alloc_from_hostlist(tp_conf_machine(c), "n[00-01,04-05]",
					 4, "nodes", &a2, &err) == 0);
	tp__parallel rp = parse_ok("tp=4,pp=2", 16);
	ck_assert_int_eq(tp__parallel_map(&rp, a2, TP__PARMAP_REPLICA, map, &err), 0);
	for (int r = 0; r < 16; r++) {
		int dp = (r / 4) % 2, pp = r / 8;
		ck_assert_int_eq(map[r], 2 * dp + pp);
	}
	tp_alloc_destroy(a2);
	/* tensor-parallel groups larger than a node (8 on nodes of 4) stay in
	 * one block where a block has room: blocks of 3, 2 and 3 nodes hold
	 * three pairs, the fourth must straddle; in path order two would */
	ck_assert(tp_alloc_from_hostlist(tp_conf_machine(c), "n[00-02,04-05,08-10]",
					 4, "nodes", &a2, &err) == 0);
	tp__parallel t8 = parse_ok("tp=8,pp=2", 32);
	int32_t m8[32];
	for (int v = 0; v < 2; v++) {
		ck_assert_int_eq(tp__parallel_map(&t8, a2, v, m8, &err), 0);
		int straddle = 0;
		for (int g = 0; g < 4; g++) {
			int b0 = block_of(a2, m8[8 * g]);
			for (int r = 8 * g + 1; r < 8 * g + 8; r++)
				if (block_of(a2, m8[r]) != b0) {
					straddle++;
					break;
				}
		}
		ck_assert_msg(straddle == 1, "variant %d: %d TP groups over two "
			      "blocks", v, straddle);
	}
	tp_alloc_destroy(a2);
	/* more ranks than slots */
	tp__parallel big = parse_ok("tp=4,pp=2,dp=4", 0);
	int32_t *m2 = calloc(32, sizeof *m2);
	ck_assert_int_eq(tp__parallel_map(&big, a, TP__PARMAP_BEST_FIT, m2, &err),
			 TP_EINVAL);
	free(m2);
	tp_alloc_destroy(a);
	tp_conf_destroy(c);
}
END_TEST

START_TEST(job_errors)
{
	tp_conf *c = block_conf();
	tp_job_request r;
	tp_job_request_init(&r);
	r.conf = c;
	r.nodes = "n[00-03]";
	r.slots = "4";
	tp_job *job = NULL;
	tp_error err;
	ck_assert_int_lt(tp_job_create_parallel(&r, NULL, "tp=3", "--topo-parallel",
						&job, &err), 0);
	tp_assert_err_has(&err, "--topo-parallel: tp x cp x ep x pp = 3 does not "
			  "divide the 16 tasks");
	r.stencil = "4x4";
	ck_assert_int_lt(tp_job_create_parallel(&r, NULL, "tp=4", "--parallel",
						&job, &err), 0);
	tp_assert_err_has(&err, "give one pattern");
	ck_assert_ptr_null(job);
	tp_conf_destroy(c);
}
END_TEST

START_TEST(predict_step)
{
	/* the public step time: here the phases add up (one stage
	 * boundary: no layers run while another boundary sends), so a map
	 * that splits a TP pair over two nodes is slower than one that keeps
	 * it together, in the TP phase alone; a kind of one rank takes none; the line shows the
	 * phases that take time, cut to its buffer */
	tp_conf *c = block_conf();
	tp_alloc *a = NULL;
	tp_error err;
	ck_assert(tp_alloc_from_hostlist(tp_conf_machine(c), "n[00,04]", 2,
					 "nodes", &a, &err) == 0);
	const int32_t together[4] = { 0, 0, 1, 1 }, apart[4] = { 0, 1, 0, 1 };
	tp_prediction pt, pa;
	ck_assert_int_eq(tp_predict_parallel("tp=2,pp=2", a, together, 4, &pt, &err), 0);
	ck_assert_int_eq(tp_predict_parallel("tp=2,pp=2", a, apart, 4, &pa, &err), 0);
	ck_assert_msg(pt.exchange_us < pa.exchange_us, "%g %g", pt.exchange_us,
		      pa.exchange_us);
	ck_assert_int_eq(tp_predict_parallel("tp=3", a, apart, 4, &pa, &err), TP_EINVAL);
	double ht[TP_STEP_PHASES], ha[TP_STEP_PHASES];
	tp_prediction pn = pt;
	ck_assert_int_eq(tp_predict_parallel_phases("tp=2,pp=2", a, together, 4,
						    &pt, ht, &err), 0);
	ck_assert_double_eq(pt.exchange_us, pn.exchange_us);
	ck_assert_int_eq(tp_predict_parallel_phases("tp=2,pp=2", a, apart, 4,
						    &pa, ha, &err), 0);
	double st = 0, sa = 0;
	for (int i = 0; i < TP_STEP_PHASES; i++) {
		st += ht[i];
		sa += ha[i];
		ck_assert_ptr_nonnull(tp_step_phase_name(i));
	}
	ck_assert_double_eq_tol(st, pt.exchange_us, 1e-9 * pt.exchange_us);
	ck_assert_double_eq_tol(sa, pa.exchange_us, 1e-9 * pa.exchange_us);
	ck_assert_str_eq(tp_step_phase_name(0), "tp");
	ck_assert_str_eq(tp_step_phase_name(TP_STEP_PHASES - 1), "dp-experts");
	ck_assert_ptr_null(tp_step_phase_name(TP_STEP_PHASES));
	ck_assert_ptr_null(tp_step_phase_name(-1));
	ck_assert_msg(ht[0] < ha[0], "tp %g %g", ht[0], ha[0]);
	ck_assert_double_eq(ha[1], 0);   /* cp=1 */
	ck_assert_double_eq(ha[2], 0);   /* ep=1 */
	char line[256];
	ck_assert_int_gt(tp_step_phases_line(line, sizeof line, ha, ht), 0);
	ck_assert_msg(!strncmp(line, "step by phase: tp ", 18) &&
		      !strstr(line, " cp ") && !strstr(line, " ep ") &&
		      !strstr(line, "dp-experts") && strstr(line, ", pp-fwd "),
		      "%s", line);
	/* cut to the buffer, NUL-terminated; bad arguments */
	char small[20];
	int n = tp_step_phases_line(small, sizeof small, ha, ht);
	ck_assert_int_eq(n, (int)strlen(line));
	ck_assert_uint_eq(strlen(small), sizeof small - 1);
	ck_assert_int_eq(tp_step_phases_line(NULL, 8, ha, ht), -1);
	ck_assert_int_eq(tp_step_phases_line(line, sizeof line, NULL, ht), -1);
	ck_assert_int_eq(tp_predict_parallel_phases("tp=2,pp=2", a, NULL, 4, &pa,
						    ha, &err), TP_EINVAL);
	/* a map outside the allocation or past a node's slots: refused
	 * before any phase reads a task's node */
	const int32_t outside[4] = { 0, 0, 1, 2 }, over[4] = { 0, 0, 0, 1 };
	ck_assert_int_eq(tp_predict_parallel("tp=2,pp=2", a, outside, 4, &pa, &err),
			 TP_EINVAL);
	ck_assert_msg(strstr(err.msg, "outside 0..1"), "%s", err.msg);
	ck_assert_int_eq(tp_predict_parallel("tp=1,ep=2,dp=2", a, over, 4, &pa, &err),
			 TP_EINVAL);
	ck_assert_msg(strstr(err.msg, "exceeds the 2 slots"), "%s", err.msg);
	tp_alloc_destroy(a);
	tp_conf_destroy(c);
}
END_TEST

/* The pipeline: per-layer kinds and stage sends are timed stage by stage,
 * (sum + (M - 1) max) / M; the gradients' all-reduce once.  Two alike
 * stages: with one micro-batch a piped phase counts both stages (2 T),
 * with very many about the slowest (T); DP alone does not change. */
START_TEST(predict_pipeline)
{
	tp_conf *c = block_conf();
	tp_alloc *a = NULL;
	tp_error err;
	ck_assert(tp_alloc_from_hostlist(tp_conf_machine(c), "n[00,04,08,12]", 2,
					 "nodes", &a, &err) == 0);
	/* a stage (2 ranks of a TP pair, dp=2: 4 ranks) over two nodes */
	const int32_t map[8] = { 0, 1, 0, 1, 2, 3, 2, 3 };
	const char *m1 = "tp=2,pp=2,model=hidden:8,layers:2,seq:8,micro:1,"
			 "bytes=tp:64,cp:0,ep:0,dp:0,pp:0";
	const char *mk = "tp=2,pp=2,model=hidden:8,layers:2,seq:8,micro:100000,"
			 "bytes=tp:64,cp:0,ep:0,dp:0,pp:0";
	tp_prediction p1, pk;
	ck_assert_int_eq(tp_predict_parallel(m1, a, map, 8, &p1, &err), 0);
	ck_assert_int_eq(tp_predict_parallel(mk, a, map, 8, &pk, &err), 0);
	ck_assert_msg(pk.exchange_us > 0, "%g", pk.exchange_us);
	ck_assert_msg(fabs(p1.exchange_us - 2 * pk.exchange_us) < 1e-3 * p1.exchange_us,
		      "%g %g", p1.exchange_us, pk.exchange_us);
	const char *d1 = "tp=2,pp=2,model=hidden:8,layers:2,seq:8,micro:1,"
			 "bytes=tp:0,cp:0,ep:0,dp:8,pp:0";
	const char *dk = "tp=2,pp=2,model=hidden:8,layers:2,seq:8,micro:100000,"
			 "bytes=tp:0,cp:0,ep:0,dp:8,pp:0";
	ck_assert_int_eq(tp_predict_parallel(d1, a, map, 8, &p1, &err), 0);
	ck_assert_int_eq(tp_predict_parallel(dk, a, map, 8, &pk, &err), 0);
	ck_assert_double_eq_tol(p1.exchange_us, pk.exchange_us, 1e-9);
	tp_alloc_destroy(a);
	tp_conf_destroy(c);
}
END_TEST

/* The experts' all-to-all is timed as the pairwise exchange: its ep - 1
 * steps one after the other, each as slow as its own busiest lane.  Two
 * groups of four (tp=1,ep=4,dp=2, one rank a node) on three leaves of six
 * nodes, two cables up a leaf (d mod 2): G1 n00 n01 | n06 n07, G2 n0X |
 * n12 n13 n14.  With n08 the steps' busiest lanes add up to what every
 * pair at once needs; with n09 two steps meet on a cable that all at once
 * shares with idle time, and the steps take 1.2 times as long. */
START_TEST(predict_all_to_all_steps)
{
	tp_conf *c = conf_of("Network=tree TopologyFile=%s LevelUplinks=2 "
			     "IntraNodeBandwidth=900\nNodeName=n[00-17]\n", tree6_file);
	const char *spec = "tp=1,ep=4,dp=2,bytes=tp:0,cp:0,ep:8,dp:0,pp:0";
	const char *lists[2] = { "n[00-01,06-08,12-14]", "n[00-01,06-07,09,12-14]" };
	const int32_t map[8] = { 0, 1, 2, 3, 4, 5, 6, 7 };
	tp__parallel p = parse_ok(spec, 8);
	tp_error err;
	for (int k = 0; k < 2; k++) {
		tp_alloc *a = NULL;
		ck_assert(tp_alloc_from_hostlist(tp_conf_machine(c), lists[k], 1,
						 "nodes", &a, &err) == 0);
		tp_prediction pr, x;
		double ph[TP_STEP_PHASES], steps = 0, all = 0;
		ck_assert_int_eq(tp_predict_parallel_phases(spec, a, map, 8, &pr, ph,
							    &err), 0);
		for (int64_t d = 0; d < 4; d++) {
			tp_graph *g = NULL;
			ck_assert_int_eq(tp__parallel_graph_stages(&p, NULL,
				1u << TP__PAR_EP, 0, d, &g, &err), 0);
			ck_assert_int_eq(tp_predict_exchange(g, a, map, &x, &err), 0);
			/* d = 0: every pair at once */
			*(d ? &steps : &all) += x.exchange_us;
			tp_graph_destroy(g);
		}
		ck_assert_double_eq_tol(ph[2], steps, 1e-9 * steps);
		ck_assert_double_eq_tol(pr.exchange_us, steps, 1e-9 * steps);
		if (k == 0)
			ck_assert_msg(fabs(steps - all) < 0.01 * steps,
				      "%g us, all at once %g", steps, all);
		else
			ck_assert_msg(steps > 1.15 * all, "%g us, all at once %g",
				      steps, all);
		tp_alloc_destroy(a);
	}
	tp_conf_destroy(c);
}
END_TEST

/* The step of spec on a under maps x and y, phase by phase. */
static void two_steps(const char *spec, const tp_alloc *a, int32_t ntasks,
		      const int32_t *x, tp_prediction *px, double *phx,
		      const int32_t *y, tp_prediction *py, double *phy)
{
	tp_error err;
	ck_assert_msg(tp_predict_parallel_phases(spec, a, x, ntasks, px, phx,
						 &err) == 0, "%s", err.msg);
	ck_assert_msg(tp_predict_parallel_phases(spec, a, y, ntasks, py, phy,
						 &err) == 0, "%s", err.msg);
}

/* Replicas run their pipelines apart: the step waits for its slowest
 * replica, not for the slowest group of every stage wherever it is.
 * tp=2,pp=2,dp=2 on eight nodes of two NVLink blocks (n00-03, n04-07), one
 * rank a node, one micro-batch: each layout has two TP pairs over the two
 * blocks (at 50 GB/s, the others at 900).  Apart: one in each replica,
 * each replica's stages take S + f; together: both in replica 0, 2 S.
 * Each stage's slowest group alone made the two alike (2 S). */
START_TEST(predict_replicas_apart)
{
	tp_conf *c = block_conf();
	tp_alloc *a = NULL;
	tp_error err;
	ck_assert(tp_alloc_from_hostlist(tp_conf_machine(c), "n[00-07]", 1,
					 "nodes", &a, &err) == 0);
	/* ranks: tp + 2 (dp + 2 pp); allocation indices n00 0 .. n07 7 */
	const int32_t apart[8] = { 0, 4, 1, 2, 5, 6, 3, 7 };
	const int32_t together[8] = { 0, 4, 1, 2, 3, 7, 5, 6 };
	const char *spec = "tp=2,pp=2,dp=2,micro=1,bytes=tp:64,cp:0,ep:0,dp:0,pp:0";
	tp_prediction pa, pt;
	double pha[TP_STEP_PHASES], pht[TP_STEP_PHASES];
	two_steps(spec, a, 8, apart, &pa, pha, together, &pt, pht);
	ck_assert_msg(pt.exchange_us > 1.6 * pa.exchange_us &&
		      pt.exchange_us < 2.0 * pa.exchange_us,
		      "together %g us, apart %g us", pt.exchange_us, pa.exchange_us);
	ck_assert_double_eq_tol(pha[0], pa.exchange_us, 1e-9 * pa.exchange_us);
	ck_assert(pa.bound_us <= pa.exchange_us && pt.bound_us <= pt.exchange_us);
	tp_alloc_destroy(a);
	tp_conf_destroy(c);
}
END_TEST

/* The pipeline's sends are timed one way at a time (GPipe: every
 * activation forward, then every gradient back).  Two leaves of a tree, two
 * cables up from each (d mod 2), ranks 0 and 1 stage 0, 2 and 3 stage 1.
 * In A a forward and a backward send share leaf 1's cable 0 (ranks 1 -> 3
 * and 2 -> 0), which never carries them at once; in B the two forward
 * sends share leaf 0's cable 0 (to n04 and n06).  Both ways at once the two
 * looked alike. */
/* Two leaves of the tree, two cables up from each; n[00-02,04-06] with
 * slots a node, allocation indices n00 0, n01 1, n02 2, n04 3, n05 4,
 * n06 5; the layouts A and B of predict_pipeline_directions. */
static const int32_t PIPE_A[4] = { 0, 4, 3, 2 }, PIPE_B[4] = { 0, 1, 3, 5 };

/* tree_file's leaves, two cables up from each, and an allocation of
 * hosts with slots a node (*a). */
static tp_conf *tree_case(const char *hosts, int slots, tp_alloc **a)
{
	tp_conf *c = conf_of("Network=tree TopologyFile=%s LevelUplinks=2 "
			     "IntraNodeBandwidth=900\nNodeName=n[00-15]\n", tree_file);
	tp_error err;
	ck_assert_msg(tp_alloc_from_hostlist(tp_conf_machine(c), hosts, slots,
					     "nodes", a, &err) == 0, "%s", err.msg);
	return c;
}

static tp_conf *pipe_case(int slots, tp_alloc **a)
{
	return tree_case("n[00-02,04-06]", slots, a);
}

START_TEST(predict_pipeline_directions)
{
	tp_alloc *a = NULL;
	tp_error err;
	tp_conf *c = pipe_case(1, &a);
	const int32_t *mapa = PIPE_A, *mapb = PIPE_B;
	const char *spec = "tp=1,pp=2,bytes=tp:0,cp:0,ep:0,dp:0,pp:8";
	tp_prediction pa, pb;
	ck_assert_int_eq(tp_predict_parallel(spec, a, mapa, 4, &pa, &err), 0);
	ck_assert_int_eq(tp_predict_parallel(spec, a, mapb, 4, &pb, &err), 0);
	/* A: each way alone, one send a cable: 2 units; B: 2 + 1 */
	ck_assert_msg(pa.exchange_us < 0.8 * pb.exchange_us, "A %g us, B %g us",
		      pa.exchange_us, pb.exchange_us);
	tp_alloc_destroy(a);
	tp_conf_destroy(c);
}
END_TEST

/* The pipeline's sends in waves: a stage receives micro-batch m + 1 only
 * once it sent m on, so boundaries two apart send at once and neighbours
 * never.  Four ranks, one
 * a node, pp=4; X sends over boundaries 0 (n00 -> n04) and 2 (n01 -> n08)
 * up leaf 0's cable 0, Y's boundary 2 (n01 -> n09) takes cable 1.  With
 * two micro-batches boundary 0's second and boundary 2's first meet in X:
 * forward 3 T against 2.5 T (T: a boundary alone, the step's bytes); with
 * one they never do, and X and Y time alike (each boundary alone, as the
 * step was timed before, never sees the two meet). */
START_TEST(predict_pipeline_waves)
{
	tp_alloc *a = NULL;
	tp_error err;
	tp_conf *c = tree_case("n[00-01,04,08-09]", 1, &a);
	/* allocation indices: n00 0, n01 1, n04 2, n08 3, n09 4 */
	const int32_t X[4] = { 0, 2, 1, 3 }, Y[4] = { 0, 2, 1, 4 };
	const char *m2 = "tp=1,pp=4,micro=2,bytes=tp:0,cp:0,ep:0,dp:0,pp:8";
	const char *m1 = "tp=1,pp=4,micro=1,bytes=tp:0,cp:0,ep:0,dp:0,pp:8";
	tp_prediction x, y;
	ck_assert_int_eq(tp_predict_parallel(m2, a, X, 4, &x, &err), 0);
	ck_assert_int_eq(tp_predict_parallel(m2, a, Y, 4, &y, &err), 0);
	/* forward 3 T + back 2.5 T against 2.5 T + 2.5 T, latency aside */
	ck_assert_msg(x.exchange_us > 1.08 * y.exchange_us &&
		      x.exchange_us < 1.12 * y.exchange_us,
		      "X %g us, Y %g us", x.exchange_us, y.exchange_us);
	ck_assert_int_eq(tp_predict_parallel(m1, a, X, 4, &x, &err), 0);
	ck_assert_int_eq(tp_predict_parallel(m1, a, Y, 4, &y, &err), 0);
	ck_assert_double_eq_tol(x.exchange_us, y.exchange_us, 1e-9 * y.exchange_us);
	tp_alloc_destroy(a);
	tp_conf_destroy(c);
}
END_TEST

/* Replicas run their pipelines apart (only the gradients' all-reduce
 * joins them), so a replica waits for its own slow sends only.  tp=1,
 * dp=4, pp=4, one rank a node on the four leaves of tree_file (two cables
 * up, d mod 2), two micro-batches.  Apart: replicas 0 and 1 send over
 * boundary 1 on leaf 0's cable 0 (n01 -> n04, n03 -> n06), 2 and 3 over
 * boundary 2 on leaf 2's (n10 -> n12, n11 -> n14); every other send stays
 * in its leaf.  Forward, boundary 1's waves (1, 3) and boundary 2's (2, 4)
 * are each half slow: every replica takes 7 half-waves' time where a
 * layout inside the leaves takes 5, and all replicas in step took 9 (the
 * slowest send of each wave added up).  Backward only leaf 1's cable 1 is
 * shared (n04 -> n01, n06 -> n03): 7 either way.  So the pipeline's sends
 * take 14 / 10 of the leaves' (in step: 16 / 10). */
START_TEST(predict_pipeline_replicas_apart)
{
	tp_alloc *a = NULL;
	tp_error err;
	tp_conf *c = tree_case("n[00-15]", 1, &a);
	/* rank dp + 4 pp; allocation index = node number */
	const int32_t apart[16] = { 0, 2, 8, 13,  1, 3, 9, 15,
				    4, 6, 10, 11,  5, 7, 12, 14 };
	int32_t leaves[16];
	for (int r = 0; r < 16; r++)
		leaves[r] = (int32_t)(4 * (r % 4) + r / 4);
	const char *spec = "tp=1,dp=4,pp=4,micro=2,bytes=tp:0,cp:0,ep:0,dp:0,pp:8";
	tp_prediction pa, pl;
	double pha[TP_STEP_PHASES], phl[TP_STEP_PHASES];
	two_steps(spec, a, 16, apart, &pa, pha, leaves, &pl, phl);
	/* phases 4 and 5: pp-fwd, pp-bwd */
	ck_assert_str_eq(tp_step_phase_name(4), "pp-fwd");
	double fa = pha[4], ba = pha[5], fl = phl[4], bl = phl[5];
	ck_assert_msg(fabs(fa / fl - 1.4) < 0.03 && fabs(ba / bl - 1.4) < 0.03,
		      "forward %g us, back %g us; inside the leaves %g, %g",
		      fa, ba, fl, bl);
	ck_assert_msg(fabs(pa.exchange_us / pl.exchange_us - 1.4) < 0.03,
		      "step %g us, inside the leaves %g", pa.exchange_us,
		      pl.exchange_us);
	ck_assert(pa.bound_us <= pa.exchange_us * (1 + 1e-9));
	/* 1000 micro-batches (followed 64 at a time, then at their pace):
	 * inside the leaves every send takes a wave, 2 (M - 1) + 3 waves of
	 * 1 / M of the step's bytes each, against 5 / 2 with two */
	tp_prediction pm;
	double phm[TP_STEP_PHASES];
	ck_assert_int_eq(tp_predict_parallel_phases(
		"tp=1,dp=4,pp=4,micro=1000,bytes=tp:0,cp:0,ep:0,dp:0,pp:8", a,
		leaves, 16, &pm, phm, &err), 0);
	ck_assert_msg(fabs(phm[4] / fl - 2.001 / 2.5) < 1e-3, "%g us at 1000, %g "
		      "at 2", phm[4], fl);
	/* Node trades from a layout where no one trade makes the slowest
	 * replica faster (found among random layouts of this case): a trade
	 * that frees one slowed replica leaves another as slow, and the
	 * step's time with it.  The trades go on where the waves in step get
	 * faster, to a layout as fast as the leaves' (by the time alone they
	 * kept none). */
	static const int32_t stuck[16] = { 8, 3, 10, 5, 13, 2, 14, 0,
					   15, 12, 6, 11, 4, 1, 7, 9 };
	tp__parallel p = parse_ok(spec, 16);
	struct tp__par_time t;
	int32_t map[16];
	int64_t kept = 0;
	memcpy(map, stuck, sizeof map);
	ck_assert_int_eq(tp__parallel_time(&p, a, map, TP__PAR_PREDICT_FULL, &t,
					   &err), 0);
	ck_assert_msg(t.p.exchange_us > 1.15 * pl.exchange_us &&
		      t.in_step_us > t.p.exchange_us, "from %g us, in step %g",
		      t.p.exchange_us, t.in_step_us);
	ck_assert_int_eq(tp__parallel_swaps(&p, a, map, TP__PAR_PREDICT_FULL, 10000,
					    0, &t, &kept, &err), 0);
	ck_assert_int_gt(kept, 0);
	ck_assert_msg(t.p.exchange_us < 1.01 * pl.exchange_us, "traded %g us, "
		      "inside the leaves %g", t.p.exchange_us, pl.exchange_us);
	tp_alloc_destroy(a);
	tp_conf_destroy(c);
}
END_TEST

/* The step as one schedule: a stage's layers run while other stages
 * send.  tp=2, pp=3 on pipe_case's nodes, two slots a node (n00-n02 |
 * n04-n06), two micro-batches.  Y: the first stage's TP pair over n01
 * and n02, the other stages whole on n00 and n04; X: the middle stage's
 * pair split instead.  Every phase times alike.  In Y the first stage
 * runs its layers for micro-batch m + 1 while m crosses the second
 * boundary, which the phases' sum does not see: all but the first
 * micro-batch's layers hidden, (M - 1) / M of TP's phase (a half with two
 * micro-batches).  In X the split stage's layers sit between a receive
 * and a send on every path: the step is the phases' sum. */
START_TEST(predict_step_schedule)
{
	tp_alloc *a = NULL;
	tp_conf *c = pipe_case(2, &a);
	/* rank tp + 2 pp; allocation indices n00 0, n01 1, n02 2, n04 3 */
	const int32_t X[6] = { 0, 0, 1, 2, 3, 3 }, Y[6] = { 1, 2, 0, 0, 3, 3 };
	tp_prediction px, py;
	double hx[TP_STEP_PHASES], hy[TP_STEP_PHASES];
	two_steps("tp=2,pp=3,micro=2,bytes=tp:8,cp:0,ep:0,dp:8,pp:8", a, 6, X,
		  &px, hx, Y, &py, hy);
	double sx = 0, sy = 0;
	for (int k = 0; k < TP_STEP_PHASES; k++) {
		ck_assert_double_eq_tol(hx[k], hy[k], 1e-9 * (hx[k] + 1));
		sx += hx[k];
		sy += hy[k];
	}
	ck_assert_msg(fabs(px.exchange_us - sx) < 1e-9 * sx &&
		      sy - py.exchange_us > 0.4 * hy[0] &&
		      sy - py.exchange_us < 0.55 * hy[0],
		      "X %g us, Y %g us, phases %g (tp %g)", px.exchange_us,
		      py.exchange_us, sy, hy[0]);
	ck_assert(py.bound_us <= py.exchange_us * (1 + 1e-9));
	/* 100 micro-batches (64 followed one by one, then at their pace):
	 * 99 % of the layers hidden */
	two_steps("tp=2,pp=3,micro=100,bytes=tp:8,cp:0,ep:0,dp:8,pp:8", a, 6, X,
		  &px, hx, Y, &py, hy);
	sy = 0;
	for (int k = 0; k < TP_STEP_PHASES; k++)
		sy += hy[k];
	ck_assert_msg(sy - py.exchange_us > 0.9 * hy[0] &&
		      sy - py.exchange_us < hy[0],
		      "Y %g us, phases %g (tp %g)", py.exchange_us, sy, hy[0]);
	tp_alloc_destroy(a);
	tp_conf_destroy(c);
}
END_TEST

/* Whole nodes trade ranks while the step gets faster: from the layout B of
 * predict_pipeline_directions (two sends on one cable one way) to one as
 * fast as A; no trade tried past max_tries; a node's ranks move together,
 * in their order. */
START_TEST(swaps_lower_the_step)
{
	tp_alloc *a = NULL;
	tp_error err;
	tp_conf *c = pipe_case(1, &a);
	tp__parallel p = parse_ok("tp=1,pp=2,bytes=tp:0,cp:0,ep:0,dp:0,pp:8", 4);
	const int32_t *mapa = PIPE_A, *mapb = PIPE_B;
	tp_prediction pa;
	struct tp__par_time tb, best;
	ck_assert_int_eq(tp__parallel_predict(&p, a, mapa, TP__PAR_PREDICT_FULL, &pa, NULL, NULL, &err), 0);
	ck_assert_int_eq(tp__parallel_time(&p, a, mapb, TP__PAR_PREDICT_FULL, &tb, &err), 0);
	int32_t map[4];
	int64_t kept = -1;
	memcpy(map, mapb, sizeof map);
	best = tb;
	ck_assert_int_eq(tp__parallel_swaps(&p, a, map, TP__PAR_PREDICT_FULL, 0, 0,
					    &best, &kept, &err), 0);
	ck_assert_int_eq(kept, 0);
	ck_assert_mem_eq(map, mapb, sizeof map);
	ck_assert_double_eq(best.p.exchange_us, tb.p.exchange_us);
	ck_assert_int_eq(tp__parallel_swaps(&p, a, map, TP__PAR_PREDICT_FULL, 1000, 0,
					    &best, &kept, &err), 0);
	ck_assert_int_gt(kept, 0);
	ck_assert_msg(best.p.exchange_us <= pa.exchange_us * (1 + 1e-9),
		      "traded %g us, A %g us", best.p.exchange_us, pa.exchange_us);
	/* what it returns is the map's: its time, its splits */
	struct tp__par_time now;
	ck_assert_int_eq(tp__parallel_time(&p, a, map, TP__PAR_PREDICT_FULL, &now, &err), 0);
	ck_assert_double_eq(now.p.exchange_us, best.p.exchange_us);
	ck_assert_int_eq(now.tp_split, best.tp_split);
	ck_assert_int_eq(now.pp_split, best.pp_split);
	ck_assert_int_le(best.pp_split, tb.pp_split);
	for (int i = 0; i < 4; i++)   /* one rank a node, each node once */
		for (int j = 0; j < i; j++)
			ck_assert_int_ne(map[i], map[j]);
	tp_alloc_destroy(a);
	tp_conf_destroy(c);
	/* two ranks a node (tp=2): they move together, in their order */
	c = pipe_case(2, &a);
	p = parse_ok("tp=2,pp=2,bytes=tp:1,cp:0,ep:0,dp:0,pp:8", 8);
	int32_t m2[8];
	for (int r = 0; r < 8; r++)
		m2[r] = mapb[r / 2];
	ck_assert_int_eq(tp__parallel_time(&p, a, m2, TP__PAR_PREDICT_FULL, &best, &err), 0);
	ck_assert_int_eq(tp__parallel_swaps(&p, a, m2, TP__PAR_PREDICT_FULL, 1000, 0,
					    &best, &kept, &err), 0);
	ck_assert_int_gt(kept, 0);
	for (int r = 0; r < 8; r += 2)
		ck_assert_int_eq(m2[r], m2[r + 1]);
	tp_alloc_destroy(a);
	tp_conf_destroy(c);
}
END_TEST

/* The drain (tp__parallel_drain) times the experts' all-to-all with the
 * gradients' all-reduces at once, which the overlap of the swaps leaves
 * out.  tp=1,ep=2,dp=2 on the two leaves of pipe_case: with every pair
 * across the leaves (X: ranks on n00, n04, n01, n05) the all-to-all
 * shares the cables up with the all-reduce rings and the drain is slower
 * than either; with each expert pair on one node (Y: two slots a node,
 * ranks 0 and 1 on n00, 2 and 3 on n04) it stays inside and the drain is
 * the all-reduces' alone. */
START_TEST(drain_sees_the_experts)
{
	tp_alloc *a = NULL;
	tp_error err;
	tp_conf *c = pipe_case(1, &a);
	tp__parallel p = parse_ok("tp=1,ep=2,dp=2,bytes=tp:0,cp:0,ep:8,dp:8,pp:0", 4);
	const int32_t X[4] = { 0, 3, 1, 4 };
	double drain, over;
	ck_assert_int_eq(tp__parallel_drain(&p, a, X, TP__PAR_PREDICT_FULL, &drain, &err), 0);
	ck_assert_int_eq(tp__parallel_overlap(&p, a, X, TP__PAR_PREDICT_FULL, &over, &err), 0);
	tp__parallel pe = parse_ok("tp=1,ep=2,dp=2,bytes=tp:0,cp:0,ep:8,dp:0,pp:0", 4);
	tp_prediction ep;
	ck_assert_int_eq(tp__parallel_predict(&pe, a, X, TP__PAR_PREDICT_FULL, &ep, NULL, NULL, &err), 0);
	ck_assert_msg(drain > 1.1 * over && drain > 1.1 * ep.exchange_us,
		      "drain %g us, all-reduces %g us, all-to-all %g us", drain,
		      over, ep.exchange_us);
	tp_alloc_destroy(a);
	tp_conf_destroy(c);
	c = pipe_case(2, &a);
	const int32_t Y[4] = { 0, 0, 3, 3 };
	ck_assert_int_eq(tp__parallel_drain(&p, a, Y, TP__PAR_PREDICT_FULL, &drain, &err), 0);
	ck_assert_int_eq(tp__parallel_overlap(&p, a, Y, TP__PAR_PREDICT_FULL, &over, &err), 0);
	ck_assert_double_eq_tol(drain, over, 1e-6 * over);
	tp_alloc_destroy(a);
	tp_conf_destroy(c);
}
END_TEST

/* A predicted tie with Slurm's order: its order stays unless the other
 * meets more of the layout's goals.  tp=2,pp=4 on six nodes of four
 * leaves (n00, n01, n03 | n08 | n14, n15): every order splits the same
 * stages and the steps time alike; auto's rule took hierarchical (3 %
 * fewer hop-bytes) before. */
START_TEST(tie_keeps_slurm_order)
{
	tp_conf *c = tree_conf();
	tp_job *job = run_job(c, "n[00-01,03,08,14-15]", 24, "tp=2,pp=4");
	const tp_prediction *pm = tp_job_prediction(job, false);
	const tp_prediction *pb = tp_job_prediction(job, true);
	ck_assert_ptr_nonnull(pm);
	ck_assert_double_eq_tol(pm->exchange_us, pb->exchange_us,
				1e-9 * pb->exchange_us);
	ck_assert_int_eq(tp_job_status(job), TP_JOB_KEPT);
	ck_assert_msg(strstr(tp_job_reason(job), "nor as fast and closer to the "
			     "layout's goals"), "%s", tp_job_reason(job));
	tp_job_destroy(job);
	/* the tie with more stages in one leaf still goes to the layout
	 * (tree_targets): n05 and n08 hold Slurm's third stage */
	job = run_job(c, "n[00-03,05,08-09,12]", 24, "tp=4,pp=3,bytes=dp:16");
	ck_assert_int_eq(tp_job_status(job), TP_JOB_PLACED);
	tp_job_destroy(job);
	tp_conf_destroy(c);
}
END_TEST

/* p's TP groups over two nodes and stages over two innermost groups, as
 * tp__parallel_splits counts them for map on c's n00, n01, n04, n05 (4
 * slots each; allocation indices 0 to 3); c destroyed. */
static void splits_are(tp_conf *c, const tp__parallel *p, const int32_t *map,
		       int64_t want_tp, int64_t want_pp)
{
	tp_alloc *a = NULL;
	tp_error err;
	ck_assert(tp_alloc_from_hostlist(tp_conf_machine(c), "n[00-01,04-05]", 4,
					 "nodes", &a, &err) == 0);
	int64_t ts, ps;
	ck_assert_int_eq(tp__parallel_splits(p, a, map, &ts, &ps), 0);
	ck_assert_int_eq(ts, want_tp);
	ck_assert_int_eq(ps, want_pp);
	tp_alloc_destroy(a);
	tp_conf_destroy(c);
}

/* The layout's goals as counted: TP groups over two nodes, stages over
 * two leaves (n00, n01 in l0; n04, n05 in l1). */
START_TEST(splits_counted)
{
	tp__parallel p = parse_ok("tp=4,pp=2", 16);
	int32_t map[16];
	for (int r = 0; r < 16; r++)
		map[r] = r / 4;   /* groups whole, stage 0 in l0, 1 in l1 */
	splits_are(tree_conf(), &p, map, 0, 0);
	map[3] = 2, map[8] = 0;   /* group 0 and group 2 over two nodes; both
				     stages over both leaves */
	splits_are(tree_conf(), &p, map, 2, 2);
	map[3] = 1, map[8] = 2;   /* group 0 over n00 and n01: one leaf */
	splits_are(tree_conf(), &p, map, 1, 0);
	/* a rail-optimised tree's leaves are scalable units, not NVLink
	 * domains: stages over two of them are not counted */
	map[3] = 2, map[8] = 0;
	tp_conf *c = conf_of("Network=tree TopologyFile=%s Rails=4 IntraNodeBandwidth=900\n"
			     "NodeName=n[00-15]\n", tree_file);
	ck_assert(tp__machine_rail_planes(tp_conf_machine(c)));
	splits_are(c, &p, map, 2, 0);
	/* a block network's cards (NetworkCards=, a card a GPU) are no rail
	 * planes: its blocks stay NVLink domains, and stages over two count */
	c = conf_of("Network=block TopologyFile=%s BlockBandwidth=900 NetworkBandwidth=50 "
		    "NetworkCards=4 IntraNodeBandwidth=900\nNodeName=n[00-15]\n", blk_file);
	ck_assert_int_eq(tp__machine_rails(tp_conf_machine(c)), 4);
	ck_assert(!tp__machine_rail_planes(tp_conf_machine(c)));
	splits_are(c, &p, map, 2, 2);
}
END_TEST

/* TP groups over nodes, and over blocks, counted (the note of a job's
 * order); a torus has no groups to be over. */
START_TEST(tp_spread_counted)
{
	tp_conf *c = block_conf();
	tp_alloc *a = NULL;
	tp_error err;
	/* allocation indices: n00 0, n01 1, n04 2, n05 3 (b0, b0, b1, b1) */
	ck_assert(tp_alloc_from_hostlist(tp_conf_machine(c), "n[00-01,04-05]", 4,
					 "nodes", &a, &err) == 0);
	tp__parallel p = parse_ok("tp=4,pp=2", 16);
	int32_t map[16];
	int64_t g, over, apart;
	for (int r = 0; r < 16; r++)
		map[r] = r / 4;
	ck_assert_int_eq(tp__parallel_tp_spread(&p, a, map, &g, &over, &apart), 0);
	ck_assert_int_eq(g, 4);
	ck_assert_int_eq(over, 0);
	ck_assert_int_eq(apart, 0);
	map[3] = 1, map[4] = 0;   /* groups 0 and 1 over n00 and n01: one block */
	map[11] = 3, map[12] = 2; /* groups 2 and 3 over n04 and n05: one block */
	ck_assert_int_eq(tp__parallel_tp_spread(&p, a, map, &g, &over, &apart), 0);
	ck_assert_int_eq(over, 4);
	ck_assert_int_eq(apart, 0);
	map[11] = 0;              /* group 2 over n04 and n00: two blocks */
	ck_assert_int_eq(tp__parallel_tp_spread(&p, a, map, &g, &over, &apart), 0);
	ck_assert_int_eq(over, 4);
	ck_assert_int_eq(apart, 1);
	tp_alloc_destroy(a);
	tp_conf_destroy(c);
	ck_assert_msg(tp_conf_load_string("Network=torus Dims=2x2x2 Wrap=yes\n"
					  "NodeName=node[1-8] CoordOrder=x-major\n",
					  "cfg", &c, &err) == 0, "%s", err.msg);
	ck_assert(tp_alloc_from_hostlist(tp_conf_machine(c), "node[1-4]", 4,
					 "nodes", &a, &err) == 0);
	ck_assert_int_eq(tp__parallel_tp_spread(&p, a, map, &g, &over, &apart), 0);
	ck_assert_int_eq(over, 4);
	ck_assert_int_eq(apart, 0);
	tp_alloc_destroy(a);
	tp_conf_destroy(c);
}
END_TEST

int main(void)
{
	/* made here: Check runs each test in a child of its own */
	blk_file = write_tmp("BlockName=b0 Nodes=n[00-03]\n"
				   "BlockName=b1 Nodes=n[04-07]\n"
				   "BlockName=b2 Nodes=n[08-11]\n"
				   "BlockName=b3 Nodes=n[12-15]\n"
				   "BlockSizes=4,16\n");
	tree6_file = write_tmp("SwitchName=l0 Nodes=n[00-05]\n"
			       "SwitchName=l1 Nodes=n[06-11]\n"
			       "SwitchName=l2 Nodes=n[12-17]\n"
			       "SwitchName=top Switches=l[0-2]\n");
	tree_file = write_tmp("SwitchName=l0 Nodes=n[00-03]\n"
				    "SwitchName=l1 Nodes=n[04-07]\n"
				    "SwitchName=l2 Nodes=n[08-11]\n"
				    "SwitchName=l3 Nodes=n[12-15]\n"
				    "SwitchName=top Switches=l[0-3]\n");
	Suite *s = suite_create("parallel");
	TCase *tc = tcase_create("parallel");
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, megatron_default);
	tcase_add_test(tc, permuted_and_mesh);
	tcase_add_test(tc, dp_defaulted);
	tcase_add_test(tc, expert_parallel);
	tcase_add_test(tc, expert_pairwise_steps);
	tcase_add_test(tc, expert_data_parallel);
	tcase_add_test(tc, context_parallel);
	tcase_add_test(tc, small_graph);
	tcase_add_test(tc, ring_follows_map);
	tcase_add_test(tc, model_volumes);
	tcase_add_test(tc, bad_input);
	tcase_add_test(tc, candidate_layout);
	tcase_add_test(tc, candidate_fullest);
	tcase_add_test(tc, window_keeps_its_groups);
	tcase_add_test(tc, block_targets);
	tcase_add_test(tc, tree_targets);
	tcase_add_test(tc, torus_no_hierarchy);
	tcase_add_test(tc, job_errors);
	tcase_add_test(tc, predict_step);
	tcase_add_test(tc, predict_pipeline);
	tcase_add_test(tc, predict_pipeline_directions);
	tcase_add_test(tc, predict_replicas_apart);
	tcase_add_test(tc, predict_all_to_all_steps);
	tcase_add_test(tc, predict_pipeline_waves);
	tcase_add_test(tc, predict_pipeline_replicas_apart);
	tcase_add_test(tc, predict_step_schedule);
	tcase_add_test(tc, swaps_lower_the_step);
	tcase_add_test(tc, drain_sees_the_experts);
	tcase_add_test(tc, tie_keeps_slurm_order);
	tcase_add_test(tc, splits_counted);
	tcase_add_test(tc, tp_spread_counted);
	suite_add_tcase(s, tc);
	int rc = tp_test_run(s);
	unlink(blk_file);
	unlink(tree_file);
	unlink(tree6_file);
	free(blk_file);
	free(tree_file);
	free(tree6_file);
	return rc;
}
