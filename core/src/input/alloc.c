/* topoplace — the allocation of one job: which machine nodes, in Slurm's
 * order, and how many task slots each holds. */
#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "net/machine_internal.h"
#include "util/hostlist.h"
#include "util/util_internal.h"
#include "input/alloc_internal.h"

/* An allocation with room for cap nodes and no nodes yet. */
static int alloc_new(const tp_machine *m, int32_t cap, tp_alloc **out,
		     const char *what, tp_error *err)
{
	tp_alloc *a = calloc(1, sizeof *a);
	if (a) {
		a->m = m;
		a->node = tp__malloc_array((size_t)cap, sizeof *a->node);
		a->slots = tp__malloc_array((size_t)cap, sizeof *a->slots);
	}
	if (!a || !a->node || !a->slots) {
		tp_alloc_destroy(a);
		return tp_error_set(err, TP_ENOMEM, "%s: out of memory", what);
	}
	*out = a;
	return TP_OK;
}

static void alloc_fill_slots(tp_alloc *a, int slots_per_node)
{
	for (int32_t i = 0; i < a->nnodes; i++)
		a->slots[i] = slots_per_node;
	a->total_slots = (int64_t)a->nnodes * slots_per_node;
}

/* The machine nodes taken so far, one bit each (two million nodes: 256 KiB
 * to touch, not 2 MiB). */
static uint64_t *seen_new(int32_t nodes)
{
	return tp__calloc(((size_t)nodes + 63) / 64, sizeof(uint64_t));
}

static bool seen_set(uint64_t *seen, int32_t i)
{
	uint64_t bit = (uint64_t)1 << (i & 63);
	bool was = seen[i >> 6] & bit;
	seen[i >> 6] |= bit;
	return was;
}

struct take {
	tp_alloc *a;
	uint64_t *seen;
	const char *what;
	tp_error *err;
};

/* Nodes first..first+count-1 (first -1: an unknown name) of the hostlist,
 * next in the allocation. */
static int take_nodes(void *arg, int32_t first, int32_t count,
		      const struct tp__listed *l)
{
	struct take *t = arg;
	char name[TP__HOSTNAME_MAX];
	if (first < 0)
		return tp_error_set(t->err, TP_ENOENT, "%s: unknown node '%s'",
				    t->what, tp__listed_name(l, 0, name));
	for (int32_t k = 0; k < count; k++) {
		if (seen_set(t->seen, first + k))
			return tp_error_set(t->err, TP_EINVAL, "%s: duplicate node '%s'",
					    t->what, tp__listed_name(l, k, name));
		t->a->node[t->a->nnodes++] = first + k;
	}
	return TP_OK;
}

int tp_alloc_from_hostlist(const tp_machine *m, const char *hostlist,
			   int slots_per_node, const char *what,
			   tp_alloc **out, tp_error *err)
{
	if (!what)
		what = "hostlist";
	if (!out)
		return tp_error_set(err, TP_EINVAL, "%s: out is NULL", what);
	*out = NULL;
	if (!m || !hostlist)
		return tp_error_set(err, TP_EINVAL, "%s: %s is NULL", what,
				    m ? "hostlist" : "machine");
	if (slots_per_node < 1)
		return tp_error_set(err, TP_EINVAL,
				    "%s: %d slots per node, expected >= 1", what,
				    slots_per_node);
	int32_t mn = tp_machine_node_count(m);
	/* No bound on the count here: more names than machine nodes means an
	 * unknown or a repeated name among the first mn + 1, which the walk
	 * below names and stops at, so that a node missing from topoplace.conf
	 * is reported as such (not as a count), and a list of 2^33 names still
	 * costs at most mn + 1 lookups. */
	struct tp__hostlist *hl;
	int64_t count;
	int rc = tp__hostlist_parse(hostlist, what, INT64_MAX, NULL, &hl, &count,
				    err);
	if (rc)
		return rc;
	if (count == 0) {
		tp__hostlist_free(hl);
		return tp_error_set(err, TP_EINVAL, "%s: empty node list", what);
	}
	tp_alloc *a = NULL;
	uint64_t *seen = seen_new(mn);
	/* every node taken is a new machine node: mn at most */
	rc = seen ? alloc_new(m, count < mn ? (int32_t)count : mn, &a, what, err)
		  : tp_error_set(err, TP_ENOMEM, "%s: out of memory", what);
	if (rc == TP_OK) {
		struct take t = { a, seen, what, err };
		rc = tp__machine_each_listed(m, hl, take_nodes, &t);
	}
	tp__hostlist_free(hl);
	free(seen);
	if (rc != TP_OK) {
		tp_alloc_destroy(a);
		return rc;
	}
	alloc_fill_slots(a, slots_per_node);
	*out = a;
	return TP_OK;
}

