/* topoplace command — what map writes: the hostfile, the JSON document and
 * the --compare table, all from a finished tp_job (the launcher formats:
 * formats.c). */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <json-c/printbuf.h>

#include "cli.h"

int cli_map_hostfile(const struct cli_map *mp)
{
	const tp_job *job = mp->job;
	tp_error err;
	tp_error_clear(&err);
	if (mp->output) {
		if (tp_hostfile_write_path(mp->output, tp_job_alloc(job),
					   tp_job_map(job), tp_job_ntasks(job),
					   &err) < 0)
			return cli_report_runtime(mp->output, &err);
		return CLI_EXIT_OK;
	}
	if (tp_hostfile_write(stdout, tp_job_alloc(job), tp_job_map(job),
			      tp_job_ntasks(job)) < 0)
		return cli_fail("standard output: write error");
	return cli_finish_stdout();
}

/* ---- --compare ---- */

int cli_map_compare(const tp_job *job, FILE *f)
{
	const tp_metrics *m = tp_job_metrics(job), *mb = tp_job_block_metrics(job);
	if (!m || !mb) {
		fprintf(f, "compare: no communication pattern, nothing to score\n");
		return 0;
	}
	tp_metrics mz;
	bool have_z = false;
	int32_t n = tp_job_ntasks(job);
	int32_t *z = calloc((size_t)n + 1, sizeof *z);
	if (!z)
		return cli_fail("out of memory");
	tp_error err;
	tp_error_clear(&err);
	if (tp_map_zorder(tp_job_alloc(job), n, z, &err) == 0 &&
	    tp_metrics_compute(tp_job_graph(job), tp_job_alloc(job), z, true, &mz,
			       &err) == 0)
		have_z = true;
	free(z);
	if (err.code == TP_ENOMEM)
		return cli_report_runtime("zorder", &err);
	enum tp_policy used = tp_job_policy(job);
	const char *label = tp_job_status(job) == TP_JOB_KEPT ? "block"
			    : tp_policy_name(used);
	struct cli_row rows[3] = {
		{ "block", mb },
		{ "zorder", have_z ? &mz : NULL },
		{ label, m },
	};
	/* the chosen policy's row, unless it is one of the first two */
	int nrows = !strcmp(label, "block") || !strcmp(label, "zorder") ? 2 : 3;
	cli_print_compare(f, rows, nrows);
	return 0;
}

/* ---- JSON ----
 *
 * The document is json-c's, but its per-task arrays ("mapping", "cpus",
 * "gpus": hundreds of thousands of entries on a large job) are not built as
 * json-c objects: each is one placeholder whose serializer writes the whole
 * array's text into json-c's buffer at its place, byte for byte what json-c
 * writes for the same array under the same flags (big_array below).  Node
 * names are escaped once per node and copied per task.
 */

/* A growing text buffer; ok false once out of memory.  With a sink (fd >=
 * 0) the buffer is written out whenever it is full, so that a large array
 * goes to the file a megabyte at a time: no copy of it is ever whole in
 * memory (fresh memory costs its page faults, about as much as the text). */
struct text {
	char *p;
	size_t len, cap;
	bool ok;
	int fd;               /* the sink, or -1 */
	int err;              /* the sink's errno once a write failed */
};

#define TEXT_SINK_BYTES ((size_t)1 << 20)

static bool text_flush(struct text *b)
{
	size_t at = 0;
	while (b->ok && at < b->len) {
		ssize_t w = write(b->fd, b->p + at, b->len - at);
		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0) {
			b->err = errno;
			b->ok = false;
		} else {
			at += (size_t)w;
		}
	}
	b->len = 0;
	return b->ok;
}

static bool text_room(struct text *b, size_t n)
{
	if (!b->ok)
		return false;
	if (n <= b->cap - b->len)
		return true;
	if (b->fd >= 0 && b->len > 0 && (!text_flush(b) || n <= b->cap))
		return b->ok;
	size_t cap = b->cap ? b->cap : b->fd >= 0 ? TEXT_SINK_BYTES : 4096;
	while (cap - b->len < n) {
		if (cap > SIZE_MAX / 2) {
			b->ok = false;
			return false;
		}
		cap *= 2;
	}
	char *q = realloc(b->p, cap);
	if (!q) {
		b->ok = false;
		return false;
	}
	b->p = q;
	b->cap = cap;
	return true;
}

