/* topoplace — error reporting and small helpers used by every module. */
#define _POSIX_C_SOURCE 200809L
#include <stdarg.h>
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
