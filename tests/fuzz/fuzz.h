/* Shared helpers of the libFuzzer targets (tests/fuzz/README.md). */
#ifndef TP_FUZZ_H
#define TP_FUZZ_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <topoplace/topoplace.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* The input as a NUL-terminated string (a NUL inside ends it early, as it
 * would for any C string the API is given). */
static inline char *fuzz_str(const uint8_t *data, size_t size)
{
	char *s = malloc(size + 1);
	if (!s)
		abort();
	memcpy(s, data, size);
	s[size] = '\0';
	return s;
}

/* A regular file holding the input, without touching the disk: a memfd,
 * reached by its /proc path (readers open it by name, as a user's file).
 * path must hold 64 bytes.  Returns the descriptor to close. */
static inline int fuzz_file(const uint8_t *data, size_t size, char *path)
{
	static int fd = -1;
	if (fd < 0 && (fd = memfd_create("fuzz-input", MFD_CLOEXEC)) < 0)
		abort();
	if (ftruncate(fd, 0) != 0 || (size && pwrite(fd, data, size, 0) != (ssize_t)size))
		abort();
	snprintf(path, 64, "/proc/self/fd/%d", fd);
	return fd;
}

/* A small torus machine (4x4x4, nodes n00..n63) for the targets that need
 * nodes to refer to. */
static inline tp_conf *fuzz_machine(void)
{
	static tp_conf *c;
	tp_error err;
	/* n00..n63 one by one, m000..m511 as a numbered run of the machine
	 * (name_runs.c), login1 alone */
	if (!c && tp_conf_load_string("Network=torus Dims=8x8x10\n"
				      "NodeName=n[00-63] CoordOrder=x-major\n"
				      "NodeName=m[000-511] CoordOrder=x-major Offset=64\n"
				      "NodeName=login1 Coords=7,7,9\n",
				      "fuzz", &c, &err) != 0)
		abort();
	return c;
}

#endif
