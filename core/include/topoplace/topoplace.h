/* topoplace — topology-aware task placement.  Umbrella header.
 *
 *   tp_conf_load()            topoplace.conf -> tp_machine
 *   tp_alloc_from_hostlist()  the job's nodes and slots
 *   tp_graph_from_stencil() / tp_graph_from_json_file()   the pattern
 *   tp_place()                the mapping (task -> allocation index)
 *   tp_metrics_compute()      how good it is
 *   tp_hostfile_write_path()  SLURM_HOSTFILE
 *   tp_node_load_xml(), tp_gpusel()   GPUs and CPUs inside a node
 *   tp_job_create(), tp_job_run()      all of the above as one pipeline:
 *                                      what the plugin and the command run
 */
#ifndef TOPOPLACE_H
#define TOPOPLACE_H

#include <topoplace/version.h>
#include <topoplace/error.h>
#include <topoplace/machine.h>
#include <topoplace/alloc.h>
#include <topoplace/pattern.h>
#include <topoplace/metrics.h>
#include <topoplace/predict.h>
#include <topoplace/geom.h>
#include <topoplace/graphmap.h>
#include <topoplace/place.h>
#include <topoplace/hostfile.h>
#include <topoplace/conf.h>
#include <topoplace/node.h>
#include <topoplace/nodeplace.h>
#include <topoplace/job.h>

#endif
