/* topoplace — Slurm's topology.conf into records.
 *
 * One file, three syntaxes, one per topology plugin (topology.conf(5)):
 *
 *   SwitchName=s0 Nodes=tux[0-15]        topology/tree
 *   BlockName=b0 Nodes=gb[001-018]       topology/block
 *   BlockSizes=18,36
 *   RingName=r0 Nodes=node[01-08]        topology/ring (26.05)
 *
 * Each reader takes the lines as slurmctld's parser (s_p_parse_file) takes
 * them, refuses what it refuses, warns where it warns, and returns the
 * records (slurm_topo.h) for the network kind that builds the machine:
 * tree.c, block.c, ring.c, which take topology.yaml's records
 * (slurm_yaml.c) alike.  So the syntax lives here, as Slurm keeps its
 * switch_record.c apart from topology_tree.c, and the network's rules and
 * functions in net/.  Messages name the file, the line and the key.
 */
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "net/machine_internal.h"
#include "net/records.h"
#include "util/hostlist.h"
#include "util/util_internal.h"
#include "slurm/slurm_topo.h"

/* ---- topology/tree: SwitchName= lines ----
 *
 * SwitchName= first on its line (Slurm's parser takes the line by its first
 * key), then Nodes= or Switches=, and LinkSpeed=, which Slurm checks and
 * topoplace ignores.  A key given twice on a line keeps the last value, with
 * one warning for the file, as slurmctld logs it.  What a switch may hold
 * and how switches join is net/tree_build.c's (the same rules for
 * topology.yaml). */

struct tree_reader {
	const char *what;
	tp_error *err;
	struct tp__warnings *warn;
	struct tp__topo_rec *rec;    /* strings owned */
	int32_t n, cap;
	/* lines with a key given twice (Slurm keeps the last): how many, the
	 * first and its key */
	int32_t twice, twice_line;
	char twice_key[16];
};

/* LinkSpeed= as Slurm reads it (s_p_handle_uint32): strtoul's decimal,
 * 0x hexadecimal or 0 octal, times 1024 with a k, at most 2^32 - 1, or
 * UNLIMITED / INFINITE.  topoplace ignores the value, but a line Slurm
 * refuses is refused. */
static bool link_speed_ok(const char *v)
{
	if (!strcasecmp(v, "UNLIMITED") || !strcasecmp(v, "INFINITE"))
		return true;
	if (v[0] == '-')
		return false;
	errno = 0;
	char *end;
	unsigned long long x = strtoull(v, &end, 0);
	if (end == v || errno == ERANGE)
		return false;
	if (*end == 'k' || *end == 'K') {
		if (x > UINT32_MAX / 1024)
			return false;
		x *= 1024;
		end++;
	}
	return *end == '\0' && x <= UINT32_MAX;
}

/* One line: SwitchName= first (Slurm's parser takes the line by its first
 * key), then Nodes=, Switches=, LinkSpeed= in any order. */
