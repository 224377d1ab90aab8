/* topoplace — Slurm SPANK plugin (Slurm 22.05, public spank.h only): the
 * hooks, the options, and one dispatch on the context.
 *
 * plugstack.conf:
 *   optional /usr/lib/topoplace/topoplace.so conf=/etc/slurm/topoplace.conf \
 *            policy=auto time_budget_ms=300
 *
 *   context                    hook             what (file)
 *   srun (local)               init             map this srun's tasks (srun.c)
 *                              option callback  settle an ambiguous command line
 *                              init_post_opt    remove the hostfile srun read
 *   batch step (remote)        user_init        map the job's tasks (batch.c)
 *   other steps (remote)       user_init        load the pattern and node model
 *                              task_init        each task's GPUs and CPUs (task.c)
 *   any                        exit             clean up
 *
 * Every failure leaves Slurm's placement and prints one line ("fail open");
 * an option is never refused here, since that would stop the job.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <slurm/spank.h>
#include <slurm/slurm_version.h>

#include <topoplace/version.h>

#include "tpk.h"

SPANK_PLUGIN(topoplace, 1);

/* "Slurm 23.11.11": the release whose headers this was compiled with (Slurm
 * loads it into that major.minor only, by plugin_version), kept in the file
 * for strings(1) and logged at load.  Written out from SLURM_VERSION_NUMBER,
 * since the installed headers have no version string. */
#define TPK_SLURM_PART(shift) ((SLURM_VERSION_NUMBER >> (shift)) & 0xff)
#define TPK_SLURM_DIGITS(shift) \
	(char)('0' + TPK_SLURM_PART(shift) / 10 % 10), \
	(char)('0' + TPK_SLURM_PART(shift) % 10)
static const char built_for[] = {
	'S', 'l', 'u', 'r', 'm', ' ',
	TPK_SLURM_DIGITS(16), '.', TPK_SLURM_DIGITS(8), '.',
#if (SLURM_VERSION_NUMBER & 0xff) >= 10
	(char)('0' + TPK_SLURM_PART(0) / 10 % 10),
#endif
	(char)('0' + TPK_SLURM_PART(0) % 10), '\0'
};

/* Step ids of slurm.h, which this plugin does not include (spank.h only). */
#ifndef SLURM_BATCH_SCRIPT
#define SLURM_BATCH_SCRIPT (0xfffffffb)
#endif
#ifndef SLURM_EXTERN_CONT
#define SLURM_EXTERN_CONT (0xfffffffc)
#endif

static struct tpk_site site;
static struct tpk_hints hints;       /* from the option callbacks */

static int opt_cb(int val, const char *optarg, int remote)
{
	tpk_hints_set(&hints, val, optarg);
	if (!remote && spank_context() == S_CTX_LOCAL)
		tpk_srun_option(&site, val);
	return 0;
}

static struct spank_option opts[] = {
	{ "topo-stencil", "SPEC",
	  "topoplace: communication pattern as a stencil, e.g. "
	  "16x16x8:7pt:periodic=all:bytes=4096", 1, TPK_OPT_STENCIL, opt_cb },
	{ "topo-graph", "FILE",
	  "topoplace: communication graph (JSON: tasks, edges, optional coords)",
	  1, TPK_OPT_GRAPH, opt_cb },
	{ "topo-gpu-matrix", "FILE",
	  "topoplace: GPU peer traffic matrix (JSON or CSV i,j,bytes): counts "
	  "for the nodes, and chooses each task's GPUs on the node's model "
	  "(NodeTopology=, or detected on the node)", 1, TPK_OPT_GPU_MATRIX, opt_cb },
	{ "topo-policy", "NAME",
	  "topoplace: auto (default), geometric, graph, zorder, cyclic, random, "
	  "modcolor, block or none (none: leave placement to Slurm)", 1,
	  TPK_OPT_POLICY, opt_cb },
	/* an optional value (has_arg 2): only attached, --topo-report=svg, so
	 * that "--topo-report cmd" still runs cmd */
	{ "topo-report", "svg",
	  "topoplace: report the placement: the candidates tried, their scores "
	  "and times, and Slurm's order against topoplace's; =svg also draws "
	  "them side by side: topoplace-JOBID.svg in the submit directory "
	  "(sbatch), topoplace-JOBID.srun.svg in the current one (srun)", 2,
	  TPK_OPT_REPORT, opt_cb },
	{ "topo-cpu-bind", "yes|no",
	  "topoplace: bind each task to the cores chosen for it (default yes "
	  "where the node has a model; no: keep Slurm's --cpu-bind)",
	  1, TPK_OPT_CPU_BIND, opt_cb },
	{ "topo-parallel", "SPEC",
	  "topoplace: a training job's parallel layout, one rank a GPU "
	  "(SLURM_PROCID), e.g. tp=8,pp=4[,cp=N,ep=N,dp=N]"
	  "[,order=tp-cp-ep-dp-pp|mesh=pp,dp,cp,tp][,bytes=tp:64,dp:8]"
	  "[,model=hidden:H,layers:L,seq:S,mbs:B][,micro=M]",
	  1, TPK_OPT_PARALLEL, opt_cb },
	SPANK_OPTIONS_TABLE_END
};

