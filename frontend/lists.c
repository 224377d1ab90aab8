/* topoplace SPANK plugin — Slurm's list formats (core lists, GPU lists,
 * SLURM_TASKS_PER_NODE and SLURM_JOB_CPUS_PER_NODE) and the one routine
 * every log line goes through. */
#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "launch.h"

int64_t tpk_parse_pos(const char *s)
{
	char *end;
	if (!s || !isdigit((unsigned char)s[0]))
		return 0;
	errno = 0;
	long long v = strtoll(s, &end, 10);
	if (errno || *end || v <= 0)
		return 0;
	return v;
}

int tpk_parse_index_list(const char *list, int *out, int cap)
{
	int n = 0;
	const char *p = list;
	if (!p || !*p)
		return -1;
	while (*p) {
		long v[2] = { 0, 0 };
		for (int k = 0; k < 2; k++) {
			if (!isdigit((unsigned char)*p))
				return -1;
			while (isdigit((unsigned char)*p)) {
				v[k] = v[k] * 10 + (*p - '0');
				if (v[k] > 1000000)
					return -1;
				p++;
			}
			if (k == 0 && *p == '-')
				p++;
			else if (k == 0) {
				v[1] = v[0];
				break;
			}
		}
		if (v[1] < v[0] || v[1] - v[0] >= (long)cap - n)
			return -1;
		for (long x = v[0]; x <= v[1]; x++)
			out[n++] = (int)x;
		if (*p == ',' && p[1])
			p++;
		else if (*p)
			return -1;
	}
	return n;
}

bool tpk_cpu_list_set(const char *list, cpu_set_t *set)
{
	int cpus[CPU_SETSIZE];
	int n = tpk_parse_index_list(list, cpus, CPU_SETSIZE);
	if (n <= 0)
		return false;
	CPU_ZERO(set);
	for (int i = 0; i < n; i++) {
		if (cpus[i] >= CPU_SETSIZE)
			return false;
		CPU_SET(cpus[i], set);
	}
	return true;
}

bool tpk_usable_cpus(cpu_set_t *set)
{
	CPU_ZERO(set);
	return sched_getaffinity(getppid(), sizeof *set, set) == 0 ||
	       sched_getaffinity(0, sizeof *set, set) == 0;
}

int tpk_parse_gpu_list(const char *list, int *out, int cap)
{
	if (!list || strchr(list, '-'))
		return -1;
	return tpk_parse_index_list(list, out, cap);
}

const char *const tpk_gpu_vars[TPK_NGPU_VARS] = {
	"CUDA_VISIBLE_DEVICES", "ROCR_VISIBLE_DEVICES", "HIP_VISIBLE_DEVICES",
	"GPU_DEVICE_ORDINAL",
};

int tpk_gpu_list_source(const char *const *vals)
{
	for (int i = TPK_GPU_CUDA; i <= TPK_GPU_HIP; i++)
		if (vals[i] && vals[i][0])
			return i;
	return -1;
}

bool tpk_gpu_var_follows(const char *const *vals, int src, int i)
{
	if (src < 0 || i < 0 || i >= TPK_NGPU_VARS)
		return false;
	return i == src || (vals[i] && !strcmp(vals[i], vals[src]));
}

/* Walk a "v(xr),v" spec: calls each(v, r, arg) per item; -1 when it does
 * not parse, or when its nodes or its tasks (the sum of v x r) pass
 * INT32_MAX, beyond any Slurm job (both are 32-bit there): the sums
 * below then never overflow, whatever a user put in the variable. */
static int walk_spec(const char *spec, void (*each)(long long, long long, void *),
		     void *arg)
{
	const char *p = spec;
	long long tasks = 0, nodes = 0;
	if (!p || !*p)
		return -1;
	while (*p) {
		char *end;
		if (!isdigit((unsigned char)*p))
			return -1;
		errno = 0;
		long long v = strtoll(p, &end, 10), rep = 1;
		p = end;
		if (*p == '(') {
			if (p[1] != 'x' || !isdigit((unsigned char)p[2]))
				return -1;
			rep = strtoll(p + 2, &end, 10);
			if (*end != ')' || rep <= 0)
				return -1;
			p = end + 1;
		}
		if (errno || v < 0 || v > INT32_MAX || rep > INT32_MAX)
			return -1;
		nodes += rep;
		tasks += v * rep;
		if (nodes > INT32_MAX || tasks > INT32_MAX)
			return -1;
		each(v, rep, arg);
		if (*p == ',')
			p++;
		else if (*p)
			return -1;
	}
	return 0;
}

struct sum { int64_t tasks, nodes; };

static void add_item(long long v, long long rep, void *arg)
{
	struct sum *s = arg;
	s->tasks += v * rep;
	s->nodes += rep;
}

int64_t tpk_tasks_per_node_sum(const char *spec, int64_t *nnodes)
{
	struct sum s = { 0, 0 };
	if (walk_spec(spec, add_item, &s) < 0)
		return -1;
	if (nnodes)
		*nnodes = s.nodes;
	return s.tasks;
}

struct at { int64_t node, seen, count; };

static void at_item(long long v, long long rep, void *arg)
{
	struct at *a = arg;
	if (a->count < 0 && a->node < a->seen + rep)
		a->count = v;
	a->seen += rep;
}

int64_t tpk_tasks_on_node(const char *spec, int64_t node)
{
	struct at a = { node, 0, -1 };
	if (node < 0 || walk_spec(spec, at_item, &a) < 0)
		return -1;
	return a.count;
}

struct div { int64_t per; char *out; size_t len, used; bool bad; };

static void div_item(long long v, long long rep, void *arg)
{
	struct div *d = arg;
	int w = snprintf(d->out + d->used, d->len - d->used, "%s%lld(x%lld)",
			 d->used ? "," : "", v / d->per, rep);
	if (w < 0 || (size_t)w >= d->len - d->used)
		d->bad = true;
	else
		d->used += (size_t)w;
}

int tpk_capacity_spec(const char *cpus_per_node, int64_t cpus_per_task,
		      char *out, size_t len)
{
	struct div d = { cpus_per_task > 0 ? cpus_per_task : 1, out, len, 0, false };
	if (!len)
		return -1;
	out[0] = '\0';
	if (walk_spec(cpus_per_node, div_item, &d) < 0 || d.bad)
		return -1;
	return 0;
}

void tpk_line(char *dst, size_t len, const char *fmt, ...)
{
	char raw[TPK_LINE_MAX];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(raw, sizeof raw, fmt, ap);
	va_end(ap);
	size_t o = 0;
	for (const unsigned char *p = (const unsigned char *)raw;
	     *p && o + 5 < len; p++) {
		if (*p >= 0x20 && *p < 0x7f)
			dst[o++] = (char)*p;
		else
			o += (size_t)snprintf(dst + o, len - o, "\\x%02x", *p);
	}
	if (len)
		dst[o < len ? o : len - 1] = '\0';
}
