/* Unit tests: the one line loop of the core (core/src/util/lines.c) and
 * its formats, fed awkward text on purpose: CRLF, no final newline, a '\'
 * at the end of the text, quotes left open, a NUL byte, very long lines. */
#include "testutil.h"

#include "util/util_internal.h"

#define MAX_SEEN 16

/* What fn was handed: each line and its number. */
struct seen {
	int n;
	char *line[MAX_SEEN];
	long number[MAX_SEEN];
	int stop_at;         /* > 0: TP__LINES_STOP on that call */
};

static int record(void *arg, char *line, long number)
{
	struct seen *s = arg;
	ck_assert_int_lt(s->n, MAX_SEEN);
	s->line[s->n] = strdup(line);
	s->number[s->n] = number;
	s->n++;
	return s->n == s->stop_at ? TP__LINES_STOP : 0;
}

static void seen_free(struct seen *s)
{
	for (int i = 0; i < s->n; i++)
		free(s->line[i]);
	memset(s, 0, sizeof *s);
}

/* The lines of text in fmt, into s (rc returned). */
static int each(const char *text, const struct tp__line_format *fmt,
		struct seen *s)
{
	char *copy = strdup(text);
	tp_error err;
	tp_error_clear(&err);
	int rc = tp__each_line(copy, fmt, "test", &err, record, s);
	free(copy);
	return rc;
}

static void assert_line(const struct seen *s, int i, const char *line,
			long number)
{
	ck_assert_int_lt(i, s->n);
	ck_assert_str_eq(s->line[i], line);
	ck_assert_int_eq(s->number[i], number);
}

static const struct tp__line_format PLAIN = { .comment = '#' };
static const struct tp__line_format PLAIN_SKIP = {
	.comment = '#', .skip_blank = true,
};
static const struct tp__line_format QUOTES = { .comment = '#', .quotes = true };
static const struct tp__line_format SLURM = { .comment = '#', .slurm = true };
static const struct tp__line_format SLURM_PAD = {
	.comment = '#', .slurm = true, .blank_after = true,
};

START_TEST(plain_lines_and_numbers)
{
	struct seen s = { 0 };
	/* no final newline: the last line counts all the same */
	ck_assert_int_eq(each("a b\n\nc # note\nd", &PLAIN, &s), 0);
	ck_assert_int_eq(s.n, 4);
	assert_line(&s, 0, "a b", 1);
	assert_line(&s, 1, "", 2);
	assert_line(&s, 2, "c ", 3);
	assert_line(&s, 3, "d", 4);
	seen_free(&s);
	/* "" has no line, "x\n" one: no empty line after the last newline */
	ck_assert_int_eq(each("", &PLAIN, &s), 0);
	ck_assert_int_eq(s.n, 0);
	ck_assert_int_eq(each("x\n", &PLAIN, &s), 0);
	ck_assert_int_eq(s.n, 1);
	assert_line(&s, 0, "x", 1);
	seen_free(&s);
}
END_TEST

START_TEST(plain_crlf_and_backslash_as_they_are)
{
	struct seen s = { 0 };
	/* a plain reader sees the '\r' (its tokens skip it) and a '\' is a
	 * character: no continuation, no escape */
	ck_assert_int_eq(each("a\r\nb \\\nc\\#d\r\n\\", &PLAIN, &s), 0);
	ck_assert_int_eq(s.n, 4);
	assert_line(&s, 0, "a\r", 1);
	assert_line(&s, 1, "b \\", 2);
	assert_line(&s, 2, "c\\", 3);
	assert_line(&s, 3, "\\", 4);
	seen_free(&s);
	/* no comment character: a '#' is text */
	struct tp__line_format none = { .comment = '\0' };
	ck_assert_int_eq(each("a#b\n", &none, &s), 0);
	assert_line(&s, 0, "a#b", 1);
	seen_free(&s);
}
END_TEST

START_TEST(plain_skip_blank)
{
	struct seen s = { 0 };
	ck_assert_int_eq(each("\n \t\r\n# only a comment\nx\r\n  \n", &PLAIN_SKIP,
			      &s), 0);
	ck_assert_int_eq(s.n, 1);
	assert_line(&s, 0, "x\r", 4);
	seen_free(&s);
}
END_TEST

