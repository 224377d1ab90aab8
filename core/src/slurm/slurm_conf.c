/* topoplace — Slurm's slurm.conf as topoplace reads it: its node names
 * (which check-config --slurm-conf compares with topoplace.conf's,
 * conf/conf_check.c) and the keys that choose Slurm's topology.
 *
 * slurm.conf is read as Slurm reads it, as far as node names go: '#' starts a
 * comment ("\#" is a '#'), a trailing '\' continues the line, keys are
 * case-insensitive, a line whose first key is NodeName= names nodes (a Slurm
 * hostlist; NodeName=DEFAULT names none), and "Include FILE" reads FILE in
 * place (relative to slurm.conf's directory), at most 8 deep.  Everything else
 * is ignored.  At most 262,144 names are listed in all, counted before a
 * line is expanded.  Every file is bounded (64 MiB) and opened without blocking, as
 * every file the core reads. */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "net/hashtab.h"
#include "slurm/slurm_conf.h"
#include "util/hostlist.h"
#include "util/util_internal.h"

#define MAX_INCLUDE_DEPTH 8
/* Names listed in all of slurm.conf (duplicates included), counted before a
 * line is expanded: far above any Slurm cluster, and bounded work. */
#define MAX_SLURM_NODES ((int64_t)1 << 18)

/* The distinct node names met so far. */
struct sc_nodes {
	struct tp__name_set names;
	int64_t listed;        /* names listed so far, duplicates included */
	tp_error *err;
	const char *dir;       /* slurm.conf's directory: Include paths */
	struct tp__slurm_keys *keys;   /* non-NULL: the keys below, no nodes */
};

/* key=value of a line's first word into *dst (the last line wins, as for
 * Slurm); 1 when the line was that key. */
static int take_key(char *p, const char *key, char **dst, tp_error *err,
		    const char *file)
{
	size_t kl = strlen(key);
	if (strncasecmp(p, key, kl) || p[kl] != '=')
		return 0;
	char *v = p + kl + 1;
	size_t n = strcspn(v, " \t\r");
	char *copy = strndup(v, n);
	if (!copy)
		return tp_error_set(err, TP_ENOMEM, "%s: out of memory", file);
	free(*dst);
	*dst = copy;
	return 1;
}


/* The names of one NodeName= value. */
static int node_names(struct sc_nodes *s, const char *val, const char *file,
		      int line)
{
	if (!strcasecmp(val, "DEFAULT"))
		return TP_OK;
	char what[TP_ERROR_MSG_MAX / 2];
	snprintf(what, sizeof what, "NodeName=%s", val);
	struct tp__hostlist *hl;
	int64_t count;
	tp_error e;
	tp_error_clear(&e);
	int rc = tp__hostlist_parse(val, what, MAX_SLURM_NODES - s->listed,
				    "the most check-config compares: 262144 in all "
				    "of slurm.conf", &hl, &count, &e);
	if (rc)
		return tp_error_set(s->err, rc, "%s:%d: %s", file, line, e.msg);
	s->listed += count;
	char h[TP__HOSTNAME_MAX];
	while (rc == TP_OK && tp__hostlist_next(hl, h))
		rc = tp__name_set_add(&s->names, h);
	tp__hostlist_free(hl);
	if (rc)
		return tp_error_set(s->err, rc, "%s: out of memory", file);
	return TP_OK;
}

static int parse_text(struct sc_nodes *s, char *text, const char *file,
		      int depth);

/* "Include FILE": FILE relative to slurm.conf's directory. */
static int include(struct sc_nodes *s, const char *arg, const char *file,
		   int line, int depth)
{
	if (!*arg)
		return tp_error_set(s->err, TP_EINVAL, "%s:%d: Include without a file",
				    file, line);
	if (depth >= MAX_INCLUDE_DEPTH)
		return tp_error_set(s->err, TP_EINVAL,
				    "%s:%d: Include %s: more than %d levels of Include (a loop?)",
				    file, line, arg, MAX_INCLUDE_DEPTH);
	char *path;
	if (arg[0] != '/' && s->dir) {
		size_t n = strlen(s->dir) + strlen(arg) + 2;
		if ((path = malloc(n)))
			snprintf(path, n, "%s/%s", s->dir, arg);
	} else {
		path = strdup(arg);
	}
	if (!path)
		return tp_error_set(s->err, TP_ENOMEM, "%s: out of memory", file);
	/* a file that cannot be read is named with the Include line; an
	 * error inside it names its own line */
	char *text;
	size_t len;
	tp_error e;
	tp_error_clear(&e);
	int rc = tp__read_file(path, TP__MAX_CONF_BYTES, "slurm.conf", &text, &len, &e);
	if (rc) {
		tp_error_set(s->err, rc, "%s:%d: Include %s: %s", file, line, arg, e.msg);
	} else {
		rc = parse_text(s, text, path, depth + 1);
		free(text);
	}
	free(path);
	return rc;
}

