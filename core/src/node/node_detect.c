/* topoplace — the model of the node this runs on, found on the node.
 *
 * hwloc's live topology gives the sockets, cores and the PCIe tree; the
 * vendor library (or tool) adds the NVLink or xGMI counts
 * (node_vendor.c).  Discovering the PCIe tree reads much of /sys, so the
 * result is cached as one hwloc XML with the fabric as distances
 * (node_export.c), the file an admin may also pin with NodeTopology=.
 *
 * The cache file is node-HOST-KEY.xml, KEY a fingerprint of what the
 * model depends on: the boot (boot_id), the PCI devices present, the
 * online CPUs and NUMA nodes, hwloc's own input overrides, the versions of
 * topoplace and hwloc, and the cache's format.  A reboot or a hardware
 * change picks a new name; the host's older files are removed when the
 * new one is written (the host in the name keeps a directory shared by
 * mistake from mixing nodes up).  The model is the whole node whatever
 * cgroup cpuset the detection runs in (node.c topo_init): the first step
 * of a node under ConstrainCores=yes stores all of it.
 *
 * A cache is read only when it is trusted: a regular file owned by root,
 * writable by nobody else, in a directory owned by root that nobody else
 * may write, opened without following a link.  Only root writes it.
 */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <hwloc.h>

#include <topoplace/version.h>
#include "util/util_internal.h"
#include "node/node_internal.h"

#define KEY_FILE_MAX 4096            /* boot_id, cpu lists */
#define PCI_DIR "/sys/bus/pci/devices"
#define CACHE_PREFIX "node-"
#define CACHE_SUFFIX ".xml"
/* What a cache file holds, part of its key: a file of an older format
 * (before 2: only the CPUs of the cpuset it was detected in, and vendor
 * answers that had failed) gets another name, is never read, and is
 * removed when this format's file is written. */
#define CACHE_FORMAT "2 whole node, answered parts recorded"

/* ---------------------------------------------------------- fingerprint */

static uint64_t fnv(uint64_t h, const void *p, size_t n)
{
	const unsigned char *s = p;
	for (size_t i = 0; i < n; i++)
		h = (h ^ s[i]) * 0x100000001b3ull;
	return h;
}

static uint64_t fnv_str(uint64_t h, const char *s)
{
	h = fnv(h, s ? s : "", s ? strlen(s) : 0);
	return fnv(h, "\n", 1);
}

