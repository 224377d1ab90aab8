#!/bin/sh
# Install test: `make install` into a DESTDIR honours PREFIX, and a program
# builds against the installed headers and library through pkg-config.
# usage: tests/install.sh [BUILD]   (prints "install: N passed, M failed")
BUILD=${1:-build}
REPO=$(cd "$(dirname "$0")/.." && pwd)
tmp=$(mktemp -d "${TMPDIR:-/tmp}/topoplace-install.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT
pass=0 fail=0
ok() { pass=$((pass + 1)); echo "ok   $1"; }
no() { fail=$((fail + 1)); echo "FAIL $1: $2"; }

prefix=/opt/tp
if make -s install BUILD="$BUILD" PREFIX=$prefix DESTDIR="$tmp/root" >"$tmp/log" 2>&1; then
	ok "make install"
else
	no "make install" "$(tail -5 "$tmp/log")"
fi
root=$tmp/root$prefix
for f in bin/topoplace lib/libtopoplace.a lib/libtopoplace.so lib/libtopoplace.so.1 \
	lib/pkgconfig/topoplace.pc include/topoplace/topoplace.h \
	share/man/man1/topoplace.1 share/man/man5/topoplace.conf.5 \
	share/man/man8/topoplace-spank.8 lib/topoplace/topoplace.so \
	lib/topoplace/topoplace-hydra-srun; do
	if [ -e "$root/$f" ]; then ok "installed $f"; else no "installed $f" "missing"; fi
done
# the trace library, once per MPI found at build time
for m in openmpi mpich; do
	[ -e "$REPO/$BUILD/trace/$m/libtopoplace-trace.so" ] || [ -e "$BUILD/trace/$m/libtopoplace-trace.so" ] || continue
	f=lib/topoplace/$m/libtopoplace-trace.so
	if [ -e "$root/$f" ]; then ok "installed $f"; else no "installed $f" "missing"; fi
done
# The command links the shared library and finds it relative to itself
# (INSTALL_RPATH's default, $ORIGIN/../lib), so the staged copy runs too.
if readelf -d "$root/bin/topoplace" | grep NEEDED | grep -q 'libtopoplace\.so\.1'; then
	ok "bin/topoplace links libtopoplace.so.1"
else
	no "bin/topoplace links libtopoplace.so.1" "$(readelf -d "$root/bin/topoplace" | grep NEEDED | paste -sd' ')"
fi
out=$(env -u LD_LIBRARY_PATH "$root/bin/topoplace" --version 2>&1)
case $out in
"topoplace "*) ok "installed command finds the installed library ($out)" ;;
*) no "installed command finds the installed library" "$out" ;;
esac
if grep -q "^prefix=$prefix\$" "$root/lib/pkgconfig/topoplace.pc"; then
	ok "pkg-config prefix"
else
	no "pkg-config prefix" "$(head -1 "$root/lib/pkgconfig/topoplace.pc")"
fi

# Build and run a client against the installed copy, found through pkg-config.
cat >"$tmp/client.c" <<'C'
#include <stdio.h>
#include <topoplace/topoplace.h>
int main(void)
{
	tp_conf *c;
	tp_error err;
	if (tp_conf_load_string("Network=torus Dims=4x4 Wrap=yes\n"
				"NodeName=n[0-15] CoordOrder=x-major\n", "c", &c, &err))
		return 1;
	tp_alloc *a;
	tp_graph *g;
	int32_t map[16];
	if (tp_alloc_from_hostlist(tp_conf_machine(c), "n[0-15]", 1, "n", &a, &err) ||
	    tp_graph_from_stencil(&g, "4x4:5pt", 16, &err) ||
	    tp_place(g, a, NULL, map, NULL, &err))
		return 1;
	printf("%s %s %.1f\n", TOPOPLACE_VERSION, tp_version(), tp_metrics_hop_bytes(g, a, map));
	tp_graph_destroy(g);
	tp_alloc_destroy(a);
	tp_conf_destroy(c);
	return 0;
}
C
pc="$root/lib/pkgconfig"
sed "s|^prefix=.*|prefix=$root|; s|^libdir=.*|libdir=$root/lib|; s|^includedir=.*|includedir=$root/include|" \
	"$pc/topoplace.pc" >"$tmp/topoplace.pc"
