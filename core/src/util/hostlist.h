/* topoplace — Slurm hostlists (hostlist.c, hostlist_fmt.c): parsed and counted
 * without expanding them, names produced one at a time or as numbered runs. */
#ifndef TOPOPLACE_UTIL_HOSTLIST_H
#define TOPOPLACE_UTIL_HOSTLIST_H

#include <stddef.h>
#include <stdint.h>
#include <topoplace/error.h>

/* A numbered run of names in a hostlist (hostlist.c): prefix<v>suffix for
 * v in lo..hi, v written with at least width digits; the prefix does not
 * end with a digit and the suffix holds none, so a name's last number is
 * its v.  Pointers into the hostlist's text. */
struct tp__hostlist_run {
	const char *prefix, *suffix;
	size_t plen, slen;
	uint64_t lo, hi;
	uint32_t width;
};

/* ---- util: Slurm hostlists (util/hostlist.c) ----
 *
 * "nid[001-004,8],login1,a[0-1]b[2-3]-ib": the expression is parsed and
 * counted without expanding it; names are then produced one at a time.  A
 * caller gives the most names it accepts (the machine's node count, or
 * TP__MAX_CONF_NAMES for a config line) and gets one line naming the source
 * when the count is larger, before any name is produced. */
#define TP__HOSTNAME_MAX 256            /* longest name + NUL */
#define TP__MAX_CONF_NAMES ((int64_t)1 << 22)   /* names in one config value */
#define TP__MAX_TREE_NODES ((int64_t)1 << 20)   /* nodes in a topology.conf */

struct tp__hostlist;

/* Parse text (NUL-terminated; read in place, so it must outlive *out);
 * what names it in messages ("NodeName=..."), bound_what says what
 * max_names is ("the machine's node count").  On success *count is the
 * number of names (duplicates included). */
int tp__hostlist_parse(const char *text, const char *what, int64_t max_names,
		       const char *bound_what, struct tp__hostlist **out,
		       int64_t *count, tp_error *err);
/* names[0..n) as one sorted Slurm hostlist ("n[01-04,09],login1"),
 * malloc'ed into *out; duplicates once (hostlist_fmt.c). */
int tp__hostlist_format(const char *const *names, size_t n, char **out);
/* The next name into buf (TP__HOSTNAME_MAX bytes): 1, or 0 at the end. */
int tp__hostlist_next(struct tp__hostlist *hl, char *buf);
/* The same, but where the next names are a whole range of at least
 * min_len names of a one-group entry with a prefix that does not end with
 * a digit and a suffix without digits, that range as *run (valid while hl
 * lives) and 2. */
int tp__hostlist_next_run(struct tp__hostlist *hl, char *buf,
			  uint64_t min_len, struct tp__hostlist_run *run);
void tp__hostlist_free(struct tp__hostlist *hl);

#endif
