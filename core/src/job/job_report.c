/* topoplace — a job's report: tp_job_explain's lines (the policy, metric
 * and budget, each candidate, what was kept, the predicted exchange) and
 * the GPU report's totals over the nodes, with the baselines (local rank's
 * and closest's costs) beside the chosen GPUs'.  Reads the context's
 * layout (job_internal.h); calls no other part of job/.
 */
#include <stdio.h>
#include <string.h>

#include "job/job_internal.h"
#include "map/predict_internal.h"

/* " (TimeBudgetMs=)": where the budget came from, for tp_job_explain. */
static const char *budget_from(const tp_job *job)
{
	switch (job->budget_from) {
	case TP_BUDGET_DEFAULT:
		return " (the site's default: the plugstack's time_budget_ms=)";
	case TP_BUDGET_CONF:
		return " (TimeBudgetMs= of the config)";
	case TP_BUDGET_LAUNCH:
		return " (the default inside a launch: no time_budget_ms= or "
		       "TimeBudgetMs=)";
	default:
		return "";
	}
}

static void cost_add(tp_gpusel_cost *sum, const tp_gpusel_cost *c)
{
	if (c->max_congestion_ms > sum->max_congestion_ms)
		sum->max_congestion_ms = c->max_congestion_ms;
	sum->weighted_ms += c->weighted_ms;
	sum->nic_weighted_ms += c->nic_weighted_ms;
	sum->socket_misses += c->socket_misses;
	sum->total_bytes += c->total_bytes;
}

int tp_job_node_totals(const tp_job *job, double *mims_bytes,
		       tp_gpusel_cost *cost, tp_gpusel_cost *local_rank,
		       tp_gpusel_cost *closest)
{
	tp_gpusel_cost z;
	memset(&z, 0, sizeof z);
	z.max_link = -1;
	*mims_bytes = 0;
	*cost = *local_rank = *closest = z;
	if (!job->np)
		return TP_EINVAL;
	for (int32_t i = 0; i < tp_alloc_nnodes(job->alloc); i++) {
		const tp_node_placement *p = &job->np[i];
		if (p->mims_bytes > *mims_bytes)
			*mims_bytes = p->mims_bytes;
		if (!p->gpus_set || !p->model[0])
			continue;
		cost_add(cost, &p->cost);
		cost_add(local_rank, &p->local_rank_cost);
		cost_add(closest, &p->closest_cost);
	}
	return 0;
}

