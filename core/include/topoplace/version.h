/* topoplace — the library's version, at compile time and at run time. */
#ifndef TOPOPLACE_VERSION_H
#define TOPOPLACE_VERSION_H

#include <topoplace/export.h>

#ifdef __cplusplus
extern "C" {
#endif

#define TOPOPLACE_VERSION_MAJOR 0
#define TOPOPLACE_VERSION_MINOR 5
#define TOPOPLACE_VERSION_PATCH 0
#define TOPOPLACE_VERSION "0.5.0"
/* One number that grows with every release: 0xMMmmpp. */
#define TOPOPLACE_VERSION_NUMBER                                        \
	((TOPOPLACE_VERSION_MAJOR << 16) | (TOPOPLACE_VERSION_MINOR << 8) | \
	 TOPOPLACE_VERSION_PATCH)

/* The version of the library actually loaded ("0.5.0"), which may differ
 * from TOPOPLACE_VERSION, the one the caller was compiled against. */
TP_EXPORT const char *tp_version(void);

#ifdef __cplusplus
}
#endif
#endif
