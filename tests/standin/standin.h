/* topoplace tests — what the stand-in vendor libraries share: the node
 * description they answer from.  A file named by an environment variable,
 * one item a line ('#' starts a comment):
 *
 *   gpu BUSID [SOCKET]      a GPU, in the order the library lists them
 *   link BUSID BUSID N      N NVLink lanes (NVML) or N xGMI links (AMD)
 *   switch BUSID N          N NVLink lanes from the GPU to NVSwitches
 *   notype                  NVML: no remote device types (older NVML)
 *   linkbw M                AMD: one xGMI link's bandwidth, MB/s (50000)
 *   nvlink V                NVML: every link of version V (NVML's enum:
 *                           1 NVLink 1.0 ... 6 4.0, 7 5.0); without it
 *                           nvmlDeviceGetNvLinkVersion is not supported
 *
 * TOPOPLACE_STANDIN_LOG, when set, names a file each init and shutdown
 * call appends a line to ("init", "shutdown"), so a test sees them
 * balanced.  State is global: a stand-in library is one process's fake
 * driver, loaded and unloaded by the code under test. */
#ifndef TP_STANDIN_H
#define TP_STANDIN_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SI_MAX_GPUS 64
#define SI_MAX_LINKS 64

struct si_gpu {
	char bus[32];               /* as the description writes it */
	unsigned long dom;
	unsigned b, d, f;
	int socket;
	int nlinks;                 /* NVML: link slots used */
	int remote[SI_MAX_LINKS];   /* NVML: GPU index, -1: a switch */
};

struct si_node {
	int ngpus;
	struct si_gpu gpu[SI_MAX_GPUS];
	int links[SI_MAX_GPUS][SI_MAX_GPUS];
	int notype;
	int nvlink_version;         /* 0: not supported */
	int link_mbs;               /* 0: the stand-in's default */
};

static int si_find(const struct si_node *s, const char *bus)
{
	for (int i = 0; i < s->ngpus; i++)
		if (!strcmp(s->gpu[i].bus, bus))
			return i;
	return -1;
}

static void si_slots(struct si_gpu *g, int remote, int n)
{
	for (int k = 0; k < n && g->nlinks < SI_MAX_LINKS; k++)
		g->remote[g->nlinks++] = remote;
}

static void si_line(struct si_node *s, const char *line)
{
	char a[32], b[32];
	int n, sock;
	if (sscanf(line, "gpu %31s %d", a, &sock) >= 1 && s->ngpus < SI_MAX_GPUS) {
		struct si_gpu *g = &s->gpu[s->ngpus];
		memset(g, 0, sizeof *g);
		snprintf(g->bus, sizeof g->bus, "%s", a);
		sscanf(a, "%lx:%x:%x.%x", &g->dom, &g->b, &g->d, &g->f);
		g->socket = sscanf(line, "gpu %31s %d", a, &sock) == 2 ? sock : s->ngpus;
		s->ngpus++;
	} else if (sscanf(line, "link %31s %31s %d", a, b, &n) == 3) {
		int i = si_find(s, a), j = si_find(s, b);
		if (i < 0 || j < 0)
			return;
		s->links[i][j] = s->links[j][i] = n;
		si_slots(&s->gpu[i], j, n);
		si_slots(&s->gpu[j], i, n);
	} else if (sscanf(line, "switch %31s %d", a, &n) == 2) {
		int i = si_find(s, a);
		if (i >= 0)
			si_slots(&s->gpu[i], -1, n);
	} else if (!strncmp(line, "notype", 6)) {
		s->notype = 1;
	} else if (sscanf(line, "nvlink %d", &n) == 1) {
		s->nvlink_version = n;
	} else if (sscanf(line, "linkbw %d", &n) == 1) {
		s->link_mbs = n;
	}
}

/* 0, or -1 without a description. */
static int si_load(struct si_node *s, const char *env)
{
	memset(s, 0, sizeof *s);
	const char *path = getenv(env);
	FILE *f = path ? fopen(path, "r") : NULL;
	if (!f)
		return -1;
	char line[256];
	while (fgets(line, sizeof line, f)) {
		char *c = strchr(line, '#');
		if (c)
			*c = '\0';
		si_line(s, line);
	}
	fclose(f);
	return 0;
}

static void si_log(const char *what)
{
	const char *path = getenv("TOPOPLACE_STANDIN_LOG");
	FILE *f = path ? fopen(path, "a") : NULL;
	if (f) {
		fprintf(f, "%s\n", what);
		fclose(f);
	}
}

#endif
