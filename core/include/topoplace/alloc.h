/* topoplace — the allocation of one job: which nodes of the machine, in
 * Slurm's order, and how many task slots each holds.
 *
 * A mapping is an array map[t] = i: task t runs on the i-th node of the
 * allocation (0 <= i < tp_alloc_nnodes).
 */
#ifndef TOPOPLACE_ALLOC_H
#define TOPOPLACE_ALLOC_H

#include <stdint.h>
#include <topoplace/error.h>
#include <topoplace/export.h>
#include <topoplace/machine.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct tp_alloc tp_alloc;

/* Build an allocation from a Slurm hostlist expression ("nid[0-3,8],nid12").
 * Order is kept as written (that is Slurm's block order).  Every node gets
 * slots_per_node slots (>= 1).  Errors: malformed hostlist, more names than
 * the machine has nodes (found before expanding any), unknown node,
 * duplicate node.  what names the source in messages ("--nodes").  Time
 * and memory are linear in the text and the names. */
TP_EXPORT int tp_alloc_from_hostlist(const tp_machine *m, const char *hostlist,
			   int slots_per_node, const char *what,
			   tp_alloc **out, tp_error *err);
/* Read a hostlist from a file (for allocations too large for one argument,
 * e.g. "--nodes @FILE"): a regular file of at most 64 MiB, opened without
 * blocking; newlines act as commas; a NUL byte is an error naming its line.
 * *text_out (malloc'ed) is ready for tp_alloc_from_hostlist(); errors name
 * the file, and a file without any name is one. */
TP_EXPORT int tp_hostlist_read_file(const char *path, char **text_out,
				    tp_error *err);
TP_EXPORT void tp_alloc_destroy(tp_alloc *a);

/* Per-node slots in Slurm's SLURM_TASKS_PER_NODE syntax: "2(x3),1" means
 * 2,2,2,1.  The count must match the allocation's node count. */
TP_EXPORT int tp_alloc_set_slots_spec(tp_alloc *a, const char *spec, tp_error *err);
TP_EXPORT int tp_alloc_set_slots(tp_alloc *a, int32_t i, int slots, tp_error *err);

/* Put the nodes (with their slots) in the order Slurm's own step layout
 * takes them, the baseline every mapping is judged against: for Slurm
 * 26.05 and later (version as TP_SLURM_VERSION in <topoplace/job.h>) with
 * slurm.conf's TopologyPlugin=topology/tree or topology/block, leaf switch
 * by leaf switch or block by block in topology.conf's order (nodes in
 * neither first), unless SelectTypeParameters=CR_NO_DIST_TOPO_BLOCK;
 * otherwise the order stays.  how (at least TP_ERROR_MSG_MAX bytes, or
 * NULL) says which was taken, "" when the order stays with nothing to say
 * (before 26.05, no slurm.conf); an unreadable file keeps the order and
 * says why there.  With topology.yaml beside slurm.conf, the topology of
 * partition (NULL: the default partition's, else the cluster default)
 * ranks the nodes the same way when it is a tree or blocks.  Fails only
 * out of memory. */
TP_EXPORT int tp_alloc_take_slurm_order(tp_alloc *a, const char *slurm_conf,
					const char *partition, unsigned version,
					char *how);

TP_EXPORT int32_t tp_alloc_nnodes(const tp_alloc *a);
TP_EXPORT int32_t tp_alloc_node(const tp_alloc *a, int32_t i);   /* machine node index */
TP_EXPORT int64_t tp_alloc_total_slots(const tp_alloc *a);
TP_EXPORT const tp_machine *tp_alloc_machine(const tp_alloc *a);

#ifdef __cplusplus
}
#endif
#endif
