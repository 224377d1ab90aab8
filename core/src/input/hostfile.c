/* topoplace — hostfiles: writing the node of every rank (atomically, or in
 * place for devices and FIFOs) and reading one back into a mapping. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <topoplace/alloc.h>
#include <topoplace/hostfile.h>
#include "net/machine_internal.h"
#include "util/hostlist.h"
#include "util/util_internal.h"
#include "input/alloc_internal.h"

/* Rank t's line (its node's name and a newline) at b, its length: at most
 * TP__HOSTNAME_MAX. */
static size_t put_line(const tp_alloc *a, const int32_t *map, int32_t t, char *b)
{
	size_t n = tp__machine_name_put(a->m, a->node[map[t]], b);
	b[n] = '\n';
	return n + 1;
}

/* Lines of ranks [t0, t1) written to f in 32 KiB pieces. */
static int write_lines(FILE *f, const tp_alloc *a, const int32_t *map,
		       int32_t t0, int32_t t1)
{
	/* a million ranks: lines gathered in a large buffer and written whole,
	 * not fputs per line (a stream lock per call and a write(2) per 4 KiB
	 * stdio buffer).  Names are written straight
	 * into it (a numbered run's need not exist as text); a name is shorter
	 * than TP__HOSTNAME_MAX, so a line always fits. */
	char buf[1 << 15];
	size_t at = 0;
	for (int32_t t = t0; t < t1; t++) {
		if (at + TP__HOSTNAME_MAX + 1 > sizeof buf) {
			if (fwrite(buf, 1, at, f) != at)
				return TP_EIO;
			at = 0;
		}
		at += put_line(a, map, t, buf + at);
	}
	return at && fwrite(buf, 1, at, f) != at ? TP_EIO : 0;
}

/* The lines of ranks [t0, t1) gathered in memory, on a thread of their
 * own. */
struct lines {
	const tp_alloc *a;
	const int32_t *map;
	int32_t t0, t1;
	char *buf;
	size_t len;
	bool ok;
};

static void *gather_lines(void *arg)
{
	struct lines *l = arg;
	size_t cap = (size_t)(l->t1 - l->t0) * 16 + TP__HOSTNAME_MAX + 1;
	l->buf = tp__malloc_array(cap, 1);
	for (int32_t t = l->t0; l->buf && t < l->t1; t++) {
		if (l->len + TP__HOSTNAME_MAX + 1 > cap) {
			char *nb = tp__realloc_array(l->buf, cap * 2, 1);
			if (!nb)
				return NULL;
			l->buf = nb;
			cap *= 2;
		}
		l->len += put_line(l->a, l->map, t, l->buf + l->len);
	}
	l->ok = l->buf != NULL;
	return NULL;
}

/* From this many ranks the second half of the lines is formatted on a
 * second thread while the first half is written: formatting is most of
 * the cost of a large hostfile. */
#define HOSTFILE_THREAD_TASKS 262144

int tp_hostfile_write(FILE *f, const tp_alloc *a, const int32_t *map,
		      int32_t ntasks)
{
	struct lines l = { a, map, ntasks / 2, ntasks, NULL, 0, false };
	pthread_t th;
	bool two = ntasks >= HOSTFILE_THREAD_TASKS && tp__cpus() > 1 &&
		   pthread_create(&th, NULL, gather_lines, &l) == 0;
	int rc = write_lines(f, a, map, 0, two ? l.t0 : ntasks);
	if (!two)
		return rc;
	pthread_join(th, NULL);
	if (!rc)   /* the second half as gathered, or written here after all */
		rc = l.ok ? (fwrite(l.buf, 1, l.len, f) != l.len ? TP_EIO : 0)
			  : write_lines(f, a, map, l.t0, l.t1);
	free(l.buf);
	return rc;
}

int tp_hostfile_write_path(const char *path, const tp_alloc *a,
			   const int32_t *map, int32_t ntasks, tp_error *err)
{
	/* A device, FIFO or socket (/dev/stdout, /dev/null, a pipe) is written in
	 * place: renaming over it would replace the device node itself. */
	struct stat st;
	if (stat(path, &st) == 0 && !S_ISREG(st.st_mode)) {
		FILE *f = fopen(path, "w");
		int rc = f ? tp_hostfile_write(f, a, map, ntasks) : TP_EIO;
		int e = errno;
		if (f && fclose(f) != 0 && !rc)
			rc = TP_EIO, e = errno;
		if (rc)
			return tp_error_set(err, TP_EIO, "%s: cannot write: %s", path,
					    strerror(e));
		return 0;
	}
	/* A temporary file beside the target, created with mode 0666 so that the
	 * umask applies as for any new file, then fsync'ed and renamed: readers
	 * see either the old file or the complete new one, never a partial one. */
	size_t len = strlen(path) + 48;
	char *tmp = malloc(len);
	if (!tmp)
		return tp_error_set(err, TP_ENOMEM, "%s: out of memory", path);
	int fd = -1, e = 0;
	for (unsigned k = 0; k < 100 && fd < 0; k++) {
		snprintf(tmp, len, "%s.tmp.%ld.%u", path, (long)getpid(), k);
		fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
		e = errno;
		if (fd < 0 && e != EEXIST)
			break;
	}
	if (fd < 0) {
		free(tmp);
		return tp_error_set(err, TP_EIO, "%s: cannot create: %s", path, strerror(e));
	}
	FILE *f = fdopen(fd, "w");
	int rc = f ? tp_hostfile_write(f, a, map, ntasks) : TP_EIO;
	e = errno;
	if (f && fflush(f) != 0)
		rc = TP_EIO, e = errno;
	if (!rc && fsync(fd) != 0)
		rc = TP_EIO, e = errno;
	if (f ? fclose(f) != 0 : close(fd) != 0) {
		if (!rc)
			e = errno;
		rc = TP_EIO;
	}
	if (!rc && rename(tmp, path) != 0)
		rc = TP_EIO, e = errno;
	if (rc) {
		unlink(tmp);
		free(tmp);
		return tp_error_set(err, TP_EIO, "%s: cannot write: %s", path, strerror(e));
	}
	free(tmp);
	return 0;
}

