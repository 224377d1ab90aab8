/* topoplace — error reporting and small helpers used by every module. */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <stdint.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "util/util_internal.h"

/* Messages and warnings are one line: fold any newline a caller let
 * through (a YAML name can hold one); other control characters echoed
 * from input (an escape sequence in a file name or a hostlist) become
 * '?', so that a message cannot drive the terminal or the log reader. */
static void one_line(char *msg)
{
	for (char *p = msg; *p; p++)
		if (*p == '\n' || *p == '\r')
			*p = ' ';
		else if ((unsigned char)*p < 0x20 || *p == 0x7f)
			*p = '?';
}

int tp_error_set(tp_error *err, int code, const char *fmt, ...)
{
	if (err) {
		va_list ap;
		va_start(ap, fmt);
		vsnprintf(err->msg, sizeof err->msg, fmt, ap);
		va_end(ap);
		one_line(err->msg);
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
	case TP_ENOMETIS: return "METIS not available";
	case TP_ENOMODEL: return "no node model";
	case TP_ENOENT: return "not found";
	default: return "unknown error";
	}
}

/* Large arrays are backed by transparent huge pages where the kernel offers
 * them on request (THP "madvise" mode, Debian's default): a launch at
 * machine scale first-touches hundreds of megabytes (the task graph, the
 * name index, the mapping arrays), and with 4 KiB pages the page faults
 * alone can take longer than the mapping.  Only the 2 MiB-aligned inside of the block is
 * advised, so no byte outside it changes; failure is harmless. */
#define HUGE_ADVISE_MIN ((size_t)2 << 20)
#define HUGE_PAGE ((uintptr_t)2 << 20)

void *tp__huge_advise(void *p, size_t bytes)
{
#ifdef MADV_HUGEPAGE
	if (p && bytes >= HUGE_ADVISE_MIN) {
		uintptr_t b = ((uintptr_t)p + HUGE_PAGE - 1) & ~(HUGE_PAGE - 1);
		uintptr_t e = ((uintptr_t)p + bytes) & ~(HUGE_PAGE - 1);
		if (e > b)
			(void)madvise((void *)b, e - b, MADV_HUGEPAGE);
	}
#else
	(void)bytes;
#endif
	return p;
}

void *tp__calloc(size_t n, size_t size)
{
	if (n == 0 || size == 0)
		return calloc(1, 1);
	if (n > SIZE_MAX / size)
		return NULL;
	return tp__huge_advise(calloc(n, size), n * size);
}

void *tp__calloc_aligned(size_t n, size_t size, size_t align)
{
	if (n == 0 || size == 0)
		n = size = 1;
	if (n > SIZE_MAX / size)
		return NULL;
	void *p = NULL;
	size_t bytes = n * size;
	if (posix_memalign(&p, align, bytes))
		return NULL;
	/* advised before the first touch, as calloc's pages are */
	return memset(tp__huge_advise(p, bytes), 0, bytes);
}

void *tp__malloc_array(size_t n, size_t size)
{
	if (n == 0 || size == 0)
		return malloc(1);
	if (n > SIZE_MAX / size)
		return NULL;
	size_t bytes = n * size;
	if (bytes < HUGE_ADVISE_MIN)
		return malloc(bytes);
	/* whole huge pages: a block placed anywhere has up to 2 MiB at each
	 * end outside them, in 4 KiB pages whose faults cost more than the
	 * huge pages' (a million-task launch: 11,000 of them, 45 MB) */
	void *p = NULL;
	size_t whole = (bytes + HUGE_PAGE - 1) & ~(size_t)(HUGE_PAGE - 1);
	if (whole < bytes || posix_memalign(&p, HUGE_PAGE, whole))
		return NULL;
	return tp__huge_advise(p, whole);
}

void *tp__realloc_array(void *p, size_t n, size_t size)
{
	if (n == 0 || size == 0)
		n = size = 1;
	if (n > SIZE_MAX / size)
		return NULL;
	return tp__huge_advise(realloc(p, n * size), n * size);
}

