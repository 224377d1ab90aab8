/* topoplace — topoplace.conf: the part of <topoplace/conf.h> that is not
 * exported.  The core's modules, the unit tests, the benchmarks and the
 * fuzzers (all linked with the static archive) use it; the front ends and
 * outside programs see only the public header. */
#ifndef TOPOPLACE_CONF_INTERNAL_H
#define TOPOPLACE_CONF_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <topoplace/conf.h>

/* Site defaults (TP_POLICY_NONE / hop-bytes / 0 when not set). */
enum tp_policy tp_conf_default_policy(const tp_conf *c);
bool tp_conf_has_default_policy(const tp_conf *c);
enum tp_metric_kind tp_conf_default_metric(const tp_conf *c);
double tp_conf_time_budget_ms(const tp_conf *c);
bool tp_conf_has_time_budget(const tp_conf *c);  /* TimeBudgetMs= given */
int tp_conf_max_threads(const tp_conf *c);      /* MaxThreads= (0: not set) */
const char *tp_conf_node_gpu_links(const tp_conf *c, int32_t node);
/* GpuLinkBandwidth= of the node's line: GB/s each way of one link its
 * GpuLinks= counts (0: not given, TP_NVLINK_BW or TP_XGMI_BW). */
double tp_conf_node_gpu_link_bw(const tp_conf *c, int32_t node);
/* The same in one line: "Slurm's topology nvl (block) of
 * /etc/slurm/topology.yaml, partition gpu: Topology=nvl (...)"; NULL as
 * above.  Every job notes it in its report. */
const char *tp_conf_network_used(const tp_conf *c);

struct tp__slurm_live;   /* slurmctld's live view (slurm_topo.h) */
/* The live view a config was loaded with (tp_conf_load_slurm_live), or
 * NULL: Slurm's layout of a job's tasks reads the same topology. */
const struct tp__slurm_live *tp__conf_live(const tp_conf *c);

#endif
