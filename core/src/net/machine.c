/* topoplace — the machine: named nodes on routers, the box of router
 * coordinates, and the public distance, routing and link queries, which
 * hand over to the machine's kind of network (network.h; torus.c, tree.c,
 * dragonfly.c).  Nothing here knows one kind from another. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "net/network.h"
#include "net/machine_internal.h"
#include "util/digits_internal.h"

void tp__fmt_coords(char *buf, size_t len, const int *c, int n)
{
	size_t o = 0;
	if (len == 0)
		return;
	buf[0] = '\0';
	for (int d = 0; d < n && o < len; d++) {
		int w = snprintf(buf + o, len - o, "%s%d", d ? "," : "(", c[d]);
		if (w < 0)
			return;
		o += (size_t)w;
	}
	if (o < len)
		snprintf(buf + o, len - o, ")");
}

void tp__router_coords(const tp_machine *m, int64_t r, int *c)
{
	if (r >= 0 && r <= UINT32_MAX) {
		/* 32-bit divisions, each giving quotient and remainder: a
		 * picture asks this for every cable (two million on a 6-D
		 * machine), and a 64-bit division costs up to three times as
		 * much on common CPUs */
		uint32_t x = (uint32_t)r;
		for (int d = 0; d < m->ndims; d++) {
			uint32_t D = (uint32_t)m->dims[d];
			c[d] = (int)(x % D);
			x /= D;
		}
		return;
	}
	for (int d = 0; d < m->ndims; d++) {
		c[d] = (int)(r % m->dims[d]);
		r /= m->dims[d];
	}
}

int tp__machine_new(tp_machine **out, int ndims, const int *dims,
		    const bool *wrap, const struct tp_net_ops *net,
		    void *net_data, tp_error *err)
{
	if (!out)
		return tp_error_set(err, TP_EINVAL, "machine: out is NULL");
	*out = NULL;
	if (ndims < 1 || ndims > TP_MAX_DIMS)
		return tp_error_set(err, TP_EINVAL,
				    "machine: %d dimensions, expected 1..%d",
				    ndims, TP_MAX_DIMS);
	if (!dims)
		return tp_error_set(err, TP_EINVAL, "machine: dims is NULL");
	int64_t n = 1;
	for (int d = 0; d < ndims; d++) {
		if (dims[d] < 1)
			return tp_error_set(err, TP_EINVAL,
					    "machine: dims[%d] is %d, expected >= 1",
					    d, dims[d]);
		/* Link ids are router * ndims + dim: keep them in int64 and
		 * router ids in a pointer-sized key. */
		int64_t lim = INT64_MAX / TP_MAX_DIMS;
		if (sizeof(uintptr_t) < sizeof(int64_t))
			lim = (int64_t)(UINTPTR_MAX / 2);
		if (n > lim / dims[d])
			return tp_error_set(err, TP_EINVAL,
					    "machine: too many routers (the product of the dimensions overflows)");
		n *= dims[d];
	}

	tp_machine *m = calloc(1, sizeof *m);
	if (!m)
		return tp_error_set(err, TP_ENOMEM, "machine: out of memory");
	pthread_mutex_init(&m->names_mu, NULL);
	m->fab = (struct tp__fabric){ TP__DEFAULT_NODE_BW, TP__DEFAULT_HOP_LAT,
				      TP__DEFAULT_INTRA_BW, false,
				      TP__SHARING_FAIR,   /* unread: not set */
				      TP__DEFAULT_EAGER_BYTES, false, false };
	m->ndims = ndims;
	int64_t s = 1;
	for (int d = 0; d < ndims; d++) {
		m->dims[d] = dims[d];
		m->wrap[d] = wrap ? wrap[d] : false;
		m->stride[d] = s;
		s *= dims[d];
	}
	m->nrouters = n;
	m->nodes_per_router = 1;
	m->net = net;
	m->router_use.nrouters = n;
	m->net_data = net_data;
	*out = m;
	return TP_OK;
}

