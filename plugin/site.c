/* topoplace SPANK plugin — the site's settings: the arguments of the
 * plugstack.conf line (conf=, policy=, time_budget_ms=, max_file_bytes=,
 * max_tasks=, max_threads=, cpu_bind=, slurm_conf=, node_detect=,
 * node_cache=).  A bad argument is ignored with one line; the others still
 * apply. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <topoplace/place.h>

#include "tpk.h"

void tpk_site_defaults(struct tpk_site *s)
{
	memset(s, 0, sizeof *s);
	snprintf(s->conf_path, sizeof s->conf_path, "%s", TPK_DEFAULT_CONF);
	s->time_budget_ms = -1;
	s->max_file_bytes = TPK_DEFAULT_MAX_FILE_BYTES;
	s->max_tasks = TPK_DEFAULT_MAX_TASKS;
	s->cpu_bind = true;
	s->node_detect = true;
	snprintf(s->node_cache, sizeof s->node_cache, "%s", TPK_DEFAULT_NODE_CACHE);
}

void tpk_request_budget(const struct tpk_site *s, tp_job_request *q)
{
	q->default_time_budget_ms = s->time_budget_ms;
	q->flags |= TP_JOB_LAUNCH_BUDGET;
}

static int yes_no(const char *key, const char *v, bool *out, char *err,
		  size_t len)
{
	if (strcmp(v, "yes") && strcmp(v, "no")) {
		snprintf(err, len, "%s=%s: yes or no is needed (ignored)", key, v);
		return -1;
	}
	*out = !strcmp(v, "yes");
	return 0;
}

/* The detected node models' cache: an absolute path, or "no". */
static int set_node_cache(struct tpk_site *s, const char *v, char *err,
			  size_t len)
{
	if (!strcmp(v, "no")) {
		s->node_cache[0] = '\0';
		return 0;
	}
	if (v[0] != '/' || strlen(v) >= sizeof s->node_cache) {
		snprintf(err, len, "node_cache=%s: an absolute path or no is "
			 "needed (ignored)", v);
		return -1;
	}
	snprintf(s->node_cache, sizeof s->node_cache, "%s", v);
	return 0;
}

/* A decimal count in 1..max, nothing else. */
static bool count_arg(const char *v, unsigned long long max,
		      unsigned long long *out)
{
	char *end;
	if (!v[0] || v[0] < '0' || v[0] > '9')
		return false;
	errno = 0;
	unsigned long long n = strtoull(v, &end, 10);
	if (*end || errno || n == 0 || n > max)
		return false;
	*out = n;
	return true;
}

static int set_conf(struct tpk_site *s, const char *v, char *err, size_t len)
{
	if (v[0] != '/' || strlen(v) >= sizeof s->conf_path) {
		snprintf(err, len, "conf=%s: an absolute path is needed (ignored)", v);
		return -1;
	}
	snprintf(s->conf_path, sizeof s->conf_path, "%s", v);
	return 0;
}

static int set_policy(struct tpk_site *s, const char *v, char *err, size_t len)
{
	enum tp_policy p;
	if (strlen(v) >= sizeof s->policy || tp_policy_parse(v, &p, NULL) < 0) {
		snprintf(err, len, "policy=%s: unknown policy; use auto, none, "
			 "geometric, graph, block, cyclic, random, zorder or "
			 "modcolor (ignored)", v);
		return -1;
	}
	snprintf(s->policy, sizeof s->policy, "%s", v);
	return 0;
}

static int set_budget(struct tpk_site *s, const char *v, char *err, size_t len)
{
	char *end;
	errno = 0;
	double d = strtod(v, &end);
	if (!v[0] || *end || errno || !isfinite(d) || d < 0 || d > 3.6e6) {
		snprintf(err, len, "time_budget_ms=%s: a number of milliseconds "
			 "in 0..3600000 is needed (ignored)", v);
		return -1;
	}
	s->time_budget_ms = d;
	return 0;
}

int tpk_site_arg(struct tpk_site *s, const char *arg, char *err, size_t len)
{
	const char *eq = strchr(arg, '=');
	if (!eq) {
		snprintf(err, len, "plugstack argument '%s' is not key=value "
			 "(ignored)", arg);
		return -1;
	}
	size_t klen = (size_t)(eq - arg);
	const char *v = eq + 1;
	unsigned long long n;
#define KEY(k) (klen == sizeof(k) - 1 && !strncmp(arg, k, klen))
	if (KEY("conf"))
		return set_conf(s, v, err, len);
	if (KEY("slurm_conf")) {
		if (v[0] != '/' || strlen(v) >= sizeof s->slurm_conf) {
			snprintf(err, len, "slurm_conf=%s: an absolute path is "
				 "needed (ignored)", v);
			return -1;
		}
		snprintf(s->slurm_conf, sizeof s->slurm_conf, "%s", v);
		return 0;
	}
	if (KEY("policy"))
		return set_policy(s, v, err, len);
	if (KEY("time_budget_ms"))
		return set_budget(s, v, err, len);
	if (KEY("max_file_bytes")) {
		if (!count_arg(v, TPK_MAX_FILE_BYTES_LIMIT, &n)) {
			snprintf(err, len, "max_file_bytes=%s: a byte count in "
				 "1..%u is needed (ignored)", v,
				 TPK_MAX_FILE_BYTES_LIMIT);
			return -1;
		}
		s->max_file_bytes = (size_t)n;
		return 0;
	}
	if (KEY("max_tasks")) {
		if (!count_arg(v, TPK_MAX_TASKS_LIMIT, &n)) {
			snprintf(err, len, "max_tasks=%s: a task count in 1..%d is "
				 "needed (ignored)", v, TPK_MAX_TASKS_LIMIT);
			return -1;
		}
		s->max_tasks = (int64_t)n;
		return 0;
	}
	if (KEY("max_threads")) {
		if (!count_arg(v, TPK_MAX_THREADS_LIMIT, &n)) {
			snprintf(err, len, "max_threads=%s: a thread count in "
				 "1..%d is needed (ignored)", v,
				 TPK_MAX_THREADS_LIMIT);
			return -1;
		}
		s->max_threads = (int)n;
		return 0;
	}
	if (KEY("cpu_bind"))
		return yes_no("cpu_bind", v, &s->cpu_bind, err, len);
	if (KEY("node_detect"))
		return yes_no("node_detect", v, &s->node_detect, err, len);
	if (KEY("node_cache"))
		return set_node_cache(s, v, err, len);
#undef KEY
	snprintf(err, len, "unknown plugstack argument '%s' (ignored); known: "
		 "conf=, policy=, time_budget_ms=, max_file_bytes=, max_tasks=, "
		 "max_threads=, cpu_bind=, slurm_conf=, node_detect=, "
		 "node_cache=", arg);
	return -1;
}
