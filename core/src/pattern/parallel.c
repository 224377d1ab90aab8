/* topoplace — a training job's parallel layout (--parallel, --topo-parallel)
 * and the communication graph of one training step.
 *
 * The spec:  tp=8,cp=1,ep=1,pp=4[,dp=N][,order=tp-cp-ep-dp-pp | mesh=pp,dp,cp,tp]
 *            [,bytes=tp:64,cp:32,ep:16,dp:8,pp:1]
 *            [,model=hidden:H,layers:L,seq:S[,mbs:B,micro:M|gbs:G,experts:E,topk:K]]
 *            [,micro=M]
 * Ranks are the framework's (SLURM_PROCID, one a GPU).  order= is Megatron's
 * convention, the first kind varies fastest; mesh= is torchtitan's device
 * mesh, written outermost first (the last varies fastest), so mesh=pp,dp,
 * cp,tp is order=tp-cp-dp-pp.  Items of bytes= and mesh= may go on after a
 * comma (a bare word carries on the key before it): "mesh=pp,dp,tp" reads
 * as one key; model='s too.  dp defaults to what the task count leaves.
 * model= derives the volumes from the model's sizes (model_bytes below);
 * bytes= still overrides a kind it names.  micro= is the micro-batches a
 * step without model= (default pp), for the pipeline's timing alone.
 *
 * The groups, with the mesh multiplicative (tasks = tp x cp x ep x dp x pp):
 *   TP  ranks that differ in tp alone: all-reduce of activations;
 *   CP  ranks that differ in cp alone: ring attention passes K and V;
 *   EP  ranks that differ in ep alone: all-to-all of tokens;
 *   DP  ranks with the same tp and pp (they differ in cp, ep, dp): the
 *       replicas of one parameter shard, whose gradients are all-reduced
 *       (Megatron's data-parallel group with context parallelism);
 *   PP  ranks that differ in pp alone: stage s sends to stage s + 1.
 *
 * The graph, as NCCL runs the collectives:
 *   a ring group of n (TP, CP, DP) is a ring: each member sends to the next
 *   one and never back (NCCL's ring all-reduce and MPI's: every channel's
 *   ring runs the same way).  An all-reduce is a reduce-scatter then an
 *   all-gather, 2(n-1)/n of the group's volume B sent by each member, all
 *   of it to the next member: the time model sees the ring one way (the
 *   graph's send[]), so two rings that share a cable in opposite
 *   directions do not meet, and two the same way do.  The mapping's
 *   symmetric weight of a ring pair is half that, B(n-1)/n, as before (for
 *   n = 2 the two edges of the ring are one pair: B each way);
 *   an EP group's all-to-all sends B/n to every other member;
 *   a PP edge carries B each way (activations forward, gradients back).
 * The ring's order is NCCL's: members grouped by node, the nodes in the
 * order of their lowest rank, ranks ascending inside a node (map NULL:
 * rank order).  So the graph follows the placement it is scored for.
 *
 * Relative volumes per step and rank (bytes=, defaults in
 * TP__PAR_DEFAULT_BYTES), in units of TP__PAR_UNIT_BYTES: one step's
 * communication is one exchange of the time model (predict.h), all
 * messages at once.
 */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/util_internal.h"
#include "pattern/pattern_internal.h"

const char *const tp__par_kind_names[TP__PAR_KINDS] = { "tp", "cp", "ep", "dp",
							"pp" };

/* Defaults, per rank and step, relative (see doc/ai-clusters.md):
 *   tp 64  a transformer layer all-reduces its activations twice forward
 *          and twice backward, for every micro-batch and every layer of the
 *          stage: tens of activation-sized messages for each one PP sends;
 *   cp 32  ring attention sends K and V (smaller than the activations with
 *          grouped-query attention) around the ring, each layer, both ways;
 *   ep 16  each MoE layer dispatches and combines tokens (two all-to-alls
 *          forward, two backward), only in its MoE layers;
 *   dp  8  the gradients of the rank's parameter shard, once a step;
 *   pp  1  one activation forward and one gradient back per micro-batch at
 *          each stage boundary. */
static const double TP__PAR_DEFAULT_BYTES[TP__PAR_KINDS] = { 64, 32, 16, 8, 1 };

#define SPEC_MAX 512
#define SIZE_MAX_VALUE INT32_MAX
#define BYTES_MAX 1e9
/* An all-to-all of n ranks is n(n-1)/2 pairs a group: bounded. */
#define EP_PAIRS_MAX ((int64_t)1 << 24)

