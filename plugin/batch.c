/* topoplace SPANK plugin — the batch step (remote context, in slurmstepd).
 *
 * slurm_spank_user_init runs with the user's effective ids: the job's tasks
 * (SLURM_TASKS_PER_NODE, SLURM_NTASKS) are mapped onto its nodes
 * (SLURM_JOB_NODELIST), the hostfile written into a private directory
 * under the job's TMPDIR, and SLURM_HOSTFILE plus
 * SLURM_DISTRIBUTION=arbitrary exported to the script, so that every plain
 * srun in it follows the mapping; so does a plain mpiexec (Hydra's host
 * file, and a launcher that starts its proxies where the mapping says) when
 * each node's ranks are consecutive.  Open MPI's mpirun is left alone
 * (export_launchers says why).  The directory goes in slurm_spank_exit.
 *
 * Counts come from Slurm where the user could have set them: SLURM_NTASKS
 * is the user's own when sbatch got no -n, so it may not exceed the slots
 * Slurm gave (SLURM_TASKS_PER_NODE).
 */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <slurm/spank.h>

#include "tpk.h"

#define ENV_HOSTFILE "TOPOPLACE_HOSTFILE"
#define ENV_KEY "TOPOPLACE_KEY"

/* This step's state. */
static char placed_dir[TPK_PATH_MAX];
static struct tpk_cred cred;   /* the user, for the cleanup as root */
static gid_t *groups;

static bool nonempty(const char *s)
{
	return s && s[0];
}

static void log_result(const struct tpk_result *r)
{
	for (int i = 0; i < r->nlines; i++) {
		if (r->quiet)
			slurm_info("%s", r->lines[i]);
		else
			slurm_spank_log("%s", r->lines[i]);  /* stderr + slurmd log */
	}
}

static int user_cred(spank_t sp)
{
	uid_t uid = 0;
	gid_t gid = 0;
	gid_t *g = NULL;
	int ng = 0;
	if (spank_get_item(sp, S_JOB_UID, &uid) != ESPANK_SUCCESS ||
	    spank_get_item(sp, S_JOB_GID, &gid) != ESPANK_SUCCESS)
		return -1;
	if (spank_get_item(sp, S_JOB_SUPPLEMENTARY_GIDS, &g, &ng) != ESPANK_SUCCESS)
		ng = 0;
	/* user_init runs as the user; should a Slurm call it as root, the
	 * ids are switched around every file access */
	cred.drop = geteuid() == 0 && uid != 0;
	cred.uid = uid;
	cred.gid = gid;
	free(groups);
	groups = NULL;
	cred.ngroups = 0;
	if (ng > 0 && g && (groups = malloc((size_t)ng * sizeof(gid_t)))) {
		memcpy(groups, g, (size_t)ng * sizeof(gid_t));
		cred.ngroups = ng;
	}
	cred.groups = groups;
	return 0;
}

/* Export the mapping to the script; false when Slurm refused. */
static bool export(spank_t sp, const struct tpk_result *r)
{
	if (spank_setenv(sp, "SLURM_HOSTFILE", r->hostfile, 1) == ESPANK_SUCCESS &&
	    spank_setenv(sp, "SLURM_DISTRIBUTION", "arbitrary", 1) == ESPANK_SUCCESS &&
	    spank_setenv(sp, ENV_HOSTFILE, r->hostfile, 1) == ESPANK_SUCCESS)
		return true;
	spank_unsetenv(sp, "SLURM_HOSTFILE");
	spank_unsetenv(sp, "SLURM_DISTRIBUTION");
	spank_unsetenv(sp, ENV_HOSTFILE);
	return false;
}

/* The directory this plugin was loaded from: its helper scripts live
 * there (make install puts them next to topoplace.so). */
static bool plugin_dir(char *out, size_t len)
{
	Dl_info info;
	if (!dladdr((void *)plugin_dir, &info) || !info.dli_fname ||
	    info.dli_fname[0] != '/')
		return false;
	snprintf(out, len, "%s", info.dli_fname);
	char *slash = strrchr(out, '/');
	if (!slash)
		return false;
	*slash = '\0';
	return true;
}

