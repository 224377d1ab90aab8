/* topoplace command — check-config: load a topoplace.conf, read every file
 * it names as a job would, and summarise it; with --slurm-conf, compare its
 * nodes with slurm.conf's. */
#include <stdio.h>
#include <string.h>

#include "cli.h"

/* Every node model, read as a job would read it: one line per bad one.
 * Returns how many failed. */
static int check_models(const tp_conf *conf)
{
	int bad = 0, n = tp_conf_nmodels(conf);
	for (int i = 0; i < n; i++) {
		tp_error err;
		tp_error_clear(&err);
		if (tp_conf_check_model(conf, i, &err) < 0) {
			cli_report(NULL, &err);
			bad++;
		}
	}
	return bad;
}

/* The nodes of slurm.conf against the config's, after the summary.  Nodes
 * only slurm.conf has are an error (their jobs would keep Slurm's
 * placement); nodes only the config has are listed. */
static int print_slurm_diff(const tp_conf_slurm_diff *d, const char *path,
			    const char *slurm_conf)
{
	printf("%s: %lld node%s, %lld in %s\n", slurm_conf, (long long)d->nslurm,
	       d->nslurm == 1 ? "" : "s", (long long)(d->nslurm - d->nmissing), path);
	if (d->nextra)
		printf("not in %s: %s (%lld node%s of %s)\n", slurm_conf, d->extra,
		       (long long)d->nextra, d->nextra == 1 ? "" : "s", path);
	if (!d->nmissing)
		return CLI_EXIT_OK;
	printf("not in %s: %s (%lld node%s of %s)\n", path, d->missing,
	       (long long)d->nmissing, d->nmissing == 1 ? "" : "s", slurm_conf);
	/* the error line names the first of them; stdout has the list */
	char head[128];
	size_t n = strlen(d->missing);
	if (n < sizeof head) {
		memcpy(head, d->missing, n + 1);
	} else {
		memcpy(head, d->missing, sizeof head - 4);
		char *cut = strrchr(head, ',');
		strcpy(cut ? cut : head + sizeof head - 4, ",...");
	}
	return cli_usage_error("%s: %lld node%s of %s %s not in it (%s): jobs on "
			       "%s keep Slurm's placement", path,
			       (long long)d->nmissing, d->nmissing == 1 ? "" : "s",
			       slurm_conf, d->nmissing == 1 ? "is" : "are",
			       head, d->nmissing == 1 ? "it" : "them");
}

/* Each other topology of Slurm's topology.yaml built as a job of its
 * partitions would build it: one line each, ok or why not (a flat one has
 * no network, said and not counted as an error). */
static int check_other_topologies(const char *path, char *const *names, int n,
				  int used, const tp_conf_slurm *sl, FILE *out)
{
	int bad = 0;
	for (int i = 0; i < n; i++) {
		if (i == used)
			continue;
		tp_conf_slurm o = *sl;
		o.topology = names[i];
		tp_conf *c2 = NULL;
		tp_error err;
		tp_error_clear(&err);
		int rc = tp_conf_load_slurm(path, &o, &c2, &err);
		if (rc == TP_ENOENT) {
			fprintf(out, "topology %s: %s\n", o.topology, err.msg);
		} else if (rc < 0) {
			cli_report(path, &err);
			bad++;
		} else {
			/* the network's line; the site's settings are the same */
			char *d = NULL;
			size_t dl = 0;
			FILE *f = open_memstream(&d, &dl);
			if (f) {
				tp_conf_describe(c2, f);
				fclose(f);
			}
			fprintf(out, "topology %s: %.*s\n", o.topology,
				d ? (int)strcspn(d, "\n") : 0, d ? d : "");
			free(d);
			for (int w = 0; w < tp_conf_nwarnings(c2); w++)
				fprintf(stderr, "topoplace: warning: %s\n",
					tp_conf_warning(c2, w));
		}
		tp_conf_destroy(c2);
	}
	return bad;
}

/* The topology used has no network (flat, or Slurm has none): said, and
 * every other topology of topology.yaml checked as for a job of its
 * partitions.  Exit 2 only when one of them fails, or there is none. */