int tp_hostlist_read_file(const char *path, char **text_out, tp_error *err)
{
	if (!text_out)
		return tp_error_set(err, TP_EINVAL, "hostlist file: out is NULL");
	*text_out = NULL;
	char *buf;
	size_t len;
	int rc = tp__read_file(path, TP__MAX_HOSTLIST_BYTES, "a hostlist file",
			       &buf, &len, err);
	if (rc)
		return rc;
	bool any = false;
	for (size_t i = 0; i < len; i++) {
		if (buf[i] == '\n' || buf[i] == '\r')
			buf[i] = ',';
		else if (buf[i] != ',' && buf[i] != ' ' && buf[i] != '\t')
			any = true;
	}
	if (!any) {
		free(buf);
		return tp_error_set(err, TP_EINVAL, "%s: no node names", path);
	}
	*text_out = buf;
	return TP_OK;
}

int tp_alloc_from_nodes(const tp_machine *m, const int32_t *nodes,
			int32_t nnodes, int slots_per_node, tp_alloc **out,
			tp_error *err)
{
	if (!out)
		return tp_error_set(err, TP_EINVAL, "allocation: out is NULL");
	*out = NULL;
	if (!m || (!nodes && nnodes > 0))
		return tp_error_set(err, TP_EINVAL, "allocation: %s is NULL",
				    m ? "nodes" : "machine");
	if (nnodes < 1)
		return tp_error_set(err, TP_EINVAL, "allocation: %ld nodes, expected >= 1",
				    (long)nnodes);
	if (slots_per_node < 1)
		return tp_error_set(err, TP_EINVAL,
				    "allocation: %d slots per node, expected >= 1",
				    slots_per_node);
	int32_t mn = tp_machine_node_count(m);
	if (nnodes > mn)
		return tp_error_set(err, TP_EINVAL,
				    "allocation: %ld nodes, the machine has %ld",
				    (long)nnodes, (long)mn);
	uint64_t *seen = seen_new(mn);
	if (!seen)
		return tp_error_set(err, TP_ENOMEM, "allocation: out of memory");
	for (int32_t i = 0; i < nnodes; i++) {
		int32_t v = nodes[i];
		if (v < 0 || v >= mn) {
			free(seen);
			return tp_error_set(err, TP_EINVAL,
					    "allocation: entry %ld: node index %ld outside 0..%ld",
					    (long)i, (long)v, (long)mn - 1);
		}
		if (seen_set(seen, v)) {
			free(seen);
			return tp_error_set(err, TP_EINVAL,
					    "allocation: entry %ld: duplicate node '%s'",
					    (long)i, tp_machine_node_name(m, v));
		}
	}
	free(seen);
	tp_alloc *a = NULL;
	int rc = alloc_new(m, nnodes, &a, "allocation", err);
	if (rc || !a)
		return rc ? rc : TP_ENOMEM;
	memcpy(a->node, nodes, (size_t)nnodes * sizeof *nodes);
	a->nnodes = nnodes;
	alloc_fill_slots(a, slots_per_node);
	*out = a;
	return TP_OK;
}

void tp_alloc_destroy(tp_alloc *a)
{
	if (!a)
		return;
	free(a->node);
	free(a->slots);
	free(a);
}

/* Non-negative decimal int at *p; advances *p.  -1 when there is none or it
 * overflows. */
static long parse_count(const char **p)
{
	const char *s = *p;
	if (*s < '0' || *s > '9')
		return -1;
	long v = 0;
	while (*s >= '0' && *s <= '9') {
		if (v > (INT_MAX - (*s - '0')) / 10)
			return -1;
		v = v * 10 + (*s - '0');
		s++;
	}
	*p = s;
	return v;
}

int tp_alloc_set_slots_spec(tp_alloc *a, const char *spec, tp_error *err)
{
	if (!a || !spec)
		return tp_error_set(err, TP_EINVAL, "tasks per node: %s is NULL",
				    a ? "spec" : "allocation");
	/* Two passes: validate and count, then write. */
	for (int pass = 0; pass < 2; pass++) {
		const char *p = spec;
		int64_t n = 0;
		if (!*p)
			return tp_error_set(err, TP_EINVAL, "tasks per node '': empty");
		for (;;) {
			const char *item = p;
			long v = parse_count(&p), rep = 1;
			if (v < 0)
				return tp_error_set(err, TP_EINVAL,
						    "tasks per node '%s': expected a number at offset %d",
						    spec, (int)(item - spec));
			if (p[0] == '(') {
				if (p[1] != 'x')
					return tp_error_set(err, TP_EINVAL,
							    "tasks per node '%s': expected '(xN)' at offset %d",
							    spec, (int)(p - spec));
				p += 2;
				rep = parse_count(&p);
				if (rep < 1 || *p != ')')
					return tp_error_set(err, TP_EINVAL,
							    "tasks per node '%s': bad repeat count at offset %d",
							    spec, (int)(item - spec));
				p++;
			}
			if (pass == 0) {
				n += rep;
				if (n > a->nnodes)
					return tp_error_set(err, TP_EINVAL,
							    "tasks per node '%s': more than the allocation's %ld nodes",
							    spec, (long)a->nnodes);
			} else {
				for (long r = 0; r < rep; r++)
					a->slots[n++] = (int)v;
			}
			if (*p == '\0')
				break;
			if (*p != ',')
				return tp_error_set(err, TP_EINVAL,
						    "tasks per node '%s': unexpected '%c' at offset %d",
						    spec, *p, (int)(p - spec));
			p++;
		}
		if (pass == 0 && n != a->nnodes)
			return tp_error_set(err, TP_EINVAL,
					    "tasks per node '%s': describes %lld nodes, the allocation has %ld",
					    spec, (long long)n, (long)a->nnodes);
	}
	a->total_slots = 0;
	for (int32_t i = 0; i < a->nnodes; i++)
		a->total_slots += a->slots[i];
	return TP_OK;
}