int tp__par_kind(const char *s, size_t n)
{
	for (int k = 0; k < TP__PAR_KINDS; k++)
		if (strlen(tp__par_kind_names[k]) == n &&
		    !strncmp(s, tp__par_kind_names[k], n))
			return k;
	return -1;
}

static int bad(tp_error *err, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static int bad(tp_error *err, const char *fmt, ...)
{
	char msg[TP_ERROR_MSG_MAX];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	return tp_error_set(err, TP_EINVAL, "%s", msg);
}

/* A kind's size (or micro='s count): a decimal count 1..INT32_MAX; zero
 * says why a count must be at least 1. */
static int parse_size(const char *key, const char *v, const char *zero,
		      int64_t *out, tp_error *err)
{
	if (!*v)
		return bad(err, "%s=: no value", key);
	for (const char *c = v; *c; c++)
		if (!isdigit((unsigned char)*c))
			return bad(err, "%s=%.40s: not a count", key, v);
	errno = 0;
	long long n = strtoll(v, NULL, 10);
	if (errno || n > SIZE_MAX_VALUE)
		return bad(err, "%s=%.40s: too large (at most %d)", key, v,
			   SIZE_MAX_VALUE);
	if (n == 0)
		return bad(err, "%s=0: %s", key, zero);
	*out = n;
	return 0;
}

/* One order item ("tp"), into order[*n]. */
static int add_order(const char *key, const char *s, size_t len, int *order,
		     int *n, bool *named, tp_error *err)
{
	int k = tp__par_kind(s, len);
	if (k < 0)
		return bad(err, "%s=: '%.*s' is no group kind (tp, cp, ep, dp, pp)",
			   key, (int)(len > 20 ? 20 : len), s);
	if (named[k])
		return bad(err, "%s=: %s named twice", key, tp__par_kind_names[k]);
	named[k] = true;
	order[(*n)++] = k;
	return 0;
}

/* Items separated by sep ('-' in order=, '-' in mesh=). */
static int parse_order_list(const char *key, const char *v, int *order,
			    int *n, bool *named, tp_error *err)
{
	if (!*v)
		return bad(err, "%s=: no value", key);
	const char *s = v;
	for (;;) {
		const char *e = strchr(s, '-');
		size_t len = e ? (size_t)(e - s) : strlen(s);
		if (!len)
			return bad(err, "%s=%.60s: an empty item", key, v);
		int rc = add_order(key, s, len, order, n, named, err);
		if (rc)
			return rc;
		if (!e)
			return 0;
		s = e + 1;
	}
}

/* One bytes= item, "tp:64". */
static int parse_bytes_item(const char *s, double *bytes, bool *set,
			    tp_error *err)
{
	const char *colon = strchr(s, ':');
	if (!colon)
		return bad(err, "bytes=: '%.40s' is not KIND:VOLUME (e.g. tp:64)", s);
	int k = tp__par_kind(s, (size_t)(colon - s));
	if (k < 0)
		return bad(err, "bytes=: '%.*s' is no group kind (tp, cp, ep, dp, pp)",
			   (int)((colon - s) > 20 ? 20 : (colon - s)), s);
	if (set[k])
		return bad(err, "bytes=: %s given twice", tp__par_kind_names[k]);
	char *end;
	errno = 0;
	double b = strtod(colon + 1, &end);
	if (colon[1] == '\0' || *end || errno || !isfinite(b) || b < 0 ||
	    b > BYTES_MAX || isspace((unsigned char)colon[1]))
		return bad(err, "bytes=: %.40s: the volume must be a number from 0 "
			   "to %g", s, BYTES_MAX);
	set[k] = true;
	bytes[k] = b;
	return 0;
}

/* ---- model=: the volumes from the model's sizes ----
 *
 * model=hidden:H,layers:L,seq:S[,mbs:B][,micro:M | gbs:G][,experts:E,topk:K]
 * Two bytes an element (bf16 activations and gradients).  With
 *   a  = S/cp x B x H x 2       one micro-batch's activations on a rank
 *                               (its part of the sequence),
 *   Ls = L/pp                   the layers of a stage,
 *   M  micro-batches a step     (micro:, or gbs / (mbs x ep x dp), the
 *                               Megatron data-parallel size being ep x dp;
 *                               neither: pp, the fewest that fill the
 *                               pipeline),
 * each kind's bytes B (the volume its collective moves, as bytes= means):
 *   tp  4 Ls M a      each layer all-reduces its activations twice
 *                     forward (attention, MLP) and twice backward
 *                     (sequence parallelism's all-gather and reduce-scatter
 *                     move the same);
 *   cp  3 cp Ls M a   ring attention passes K and V (2a a hop, cp-1 hops)
 *                     forward and K, V, dK, dV backward: 6a(cp-1) sent a
 *                     layer, which a ring of 2B(cp-1)/cp carries with
 *                     B = 3 cp a (without grouped-query attention: an
 *                     upper bound);
 *   ep  4 Ls M a K    each MoE layer dispatches and combines every token
 *                     to its top-K experts, twice forward, twice backward;
 *   pp  M a           one activation forward and one gradient back a
 *                     micro-batch (each way: B);
 *   dp  2 Ls H^2 (4 + 8 E/ep) / tp   the rank's gradients, once a step:
 *                     attention 4H^2 and MLP 8H^2 parameters a layer (the
 *                     12 L H^2 of a GPT; SwiGLU's three matrices of about
 *                     3.5H are as many), each MoE layer E experts' MLPs
 *                     over ep ranks, all over tp (embeddings left out).
 * In units of TP__PAR_UNIT_BYTES, so the predicted time is the step's.
 * A bytes= item overrides the kind it names. */
enum { M_HIDDEN, M_LAYERS, M_SEQ, M_MBS, M_MICRO, M_GBS, M_EXPERTS, M_TOPK,
       M_KEYS };
static const char *const MODEL_KEYS[M_KEYS] = { "hidden", "layers", "seq",
						"mbs", "micro", "gbs",
						"experts", "topk" };
#define MODEL_KEY_LIST "hidden, layers, seq, mbs, micro, gbs, experts, topk"

struct model {
	int64_t v[M_KEYS];
	bool set[M_KEYS];
};

/* One model= item, "hidden:8192". */
static int parse_model_item(const char *s, struct model *m, tp_error *err)
{
	const char *colon = strchr(s, ':');
	if (!colon)
		return bad(err, "model=: '%.40s' is not KEY:COUNT (e.g. hidden:8192)", s);
	size_t n = (size_t)(colon - s);
	int k = -1;
	for (int i = 0; i < M_KEYS && k < 0; i++)
		if (strlen(MODEL_KEYS[i]) == n && !strncmp(s, MODEL_KEYS[i], n))
			k = i;
	if (k < 0)
		return bad(err, "model=: unknown key '%.*s' (" MODEL_KEY_LIST ")",
			   (int)(n > 20 ? 20 : n), s);
	if (m->set[k])
		return bad(err, "model=: %s given twice", MODEL_KEYS[k]);
	const char *v = colon + 1;
	bool digits = *v != '\0';
	for (const char *c = v; *c; c++)
		digits &= isdigit((unsigned char)*c) != 0;
	errno = 0;
	long long x = digits ? strtoll(v, NULL, 10) : 0;
	if (!digits || errno || x < 1 || x > SIZE_MAX_VALUE)
		return bad(err, "model=: %.40s: %s must be a count from 1 to %d", s,
			   MODEL_KEYS[k], SIZE_MAX_VALUE);
	m->set[k] = true;
	m->v[k] = x;
	return 0;
}

/* The bytes of every kind bytes= left unset, from the model (above). */
static int model_bytes(const struct model *m, tp__parallel *p,
		       const bool *bytes_set, tp_error *err)
{
	static const int need[] = { M_HIDDEN, M_LAYERS, M_SEQ };
	for (size_t i = 0; i < sizeof need / sizeof need[0]; i++)
		if (!m->set[need[i]])
			return bad(err, "model=: %s: missing (hidden, layers and seq "
				   "are needed)", MODEL_KEYS[need[i]]);
	if (m->set[M_MICRO] && m->set[M_GBS])
		return bad(err, "model=: micro and gbs both given: one count of "
			   "micro-batches only");
	const int64_t *sz = p->size;
	if (sz[TP__PAR_EP] > 1 && !m->set[M_EXPERTS])
		return bad(err, "model=: ep=%lld needs experts:N (and topk:K)",
			   (long long)sz[TP__PAR_EP]);
	if (m->set[M_EXPERTS] && m->v[M_EXPERTS] % sz[TP__PAR_EP])
		return bad(err, "model=: experts:%lld are not shared evenly by "
			   "ep=%lld", (long long)m->v[M_EXPERTS],
			   (long long)sz[TP__PAR_EP]);
	if (m->set[M_TOPK] && !m->set[M_EXPERTS])
		return bad(err, "model=: topk without experts");
	if (m->set[M_TOPK] && m->v[M_TOPK] > m->v[M_EXPERTS])
		return bad(err, "model=: topk:%lld is more than experts:%lld",
			   (long long)m->v[M_TOPK], (long long)m->v[M_EXPERTS]);
	double H = (double)m->v[M_HIDDEN], mbs = m->set[M_MBS] ? (double)m->v[M_MBS] : 1;
	double M = p->micro;     /* micro=, else pp */
	if (m->set[M_MICRO])
		M = (double)m->v[M_MICRO];
	if (m->set[M_GBS]) {
		int64_t per = (m->set[M_MBS] ? m->v[M_MBS] : 1) * sz[TP__PAR_EP] *
			      sz[TP__PAR_DP];
		if (m->v[M_GBS] % per)
			return bad(err, "model=: gbs:%lld is not a whole number of "
				   "micro-batches of mbs x ep x dp = %lld",
				   (long long)m->v[M_GBS], (long long)per);
		M = (double)(m->v[M_GBS] / per);
	}
	double a = (double)m->v[M_SEQ] / (double)sz[TP__PAR_CP] * mbs * H * 2;
	double Ls = (double)m->v[M_LAYERS] / (double)sz[TP__PAR_PP];
	double K = m->set[M_TOPK] ? (double)m->v[M_TOPK] : 1;
	double E = m->set[M_EXPERTS] ? (double)m->v[M_EXPERTS] : 0;
	double mlp = E > 0 ? 8 * E / (double)sz[TP__PAR_EP] : 8;
	double b[TP__PAR_KINDS];
	b[TP__PAR_TP] = 4 * Ls * M * a;
	b[TP__PAR_CP] = 3 * (double)sz[TP__PAR_CP] * Ls * M * a;
	b[TP__PAR_EP] = E > 0 ? 4 * Ls * M * a * K : 0;
	b[TP__PAR_PP] = M * a;
	b[TP__PAR_DP] = 2 * Ls * H * H * (4 + mlp) / (double)sz[TP__PAR_TP];
	p->micro = M;
	for (int k = 0; k < TP__PAR_KINDS; k++) {
		if (bytes_set[k])
			continue;
		double v = b[k] / TP__PAR_UNIT_BYTES;
		if (!isfinite(v) || v > BYTES_MAX)
			return bad(err, "model=: the %s volume, %g MiB a step, is more "
				   "than %g", tp__par_kind_names[k], v, BYTES_MAX);
		p->bytes[k] = v;
	}
	return 0;
}

enum { KEY_NONE = -1, KEY_ORDER = TP__PAR_KINDS, KEY_MESH, KEY_BYTES,
       KEY_MODEL, KEY_MICRO, NKEYS };
static const char *const MORE_KEYS[NKEYS - TP__PAR_KINDS] = {
	"order", "mesh", "bytes", "model", "micro"
};

static int key_of(const char *s, size_t n)
{
	int k = tp__par_kind(s, n);
	if (k >= 0)
		return k;
	for (int i = 0; i < NKEYS - TP__PAR_KINDS; i++)
		if (strlen(MORE_KEYS[i]) == n && !strncmp(s, MORE_KEYS[i], n))
			return TP__PAR_KINDS + i;
	return KEY_NONE;
}

static const char *key_name(int key)
{
	return key < TP__PAR_KINDS ? tp__par_kind_names[key]
	       : MORE_KEYS[key - TP__PAR_KINDS];
}

/* The sizes known, the product and dp. */
static int settle_sizes(tp__parallel *p, bool dp_given, int64_t ntasks,
			tp_error *err)
{
	int64_t prod = 1;
	for (int k = 0; k < TP__PAR_KINDS; k++) {
		if (k == TP__PAR_DP && !dp_given)
			continue;
		if (prod > SIZE_MAX_VALUE / p->size[k])
			return bad(err, "the group sizes multiply to more than %d "
				   "ranks", SIZE_MAX_VALUE);
		prod *= p->size[k];
	}
	if (dp_given) {
		if (ntasks > 0 && prod != ntasks)
			return bad(err, "tp x cp x ep x dp x pp = %lld, but the job "
				   "has %lld tasks", (long long)prod,
				   (long long)ntasks);
		p->ntasks = prod;
		return 0;
	}
	if (ntasks <= 0)
		return bad(err, "no dp= and no task count to derive it from: "
			   "give dp=N or the number of tasks");
	if (ntasks % prod)
		return bad(err, "tp x cp x ep x pp = %lld does not divide the "
			   "%lld tasks (dp would not be whole)", (long long)prod,
			   (long long)ntasks);
	p->size[TP__PAR_DP] = ntasks / prod;
	p->ntasks = ntasks;
	return 0;
}

int tp__parallel_parse(const char *spec, int64_t ntasks, tp__parallel *p,
		       tp_error *err)
{
	memset(p, 0, sizeof *p);
	if (!spec || !*spec)
		return bad(err, "empty (e.g. tp=8,pp=4)");
	size_t sl = strlen(spec);
	if (sl >= SPEC_MAX)
		return bad(err, "longer than %d characters", SPEC_MAX - 1);
	char buf[SPEC_MAX];
	memcpy(buf, spec, sl + 1);
	bool given[NKEYS] = { false };
	bool bytes_set[TP__PAR_KINDS] = { false }, named[TP__PAR_KINDS] = { false };
	struct model model = { { 0 }, { false } };
	int order[TP__PAR_KINDS], norder = 0;
	int64_t micro = 0;
	for (int k = 0; k < TP__PAR_KINDS; k++) {
		p->size[k] = 1;
		p->bytes[k] = TP__PAR_DEFAULT_BYTES[k];
	}
	int cont = KEY_NONE;   /* the key a bare item carries on */
	char *save = NULL;
	int rc = 0;
	if (buf[0] == ',' || buf[sl - 1] == ',' || strstr(buf, ",,"))
		return bad(err, "%.60s: an empty item", spec);
	for (char *tok = strtok_r(buf, ",", &save); tok && !rc;
	     tok = strtok_r(NULL, ",", &save)) {
		char *eq = strchr(tok, '=');
		if (!eq) {
			if (cont == KEY_BYTES)
				rc = parse_bytes_item(tok, p->bytes, bytes_set, err);
			else if (cont == KEY_MODEL)
				rc = parse_model_item(tok, &model, err);
			else if (cont == KEY_MESH)
				rc = add_order("mesh", tok, strlen(tok), order,
					       &norder, named, err);
			else
				rc = bad(err, "'%.40s': expected KEY=VALUE (tp, cp, ep, "
					 "dp, pp, order, mesh, bytes, model, micro)", tok);
			continue;
		}
		int key = key_of(tok, (size_t)(eq - tok));
		const char *v = eq + 1;
		if (key == KEY_NONE)
			return bad(err, "unknown key '%.*s' (tp, cp, ep, dp, pp, "
				   "order, mesh, bytes, model, micro)",
				   (int)((eq - tok) > 20 ? 20 : (eq - tok)), tok);
		if (given[key])
			return bad(err, "%s given twice", key_name(key));
		given[key] = true;
		cont = KEY_NONE;
		if (key < TP__PAR_KINDS)
			rc = parse_size(key_name(key), v, "a group has at least 1 rank",
					&p->size[key], err);
		else if (key == KEY_MICRO)
			rc = parse_size("micro", v, "a step has at least 1 micro-batch",
					&micro, err);
		else if (key == KEY_ORDER || key == KEY_MESH) {
			if (given[KEY_ORDER] && given[KEY_MESH])
				return bad(err, "order= and mesh= both given: one "
					   "rank order only");
			rc = parse_order_list(key_name(key), v, order, &norder,
					      named, err);
			cont = key == KEY_MESH ? KEY_MESH : KEY_NONE;
		} else if (key == KEY_MODEL) {
			if (!*v)
				return bad(err, "model=: no value");
			rc = parse_model_item(v, &model, err);
			cont = KEY_MODEL;
		} else {
			if (!*v)
				return bad(err, "bytes=: no value");
			rc = parse_bytes_item(v, p->bytes, bytes_set, err);
			cont = KEY_BYTES;
		}
	}
	if (rc)
		return rc;
	if (given[KEY_MESH])   /* outermost first: reversed */
		for (int i = 0; i < norder / 2; i++) {
			int t = order[i];
			order[i] = order[norder - 1 - i];
			order[norder - 1 - i] = t;
		}
	if (!given[KEY_ORDER] && !given[KEY_MESH])
		for (int k = 0; k < TP__PAR_KINDS; k++)   /* tp-cp-ep-dp-pp */
			order[norder++] = k, named[k] = true;
	if ((rc = settle_sizes(p, given[TP__PAR_DP], ntasks, err)))
		return rc;
	/* a kind the order leaves out must not matter: size 1 */
	for (int k = 0; k < TP__PAR_KINDS; k++) {
		if (named[k])
			continue;
		if (p->size[k] > 1)
			return bad(err, "%s= does not name %s (%s=%lld)",
				   given[KEY_MESH] ? "mesh" : "order",
				   tp__par_kind_names[k], tp__par_kind_names[k],
				   (long long)p->size[k]);
		order[norder++] = k;
	}
	int64_t stride = 1;
	for (int i = 0; i < TP__PAR_KINDS; i++) {
		p->order[i] = order[i];
		p->stride[order[i]] = stride;
		stride *= p->size[order[i]];
	}
	p->micro = (double)(given[KEY_MICRO] ? micro : p->size[TP__PAR_PP]);
	if (given[KEY_MICRO] && (model.set[M_MICRO] || model.set[M_GBS]))
		return bad(err, "micro= and model='s %s both given: one count of "
			   "micro-batches only", model.set[M_MICRO] ? "micro" : "gbs");
	if (given[KEY_MODEL] && (rc = model_bytes(&model, p, bytes_set, err)))
		return rc;
	int64_t ep = p->size[TP__PAR_EP];
	if (ep > 1 && (p->ntasks / ep) > EP_PAIRS_MAX / (ep * (ep - 1) / 2))
		return bad(err, "ep=%lld: the all-to-alls would take more than "
			   "%lld pairs", (long long)ep, (long long)EP_PAIRS_MAX);
	return 0;
}

int64_t tp__parallel_coord(const tp__parallel *p, int64_t rank, int kind)
{
	return rank / p->stride[kind] % p->size[kind];
}

int tp__parallel_describe(const tp__parallel *p, char *buf, size_t len)
{
	char ord[32] = "";
	for (int i = 0; i < TP__PAR_KINDS; i++)
		snprintf(ord + strlen(ord), sizeof ord - strlen(ord), "%s%s",
			 i ? "-" : "", tp__par_kind_names[p->order[i]]);
	return snprintf(buf, len, "tp=%lld,cp=%lld,ep=%lld,dp=%lld,pp=%lld,"
			"order=%s,bytes=tp:%g,cp:%g,ep:%g,dp:%g,pp:%g,micro=%.0f",
			(long long)p->size[0], (long long)p->size[1],
			(long long)p->size[2], (long long)p->size[3],
			(long long)p->size[4], ord, p->bytes[0], p->bytes[1],
			p->bytes[2], p->bytes[3], p->bytes[4], p->micro);
}

/* The members of every group whose kinds vary (vary[k]), each group in
 * rank order, written group after group to out (p->ntasks ranks); the
 * group size into *gsize. */
static void groups_of(const tp__parallel *p, const bool *vary, int32_t *out,
		      int64_t *gsize)
{
	int64_t n = 1;
	for (int k = 0; k < TP__PAR_KINDS; k++)
		if (vary[k])
			n *= p->size[k];
	*gsize = n;
	int64_t at = 0;
	for (int64_t r = 0; r < p->ntasks; r++) {
		bool leader = true;
		for (int k = 0; k < TP__PAR_KINDS && leader; k++)
			if (vary[k] && tp__parallel_coord(p, r, k))
				leader = false;
		if (!leader)
			continue;
		/* the members: every combination of the varying coordinates,
		 * counted in the rank order's own digits (ascending ranks) */
		for (int64_t i = 0; i < n; i++) {
			int64_t rest = i, rank = r;
			for (int o = 0; o < TP__PAR_KINDS; o++) {
				int k = p->order[o];
				if (!vary[k])
					continue;
				rank += rest % p->size[k] * p->stride[k];
				rest /= p->size[k];
			}
			out[at++] = (int32_t)rank;
		}
	}
}

/* NCCL's ring order of one group (members in rank order): by node, nodes
 * in the order of their lowest rank, ranks ascending within a node. */
struct ring_key {
	int64_t node_first;
	int32_t node, rank;
};

static int cmp_node_rank(const void *x, const void *y)
{
	const struct ring_key *a = x, *b = y;
	if (a->node != b->node)
		return a->node < b->node ? -1 : 1;
	return (a->rank > b->rank) - (a->rank < b->rank);
}

static int cmp_first_rank(const void *x, const void *y)
{
	const struct ring_key *a = x, *b = y;
	if (a->node_first != b->node_first)
		return a->node_first < b->node_first ? -1 : 1;
	return (a->rank > b->rank) - (a->rank < b->rank);
}

static void ring_order(int32_t *m, int64_t n, const int32_t *map,
		       struct ring_key *tmp)
{
	for (int64_t i = 0; i < n; i++)
		tmp[i] = (struct ring_key){ 0, map[m[i]], m[i] };
	qsort(tmp, (size_t)n, sizeof *tmp, cmp_node_rank);
	int64_t first = 0;
	for (int64_t i = 0; i < n; i++) {
		if (i && tmp[i].node != tmp[i - 1].node)
			first = i;
		tmp[i].node_first = tmp[first].rank;
	}
	qsort(tmp, (size_t)n, sizeof *tmp, cmp_first_rank);
	for (int64_t i = 0; i < n; i++)
		m[i] = tmp[i].rank;
}

struct edges {
	int32_t *u, *v;
	double *w;
	bool *oneway;        /* u sends 2w to v and v nothing to u */
	int64_t n, cap;
};

static int push_dir(struct edges *e, int32_t a, int32_t b, double w,
		    bool oneway)
{
	if (e->n == e->cap) {
		int64_t cap = e->cap ? 2 * e->cap : 1024;
		int32_t *u = realloc(e->u, (size_t)cap * sizeof *u);
		if (u)
			e->u = u;
		int32_t *v = realloc(e->v, (size_t)cap * sizeof *v);
		if (v)
			e->v = v;
		double *w2 = realloc(e->w, (size_t)cap * sizeof *w2);
		if (w2)
			e->w = w2;
		bool *o = realloc(e->oneway, (size_t)cap * sizeof *o);
		if (o)
			e->oneway = o;
		if (!u || !v || !w2 || !o)
			return TP_ENOMEM;
		e->cap = cap;
	}
	e->u[e->n] = a;
	e->v[e->n] = b;
	e->w[e->n] = w;
	e->oneway[e->n] = oneway;
	e->n++;
	return 0;
}

static int push(struct edges *e, int32_t a, int32_t b, double w)
{
	return push_dir(e, a, b, w, false);
}

/* The graph's send[] from the edges: a two-way edge's w each way, a
 * one-way edge's 2w from u to v (the pair's symmetric weight stays w, so
 * the mapping and the metrics see the same bytes).  Only when some edge is
 * one-way. */
static int set_send(tp_graph *g, const struct edges *e)
{
	bool any = false;
	for (int64_t i = 0; i < e->n && !any; i++)
		any = e->oneway[i];
	if (!any)
		return 0;
	g->send = tp__calloc((size_t)(2 * g->nedges) + 1, sizeof *g->send);
	if (!g->send)
		return TP_ENOMEM;
	for (int64_t i = 0; i < e->n; i++) {
		int64_t f = tp__graph_entry(g, e->u[i], e->v[i]);
		int64_t r = tp__graph_entry(g, e->v[i], e->u[i]);
		if (f < 0 || r < 0)
			continue;   /* cannot be: every edge is in the graph */
		if (e->oneway[i]) {
			g->send[f] += 2 * e->w[i];
		} else {
			g->send[f] += e->w[i];
			g->send[r] += e->w[i];
		}
	}
	return 0;
}

int tp__parallel_graph(const tp__parallel *p, const int32_t *map,
		       tp_graph **out, tp_error *err)
{
	return tp__parallel_graph_kinds(p, map, TP__PAR_ALL, out, err);
}

int tp__parallel_graph_kinds(const tp__parallel *p, const int32_t *map,
			     unsigned kinds, tp_graph **out, tp_error *err)
{
	return tp__parallel_graph_stages(p, map, kinds, 0, 0, out, err);
}

/* Is stage coordinate c in the set (bit c of mask; 0: every stage)? */
static bool stage_in(uint64_t mask, int64_t c)
{
	return !mask || (c >= 0 && c < 64 && ((mask >> c) & 1));
}

int tp__parallel_graph_stages(const tp__parallel *p, const int32_t *map,
			      unsigned kinds, uint64_t stages, int64_t ep_step,
			      tp_graph **out, tp_error *err)
{
	*out = NULL;
	int64_t nt = p->ntasks;
	int32_t *mem = tp__malloc_array((size_t)nt + 1, sizeof(int32_t));
	struct ring_key *tmp = tp__malloc_array((size_t)nt + 1, sizeof *tmp);
	struct edges e = { 0 };
	int rc = mem && tmp ? 0 : TP_ENOMEM;
	/* ring kinds: TP, CP, DP (DP: every replica of a shard, tp and pp
	 * fixed), and with ep > 1 the experts' DP (ep fixed too): the
	 * gradients of an MoE step are two all-reduces, half the bytes each
	 * (pattern_internal.h) */
	static const bool RING_VARY[4][TP__PAR_KINDS] = {
		[0] = { [TP__PAR_TP] = true },
		[1] = { [TP__PAR_CP] = true },
		[2] = { [TP__PAR_CP] = true, [TP__PAR_EP] = true, [TP__PAR_DP] = true },
		[3] = { [TP__PAR_CP] = true, [TP__PAR_DP] = true },
	};
	static const int RING_KIND[4] = { TP__PAR_TP, TP__PAR_CP, TP__PAR_DP, TP__PAR_DP };
	static const unsigned RING_BIT[4] = { 1u << TP__PAR_TP, 1u << TP__PAR_CP,
					      1u << TP__PAR_DP, 1u << TP__PAR_EDP };
	bool moe = p->size[TP__PAR_EP] > 1;
	for (int g = 0; g < 4 && !rc; g++) {
		if (!(kinds & RING_BIT[g]) || (g == 3 && !moe))
			continue;
		double B = p->bytes[RING_KIND[g]] * TP__PAR_UNIT_BYTES;
		if (moe && RING_KIND[g] == TP__PAR_DP)
			B /= 2;
		int64_t n;
		groups_of(p, RING_VARY[g], mem, &n);
		if (n < 2 || B == 0)
			continue;
		double w = B * (double)(n - 1) / (double)n;
		for (int64_t s = 0; s < nt && !rc; s += n) {
			if (!stage_in(stages, tp__parallel_coord(p, mem[s], TP__PAR_PP)))
				continue;   /* every member has its pp */
			if (map)
				ring_order(mem + s, n, map, tmp);
			for (int64_t i = 0; i < n && !rc; i++)
				rc = push_dir(&e, mem[s + i], mem[s + (i + 1) % n],
					      w, true);
		}
	}
	int64_t ep = p->size[TP__PAR_EP];
	double Bep = p->bytes[TP__PAR_EP] * TP__PAR_UNIT_BYTES;
	if (!rc && ep > 1 && Bep > 0 && (kinds & (1u << TP__PAR_EP))) {
		bool vary[TP__PAR_KINDS] = { [TP__PAR_EP] = true };
		int64_t n;
		groups_of(p, vary, mem, &n);
		for (int64_t s = 0; s < nt && !rc; s += n) {
			if (!stage_in(stages, tp__parallel_coord(p, mem[s], TP__PAR_PP)))
				continue;
			for (int64_t i = 0; i < n && !rc; i++) {
				if (ep_step > 0) {   /* one way: 2w sent */
					rc = push_dir(&e, mem[s + i],
						      mem[s + (i + ep_step) % n],
						      Bep / (double)(2 * n), true);
					continue;
				}
				for (int64_t j = i + 1; j < n && !rc; j++)
					rc = push(&e, mem[s + i], mem[s + j],
						  Bep / (double)n);
			}
		}
	}
	int64_t pp = p->size[TP__PAR_PP], ps = p->stride[TP__PAR_PP];
	double Bpp = p->bytes[TP__PAR_PP] * TP__PAR_UNIT_BYTES;
	bool both = kinds & (1u << TP__PAR_PP);
	bool fwd = kinds & (1u << TP__PAR_PP_FWD), bwd = kinds & (1u << TP__PAR_PP_BWD);
	if (!both && !fwd && !bwd)
		pp = 1;
	for (int64_t r = 0; !rc && pp > 1 && Bpp > 0 && r < nt; r++) {
		if (tp__parallel_coord(p, r, TP__PAR_PP) == pp - 1 ||
		    !stage_in(stages, tp__parallel_coord(p, r, TP__PAR_PP)))
			continue;
		int32_t a = (int32_t)r, b = (int32_t)(r + ps);
		/* one way: a one-way edge of w sends 2w (set_send) */
		if (both || (fwd && bwd))
			rc = push(&e, a, b, Bpp);
		else if (fwd)
			rc = push_dir(&e, a, b, Bpp / 2, true);
		else
			rc = push_dir(&e, b, a, Bpp / 2, true);
	}
	free(mem);
	free(tmp);
	if (!rc) {
		rc = tp_graph_from_edges(out, (int32_t)nt, e.n, e.u, e.v, e.w,
					 "parallel", err);
		if (!rc && set_send(*out, &e)) {
			tp_graph_destroy(*out);
			*out = NULL;
			rc = tp_error_set(err, TP_ENOMEM, "out of memory");
		}
	} else {
		rc = tp_error_set(err, rc, "out of memory");
	}
	free(e.u);
	free(e.v);
	free(e.w);
	free(e.oneway);
	return rc;
}

int tp_graph_from_parallel(tp_graph **out, const char *spec, int64_t ntasks,
			   const int32_t *map, tp_error *err)
{
	if (!out)
		return tp_error_set(err, TP_EINVAL, "parallel: out is NULL");
	*out = NULL;
	tp__parallel p;
	int rc = tp__parallel_parse(spec, ntasks, &p, err);
	if (!rc)
		rc = tp__parallel_graph(&p, map, out, err);
	return rc;
}
