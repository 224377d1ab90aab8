/* Shared helpers for the Check unit tests. */
#ifndef TP_TESTUTIL_H
#define TP_TESTUTIL_H

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <topoplace/topoplace.h>

#ifndef TP_TEST_DATA
#define TP_TEST_DATA "tests/data"
#endif
#ifndef TP_SOURCE_DIR
#define TP_SOURCE_DIR "."
#endif

/* Node models: the examples in conf/examples/nodes/ (their one copy, the one
 * the packages install), the test-only ones (odd shapes, broken files) in
 * tests/data/nodes/. */
#define TP_EXAMPLE_NODES TP_SOURCE_DIR "/conf/examples/nodes/"
#define TP_TEST_NODES TP_TEST_DATA "/nodes/"

/* The path of node model file NAME, in whichever of the two folders has it. */
static inline void tp_test_node_path(char *path, size_t size, const char *name)
{
	snprintf(path, size, TP_TEST_NODES "%s", name);
	if (access(path, R_OK) != 0)
		snprintf(path, size, TP_EXAMPLE_NODES "%s", name);
}

/* Assert that an error message contains a fragment. */
#define tp_assert_err_has(err, frag)                                         \
	ck_assert_msg(strstr((err)->msg, (frag)) != NULL,                    \
		      "error \"%s\" lacks \"%s\"", (err)->msg, (frag))

/* Write text to a fresh temporary file; returns its malloc'ed path. */
static inline char *tp_test_tmpfile(const char *text)
{
	char *path = strdup("/tmp/tp-test-XXXXXX");
	int fd = mkstemp(path);
	ck_assert_int_ge(fd, 0);
	FILE *f = fdopen(fd, "w");
	ck_assert_ptr_nonnull(f);
	fputs(text, f);
	fclose(f);
	return path;
}

/* Run one suite; exit status 0 only when every test passed. */
static inline int tp_test_run(Suite *s)
{
	SRunner *sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}

#endif