static int tree_line(void *arg, char *s, int line)
{
	struct tree_reader *c = arg;
	char *save = NULL;
	const char *name = NULL, *nodes = NULL, *switches = NULL, *first = NULL;
	bool twice = false;
	for (char *tok = strtok_r(s, " \t\r", &save); tok;
	     tok = strtok_r(NULL, " \t\r", &save)) {
		char *eq = strchr(tok, '=');
		if (!eq || eq == tok)
			return tp__line_error(c->err, c->what, line, TP_EINVAL,
					      "'%s': expected Key=Value", tok);
		*eq = '\0';
		const char *v = eq + 1;
		const char **slot, *speed = NULL;
		if (!first)
			first = tok;
		if (!strcasecmp(tok, "SwitchName"))
			slot = &name;
		else if (!strcasecmp(tok, "Nodes"))
			slot = &nodes;
		else if (!strcasecmp(tok, "Switches"))
			slot = &switches;
		else if (!strcasecmp(tok, "LinkSpeed"))
			slot = &speed;
		else
			return tp__line_error(c->err, c->what, line, TP_EINVAL,
					      "unknown key '%s' (expected SwitchName=, Nodes=, Switches=, LinkSpeed=)",
					      tok);
		if (!*v)
			return tp__line_error(c->err, c->what, line, TP_EINVAL,
					      "%s=: empty value", tok);
		if (slot == &name && name)
			return tp__line_error(c->err, c->what, line, TP_EINVAL,
					      "SwitchName= given twice (one switch per line)");
		if (slot == &speed && !link_speed_ok(v))
			return tp__line_error(c->err, c->what, line, TP_EINVAL,
					      "LinkSpeed=%s: not a number (Slurm refuses the line)", v);
		/* Slurm: "%s 1 specified more than once, latest value used" */
		if (*slot && !twice) {
			twice = true;
			if (c->twice++ == 0) {
				c->twice_line = line;
				snprintf(c->twice_key, sizeof c->twice_key, "%s", tok);
			}
		}
		*slot = v;
	}
	if (!first)
		return 0;
	if (!name)
		return tp__line_error(c->err, c->what, line, TP_EINVAL,
				      "%s= without SwitchName=", first);
	if (strcasecmp(first, "SwitchName"))
		return tp__line_error(c->err, c->what, line, TP_EINVAL,
				      "SwitchName= comes first on its line (Slurm refuses the line)");
	if (c->n == c->cap) {
		int32_t nc = c->cap ? c->cap * 2 : 64;
		struct tp__topo_rec *n = realloc(c->rec, sizeof *n * (size_t)nc);
		if (!n)
			return tp__line_error(c->err, c->what, 0, TP_ENOMEM, "out of memory");
		c->rec = n;
		c->cap = nc;
	}
	struct tp__topo_rec *r = &c->rec[c->n++];
	r->line = line;
	r->name = strdup(name);
	r->nodes = nodes ? strdup(nodes) : NULL;
	r->switches = switches ? strdup(switches) : NULL;
	if (!r->name || (nodes && !r->nodes) || (switches && !r->switches))
		return tp__line_error(c->err, c->what, 0, TP_ENOMEM, "out of memory");
	return 0;
}

/* topology.conf's SwitchName= lines of text into c's records (warnings,
 * a key given twice, to warn); tp__conf_records_free frees them. */
static int tree_records(struct tree_reader *c, const char *text, const char *what,
			struct tp__warnings *warn, tp_error *err)
{
	memset(c, 0, sizeof *c);
	c->what = what;
	c->err = err;
	c->warn = warn;
	int rc = tp__each_conf_line(text, what, err, tree_line, c);
	if (!rc && c->twice) {
		char more[64] = "";
		if (c->twice > 1)
			snprintf(more, sizeof more, " (and %ld more)", (long)c->twice - 1);
		tp__warn(c->warn, "%s:%d: %s= given twice on the line%s; Slurm uses the last, as topoplace does",
			 what, c->twice_line, c->twice_key, more);
	}
	return rc;
}

/* The reader alone (slurm_topo.h): the caller builds the tree. */
int tp__tree_conf_records(const char *text, const char *what,
			  struct tp__warnings *warn, struct tp__conf_records *out,
			  tp_error *err)
{
	memset(out, 0, sizeof *out);
	struct tree_reader c;
	int rc = tree_records(&c, text, what, warn, err);
	out->rec = c.rec;
	out->n = c.n;
	return rc;
}

void tp__conf_records_free(struct tp__conf_records *r)
{
	for (int32_t i = 0; i < r->n; i++) {
		free((char *)r->rec[i].name);
		free((char *)r->rec[i].nodes);
		free((char *)r->rec[i].switches);
	}
	free(r->rec);
	memset(r, 0, sizeof *r);
}

/* ---- topology/block: BlockName= and BlockSizes= lines ----
 *
 * As slurmctld reads the file (s_p_parse_file): a line is Key=Value pairs;
 * BlockName= starts a block, the Nodes= right after it are that block's
 * (so two BlockName= on a line are two blocks; a Nodes= after another key
 * is refused); a key given twice keeps the last value, with a warning
 * (Slurm logs "specified more than once, latest value used"). */