void tp_machine_destroy(tp_machine *m)
{
	if (!m)
		return;
	tp__names_free(&m->by_name);
	tp__runs_free(&m->runs);
	tp__routers_free(&m->router_use);
	for (size_t i = 0; i < m->nrn; i++)
		free(atomic_load(&m->rn[i].block));
	free(m->rn);
	pthread_mutex_destroy(&m->names_mu);
	free(m->names);
	free(m->coords);
	if (m->net && m->net->destroy)
		m->net->destroy(m->net_data);
	free(m);
}

struct npr_check {
	const tp_machine *m;
	int k;
	tp_error *err;
};

static int npr_over(int64_t router, int32_t used, void *arg)
{
	const struct npr_check *c = arg;
	if (used <= c->k)
		return 0;
	int co[TP_MAX_DIMS];
	char buf[96];
	tp__router_coords(c->m, router, co);
	tp__fmt_coords(buf, sizeof buf, co, c->m->ndims);
	return tp_error_set(c->err, TP_EINVAL,
			    "NodesPerRouter=%d: router %s already has %ld nodes",
			    c->k, buf, (long)used);
}

int tp_machine_set_nodes_per_router(tp_machine *m, int k, tp_error *err)
{
	if (!m)
		return tp_error_set(err, TP_EINVAL, "NodesPerRouter: machine is NULL");
	if (k < 1)
		return tp_error_set(err, TP_EINVAL,
				    "NodesPerRouter=%d: expected >= 1", k);
	struct npr_check c = { m, k, err };
	int rc = tp__routers_each(&m->router_use, npr_over, &c);
	if (rc)
		return rc;
	m->nodes_per_router = k;
	return TP_OK;
}

int tp_machine_nodes_per_router(const tp_machine *m)
{
	return m ? m->nodes_per_router : 0;
}

static bool bad_name_char(unsigned char ch)
{
	return ch <= ' ' || ch == ',' || ch == '[' || ch == ']' || ch == 0x7f;
}

int tp__machine_reserve(tp_machine *m, int64_t n)
{
	if (n > INT32_MAX)
		n = INT32_MAX;
	if (n <= m->cap)
		return 0;
	char **nn = tp__realloc_array(m->names, (size_t)n, sizeof *nn);
	if (!nn)
		return TP_ENOMEM;
	m->names = nn;
	/* a fresh block, not realloc: every coordinate is written, and the
	 * huge pages of tp__malloc_array cover all of it */
	int *nc = tp__malloc_array((size_t)n * (size_t)m->ndims, sizeof *nc);
	if (!nc)
		return TP_ENOMEM;
	if (m->coords)
		memcpy(nc, m->coords,
		       sizeof *nc * (size_t)m->nnodes * (size_t)m->ndims);
	free(m->coords);
	m->coords = nc;
	m->cap = (int32_t)n;
	return 0;
}

int tp_machine_add_node(tp_machine *m, const char *name, const int *coords,
			tp_error *err)
{
	return tp__machine_add(m, name, coords, NULL, err);
}

static int64_t router_of_coords(const tp_machine *m, const int *c)
{
	int64_t r = 0;
	for (int d = 0; d < m->ndims; d++)
		r += (int64_t)c[d] * m->stride[d];
	return r;
}

/* The first dimension where c lies outside the box, or -1. */
static int coord_outside(const tp_machine *m, const int *c)
{
	for (int d = 0; d < m->ndims; d++)
		if (c[d] < 0 || c[d] >= m->dims[d])
			return d;
	return -1;
}

static int outside_error(const tp_machine *m, const char *name, const int *c,
			 int d, tp_error *err)
{
	char cbuf[96];
	tp__fmt_coords(cbuf, sizeof cbuf, c, m->ndims);
	return tp_error_set(err, TP_EINVAL,
			    "node '%s' at %s: coordinate %d is outside 0..%d",
			    name, cbuf, d, m->dims[d] - 1);
}

static int router_full_error(const tp_machine *m, const char *name,
			     const int *c, int32_t used, tp_error *err)
{
	char cbuf[96];
	tp__fmt_coords(cbuf, sizeof cbuf, c, m->ndims);
	return tp_error_set(err, TP_EINVAL,
			    "node '%s': router %s already has %ld node%s (NodesPerRouter=%d)",
			    name, cbuf, (long)used, used == 1 ? "" : "s",
			    m->nodes_per_router);
}