/* A hostfile read back: the allocation index of every rank so far. */
struct readback {
	tp_alloc *a;
	bool set_slots;
	const char *path;
	tp_error *err;
	int32_t *pos;        /* allocation index of each machine node, -1: none */
	int *count;          /* ranks on each allocated node */
	int32_t *map;
	int32_t n, cap;
};

/* One rank on the node named tok (of line number). */
static int add_rank(struct readback *r, const char *tok, long number)
{
	int32_t node = tp_machine_find_node(r->a->m, tok);
	if (node < 0 || r->pos[node] < 0)
		return tp_error_set(r->err, TP_EINVAL,
				    "%s:%ld: node '%.*s' is not in the allocation",
				    r->path, number, TP__HOSTNAME_MAX, tok);
	if (r->n == INT32_MAX)
		return tp_error_set(r->err, TP_EINVAL, "%s: too many tasks", r->path);
	if (r->n == r->cap) {
		int32_t nc = r->cap > INT32_MAX / 2 ? INT32_MAX : r->cap * 2;
		int32_t *nmap = realloc(r->map, sizeof(int32_t) * (size_t)nc);
		if (!nmap)
			return tp_error_set(r->err, TP_ENOMEM, "%s: out of memory", r->path);
		r->map = nmap;
		r->cap = nc;
	}
	int32_t i = r->pos[node];
	r->count[i]++;
	if (!r->set_slots && r->count[i] > r->a->slots[i])
		return tp_error_set(r->err, TP_EINVAL,
				    "%s:%ld: node '%s' gets more than its %d slots",
				    r->path, number, tok, r->a->slots[i]);
	r->map[r->n++] = i;
	return 0;
}

/* One line: names separated by blanks or commas, a rank each. */
static int hostfile_line(void *arg, char *line, long number)
{
	char *save = NULL;
	int rc = 0;
	for (char *tok = strtok_r(line, ", \t\r\v\f", &save); tok && !rc;
	     tok = strtok_r(NULL, ", \t\r\v\f", &save))
		rc = add_rank(arg, tok, number);
	return rc;
}

/* A hostfile: the comment from '#' on; a '\' is a character. */
static const struct tp__line_format hostfile_format = { .comment = '#' };

int tp_hostfile_read(const char *path, tp_alloc *a, bool set_slots,
		     int32_t **map_out, int32_t *ntasks, tp_error *err)
{
	char *text;
	size_t len;
	int rc = tp__read_file(path, TP__MAX_HOSTFILE_BYTES, "a hostfile", &text,
			       &len, err);
	if (rc)
		return rc;
	int32_t nm = a->m->nnodes;
	struct readback r = {
		.a = a, .set_slots = set_slots, .path = path, .err = err,
		.pos = tp__malloc_array((size_t)nm, sizeof(int32_t)),
		.count = tp__calloc((size_t)a->nnodes, sizeof(int)),
		.map = tp__malloc_array(1024, sizeof(int32_t)),
		.cap = 1024,
	};
	if (!r.pos || !r.count || !r.map) {
		rc = tp_error_set(err, TP_ENOMEM, "%s: out of memory", path);
		goto out;
	}
	for (int32_t i = 0; i < nm; i++)
		r.pos[i] = -1;
	for (int32_t i = 0; i < a->nnodes; i++)
		r.pos[a->node[i]] = i;
	rc = tp__each_line(text, &hostfile_format, path, err, hostfile_line, &r);
	if (rc)
		goto out;
	if (r.n == 0) {
		rc = tp_error_set(err, TP_EINVAL, "%s: no tasks (empty hostfile)", path);
		goto out;
	}
	if (set_slots) {
		a->total_slots = 0;
		for (int32_t i = 0; i < a->nnodes; i++) {
			a->slots[i] = r.count[i];
			a->total_slots += r.count[i];
		}
	}
	*map_out = r.map;
	*ntasks = r.n;
	r.map = NULL;
out:
	free(text);
	free(r.pos);
	free(r.count);
	free(r.map);
	return rc;
}
