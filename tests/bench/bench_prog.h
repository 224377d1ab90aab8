/* bench_prog.h — running a peer's program (Scotch's tools, Zoltan2's
 * driver) from a benchmark, one copy for all. */
#ifndef TP_BENCH_PROG_H
#define TP_BENCH_PROG_H

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "bench_time.h"

/* Run argv with stdout and stderr to logpath, killed past timeout_s
 * seconds.  Its wall time in s and peak resident MB into *wall_s and
 * *rss_mb where not NULL.  Returns its exit status (128 + the signal that
 * ended it), -2 on timeout, -1 when it could not be started or waited for. */
static inline int run_prog(char *const argv[], const char *logpath, double timeout_s,
			   double *wall_s, double *rss_mb)
{
	double t0 = now_ms();
	pid_t pid = fork();
	if (pid < 0)
		return -1;
	if (pid == 0) {
		int fd = open(logpath, O_WRONLY | O_CREAT | O_TRUNC, 0644);
		if (fd >= 0) {
			dup2(fd, 1);
			dup2(fd, 2);
			close(fd);
		}
		execvp(argv[0], argv);
		fprintf(stderr, "exec %s: %s\n", argv[0], strerror(errno));
		_exit(127);
	}
	int st = 0;
	struct rusage ru;
	memset(&ru, 0, sizeof ru);
	for (;;) {
		pid_t w = wait4(pid, &st, WNOHANG, &ru);
		if (w == pid)
			break;
		if (w < 0 && errno != EINTR)
			return -1;
		if ((now_ms() - t0) / 1e3 > timeout_s) {
			kill(pid, SIGKILL);
			wait4(pid, &st, 0, &ru);
			if (wall_s)
				*wall_s = (now_ms() - t0) / 1e3;
			return -2;
		}
		struct timespec ts = { 0, 5 * 1000 * 1000 };
		nanosleep(&ts, NULL);
	}
	if (wall_s)
		*wall_s = (now_ms() - t0) / 1e3;
	if (rss_mb)
		*rss_mb = ru.ru_maxrss / 1024.0;
	if (WIFEXITED(st))
		return WEXITSTATUS(st);
	return 128 + (WIFSIGNALED(st) ? WTERMSIG(st) : 0);
}

#endif
