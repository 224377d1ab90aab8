/* topoplace — the version of the loaded library. */
#include <topoplace/version.h>

const char *tp_version(void)
{
	return TOPOPLACE_VERSION;
}
