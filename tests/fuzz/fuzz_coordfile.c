/* CoordFile= (node name and coordinates per line), through the config. */
#include "fuzz.h"
#include <topoplace/conf.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char path[64], conf[256];
	fuzz_file(data, size, path);
	snprintf(conf, sizeof conf,
		 "Network=torus Dims=8x8x4 NodesPerRouter=2\nNodeName=fixed Coords=0,0,0\n"
		 "CoordFile=%s\n", path);
	tp_conf *c = NULL;
	tp_error err;
	if (tp_conf_load_string(conf, "fuzz.conf", &c, &err) == 0)
		tp_conf_destroy(c);
	return 0;
}