flags=$(PKG_CONFIG_PATH=$tmp pkg-config --cflags topoplace) &&
	libs=$(PKG_CONFIG_PATH=$tmp pkg-config --libs topoplace) &&
	cc -std=c11 $flags -o "$tmp/client" "$tmp/client.c" $libs \
		-Wl,-rpath,"$root/lib" 2>"$tmp/cc.log"
if [ $? -eq 0 ]; then ok "client builds via pkg-config"; else no "client builds via pkg-config" "$(head -5 "$tmp/cc.log")"; fi
out=$("$tmp/client" 2>&1)
V=$(sed -n 's/^#define TOPOPLACE_VERSION "\(.*\)"/\1/p' "$REPO/core/include/topoplace/version.h")
if [ -n "$V" ] && [ "$out" = "$V $V 24.0" ]; then ok "client maps (compiled against and running $V)"; else no "client maps" "got '$out', version.h says '$V'"; fi

# The same client linked statically against libtopoplace.a (a directory
# without the .so): pkg-config --static must name every library the archive
# needs (Requires.private, Libs.private), or the link fails.
mkdir "$tmp/static"
cp "$root/lib/libtopoplace.a" "$tmp/static/"
sed "s|^libdir=.*|libdir=$tmp/static|" "$tmp/topoplace.pc" >"$tmp/static/topoplace.pc"
slibs=$(PKG_CONFIG_PATH=$tmp/static pkg-config --static --libs topoplace) &&
	cc -std=c11 $flags -o "$tmp/client-static" "$tmp/client.c" $slibs 2>"$tmp/cc-static.log"
if [ $? -eq 0 ] && ! readelf -d "$tmp/client-static" | grep -q 'libtopoplace' &&
	[ "$("$tmp/client-static" 2>&1)" = "$V $V 24.0" ]; then
	ok "static client links with pkg-config --static ($slibs)"
else
	no "static client via pkg-config --static" "$slibs: $(head -3 "$tmp/cc-static.log")"
fi

# The shared library exports its API (tp_*) and nothing else; the plugin
# only what Slurm looks up.
extra=$(nm -D --defined-only "$root/lib/libtopoplace.so" | awk '{print $3}' | grep -v '^tp_' | grep -v '^_init$\|^_fini$' || true)
if [ -z "$extra" ] && nm -D --defined-only "$root/lib/libtopoplace.so" | grep -q ' tp_version$'; then
	ok "libtopoplace.so exports tp_* only"
else
	no "libtopoplace.so exports tp_* only" "also: $(echo "$extra" | head -5 | paste -sd' ')"
fi
extra=$(nm -D --defined-only "$root/lib/topoplace/topoplace.so" | awk '{print $3}' | grep -v '^slurm_spank_\|^plugin_' || true)
if [ -z "$extra" ] && nm -D --defined-only "$root/lib/topoplace/topoplace.so" | grep -q ' slurm_spank_init$'; then
	ok "topoplace.so exports slurm_spank_* and plugin_* only"
else
	no "topoplace.so exports slurm_spank_* and plugin_* only" "also: $(echo "$extra" | head -5 | paste -sd' ')"
fi

# No libslurm anywhere: the plugin uses only what srun and
# slurmstepd provide at run time (spank.h), the core has its own hostlists.
for f in lib/topoplace/topoplace.so lib/libtopoplace.so bin/topoplace; do
	if readelf -d "$root/$f" 2>/dev/null | grep NEEDED | grep -q libslurm; then
		no "$f does not need libslurm" "$(readelf -d "$root/$f" | grep libslurm)"
	else
		ok "$f does not need libslurm"
	fi
done

# make run installs the build group only: no test, cluster,
# fuzz or benchmark tools.
run_deps=$(sh "$REPO/contrib/install-deps.sh" --list build)
extra=$(for p in $run_deps; do case $p in valgrind|check|scotch|slurmd|slurmctld|munge|clang*|gmsh*) echo "$p" ;; esac; done)
if [ -n "$run_deps" ] && [ -z "$extra" ]; then
	ok "make run installs only the build group ($run_deps)"
else
	no "make run installs only what it needs" "also: $extra"
fi

echo "install: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
