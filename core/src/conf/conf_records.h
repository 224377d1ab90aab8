/* topoplace — a topology.conf's text into a machine in one call: the
 * reader (slurm/topology_conf.c) returns records, the builder (net/,
 * records.h) takes them (conf_records.c).  For the kinds' keys, the
 * machine.h calls that take a text, the tests and the fuzzers. */
#ifndef TOPOPLACE_CONF_CONF_RECORDS_H
#define TOPOPLACE_CONF_CONF_RECORDS_H

#include <topoplace/error.h>
#include "net/machine_internal.h"
#include "net/records.h"
#include "util/util_internal.h"

/* Read a topology.conf's text and build its tree with topoplace.conf's
 * settings (tp__tree_from_records). */
int tp__machine_from_topology(tp_machine **out, const char *text,
			      const char *what, const struct tp__topo_opts *o,
			      tp_error *err);
/* tp_machine_from_blocks (topology.conf's text into records, then
 * tp__blocks_from_records), with what Slurm accepts but logs as warnings into warn. */
int tp__machine_from_blocks(tp_machine **out, const char *text, const char *what,
			    const tp_block_opts *o, struct tp__warnings *warn,
			    tp_error *err);

/* tp__blocks_from_records, with the tree between the blocks given as
 * text (o->tree_text: topology.conf's SwitchName= lines, named o->tree_what
 * in messages) read first into records (topology_conf.c); without it the
 * same as tp__blocks_from_records. */
int tp__blocks_with_tree_text(tp_machine **out, const struct tp__topo_recs *r,
			      const struct tp__block_sizes *sizes,
			      const struct tp__topo_recs *tree,
			      const tp_block_opts *o, tp_error *err);
/* Rings from topology.conf's text: RingName=NAME [Nodes=HOSTLIST] lines,
 * read as Slurm reads them (tp__ring_conf_records), then
 * tp__rings_from_records.  what names the
 * file in messages; warn may be NULL. */
int tp__rings_from_conf_text(tp_machine **out, const char *text,
			     const char *what, struct tp__warnings *warn,
			     tp_error *err);

struct tp__slurm_topology;
struct tp__stopo_built;
/* The machine of topology which (st->chosen for the partition's) into
 * out->m; TP_ENOENT when it has no network (flat).  Blocks of
 * topology.yaml take the network between them from the first tree
 * topology of the file that holds all their nodes (unless block_opts
 * gives a tree file): its name in out->tree_used. */
int tp__slurm_topology_machine(const struct tp__slurm_topology *st, int which,
			       const struct tp__topo_opts *tree_opts,
			       const tp_block_opts *block_opts,
			       struct tp__stopo_built *out, tp_error *err);

#endif
