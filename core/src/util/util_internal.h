/* topoplace — the helpers every part uses (util.c, lines.c, parallel.c):
 * allocation, files read with bounds, lines of text, messages naming a
 * file and line, warnings, the clock and threads. */
#ifndef TOPOPLACE_UTIL_UTIL_INTERNAL_H
#define TOPOPLACE_UTIL_UTIL_INTERNAL_H

#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <topoplace/error.h>

/* Node indices first..first+count-1. */
struct tp__span {
	int32_t first, count;
};
/* Of n records stride bytes apart, each beginning with a tp__span, in
 * increasing first and not overlapping: the one that holds node i, or NULL
 * (a binary search). */
const void *tp__span_of(const void *base, size_t n, size_t stride, int32_t i);

/* Overflow-checked allocation helpers (NULL on overflow or failure). */
void *tp__calloc(size_t n, size_t size);
void *tp__malloc_array(size_t n, size_t size);
/* tp__calloc on an align-byte boundary (a power of two, a multiple of
 * sizeof(void *)): records that must not straddle cache lines.  free()
 * releases it. */
void *tp__calloc_aligned(size_t n, size_t size, size_t align);
/* realloc with the same overflow check and huge-page advice (util.c) */
void *tp__realloc_array(void *p, size_t n, size_t size);
void *tp__huge_advise(void *p, size_t bytes);

/* ---- input: files (util.c) ----
 *
 * Every file the core reads is opened with tp__open_regular(): non-blocking
 * (a FIFO never hangs the caller), close-on-exec, no controlling terminal;
 * anything but a regular file is refused ("not a regular file (a FIFO)"),
 * and the size is bounded before and while reading.  Text files with a NUL
 * byte are refused with the line of the NUL.  The limit of each kind: */
#define TP__MAX_CONF_BYTES      ((size_t)64 << 20)   /* topoplace.conf */
#define TP__MAX_TOPOLOGY_BYTES  ((size_t)64 << 20)   /* topology.conf */
#define TP__MAX_COORDS_BYTES    ((size_t)256 << 20)  /* CoordFile= */
#define TP__MAX_GRAPH_BYTES     ((size_t)1 << 30)    /* JSON task graph (streamed) */
#define TP__MAX_MATRIX_BYTES    ((size_t)256 << 20)  /* GPU matrix, JSON or CSV */
#define TP__MAX_LINKS_BYTES     ((size_t)1 << 20)    /* gres.conf Links= / nvidia-smi topo -m */
#define TP__MAX_XML_BYTES       ((size_t)64 << 20)   /* hwloc XML of one node */
#define TP__MAX_HOSTFILE_BYTES  ((size_t)256 << 20)  /* hostfile read back */
#define TP__MAX_HOSTLIST_BYTES  ((size_t)64 << 20)   /* hostlist file (--nodes @FILE) */

/* Open path for reading as described above; *size_out is its size from
 * fstat.  kind names the file kind in the size message ("topology.conf"). */
int tp__open_regular(const char *path, size_t max_bytes, const char *kind,
		     int *fd_out, size_t *size_out, tp_error *err);
/* read(2) restarted on EINTR. */
ssize_t tp__read_some(int fd, char *buf, size_t len);
/* "PATH: N bytes, more than the 64 MiB limit for KIND" (size 0: unknown). */
int tp__too_large(const char *path, uint64_t size, size_t max_bytes,
		  const char *kind, tp_error *err);
/* Read a whole regular file of at most max_bytes into a malloc'ed,
 * NUL-terminated *buf_out (NUL bytes inside left for the caller to judge);
 * errors name the file. */
int tp__read_whole(const char *path, size_t max_bytes, const char *kind,
		   char **buf_out, size_t *len_out, tp_error *err);
/* The same for a text file: no NUL inside (the line of one is named). */
int tp__read_file(const char *path, size_t max_bytes, const char *kind,
		  char **buf_out, size_t *len_out, tp_error *err);
/* TP_EINVAL "what:LINE: NUL byte (not a text file)" when buf[0..len) holds
 * a NUL byte. */
int tp__nul_check(const char *buf, size_t len, const char *what,
		  tp_error *err);

/* A NUL-terminated malloc'ed copy of text[0..len-1]; errors (a NUL byte
 * inside, out of memory) name what. */
int tp__text_copy(const char *text, size_t len, const char *what, char **out,
		  tp_error *err);

/* ---- line-based text (lines.c) ----
 *
 * The one loop over the lines of a text: a line ends at '\n' or at the end
 * of the text ("a\n" is one line, "" none); each reader states its format. */
