/* The layout of every public structure a caller allocates or passes by
 * value (options, requests, results, errors): its size and alignment, and
 * each field's offset and size, and the values of the public codes, one
 * line each.  tests/abi/check.sh compares the output with
 * core/libtopoplace.layout; `make abi-update` rewrites that file (see
 * tests/abi/check.sh for when that is right).
 *
 * A structure added to the public headers is added here, a field added to
 * one of these is added to its list: check.sh fails when a public header
 * declares a structure this program does not list.  Printed for LP64
 * (x86_64, aarch64, ppc64le, s390x lay these out alike); elsewhere it
 * prints "skip". */
#include <stdalign.h>
#include <stddef.h>
#include <stdio.h>
#include <topoplace/topoplace.h>

#define STRUCT(T) \
	printf("%s size %zu align %zu\n", #T, sizeof(T), alignof(T))
#define VALUE(C) printf("%s = %lld\n", #C, (long long)(C))
#define FIELD(T, f) \
	printf("%s.%s offset %zu size %zu\n", #T, #f, offsetof(T, f), \
	       sizeof(((T *)0)->f))

int main(void)
{
	if (sizeof(void *) != 8 || sizeof(long) != 8) {
		puts("skip: the layout is recorded for LP64");
		return 0;
	}
	/* conf.h */
	STRUCT(tp_conf_slurm);
	FIELD(tp_conf_slurm, slurm_conf);
	FIELD(tp_conf_slurm, partition);
	FIELD(tp_conf_slurm, topology);
	FIELD(tp_conf_slurm, slurm_version);
	/* conf.h */
	STRUCT(tp_conf_slurm_diff);
	FIELD(tp_conf_slurm_diff, nslurm);
	FIELD(tp_conf_slurm_diff, nmissing);
	FIELD(tp_conf_slurm_diff, nextra);
	FIELD(tp_conf_slurm_diff, missing);
	FIELD(tp_conf_slurm_diff, extra);
	/* error.h */
	STRUCT(tp_error);
	FIELD(tp_error, code);
	FIELD(tp_error, msg);
	/* geom.h */
	STRUCT(tp_geom_opts);
	FIELD(tp_geom_opts, parts_per_level);
	FIELD(tp_geom_opts, search);
	FIELD(tp_geom_opts, seam_shift);
	FIELD(tp_geom_opts, metric);
	FIELD(tp_geom_opts, time_budget_ms);
	FIELD(tp_geom_opts, nthreads);
	/* geom.h */
	STRUCT(tp_geom_report);
	FIELD(tp_geom_report, variants_total);
	FIELD(tp_geom_report, variants_scored);
	FIELD(tp_geom_report, best_variant);
	FIELD(tp_geom_report, best_desc);
	FIELD(tp_geom_report, best_score);
	FIELD(tp_geom_report, budget_hit);
	FIELD(tp_geom_report, subset_selected);
	FIELD(tp_geom_report, shifted_dims);
	FIELD(tp_geom_report, default_kept);
	FIELD(tp_geom_report, elapsed_ms);
	FIELD(tp_geom_report, variants_folded);
	/* graphmap.h */
	STRUCT(tp_graphmap_opts);
	FIELD(tp_graphmap_opts, refine_passes);
	FIELD(tp_graphmap_opts, time_budget_ms);
	FIELD(tp_graphmap_opts, seed);
	FIELD(tp_graphmap_opts, refine_congestion);
	FIELD(tp_graphmap_opts, congestion_keep_hops);
	/* job.h */
	STRUCT(tp_job_input);
	FIELD(tp_job_input, name);
	FIELD(tp_job_input, text);
	FIELD(tp_job_input, len);
	/* job.h */
	STRUCT(tp_job_request);
	FIELD(tp_job_request, conf);
	FIELD(tp_job_request, conf_path);
	FIELD(tp_job_request, nodes);
	FIELD(tp_job_request, slots);
	FIELD(tp_job_request, capacity);
	FIELD(tp_job_request, ntasks);
	FIELD(tp_job_request, max_tasks);
	FIELD(tp_job_request, slurm_version);
	FIELD(tp_job_request, slurm_conf);
	FIELD(tp_job_request, partition);
	FIELD(tp_job_request, stencil);
	FIELD(tp_job_request, graph);
	FIELD(tp_job_request, gpu_matrix);
	FIELD(tp_job_request, policy);
	FIELD(tp_job_request, default_policy);
	FIELD(tp_job_request, metric);
	FIELD(tp_job_request, time_budget_ms);
	FIELD(tp_job_request, default_time_budget_ms);
	FIELD(tp_job_request, seed_set);
	FIELD(tp_job_request, seed);
	FIELD(tp_job_request, min_gain);
	FIELD(tp_job_request, search);
	FIELD(tp_job_request, parts_per_level);
	FIELD(tp_job_request, threads);
	FIELD(tp_job_request, flags);
	FIELD(tp_job_request, node_topology);
	FIELD(tp_job_request, gpu_links);
	FIELD(tp_job_request, gpus_per_task);
	FIELD(tp_job_request, gpu_select);
	FIELD(tp_job_request, what.nodes);
	FIELD(tp_job_request, what.slots);
	FIELD(tp_job_request, what.capacity);
	FIELD(tp_job_request, what.ntasks);
	FIELD(tp_job_request, what.stencil);
	FIELD(tp_job_request, what.policy);
	FIELD(tp_job_request, what.metric);
	FIELD(tp_job_request, what.time_budget);
	/* job.h */
	STRUCT(tp_job_candidate);
	FIELD(tp_job_candidate, name);
	FIELD(tp_job_candidate, ran);
	FIELD(tp_job_candidate, scored);
	FIELD(tp_job_candidate, chosen);
	FIELD(tp_job_candidate, score);
	FIELD(tp_job_candidate, ranked);
	FIELD(tp_job_candidate, rank);
	FIELD(tp_job_candidate, ms);
	FIELD(tp_job_candidate, note);
	FIELD(tp_job_candidate, has_congestion);
	FIELD(tp_job_candidate, congestion);
	/* job.h */
	STRUCT(tp_node_share);
	FIELD(tp_node_share, node);
	FIELD(tp_node_share, tasks);
	FIELD(tp_node_share, ntasks);
	FIELD(tp_node_share, cores);
	FIELD(tp_node_share, ncores);
	FIELD(tp_node_share, gpus);
	FIELD(tp_node_share, ngpus);
	FIELD(tp_node_share, want_cpus);
	FIELD(tp_node_share, want_gpus);
	/* job.h */
	STRUCT(tp_node_placement);
	FIELD(tp_node_placement, ntasks);
	FIELD(tp_node_placement, model);
	FIELD(tp_node_placement, cpus_set);
	FIELD(tp_node_placement, cpus);
	FIELD(tp_node_placement, cores_per_task);
	FIELD(tp_node_placement, mims_bytes);
	FIELD(tp_node_placement, cpu_error);
	FIELD(tp_node_placement, cpu_note);
	FIELD(tp_node_placement, gpus_set);
	FIELD(tp_node_placement, gpus_per_task);
	FIELD(tp_node_placement, gpu_start);
	FIELD(tp_node_placement, gpus);
	FIELD(tp_node_placement, gpu_algo);
	FIELD(tp_node_placement, cost);
	FIELD(tp_node_placement, local_rank_cost);
	FIELD(tp_node_placement, closest_cost);
	FIELD(tp_node_placement, gpu_error);
	FIELD(tp_node_placement, gpu_error_jobwide);
	FIELD(tp_node_placement, gpu_note);
	/* metrics.h */
	STRUCT(tp_metrics);
	FIELD(tp_metrics, nedges);
	FIELD(tp_metrics, total_bytes);
	FIELD(tp_metrics, hop_bytes);
	FIELD(tp_metrics, avg_hop_bytes);
	FIELD(tp_metrics, avg_dilation);
	FIELD(tp_metrics, max_dilation);
	FIELD(tp_metrics, max_congestion_bytes);
	FIELD(tp_metrics, max_congestion_msgs);
	FIELD(tp_metrics, frac_intra_node);
	FIELD(tp_metrics, frac_intra_router);
	/* predict.h */
	STRUCT(tp_prediction);
	FIELD(tp_prediction, exchange_us);
	FIELD(tp_prediction, bound_us);
	FIELD(tp_prediction, messages);
	FIELD(tp_prediction, flows);
	FIELD(tp_prediction, links);
	FIELD(tp_prediction, rounds);
	FIELD(tp_prediction, bound_only);
	/* node.h */
	STRUCT(tp_node_part);
	FIELD(tp_node_part, kind);
	FIELD(tp_node_part, parent);
	FIELD(tp_node_part, uplink);
	FIELD(tp_node_part, index);
	FIELD(tp_node_part, name);
	/* nodeplace.h */
	STRUCT(tp_gpusel_cost);
	FIELD(tp_gpusel_cost, max_congestion_ms);
	FIELD(tp_gpusel_cost, weighted_ms);
	FIELD(tp_gpusel_cost, nic_weighted_ms);
	FIELD(tp_gpusel_cost, socket_misses);
	FIELD(tp_gpusel_cost, total_bytes);
	FIELD(tp_gpusel_cost, max_link);
	FIELD(tp_gpusel_cost, used);
	/* nodeplace.h */
	STRUCT(tp_node_tasks);
	FIELD(tp_node_tasks, node);
	FIELD(tp_node_tasks, g);
	FIELD(tp_node_tasks, tasks);
	FIELD(tp_node_tasks, ntasks);
	/* nodeplace.h */
	STRUCT(tp_gpusel_request);
	FIELD(tp_gpusel_request, on);
	FIELD(tp_gpusel_request, task_package);
	FIELD(tp_gpusel_request, allowed);
	FIELD(tp_gpusel_request, nallowed);
	FIELD(tp_gpusel_request, gpus_per_task);
	FIELD(tp_gpusel_request, algo);
	/* nodeplace.h */
	STRUCT(tp_cpu_slots);
	FIELD(tp_cpu_slots, task_package);
	FIELD(tp_cpu_slots, task_core);
	FIELD(tp_cpu_slots, mims);
	/* nodeplace.h */
	STRUCT(tp_nodes_gpu_rank_arg);
	FIELD(tp_nodes_gpu_rank_arg, alloc);
	FIELD(tp_nodes_gpu_rank_arg, models);
	FIELD(tp_nodes_gpu_rank_arg, cpu);
	FIELD(tp_nodes_gpu_rank_arg, gm);
	FIELD(tp_nodes_gpu_rank_arg, ntasks);
	FIELD(tp_nodes_gpu_rank_arg, gpus_per_task);
	/* place.h */
	STRUCT(tp_place_opts);
	FIELD(tp_place_opts, policy);
	FIELD(tp_place_opts, geom);
	FIELD(tp_place_opts, seed);
	FIELD(tp_place_opts, graph);
	FIELD(tp_place_opts, rank);
	FIELD(tp_place_opts, rank_arg);
	/* codes, policies, flags: values callers compile in */
	VALUE(TP_OK);
	VALUE(TP_EINVAL);
	VALUE(TP_ENOMEM);
	VALUE(TP_EIO);
	VALUE(TP_ETIME);
	VALUE(TP_ENOTSUP);
	VALUE(TP_ENOENT);
	VALUE(TP_ENOMETIS);
	VALUE(TP_ENOMODEL);
	VALUE(TP_ERROR_MSG_MAX);
	VALUE(TP_CAP_COORDINATES);
	VALUE(TP_CAP_HIERARCHY);
	VALUE(TP_CAP_SWITCHES);
	VALUE(TP_CAP_GROUPS);
	VALUE(TP_CAP_BLOCKS);
	VALUE(TP_MAX_DIMS);
	VALUE(TP_POLICY_NONE);
	VALUE(TP_POLICY_GEOMETRIC);
	VALUE(TP_POLICY_BLOCK);
	VALUE(TP_POLICY_CYCLIC);
	VALUE(TP_POLICY_RANDOM);
	VALUE(TP_POLICY_ZORDER);
	VALUE(TP_POLICY_GRAPH);
	VALUE(TP_POLICY_AUTO);
	VALUE(TP_POLICY_MODCOLOR);
	VALUE(TP_POLICY_HIERARCHICAL);
	VALUE(TP_METRIC_HOP_BYTES);
	VALUE(TP_METRIC_CONGESTION);
	VALUE(TP_JOB_NODE_PLACEMENT);
	VALUE(TP_JOB_METRICS);
	VALUE(TP_JOB_REQUIRE_MODELS);
	VALUE(TP_JOB_LAUNCH_BUDGET);
	VALUE(TP_BUDGET_NONE);
	VALUE(TP_BUDGET_REQUEST);
	VALUE(TP_BUDGET_DEFAULT);
	VALUE(TP_BUDGET_CONF);
	VALUE(TP_BUDGET_LAUNCH);
	VALUE(TP_JOB_PENDING);
	VALUE(TP_JOB_PLACED);
	VALUE(TP_JOB_KEPT);
	VALUE(TP_PART_SOCKET);
	VALUE(TP_PART_HOSTBRIDGE);
	VALUE(TP_PART_BRIDGE);
	VALUE(TP_PART_GPU);
	VALUE(TP_PART_NVSWITCH);
	VALUE(TP_PART_NIC);
	VALUE(TP_PART_PORT);
	return 0;
}