struct block_reader {
	const char *what;
	tp_error *err;
	struct tp__warnings *warn;
	char **name, **nodes;   /* each block's, owned */
	int *line;
	int32_t n, cap;
	struct tp__block_sizes sizes;
	unsigned levels;        /* BlockLevels=: bit k, level k */
	int levels_line;        /* 0: not given */
};

#define berr(c, line, ...) \
	tp__line_error((c)->err, (c)->what, (line), TP_EINVAL, __VA_ARGS__)

static int conf_block(struct block_reader *c, const char *name, int line)
{
	if (c->n == c->cap) {
		int32_t nc = c->cap ? c->cap * 2 : 16;
		char **nn = realloc(c->name, sizeof *nn * (size_t)nc);
		if (nn)
			c->name = nn;
		char **nd = nn ? realloc(c->nodes, sizeof *nd * (size_t)nc) : NULL;
		if (nd)
			c->nodes = nd;
		int *nl = nd ? realloc(c->line, sizeof *nl * (size_t)nc) : NULL;
		if (!nl)
			return tp__line_error(c->err, c->what, 0, TP_ENOMEM, "out of memory");
		c->line = nl;
		c->cap = nc;
	}
	c->nodes[c->n] = NULL;
	c->line[c->n] = line;
	if (!(c->name[c->n++] = strdup(name)))
		return tp__line_error(c->err, c->what, 0, TP_ENOMEM, "out of memory");
	return 0;
}

/* BlockSizes=: node counts separated by commas (empty fields skipped, as
 * Slurm's strtok does; a repeat only sets its level again, so it is
 * dropped).  Checked against the base size by size_levels. */
static int conf_sizes(struct block_reader *c, const char *v, int line)
{
	struct tp__block_sizes *s = &c->sizes;
	const int max = (int)(sizeof s->size / sizeof s->size[0]);
	if (s->line)
		tp__warn(c->warn, "%s:%d: BlockSizes= given twice (first on line %d); "
			 "the last one counts, as in Slurm", c->what, line, s->line);
	s->n = 0;
	s->line = line;
	for (const char *f = v; *f;) {
		if (*f == ',') {
			f++;
			continue;
		}
		char *end;
		long x = strtol(f, &end, 10);
		if (end == f || (*end && *end != ',') || x < 1 || x > INT_MAX)
			return berr(c, line, "BlockSizes=%s: expected node counts separated "
				    "by commas", v);
		f = end;
		int i = 0;
		while (i < s->n && s->size[i] != x)
			i++;
		if (i < s->n)
			continue;
		if (s->n == max)
			return berr(c, line, "BlockSizes=%s: more than %d different sizes",
				    v, max);
		s->size[s->n++] = (int)x;
	}
	if (!s->n)
		return berr(c, line, "BlockSizes=%s: expected node counts separated by "
			    "commas", v);
	return 0;
}

/* BlockLevels= (Slurm 23.11, replaced by BlockSizes= in 24.11): the
 * enforced levels, 0 to 15, level k being 2^k base blocks, as a list with
 * ranges ("0-1,2"), or as 23.11's bit_unfmt also reads, "A-B:S": A, A+S,
 * ... below B (Slurm's loop leaves B out). */
static int conf_levels(struct block_reader *c, const char *v, int line)
{
	if (c->levels_line)
		tp__warn(c->warn, "%s:%d: BlockLevels= given twice (first on line %d); "
			 "the last one counts, as in Slurm", c->what, line, c->levels_line);
	unsigned mask = 0;
	bool ok = true;
	const char *f = v;
	char *end;
	if (strchr(v, ':')) {
		long a = strtol(f, &end, 10), b = -1, st = 0;
		ok = end > f && *end == '-';
		if (ok) {
			f = end + 1;
			b = strtol(f, &end, 10);
			ok = end > f && *end == ':';
		}
		if (ok) {
			f = end + 1;
			st = strtol(f, &end, 10);
			ok = end > f && !*end && a >= 0 && b >= a && st > 0;
		}
		for (long i = a; ok && i < b; i += st) {
			ok = i <= TP__BLOCK_MAX_LEVEL;
			mask |= ok ? 1u << i : 0;
		}
	} else {
		while (ok && *f) {
			long a = strtol(f, &end, 10), b;
			ok = end > f && a >= 0;
			b = a;
			if (ok && *end == '-') {
				f = end + 1;
				b = strtol(f, &end, 10);
				ok = end > f;
			}
			ok = ok && b >= a && b <= TP__BLOCK_MAX_LEVEL && (!*end || *end == ',');
			for (long i = a; ok && i <= b; i++)
				mask |= 1u << i;
			f = *end ? end + 1 : end;
		}
	}
	if (!ok)
		return berr(c, line, "BlockLevels=%s: expected levels 0..%d separated by "
			    "commas (ranges such as 0-2 allowed)", v, TP__BLOCK_MAX_LEVEL);
	c->levels = mask;
	c->levels_line = line;
	return 0;
}

