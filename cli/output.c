/* topoplace — output of the command line: JSON documents, text tables and
 * atomic file writes. */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"

/* ---- JSON ---- */

int cli_json_put(json_object *obj, const char *key, json_object *val)
{
	if (!val)
		return -1;
	if (json_object_object_add(obj, key, val) < 0) {
		json_object_put(val);
		return -1;
	}
	return 0;
}

json_object *cli_json_double(double d)
{
	if (!isfinite(d))
		return NULL; /* json-c: a NULL value serialises as null */
	/* Shortest %g text that reads back to the same double, so documents
	 * stay readable ("1.5", not "1.5000000000000000") yet exact. */
	char buf[40];
	if (d == floor(d) && fabs(d) < 1e15) {
		/* Integral: in full, and still a floating-point number ("10.0"). */
		snprintf(buf, sizeof buf, "%.1f", d);
		if (!strcmp(buf, "-0.0"))
			snprintf(buf, sizeof buf, "0.0");
	} else {
		for (int prec = 1; prec <= 17; prec++) {
			snprintf(buf, sizeof buf, "%.*g", prec, d);
			if (strtod(buf, NULL) == d)
				break;
		}
	}
	return json_object_new_double_s(d, buf);
}

json_object *cli_json_ms(double ms)
{
	/* Microseconds are all the precision a wall-clock time deserves. */
	return cli_json_double(round(ms * 1e3) / 1e3);
}

/* Adds key -> val (val may be NULL for null).  Returns -1 on failure, having
 * freed val. */
static int add(json_object *obj, const char *key, json_object *val,
	       bool may_be_null)
{
	if (!val && !may_be_null)
		return -1;
	if (json_object_object_add(obj, key, val) < 0) {
		json_object_put(val);
		return -1;
	}
	return 0;
}

json_object *cli_metrics_json(const tp_metrics *m)
{
	json_object *o = json_object_new_object();
	if (!o)
		return NULL;
	int bad = 0;
	bad |= add(o, "nedges", json_object_new_int64(m->nedges), false);
	bad |= add(o, "total_bytes", cli_json_double(m->total_bytes), true);
	bad |= add(o, "hop_bytes", cli_json_double(m->hop_bytes), true);
	bad |= add(o, "avg_hop_bytes", cli_json_double(m->avg_hop_bytes), true);
	bad |= add(o, "avg_dilation", cli_json_double(m->avg_dilation), true);
	bad |= add(o, "max_dilation", json_object_new_int64(m->max_dilation),
		   false);
	bad |= add(o, "max_congestion_bytes",
		   cli_json_double(m->max_congestion_bytes), true);
	bad |= add(o, "max_congestion_msgs",
		   json_object_new_int64(m->max_congestion_msgs), false);
	bad |= add(o, "frac_intra_node", cli_json_double(m->frac_intra_node),
		   true);
	bad |= add(o, "frac_intra_router",
		   cli_json_double(m->frac_intra_router), true);
	if (bad) {
		json_object_put(o);
		return NULL;
	}
	return o;
}

/* {"tp": {"us": X, "block_us": Y}, ...}: every phase, in the order a
 * step runs them (tp_step_phase_name). */
static json_object *phases_json(const double *us, const double *block_us)
{
	json_object *o = json_object_new_object();
	for (int i = 0; o && i < TP_STEP_PHASES; i++) {
		json_object *ph = json_object_new_object();
		int bad = !ph || add(ph, "us", cli_json_double(us[i]), true) ||
			  add(ph, "block_us", cli_json_double(block_us[i]), true);
		if (bad || add(o, tp_step_phase_name(i), ph, false)) {
			if (bad)
				json_object_put(ph);
			json_object_put(o);
			return NULL;
		}
	}
	return o;
}

json_object *cli_predicted_json(const tp_prediction *p, const tp_prediction *pb,
				const double *phases, const double *phases_b)
{
	json_object *o = json_object_new_object();
	if (!o)
		return NULL;
	int bad = 0;
	bad |= add(o, "exchange_us", cli_json_double(p->exchange_us), true);
	bad |= add(o, "block_exchange_us", cli_json_double(pb->exchange_us), true);
	bad |= add(o, "ratio", cli_json_double(pb->exchange_us > 0 ? p->exchange_us /
					       pb->exchange_us : 1), true);
	bad |= add(o, "bound_us", cli_json_double(p->bound_us), true);
	bad |= add(o, "block_bound_us", cli_json_double(pb->bound_us), true);
	bad |= add(o, "bound_only", json_object_new_boolean(p->bound_only ||
							    pb->bound_only), false);
	bad |= add(o, "messages", json_object_new_int64(p->messages), false);
	bad |= add(o, "flows", json_object_new_int64(p->flows), false);
	bad |= add(o, "rounds", json_object_new_int(p->rounds), false);
	if (phases && phases_b)
		bad |= add(o, "phases", phases_json(phases, phases_b), false);
	if (bad) {
		json_object_put(o);
		return NULL;
	}
	return o;
}

