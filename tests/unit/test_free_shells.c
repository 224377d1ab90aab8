/* Unit tests: the nearest free node by shells (core/src/map/free_shells.c),
 * against every node read one by one. */
#include <topoplace/conf.h>
#include "map/free_shells.h"
#include "net/network.h"
#include "testutil.h"

static uint64_t next(uint64_t *s)
{
	*s = *s * 6364136223846793005ULL + 1442695040888963407ULL;
	return *s >> 33;
}

/* The nearest free node by reading them all; ties to the lower index. */
static int32_t brute(const tp_machine *m, const int *rc, const int *fs,
		     int32_t nn, const int *p, int64_t *dist)
{
	int32_t best = -1;
	*dist = INT64_MAX;
	for (int32_t i = 0; i < nn; i++) {
		if (fs[i] <= 0)
			continue;
		int64_t d = tp__coord_dist(m, p, &rc[(size_t)i * (size_t)m->ndims]);
		if (d < *dist) {
			*dist = d;
			best = i;
		}
	}
	return best;
}

/* A machine from its topoplace.conf line, all of its nodes allocated. */
static void check_machine(const char *line, int nodes, uint64_t seed)
{
	char text[256];
	snprintf(text, sizeof text, "%s\nNodeName=n[0-%d] CoordOrder=x-major\n", line,
		 nodes - 1);
	tp_conf *c = NULL;
	tp_error err;
	ck_assert_msg(tp_conf_load_string(text, "s.conf", &c, &err) == 0, "%s", err.msg);
	const tp_machine *m = tp_conf_machine(c);
	int nd = m->ndims;
	/* half the nodes, in a random order; two of them share nothing */
	int32_t nn = nodes / 2;
	int *rc = malloc(sizeof(int) * (size_t)nn * (size_t)nd);
	int *fs = malloc(sizeof(int) * (size_t)nn);
	int32_t *perm = malloc(sizeof(int32_t) * (size_t)nodes);
	for (int32_t i = 0; i < nodes; i++)
		perm[i] = i;
	for (int32_t i = nodes - 1; i > 0; i--) {
		int32_t j = (int32_t)(next(&seed) % (uint64_t)(i + 1)), t = perm[i];
		perm[i] = perm[j];
		perm[j] = t;
	}
	for (int32_t i = 0; i < nn; i++) {
		memcpy(&rc[(size_t)i * (size_t)nd], &m->coords[(size_t)perm[i] * (size_t)nd],
		       sizeof(int) * (size_t)nd);
		fs[i] = 1 + (int)(next(&seed) % 2);
	}
	tp__free_shells *s = tp__free_shells_create(m, rc, fs, nn);
	ck_assert_ptr_nonnull(s);
	int left = 0, cut = 0;
	for (int32_t i = 0; i < nn; i++)
		left += fs[i];
	while (left > 0) {
		int p[TP_MAX_DIMS];
		for (int d = 0; d < nd; d++)
			p[d] = (int)(next(&seed) % (uint64_t)m->dims[d]);
		int64_t want_d, got_d = INT64_MAX;
		int32_t want = brute(m, rc, fs, nn, p, &want_d), got = -1;
		/* with a small read limit the walk may stop short: what it has
		 * is then a free node no nearer than the answer */
		int64_t limit = left % 3 == 0 ? 8 : 1 << 20;
		bool done = tp__free_shells_nearest(s, p, &got, &got_d, limit);
		if (done) {
			ck_assert_int_eq(got, want);
			ck_assert_int_eq(got_d, want_d);
		} else {
			cut++;
			ck_assert(got < 0 || (fs[got] > 0 && got_d >= want_d));
		}
		/* take the answer, so that the free nodes thin out */
		fs[want]--;
		tp__free_shells_taken(s, want);
		left--;
	}
	ck_assert_int_gt(cut, 0);
	/* nothing free: none found */
	int p[TP_MAX_DIMS] = { 0 };
	int32_t none = -1;
	int64_t none_d = INT64_MAX;
	ck_assert(tp__free_shells_nearest(s, p, &none, &none_d, 1 << 20));
	ck_assert_int_eq(none, -1);
	tp__free_shells_destroy(s);
	free(rc);
	free(fs);
	free(perm);
	tp_conf_destroy(c);
}

/* Wrapped dimensions of 2 and 3 (where both ways round meet), an odd and
 * an even ring, and a mesh whose points lie near its edges. */
START_TEST(same_as_reading_every_node)
{
	check_machine("Network=torus Dims=6x5x2x3 Wrap=yes", 180, 1);
	check_machine("Network=torus Dims=7x4 Wrap=yes,no", 28, 2);
	check_machine("Network=mesh Dims=9x5x3", 135, 3);
	check_machine("Network=torus Dims=24 Wrap=yes", 24, 4);
}
END_TEST

/* Only plain hop counts qualify. */
START_TEST(other_networks_left_out)
{
	tp_conf *c = NULL;
	tp_error err;
	ck_assert_msg(tp_conf_load_string("Network=dragonfly Groups=4 RoutersPerGroup=2 "
					  "NodesPerRouter=2 LinksPerGroupPair=1\n"
					  "NodeName=n[0-15] CoordOrder=x-major\n",
					  "df.conf", &c, &err) == 0, "%s", err.msg);
	int rc[16 * TP_MAX_DIMS] = { 0 }, fs[16] = { 0 };
	ck_assert_ptr_null(tp__free_shells_create(tp_conf_machine(c), rc, fs, 16));
	tp_conf_destroy(c);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("free_shells");
	TCase *tc = tcase_create("core");
	tcase_add_test(tc, same_as_reading_every_node);
	tcase_add_test(tc, other_networks_left_out);
	suite_add_tcase(s, tc);
	return tp_test_run(s);
}
