/* topoplace — the GPU fabric from the vendor tool's text, when no vendor
 * library answered: `nvidia-smi topo -m`, `amd-smi topology`, then
 * `rocm-smi --showtopo --shownodesbw`, read by tp_node_load_links_buffer.
 *
 * This runs inside slurmstepd (root, the user's environment): the tool is
 * found in a fixed list of folders, never through $PATH; it runs with
 * fork() and execve() and an environment of its own (PATH of the system
 * folders, LC_ALL=C), in a process group of its own, stdin and stderr on
 * /dev/null, other descriptors closed (close_range, else what /proc/self/fd
 * lists, else every one up to the limit); its output is bounded (1 MiB), and
 * past the time limit the whole group is killed and reaped: no zombie, no
 * orphan holding the pipe.  Between fork() and execve() the child calls
 * only async-signal-safe functions (slurmstepd has threads). */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "node/node_internal.h"
#include "util/util_internal.h"
#include "node/node_vendor.h"

/* One tool: its name, arguments, and the name source gets. */
struct tool {
	const char *name;
	const char *args[3];
};

static const struct tool NVIDIA_TOOLS[] = {
	{ "nvidia-smi", { "topo", "-m", NULL } },
};
static const struct tool AMD_TOOLS[] = {
	{ "amd-smi", { "topology", NULL, NULL } },
	{ "rocm-smi", { "--showtopo", "--shownodesbw", NULL } },
};

/* What a run gave. */
struct tool_out {
	char *buf;           /* TP_VENDOR_TOOL_MAX_BYTES + 1 */
	size_t len;
	bool timed_out, too_long;
	int status;          /* waitpid's, -1 when not known */
};

/* The tool's path in one of the folders of dirs into path; false when no
 * folder has it. */
static bool tool_find(const char *dirs, const char *name, char *path,
		      size_t len)
{
	const char *p = dirs;
	while (*p) {
		size_t k = strcspn(p, ":");
		if (k && p[0] == '/' &&
		    (size_t)snprintf(path, len, "%.*s/%s", (int)k, p, name) < len &&
		    access(path, X_OK) == 0)
			return true;
		p += k + (p[k] == ':');
	}
	return false;
}

/* A record of getdents64 (the kernel's struct linux_dirent64). */
struct fd_dirent {
	uint64_t ino;
	int64_t off;
	unsigned short reclen;
	unsigned char type;
	char name[];
};

void tp_vendor_close_from(int lo, unsigned skip)
{
#ifdef SYS_close_range
	if (!(skip & TP_CLOSE_NO_RANGE) &&
	    syscall(SYS_close_range, (unsigned)lo, ~0U, 0U) == 0)
		return;
#endif
	/* before Linux 5.9 (RHEL 8), or refused (ENOSYS, EINVAL, a seccomp
	 * filter's EPERM): the descriptors /proc lists, read with the bare
	 * system call (readdir may allocate: not async-signal-safe) */
	int dir = skip & TP_CLOSE_NO_PROC ? -1
		  : open("/proc/self/fd", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dir >= 0) {
		union { char b[4096]; uint64_t align; } buf;
		long n;
		while ((n = syscall(SYS_getdents64, dir, buf.b, sizeof buf.b)) > 0)
			for (long off = 0; off < n;) {
				const struct fd_dirent *d = (const void *)(buf.b + off);
				int fd = 0;
				const char *c = d->name;
				for (; *c >= '0' && *c <= '9' && fd < (1 << 30); c++)
					fd = fd * 10 + (*c - '0');
				if (!*c && c != d->name && fd >= lo && fd != dir)
					close(fd);
				off += d->reclen;
			}
		close(dir);
		if (n == 0)
			return;
	}
	/* no /proc: every descriptor up to the limit */
	struct rlimit rl;
	long max = getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY
		   && rl.rlim_cur < (1 << 20) ? (long)rl.rlim_cur : 1 << 20;
	for (long fd = lo; fd < max; fd++)
		close((int)fd);
}

/* The child: stdout to the pipe, the rest to /dev/null, then the tool.
 * Only async-signal-safe calls. */
static void child(int wfd, const char *path, char *const argv[],
		  char *const envp[], const sigset_t *mask)
{
	setpgid(0, 0);
	int null = open("/dev/null", O_RDWR);
	if (null < 0 || dup2(null, 0) < 0 || dup2(null, 2) < 0 ||
	    dup2(wfd, 1) < 0)
		_exit(127);
	tp_vendor_close_from(3, 0);
	sigprocmask(SIG_SETMASK, mask, NULL);
	execve(path, argv, envp);
	_exit(127);
}

/* Read until EOF, the limit or the deadline. */
static void tool_read(int fd, struct tool_out *o, double deadline)
{
	for (;;) {
		double left = deadline - tp__now_ms();
		if (left <= 0) {
			o->timed_out = true;
			return;
		}
		struct pollfd p = { fd, POLLIN, 0 };
		int r = poll(&p, 1, (int)left + 1);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			continue;        /* the deadline check above ends it */
		ssize_t k = read(fd, o->buf + o->len,
				 TP_VENDOR_TOOL_MAX_BYTES + 1 - o->len);
		if (k < 0 && (errno == EINTR || errno == EAGAIN))
			continue;
		if (k <= 0)
			return;
		o->len += (size_t)k;
		if (o->len > TP_VENDOR_TOOL_MAX_BYTES) {
			o->too_long = true;
			return;
		}
	}
}