int tp__machine_add(tp_machine *m, const char *name, const int *coords,
		    int32_t *dup, tp_error *err)
{
	if (!m || !name || !coords)
		return tp_error_set(err, TP_EINVAL, "add node: %s is NULL",
				    !m ? "machine" : !name ? "name" : "coords");
	if (!*name)
		return tp_error_set(err, TP_EINVAL, "add node: empty node name");
	for (const char *p = name; *p; p++)
		if (bad_name_char((unsigned char)*p))
			return tp_error_set(err, TP_EINVAL,
					    "node '%s': name contains a blank, ',', '[' or ']'",
					    name);
	int out = coord_outside(m, coords);
	if (out >= 0)
		return outside_error(m, name, coords, out, err);
	uint32_t h = tp__name_hash(name);
	int32_t prev = tp__names_find(&m->by_name, m->names, name, h);
	if (prev < 0)
		prev = tp__runs_find(&m->runs, name);
	if (prev >= 0) {
		if (dup)
			*dup = prev;
		return tp_error_set(err, TP_EINVAL, "node '%s': duplicate node name",
				    name);
	}
	int64_t r = router_of_coords(m, coords);
	int32_t *use = tp__routers_slot(&m->router_use, r, false);
	int32_t used = use ? *use : 0;
	if (used >= m->nodes_per_router)
		return router_full_error(m, name, coords, used, err);
	if (m->nnodes == INT32_MAX)
		return tp_error_set(err, TP_EINVAL, "node '%s': too many nodes", name);

	if (m->nnodes == m->cap &&
	    tp__machine_reserve(m, m->cap ? 2 * (int64_t)m->cap : 64) != 0)
		return tp_error_set(err, TP_ENOMEM, "node '%s': out of memory", name);
	int32_t idx = m->nnodes;
	char *copy = tp__names_store(&m->by_name, name);
	if (!use)
		use = tp__routers_slot(&m->router_use, r, true);
	if (!copy || !use || tp__names_add(&m->by_name, h, idx) != 0)
		return tp_error_set(err, TP_ENOMEM, "node '%s': out of memory", name);
	(*use)++;
	m->names[idx] = copy;
	memcpy(m->coords + (size_t)idx * (size_t)m->ndims, coords,
	       (size_t)m->ndims * sizeof *coords);
	m->nnodes++;
	return idx;
}

/* ---- numbered runs ---- */

/* A node of the index already named by the run, or -1.  Walks the cheaper
 * of the two: the index's slots (a few names, but room reserved for many,
 * would cost a walk of the whole table per run), or the run's names, a
 * lookup each. */
static int32_t run_vs_index(const tp_machine *m, const struct tp__hostlist_run *hr,
			    int64_t count)
{
	const struct tp__names *t = &m->by_name;
	if (!t->n)
		return -1;
	if (t->cap / 16 + t->n <= (size_t)count) {
		for (size_t i = 0; i < t->cap; i++) {
			if (!t->slot[i])
				continue;
			int32_t idx = (int32_t)((uint32_t)t->slot[i] - 1);
			if (tp__hostlist_run_has(hr, m->names[idx]))
				return idx;
		}
		return -1;
	}
	char buf[TP__HOSTNAME_MAX];
	for (uint64_t v = hr->lo; v <= hr->hi; v++) {
		tp__hostlist_run_name(hr, v, buf);
		int32_t idx = tp__names_find(t, m->names, buf, tp__name_hash(buf));
		if (idx >= 0)
			return idx;
	}
	return -1;
}

/* The decimal counter that writes a run's numbers: one increment per
 * name instead of a conversion. */
struct counter {
	char d[24];
	unsigned len;
};

static void counter_set(struct counter *c, uint64_t v, uint32_t width)
{
	c->len = (unsigned)(tp__put_num(c->d, v, width) - c->d);
}