static int block_line(void *arg, char *s, int line)
{
	struct block_reader *c = arg;
	int32_t cur = -1;           /* the block this line's Nodes= belong to */
	const char *after = NULL;   /* the key that ended it */
	char *save = NULL;
	for (char *tok = strtok_r(s, " \t\r", &save); tok;
	     tok = strtok_r(NULL, " \t\r", &save)) {
		char *eq = strchr(tok, '=');
		if (!eq || eq == tok)
			return berr(c, line, "'%s': expected Key=Value", tok);
		*eq = '\0';
		const char *v = eq + 1;
		if (!*v)
			return berr(c, line, "%s=: empty value", tok);
		int rc = 0;
		if (!strcasecmp(tok, "BlockName")) {
			rc = conf_block(c, v, line);
			cur = c->n - 1;
		} else if (!strcasecmp(tok, "Nodes")) {
			if (cur < 0 && after)
				return berr(c, line, "Nodes= after %s=: Slurm reads Nodes= only "
					    "right after its BlockName=", after);
			if (cur < 0)
				return berr(c, line, "Nodes= without BlockName=");
			if (c->nodes[cur]) {
				tp__warn(c->warn, "%s:%d: BlockName=%s: Nodes= given twice; "
					 "the last one counts, as in Slurm", c->what, line,
					 c->name[cur]);
				free(c->nodes[cur]);
			}
			if (!(c->nodes[cur] = strdup(v)))
				rc = tp__line_error(c->err, c->what, 0, TP_ENOMEM,
						    "out of memory");
		} else if (!strcasecmp(tok, "BlockSizes")) {
			cur = -1;
			after = "BlockSizes";
			rc = conf_sizes(c, v, line);
		} else if (!strcasecmp(tok, "BlockLevels")) {
			cur = -1;
			after = "BlockLevels";
			rc = conf_levels(c, v, line);
		} else {
			return berr(c, line, "unknown key '%s' (expected BlockName=, Nodes=, "
				    "BlockSizes=, BlockLevels=)%s", tok,
				    !strcasecmp(tok, "SwitchName")
				    ? "; a switch tree goes in a file of its own" : "");
		}
		if (rc)
			return rc;
	}
	return 0;
}

/* BlockLevels= into block sizes.  A file with it is read by Slurm 23.11
 * only, whose rules are stricter: every block has Nodes= and the node
 * count of the first (the base size).  Levels whose size would pass
 * INT_MAX are dropped: they are above the first level that holds every
 * block (the blocks hold at most 2^18 nodes), which draws the same tree. */
