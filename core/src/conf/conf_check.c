/* topoplace — check-config's comparison of topoplace.conf's nodes with
 * slurm.conf's (tp_conf_compare_slurm): the nodes Slurm has that the
 * network does not place, and the other way round.  slurm.conf's names
 * come from its reader (slurm/slurm_conf.c). */
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include <topoplace/conf.h>
#include "net/hashtab.h"
#include "slurm/slurm_conf.h"
#include "util/hostlist.h"
#include "util/util_internal.h"
#include "net/machine_internal.h"

void tp_conf_slurm_diff_free(tp_conf_slurm_diff *d)
{
	if (!d)
		return;
	free(d->missing);
	free(d->extra);
	memset(d, 0, sizeof *d);
}

/* The two lists: slurm.conf's nodes the machine lacks, the machine's nodes
 * slurm.conf lacks. */
static int diff_lists(const struct tp__name_set *names, const tp_machine *m,
		      tp_conf_slurm_diff *d)
{
	size_t nm = 0, ne = 0;
	const char **missing = tp__malloc_array(names->n + 1, sizeof(char *));
	const char **extra = tp__malloc_array((size_t)m->nnodes + 1, sizeof(char *));
	char *seen = calloc((size_t)m->nnodes + 1, 1);
	int rc = TP_ENOMEM;
	if (missing && extra && seen) {
		for (size_t i = 0; i < names->n; i++) {
			int32_t k = tp_machine_find_node(m, names->names[i]);
			if (k < 0)
				missing[nm++] = names->names[i];
			else
				seen[k] = 1;
		}
		bool named = true;
		for (int32_t k = 0; named && k < m->nnodes; k++)
			if (!seen[k])
				named = (extra[ne++] = tp_machine_node_name(m, k)) != NULL;
		d->nslurm = (int64_t)names->n;
		d->nmissing = (int64_t)nm;
		d->nextra = (int64_t)ne;
		rc = named ? tp__hostlist_format(missing, nm, &d->missing) : TP_ENOMEM;
		if (!rc)
			rc = tp__hostlist_format(extra, ne, &d->extra);
	}
	free(missing);
	free(extra);
	free(seen);
	return rc;
}

int tp_conf_compare_slurm(const tp_conf *c, const char *slurm_conf,
			  tp_conf_slurm_diff *out, tp_error *err)
{
	if (!out)
		return tp_error_set(err, TP_EINVAL, "slurm.conf: out is NULL");
	memset(out, 0, sizeof *out);
	const tp_machine *m = tp_conf_machine(c);
	if (!m || !slurm_conf || !*slurm_conf)
		return tp_error_set(err, TP_EINVAL, "slurm.conf: no config or no path");
	struct tp__name_set names = { 0 };
	int rc = tp__slurm_conf_nodes(slurm_conf, &names, err);
	if (!rc && (rc = diff_lists(&names, m, out))) {
		tp_conf_slurm_diff_free(out);
		rc = tp_error_set(err, rc, "%s: out of memory", slurm_conf);
	}
	tp__name_set_free(&names);
	return rc;
}
