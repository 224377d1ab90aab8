/* topoplace — folding a task grid onto a box of a higher-dimensional torus
 * (geom_fold.c).  Private to the geometric mapper. */
#ifndef TOPOPLACE_GEOM_FOLD_H
#define TOPOPLACE_GEOM_FOLD_H

#include <stdint.h>
#include <topoplace/machine.h>

/* Folds tried at most per mapping (each costs one pass over the tasks and
 * one exact scoring). */
#define TP__FOLD_MAX 8

/* One folded embedding.  Task dimension i holds block[i] tasks of a node
 * times the product of the machine extents group[i][0..ngroup[i]), which
 * its node coordinate walks in snake order, group[i][0] fastest. */
typedef struct tp__fold {
	int tdims, mdims;
	int block[TP_MAX_DIMS];
	int ngroup[TP_MAX_DIMS];
	int group[TP_MAX_DIMS][TP_MAX_DIMS];
	int mext[TP_MAX_DIMS];         /* the machine box's extents */
} tp__fold;

/* The folds of a task grid of extents text[0..tdims) with k tasks per node
 * onto a machine box of extents mext[0..mdims) (every extent > 1), best
 * first, at most max of them.  Returns how many (0: none applies). */
int tp__fold_find(const int *text, int tdims, const int *mext, int mdims,
		  int k, tp__fold *out, int max);

/* Blocked variants tried at most per mapping. */
#define TP__BLOCK_MAX 3

/* The block shapes b[0..tdims) of k > 1 tasks that a task grid of extents
 * text[0..tdims) divides into (b[i] divides text[i], the b[i] multiply to
 * k) with the most task pairs inside a block, in enumeration order, at
 * most max of them, into out.  Returns how many (0: none). */
int tp__block_find(const int *text, int tdims, int k,
		   int (*out)[TP_MAX_DIMS], int max);

/* Box coordinates mc[0..mdims) of the node holding the task at grid
 * coordinates tc[0..tdims). */
void tp__fold_place(const tp__fold *f, const uint32_t *tc, int *mc);

/* "x=xu y=yw z=zv, 2x2x1 per node": task axes tnames, machine axes mnames
 * (one letter per dimension). */
void tp__fold_describe(const tp__fold *f, const char *tnames,
		       const char *mnames, char *buf, size_t len);

#endif
