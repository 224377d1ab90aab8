/* topoplace — symbol visibility of the public API.
 *
 * The library is built with -fvisibility=hidden; only declarations marked
 * TP_EXPORT are part of libtopoplace.so's interface (as hwloc does with
 * HWLOC_DECLSPEC).  Everything else stays inside the library.
 */
#ifndef TOPOPLACE_EXPORT_H
#define TOPOPLACE_EXPORT_H

#if defined(__GNUC__) || defined(__clang__)
#define TP_EXPORT __attribute__((visibility("default")))
#else
#define TP_EXPORT
#endif

#endif
