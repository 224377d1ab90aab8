/* topoplace — the version of the loaded library. */
#include "internal.h"

const char *tp_version(void)
{
	return TOPOPLACE_VERSION;
}
