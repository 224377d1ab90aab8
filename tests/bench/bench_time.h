/* bench_time.h — the benchmarks' clock and medians, one copy for all. */
#ifndef TP_BENCH_TIME_H
#define TP_BENCH_TIME_H

#include <stdlib.h>
#include <time.h>

/* Monotonic wall clock in ms. */
static inline double now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static inline int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

/* The median of v[0..n-1], n >= 1 (v is sorted in place). */
static inline double median(double *v, int n)
{
	qsort(v, (size_t)n, sizeof *v, cmp_double);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

#endif