static void counter_inc(struct counter *c)
{
	for (unsigned i = c->len; i-- > 0;) {
		if (c->d[i] != '9') {
			c->d[i]++;
			return;
		}
		c->d[i] = '0';
	}
	c->d[c->len++] = '0';   /* 999 -> 1000: every digit is 0 by now */
	c->d[0] = '1';
}

/* Record run hr, whose family's text is text, as the names of the next
 * count nodes (room made beforehand: recording cannot fail).  The names
 * themselves are written when first asked for. */
static void run_record(tp_machine *m, const struct tp__hostlist_run *hr,
		       int64_t count, const char *text)
{
	unsigned dmax = tp__digits_of(hr->hi);
	if (dmax < hr->width)
		dmax = hr->width;
	struct tp__run_names *r = &m->rn[m->nrn++];
	r->span = (struct tp__span){ m->nnodes, (int32_t)count };
	r->lo = hr->lo;
	r->width = hr->width;
	r->text = text;
	r->plen = hr->plen;
	r->slen = hr->slen;
	r->each = hr->plen + dmax + hr->slen + 1;
	atomic_init(&r->block, NULL);
}

/* The run that names node i, or NULL (runs are in node order). */
static const struct tp__run_names *run_of(const tp_machine *m, int32_t i)
{
	return tp__span_of(m->rn, m->nrn, sizeof *m->rn, i);
}

/* The names of run r, one every r->each bytes, written once: the first
 * caller writes them under the lock, later ones read them. */
static const char *run_block(const tp_machine *m, struct tp__run_names *r)
{
	char *b = atomic_load_explicit(&r->block, memory_order_acquire);
	if (b)
		return b;
	pthread_mutex_t *mu = (pthread_mutex_t *)&m->names_mu;
	pthread_mutex_lock(mu);
	b = atomic_load_explicit(&r->block, memory_order_relaxed);
	if (!b && (b = tp__malloc_array(r->each, (size_t)r->span.count))) {
		struct counter c;
		counter_set(&c, r->lo, r->width);
		char *p = b;
		for (int32_t i = 0; i < r->span.count; i++, p += r->each) {
			memcpy(p, r->text, r->plen);
			memcpy(p + r->plen, c.d, c.len);
			memcpy(p + r->plen + c.len, r->text + r->plen, r->slen);
			p[r->plen + c.len + r->slen] = '\0';
			counter_inc(&c);
		}
		atomic_store_explicit(&r->block, b, memory_order_release);
	}
	pthread_mutex_unlock(mu);
	return b;
}

size_t tp__machine_name_put(const tp_machine *m, int32_t node, char *buf)
{
	const struct tp__run_names *r = run_of(m, node);
	if (!r) {
		size_t len = strlen(m->names[node]);
		memcpy(buf, m->names[node], len + 1);
		return len;
	}
	char *p = buf;
	memcpy(p, r->text, r->plen);
	p = tp__put_num(p + r->plen, r->lo + (uint64_t)(node - r->span.first), r->width);
	memcpy(p, r->text + r->plen, r->slen);
	p[r->slen] = '\0';
	return (size_t)(p + r->slen - buf);
}

/* Give back the routers of the first n nodes at c (n x ndims). */
static void run_give_routers(tp_machine *m, const int *c, int64_t n)
{
	for (int64_t i = 0; i < n; i++)
		(*tp__routers_slot(&m->router_use,
				   router_of_coords(m, c + (size_t)i * (size_t)m->ndims),
				   false))--;
}

/* Take the routers of the run's nodes, whose coordinates are at c (count x
 * ndims); on a full router give back what was taken. */
static int run_take_routers(tp_machine *m, const struct tp__hostlist_run *hr,
			    const int *c, int64_t count, tp_error *err)
{
	int64_t i = 0;
	int rc = TP_OK;
	for (; i < count; i++) {
		const int *ci = c + (size_t)i * (size_t)m->ndims;
		int32_t *use = tp__routers_slot(&m->router_use, router_of_coords(m, ci), true);
		if (!use) {
			rc = tp_error_set(err, TP_ENOMEM, "nodes: out of memory");
			break;
		}
		if (*use >= m->nodes_per_router) {
			char name[TP__HOSTNAME_MAX];
			tp__hostlist_run_name(hr, hr->lo + (uint64_t)i, name);
			rc = router_full_error(m, name, ci, *use, err);
			break;
		}
		(*use)++;
	}
	if (rc)
		run_give_routers(m, c, i);
	return rc;
}

