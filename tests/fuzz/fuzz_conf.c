/* topoplace.conf, from text (paths it names are opened as usual). */
#include "fuzz.h"
#include <topoplace/conf.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *s = fuzz_str(data, size);
	tp_conf *c = NULL;
	tp_error err;
	if (tp_conf_load_string(s, "fuzz.conf", &c, &err) == 0) {
		FILE *f = fopen("/dev/null", "w");
		tp_conf_describe(c, f);
		fclose(f);
		tp_conf_destroy(c);
	}
	free(s);
	return 0;
}
