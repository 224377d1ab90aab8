/* topoplace — one loop over the CPUs (util_internal.h, tp__parallel_for). */
#include <pthread.h>
#include <stdatomic.h>

#include "util/util_internal.h"

struct pfor {
	void (*fn)(void *arg, int32_t i);
	void *arg;
	int32_t n;
	atomic_int_least32_t next;
};

static void *pfor_run(void *p)
{
	struct pfor *f = p;
	for (;;) {
		int32_t i = atomic_fetch_add_explicit(&f->next, 1, memory_order_relaxed);
		if (i >= f->n)
			return NULL;
		f->fn(f->arg, i);
	}
}

void tp__parallel_for(int32_t n, int threads, void (*fn)(void *arg, int32_t i),
		      void *arg)
{
	struct pfor f = { fn, arg, n, 0 };
	pthread_t th[TP__MAX_THREADS];
	int started = 0;
	if (threads > n)
		threads = (int)n;
	if (threads > TP__MAX_THREADS)
		threads = TP__MAX_THREADS;
	/* this thread is one of them; one that cannot start is not needed */
	while (started + 1 < threads &&
	       pthread_create(&th[started], NULL, pfor_run, &f) == 0)
		started++;
	pfor_run(&f);
	for (int i = 0; i < started; i++)
		pthread_join(th[i], NULL);
}

/* Closed: so far below 0 that no count of gives brings it back. */
#define LENDER_CLOSED (-(1 << 30))

void tp__lender_init(tp__lender *l)
{
	atomic_init(&l->free, 0);
}

bool tp__lender_take(tp__lender *l)
{
	if (!l)
		return false;
	int v = atomic_load(&l->free);
	while (v > 0)
		if (atomic_compare_exchange_weak(&l->free, &v, v - 1))
			return true;
	return false;
}

void tp__lender_give(tp__lender *l, int n)
{
	if (l && n > 0)
		atomic_fetch_add(&l->free, n);
}

void tp__lender_forget(tp__lender *l)
{
	if (!l)
		return;
	int v = atomic_load(&l->free);
	while (v > 0 && !atomic_compare_exchange_weak(&l->free, &v, 0))
		;
}

void tp__lender_close(tp__lender *l)
{
	if (l)
		atomic_store(&l->free, LENDER_CLOSED);
}