static void text_add(struct text *b, const char *s, size_t n)
{
	if (text_room(b, n)) {
		memcpy(b->p + b->len, s, n);
		b->len += n;
	}
}

/* json-c's indentation of a level under flags */
static void text_indent(struct text *b, int level, int flags)
{
	if (!(flags & JSON_C_TO_STRING_PRETTY) || level <= 0)
		return;
	bool tab = flags & JSON_C_TO_STRING_PRETTY_TAB;
	size_t n = (size_t)level * (tab ? 1 : 2);
	if (text_room(b, n)) {
		memset(b->p + b->len, tab ? '\t' : ' ', n);
		b->len += n;
	}
}

/* s as a JSON string, as json-c writes it under flags: verbatim in quotes
 * when nothing in it needs escaping, else json-c's own escaping. */
static void text_string(struct text *b, const char *s, int flags)
{
	bool plain = true;
	size_t n = 0;
	for (const unsigned char *c = (const unsigned char *)s; *c; c++, n++)
		if (*c < 0x20 || *c == '"' || *c == '\\' ||
		    (*c == '/' && !(flags & JSON_C_TO_STRING_NOSLASHESCAPE)))
			plain = false;
	if (plain) {
		if (text_room(b, n + 2)) {
			b->p[b->len] = '"';
			memcpy(b->p + b->len + 1, s, n);
			b->p[b->len + 1 + n] = '"';
			b->len += n + 2;
		}
		return;
	}
	json_object *o = json_object_new_string(s);
	size_t len = 0;
	const char *t = o ? json_object_to_json_string_length(o, flags, &len)
		      : NULL;
	if (t)
		text_add(b, t, len);
	else
		b->ok = false;
	json_object_put(o);
}

/* Between the entries of an array, as json-c: before entry i at level. */
static void text_item(struct text *b, bool first, int level, int flags)
{
	if (!first) {
		text_add(b, ",", 1);
		if (flags & JSON_C_TO_STRING_PRETTY)
			text_add(b, "\n", 1);
	}
	if ((flags & JSON_C_TO_STRING_SPACED) && !(flags & JSON_C_TO_STRING_PRETTY))
		text_add(b, " ", 1);
	text_indent(b, level + 1, flags);
}

static void text_open(struct text *b, int flags)
{
	text_add(b, "[", 1);
	if (flags & JSON_C_TO_STRING_PRETTY)
		text_add(b, "\n", 1);
}

static void text_close(struct text *b, bool any, int level, int flags)
{
	if (flags & JSON_C_TO_STRING_PRETTY) {
		if (any)
			text_add(b, "\n", 1);
		text_indent(b, level, flags);
	}
	if ((flags & JSON_C_TO_STRING_SPACED) && !(flags & JSON_C_TO_STRING_PRETTY))
		text_add(b, " ]", 2);
	else
		text_add(b, "]", 1);
}

enum big_kind { BIG_MAPPING, BIG_CPUS, BIG_GPUS };

struct big_array {
	const tp_job *job;
	enum big_kind kind;
	/* streamed (cli_map_json): json-c writes a marker, \x01 id \x01,
	 * and records where; the array is written to the file there */
	bool streamed;
	int id, level, flags;
};

/* A document's per-task arrays, for streaming. */
#define BIG_MAX 3
struct big_list {
	struct big_array *a[BIG_MAX];
	int n;
};

/* "mapping": every task's node name, each node's escaped once. */
static void mapping_text(struct text *b, const tp_job *job, int level,
			 int flags)
{
	int32_t n = tp_job_ntasks(job);
	int32_t nn = tp_alloc_nnodes(tp_job_alloc(job));
	const int32_t *map = tp_job_map(job);
	struct text names = { NULL, 0, 0, true, -1, 0 };
	size_t *at = malloc(((size_t)nn + 1) * sizeof *at);   /* offset + 1 */
	size_t *len = malloc(((size_t)nn + 1) * sizeof *len);
	if (!at || !len) {
		b->ok = false;
	} else {
		memset(at, 0, ((size_t)nn + 1) * sizeof *at);
	}
	text_open(b, flags);
	for (int32_t t = 0; t < n && b->ok; t++) {
		int32_t i = map[t];
		if (!at[i]) {
			size_t o = names.len;
			text_string(&names, tp_job_task_node(job, t), flags);
			if (!names.ok) {
				b->ok = false;
				break;
			}
			at[i] = o + 1;
			len[i] = names.len - o;
		}
		text_item(b, t == 0, level, flags);
		text_add(b, names.p + at[i] - 1, len[i]);
	}
	text_close(b, n > 0, level, flags);
	free(names.p);
	free(at);
	free(len);
}