static int conf_block_levels(struct block_reader *c)
{
	if (!c->levels_line)
		return 0;
	if (c->sizes.line)
		return berr(c, c->levels_line > c->sizes.line ? c->levels_line : c->sizes.line,
			    "BlockLevels= (line %d, Slurm 23.11) and BlockSizes= (line %d, "
			    "Slurm 24.11 and later): no Slurm release reads both",
			    c->levels_line, c->sizes.line);
	int64_t base = 0;
	for (int32_t b = 0; b < c->n; b++) {
		if (!c->nodes[b])
			return berr(c, c->line[b], "BlockName=%s without Nodes= (Slurm 23.11, "
				    "which reads BlockLevels=, wants one)", c->name[b]);
		char what[TP_ERROR_MSG_MAX / 2];
		snprintf(what, sizeof what, "BlockName=%s Nodes=%s", c->name[b], c->nodes[b]);
		struct tp__hostlist *hl = NULL;
		int64_t cnt = 0;
		tp_error e;
		tp_error_clear(&e);
		int rc = tp__hostlist_parse(c->nodes[b], what, TP__BLOCK_MAX_NODES,
					    "the most nodes a block network may have", &hl,
					    &cnt, &e);
		if (hl)
			tp__hostlist_free(hl);
		if (rc)
			return tp__line_error(c->err, c->what, c->line[b], rc, "%s", e.msg);
		if (!b)
			base = cnt;
		else if (cnt != base)
			return berr(c, c->line[b], "BlockName=%s has %lld node%s, BlockName=%s "
				    "%lld: Slurm 23.11 (BlockLevels=) wants blocks of one size",
				    c->name[b], (long long)cnt, cnt == 1 ? "" : "s", c->name[0],
				    (long long)base);
	}
	if (!base)
		return 0;            /* no blocks: said by the builder */
	c->sizes.size[0] = (int)base;
	c->sizes.n = 1;
	c->sizes.line = c->levels_line;
	for (int l = 1; l <= TP__BLOCK_MAX_LEVEL; l++)
		if (c->levels >> l & 1 && base << l <= INT_MAX)
			c->sizes.size[c->sizes.n++] = (int)(base << l);
	return 0;
}

/* The reader alone (slurm_topo.h): BlockName= lines and the block sizes
 * into out; the caller builds the blocks. */
int tp__block_conf_records(const char *text, const char *what,
			   struct tp__warnings *warn, struct tp__conf_records *out,
			   tp_error *err)
{
	memset(out, 0, sizeof *out);
	struct block_reader c;
	memset(&c, 0, sizeof c);
	c.what = what;
	c.err = err;
	c.warn = warn;
	int rc = tp__each_conf_line(text, what, err, block_line, &c);
	if (!rc)
		rc = conf_block_levels(&c);
	struct tp__topo_rec *rec = rc ? NULL : tp__calloc((size_t)c.n + 1, sizeof *rec);
	if (!rc && !rec)
		rc = tp_error_set(err, TP_ENOMEM, "%s: out of memory", what);
	for (int32_t b = 0; !rc && b < c.n; b++)
		rec[b] = (struct tp__topo_rec){ c.name[b], c.nodes[b], NULL, c.line[b] };
	if (!rc) {   /* the strings go with the records */
		out->rec = rec;
		out->n = c.n;
		out->sizes = c.sizes;
	} else {
		free(rec);
		for (int32_t b = 0; b < c.n; b++) {
			free(c.name[b]);
			free(c.nodes[b]);
		}
	}
	free(c.name);
	free(c.nodes);
	free(c.line);
	return rc;
}

/* ---- topology.conf's records kept (slurm_topology.c) ----
 *
 * The tree's or blocks' records of topology.conf into topology t of s
 * (strings owned by s), so that slurm.conf's Topology= and slurmctld's
 * live view join nodes to them as to topology.yaml's.  Warnings go to
 * warn; on an error t is left without records (the text is then built as
 * it is, and the builder says the error). */
