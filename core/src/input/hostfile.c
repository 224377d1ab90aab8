/* topoplace — hostfiles: writing the node of every rank (atomically, or in
 * place for devices and FIFOs) and reading one back into a mapping. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "internal.h"

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
	 * stdio buffer: 48 ms against 14 ms).  Names are written straight
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
 * second thread while the first half is written (a million ranks: 30 ms
 * on one). */
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

int tp_hostfile_read(const char *path, tp_alloc *a, bool set_slots,
		     int32_t **map_out, int32_t *ntasks, tp_error *err)
{
	char *text;
	size_t len;
	int rc = tp__read_file(path, TP__MAX_HOSTFILE_BYTES, "a hostfile", &text,
			       &len, err);
	if (rc)
		return rc;
	/* allocation index of each machine node, -1 when not allocated */
	int32_t nm = a->m->nnodes;
	int32_t *pos = tp__malloc_array((size_t)nm, sizeof(int32_t));
	int *count = tp__calloc((size_t)a->nnodes, sizeof(int));
	int32_t cap = 1024, n = 0;
	int32_t *map = tp__malloc_array((size_t)cap, sizeof(int32_t));
	if (!pos || !count || !map) {
		rc = tp_error_set(err, TP_ENOMEM, "%s: out of memory", path);
		goto out;
	}
	for (int32_t i = 0; i < nm; i++)
		pos[i] = -1;
	for (int32_t i = 0; i < a->nnodes; i++)
		pos[a->node[i]] = i;
	long lineno = 0;
	for (char *line = text, *next; line; line = next) {
		char *nl = strchr(line, '\n');
		next = nl ? nl + 1 : NULL;
		if (nl)
			*nl = '\0';
		lineno++;
		char *hash = strchr(line, '#');
		if (hash)
			*hash = '\0';
		char *save = NULL;
		for (char *tok = strtok_r(line, ", \t\r\v\f", &save); tok;
		     tok = strtok_r(NULL, ", \t\r\v\f", &save)) {
			int32_t node = tp_machine_find_node(a->m, tok);
			if (node < 0 || pos[node] < 0) {
				rc = tp_error_set(err, TP_EINVAL,
						  "%s:%ld: node '%.*s' is not in the allocation",
						  path, lineno, TP__HOSTNAME_MAX, tok);
				goto out;
			}
			if (n == INT32_MAX) {
				rc = tp_error_set(err, TP_EINVAL, "%s: too many tasks", path);
				goto out;
			}
			if (n == cap) {
				int32_t nc = cap > INT32_MAX / 2 ? INT32_MAX : cap * 2;
				int32_t *nmap = realloc(map, sizeof(int32_t) * (size_t)nc);
				if (!nmap) {
					rc = tp_error_set(err, TP_ENOMEM, "%s: out of memory", path);
					goto out;
				}
				map = nmap;
				cap = nc;
			}
			int32_t i = pos[node];
			count[i]++;
			if (!set_slots && count[i] > a->slots[i]) {
				rc = tp_error_set(err, TP_EINVAL,
						  "%s:%ld: node '%s' gets more than its %d slots",
						  path, lineno, tok, a->slots[i]);
				goto out;
			}
			map[n++] = i;
		}
	}
	if (n == 0) {
		rc = tp_error_set(err, TP_EINVAL, "%s: no tasks (empty hostfile)", path);
		goto out;
	}
	if (set_slots) {
		a->total_slots = 0;
		for (int32_t i = 0; i < a->nnodes; i++) {
			a->slots[i] = count[i];
			a->total_slots += count[i];
		}
	}
	*map_out = map;
	*ntasks = n;
	map = NULL;
out:
	free(text);
	free(pos);
	free(count);
	free(map);
	return rc;
}