const void *tp__span_of(const void *base, size_t n, size_t stride, int32_t i)
{
	const char *b = base;
	size_t lo = 0, hi = n;
	while (lo < hi) {   /* the first record starting after i */
		size_t mid = lo + (hi - lo) / 2;
		if (((const struct tp__span *)(b + mid * stride))->first <= i)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == 0)
		return NULL;
	const struct tp__span *s = (const struct tp__span *)(b + (lo - 1) * stride);
	return i - s->first < s->count ? s : NULL;
}

int tp__grow(void **p, size_t n, size_t *cap, size_t size)
{
	if (n < *cap)
		return 0;
	size_t nc = *cap ? *cap * 2 : 16;
	if (nc > SIZE_MAX / size)
		return -1;
	void *q = tp__realloc_array(*p, nc, size);
	if (!q)
		return -1;
	*p = q;
	*cap = nc;
	return 0;
}

int tp__cpus(void)
{
#ifdef CPU_COUNT
	cpu_set_t set;
	if (sched_getaffinity(0, sizeof set, &set) == 0 && CPU_COUNT(&set) > 0)
		return CPU_COUNT(&set);
#endif
	long n = sysconf(_SC_NPROCESSORS_ONLN);
	return n > 0 ? (int)n : 1;
}

double tp__now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

/* ---- files ----
 *
 * Every file the core reads goes through tp__open_regular: opened
 * non-blocking (a FIFO or a terminal never blocks the open or the reads),
 * close-on-exec and without becoming a controlling terminal; anything but a
 * regular file is refused before a byte is read; the size is bounded from
 * fstat before reading and again while reading (a file that grows under us
 * is cut off at the limit, not followed). */

static const char *file_type(mode_t m)
{
	return S_ISDIR(m) ? "a directory" : S_ISFIFO(m) ? "a FIFO"
	       : S_ISCHR(m) ? "a character device" : S_ISBLK(m) ? "a block device"
	       : S_ISSOCK(m) ? "a socket" : "not a plain file";
}

/* "64 MiB", "1 GiB", "4096 bytes". */
static void fmt_size(char *buf, size_t len, uint64_t n)
{
	if (n >= ((uint64_t)1 << 30) && n % ((uint64_t)1 << 30) == 0)
		snprintf(buf, len, "%llu GiB", (unsigned long long)(n >> 30));
	else if (n >= ((uint64_t)1 << 20) && n % ((uint64_t)1 << 20) == 0)
		snprintf(buf, len, "%llu MiB", (unsigned long long)(n >> 20));
	else
		snprintf(buf, len, "%llu bytes", (unsigned long long)n);
}

int tp__too_large(const char *path, uint64_t size, size_t max_bytes,
		  const char *kind, tp_error *err)
{
	char lim[32];
	fmt_size(lim, sizeof lim, max_bytes);
	if (size > max_bytes)
		return tp_error_set(err, TP_EINVAL,
				    "%s: %llu bytes, more than the %s limit for %s",
				    path, (unsigned long long)size, lim,
				    kind ? kind : "this kind of file");
	return tp_error_set(err, TP_EINVAL, "%s: more than the %s limit for %s",
			    path, lim, kind ? kind : "this kind of file");
}

int tp__open_regular(const char *path, size_t max_bytes, const char *kind,
		     int *fd_out, size_t *size_out, tp_error *err)
{
	*fd_out = -1;
	if (!path || !*path)
		return tp_error_set(err, TP_EINVAL, "%s: no file name given",
				    kind ? kind : "file");
	int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
	if (fd < 0) {
		int e = errno;
		return tp_error_set(err, e == ENOENT ? TP_ENOENT : TP_EIO,
				    "%s: cannot read: %s", path, strerror(e));
	}
	struct stat st;
	if (fstat(fd, &st) != 0) {
		int e = errno;
		close(fd);
		return tp_error_set(err, TP_EIO, "%s: cannot read: %s", path,
				    strerror(e));
	}
	if (!S_ISREG(st.st_mode)) {
		close(fd);
		return tp_error_set(err, TP_EIO, "%s: not a regular file (%s)", path,
				    file_type(st.st_mode));
	}
	if (st.st_size < 0 || (uint64_t)st.st_size > max_bytes) {
		close(fd);
		return tp__too_large(path, (uint64_t)st.st_size, max_bytes, kind, err);
	}
	*fd_out = fd;
	*size_out = (size_t)st.st_size;
	return TP_OK;
}