/* A small file's text, or "" where it cannot be read. */
static uint64_t fnv_file(uint64_t h, const char *path)
{
	char buf[KEY_FILE_MAX];
	size_t n = 0;
	FILE *f = fopen(path, "re");
	if (f) {
		n = fread(buf, 1, sizeof buf, f);
		fclose(f);
	}
	h = fnv(h, buf, n);
	return fnv(h, "\n", 1);
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The PCI devices present, by address, in sorted order (readdir's order
 * is the file system's). */
static uint64_t fnv_pci(uint64_t h, const char *root)
{
	char dir[4096];
	snprintf(dir, sizeof dir, "%s%s", root ? root : "", PCI_DIR);
	DIR *d = opendir(dir);
	if (!d)
		return fnv_str(h, "no pci");
	char **names = NULL;
	size_t n = 0, cap = 0;
	struct dirent *e;
	while ((e = readdir(d))) {
		if (e->d_name[0] == '.')
			continue;
		if (n == cap) {
			size_t nc = cap ? 2 * cap : 256;
			char **nn = realloc(names, nc * sizeof *nn);
			if (!nn)
				break;
			names = nn;
			cap = nc;
		}
		if (!(names[n] = strdup(e->d_name)))
			break;
		n++;
	}
	closedir(d);
	if (n)
		qsort(names, n, sizeof *names, cmp_str);
	for (size_t i = 0; i < n; i++) {
		h = fnv_str(h, names[i]);
		free(names[i]);
	}
	free(names);
	return h;
}

/* hwloc reads these from the process's environment: a different one is
 * a different machine to it. */
static const char *const hwloc_env[] = {
	"HWLOC_XMLFILE", "HWLOC_FSROOT", "HWLOC_SYNTHETIC", "HWLOC_COMPONENTS",
	"HWLOC_THISSYSTEM", NULL
};

static uint64_t fingerprint(void)
{
	uint64_t h = 0xcbf29ce484222325ull;
	h = fnv_str(h, CACHE_FORMAT);
	h = fnv_str(h, TOPOPLACE_VERSION);
	char api[32];
	snprintf(api, sizeof api, "%x", hwloc_get_api_version());
	h = fnv_str(h, api);
	for (int i = 0; hwloc_env[i]; i++)
		h = fnv_str(h, getenv(hwloc_env[i]));
	const char *root = getenv("HWLOC_FSROOT");
	h = fnv_file(h, "/proc/sys/kernel/random/boot_id");
	h = fnv_file(h, "/sys/devices/system/cpu/online");
	h = fnv_file(h, "/sys/devices/system/node/online");
	return fnv_pci(h, root && root[0] == '/' ? root : NULL);
}

/* The host name as a file name part: letters, digits, '-', '.', '_'. */
static void host_part(char *out, size_t len)
{
	char host[256] = "";
	if (gethostname(host, sizeof host - 1) < 0 || !host[0])
		snprintf(host, sizeof host, "unknown");
	size_t k = 0;
	for (const char *c = host; *c && k + 1 < len; c++)
		out[k++] = (isalnum((unsigned char)*c) || *c == '-' ||
			    *c == '.' || *c == '_') ? *c : '_';
	out[k] = '\0';
}

/* dir/node-HOST- (prefix) and dir/node-HOST-KEY.xml (path). */
static int cache_names(const char *dir, char *prefix, size_t plen,
		       char *path, size_t len)
{
	char host[128];
	host_part(host, sizeof host);
	int n = snprintf(prefix, plen, CACHE_PREFIX "%s-", host);
	int m = snprintf(path, len, "%s/%s%016llx" CACHE_SUFFIX, dir, prefix,
			 (unsigned long long)fingerprint());
	return n > 0 && (size_t)n < plen && m > 0 && (size_t)m < len ? 0
		: TP_EINVAL;
}

int tp__node_cache_path(const char *dir, char *out, size_t len)
{
	char prefix[160];
	return cache_names(dir, prefix, sizeof prefix, out, len);
}

/* ---------------------------------------------------------------- trust */

static bool trusted_mode(const struct stat *st)
{
	return st->st_uid == 0 && !(st->st_mode & (S_IWGRP | S_IWOTH));
}

static bool trusted_dir(const char *dir)
{
	struct stat st;
	return lstat(dir, &st) == 0 && S_ISDIR(st.st_mode) && trusted_mode(&st);
}

/* The cache file's text, when it and its directory are trusted; NULL
 * otherwise (why in err: a missing file is not an error). */
static char *read_trusted(const char *dir, const char *path, size_t *len,
			  tp_error *err)
{
	if (!trusted_dir(dir))
		return NULL;
	int fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0)
		return NULL;
	struct stat st;
	char *buf = NULL;
	if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && trusted_mode(&st) &&
	    st.st_size > 0 && (size_t)st.st_size <= TP__MAX_XML_BYTES &&
	    (buf = malloc((size_t)st.st_size + 1))) {
		ssize_t got = 0, r;
		while (got < st.st_size &&
		       (r = read(fd, buf + got, (size_t)(st.st_size - got))) > 0)
			got += r;
		if (got != st.st_size) {
			tp_error_set(err, TP_EIO, "%s: short read", path);
			free(buf);
			buf = NULL;
		} else {
			buf[got] = '\0';
			*len = (size_t)got;
		}
	}
	close(fd);
	return buf;
}

/* ---------------------------------------------------------------- store */

/* Earlier models of this node (another boot, other hardware). */
static void remove_stale(const char *dir, const char *prefix, const char *keep)
{
	DIR *d = opendir(dir);
	if (!d)
		return;
	const char *base = strrchr(keep, '/');
	base = base ? base + 1 : keep;
	struct dirent *e;
	size_t pl = strlen(prefix), sl = strlen(CACHE_SUFFIX);
	while ((e = readdir(d))) {
		size_t n = strlen(e->d_name);
		if (n <= pl + sl || strncmp(e->d_name, prefix, pl) ||
		    strcmp(e->d_name + n - sl, CACHE_SUFFIX) ||
		    !strcmp(e->d_name, base))
			continue;
		unlinkat(dirfd(d), e->d_name, 0);
	}
	closedir(d);
}

/* The directory, made by root where it is missing; false when it is not
 * one root alone may write. */
static bool cache_dir_ready(const char *dir)
{
	if (mkdir(dir, 0755) < 0 && errno != EEXIST)
		return false;
	return trusted_dir(dir);
}

/* Write text to path: a new file beside it, then renamed over it, so
 * that a reader sees the old file or the whole new one. */