static int check_without_network(const char *path, const tp_conf_slurm *sl,
				 const tp_error *why)
{
	char **names = NULL;
	int n = 0;
	tp_error err;
	tp_error_clear(&err);
	if (tp_conf_slurm_topology_names(sl, &names, &n, &err) < 0 || n < 2) {
		tp_conf_slurm_topology_names_free(names, n);
		/* a skeleton whose nodes join at run time is how a site with
		 * dynamic nodes runs: said, not an error */
		if (strstr(why->msg, TP_CONF_SKELETON)) {
			printf("%s: %s\n", path, why->msg);
			return cli_finish_stdout();
		}
		return cli_report(path, why);
	}
	char *out = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&out, &len);
	if (!f) {
		tp_conf_slurm_topology_names_free(names, n);
		return cli_fail("out of memory");
	}
	int bad = check_other_topologies(path, names, n, -1, sl, f);
	tp_conf_slurm_topology_names_free(names, n);
	fclose(f);
	if (!bad) {
		printf("%s: %s\n", path, why->msg);
		fputs(out ? out : "", stdout);
	}
	free(out);
	int frc = cli_finish_stdout();
	return frc ? frc : bad ? CLI_EXIT_USAGE : CLI_EXIT_OK;
}

/* Everything read and checked first: on an error nothing goes to stdout. */
static int check(const char *path, const char *slurm_conf, const char *partition)
{
	tp_conf *conf = NULL;
	tp_error err;
	tp_error_clear(&err);
	tp_conf_slurm sl = { .slurm_conf = slurm_conf ? slurm_conf
			     : cli_slurm_conf_env(), .partition = partition };
	int lrc = tp_conf_load_slurm(path, &sl, &conf, &err);
	if (lrc == TP_ENOENT)
		return check_without_network(path, &sl, &err);
	if (lrc < 0)
		return cli_report(path, &err);
	int bad = check_models(conf);
	char *others = NULL;
	size_t olen = 0;
	FILE *of = open_memstream(&others, &olen);
	if (!of)
		return cli_fail("out of memory");
	int nt = tp_conf_slurm_ntopologies(conf);
	char **names = calloc((size_t)nt + 1, sizeof *names);
	for (int i = 0; names && i < nt; i++)
		names[i] = (char *)tp_conf_slurm_topology(conf, i);
	if (names)
		bad += check_other_topologies(path, names, nt,
					      tp_conf_slurm_topology_used(conf), &sl, of);
	free(names);
	if (fclose(of)) {
		free(others);
		return cli_fail("out of memory");
	}
	tp_conf_slurm_diff d;
	memset(&d, 0, sizeof d);
	if (slurm_conf && tp_conf_compare_slurm(conf, slurm_conf, &d, &err) < 0) {
		cli_report(slurm_conf, &err);
		bad++;
	}
	int rc = bad ? CLI_EXIT_USAGE : CLI_EXIT_OK;
	if (!bad) {
		for (int i = 0; i < tp_conf_nwarnings(conf); i++)
			fprintf(stderr, "topoplace: warning: %s\n",
				tp_conf_warning(conf, i));
		if (tp_conf_network_source(conf))
			fputs(tp_conf_network_source(conf), stdout);
		tp_conf_describe(conf, stdout);
		if (others)
			fputs(others, stdout);
		if (tp_conf_nmodels(conf) > 0)
			printf("node models: %d, each read\n", tp_conf_nmodels(conf));
		if (slurm_conf)
			rc = print_slurm_diff(&d, path, slurm_conf);
	}
	tp_conf_slurm_diff_free(&d);
	tp_conf_destroy(conf);
	free(others);
	int frc = cli_finish_stdout();
	return frc ? frc : rc;
}

int cli_cmd_check_config(int argc, char **argv)
{
	const char *path = NULL, *slurm_conf = NULL, *partition = NULL;
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
			cli_help("check-config", stdout);
			return cli_finish_stdout();
		}
		if (!strcmp(a, "--slurm-conf") || !strncmp(a, "--slurm-conf=", 13)) {
			const char *v = a[12] == '=' ? a + 13 : i + 1 < argc ? argv[++i] : NULL;
			if (!v || !*v)
				return cli_usage_error("check-config: --slurm-conf needs a FILE");
			slurm_conf = v;
			continue;
		}
		if (!strcmp(a, "--partition") || !strncmp(a, "--partition=", 12)) {
			const char *v = a[11] == '=' ? a + 12 : i + 1 < argc ? argv[++i] : NULL;
			if (!v || !*v)
				return cli_usage_error("check-config: --partition needs a NAME");
			partition = v;
			continue;
		}
		if (!strcmp(a, "--")) {
			if (i + 1 < argc) {
				if (path || i + 2 < argc)
					return cli_usage_error(
						"check-config: expects one FILE");
				path = argv[i + 1];
			}
			break;
		}
		if (a[0] == '-' && a[1])
			return cli_usage_error("check-config: unknown option '%s' "
					       "(see 'topoplace help "
					       "check-config')", a);
		if (path)
			return cli_usage_error("check-config: expects one FILE, "
					       "got '%s' and '%s'", path, a);
		path = a;
	}
	if (!path)
		return cli_usage_error("check-config: missing FILE (see "
				       "'topoplace help check-config')");

	return check(path, slurm_conf, partition);
}
