/* topoplace — error reporting and small helpers used by every module. */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <sys/stat.h>
#include <stdint.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "internal.h"

int tp_error_set(tp_error *err, int code, const char *fmt, ...)
{
	if (err) {
		va_list ap;
		va_start(ap, fmt);
		vsnprintf(err->msg, sizeof err->msg, fmt, ap);
		va_end(ap);
		/* Messages are one line: fold any newline a caller let through. */
		for (char *p = err->msg; *p; p++)
			if (*p == '\n' || *p == '\r')
				*p = ' ';
		err->code = code;
	}
	return code;
}

void tp_error_clear(tp_error *err)
{
	if (err) {
		err->code = 0;
		err->msg[0] = '\0';
	}
}

const char *tp_strerror(int code)
{
	switch (code) {
	case TP_OK: return "success";
	case TP_EINVAL: return "invalid input";
	case TP_ENOMEM: return "out of memory";
	case TP_EIO: return "input/output error";
	case TP_ETIME: return "time budget exceeded";
	case TP_ENOTSUP: return "not supported";
	case TP_ENOENT: return "not found";
	default: return "unknown error";
	}
}

void *tp__calloc(size_t n, size_t size)
{
	if (n == 0 || size == 0)
		return calloc(1, 1);
	if (n > SIZE_MAX / size)
		return NULL;
	return calloc(n, size);
}

void *tp__malloc_array(size_t n, size_t size)
{
	if (n == 0 || size == 0)
		return malloc(1);
	if (n > SIZE_MAX / size)
		return NULL;
	return malloc(n * size);
}

double tp__now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

/* Reject what Slurm's hostlist_create() would reject (or half-accept) before
 * calling it: libslurm 22.05 leaks memory and logs to stderr on every bad
 * range, and takes "nid[0-" for a node called "nid]".  This only checks;
 * Slurm does the expansion.  Brackets pair up without nesting and hold a
 * comma-separated list of N or N-M with N <= M and at most 65536 names per
 * range (Slurm's MAX_RANGE).  On failure why says what is wrong. */
bool tp__hostlist_ok(const char *s, char *why, size_t len)
{
	for (const char *p = s; *p; p++) {
		if (*p == ']') {
			snprintf(why, len, "unbalanced brackets");
			return false;
		}
		if (*p != '[')
			continue;
		for (;;) {
			const char *item = ++p;
			unsigned long long lo = 0, hi;
			int nd = 0, nd2 = 1;
			for (; *p >= '0' && *p <= '9'; p++, nd++)
				if (nd < 19)
					lo = lo * 10 + (unsigned long long)(*p - '0');
			hi = lo;
			if (*p == '-') {
				hi = 0;
				nd2 = 0;
				for (p++; *p >= '0' && *p <= '9'; p++, nd2++)
					if (nd2 < 19)
						hi = hi * 10 + (unsigned long long)(*p - '0');
			}
			if (!*p) {
				snprintf(why, len, "unbalanced brackets");
				return false;
			}
			if (!nd || !nd2 || nd > 18 || nd2 > 18 || (*p != ',' && *p != ']')) {
				const char *e = p;
				while (*e && *e != ',' && *e != ']')
					e++;
				snprintf(why, len, "bad range '%.*s'", (int)(e - item), item);
				return false;
			}
			if (lo > hi) {
				snprintf(why, len, "bad range '%.*s' (decreasing)",
					 (int)(p - item), item);
				return false;
			}
			if (hi - lo >= 65536) {
				snprintf(why, len,
					 "range '%.*s' has %llu names, Slurm allows at most 65536 per range",
					 (int)(p - item), item, hi - lo + 1);
				return false;
			}
			if (*p == ']')
				break;
		}
	}
	return true;
}

int tp__read_file(const char *path, size_t max_bytes, char **buf_out,
		  size_t *len_out, tp_error *err)
{
	FILE *f = fopen(path, "r");
	if (!f)
		return tp_error_set(err, TP_EIO, "%s: cannot open: %s", path,
				    strerror(errno));
	struct stat st;
	if (fstat(fileno(f), &st) < 0 || !S_ISREG(st.st_mode) ||
	    (uint64_t)st.st_size > max_bytes) {
		fclose(f);
		return tp_error_set(err, TP_EINVAL,
				    "%s: not a regular file of at most %zu bytes",
				    path, max_bytes);
	}
	size_t len = (size_t)st.st_size;
	char *buf = malloc(len + 1);
	if (!buf) {
		fclose(f);
		return tp_error_set(err, TP_ENOMEM, "%s: out of memory", path);
	}
	size_t got = fread(buf, 1, len, f);
	int bad = ferror(f);
	fclose(f);
	if (bad || got != len) {
		free(buf);
		return tp_error_set(err, TP_EIO, "%s: read error", path);
	}
	buf[len] = '\0';
	*buf_out = buf;
	*len_out = len;
	return 0;
}

int tp__text_copy(const char *text, size_t len, const char *what, char **out,
		  tp_error *err)
{
	*out = NULL;
	char *buf = malloc(len + 1);
	if (!buf)
		return tp_error_set(err, TP_ENOMEM, "%s: out of memory", what);
	memcpy(buf, text, len);
	buf[len] = '\0';
	if (strlen(buf) != len) {
		free(buf);
		return tp_error_set(err, TP_EINVAL, "%s: contains a NUL byte", what);
	}
	*out = buf;
	return 0;
}