int tp__machine_add_run(tp_machine *m, const struct tp__hostlist_run *hr,
			void (*coords)(void *arg, int64_t i, int *c), void *arg,
			int32_t *dup, tp_error *err)
{
	*dup = -1;
	int64_t count = (int64_t)(hr->hi - hr->lo) + 1;
	for (size_t i = 0; i < hr->plen + hr->slen; i++) {
		unsigned char ch = (unsigned char)(i < hr->plen ? hr->prefix[i]
							       : hr->suffix[i - hr->plen]);
		if (bad_name_char(ch)) {
			char name[TP__HOSTNAME_MAX];
			tp__hostlist_run_name(hr, hr->lo, name);
			return tp_error_set(err, TP_EINVAL,
					    "node '%s': name contains a blank, ',', '[' or ']'",
					    name);
		}
	}
	if (hr->hi - hr->lo >= (uint64_t)INT32_MAX ||
	    count > (int64_t)INT32_MAX - m->nnodes)
		return tp_error_set(err, TP_EINVAL, "nodes: too many nodes");
	if (tp__machine_reserve(m, m->nnodes + count) != 0)
		return tp_error_set(err, TP_ENOMEM, "nodes: out of memory");
	int *c = m->coords + (size_t)m->nnodes * (size_t)m->ndims;
	for (int64_t i = 0; i < count; i++) {
		int *ci = c + (size_t)i * (size_t)m->ndims;
		coords(arg, i, ci);
		int out = coord_outside(m, ci);
		if (out >= 0) {
			char name[TP__HOSTNAME_MAX];
			tp__hostlist_run_name(hr, hr->lo + (uint64_t)i, name);
			return outside_error(m, name, ci, out, err);
		}
	}
	uint64_t v = 0;
	int32_t prev = run_vs_index(m, hr, count);
	if (prev < 0) {
		int rc = run_take_routers(m, hr, c, count, err);
		if (rc)
			return rc;
		/* room for its record first, so that once added the run is
		 * recorded without a failure to undo */
		const char *text = NULL;
		rc = tp__grow((void **)&m->rn, m->nrn, &m->rncap, sizeof *m->rn)
			     ? TP_ENOMEM
			     : tp__runs_add(&m->runs, hr, m->nnodes, &text, &prev, &v);
		if (rc == TP_OK) {
			run_record(m, hr, count, text);
			m->nnodes += (int32_t)count;
			return TP_OK;
		}
		run_give_routers(m, c, count);
		if (rc == TP_ENOMEM)
			return tp_error_set(err, TP_ENOMEM, "nodes: out of memory");
	}
	*dup = prev;
	char name[TP__HOSTNAME_MAX];
	tp__machine_name_put(m, prev, name);
	return tp_error_set(err, TP_EINVAL, "node '%s': duplicate node name", name);
}

int tp__machine_add_list(tp_machine *m, struct tp__hostlist *hl,
			 const struct tp__add_list *ops, void *arg)
{
	char h[TP__HOSTNAME_MAX];
	struct tp__hostlist_run run;
	int rc = 0, got;
	while (rc == 0 && (got = tp__hostlist_next_run(hl, h, ops->min_run, &run))) {
		if (got == 1) {
			rc = ops->one(arg, h);
			continue;
		}
		if (tp__runs_appends(&m->runs, &run)) {
			int32_t first = m->nnodes, prev = -1;
			tp_error e;
			tp_error_clear(&e);
			rc = tp__machine_add_run(m, &run, ops->coords, arg, &prev, &e);
			if (rc == 0) {
				rc = ops->ran(arg, first, m->nnodes - first);
				continue;
			}
			if (prev < 0)
				return ops->fail(arg, rc, &e);
			rc = 0;   /* a name placed before: the caller's rule */
		}
		for (uint64_t v = run.lo; rc == 0 && v <= run.hi; v++) {
			tp__hostlist_run_name(&run, v, h);
			rc = ops->one(arg, h);
		}
	}
	return rc;
}