/* The value of key among the words of a line (NULL: not there), cut
 * into a copy. */
static char *word_copy(const char *p, const char *key)
{
	size_t kl = strlen(key);
	char *found = NULL;
	while (*p) {
		p += strspn(p, " \t\r");
		size_t n = strcspn(p, " \t\r");
		if (n > kl && !strncasecmp(p, key, kl) && p[kl] == '=') {
			free(found);   /* the last one wins, as in Slurm */
			found = strndup(p + kl + 1, n - kl - 1);
		}
		p += n;
	}
	return found;
}

/* PartitionName=NAME ... Topology=T Default=YES: the partition's topology
 * of topology.yaml.  PartitionName=DEFAULT sets Topology= for the
 * partitions after it, as Slurm's defaults do. */
static int partition_line(struct sc_nodes *s, const char *p, const char *file,
			  int line)
{
	struct tp__slurm_keys *k = s->keys;
	char *name = word_copy(p, "PartitionName");
	char *topo = word_copy(p, "Topology");
	char *def = word_copy(p, "Default");
	int rc = TP_OK;
	if (!name || !*name) {
		rc = tp_error_set(s->err, TP_EINVAL, "%s:%d: PartitionName=: empty value",
				  file, line);
	} else if (!strcasecmp(name, "DEFAULT")) {
		if (topo) {
			free(k->default_topology);
			k->default_topology = topo;
			topo = NULL;
		}
	} else {
		struct tp__slurm_part *np = realloc(k->part, sizeof *np *
						    (size_t)(k->npart + 1));
		if (!np) {
			rc = tp_error_set(s->err, TP_ENOMEM, "%s: out of memory", file);
		} else {
			k->part = np;
			struct tp__slurm_part *q = &np[k->npart++];
			memset(q, 0, sizeof *q);
			q->name = name;
			name = NULL;
			if (!topo && k->default_topology)
				topo = strdup(k->default_topology);
			q->topology = topo;
			topo = NULL;
			q->is_default = def && (!strcasecmp(def, "yes") ||
						 !strcasecmp(def, "true") || !strcmp(def, "1"));
			q->line = line;
			q->file = strdup(file);
			if (!q->file)
				rc = tp_error_set(s->err, TP_ENOMEM, "%s: out of memory", file);
		}
	}
	free(name);
	free(topo);
	free(def);
	return rc;
}

/* NodeName=HOSTLIST ... Topology=VALUE: where those nodes join the
 * topologies at run time.  NodeName=DEFAULT Topology= gives it to the
 * NodeName= lines after it, as Slurm's defaults do. */
static int node_topology_line(struct sc_nodes *s, const char *p,
			      const char *file, int line)
{
	struct tp__slurm_keys *k = s->keys;
	char *name = word_copy(p, "NodeName");
	char *topo = word_copy(p, "Topology");
	int rc = TP_OK;
	if (name && !strcasecmp(name, "DEFAULT")) {
		if (topo) {
			free(k->default_node_topology);
			k->default_node_topology = topo;
			topo = NULL;
		}
	} else if (name && *name && (topo || k->default_node_topology)) {
		if (!topo)
			topo = strdup(k->default_node_topology);
		struct tp__slurm_node_topo *nt = realloc(k->node_topo, sizeof *nt *
							 (size_t)(k->nnode_topo + 1));
		if (!topo || !nt) {
			if (nt)
				k->node_topo = nt;
			rc = tp_error_set(s->err, TP_ENOMEM, "%s: out of memory", file);
		} else {
			k->node_topo = nt;
			struct tp__slurm_node_topo *q = &nt[k->nnode_topo++];
			q->nodes = name;
			q->topology = topo;
			q->line = line;
			name = topo = NULL;
			if (!(q->file = strdup(file)))
				rc = tp_error_set(s->err, TP_ENOMEM, "%s: out of memory",
						  file);
		}
	}
	free(name);
	free(topo);
	return rc;
}