/* The step this remote hook runs for (0 when it cannot tell). */
static uint32_t step_id(spank_t sp)
{
	uint32_t id = 0;
	if (spank_get_item(sp, S_JOB_STEPID, &id) != ESPANK_SUCCESS)
		return SLURM_EXTERN_CONT;
	return id;
}

/* Bad plugstack arguments are the admin's business: one line per argument
 * in the slurmd log, from the batch step only (not from every srun of
 * every user); srun shows them with -v. */
static void site_args(spank_t sp, int ac, char **av)
{
	spank_context_t ctx = spank_context();
	bool loud = ctx == S_CTX_REMOTE && step_id(sp) == SLURM_BATCH_SCRIPT;
	tpk_site_defaults(&site);
	for (int i = 0; i < ac; i++) {
		char err[512], line[TPK_LINE_MAX];
		if (tpk_site_arg(&site, av[i], err, sizeof err) == 0)
			continue;
		tpk_line(line, sizeof line, "topoplace: %s", err);
		if (loud)
			slurm_error("%s", line);
		else
			slurm_verbose("%s", line);
	}
}

int slurm_spank_init(spank_t sp, int ac, char **av)
{
	spank_context_t ctx = spank_context();
	slurm_debug("topoplace %s: built for %s", TOPOPLACE_VERSION, built_for);
	site_args(sp, ac, av);
	if (ctx != S_CTX_LOCAL && ctx != S_CTX_REMOTE && ctx != S_CTX_ALLOCATOR)
		return 0;
	/* registered (not only a static table) so that sbatch and salloc
	 * know the options too */
	for (int i = 0; opts[i].name; i++) {
		spank_err_t rc = spank_option_register(sp, &opts[i]);
		if (rc != ESPANK_SUCCESS)
			slurm_error("topoplace: cannot register --%s: %s",
				    opts[i].name, spank_strerror(rc));
	}
	/* srun: the earliest point, before srun reads its options and its
	 * environment */
	if (ctx == S_CTX_LOCAL)
		tpk_srun_init(&site);
	return 0;
}

int slurm_spank_init_post_opt(spank_t sp, int ac, char **av)
{
	(void)ac;
	(void)av;
	spank_context_t ctx = spank_context();
	if (ctx == S_CTX_LOCAL) {
		tpk_srun_post_opt();
	} else if (ctx == S_CTX_REMOTE) {
		/* still root here; user_init runs as the user */
		uint32_t id = step_id(sp);
		if (id != SLURM_BATCH_SCRIPT && id != SLURM_EXTERN_CONT)
			tpk_step_prepare_node(sp, &site, &hints);
	}
	return 0;
}

int slurm_spank_user_init(spank_t sp, int ac, char **av)
{
	(void)ac;
	(void)av;
	if (!spank_remote(sp))
		return 0;
	uint32_t id = step_id(sp);
	if (id == SLURM_BATCH_SCRIPT)
		tpk_batch_user_init(sp, &site, &hints);
	else if (id != SLURM_EXTERN_CONT)
		tpk_step_user_init(sp, &site, &hints);
	return 0;
}

int slurm_spank_task_init(spank_t sp, int ac, char **av)
{
	(void)ac;
	(void)av;
	if (!spank_remote(sp))
		return 0;
	uint32_t id = step_id(sp);
	if (id != SLURM_BATCH_SCRIPT && id != SLURM_EXTERN_CONT)
		tpk_task_init(sp, &site, &hints);
	return 0;
}

int slurm_spank_exit(spank_t sp, int ac, char **av)
{
	(void)sp;
	(void)ac;
	(void)av;
	spank_context_t ctx = spank_context();
	if (ctx == S_CTX_LOCAL) {
		tpk_srun_exit();
	} else if (ctx == S_CTX_REMOTE) {
		tpk_batch_exit();
		tpk_step_exit();
	}
	tpk_hints_free(&hints);
	return 0;
}