static int store(const char *dir, const char *prefix, const char *path,
		 const char *text, size_t len, tp_error *err)
{
	if (geteuid() != 0 || !cache_dir_ready(dir))
		return 0;   /* only root writes a cache anyone trusts */
	char tmp[4200];
	snprintf(tmp, sizeof tmp, "%s/.%sXXXXXX", dir, CACHE_PREFIX);
	int fd = mkstemp(tmp);
	if (fd < 0)
		return tp_error_set(err, TP_EIO, "%s: %s", dir, strerror(errno));
	size_t done = 0;
	while (done < len) {
		ssize_t w = write(fd, text + done, len - done);
		if (w <= 0)
			break;
		done += (size_t)w;
	}
	bool ok = done == len && fchmod(fd, 0644) == 0;
	ok = close(fd) == 0 && ok;
	if (!ok || rename(tmp, path) < 0) {
		int e = errno;
		unlink(tmp);
		return tp_error_set(err, TP_EIO, "%s: %s", path, strerror(e));
	}
	remove_stale(dir, prefix, path);
	return 0;
}

/* -------------------------------------------------------------- record */

/* What answered, recorded in the cache file as a comment after the XML
 * declaration (hwloc and node_xml.c skip comments):
 *   <!-- topoplace node cache: complete; hwloc, NVML -->
 *   <!-- topoplace node cache: partial; hwloc; NVML not ready -->
 * A partial file holds hwloc's part only: a step that reads it asks the
 * vendor again (the slow part, hwloc's discovery of /sys, is not redone)
 * and root stores the complete model once the vendor answers.  A file
 * without the comment is taken as complete. */
#define RECORD "<!-- topoplace node cache: "
#define RECORD_END " -->"
#define RECORD_SCAN 1024             /* it is in the first lines */
#define ANSWER_MAX 256

/* "hwloc, NVML", "hwloc", "hwloc; NVML not ready" */
static void answer_text(bool complete, const char *fabric, char *out,
			size_t len)
{
	snprintf(out, len, "hwloc%s%s", !fabric[0] ? "" : complete ? ", " : "; ",
		 fabric);
}

/* The record of text into *complete and what (ANSWER_MAX). */
static void read_record(const char *text, size_t len, bool *complete,
			char *what)
{
	*complete = true;
	what[0] = '\0';
	size_t scan = len < RECORD_SCAN ? len : RECORD_SCAN;
	const char *p = memmem(text, scan, RECORD, sizeof RECORD - 1);
	if (!p)
		return;
	p += sizeof RECORD - 1;
	const char *end = memmem(p, (size_t)(text + len - p), RECORD_END,
				 sizeof RECORD_END - 1);
	if (!end)
		return;
	if (!strncmp(p, "partial; ", 9))
		*complete = false;
	else if (strncmp(p, "complete; ", 10))
		return;
	p = strchr(p, ' ') + 1;
	if (end < p)
		return;                     /* "partial; -->": nothing named */
	size_t k = (size_t)(end - p) < ANSWER_MAX - 1 ? (size_t)(end - p)
						      : ANSWER_MAX - 1;
	for (size_t i = 0; i < k; i++)      /* shown in logs: printable only */
		what[i] = isprint((unsigned char)p[i]) ? p[i] : '?';
	what[k] = '\0';
}

/* xml with the record after its first line, in *out (malloc'ed). */
static int with_record(const char *xml, size_t len, bool complete,
		       const char *what, char **out, size_t *out_len)
{
	char rec[ANSWER_MAX + 64];
	int r = snprintf(rec, sizeof rec, RECORD "%s; ", complete ? "complete"
			 : "partial");
	/* a comment may not hold "--": vendor messages are free text */
	for (const char *c = what; *c && (size_t)r + 8 < sizeof rec; c++) {
		char ch = !isprint((unsigned char)*c) ? '?'
			  : *c == '-' && rec[r - 1] == '-' ? ' ' : *c;
		rec[r++] = ch;
	}
	if (rec[r - 1] == '-')
		rec[r++] = ' ';
	r += snprintf(rec + r, sizeof rec - (size_t)r, RECORD_END "\n");
	const char *nl = memchr(xml, '\n', len);
	size_t head = nl ? (size_t)(nl - xml) + 1 : 0;
	char *buf = malloc(len + (size_t)r + 1);
	if (!buf)
		return TP_ENOMEM;
	memcpy(buf, xml, head);
	memcpy(buf + head, rec, (size_t)r);
	memcpy(buf + head + (size_t)r, xml + head, len - head);
	*out_len = len + (size_t)r;
	buf[*out_len] = '\0';
	*out = buf;
	return 0;
}