int tp_alloc_set_slots(tp_alloc *a, int32_t i, int slots, tp_error *err)
{
	if (!a)
		return tp_error_set(err, TP_EINVAL, "set slots: allocation is NULL");
	if (i < 0 || i >= a->nnodes)
		return tp_error_set(err, TP_EINVAL,
				    "set slots: node %ld outside 0..%ld", (long)i,
				    (long)a->nnodes - 1);
	if (slots < 0)
		return tp_error_set(err, TP_EINVAL,
				    "set slots: node %ld: %d slots, expected >= 0",
				    (long)i, slots);
	a->total_slots += (int64_t)slots - a->slots[i];
	a->slots[i] = slots;
	return TP_OK;
}

int tp_alloc_spread_tasks(tp_alloc *a, int64_t ntasks, tp_error *err)
{
	if (!a)
		return tp_error_set(err, TP_EINVAL, "spread tasks: allocation is NULL");
	if (ntasks < 1)
		return tp_error_set(err, TP_EINVAL,
				    "spread tasks: %lld tasks, expected >= 1",
				    (long long)ntasks);
	int64_t base = ntasks / a->nnodes, extra = ntasks % a->nnodes;
	if (base + (extra > 0) > INT_MAX)
		return tp_error_set(err, TP_EINVAL,
				    "spread tasks: %lld tasks on %ld nodes is too many per node",
				    (long long)ntasks, (long)a->nnodes);
	for (int32_t i = 0; i < a->nnodes; i++)
		a->slots[i] = (int)(base + (i < extra));
	a->total_slots = ntasks;
	return TP_OK;
}

int32_t tp_alloc_nnodes(const tp_alloc *a)
{
	return a ? a->nnodes : 0;
}

int32_t tp_alloc_node(const tp_alloc *a, int32_t i)
{
	if (!a || i < 0 || i >= a->nnodes)
		return -1;
	return a->node[i];
}

int tp_alloc_slots(const tp_alloc *a, int32_t i)
{
	if (!a || i < 0 || i >= a->nnodes)
		return 0;
	return a->slots[i];
}

int64_t tp_alloc_total_slots(const tp_alloc *a)
{
	return a ? a->total_slots : 0;
}

const tp_machine *tp_alloc_machine(const tp_alloc *a)
{
	return a ? a->m : NULL;
}

int tp__alloc_reorder(tp_alloc *a, const int32_t *order)
{
	int32_t n = a->nnodes, k = 0;
	while (k < n && order[k] == k)
		k++;
	if (k == n)
		return TP_OK;   /* in that order already */
	/* In place, cycle by cycle (node[j] takes node[order[j]]): a million
	 * nodes' two new arrays would be 8 MB of fresh memory, the launch's
	 * slowest kind on some machines. */
	size_t words = ((size_t)n + 63) / 64;
	uint64_t *moved = tp__calloc(words, sizeof *moved);
	if (!moved)
		return TP_ENOMEM;
	for (int32_t j = 0; j < n; j++) {   /* a permutation, or nothing moves */
		int32_t from = order[j];
		if (from < 0 || from >= n || (moved[from >> 6] >> (from & 63) & 1)) {
			free(moved);
			return TP_EINVAL;
		}
		moved[from >> 6] |= 1ULL << (from & 63);
	}
	memset(moved, 0, words * sizeof *moved);
	for (int32_t s = k; s < n; s++) {
		if (moved[s >> 6] >> (s & 63) & 1)
			continue;
		int32_t node0 = a->node[s];
		int slots0 = a->slots[s];
		for (int32_t j = s;;) {
			moved[j >> 6] |= 1ULL << (j & 63);
			int32_t from = order[j];
			if (from == s) {
				a->node[j] = node0;
				a->slots[j] = slots0;
				break;
			}
			a->node[j] = a->node[from];
			a->slots[j] = a->slots[from];
			j = from;
		}
	}
	free(moved);
	return TP_OK;
}