/* One logical line (comment cut, continuations joined). */
static int conf_line(struct sc_nodes *s, char *p, const char *file, int line,
		     int depth)
{
	while (*p == ' ' || *p == '\t')
		p++;
	if (!strncasecmp(p, "include", 7) && (p[7] == ' ' || p[7] == '\t')) {
		char *a = p + 8;
		while (*a == ' ' || *a == '\t')
			a++;
		size_t n = strlen(a);
		while (n && (a[n - 1] == ' ' || a[n - 1] == '\t' || a[n - 1] == '\r'))
			a[--n] = '\0';
		return include(s, a, file, line, depth);
	}
	if (s->keys && !strncasecmp(p, "PartitionName=", 14))
		return partition_line(s, p, file, line);
	if (s->keys && !strncasecmp(p, "NodeName=", 9))
		return node_topology_line(s, p, file, line);
	if (s->keys) {
		int rc = take_key(p, "TopologyPlugin", &s->keys->topology_plugin,
				  s->err, file);
		if (!rc)
			rc = take_key(p, "SelectTypeParameters",
				      &s->keys->select_params, s->err, file);
		if (!rc)
			rc = take_key(p, "SelectType", &s->keys->select_type,
				      s->err, file);
		if (!rc)
			rc = take_key(p, "TopologyParam", &s->keys->topology_param,
				      s->err, file);
		return rc < 0 ? rc : TP_OK;
	}
	if (strncasecmp(p, "NodeName=", 9))
		return TP_OK;
	char *v = p + 9, *e = v;
	bool q = false;
	/* the value ends at a blank outside double quotes; quotes dropped */
	char *w = v;
	for (; *e && (q || (*e != ' ' && *e != '\t' && *e != '\r')); e++) {
		if (*e == '"')
			q = !q;
		else
			*w++ = *e;
	}
	*w = '\0';
	if (!*v)
		return tp_error_set(s->err, TP_EINVAL, "%s:%d: NodeName=: empty value",
				    file, line);
	return node_names(s, v, file, line);
}

/* slurm.conf as slurmctld reads it.  Every line ends in a blank, as a
 * joined one does: a value runs to the blank after it. */
static const struct tp__line_format slurm_conf_format = {
	.comment = '#', .slurm = true, .blank_after = true,
};

/* A file of slurm.conf being read, Include depth deep. */
struct sc_file {
	struct sc_nodes *s;
	const char *file;
	int depth;
};

static int sc_file_line(void *arg, char *line, long number)
{
	const struct sc_file *f = arg;
	return conf_line(f->s, line, f->file, (int)number, f->depth);
}

static int parse_text(struct sc_nodes *s, char *text, const char *file,
		      int depth)
{
	struct sc_file f = { s, file, depth };
	return tp__each_line(text, &slurm_conf_format, file, s->err, sc_file_line,
			     &f);
}

/* slurm.conf's directory (Include paths are relative to it) into *dir,
 * NULL for a bare file name. */
static int conf_dir(const char *slurm_conf, char **dir, tp_error *err)
{
	const char *slash = strrchr(slurm_conf, '/');
	*dir = NULL;
	if (slash && !(*dir = strndup(slurm_conf, slash > slurm_conf
				      ? (size_t)(slash - slurm_conf) : 1)))
		return tp_error_set(err, TP_ENOMEM, "%s: out of memory", slurm_conf);
	return TP_OK;
}

static int read_conf(struct sc_nodes *s, const char *path)
{
	char *text;
	size_t len;
	int rc = tp__read_file(path, TP__MAX_CONF_BYTES, "slurm.conf", &text, &len,
			       s->err);
	if (rc)
		return rc;
	rc = parse_text(s, text, path, 0);
	free(text);
	return rc;
}

/* slurm.conf and its Includes (relative to its directory) into s: the
 * keys when s->keys is set, else the node names. */
static int read_all(struct sc_nodes *s, const char *slurm_conf)
{
	char *dir;
	if (conf_dir(slurm_conf, &dir, s->err))
		return TP_ENOMEM;
	s->dir = dir;
	int rc = read_conf(s, slurm_conf);
	s->dir = NULL;
	free(dir);
	return rc;
}

int tp__slurm_conf_nodes(const char *slurm_conf, struct tp__name_set *names,
			 tp_error *err)
{
	struct sc_nodes s;
	memset(&s, 0, sizeof s);
	s.err = err;
	int rc = read_all(&s, slurm_conf);
	if (!rc && s.names.n == 0)
		rc = tp_error_set(err, TP_EINVAL, "%s: no NodeName= lines", slurm_conf);
	if (rc)
		tp__name_set_free(&s.names);
	else
		*names = s.names;
	return rc;
}

void tp__slurm_keys_free(struct tp__slurm_keys *k)
{
	free(k->topology_plugin);
	free(k->select_type);
	free(k->select_params);
	free(k->topology_param);
	free(k->default_topology);
	for (int i = 0; i < k->npart; i++) {
		free(k->part[i].name);
		free(k->part[i].topology);
		free(k->part[i].file);
	}
	free(k->part);
	for (int i = 0; i < k->nnode_topo; i++) {
		free(k->node_topo[i].nodes);
		free(k->node_topo[i].topology);
		free(k->node_topo[i].file);
	}
	free(k->node_topo);
	free(k->default_node_topology);
	memset(k, 0, sizeof *k);
}

int tp__slurm_conf_keys(const char *slurm_conf, struct tp__slurm_keys *k,
			tp_error *err)
{
	memset(k, 0, sizeof *k);
	struct sc_nodes s;
	memset(&s, 0, sizeof s);
	s.err = err;
	s.keys = k;
	int rc = read_all(&s, slurm_conf);
	if (rc)
		tp__slurm_keys_free(k);
	return rc;
}
