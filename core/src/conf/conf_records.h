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

#endif