int tp__add_list_named(struct tp__hostlist *hl, uint64_t min_run)
{
	char h[TP__HOSTNAME_MAX];
	struct tp__hostlist_run run;
	int named = 0, got;
	while ((got = tp__hostlist_next_run(hl, h, min_run, &run)))
		named += got == 1;
	return named;
}

int tp_machine_ndims(const tp_machine *m)
{
	return m ? m->ndims : 0;
}

int tp_machine_dim(const tp_machine *m, int d)
{
	if (!m || d < 0 || d >= m->ndims)
		return 0;
	return m->dims[d];
}

bool tp_machine_wraps(const tp_machine *m, int d)
{
	if (!m || d < 0 || d >= m->ndims)
		return false;
	return m->wrap[d];
}

int32_t tp_machine_node_count(const tp_machine *m)
{
	return m ? m->nnodes : 0;
}

const char *tp_machine_node_name(const tp_machine *m, int32_t node)
{
	if (!m || node < 0 || node >= m->nnodes)
		return NULL;
	const struct tp__run_names *r = run_of(m, node);
	if (!r)
		return m->names[node];
	const char *b = run_block(m, (struct tp__run_names *)r);
	return b ? b + (size_t)(node - r->span.first) * r->each : NULL;
}

const int *tp_machine_node_coords(const tp_machine *m, int32_t node)
{
	if (!m || node < 0 || node >= m->nnodes)
		return NULL;
	return m->coords + (size_t)node * (size_t)m->ndims;
}

int32_t tp_machine_find_node(const tp_machine *m, const char *name)
{
	if (!m || !name)
		return -1;
	int32_t i = tp__names_find(&m->by_name, m->names, name, tp__name_hash(name));
	return i >= 0 ? i : tp__runs_find(&m->runs, name);
}

const char *tp__listed_name(const struct tp__listed *l, int32_t k, char *buf)
{
	if (l->name)
		return l->name;
	tp__hostlist_run_name(l->run, l->v + (uint64_t)k, buf);
	return buf;
}

int tp__machine_each_listed(const tp_machine *m, struct tp__hostlist *hl,
			    tp__listed_fn fn, void *arg)
{
	char name[TP__HOSTNAME_MAX];
	struct tp__hostlist_run run, last = { 0 };
	int got, fam = -1, rc = TP_OK;
	while (rc == TP_OK && (got = tp__hostlist_next_run(hl, name, 1, &run))) {
		if (got == 1) {
			struct tp__listed l = { name, NULL, 0 };
			rc = fn(arg, tp_machine_find_node(m, name), 1, &l);
			continue;
		}
		/* a numbered range: its nodes found by number in the machine's
		 * runs, without writing and hashing each name (the ranges of
		 * one group share their prefix and suffix: one family lookup) */
		if (run.prefix != last.prefix || run.suffix != last.suffix ||
		    run.plen != last.plen || run.slen != last.slen)
			fam = tp__runs_family(&m->runs, run.prefix, run.plen,
					      run.suffix, run.slen);
		last = run;
		for (uint64_t v = run.lo; rc == TP_OK && v <= run.hi;) {
			/* numbers of one digit count at a time: the machine's
			 * run names them all as consecutive nodes */
			unsigned d = tp__digits_of(v);
			uint64_t upto = tp__digits_last(v);
			if (upto > run.hi)
				upto = run.hi;
			uint64_t n = 0;
			int32_t idx = fam < 0 ? -1
				      : tp__runs_span(&m->runs, fam, v,
						      d > run.width ? d : run.width,
						      upto, &n);
			struct tp__listed l = { NULL, &run, v };
			if (idx < 0) {
				tp__hostlist_run_name(&run, v, name);
				l.name = name;
				rc = fn(arg, tp_machine_find_node(m, name), 1, &l);
				v++;
				continue;
			}
			rc = fn(arg, idx, (int32_t)n, &l);
			v += n;
		}
	}
	return rc;
}

