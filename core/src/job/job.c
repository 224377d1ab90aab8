/* topoplace — the job pipeline's two steps, in their order: tp_job_create
 * (the request read into the context, then the node models loaded) and
 * tp_job_run (phase 1, rank -> node, then phases 2 and 3 inside the
 * nodes).  The only file of job/ that calls the others' steps:
 *
 *   job.c -> job_map.c, job_node.c -> job_models.c -> job_context.c
 *   job_report.c (explain, the GPU totals) -> job_context.c's layout
 *
 * And, at compile time, that the request's Slurm release (TP_SLURM_VERSION)
 * is encoded as slurm/ reads it.
 */
#include "job/job_internal.h"
#include "slurm/slurm_release.h"
#include "util/util_internal.h"

/* The request's slurm_version (public TP_SLURM_VERSION) goes to slurm/ as
 * is, which reads it with its own TP__SLURM_VERSION: one encoding. */
_Static_assert(TP_SLURM_VERSION(26, 5, 3) == TP__SLURM_VERSION(26, 5, 3) &&
	       TP_SLURM_VERSION(255, 255, 255) == TP__SLURM_VERSION(255, 255, 255),
	       "TP_SLURM_VERSION (job.h) and TP__SLURM_VERSION (slurm_release.h) differ");

int tp_job_create(const tp_job_request *r, tp_job **out, tp_error *err)
{
	return tp_job_create_step(r, NULL, out, err);
}

/* The context read and checked (job_context.c), then the node models the
 * run will need (job_models.c): loaded here, not in the middle of the
 * mapping; what failed is said where the run meets it. */
static int create(const tp_job_request *r, const char *distribution,
		  const char *parallel, const char *what, tp_job **out,
		  tp_error *err)
{
	int rc = tp__job_open(r, distribution, parallel, what, out, err);
	if (!rc)
		tp__job_load_models(*out);
	return rc;
}

int tp_job_create_step(const tp_job_request *r, const char *distribution,
		       tp_job **out, tp_error *err)
{
	return create(r, distribution, NULL, NULL, out, err);
}

int tp_job_create_parallel(const tp_job_request *r, const char *distribution,
			   const char *parallel, const char *what,
			   tp_job **out, tp_error *err)
{
	if (!parallel)
		return tp_error_set(err, TP_EINVAL, "job: no parallel layout");
	return create(r, distribution, parallel, what ? what : "parallel",
		      out, err);
}

int tp_job_run(tp_job *job, tp_error *err)
{
	if (!job)
		return tp_error_set(err, TP_EINVAL, "job is NULL");
	if (!job->alloc)
		return tp_error_set(err, TP_EINVAL, "job: no node list to map onto");
	if (job->status != TP_JOB_PENDING)
		return tp_error_set(err, TP_EINVAL, "job: already run");
	int rc = tp__job_map(job, err);
	/* none leaves everything to Slurm, the inside of the nodes too */
	if (!rc && tp__job_places_nodes(job))
		rc = tp__job_place_nodes(job, err);
	job->elapsed_ms = tp__now_ms() - job->t0;
	return rc;
}