json_object *cli_report_json(const tp_geom_report *r)
{
	json_object *o = json_object_new_object();
	if (!o)
		return NULL;
	int bad = 0;
	bad |= add(o, "variants_total", json_object_new_int(r->variants_total),
		   false);
	bad |= add(o, "variants_scored",
		   json_object_new_int(r->variants_scored), false);
	bad |= add(o, "best_variant", json_object_new_int(r->best_variant),
		   false);
	char desc[sizeof r->best_desc + 1];
	memcpy(desc, r->best_desc, sizeof r->best_desc);
	desc[sizeof r->best_desc] = '\0';
	bad |= add(o, "best_desc", json_object_new_string(desc), false);
	bad |= add(o, "best_score", cli_json_double(r->best_score), true);
	bad |= add(o, "budget_hit", json_object_new_boolean(r->budget_hit),
		   false);
	bad |= add(o, "subset_selected",
		   json_object_new_boolean(r->subset_selected), false);
	bad |= add(o, "shifted_dims", json_object_new_int(r->shifted_dims),
		   false);
	bad |= add(o, "default_kept",
		   json_object_new_boolean(r->default_kept), false);
	bad |= add(o, "elapsed_ms", cli_json_ms(r->elapsed_ms), true);
	if (bad) {
		json_object_put(o);
		return NULL;
	}
	return o;
}

/* ---- files ---- */

static int write_all(int fd, const char *p, size_t len)
{
	while (len > 0) {
		ssize_t w = write(fd, p, len);
		if (w < 0) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		p += w;
		len -= (size_t)w;
	}
	return 0;
}

struct bytes {
	const char *p;
	size_t len;
};

static int emit_bytes(int fd, void *arg)
{
	const struct bytes *b = arg;
	return write_all(fd, b->p, b->len);
}

/* Write to path atomically what emit writes: a temporary file next to it,
 * then rename, so that readers see the old file or the whole new one,
 * never a part. */
int cli_write_with(const char *path, int (*emit)(int fd, void *arg), void *arg)
{
	if (!path) {
		if (fflush(stdout) != 0 || emit(STDOUT_FILENO, arg) < 0)
			return cli_fail("standard output: write error");
		return CLI_EXIT_OK;
	}
	/* A device, FIFO or socket (/dev/stdout, /dev/null, a pipe) is written
	 * in place: renaming over it would replace the device node itself. */
	struct stat st;
	if (stat(path, &st) == 0 && !S_ISREG(st.st_mode)) {
		int fd = open(path, O_WRONLY | O_CLOEXEC);
		if (fd < 0 || emit(fd, arg) < 0) {
			int e = errno;
			if (fd >= 0)
				close(fd);
			return cli_fail("%s: cannot write: %s", path, strerror(e));
		}
		close(fd);
		return CLI_EXIT_OK;
	}
	size_t n = strlen(path);
	char *tmp = malloc(n + sizeof ".tmpXXXXXX");
	if (!tmp)
		return cli_fail("out of memory");
	memcpy(tmp, path, n);
	memcpy(tmp + n, ".tmpXXXXXX", sizeof ".tmpXXXXXX");

	int fd = mkstemp(tmp);
	if (fd < 0) {
		int e = errno;
		free(tmp);
		return cli_fail("%s: cannot create: %s", path, strerror(e));
	}
	/* mkstemp makes the file 0600; give it the usual 0666 & ~umask. */
	mode_t mask = umask(0);
	umask(mask);
	int e = 0;
	if (fchmod(fd, 0666 & ~mask) < 0 || emit(fd, arg) < 0 || fsync(fd) < 0)
		e = errno ? errno : EIO;
	if (close(fd) < 0 && !e)
		e = errno;
	if (!e && rename(tmp, path) < 0)
		e = errno;
	if (e) {
		unlink(tmp);
		free(tmp);
		return cli_fail("%s: cannot write: %s", path, strerror(e));
	}
	free(tmp);
	return CLI_EXIT_OK;
}

int cli_write_text(const char *buf, size_t len, const char *path)
{
	struct bytes b = { buf, len };
	return cli_write_with(path, emit_bytes, &b);
}

int cli_write_json(json_object *doc, const char *path)
{
	size_t len = 0;
	const char *s = json_object_to_json_string_length(doc, CLI_JSON_FLAGS,
							   &len);
	if (!s)
		return cli_fail("out of memory");
	if (path) {
		char *buf = malloc(len + 2);
		if (!buf)
			return cli_fail("out of memory");
		memcpy(buf, s, len);
		buf[len] = '\n';
		buf[len + 1] = '\0';
		int rc = cli_write_text(buf, len + 1, path);
		free(buf);
		return rc;
	}
	if (fwrite(s, 1, len, stdout) != len || putchar('\n') == EOF ||
	    fflush(stdout) != 0 || ferror(stdout))
		return cli_fail("standard output: write error");
	return CLI_EXIT_OK;
}

