/* topoplace — what net/tree.c's switch trees offer beyond their table and
 * the queries of <topoplace/machine.h>: the time model's lanes as set, for
 * check-config's account (conf/kind_tree.c). */
#ifndef TOPOPLACE_NET_TREE_H
#define TOPOPLACE_NET_TREE_H

#include <stdbool.h>

#include "net/machine_internal.h"

/* LevelUplinks= as set (tp__tree_set_lanes): their count (0: not given, a
 * 4:1 taper assumed; also when m is no tree), the values into
 * uplinks[0..16), UplinkRouting=adaptive into *adaptive. */
int tp__tree_uplinks(const tp_machine *m, int *uplinks, bool *adaptive);

#endif