static void cpus_text(struct text *b, const tp_job *job, int level, int flags)
{
	int32_t n = tp_job_ntasks(job);
	text_open(b, flags);
	for (int32_t t = 0; t < n && b->ok; t++) {
		const char *c = tp_job_task_cpus(job, t);
		text_item(b, t == 0, level, flags);
		if (c)
			text_string(b, c, flags);
		else
			text_add(b, "null", 4);
	}
	text_close(b, n > 0, level, flags);
}

static void gpus_text(struct text *b, const tp_job *job, int level, int flags)
{
	int32_t n = tp_job_ntasks(job);
	text_open(b, flags);
	for (int32_t t = 0; t < n && b->ok; t++) {
		int ng = 0;
		const int *g = tp_job_task_gpus(job, t, &ng);
		text_item(b, t == 0, level, flags);
		text_open(b, flags);
		for (int q = 0; q < ng; q++) {
			char num[16];
			int w = snprintf(num, sizeof num, "%d", g[q]);
			text_item(b, q == 0, level + 1, flags);
			text_add(b, num, (size_t)w);
		}
		text_close(b, ng > 0, level + 1, flags);
	}
	text_close(b, n > 0, level, flags);
}

/* json-c's serializer of a placeholder: the whole array at once.  -1 when
 * out of memory, which json-c passes up (no document, as when building its
 * objects failed). */
static void big_array_text(struct text *b, const struct big_array *ba,
			   int level, int flags)
{
	switch (ba->kind) {
	case BIG_MAPPING: mapping_text(b, ba->job, level, flags); break;
	case BIG_CPUS: cpus_text(b, ba->job, level, flags); break;
	case BIG_GPUS: gpus_text(b, ba->job, level, flags); break;
	}
}

static int big_array_serialize(json_object *jso, struct printbuf *pb,
			       int level, int flags)
{
	struct big_array *ba = json_object_get_userdata(jso);
	if (ba->streamed) {
		char mark[3] = { '\x01', (char)('0' + ba->id), '\x01' };
		ba->level = level;
		ba->flags = flags;
		return printbuf_memappend(pb, mark, 3) >= 0 ? 0 : -1;
	}
	struct text b = { NULL, 0, 0, true, -1, 0 };
	big_array_text(&b, ba, level, flags);
	int rc = b.ok && b.len <= INT_MAX &&
		 printbuf_memappend(pb, b.p, (int)b.len) >= 0 ? 0 : -1;
	free(b.p);
	return rc;
}

/* The placeholder of a per-task array (an empty array to json-c), listed
 * in big. */
static json_object *big_array_json(const tp_job *job, enum big_kind kind,
				   struct big_list *big)
{
	json_object *o = json_object_new_array();
	struct big_array *ba = calloc(1, sizeof *ba);
	if (!o || !ba || big->n == BIG_MAX) {
		json_object_put(o);
		free(ba);
		return NULL;
	}
	ba->job = job;
	ba->kind = kind;
	ba->id = big->n;
	big->a[big->n++] = ba;
	json_object_set_serializer(o, big_array_serialize, ba,
				   json_object_free_userdata);
	return o;
}

/* Appends the string s to arr; false, arr released, when out of memory. */
static bool add_string(json_object *arr, const char *s)
{
	json_object *o = json_object_new_string(s);
	if (o && json_object_array_add(arr, o) == 0)
		return true;
	json_object_put(o);
	json_object_put(arr);
	return false;
}

static json_object *candidates_json(const tp_job *job)
{
	json_object *arr = json_object_new_array();
	for (int i = 0; arr && i < tp_job_ncandidates(job); i++) {
		tp_job_candidate c;
		tp_job_candidate_get(job, i, &c);
		json_object *o = json_object_new_object();
		int bad = !o || json_object_array_add(arr, o) < 0;
		if (bad) {
			json_object_put(o);
			json_object_put(arr);
			return NULL;
		}
		bad |= cli_json_put(o, "name", json_object_new_string(c.name));
		bad |= cli_json_put(o, "ran", json_object_new_boolean(c.ran));
		if (c.ran)
			bad |= cli_json_put(o, "score", cli_json_double(c.score));
		else if (json_object_object_add(o, "score", NULL) < 0)
			bad = -1;
		if (c.ranked)
			bad |= cli_json_put(o, "gpu_link_congestion_ms",
					    cli_json_double(c.rank));
		bad |= cli_json_put(o, "ms", cli_json_ms(c.ms));
		bad |= cli_json_put(o, "note", json_object_new_string(c.note));
		bad |= cli_json_put(o, "chosen", json_object_new_boolean(c.chosen));
		if (bad) {
			json_object_put(arr);
			return NULL;
		}
	}
	return arr;
}

