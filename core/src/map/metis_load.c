/* topoplace — METIS, linked or loaded at run time: see metis_load.h.
 *
 * Nothing is kept between calls (no global state): each graph mapping opens
 * METIS and closes it again.  RTLD_NODELETE keeps the library mapped after
 * the close, so only the first open in a process pays for loading it
 * (milliseconds to load and unload each time; microseconds once it
 * stays).  glibc
 * 2.34 and later have dlopen in libc, so the plugin needs no libdl. */
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

#include <math.h>

#include "pattern/pattern_internal.h"
#include "map/metis_load.h"

int tp__metis_load(struct tp__metis *m, const char *soname, tp_error *err)
{
	memset(m, 0, sizeof *m);
	dlerror();
	void *h = dlopen(soname, RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE);
	if (!h) {
		const char *why = dlerror();
		return tp_error_set(err, TP_ENOMETIS, TP__METIS_MISSING " (%s)",
				    why ? why : soname);
	}
	/* ISO C has no object-to-function pointer conversion: the store
	 * through void ** is the idiom dlsym(3) gives */
	*(void **)&m->set_default_options = dlsym(h, "METIS_SetDefaultOptions");
	*(void **)&m->part_graph_recursive = dlsym(h, "METIS_PartGraphRecursive");
	if (!m->set_default_options || !m->part_graph_recursive) {
		dlclose(h);
		memset(m, 0, sizeof *m);
		return tp_error_set(err, TP_ENOMETIS, TP__METIS_MISSING
				    " (%s lacks METIS_PartGraphRecursive)", soname);
	}
	m->handle = h;
	return TP_OK;
}

int tp__metis_open(struct tp__metis *m, tp_error *err)
{
#ifdef TP_METIS_DLOPEN
	return tp__metis_load(m, TP_METIS_SONAME, err);
#else
	(void)err;
	m->handle = NULL;
	m->set_default_options = METIS_SetDefaultOptions;
	m->part_graph_recursive = METIS_PartGraphRecursive;
	return TP_OK;
#endif
}

void tp__metis_close(struct tp__metis *m)
{
	if (m->handle)
		dlclose(m->handle);
	memset(m, 0, sizeof *m);
}

/* u's index in T, or -1 when u is not in T */
static inline int32_t sub_index(const struct tp__metis_sub *s, int32_t u)
{
	int32_t l = s->local[u];
	return l >= 0 && l < s->nT && s->T[l] == u ? l : -1;
}

void tp__metis_sub_count(const struct tp__metis_sub *s, int64_t *ne, double *W)
{
	const struct tp_graph *g = s->g;
	const int32_t *T = s->T;
	int32_t nT = s->nT;
	*ne = 0;
	*W = 0;
	for (int32_t i = 0; i < nT; i++)
		for (int64_t e = g->xadj[T[i]]; e < g->xadj[T[i] + 1]; e++)
			if (sub_index(s, g->adjncy[e]) >= 0) {
				(*ne)++;
				*W += tp__graph_w(g, e);
			}
}

void tp__metis_sub_fill(const struct tp__metis_sub *s, double W, idx_t *xadj,
			idx_t *adj, idx_t *wgt)
{
	const struct tp_graph *g = s->g;
	const int32_t *T = s->T;
	int32_t nT = s->nT;
	double scale = W > 0 ? (double)(1 << 30) / W : 1.0;
	if (scale > 1e6)
		scale = 1e6;
	int64_t k = 0;
	xadj[0] = 0;
	for (int32_t i = 0; i < nT; i++) {
		for (int64_t e = g->xadj[T[i]]; e < g->xadj[T[i] + 1]; e++) {
			int32_t l = sub_index(s, g->adjncy[e]);
			if (l < 0)
				continue;
			double w = floor(tp__graph_w(g, e) * scale + 0.5);
			adj[k] = l;
			wgt[k] = w < 1.0 ? 1 : (idx_t)w;
			k++;
		}
		xadj[i + 1] = (idx_t)k;
	}
}