/* ---- text tables ---- */

/* An amount of bytes: integral values in full, others with 6 digits. */
static void fmt_amount(char *buf, size_t len, double v)
{
	if (!isfinite(v))
		snprintf(buf, len, "-");
	else if (v == floor(v) && fabs(v) < 1e15)
		snprintf(buf, len, "%.0f", v);
	else
		snprintf(buf, len, "%.6g", v);
}

static void fmt_ratio(char *buf, size_t len, double v)
{
	if (!isfinite(v))
		snprintf(buf, len, "-");
	else
		snprintf(buf, len, "%.4f", v);
}

void cli_print_compare(FILE *f, const struct cli_row *rows, int nrows)
{
	const tp_metrics *base = nrows > 0 ? rows[0].m : NULL;
	char vs[32];
	snprintf(vs, sizeof vs, "vs-%s", nrows > 0 ? rows[0].label : "");
	int w = 10;                 /* the policy column fits its longest name */
	for (int i = 0; i < nrows; i++)
		if ((int)strlen(rows[i].label) > w)
			w = (int)strlen(rows[i].label);
	fprintf(f, "%-*s %13s %14s %9s %8s %15s %10s %12s\n", w, "policy",
		"avg-hops/byte", "hop-bytes", vs, "max-dil", "max-congestion",
		"intra-node", "intra-router");
	for (int i = 0; i < nrows; i++) {
		const tp_metrics *m = rows[i].m;
		if (!m) {
			fprintf(f, "%-*s %13s %14s %9s %8s %15s %10s %12s\n",
				w, rows[i].label, "n/a", "", "", "", "", "", "");
			continue;
		}
		char avg[32], rel[32], hb[32], cong[32], intra[32], router[32];
		fmt_ratio(avg, sizeof avg, m->avg_hop_bytes);
		if (base && base->hop_bytes > 0)
			snprintf(rel, sizeof rel, "%.1f%%",
				 100.0 * m->hop_bytes / base->hop_bytes);
		else
			snprintf(rel, sizeof rel, "-");
		fmt_amount(hb, sizeof hb, m->hop_bytes);
		fmt_amount(cong, sizeof cong, m->max_congestion_bytes);
		fmt_ratio(intra, sizeof intra, m->frac_intra_node);
		fmt_ratio(router, sizeof router, m->frac_intra_router);
		fprintf(f, "%-*s %13s %14s %9s %8lld %15s %10s %12s\n",
			w, rows[i].label, avg, hb, rel, (long long)m->max_dilation, cong, intra,
			router);
	}
}

void cli_print_metrics_columns(FILE *f, const struct cli_row *cols, int ncols)
{
	static const char *const names[] = {
		"edges", "total bytes", "hop-bytes", "avg hop-bytes",
		"avg dilation", "max dilation", "max congestion bytes",
		"max congestion msgs", "intra-node fraction",
		"intra-router fraction",
	};
	fprintf(f, "%-22s", "");
	for (int c = 0; c < ncols; c++)
		fprintf(f, " %14s", cols[c].label);
	fputc('\n', f);
	for (size_t r = 0; r < sizeof names / sizeof names[0]; r++) {
		fprintf(f, "%-22s", names[r]);
		for (int c = 0; c < ncols; c++) {
			const tp_metrics *m = cols[c].m;
			char v[40];
			if (!m) {
				snprintf(v, sizeof v, "n/a");
			} else {
				switch (r) {
				case 0: snprintf(v, sizeof v, "%lld",
						 (long long)m->nedges); break;
				case 1: fmt_amount(v, sizeof v, m->total_bytes); break;
				case 2: fmt_amount(v, sizeof v, m->hop_bytes); break;
				case 3: fmt_ratio(v, sizeof v, m->avg_hop_bytes); break;
				case 4: fmt_ratio(v, sizeof v, m->avg_dilation); break;
				case 5: snprintf(v, sizeof v, "%lld",
						 (long long)m->max_dilation); break;
				case 6: fmt_amount(v, sizeof v,
						   m->max_congestion_bytes); break;
				case 7: snprintf(v, sizeof v, "%lld",
						 (long long)m->max_congestion_msgs);
					break;
				case 8: fmt_ratio(v, sizeof v, m->frac_intra_node); break;
				default: fmt_ratio(v, sizeof v,
						   m->frac_intra_router); break;
				}
			}
			fprintf(f, " %14s", v);
		}
		fputc('\n', f);
	}
}
