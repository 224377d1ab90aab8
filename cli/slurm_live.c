/* topoplace command — slurmctld's live view for `map --slurm-live`: the
 * text of `scontrol show topology NAME` (run here, with a time limit, so
 * that a controller that does not answer never hangs the command), or of a
 * file that saved it.  The core reads the text as untrusted input and
 * takes from it only the places of nodes Slurm's files leave unplaced
 * (tp_conf_load_slurm_live). */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"

/* More than any cluster's topology prints; the core bounds it again. */
#define LIVE_MAX_BYTES ((size_t)64 << 20)
/* scontrol's time: slurmctld answers in milliseconds, and its own
 * MessageTimeout is 10 s by default. */
#define LIVE_TIMEOUT_MS 15000

static double now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

/* Everything fd gives until EOF, the size limit or the deadline (0: none):
 * 0, or -1 with why. */
static int read_all(int fd, double deadline, char **out, size_t *len,
		    char *why, size_t wlen)
{
	size_t cap = 65536, n = 0;
	char *buf = malloc(cap + 1);
	if (!buf) {
		snprintf(why, wlen, "out of memory");
		return -1;
	}
	for (;;) {
		if (deadline > 0) {
			double left = deadline - now_ms();
			struct pollfd p = { fd, POLLIN, 0 };
			int pr = left > 0 ? poll(&p, 1, (int)left + 1) : 0;
			if (pr < 0 && errno == EINTR)
				continue;
			if (pr <= 0) {
				snprintf(why, wlen, "no answer within %d s",
					 LIVE_TIMEOUT_MS / 1000);
				free(buf);
				return -1;
			}
		}
		if (n == cap) {
			if (cap >= LIVE_MAX_BYTES) {
				snprintf(why, wlen, "more than %zu MiB", LIVE_MAX_BYTES >> 20);
				free(buf);
				return -1;
			}
			char *nb = realloc(buf, 2 * cap + 1);
			if (!nb) {
				snprintf(why, wlen, "out of memory");
				free(buf);
				return -1;
			}
			buf = nb;
			cap *= 2;
		}
		ssize_t r = read(fd, buf + n, cap - n);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			snprintf(why, wlen, "%s", strerror(errno));
			free(buf);
			return -1;
		}
		if (r == 0)
			break;
		n += (size_t)r;
	}
	buf[n] = '\0';
	*out = buf;
	*len = n;
	return 0;
}

/* `scontrol show topology [NAME]`'s standard output. */
static int run_scontrol(const char *topology, char **out, size_t *len,
			char *why, size_t wlen)
{
	int pfd[2];
	if (pipe(pfd) < 0) {
		snprintf(why, wlen, "pipe: %s", strerror(errno));
		return -1;
	}
	pid_t pid = fork();
	if (pid < 0) {
		snprintf(why, wlen, "fork: %s", strerror(errno));
		close(pfd[0]);
		close(pfd[1]);
		return -1;
	}
	if (pid == 0) {
		setpgid(0, 0);   /* killed with whatever it starts */
		dup2(pfd[1], STDOUT_FILENO);
		close(pfd[0]);
		close(pfd[1]);
		int devnull = open("/dev/null", O_RDWR);
		if (devnull >= 0) {
			dup2(devnull, STDIN_FILENO);
			dup2(devnull, STDERR_FILENO);
		}
		/* whole lines: SLURM_TOPO_LEN would cut them short */
		unsetenv("SLURM_TOPO_LEN");
		const char *scontrol = getenv("TOPOPLACE_SCONTROL");
		if (!scontrol || !*scontrol)
			scontrol = "scontrol";
		if (topology)
			execlp(scontrol, scontrol, "show", "topology", topology, (char *)NULL);
		else
			execlp(scontrol, scontrol, "show", "topology", (char *)NULL);
		_exit(127);
	}
	close(pfd[1]);
	int rc = read_all(pfd[0], now_ms() + LIVE_TIMEOUT_MS, out, len, why, wlen);
	close(pfd[0]);
	if (rc < 0) {
		kill(-pid, SIGKILL);
		kill(pid, SIGKILL);
	}
	int st = 0;
	while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
		;
	if (rc == 0 && !(WIFEXITED(st) && WEXITSTATUS(st) == 0)) {
		if (WIFEXITED(st) && WEXITSTATUS(st) == 127)
			snprintf(why, wlen, "scontrol not found");
		else
			snprintf(why, wlen, "scontrol failed (status %d)",
				 WIFEXITED(st) ? WEXITSTATUS(st) : -1);
		free(*out);
		*out = NULL;
		return -1;
	}
	return rc;
}

static int read_saved(const char *path, char **out, size_t *len, char *why,
		      size_t wlen)
{
	int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0) {
		snprintf(why, wlen, "%s", strerror(errno));
		return -1;
	}
	struct stat sb;
	if (fstat(fd, &sb) < 0 || !S_ISREG(sb.st_mode)) {
		snprintf(why, wlen, "not a regular file");
		close(fd);
		return -1;
	}
	int rc = read_all(fd, 0, out, len, why, wlen);
	close(fd);
	return rc;
}

int cli_map_live(struct cli_map *mp)
{
	if (!mp->live)
		return 0;
	const tp_job_request *r = &mp->req;
	tp_conf_slurm sl = { r->slurm_conf, r->partition, NULL, r->slurm_version };
	tp_conf *c0 = NULL;
	tp_error err;
	tp_error_clear(&err);
	/* the topology the job uses, to ask slurmctld for that one */
	if (tp_conf_load_slurm(mp->config, &sl, &c0, &err) < 0)
		return cli_report(NULL, &err);
	int used = tp_conf_slurm_topology_used(c0);
	char *topology = used >= 0 && tp_conf_slurm_topology(c0, used)
			 ? strdup(tp_conf_slurm_topology(c0, used)) : NULL;
	bool from_slurm = tp_conf_network_source(c0) != NULL;
	tp_conf_destroy(c0);
	if (!from_slurm) {
		free(topology);
		return cli_usage_error("--slurm-live: %s describes its own network, "
				       "not Slurm's topology", mp->config);
	}
	char *text = NULL, why[256] = "";
	size_t len = 0;
	char what[512];
	int rc;
	if (*mp->live) {
		snprintf(what, sizeof what, "%s", mp->live);
		rc = read_saved(mp->live, &text, &len, why, sizeof why);
	} else {
		snprintf(what, sizeof what, "scontrol show topology%s%s",
			 topology ? " " : "", topology ? topology : "");
		rc = run_scontrol(topology, &text, &len, why, sizeof why);
	}
	if (rc < 0 && *mp->live) {
		free(topology);
		return cli_usage_error("--slurm-live=%s: %s", mp->live, why);
	}
	if (rc < 0) {
		/* no live view from slurmctld: the files alone, as without the
		 * option (and as the plugin does) */
		cli_note("--slurm-live: %s: %s; nodes Slurm's files do not place "
			 "keep Slurm's placement", what, why);
		free(topology);
		return 0;
	}
	rc = tp_conf_load_slurm_live(mp->config, &sl, text, len, topology, what,
				     &mp->live_conf, &err);
	free(text);
	free(topology);
	if (rc < 0)
		return cli_report(NULL, &err);
	mp->req.conf = mp->live_conf;
	return 0;
}
