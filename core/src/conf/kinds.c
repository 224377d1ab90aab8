/* topoplace — the kinds of network topoplace.conf knows (conf_kind.h).
 *
 * Network= lists the kinds it takes in this order.  A new kind: its
 * struct tp__conf_kind in its own file conf/kind_NAME.c, one line here. */
#include <stddef.h>

#include "conf/conf_kind.h"
#include "net/network.h"

const struct tp__conf_kind *const tp__conf_kinds[] = {
	&tp__conf_torus,
	&tp__conf_mesh,
	&tp__conf_tree,
	&tp__conf_dragonfly,
	&tp__conf_block,
	&tp__conf_rings,        /* Slurm's rings and toruses side by side */
	NULL,
};

const struct tp__conf_kind *tp__conf_kind_of(const tp_machine *m)
{
	for (int i = 0; m && tp__conf_kinds[i]; i++)
		for (const struct tp_net_ops *const *t = tp__conf_kinds[i]->machines;
		     t && *t; t++)
			if (*t == m->net)
				return tp__conf_kinds[i];
	return NULL;
}