/* --------------------------------------------------------------- detect */

static int set_source(tp_node *n, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static int set_source(tp_node *n, const char *fmt, ...)
{
	char buf[512];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof buf, fmt, ap);
	va_end(ap);
	char *s = strdup(buf);
	if (!s)
		return TP_ENOMEM;
	free(n->source);
	n->source = s;
	return 0;
}

/* The model with the record, stored in the cache (root only). */
static int store_model(const tp_node *n, const char *dir, const char *prefix,
		       const char *path, bool complete, const char *what,
		       tp_error *err)
{
	char *xml = NULL, *text = NULL;
	size_t xml_len = 0, len = 0;
	int rc = tp_node_write_xml(n, &xml, &xml_len, err);
	if (!rc && (rc = with_record(xml, xml_len, complete, what, &text, &len)))
		tp_error_set(err, rc, "this node: out of memory");
	if (!rc)
		rc = store(dir, prefix, path, text, len, err);
	free(xml);
	free(text);
	return rc;
}

/* The vendor's fabric added to n (live, or hwloc's part from a partial
 * cache): what answered in what (ANSWER_MAX). */
static int add_vendor(tp_node *n, const struct tp_vendor_opts *vo,
		      bool *complete, char *what, tp_error *err)
{
	char fabric[ANSWER_MAX - 16] = "";
	int rc = tp_node_add_vendor_links(n, vo, fabric, sizeof fabric, complete,
					  err);
	if (!rc)
		answer_text(*complete, fabric, what, ANSWER_MAX);
	return rc;
}

static int out_of_memory(int rc, tp_error *err)
{
	return rc == TP_ENOMEM ? tp_error_set(err, rc, "this node: out of memory")
			       : rc;
}

int tp__node_detect_opts(const char *cache_dir, unsigned flags,
			 const struct tp_vendor_opts *vo, tp_node **out,
			 tp_error *err)
{
	if (!out)
		return tp_error_set(err, TP_EINVAL, "tp_node_detect: out is NULL");
	*out = NULL;
	char path[4200] = "", prefix[160] = "", what[ANSWER_MAX];
	if (cache_dir && cache_dir[0] &&
	    cache_names(cache_dir, prefix, sizeof prefix, path, sizeof path) < 0)
		return tp_error_set(err, TP_EINVAL, "node cache directory: name "
				    "too long (%zu bytes)", strlen(cache_dir));
	bool want_store = path[0] && (flags & (TP_NODE_DETECT_STORE |
					       TP_NODE_DETECT_PREPARE));
	bool complete = true;
	int rc;
	if (path[0]) {
		size_t len = 0;
		tp_error e;
		tp_error_clear(&e);
		char *text = read_trusted(cache_dir, path, &len, &e);
		if (text)
			read_record(text, len, &complete, what);
		if (text && complete && (flags & TP_NODE_DETECT_PREPARE)) {
			free(text);
			return 0;
		}
		rc = text ? tp_node_load_xml_buffer(text, len, path, out, &e) : -1;
		free(text);
		if (rc == 0 && complete)
			return out_of_memory(what[0]
				? set_source(*out, "this node (cached in %s: %s)", path, what)
				: set_source(*out, "this node (cached in %s)", path), err);
		if (rc == 0) {
			/* hwloc's part kept, the vendor asked again */
			rc = add_vendor(*out, vo, &complete, what, err);
			if (!rc)
				rc = set_source(*out, "this node (cached in %s: %s)",
						path, what);
			if (!rc && complete && want_store)
				rc = store_model(*out, cache_dir, prefix, path, true,
						 what, err);
			if (rc) {
				tp_node_destroy(*out);
				*out = NULL;
			}
			return out_of_memory(rc, err);
		}
		/* a cache hwloc cannot read any more is detected anew */
	}
	rc = tp_node_load_live(out, err);
	if (rc)
		return rc;
	rc = add_vendor(*out, vo, &complete, what, err);
	if (!rc)
		rc = set_source(*out, "this node (%s)", what);
	if (!rc && want_store)
		rc = store_model(*out, cache_dir, prefix, path, complete, what, err);
	if (rc) {
		tp_node_destroy(*out);
		*out = NULL;
	}
	return out_of_memory(rc, err);
}

int tp_node_detect(const char *cache_dir, unsigned flags, tp_node **out,
		   tp_error *err)
{
	return tp__node_detect_opts(cache_dir, flags, NULL, out, err);
}