static json_object *notes_json(const tp_job *job)
{
	json_object *arr = json_object_new_array();
	for (int i = 0; arr && i < tp_job_nnotes(job); i++)
		if (!add_string(arr, tp_job_note(job, i)))
			return NULL;
	return arr;
}

static json_object *cost_json(const tp_gpusel_cost *c)
{
	json_object *o = json_object_new_object();
	if (!o)
		return NULL;
	if (cli_json_put(o, "max_congestion_ms", cli_json_double(c->max_congestion_ms)) ||
	    cli_json_put(o, "weighted_ms", cli_json_double(c->weighted_ms)) ||
	    cli_json_put(o, "gpu_bytes", cli_json_double(c->total_bytes))) {
		json_object_put(o);
		return NULL;
	}
	return o;
}

/* What the nodes' placement adds: cpus, gpus and their costs. */
static int nodes_json(json_object *doc, const struct cli_map *mp,
		      struct big_list *big)
{
	const tp_job *job = mp->job;
	bool any_cpus = false, any_gpus = false, any_model = false;
	int gpt = 0;
	for (int32_t i = 0; i < tp_alloc_nnodes(tp_job_alloc(job)); i++) {
		const tp_node_placement *p = tp_job_node_placement(job, i);
		if (!p)
			continue;
		any_cpus |= p->cpus_set;
		any_gpus |= p->gpus_set;
		any_model |= p->model[0] != 0;
		if (p->gpus_set && p->gpus_per_task > gpt)
			gpt = p->gpus_per_task;
	}
	if (!any_model)
		return 0;
	int bad = 0;
	bad |= cli_json_put(doc, "node_topology", json_object_new_string(
			    mp->req.node_topology ? mp->req.node_topology : "config"));
	double mims;
	tp_gpusel_cost cost, lr, cl;
	tp_job_node_totals(job, &mims, &cost, &lr, &cl);
	if (any_cpus)
		bad |= cli_json_put(doc, "cpus", big_array_json(job, BIG_CPUS, big));
	bad |= cli_json_put(doc, "max_inter_socket_bytes", cli_json_double(mims));
	if (!any_gpus)
		return bad;
	bad |= cli_json_put(doc, "gpus", big_array_json(job, BIG_GPUS, big));
	json_object *sel = json_object_new_object();
	if (sel) {
		const char *algo = mp->req.gpu_select ? mp->req.gpu_select
				   : mp->req.gpu_matrix.name ? "magc" : "local-rank";
		bad |= cli_json_put(sel, "algorithm", json_object_new_string(algo));
		bad |= cli_json_put(sel, "gpus_per_task", json_object_new_int(gpt));
		bad |= cli_json_put(sel, "cost", cost_json(&cost));
		bad |= cli_json_put(sel, "local_rank_cost", cost_json(&lr));
		bad |= cli_json_put(sel, "closest_cost", cost_json(&cl));
	}
	bad |= cli_json_put(doc, "gpu_selection", sel);
	return bad;
}

static int put_null(json_object *doc, const char *key)
{
	return json_object_object_add(doc, key, NULL) < 0 ? -1 : 0;
}