/* Reap the child: wait until the deadline, then kill the group and wait
 * (bounded: SIGKILL cannot be caught). */
static void tool_reap(pid_t pid, struct tool_out *o, bool kill_now,
		      double deadline)
{
	int st;
	while (!kill_now && tp__now_ms() < deadline) {
		pid_t r = waitpid(pid, &st, WNOHANG);
		if (r == pid) {
			o->status = st;
			kill(-pid, SIGKILL);     /* what it left behind */
			return;
		}
		if (r < 0 && errno != EINTR)
			return;              /* SIGCHLD ignored: reaped */
		struct timespec ts = { 0, 5 * 1000 * 1000 };
		nanosleep(&ts, NULL);
	}
	if (!kill_now)
		o->timed_out = true;
	kill(-pid, SIGKILL);
	kill(pid, SIGKILL);
	while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
		;
}

/* Run path with args; the output in o.  -1 when it could not start. */
static int tool_run(const char *path, const struct tool *t, int timeout_ms,
		    struct tool_out *o)
{
	char *argv[4] = { (char *)t->name, (char *)t->args[0],
			  (char *)t->args[1], NULL };
	static char *const envp[] = { "PATH=/usr/sbin:/usr/bin:/sbin:/bin",
				      "LC_ALL=C", NULL };
	sigset_t none;
	sigemptyset(&none);
	int fd[2];
	if (pipe2(fd, O_CLOEXEC) < 0)
		return -1;
	double deadline = tp__now_ms() + timeout_ms;
	pid_t pid = fork();
	if (pid == 0)
		child(fd[1], path, argv, envp, &none);
	close(fd[1]);
	if (pid < 0) {
		close(fd[0]);
		return -1;
	}
	setpgid(pid, pid);           /* also here: no race with kill(-pid) */
	tool_read(fd[0], o, deadline);
	close(fd[0]);
	tool_reap(pid, o, o->timed_out || o->too_long, deadline);
	return 0;
}

/* Why a run gave no text, or NULL when it did. */
static const char *tool_failed(const struct tool_out *o)
{
	if (o->timed_out)
		return "timed out";
	if (o->too_long)
		return "more than 1 MiB of output";
	if (o->status != -1 && !(WIFEXITED(o->status) && WEXITSTATUS(o->status) == 0))
		return "failed";
	if (o->len == 0)
		return "no output";
	return NULL;
}

/* Run one tool and read its text into n: TP_VENDOR_DONE with source set
 * to the tool's name; TP_VENDOR_NONE when it is not installed, or with
 * source saying why its text set nothing (failed, timed out, not read):
 * the next tool may answer. */
static int tool_links(tp_node *n, const struct tool *t,
		      const struct tp_vendor_opts *o, char *source, size_t len,
		      tp_error *err)
{
	char path[512];
	if (!tool_find(o->tool_dir ? o->tool_dir : TP_VENDOR_TOOL_DIRS, t->name,
		       path, sizeof path))
		return TP_VENDOR_NONE;
	struct tool_out out = { NULL, 0, false, false, -1 };
	out.buf = malloc(TP_VENDOR_TOOL_MAX_BYTES + 1);
	if (!out.buf)
		return tp_error_set(err, TP_ENOMEM, "%s: out of memory", t->name);
	int timeout = o->tool_timeout_ms > 0 ? o->tool_timeout_ms
					     : TP_VENDOR_TOOL_TIMEOUT_MS;
	const char *why = tool_run(path, t, timeout, &out) ? "could not start"
							   : tool_failed(&out);
	int rc = TP_VENDOR_DONE;
	if (why) {
		if (len)
			snprintf(source, len, "%s: %s", t->name, why);
		rc = TP_VENDOR_NONE;       /* the next tool may answer */
	} else {
		tp_error e;
		tp_error_clear(&e);
		if (tp_node_load_links_buffer(n, out.buf, out.len, t->name, &e) == 0)
			snprintf(source, len, "%s", t->name);
		else if (e.code == TP_ENOMEM)
			rc = tp_error_set(err, TP_ENOMEM, "%s", e.msg);
		else {
			snprintf(source, len, "%s: not read: %s", t->name, e.msg);
			rc = TP_VENDOR_NONE;   /* the next tool's text may be */
		}
	}
	free(out.buf);
	return rc;
}

int tp_vendor_tools(tp_node *n, bool amd, const struct tp_vendor_opts *o,
		    char *source, size_t len, tp_error *err)
{
	const struct tool *t = amd ? AMD_TOOLS : NVIDIA_TOOLS;
	size_t nt = amd ? sizeof AMD_TOOLS / sizeof AMD_TOOLS[0]
			: sizeof NVIDIA_TOOLS / sizeof NVIDIA_TOOLS[0];
	for (size_t i = 0; i < nt; i++) {
		int rc = tool_links(n, &t[i], o, source, len, err);
		if (rc != TP_VENDOR_NONE)
			return rc;
	}
	return TP_VENDOR_NONE;
}