int64_t tp_machine_router_of(const tp_machine *m, int32_t node)
{
	if (!m || node < 0 || node >= m->nnodes)
		return -1;
	return router_of_coords(m, m->coords + (size_t)node * (size_t)m->ndims);
}

int64_t tp_machine_router_count(const tp_machine *m)
{
	return m ? m->nrouters : 0;
}

const char *tp_machine_kind(const tp_machine *m)
{
	return m ? m->net->kind : NULL;
}

bool tp_machine_has(const tp_machine *m, enum tp_machine_cap cap)
{
	if (!m)
		return false;
	switch (cap) {
	case TP_CAP_HIERARCHY:
		return m->net->hierarchy != NULL;
	case TP_CAP_COORDINATES:
	case TP_CAP_SWITCHES:
	case TP_CAP_GROUPS:
	case TP_CAP_BLOCKS:
		return (m->net->caps & TP__CAP(cap)) != 0;
	}
	return false;   /* a value this release does not know */
}

enum tp__sharing tp__fabric_sharing(const tp_machine *m)
{
	if (m->fab.sharing_set)
		return m->fab.sharing;
	return tp_machine_has(m, TP_CAP_COORDINATES) ? TP__SHARING_FAIR
						     : TP__SHARING_WORSE;
}

static const int *node_coords(const tp_machine *m, int32_t node)
{
	return m->coords + (size_t)node * (size_t)m->ndims;
}

int64_t tp_machine_distance(const tp_machine *m, int32_t a, int32_t b)
{
	if (!m || a < 0 || b < 0 || a >= m->nnodes || b >= m->nnodes)
		return -1;
	return tp__coord_dist(m, node_coords(m, a), node_coords(m, b));
}

int64_t tp_machine_coord_distance(const tp_machine *m, const int *ca,
				  const int *cb)
{
	if (!m || !ca || !cb)
		return -1;
	for (int d = 0; d < m->ndims; d++)
		if (ca[d] < 0 || ca[d] >= m->dims[d] || cb[d] < 0 || cb[d] >= m->dims[d])
			return -1;
	return tp__coord_dist(m, ca, cb);
}

int64_t tp_machine_link_count(const tp_machine *m)
{
	return m ? m->net->link_count(m) : 0;
}

int tp_machine_route(const tp_machine *m, int32_t a, int32_t b,
		     int64_t *links, int cap)
{
	if (!m || a < 0 || b < 0 || a >= m->nnodes || b >= m->nnodes)
		return TP_EINVAL;
	return m->net->route(m, node_coords(m, a), node_coords(m, b), links, cap);
}

void tp_machine_link_name(const tp_machine *m, int64_t link, char *buf,
			  size_t len)
{
	if (!buf || len == 0)
		return;
	if (!m || link < 0 || link >= tp_machine_link_count(m)) {
		snprintf(buf, len, "(invalid link %lld)", (long long)link);
		return;
	}
	m->net->link_name(m, link, buf, len);
}

int tp_machine_link_ends(const tp_machine *m, int64_t link, int *ca, int *cb)
{
	if (!m || !ca || !cb || link < 0 || link >= tp_machine_link_count(m))
		return TP_EINVAL;
	if (!m->net->link_ends)
		return TP_ENOTSUP;
	return m->net->link_ends(m, link, ca, cb);
}

double tp__machine_node_port_bw(const tp_machine *m)
{
	return m->net && m->net->node_port_bandwidth ? m->net->node_port_bandwidth(m)
						     : m->fab.node_bw;
}

int tp__machine_rails(const tp_machine *m)
{
	int r = m && m->net->rails ? m->net->rails(m) : 1;
	return r > 1 ? r : 1;
}

bool tp__machine_rail_planes(const tp_machine *m)
{
	return tp__machine_rails(m) > 1 && !tp_machine_has(m, TP_CAP_BLOCKS);
}