struct tp__line_format {
	char comment;        /* cuts the line from it on; '\0': no comments */
	/* A comment character between double quotes starts no comment
	 * (topoplace.conf's CoordFile="a#b").  The quotes are counted on each
	 * physical line, without escapes, and stay in the line; one left
	 * open runs to the line's end, for the reader to refuse. */
	bool quotes;
	/* Slurm's parser (slurm.conf, topology.conf): "\#" is a '#' that
	 * starts no comment, blanks and '\r' at a line's end are dropped,
	 * and a line ending in '\' is joined with the next, a blank between
	 * them, numbered as its first.  Off: a '\' is a character and the
	 * line is handed as it is. */
	bool slurm;
	bool blank_after;    /* with slurm: every line handed ends in a blank */
	bool skip_blank;     /* lines of blanks and '\r' only are not handed */
};
/* fn's return: non-zero stops the loop and is returned; TP__LINES_STOP
 * stops it without an error (the caller maps it to TP_OK). */
#define TP__LINES_STOP 1
typedef int (*tp__line_fn)(void *arg, char *line, long number);
/* Calls fn with every line of text (written in place: comments cut, lines
 * terminated) and its number from 1.  TP_ENOMEM "WHAT: out of memory"
 * when a joined line cannot grow. */
int tp__each_line(char *text, const struct tp__line_format *fmt,
		  const char *what, tp_error *err, tp__line_fn fn, void *arg);
/* The line at *at (NULL at the end), its length without the '\n' in
 * *len; *at moves to the next.  For a look at lines that leaves them as
 * they are. */
const char *tp__line_next(const char **at, size_t *len);

/* ---- Slurm's topology.conf-style files (util.c; slurm/topology_conf.c) ---- */
/* Sets err to "WHAT:LINE: message" ("WHAT: message" when line is 0) and
 * returns code. */
int tp__line_error(tp_error *err, const char *what, int line, int code,
		   const char *fmt, ...) __attribute__((format(printf, 5, 6)));
int tp__line_verror(tp_error *err, const char *what, int line, int code,
		    const char *fmt, va_list ap) __attribute__((format(printf, 5, 0)));
/* tp__each_line with topology.conf's format (the comment from '#' on,
 * Slurm's continuation and escapes) over a copy of text, the line number
 * as an int.  TP_ENOMEM "WHAT: out of memory" when no copy can be made. */
int tp__each_conf_line(const char *text, const char *what, tp_error *err,
		       int (*fn)(void *arg, char *line, int number), void *arg);

/* ---- warnings (util.c) ----
 *
 * Lines that do not stop a loader: what Slurm accepts with a warning in a
 * topology.conf.  Each names its file and line; the first TP__MAX_WARNINGS
 * are kept, the rest counted. */
#define TP__MAX_WARNINGS 8
struct tp__warnings {
	int n, dropped;
	char line[TP__MAX_WARNINGS][TP_ERROR_MSG_MAX];
};
/* Adds a line (w NULL: dropped silently). */
void tp__warn(struct tp__warnings *w, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* Monotonic clock in milliseconds. */
double tp__now_ms(void);
/* Grow *p (n elements of size bytes used, *cap allocated) to hold one more:
 * the capacity doubles from 16.  0, or -1 when memory runs out. */
int tp__grow(void **p, size_t n, size_t *cap, size_t size);
/* CPUs this process may run on: its affinity mask (a Slurm step is bound
 * to the job's CPUs, fewer than the node's), else the online count. */
int tp__cpus(void);
/* The most threads one placement starts (the search's and the
 * refinement's; a site may set fewer: MaxThreads=). */
#define TP__MAX_THREADS 256
/* fn(arg, i) for every i in 0..n-1, on up to `threads` threads (this one
 * among them), each taking the next i as it is free; returns when all are
 * done and every thread it started has ended.  fn must not depend on which
 * thread runs which i. */
void tp__parallel_for(int32_t n, int threads, void (*fn)(void *arg, int32_t i),
		      void *arg);

/* CPUs lent to whoever can use them (a refinement's team): the threads
 * that end give theirs, and a team takes them one at a time.  Once
 * closed, nothing more is given or taken. */
typedef struct tp__lender {
	atomic_int free;     /* below 0: closed */
} tp__lender;
void tp__lender_init(tp__lender *l);
/* One CPU taken: false when none is free (or l is NULL). */
bool tp__lender_take(tp__lender *l);
void tp__lender_give(tp__lender *l, int n);
/* The CPUs free now forgotten (a stage that counts them itself begins):
 * only those given from now on are lent. */
void tp__lender_forget(tp__lender *l);
void tp__lender_close(tp__lender *l);

#endif
