/* topoplace — the machine's numbered runs of names (name_runs.c): a range of
 * a hostlist is one record, not one index entry per node. */
#ifndef TOPOPLACE_NET_NAME_RUNS_H
#define TOPOPLACE_NET_NAME_RUNS_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "util/hostlist.h"
#include "util/util_internal.h"

/* The machine's numbered runs of names (name_runs.c): a CoordOrder= range
 * is one record instead of one index entry per node. */
struct tp__run {
	uint64_t lo, hi;
	uint32_t width;
	int32_t first;                 /* node index of lo */
};
struct tp__run_family {
	char *text;                    /* prefix then suffix */
	size_t plen, slen;
	struct tp__run *r;             /* sorted by lo */
	size_t n, cap;
	bool disjoint;                 /* no two runs overlap */
};

/* A numbered run's names by node index: nodes first..first+count-1 are
 * prefix, lo + i written in at least width digits, suffix.  Their text is
 * written only when tp_machine_node_name asks (a hostfile formats them
 * without it): two million names of a machine are 34 MB to touch. */
struct tp__run_names {
	struct tp__span span;          /* its nodes; first, for tp__span_of */
	uint64_t lo;
	uint32_t width;
	const char *text;              /* prefix then suffix: the family's */
	size_t plen, slen;
	size_t each;                   /* bytes per name in block */
	_Atomic(char *) block;         /* the names, once asked for */
};
struct tp__name_runs {
	struct tp__run_family *f;      /* sorted by (plen, slen, prefix, suffix) */
	size_t n, cap;
};

/* Register run hr whose first name is node `first`; *text receives its
 * family's prefix then suffix, kept as long as t.  TP_EINVAL when a name
 * is in a run already: *clash is that node, *clash_v its number. */
int tp__runs_add(struct tp__name_runs *t, const struct tp__hostlist_run *hr,
		 int32_t first, const char **text, int32_t *clash,
		 uint64_t *clash_v);
/* Split name into prefix name[0..*ds), its last number name[*ds..*de) = *v
 * and a suffix without digits; false when it has no number of at most 18
 * digits. */
bool tp__name_split(const char *name, size_t *ds, size_t *de, uint64_t *v);
/* Whether tp__runs_add(hr) would cost O(1) moves: hr goes after every run
 * of its family, which is disjoint, or it starts one of few families.  A
 * loader that adds runs in any order (a topology.conf's Nodes= lists) adds
 * the others name by name, so that its cost stays linear. */
bool tp__runs_appends(const struct tp__name_runs *t,
		      const struct tp__hostlist_run *hr);
/* Whether hr names name; the name of number v into buf (TP__HOSTNAME_MAX
 * bytes). */
bool tp__hostlist_run_has(const struct tp__hostlist_run *hr, const char *name);
void tp__hostlist_run_name(const struct tp__hostlist_run *hr, uint64_t v,
			   char *buf);
/* The node of a name, or -1. */
int32_t tp__runs_find(const struct tp__name_runs *t, const char *name);
/* The family of prefix<number>suffix, or -1; then the node of number v
 * written in len digits, or -1, and in *count how many numbers v, v+1, ...
 * up to upto name the nodes that follow it (v..upto all written in the
 * same number of digits); 0 with -1. */
int tp__runs_family(const struct tp__name_runs *t, const char *pre,
		    size_t plen, const char *suf, size_t slen);
int32_t tp__runs_span(const struct tp__name_runs *t, int fam, uint64_t v,
		      unsigned len, uint64_t upto, uint64_t *count);
void tp__runs_free(struct tp__name_runs *t);

#endif