int tp__topology_conf_records(const char *text, const char *what,
			      struct tp__stopo_set *s, struct tp__stopo *t,
			      struct tp__warnings *warn, tp_error *err)
{
	int rc;
	int32_t n = 0;
	struct tp__topo_rec *rec = NULL;
	if (t->kind == TP__STOPO_TREE) {
		struct tree_reader c;
		memset(&c, 0, sizeof c);
		c.what = what;
		c.err = err;
		c.warn = warn;
		rc = tp__each_conf_line(text, what, err, tree_line, &c);
		if (!rc && c.twice) {
			char more[64] = "";
			if (c.twice > 1)
				snprintf(more, sizeof more, " (and %ld more)", (long)c.twice - 1);
			tp__warn(c.warn, "%s:%d: %s= given twice on the line%s; Slurm uses the last, as topoplace does",
				 what, c.twice_line, c.twice_key, more);
		}
		rec = c.rec;
		n = c.n;
	} else if (t->kind == TP__STOPO_BLOCK) {
		struct block_reader c;
		memset(&c, 0, sizeof c);
		c.what = what;
		c.err = err;
		c.warn = warn;
		rc = tp__each_conf_line(text, what, err, block_line, &c);
		if (!rc)
			rc = conf_block_levels(&c);
		rec = tp__calloc((size_t)c.n + 1, sizeof *rec);
		if (!rec && !rc)
			rc = tp_error_set(err, TP_ENOMEM, "%s: out of memory", what);
		for (int32_t b = 0; rec && b < c.n; b++)
			rec[b] = (struct tp__topo_rec){ c.name[b], c.nodes[b], NULL, c.line[b] };
		if (!rec) {
			for (int32_t b = 0; b < c.n; b++) {
				free(c.name[b]);
				free(c.nodes[b]);
			}
		}
		n = rec ? c.n : 0;
		t->sizes = c.sizes;
		free(c.name);
		free(c.nodes);
		free(c.line);
	} else {
		return TP_OK;
	}
	/* the strings to the set, every one (so that nothing leaks on an
	 * error), then the array to t */
	bool kept = true;
	for (int32_t i = 0; i < n; i++) {
		char *name = (char *)rec[i].name, *nodes = (char *)rec[i].nodes,
		     *sw = (char *)rec[i].switches;
		rec[i].name = name ? tp__stopo_own(s, name) : NULL;
		rec[i].nodes = nodes ? tp__stopo_own(s, nodes) : NULL;
		rec[i].switches = sw ? tp__stopo_own(s, sw) : NULL;
		kept = kept && (!name || rec[i].name) && (!nodes || rec[i].nodes) &&
		       (!sw || rec[i].switches);
	}
	if (!rc && !kept)
		rc = tp_error_set(err, TP_ENOMEM, "%s: out of memory", what);
	if (rc) {
		free(rec);
		t->sizes = (struct tp__block_sizes){ 0 };
		return rc;
	}
	t->rec = rec;
	t->nrec = n;
	return TP_OK;
}

/* ---- topology/ring: RingName= lines ----
 *
 * As Slurm's parser reads them (parse_config.c, RingName= the line's first
 * key, Nodes= read from the rest): keys in any case, blanks
 * allowed around '=', a value "in quotes" may hold blanks (Nodes="" is an
 * empty ring); a Nodes= given twice Slurm logs as an error and takes the
 * latest, topoplace too, with a warning; an unknown key, a second
 * RingName= on a line or a line not starting with RingName= Slurm refuses.
 */

struct ring_reader {
	const char *what;
	tp_error *err;
	struct tp__warnings *warn;
	struct tp__topo_rec *rec;
	size_t n, cap;
};

static bool blank(int c)
{
	return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f';
}

/* The next Key=Value of a line as Slurm's parser matches it: a key of
 * letters, digits, '_' and '.'; blanks around '='; an operator (+ - * /)
 * before it, which string values ignore; a value "in quotes" (blanks
 * allowed) or up to the next blank.  1 with *key and *val (terminated in
 * place), 0 at the end of the line, -1 with *s at what does not match. */
static int next_pair(char **s, char **key, char **val)
{
	char *q = *s;
	while (blank(*q))
		q++;
	*s = q;
	if (!*q)
		return 0;
	char *k = q;
	while (isalnum((unsigned char)*q) || *q == '_' || *q == '.')
		q++;
	char *kend = q;
	while (blank(*q))
		q++;
	if (*q && strchr("+-*/", *q) && q[1] == '=')
		q++;
	if (kend == k || *q != '=')
		return -1;
	q++;
	while (blank(*q))
		q++;
	char *v = q, *vend;
	if (*q == '"' && strchr(q + 1, '"')) {
		v = q + 1;
		vend = strchr(v, '"');
		q = vend + 1;
	} else {
		while (*q && !blank(*q))
			q++;
		vend = q;
		if (vend == v)
			return -1;      /* "Nodes=" without a value */
	}
	if (*q && !blank(*q))
		return -1;
	char *next = *q ? q + 1 : q;
	*kend = '\0';
	*vend = '\0';
	*key = k;
	*val = v;
	*s = next;
	return 1;
}