static bool user_set(spank_t sp, const char *name)
{
	char *v = tpk_job_getenv(sp, name);
	bool set = v != NULL;
	free(v);
	return set;
}

/* The launchers' own settings, so that a plain mpirun or mpiexec in the
 * script follows the mapping too (see doc/mpi.md).  What the user set
 * stays. */
static void export_launchers(spank_t sp, const struct tpk_site *site,
			     const struct tpk_result *r, bool report)
{
	/* for topoplace bind, which a rank runs under any launcher */
	spank_setenv(sp, "TOPOPLACE_CONF", site->conf_path, 0);
	if (!site->cpu_bind)
		spank_setenv(sp, "TOPOPLACE_CPU_BIND", "no", 1);
	/* Open MPI: nothing.  Its mapping policy set in the environment
	 * clashes with a user's own --rankfile or slots= hostfile (4.1 refuses
	 * both), and no setting of it yields to them; mpirun follows the
	 * placement with --map-by seq --hostfile $TOPOPLACE_HOSTFILE. */
	/* MPICH's mpiexec (Hydra): ranks in runs from its host file; the
	 * launcher script starts one proxy per run with srun, which keeps a
	 * node's ranks local to each other only if the node has one run */
	char dir[TPK_PATH_MAX], exec[TPK_PATH_MAX + 32];
	if (user_set(sp, "HYDRA_HOST_FILE") || user_set(sp, "HYDRA_RMK") ||
	    user_set(sp, "HYDRA_LAUNCHER") || user_set(sp, "HYDRA_LAUNCHER_EXEC"))
		return;
	if (r->mpich_split) {
		/* topoplace bind then takes Hydra's own blocks for the ranks */
		spank_setenv(sp, "TOPOPLACE_MPIEXEC", "blocks", 1);
		if (report)
			slurm_spank_log("topoplace: mpiexec (MPICH) keeps Slurm's "
					"order: a node's ranks are not consecutive, "
					"and Hydra would start them apart (no shared "
					"memory); srun --mpi=pmi2 follows the placement");
		return;
	}
	if (!r->mpichfile[0] || !plugin_dir(dir, sizeof dir))
		return;
	snprintf(exec, sizeof exec, "%s/topoplace-hydra-srun", dir);
	if (access(exec, X_OK) != 0) {
		/* said where the job asked for a report; the slurmd log has it */
		char line[TPK_LINE_MAX];
		tpk_line(line, sizeof line, "topoplace: %s is missing: mpiexec "
			 "(MPICH) keeps Slurm's order", exec);
		if (report)
			slurm_spank_log("%s", line);
		else
			slurm_info("%s", line);
		return;
	}
	spank_setenv(sp, "HYDRA_HOST_FILE", r->mpichfile, 1);
	spank_setenv(sp, "HYDRA_RMK", "user", 1);
	spank_setenv(sp, "HYDRA_LAUNCHER", "slurm", 1);
	spank_setenv(sp, "HYDRA_LAUNCHER_EXEC", exec, 1);
}

