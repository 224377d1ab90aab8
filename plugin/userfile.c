/* topoplace SPANK plugin — the user's files, read with the user's
 * privileges and size-bounded, and the private directory that holds the
 * hostfile (mode 0700, the user's).  Where a hook runs as root, the
 * effective ids are switched to the user's around each access. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tpk.h"

/* ------------------------------------------------------ user privileges */

/* Saved identity while switched to the user (one level, not nested). */
static gid_t saved_egid;
static gid_t *saved_groups;
static int saved_ngroups;

int tpk_become_user(const struct tpk_cred *cred, char *err, size_t errlen)
{
	if (!cred->drop)
		return 0;
	saved_egid = getegid();
	saved_ngroups = getgroups(0, NULL);
	free(saved_groups);
	saved_groups = NULL;
	if (saved_ngroups > 0) {
		saved_groups = malloc((size_t)saved_ngroups * sizeof(gid_t));
		if (!saved_groups ||
		    (saved_ngroups = getgroups(saved_ngroups, saved_groups)) < 0) {
			snprintf(err, errlen, "getgroups: %s", strerror(errno));
			return -1;
		}
	}
	if (setgroups((size_t)(cred->ngroups > 0 ? cred->ngroups : 0),
		      cred->ngroups > 0 ? cred->groups : NULL) < 0 ||
	    setegid(cred->gid) < 0 || seteuid(cred->uid) < 0) {
		int e = errno;
		tpk_become_root(cred);
		snprintf(err, errlen, "cannot take the user's identity (uid %u): %s",
			 (unsigned)cred->uid, strerror(e));
		return -1;
	}
	return 0;
}

void tpk_become_root(const struct tpk_cred *cred)
{
	if (!cred->drop)
		return;
	/* Order matters: the effective uid first, then groups need root. */
	if (seteuid(0) < 0)
		return;
	if (setegid(saved_egid) < 0) {
		/* nothing sensible left to do; keep going as root */
	}
	if (setgroups((size_t)(saved_ngroups > 0 ? saved_ngroups : 0),
		      saved_ngroups > 0 ? saved_groups : NULL) < 0) {
		/* same */
	}
	free(saved_groups);
	saved_groups = NULL;
	saved_ngroups = 0;
}