static int bad_pair(struct ring_reader *c, const char *s, int line)
{
	size_t len = 0;
	while (s[len] && !blank(s[len]))
		len++;
	return tp__line_error(c->err, c->what, line, TP_EINVAL,
			      "'%.*s': expected Key=Value (RingName=NAME Nodes=HOSTLIST)",
			      (int)(len > 200 ? 200 : len), s);
}

static int ring_line(void *arg, char *s, int line)
{
	struct ring_reader *c = arg;
	char *key, *val;
	int k = next_pair(&s, &key, &val);
	if (k == 0)
		return 0;
	if (k < 0)
		return bad_pair(c, s, line);
	if (!strcasecmp(key, "Nodes"))
		return tp__line_error(c->err, c->what, line, TP_EINVAL,
				      "Nodes= before RingName= (Slurm reads each line from "
				      "its RingName=)");
	if (strcasecmp(key, "RingName")) {
		bool other = !strcasecmp(key, "SwitchName") || !strcasecmp(key, "BlockName") ||
			     !strcasecmp(key, "BlockSizes");
		return tp__line_error(c->err, c->what, line, TP_EINVAL,
				      "unknown key '%s' (expected RingName=, Nodes=)%s", key,
				      other ? "; a topology/ring file holds rings only" : "");
	}
	if (!*val)
		return tp__line_error(c->err, c->what, line, TP_EINVAL, "RingName=: empty value");
	const char *name = val, *nodes = NULL;
	while ((k = next_pair(&s, &key, &val)) > 0) {
		if (!strcasecmp(key, "Nodes")) {
			if (nodes)
				tp__warn(c->warn, "%s:%d: RingName=%s: Nodes= given twice; the "
					 "latest value is used, as in Slurm", c->what, line, name);
			nodes = val;
		} else if (!strcasecmp(key, "RingName")) {
			return tp__line_error(c->err, c->what, line, TP_EINVAL,
					      "RingName= given twice (one ring per line)");
		} else {
			return tp__line_error(c->err, c->what, line, TP_EINVAL,
					      "RingName=%s: unknown key '%s' (expected Nodes=)",
					      name, key);
		}
	}
	if (k < 0)
		return bad_pair(c, s, line);
	if (c->n == TP__MAX_RINGS)
		return tp__line_error(c->err, c->what, line, TP_EINVAL,
				      "more than %d rings (Slurm numbers rings in 16 bits)",
				      TP__MAX_RINGS);
	if (tp__grow((void **)&c->rec, c->n, &c->cap, sizeof *c->rec))
		return tp__line_error(c->err, c->what, 0, TP_ENOMEM, "out of memory");
	struct tp__topo_rec *rec = &c->rec[c->n];
	memset(rec, 0, sizeof *rec);
	rec->line = line;
	rec->name = strdup(name);
	rec->nodes = nodes ? strdup(nodes) : NULL;
	c->n++;
	if (!rec->name || (nodes && !rec->nodes))
		return tp__line_error(c->err, c->what, 0, TP_ENOMEM, "out of memory");
	return 0;
}

/* The reader alone (slurm_topo.h): the caller builds the rings. */
int tp__ring_conf_records(const char *text, const char *what,
			  struct tp__warnings *warn, struct tp__conf_records *out,
			  tp_error *err)
{
	memset(out, 0, sizeof *out);
	if (!what)
		what = "topology.conf";
	if (!text)
		return tp_error_set(err, TP_EINVAL, "%s: missing text or output", what);
	struct ring_reader c = { what, err, warn, NULL, 0, 0 };
	int rc = tp__each_conf_line(text, what, err, ring_line, &c);
	/* c.n <= TP__MAX_RINGS (ring_line) */
	out->rec = c.rec;
	out->n = (int32_t)c.n;
	return rc;
}
