/* topoplace — the words of the GPU vendors' tools' text, for the readers of
 * links files (node_links.c, node_links_rocm.c, node_links_amd.c): a line
 * split on blanks, colour escape sequences removed, "GPUn" and integers
 * read with bounds. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "node/node_internal.h"
#include "node/node_links.h"

int tp__links_parse_int(const char *s, const char *e, long *v)
{
	if (s == e)
		return -1;
	char buf[24];
	if ((size_t)(e - s) >= sizeof buf)
		return -1;
	memcpy(buf, s, (size_t)(e - s));
	buf[e - s] = '\0';
	char *end;
	errno = 0;
	*v = strtol(buf, &end, 10);
	return errno || *end ? -1 : 0;
}

/* The words of line (split in place on blanks), at most cap of them. */
int tp__links_split_words(char *line, char **tok, int cap)
{
	int nt = 0;
	char *save = NULL;
	for (char *t = strtok_r(line, " \t\r\n", &save); t && nt < cap;
	     t = strtok_r(NULL, " \t\r\n", &save))
		tok[nt++] = t;
	return nt;
}

/* Remove ANSI escape sequences in place. */
void tp__links_strip_escapes(char *s)
{
	char *w = s;
	for (char *p = s; *p;) {
		if (*p == '\x1b') {
			p++;
			if (*p == '[') {
				p++;
				while (*p && !((*p >= '@' && *p <= '~')))
					p++;
				if (*p)
					p++;
			}
			continue;
		}
		*w++ = *p++;
	}
	*w = '\0';
}

bool tp__links_gpu_token(const char *t, int *idx)
{
	if (strncmp(t, "GPU", 3) != 0 || t[3] < '0' || t[3] > '9')
		return false;
	long v;
	if (tp__links_parse_int(t + 3, t + strlen(t), &v) < 0 || v < 0 ||
	    v >= TP_NODE_MAX_GPUS)
		return false;
	*idx = (int)v;
	return true;
}