ssize_t tp__read_some(int fd, char *buf, size_t len)
{
	for (;;) {
		ssize_t n = read(fd, buf, len);
		if (n >= 0 || errno != EINTR)
			return n;
	}
}

int tp__nul_check(const char *buf, size_t len, const char *what,
		  tp_error *err)
{
	const char *nul = memchr(buf, '\0', len);
	if (!nul)
		return TP_OK;
	uint64_t line = 1;
	for (const char *p = buf; (p = memchr(p, '\n', (size_t)(nul - p))); p++)
		line++;
	return tp_error_set(err, TP_EINVAL,
			    "%s:%llu: NUL byte (not a text file)", what,
			    (unsigned long long)line);
}

int tp__read_whole(const char *path, size_t max_bytes, const char *kind,
		   char **buf_out, size_t *len_out, tp_error *err)
{
	*buf_out = NULL;
	*len_out = 0;
	int fd;
	size_t size;
	int rc = tp__open_regular(path, max_bytes, kind, &fd, &size, err);
	if (rc)
		return rc;
	/* Room for what fstat said plus one byte, to see a file that grew;
	 * more only up to the limit. */
	size_t cap = size + 2, len = 0;
	char *buf = malloc(cap);
	if (!buf) {
		close(fd);
		return tp_error_set(err, TP_ENOMEM, "%s: out of memory", path);
	}
	for (;;) {
		if (cap - len < 2) {
			if (len > max_bytes) {
				rc = tp__too_large(path, 0, max_bytes, kind, err);
				break;
			}
			size_t ncap = cap < max_bytes / 2 ? cap * 2 : max_bytes + 2;
			char *nb = realloc(buf, ncap);
			if (!nb) {
				rc = tp_error_set(err, TP_ENOMEM, "%s: out of memory", path);
				break;
			}
			buf = nb;
			cap = ncap;
		}
		ssize_t n = tp__read_some(fd, buf + len, cap - len - 1);
		if (n < 0) {
			rc = tp_error_set(err, TP_EIO, "%s: cannot read: %s", path,
					  strerror(errno));
			break;
		}
		if (n == 0)
			break;
		len += (size_t)n;
	}
	close(fd);
	if (!rc && len > max_bytes)
		rc = tp__too_large(path, 0, max_bytes, kind, err);
	if (rc) {
		free(buf);
		return rc;
	}
	buf[len] = '\0';
	*buf_out = buf;
	*len_out = len;
	return TP_OK;
}

int tp__read_file(const char *path, size_t max_bytes, const char *kind,
		  char **buf_out, size_t *len_out, tp_error *err)
{
	int rc = tp__read_whole(path, max_bytes, kind, buf_out, len_out, err);
	if (!rc && (rc = tp__nul_check(*buf_out, *len_out, path, err))) {
		free(*buf_out);
		*buf_out = NULL;
		*len_out = 0;
	}
	return rc;
}

int tp__text_copy(const char *text, size_t len, const char *what, char **out,
		  tp_error *err)
{
	*out = NULL;
	char *buf = malloc(len + 1);
	if (!buf)
		return tp_error_set(err, TP_ENOMEM, "%s: out of memory", what);
	int rc = tp__nul_check(text, len, what, err);
	if (rc) {
		free(buf);
		return rc;
	}
	memcpy(buf, text, len);
	buf[len] = '\0';
	*out = buf;
	return 0;
}

void tp__warn(struct tp__warnings *w, const char *fmt, ...)
{
	if (!w)
		return;
	if (w->n >= TP__MAX_WARNINGS) {
		w->dropped++;
		return;
	}
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(w->line[w->n], sizeof w->line[0], fmt, ap);
	va_end(ap);
	one_line(w->line[w->n]);
	w->n++;
}

int tp__line_error(tp_error *err, const char *what, int line, int code,
		   const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int rc = tp__line_verror(err, what, line, code, fmt, ap);
	va_end(ap);
	return rc;
}

int tp__line_verror(tp_error *err, const char *what, int line, int code,
		    const char *fmt, va_list ap)
{
	char msg[TP_ERROR_MSG_MAX];
	vsnprintf(msg, sizeof msg, fmt, ap);
	if (line > 0)
		return tp_error_set(err, code, "%s:%d: %s", what, line, msg);
	return tp_error_set(err, code, "%s: %s", what, msg);
}
