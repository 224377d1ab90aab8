/* topoplace SPANK plugin — the job's --topo-* options, as SPANK hands them
 * to the option callback, and as sbatch and salloc pass them to srun
 * through the environment. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "launch.h"

#define ENV_OPT_PREFIX "SLURM_SPANK__SLURM_SPANK_OPTION_topoplace_"
#define ENV_OPT_PREFIX2 "_SLURM_SPANK_OPTION_topoplace_"

const char *tpk_opt_name(int val)
{
	switch (val) {
	case TPK_OPT_STENCIL: return "topo-stencil";
	case TPK_OPT_GRAPH: return "topo-graph";
	case TPK_OPT_GPU_MATRIX: return "topo-gpu-matrix";
	case TPK_OPT_POLICY: return "topo-policy";
	case TPK_OPT_REPORT: return "topo-report";
	case TPK_OPT_CPU_BIND: return "topo-cpu-bind";
	case TPK_OPT_PARALLEL: return "topo-parallel";
	default: return NULL;
	}
}

static void set_str(char **dst, const char *arg)
{
	free(*dst);
	*dst = strdup(arg ? arg : "");
}

void tpk_hints_set(struct tpk_hints *h, int val, const char *arg)
{
	switch (val) {
	case TPK_OPT_STENCIL: set_str(&h->stencil, arg); break;
	case TPK_OPT_GRAPH: set_str(&h->graph, arg); break;
	case TPK_OPT_GPU_MATRIX: set_str(&h->gpu_matrix, arg); break;
	case TPK_OPT_POLICY: set_str(&h->policy, arg); break;
	case TPK_OPT_REPORT:   /* the last one wins: a plain flag clears =svg */
		h->report = true;
		free(h->report_as);
		/* sbatch and salloc 22.05 export the plain flag to the job as
		 * SLURM_SPANK__..._topo_report=(null) (a NULL printed): no value */
		h->report_as = arg && arg[0] && strcmp(arg, "(null)")
			       ? strdup(arg) : NULL;
		break;
	case TPK_OPT_CPU_BIND: set_str(&h->cpu_bind, arg); break;
	case TPK_OPT_PARALLEL: set_str(&h->parallel, arg); break;
	default: return;
	}
	h->seen = true;
}

void tpk_hints_free(struct tpk_hints *h)
{
	free(h->stencil);
	free(h->graph);
	free(h->gpu_matrix);
	free(h->policy);
	free(h->cpu_bind);
	free(h->parallel);
	free(h->report_as);
	memset(h, 0, sizeof *h);
}

void tpk_hints_from_env(struct tpk_hints *h,
			const char *(*get)(const char *name))
{
	for (int val = TPK_OPT_STENCIL; val <= TPK_OPT_PARALLEL; val++) {
		char under[64], name[128];
		snprintf(under, sizeof under, "%s", tpk_opt_name(val));
		for (char *p = under; *p; p++)
			if (*p == '-')
				*p = '_';
		snprintf(name, sizeof name, ENV_OPT_PREFIX "%s", under);
		const char *v = get(name);
		if (!v) {
			snprintf(name, sizeof name, ENV_OPT_PREFIX2 "%s", under);
			v = get(name);
		}
		if (v)
			tpk_hints_set(h, val, v);
	}
}

void tpk_hints_overlay(struct tpk_hints *dst, const struct tpk_hints *src)
{
	if (src->stencil)
		tpk_hints_set(dst, TPK_OPT_STENCIL, src->stencil);
	if (src->graph)
		tpk_hints_set(dst, TPK_OPT_GRAPH, src->graph);
	if (src->gpu_matrix)
		tpk_hints_set(dst, TPK_OPT_GPU_MATRIX, src->gpu_matrix);
	if (src->policy)
		tpk_hints_set(dst, TPK_OPT_POLICY, src->policy);
	if (src->report)
		tpk_hints_set(dst, TPK_OPT_REPORT, src->report_as);
	if (src->cpu_bind)
		tpk_hints_set(dst, TPK_OPT_CPU_BIND, src->cpu_bind);
	if (src->parallel)
		tpk_hints_set(dst, TPK_OPT_PARALLEL, src->parallel);
}

bool tpk_hints_policy_none(const struct tpk_hints *h)
{
	return h->policy && !strcmp(h->policy, "none");
}

bool tpk_hints_report_svg(const struct tpk_hints *h)
{
	return h->report && h->report_as && !strcmp(h->report_as, "svg");
}

bool tpk_hints_pattern(const struct tpk_hints *h)
{
	return h->stencil || h->graph || h->gpu_matrix || h->parallel;
}
