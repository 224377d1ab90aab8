/* The front ends' readers of Slurm's environment (frontend/lists.c,
 * hints.c): core and GPU lists, SLURM_TASKS_PER_NODE and
 * SLURM_JOB_CPUS_PER_NODE specs, counts, the --topo-* options passed
 * through the environment, and the log line every message goes through.
 * In slurmstepd each of these is a user's to set.  Checked: lists stay
 * within their bounds, a spec's per-node counts add up to its sum, a
 * capacity spec reads back as a spec, and a log line is printable ASCII
 * within its buffer. */
#include <sched.h>

#include "fuzz.h"
#include "launch.h"

/* The input's first line as the list or spec; the rest (lines) as the
 * environment's values for tpk_hints_from_env, one a name asked. */
struct env {
	char *lines[16];
	int n, asked;
};

static struct env *the_env;

static const char *env_get(const char *name)
{
	(void)name;
	struct env *e = the_env;
	if (e->asked >= e->n)
		return NULL;
	return e->lines[e->asked++];
}

static void check_spec(const char *s)
{
	int64_t nodes = -1;
	int64_t sum = tpk_tasks_per_node_sum(s, &nodes);
	if (sum < -1)
		abort();
	if (sum >= 0 && nodes >= 1 && nodes <= 4096) {
		/* each node's count, read one at a time, adds up to the sum */
		int64_t total = 0;
		for (int64_t i = 0; i < nodes; i++) {
			int64_t k = tpk_tasks_on_node(s, i);
			if (k < 0)
				abort();
			total += k;
		}
		if (total != sum || tpk_tasks_on_node(s, nodes) != -1)
			abort();
	}
	char cap[256];
	for (int64_t per = 1; per <= 3; per++)
		if (tpk_capacity_spec(s, per, cap, sizeof cap) == 0) {
			if (strlen(cap) >= sizeof cap)
				abort();
			if (cap[0] && tpk_tasks_per_node_sum(cap, NULL) < 0)
				abort();
		}
}

static void check_lists(const char *s)
{
	int out[TPK_MAX_GPUS];
	int n = tpk_parse_index_list(s, out, TPK_MAX_GPUS);
	if (n < -1 || n > TPK_MAX_GPUS)
		abort();
	for (int i = 0; i < n; i++)
		if (out[i] < 0)
			abort();
	n = tpk_parse_gpu_list(s, out, TPK_MAX_GPUS);
	if (n < -1 || n > TPK_MAX_GPUS)
		abort();
	cpu_set_t set;
	if (tpk_cpu_list_set(s, &set) && CPU_COUNT(&set) < 1)
		abort();
	int64_t v = tpk_parse_pos(s);
	if (v < 0)
		abort();
	const char *vals[TPK_NGPU_VARS] = { s, NULL, s, s };
	int src = tpk_gpu_list_source(vals);
	for (int i = 0; i < TPK_NGPU_VARS; i++)
		(void)tpk_gpu_var_follows(vals, src, i);
}

static void check_line(const char *s)
{
	char line[64];
	tpk_line(line, sizeof line, "topoplace: %s", s);
	size_t k = strnlen(line, sizeof line);
	if (k >= sizeof line)
		abort();
	for (size_t i = 0; i < k; i++)
		if ((unsigned char)line[i] < 0x20 || (unsigned char)line[i] >= 0x7f)
			abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *s = fuzz_str(data, size);
	struct env e = { .n = 0 };
	char *nl = strchr(s, '\n');
	if (nl) {
		*nl = '\0';
		for (char *p = nl + 1; p && e.n < 16;) {
			e.lines[e.n++] = p;
			char *q = strchr(p, '\n');
			if (q)
				*q++ = '\0';
			p = q;
		}
	}
	check_spec(s);
	check_lists(s);
	check_line(s);
	the_env = &e;
	struct tpk_hints h = { 0 }, over = { 0 };
	tpk_hints_from_env(&h, env_get);
	tpk_hints_set(&over, TPK_OPT_POLICY, s);
	tpk_hints_overlay(&h, &over);
	(void)tpk_hints_policy_none(&h);
	(void)tpk_hints_report_svg(&h);
	(void)tpk_hints_pattern(&h);
	tpk_hints_free(&h);
	tpk_hints_free(&over);
	free(s);
	return 0;
}
