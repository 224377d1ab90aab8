/* topoplace — what the readers of links files share, private to node/
 * (node_links.c: gres.conf, nvidia-smi and which format a file is;
 * node_links_amd.c: amd-smi, text and JSON; node_links_rocm.c: rocm-smi
 * and the matrices both AMD tools fill; node_links_text.c: the words of
 * the tools' text).  Each calls only down that list. */
#ifndef TOPOPLACE_NODE_LINKS_H
#define TOPOPLACE_NODE_LINKS_H

#include <stdbool.h>

#include "util/util_internal.h"
#include "node/node_internal.h"

/* The matrices of rocm-smi and amd-smi. */
enum smi_sec { SEC_NONE = -1, SEC_WEIGHT, SEC_HOPS, SEC_TYPE, SEC_BW, NSEC };

/* Entries: weights and hops (>= 0, -1 for N/A), types (0 unknown, 1 PCIE,
 * 2 XGMI), bandwidths as min and max MB/s (-1 for N/A). */
struct rocm {
	int n;                  /* GPUs, 0 until the first header */
	int hdr_line[NSEC];     /* line of each matrix's header, 0: none */
	int *row_line[NSEC];    /* n each: line of GPU i's row, 0: missing */
	long long *val[NSEC];   /* n x n; SEC_BW: min; */
	long long *bwmax;       /* n x n */
	char (*bdf)[16];        /* amd-smi: the GPUs' bus ids (n), else NULL */
	const char *const *title;   /* each matrix's name in messages */
};

/* Where an entry of a rocm-smi matrix stands: matrix sec, row GPU i,
 * column GPU j, on the text's line. */
struct rocm_cell {
	int sec, i, j, line;
};

/* nvidia-smi and rocm-smi text: no comments. */
static const struct tp__line_format smi_format = { .comment = '\0' };

/* node_links_text.c: the decimal integer s..e (-1: not one); the words of
 * a line (split in place on blanks), at most cap of them; "GPUn" as n;
 * ANSI escape sequences removed in place. */
int tp__links_parse_int(const char *s, const char *e, long *v);
int tp__links_split_words(char *line, char **tok, int cap);
bool tp__links_gpu_token(const char *t, int *idx);
void tp__links_strip_escapes(char *s);

/* node_links_rocm.c: the matrix set (n GPUs), one entry of it read from
 * its text, every row there and the used matrices symmetric, the xGMI
 * link counts (n x n into c) by rocm-smi's rules. */
int tp__rocm_init(struct rocm *r, int n, const char *what, tp_error *err);
void tp__rocm_free(struct rocm *r);
int tp__rocm_entry(struct rocm *r, const struct rocm_cell *at, const char *t,
		   const char *what, tp_error *err);
int tp__rocm_check(const struct rocm *r, const char *what, tp_error *err);
int tp__rocm_counts(const struct rocm *r, int *c, const char *what,
		    tp_error *err);
/* A spacer line "=== Title ===": its section (SEC_NONE: skipped), -2 for
 * any other line. */
int tp__rocm_section(const char *line);
/* rocm-smi text (buf, NUL-terminated) into *counts (malloc'ed) and
 * *ngpus. */
int tp__rocm_parse(char *buf, const char *what, int **counts, int *ngpus,
		   tp_error *err);

/* node_links_amd.c: amd-smi (text or JSON) or rocm-smi text when buf is
 * one: *done set, *kind and the result (rc) as tp_links_parse_bdf's. */
int tp__links_parse_smi(char *buf, const char *what, int **counts,
			int *ngpus, enum tp_links_kind *kind,
			struct tp_links_bdf **bdfs, bool *done, tp_error *err);

#endif