void tpk_batch_user_init(spank_t sp, const struct tpk_site *site,
			 const struct tpk_hints *hints)
{
	uint32_t jobid = 0;
	char *nodelist = NULL, *tpn = NULL, *ntasks = NULL, *submit = NULL,
	     *tmpdir = NULL, *hf = NULL, *dist = NULL, *partition = NULL,
	     *mem_cpu = NULL, *mem_node = NULL;
	if (!tpk_worth_placing(site, hints))
		return;   /* nothing asked, nothing the site forces */
	spank_get_item(sp, S_JOB_ID, &jobid);
	if (user_cred(sp) < 0) {
		slurm_error("topoplace: cannot tell the job's user; placement skipped");
		return;
	}
	nodelist = tpk_job_getenv(sp, "SLURM_JOB_NODELIST");
	tpn = tpk_job_getenv(sp, "SLURM_TASKS_PER_NODE");
	ntasks = tpk_job_getenv(sp, "SLURM_NTASKS");
	submit = tpk_job_getenv(sp, "SLURM_SUBMIT_DIR");
	tmpdir = tpk_job_getenv(sp, "TMPDIR");
	hf = tpk_job_getenv(sp, "SLURM_HOSTFILE");
	dist = tpk_job_getenv(sp, "SLURM_DISTRIBUTION");
	partition = tpk_job_getenv(sp, "SLURM_JOB_PARTITION");
	/* the script's sruns read these as --mem-per-cpu and --mem */
	mem_cpu = tpk_job_getenv(sp, "SLURM_MEM_PER_CPU");
	mem_node = tpk_job_getenv(sp, "SLURM_MEM_PER_NODE");

	if (nonempty(hf) || nonempty(dist)) {
		if (hints->report && !tpk_hints_policy_none(hints)) {
			char line[TPK_LINE_MAX];
			tpk_line(line, sizeof line, "topoplace: %s given by the user: "
				 "the user's placement wins, topoplace leaves it "
				 "alone", nonempty(hf) ? "SLURM_HOSTFILE"
				 : "-m/--distribution");
			slurm_spank_log("%s", line);
		}
		goto out;
	}
	char tag[64], picture[TPK_PATH_MAX];
	snprintf(tag, sizeof tag, "job%u", jobid);
	/* --topo-report=svg: next to the job's output, where sbatch ran */
	bool pic = nonempty(submit) && submit[0] == '/' &&
		   snprintf(picture, sizeof picture, "%s/topoplace-%u.svg", submit,
			    jobid) < (int)sizeof picture;
	struct tpk_step step = {
		.nodelist = nodelist,
		.partition = nonempty(partition) ? partition : NULL,
		.slots = nonempty(tpn) ? tpn : NULL,
		.ntasks = tpk_parse_pos(ntasks),
		.distribution = tpk_mem_is_zero(mem_cpu) || tpk_mem_is_zero(mem_node)
				? "block" : NULL,   /* tpk_mem_zero_dist */
		/* sbatch's directory: where the user typed the relative path */
		.basedir = submit,
		.tmpdir = nonempty(tmpdir) && tmpdir[0] == '/' ? tmpdir : "/tmp",
		.tag = tag,
		.mpich = true,
		.picture = pic ? picture : NULL,
		.cred = cred,
		.ntasks_what = "SLURM_NTASKS",
		.slots_what = "SLURM_TASKS_PER_NODE",
	};
	char key[17];
	tpk_key(site, hints, &step, key);
	struct tpk_result r;
	tpk_place(site, hints, &step, &r);
	if (hints->seen || r.status != TPK_UNTOUCHED) {
		spank_setenv(sp, ENV_KEY, key, 1);
		spank_setenv(sp, "TOPOPLACE_SAID", "1", 1);
	}
	if (r.status == TPK_PLACED) {
		if (!export(sp, &r)) {
			tpk_remove_private_dir(r.dir, &cred);
			slurm_spank_log("topoplace: error: cannot set the job's "
					"environment; Slurm's placement is kept");
			goto out;
		}
		snprintf(placed_dir, sizeof placed_dir, "%s", r.dir);
		export_launchers(sp, site, &r, hints->report);
		/* the path is the job's TMPDIR's: escaped, one bounded line */
		char line[TPK_LINE_MAX];
		tpk_line(line, sizeof line, "topoplace: job %u: %s mapping of %lld "
			 "tasks in %.1f ms, SLURM_HOSTFILE=%s", jobid, r.policy,
			 (long long)step.ntasks, r.elapsed_ms, r.hostfile);
		slurm_info("%s", line);
	}
	log_result(&r);
out:
	free(nodelist);
	free(partition);
	free(mem_cpu);
	free(mem_node);
	free(tpn);
	free(ntasks);
	free(submit);
	free(tmpdir);
	free(hf);
	free(dist);
}

void tpk_batch_exit(void)
{
	if (placed_dir[0]) {
		/* slurm_spank_exit runs as root: remove as the user */
		cred.drop = geteuid() == 0 && cred.uid != 0;
		tpk_remove_private_dir(placed_dir, &cred);
		placed_dir[0] = '\0';
	}
	free(groups);
	groups = NULL;
}
