/* topoplace — error reporting shared by every part of the library.
 *
 * Every fallible function returns 0 (TP_OK) or a negative TP_E* code and, when
 * given a non-NULL tp_error, fills it with one readable line that names the file
 * or argument and the problem, e.g.
 *   "topoplace.conf:12: Dims=24x0x24: dimension 2 is zero"
 */
#ifndef TOPOPLACE_ERROR_H
#define TOPOPLACE_ERROR_H

#include <topoplace/export.h>

#ifdef __cplusplus
extern "C" {
#endif

enum tp_status {
	TP_OK = 0,
	TP_EINVAL = -1,   /* malformed input: file, argument or value */
	TP_ENOMEM = -2,   /* allocation failed */
	TP_EIO = -3,      /* file could not be read or written */
	TP_ETIME = -4,    /* time budget ran out before any result existed */
	TP_ENOTSUP = -5,  /* valid but not supported (e.g. policy for this network) */
	TP_ENOENT = -6,   /* named thing not found (node, file) */
	TP_ENOMETIS = -7, /* graph mapping needs METIS, which this node lacks
			     (the plugin loads libmetis.so.5 only then) */
	TP_ENOMODEL = -8, /* a node the job places inside has no node model
			     (no NodeTopology= and no --node-topology) */
};

#define TP_ERROR_MSG_MAX 512

typedef struct tp_error {
	int code;                    /* last TP_E* code, 0 when none */
	char msg[TP_ERROR_MSG_MAX];  /* one line, no trailing newline */
} tp_error;

/* Fill err (if non-NULL) with a printf-style message and return code. */
TP_EXPORT int tp_error_set(tp_error *err, int code, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* Reset err to "no error". */
TP_EXPORT void tp_error_clear(tp_error *err);

/* Short constant name of a status code ("invalid input", ...). */
TP_EXPORT const char *tp_strerror(int code);

#ifdef __cplusplus
}
#endif
#endif