int tp_job_explain(const tp_job *job, FILE *f, const char *prefix)
{
	const char *px = prefix ? prefix : "";
	int bad = 0;
	if (job->budget_ms > 0)
		bad |= fprintf(f, "%spolicy %s, metric %s, time budget %g ms%s\n",
			       px, tp_policy_name(job->policy),
			       tp_metric_name(job->metric), job->budget_ms,
			       budget_from(job)) < 0;
	else
		bad |= fprintf(f, "%spolicy %s, metric %s, no time budget%s\n", px,
			       tp_policy_name(job->policy),
			       tp_metric_name(job->metric), budget_from(job)) < 0;
	for (int i = 0; i < job->ncand; i++) {
		const struct tp_job_cand *c = &job->cand[i];
		char mark = c->chosen ? '*' : ' ';
		const char *sep = c->note[0] ? "  " : "";
		if (!c->ran)
			bad |= fprintf(f, "%s  %-20s %s\n", px, c->name, c->note) < 0;
		else if (!c->scored)
			bad |= fprintf(f, "%s%c %-20s %-20s %9.1f ms%s%s\n", px, mark,
				       c->name, "-", c->ms, sep, c->note) < 0;
		else if (c->ranked)
			bad |= fprintf(f, "%s%c %-20s GPU links %-10.6g ms, score "
				       "%-14.6g %9.1f ms%s%s\n", px, mark, c->name,
				       c->rank, c->score, c->ms, sep, c->note) < 0;
		else if (c->predicted)
			bad |= fprintf(f, "%s%c %-20s score %-14.6g %9.1f ms  "
				       "predicted %s%.4g us%s%s\n", px, mark, c->name,
				       c->score, c->ms,
				       c->lower || c->predicted_bound ? ">= " : "",
				       c->predicted_us, sep, c->note) < 0;
		else if (c->congested)
			bad |= fprintf(f, "%s%c %-20s score %-14.6g %9.1f ms  max "
				       "congestion %.6g%s%s\n", px, mark, c->name,
				       c->score, c->ms, c->congestion, sep,
				       c->note) < 0;
		else
			bad |= fprintf(f, "%s%c %-20s score %-14.6g %9.1f ms%s%s\n",
				       px, mark, c->name, c->score, c->ms, sep,
				       c->note) < 0;
	}
	if (job->status == TP_JOB_KEPT)
		bad |= fprintf(f, "%skept Slurm's order: %s\n", px, job->reason) < 0;
	else if (job->status == TP_JOB_PLACED)
		for (int i = 0; i < job->ncand; i++)
			if (job->cand[i].chosen) {
				double b = job->cand[0].score;
				bool timed = job->cand[i].predicted &&
					     !job->cand[i].lower;
				/* chosen by its predicted time: its hop-bytes
				 * may be higher than Slurm's order's */
				if (job->cand[0].ran && !strcmp(job->cand[0].name,
								"block") && b > 0)
					bad |= fprintf(f, "%skept %s%s: %.3f x Slurm's "
						       "block order's %s\n", px,
						       job->cand[i].name,
						       timed ? " by its predicted time "
						       "(below)" : "",
						       job->cand[i].score / b,
						       tp_metric_name(job->metric)) < 0;
				else
					bad |= fprintf(f, "%skept %s\n", px,
						       job->cand[i].name) < 0;
			}
	/* the job's predictions, else those auto's choice made */
	tp_prediction from = job->pred_block, to = job->pred;
	bool have = job->have_pred;
	const struct tp_job_cand *blk = job->ncand ? &job->cand[0] : NULL;
	for (int i = 0; !have && blk && i < job->ncand; i++)
		if (job->cand[i].chosen && job->cand[i].predicted && blk->predicted &&
		    !strcmp(blk->name, "block")) {
			const struct tp_job_cand *end = job->status == TP_JOB_KEPT
							? blk : &job->cand[i];
			from = (tp_prediction){ .exchange_us = blk->predicted_us,
						.bound_only = blk->predicted_bound };
			to = (tp_prediction){ .exchange_us = end->predicted_us,
					      .bound_only = end->predicted_bound };
			have = true;
		}
	if (have && !job->have_pred && blk->lower) {
		/* Slurm's order only bounded (place_choice.c): the gain is
		 * at least this */
		char a[32], b[32];
		tp__fmt_us(a, sizeof a, from.exchange_us);
		tp__fmt_us(b, sizeof b, to.exchange_us);
		if (job->status == TP_JOB_KEPT)
			bad |= fprintf(f, "%spredicted exchange >= %s us, Slurm's "
				       "order kept (bounded, not modelled in full)\n",
				       px, a) < 0;
		else
			bad |= fprintf(f, "%spredicted exchange >= %s us -> %s us "
				       "(<= %.2fx; Slurm's order bounded, not modelled "
				       "in full) (Slurm's order -> topoplace)\n", px, a,
				       b, to.exchange_us / from.exchange_us) < 0;
	} else if (have) {
		char line[160];
		tp_prediction_line(line, sizeof line, &from, &to);
		bad |= fprintf(f, "%s%s (Slurm's order -> topoplace)\n", px, line) < 0;
		const double *pf = tp_job_step_phases(job, true);
		const double *pt = tp_job_step_phases(job, false);
		if (pf && pt) {
			char ph[320];
			tp_step_phases_line(ph, sizeof ph, pf, pt);
			bad |= fprintf(f, "%s%s\n", px, ph) < 0;
		}
	}
	return bad ? TP_EIO : 0;
}
