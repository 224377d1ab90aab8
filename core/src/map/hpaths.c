/* topoplace — the allocation's hierarchy paths (hpaths.h): the lengths
 * first, then the paths at the longest one's stride, so that a network of
 * two levels takes two int64 a node and not the cap's 64. */
#include <stdlib.h>
#include <string.h>

#include "input/alloc_internal.h"
#include "util/util_internal.h"
#include "map/hpaths.h"
#include "net/network.h"

void tp__hpaths_free(struct tp__hpaths *p)
{
	free(p->path);
	free(p->plen);
	p->path = NULL;
	p->plen = NULL;
}

int tp__hpaths_collect(const tp_alloc *a, struct tp__hpaths *out)
{
	const tp_machine *m = a->m;
	int32_t nn = a->nnodes;
	memset(out, 0, sizeof *out);
	out->depth = 1;
	out->plen = tp__malloc_array((size_t)nn + 1, sizeof(int));
	if (!out->plen)
		return TP_ENOMEM;
	int64_t tmp[TP__HIER_MAX_LEVELS];
	for (int32_t i = 0; i < nn; i++) {
		const int *r = &m->coords[(size_t)a->node[i] * (size_t)m->ndims];
		int n = m->net->hierarchy(m, r, tmp, TP__HIER_MAX_LEVELS);
		if (n < 0) {
			tp__hpaths_free(out);
			return TP_EINVAL;
		}
		out->plen[i] = n;
		if (n > out->depth)
			out->depth = n;
	}
	size_t cells = (size_t)nn * (size_t)out->depth + 1;
	out->path = tp__malloc_array(cells, sizeof(int64_t));
	if (!out->path) {
		tp__hpaths_free(out);
		return TP_ENOMEM;
	}
	memset(out->path, 0, cells * sizeof(int64_t));
	for (int32_t i = 0; i < nn; i++) {
		const int *r = &m->coords[(size_t)a->node[i] * (size_t)m->ndims];
		m->net->hierarchy(m, r, &out->path[(size_t)i * (size_t)out->depth],
				  out->depth);
	}
	return 0;
}