START_TEST(quotes_shield_the_comment)
{
	struct seen s = { 0 };
	/* a '#' between quotes stays, one after them cuts; the quotes stay;
	 * a '\' escapes nothing; CRLF: the '\r' stays (the reader trims it) */
	ck_assert_int_eq(each("A=\"x#y\" # c\r\nB=\"\"#\r\nC=\\#d\r\n", &QUOTES, &s), 0);
	ck_assert_int_eq(s.n, 3);
	assert_line(&s, 0, "A=\"x#y\" ", 1);
	assert_line(&s, 1, "B=\"\"", 2);
	assert_line(&s, 2, "C=\\", 3);
	seen_free(&s);
	/* an unterminated quote shields the rest of its line only: the next
	 * line starts outside quotes */
	ck_assert_int_eq(each("A=\"x # y\nB=1 # z\n\"#\nC=2#\"\n", &QUOTES, &s), 0);
	ck_assert_int_eq(s.n, 4);
	assert_line(&s, 0, "A=\"x # y", 1);
	assert_line(&s, 1, "B=1 ", 2);
	assert_line(&s, 2, "\"#", 3);
	assert_line(&s, 3, "C=2", 4);
	seen_free(&s);
	/* the same text without quotes: every '#' cuts */
	ck_assert_int_eq(each("A=\"x#y\" # c\r\n", &PLAIN, &s), 0);
	assert_line(&s, 0, "A=\"x", 1);
	seen_free(&s);
	/* with Slurm's rules as well: "\#" still stands for '#' outside
	 * quotes, a '#' inside them stays, and continuation joins the pieces */
	struct tp__line_format both = { .comment = '#', .quotes = true, .slurm = true };
	ck_assert_int_eq(each("A=\"#1\" \\\r\nB=\\#2 #c\nC=\"#3\n", &both, &s), 0);
	ck_assert_int_eq(s.n, 2);
	assert_line(&s, 0, "A=\"#1\"  B=#2", 1);
	assert_line(&s, 1, "C=\"#3", 3);
	seen_free(&s);
}
END_TEST

START_TEST(slurm_continuation_and_escapes)
{
	struct seen s = { 0 };
	/* blanks and '\r' after the '\' are ignored, those before it stay;
	 * the joined line keeps the number of its first line */
	ck_assert_int_eq(each("A=1 \\ \r\n  B=2\\\nC=3 # x\r\nD=\\#4\nE=5 \r\n", &SLURM,
			      &s), 0);
	ck_assert_int_eq(s.n, 3);
	assert_line(&s, 0, "A=1    B=2 C=3", 1);
	assert_line(&s, 1, "D=#4", 4);
	assert_line(&s, 2, "E=5", 5);
	seen_free(&s);
	/* every line ends in a blank (slurm.conf's reader) */
	ck_assert_int_eq(each("A=1\\\nB=2\nC=3\n\n", &SLURM_PAD, &s), 0);
	ck_assert_int_eq(s.n, 3);
	assert_line(&s, 0, "A=1 B=2 ", 1);
	assert_line(&s, 1, "C=3 ", 3);
	assert_line(&s, 2, " ", 4);
	seen_free(&s);
}
END_TEST

START_TEST(slurm_backslash_at_the_end)
{
	struct seen s = { 0 };
	/* a '\' on the last line, with or without a newline after it: the
	 * line is handed, not lost */
	ck_assert_int_eq(each("A=1\nB=2 \\", &SLURM, &s), 0);
	ck_assert_int_eq(s.n, 2);
	assert_line(&s, 1, "B=2 ", 2);
	seen_free(&s);
	ck_assert_int_eq(each("B=2\\\n", &SLURM, &s), 0);
	ck_assert_int_eq(s.n, 1);
	assert_line(&s, 0, "B=2", 1);
	seen_free(&s);
	ck_assert_int_eq(each("\\", &SLURM_PAD, &s), 0);
	ck_assert_int_eq(s.n, 1);
	assert_line(&s, 0, " ", 1);
	seen_free(&s);
	/* a '\' before "\#" is a character; the "\#" still stands for '#' */
	ck_assert_int_eq(each("a\\\\#b\n", &SLURM, &s), 0);
	assert_line(&s, 0, "a\\#b", 1);
	seen_free(&s);
}
END_TEST

START_TEST(nul_ends_the_text)
{
	/* the loop reads a C string: readers refuse a NUL byte first
	 * (tp__nul_check names its line); what follows one is not seen */
	const char text[] = "a\nb\0c\nd\n";
	struct seen s = { 0 };
	ck_assert_int_eq(each(text, &PLAIN, &s), 0);
	ck_assert_int_eq(s.n, 2);
	assert_line(&s, 1, "b", 2);
	seen_free(&s);
	tp_error err;
	tp_error_clear(&err);
	ck_assert_int_eq(tp__nul_check(text, sizeof text - 1, "f", &err), TP_EINVAL);
	tp_assert_err_has(&err, "f:2: NUL byte");
}
END_TEST