static json_object *map_doc(const struct cli_map *mp, struct big_list *big)
{
	const tp_job *job = mp->job;
	const tp_alloc *a = tp_job_alloc(job);
	json_object *doc = json_object_new_object();
	if (!doc)
		return NULL;
	const tp_metrics *m = tp_job_metrics(job), *mb = tp_job_block_metrics(job);
	const tp_geom_report *geom = tp_job_geom_report(job);
	bool kept = tp_job_status(job) == TP_JOB_KEPT;
	int bad = 0;
	bad |= cli_json_put(doc, "version", json_object_new_string(tp_version()));
	bad |= cli_json_put(doc, "policy", json_object_new_string(
			    tp_policy_name(tp_job_policy(job))));
	bad |= cli_json_put(doc, "requested_policy", json_object_new_string(
			    tp_policy_name(tp_job_requested_policy(job))));
	bad |= cli_json_put(doc, "status", json_object_new_string(
			    kept ? "kept" : "placed"));
	bad |= cli_json_put(doc, "reason", json_object_new_string(tp_job_reason(job)));
	bad |= cli_json_put(doc, "metric", json_object_new_string(
			    tp_metric_name(tp_job_metric(job))));
	bad |= cli_json_put(doc, "ntasks", json_object_new_int64(tp_job_ntasks(job)));
	bad |= cli_json_put(doc, "nnodes", json_object_new_int64(tp_alloc_nnodes(a)));
	bad |= cli_json_put(doc, "slots", json_object_new_int64(tp_alloc_total_slots(a)));
	bad |= cli_json_put(doc, "time_budget_ms",
			    cli_json_double(tp_job_time_budget_ms(job)));
	bad |= cli_json_put(doc, "mapping", big_array_json(job, BIG_MAPPING, big));
	bad |= cli_json_put(doc, "congestion_unit", json_object_new_string(
			    tp_machine_has_level_bandwidth(tp_alloc_machine(a))
			    ? "bytes/bandwidth" : "bytes"));
	bad |= m ? cli_json_put(doc, "metrics", cli_metrics_json(m))
		 : put_null(doc, "metrics");
	bad |= mb ? cli_json_put(doc, "block_metrics", cli_metrics_json(mb))
		  : put_null(doc, "block_metrics");
	const tp_prediction *pr = tp_job_prediction(job, false);
	bad |= pr ? cli_json_put(doc, "predicted", cli_predicted_json(pr,
			tp_job_prediction(job, true), tp_job_step_phases(job, false),
			tp_job_step_phases(job, true)))
		  : put_null(doc, "predicted");
	bad |= cli_json_put(doc, "candidates", candidates_json(job));
	bad |= geom ? cli_json_put(doc, "search", cli_report_json(geom))
		    : put_null(doc, "search");
	bad |= cli_json_put(doc, "notes", notes_json(job));
	bad |= cli_json_put(doc, "elapsed_ms", cli_json_ms(tp_job_elapsed_ms(job)));
	bad |= nodes_json(doc, mp, big);
	if (bad) {
		json_object_put(doc);
		return NULL;
	}
	return doc;
}

/* The document with markers where its per-task arrays go. */
struct streamed_doc {
	const char *text;
	size_t len;
	const struct big_list *big;
};

/* Writes the document, each marker replaced by its array written straight
 * to fd: byte for byte what json-c writes for the whole document. */
static int emit_doc(int fd, void *arg)
{
	const struct streamed_doc *d = arg;
	struct text b = { NULL, 0, 0, true, fd, 0 };
	size_t at = 0;
	while (b.ok && at < d->len) {
		const char *m = memchr(d->text + at, '\x01', d->len - at);
		size_t upto = m ? (size_t)(m - d->text) : d->len;
		text_add(&b, d->text + at, upto - at);
		at = upto;
		if (!m)
			break;
		int id = m[1] - '0';
		if (at + 3 > d->len || m[2] != '\x01' || id < 0 || id >= d->big->n) {
			b.ok = false;   /* no such marker is ever written */
			b.err = EINVAL;
			break;
		}
		const struct big_array *ba = d->big->a[id];
		big_array_text(&b, ba, ba->level, ba->flags);
		at += 3;
	}
	text_add(&b, "\n", 1);
	if (b.ok)
		text_flush(&b);
	free(b.p);
	if (!b.ok)
		errno = b.err ? b.err : ENOMEM;
	return b.ok ? 0 : -1;
}

int cli_map_json(const struct cli_map *mp)
{
	struct big_list big = { { NULL }, 0 };
	json_object *doc = map_doc(mp, &big);
	if (!doc)
		return cli_fail("out of memory");
	for (int i = 0; i < big.n; i++)
		big.a[i]->streamed = true;
	struct streamed_doc d = { NULL, 0, &big };
	d.text = json_object_to_json_string_length(doc, CLI_JSON_FLAGS, &d.len);
	int rc = d.text ? cli_write_with(mp->output, emit_doc, &d)
			: cli_fail("out of memory");
	json_object_put(doc);
	return rc;
}
