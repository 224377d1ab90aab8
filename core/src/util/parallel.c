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