static int open_user_file(const char *path, const char *basedir, int *fd_out,
			  char *err, size_t errlen)
{
	int dfd = AT_FDCWD, fd;
	if (path[0] != '/' && basedir && basedir[0]) {
		dfd = open(basedir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (dfd < 0) {
			snprintf(err, errlen, "%s: cannot open the directory %s: %s",
				 path, basedir, strerror(errno));
			return -1;
		}
	}
	/* O_NONBLOCK: a FIFO must not hang the step; checked below. */
	fd = openat(dfd, path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	int e = errno;
	if (dfd != AT_FDCWD)
		close(dfd);
	if (fd < 0) {
		snprintf(err, errlen, "%s: %s", path, strerror(e));
		return -1;
	}
	*fd_out = fd;
	return 0;
}

int tpk_read_user_file(const char *path, const struct tpk_user_read *ur,
		       char **buf, size_t *len, char *err, size_t errlen)
{
	const struct tpk_cred *cred = ur->cred;
	const char *basedir = ur->basedir;
	size_t max = ur->max;
	int fd = -1, rc = -1;
	char *data = NULL;
	size_t got = 0;
	struct stat st;

	*buf = NULL;
	*len = 0;
	if (!path || !path[0]) {
		snprintf(err, errlen, "empty file name");
		return -1;
	}
	if (tpk_become_user(cred, err, errlen) < 0)
		return -1;
	if (open_user_file(path, basedir, &fd, err, errlen) < 0)
		goto out;
	if (fstat(fd, &st) < 0) {
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		goto out;
	}
	if (!S_ISREG(st.st_mode)) {
		snprintf(err, errlen, "%s: not a regular file", path);
		goto out;
	}
	if ((uint64_t)st.st_size > max) {
		snprintf(err, errlen, "%s: %lld bytes, more than the site limit "
			 "of %zu (max_file_bytes)", path, (long long)st.st_size,
			 max);
		goto out;
	}
	/* Read at most max bytes plus one, whatever stat said (files grow). */
	size_t cap = (size_t)st.st_size + 1;
	if (cap > max + 1)
		cap = max + 1;
	data = malloc(cap + 1);
	if (!data) {
		snprintf(err, errlen, "%s: out of memory", path);
		goto out;
	}
	for (;;) {
		if (got == cap) {
			if (cap > max) {
				snprintf(err, errlen, "%s: more than the site limit "
					 "of %zu bytes (max_file_bytes)", path, max);
				goto out;
			}
			size_t ncap = cap * 2 > max + 1 ? max + 1 : cap * 2;
			char *nd = realloc(data, ncap + 1);
			if (!nd) {
				snprintf(err, errlen, "%s: out of memory", path);
				goto out;
			}
			data = nd;
			cap = ncap;
		}
		ssize_t n = read(fd, data + got, cap - got);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			snprintf(err, errlen, "%s: %s", path, strerror(errno));
			goto out;
		}
		if (n == 0)
			break;
		got += (size_t)n;
	}
	if (got > max) {
		snprintf(err, errlen, "%s: more than the site limit of %zu bytes "
			 "(max_file_bytes)", path, max);
		goto out;
	}
	data[got] = '\0';
	*buf = data;
	*len = got;
	data = NULL;
	rc = 0;
out:
	if (fd >= 0)
		close(fd);
	free(data);
	tpk_become_root(cred);
	return rc;
}

/* ------------------------------------------------- private directories */

static int make_dir_in(const char *parent, const char *tag,
		       const struct tpk_cred *cred, char *out, size_t outlen,
		       char *err, size_t errlen)
{
	char tmpl[TPK_PATH_MAX];
	int n = snprintf(tmpl, sizeof tmpl, "%s/topoplace.%s.XXXXXX", parent, tag);
	if (n < 0 || (size_t)n >= sizeof tmpl || (size_t)n >= outlen) {
		snprintf(err, errlen, "temporary directory name too long");
		return -1;
	}
	if (tpk_become_user(cred, err, errlen) < 0)
		return -1;
	char *d = mkdtemp(tmpl);   /* mode 0700, owned by the user */
	int e = errno;
	tpk_become_root(cred);
	if (!d) {
		snprintf(err, errlen, "cannot create a private directory in %s: %s",
			 parent, strerror(e));
		return -1;
	}
	snprintf(out, outlen, "%s", tmpl);
	return 0;
}

int tpk_make_private_dir(const char *parent, const char *tag,
			 const struct tpk_cred *cred, char *out, size_t outlen,
			 char *err, size_t errlen)
{
	/* A TMPDIR the user cannot write to: /tmp, as slurmstepd does. */
	if (make_dir_in(parent, tag, cred, out, outlen, err, errlen) == 0)
		return 0;
	if (!strcmp(parent, "/tmp"))
		return -1;
	char first[TPK_LINE_MAX];
	snprintf(first, sizeof first, "%s", err);
	if (make_dir_in("/tmp", tag, cred, out, outlen, err, errlen) == 0)
		return 0;
	snprintf(err, errlen, "%s; and in /tmp neither", first);
	return -1;
}

void tpk_remove_private_dir(const char *dir, const struct tpk_cred *cred)
{
	char err[256];
	if (!dir || !dir[0])
		return;
	if (tpk_become_user(cred, err, sizeof err) < 0)
		return;
	int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (dfd >= 0) {
		/* The directory is ours (mkdtemp): the hostfile, the core's
		 * temporary of the atomic write, topoplace bind's marks.  unlinkat() removes links, never
		 * what they point to, and fails on directories. */
		int dfd2 = dup(dfd);
		DIR *dp = dfd2 >= 0 ? fdopendir(dfd2) : NULL;
		if (dp) {
			struct dirent *de;
			while ((de = readdir(dp)))
				if (strcmp(de->d_name, ".") && strcmp(de->d_name, ".."))
					unlinkat(dfd, de->d_name, 0);
			closedir(dp);
		} else if (dfd2 >= 0) {
			close(dfd2);
		}
		close(dfd);
		rmdir(dir);
	}
	tpk_become_root(cred);
}

/* ------------------------------------------------------- written files */

static int write_all(int fd, const char *data, size_t len)
{
	while (len > 0) {
		ssize_t n = write(fd, data, len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return -1;
		data += n;
		len -= (size_t)n;
	}
	return 0;
}

int tpk_write_user_file(const char *path, const char *data, size_t len,
			const struct tpk_cred *cred, char *err, size_t errlen)
{
	char tmp[TPK_PATH_MAX];
	if (!path || path[0] != '/' ||
	    snprintf(tmp, sizeof tmp, "%s.XXXXXX", path) >= (int)sizeof tmp) {
		snprintf(err, errlen, "%s: not an absolute path of at most %d bytes",
			 path ? path : "(none)", TPK_PATH_MAX - 8);
		return -1;
	}
	if (tpk_become_user(cred, err, errlen) < 0)
		return -1;
	/* mkstemp: O_CREAT | O_EXCL, mode 0600, never through a link */
	int fd = mkstemp(tmp), rc = -1;
	if (fd < 0) {
		snprintf(err, errlen, "cannot write in %.*s: %s",
			 (int)(strrchr(path, '/') - path + 1), path, strerror(errno));
		goto out;
	}
	int w = write_all(fd, data, len), e = errno;
	if (close(fd) < 0 && w == 0) {
		w = -1;
		e = errno;
	}
	if (w < 0) {
		snprintf(err, errlen, "%s: %s", tmp, strerror(e));
		unlink(tmp);
		goto out;
	}
	/* rename replaces a link at path, it does not follow it */
	if (rename(tmp, path) < 0) {
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		unlink(tmp);
		goto out;
	}
	rc = 0;
out:
	tpk_become_root(cred);
	return rc;
}