START_TEST(long_lines)
{
	/* one 4 MiB line, then a logical line of 4,096 continued pieces */
	size_t big = (size_t)4 << 20;
	char *text = malloc(big + 2);
	ck_assert_ptr_nonnull(text);
	memset(text, 'x', big);
	text[big] = '\n';
	text[big + 1] = '\0';
	struct seen s = { 0 };
	ck_assert_int_eq(each(text, &PLAIN, &s), 0);
	ck_assert_int_eq(s.n, 1);
	ck_assert_uint_eq(strlen(s.line[0]), big);
	seen_free(&s);
	ck_assert_int_eq(each(text, &SLURM, &s), 0);
	ck_assert_uint_eq(strlen(s.line[0]), big);
	seen_free(&s);
	free(text);

	int pieces = 4096;
	text = malloc((size_t)pieces * 4 + 1);
	ck_assert_ptr_nonnull(text);
	char *w = text;
	for (int i = 0; i < pieces; i++) {
		memcpy(w, i + 1 < pieces ? "ab\\\n" : "ab\n", 4);
		w += i + 1 < pieces ? 4 : 3;
	}
	*w = '\0';
	ck_assert_int_eq(each(text, &SLURM, &s), 0);
	ck_assert_int_eq(s.n, 1);
	ck_assert_int_eq(s.number[0], 1);
	ck_assert_uint_eq(strlen(s.line[0]), (size_t)pieces * 3 - 1);
	seen_free(&s);
	free(text);
}
END_TEST

static int fail_on_second(void *arg, char *line, long number)
{
	(void)line;
	int *calls = arg;
	(*calls)++;
	return number == 2 ? TP_EINVAL : 0;
}

START_TEST(stop_and_errors)
{
	struct seen s = { .stop_at = 2 };
	ck_assert_int_eq(each("a\nb\nc\n", &PLAIN, &s), TP__LINES_STOP);
	ck_assert_int_eq(s.n, 2);
	seen_free(&s);
	int calls = 0;
	char text[] = "a\nb\\\nc\nd\n";
	/* the joined "b c" is line 2: its error ends the loop */
	ck_assert_int_eq(tp__each_line(text, &SLURM, "t", NULL, fail_on_second,
				       &calls), TP_EINVAL);
	ck_assert_int_eq(calls, 2);
}
END_TEST

/* tp__each_conf_line: topology.conf's format over a copy, int numbers. */
static int conf_record(void *arg, char *line, int number)
{
	return record(arg, line, number);
}

START_TEST(conf_line_wrapper)
{
	const char *text = "SwitchName=s1 \\\r\n Nodes=n[1-2] # x\r\n\nSwitchName=s2";
	char *before = strdup(text);
	struct seen s = { 0 };
	tp_error err;
	tp_error_clear(&err);
	ck_assert_int_eq(tp__each_conf_line(text, "t", &err, conf_record, &s), 0);
	ck_assert_str_eq(text, before);      /* the caller's text untouched */
	ck_assert_int_eq(s.n, 3);
	assert_line(&s, 0, "SwitchName=s1   Nodes=n[1-2]", 1);
	assert_line(&s, 1, "", 3);
	assert_line(&s, 2, "SwitchName=s2", 4);
	seen_free(&s);
	free(before);
}
END_TEST

START_TEST(line_next_leaves_the_text)
{
	const char *text = "ab\r\n\ncd";
	const char *at = text, *p;
	size_t n, len[4];
	int k = 0;
	while ((p = tp__line_next(&at, &n)) && k < 4)
		len[k++] = n;
	ck_assert_int_eq(k, 3);
	ck_assert_uint_eq(len[0], 3);
	ck_assert_uint_eq(len[1], 0);
	ck_assert_uint_eq(len[2], 2);
	ck_assert_str_eq(text, "ab\r\n\ncd");
}
END_TEST

int main(void)
{
	Suite *s = suite_create("lines");
	TCase *tc = tcase_create("lines");
	tcase_set_timeout(tc, 30);
	tcase_add_test(tc, plain_lines_and_numbers);
	tcase_add_test(tc, plain_crlf_and_backslash_as_they_are);
	tcase_add_test(tc, plain_skip_blank);
	tcase_add_test(tc, quotes_shield_the_comment);
	tcase_add_test(tc, slurm_continuation_and_escapes);
	tcase_add_test(tc, slurm_backslash_at_the_end);
	tcase_add_test(tc, nul_ends_the_text);
	tcase_add_test(tc, long_lines);
	tcase_add_test(tc, stop_and_errors);
	tcase_add_test(tc, conf_line_wrapper);
	tcase_add_test(tc, line_next_leaves_the_text);
	suite_add_tcase(s, tc);
	return tp_test_run(s);
}
