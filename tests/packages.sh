#!/bin/sh
# Package tests (make check-packages, CI): install the Debian packages that
# make deb built, check what each holds, then run the dependency test, a
# pkg-config client and the Slurm cluster tests against the installed
# plugin and command.  Needs root (it installs packages); packages this run
# installed are purged at the end, so a developer's machine is left as it
# was.  Prints "packages: N passed, M failed".
# usage: BUILD=build sh tests/packages.sh
REPO=$(cd "$(dirname "$0")/.." && pwd)
BUILD=${BUILD:-build}
case "$BUILD" in /*) B=$BUILD ;; *) B=$REPO/$BUILD ;; esac
D=$B/deb
PKGS="libtopoplace1 libtopoplace-dev topoplace slurm-topoplace topoplace-trace"
pass=0 fail=0
ok() { pass=$((pass + 1)); echo "ok   $1"; }
no() { fail=$((fail + 1)); echo "FAIL $1: $2"; }
finish() { echo "packages: $pass passed, $fail failed"; [ "$fail" -eq 0 ]; exit $?; }

if [ "$(id -u)" != 0 ]; then
	echo "packages: SKIPPED: installing packages needs root"
	[ -n "$TOPOPLACE_REQUIRE_SLURM_TESTS" ] && { no "root" "needed"; finish; }
	exit 0
fi
V=$(sed -n 's/^#define TOPOPLACE_VERSION "\(.*\)"/\1/p' "$REPO/core/include/topoplace/version.h")
for p in $PKGS; do
	[ -f "$D/${p}_${V}_$(dpkg --print-architecture).deb" ] || { no "$p.deb" "not in $D (make deb)"; finish; }
done
# One package installation at a time on this host.
exec 8>/tmp/topoplace-packages.lock
flock 8
tmp=$(mktemp -d "${TMPDIR:-/tmp}/topoplace-pkg.XXXXXX") || exit 1
had=""
for p in $PKGS; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" && had="$had $p"
done
cleanup() {
	rm -rf "$tmp"
	if [ -z "$had" ] && [ -z "$TP_KEEP_PACKAGES" ]; then
		DEBIAN_FRONTEND=noninteractive apt-get purge -y -qq $PKGS >/dev/null 2>&1
	fi
}
trap cleanup EXIT

arch=$(dpkg --print-architecture)
debs=""
for p in $PKGS; do debs="$debs $D/${p}_${V}_$arch.deb"; done
# apt resolves what they depend on, as an admin's `apt install ./x.deb`
# shellcheck disable=SC2086
if DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
	--allow-downgrades --reinstall $debs >"$tmp/apt.log" 2>&1; then
	ok "apt-get install ./*.deb ($PKGS)"
else
	no "apt-get install" "$(tail -5 "$tmp/apt.log")"
	finish
fi

# ---- what each package holds ----
triplet=$(dpkg-architecture -qDEB_HOST_MULTIARCH)
has() {  # has PACKAGE PATH
	if dpkg -L "$1" | grep -qx "$2"; then ok "$1 holds $2"; else no "$1 holds $2" "missing"; fi
}
has libtopoplace1 "/usr/lib/$triplet/libtopoplace.so.1.${V#*.}"
has libtopoplace1 "/usr/lib/$triplet/libtopoplace.so.1"
has libtopoplace-dev "/usr/include/topoplace/topoplace.h"
has libtopoplace-dev "/usr/lib/$triplet/libtopoplace.so"
has libtopoplace-dev "/usr/lib/$triplet/libtopoplace.a"
has libtopoplace-dev "/usr/lib/$triplet/pkgconfig/topoplace.pc"
has topoplace /usr/bin/topoplace
has topoplace /usr/share/man/man1/topoplace.1.gz
has topoplace /usr/share/man/man5/topoplace.conf.5.gz
has slurm-topoplace /usr/share/man/man8/topoplace-spank.8.gz
PLUGIN=/usr/lib/$triplet/topoplace/topoplace.so
has slurm-topoplace "$PLUGIN"
has slurm-topoplace "/usr/lib/$triplet/topoplace/topoplace-hydra-srun"
has topoplace-trace "/usr/lib/$triplet/topoplace/openmpi/libtopoplace-trace.so"
has topoplace-trace "/usr/lib/$triplet/topoplace/mpich/libtopoplace-trace.so"
has slurm-topoplace /etc/slurm/plugstack.conf.d/topoplace.conf
has slurm-topoplace /usr/share/doc/slurm-topoplace/examples/fattree.conf
has slurm-topoplace /usr/share/doc/slurm-topoplace/examples/nodes/nvl4.xml
if dpkg-query -W -f='${Conffiles}\n' slurm-topoplace | grep -q /etc/slurm/plugstack.conf.d/topoplace.conf; then
	ok "the plugstack snippet is a conffile (an admin's edit survives upgrades)"
else
	no "plugstack snippet conffile" "not a conffile"
fi

# The snippet: nothing active until the admin uncomments it; then the
# plugin's line names the installed file and the default config.
snip=/etc/slurm/plugstack.conf.d/topoplace.conf
if ! grep -v '^[[:space:]]*#' "$snip" | grep -q '[^[:space:]]' &&
	grep -q "^#optional $PLUGIN conf=/etc/slurm/topoplace.conf" "$snip"; then
	ok "plugstack snippet: commented, names $PLUGIN"
else
	no "plugstack snippet" "$(grep -v '^#' "$snip" | head -3) / $(grep optional "$snip")"
fi

# slurm-topoplace depends on the Slurm release it was built for
mm=$(dpkg-query -W -f='${Version}' libslurm-dev | sed -E 's/^([0-9]+:)?([0-9]+\.[0-9]+).*/\2/')
dep=$(dpkg-query -W -f='${Depends}' slurm-topoplace)
case "$dep" in
*"slurm-wlm-basic-plugins (>= $mm)"*"slurm-wlm-basic-plugins (<< $mm.999)"*)
	ok "slurm-topoplace depends on Slurm $mm only" ;;
*) no "slurm-topoplace Slurm dependency" "$dep" ;;
esac
case "$dep" in
*libmetis*) no "slurm-topoplace needs no libmetis5" "$dep" ;;
*) ok "slurm-topoplace needs no libmetis5 (Recommends: $(dpkg-query -W -f='${Recommends}' slurm-topoplace))" ;;
esac

# ---- the installed command, plugin and library ----
out=$(/usr/bin/topoplace --version 2>&1)
case "$out" in *"$V"*) ok "topoplace --version: $out" ;; *) no "topoplace --version" "$out" ;; esac
ex=/usr/share/doc/slurm-topoplace/examples
for f in fattree.conf dragonfly.conf gpu-cluster.conf torus3d.conf; do
	if /usr/bin/topoplace check-config "$ex/$f" >"$tmp/cc.out" 2>&1; then
		ok "installed example $f passes check-config"
	else
		no "example $f" "$(head -2 "$tmp/cc.out")"
	fi
done
if sh "$REPO/tests/deps.sh" "$PLUGIN" >"$tmp/deps.out" 2>&1; then
	ok "installed plugin: $(tail -1 "$tmp/deps.out")"
else
	no "installed plugin dependencies" "$(grep FAIL "$tmp/deps.out" | head -3)"
fi
cat >"$tmp/client.c" <<'C'
#include <stdio.h>
#include <topoplace/topoplace.h>
int main(void)
{
	printf("%s\n", tp_version());
	return 0;
}
C
if cc -std=c11 $(pkg-config --cflags topoplace) -o "$tmp/client" "$tmp/client.c" \
	$(pkg-config --libs topoplace) 2>"$tmp/cc.log" && [ "$("$tmp/client")" = "$V" ]; then
	ok "a client builds with the installed pkg-config file and runs"
else
	no "pkg-config client" "$(head -3 "$tmp/cc.log")"
fi
if cc -std=c11 $(pkg-config --cflags topoplace) -o "$tmp/client-static" "$tmp/client.c" \
	/usr/lib/$triplet/libtopoplace.a $(pkg-config --static --libs topoplace | sed 's/-ltopoplace//') \
	2>"$tmp/cc.log" && [ "$("$tmp/client-static")" = "$V" ]; then
	ok "a client links libtopoplace.a with pkg-config --static"
else
	no "static pkg-config client" "$(head -3 "$tmp/cc.log")"
fi

# ---- the cluster tests against the installed plugin and command ----
if TP_INSTALLED=1 sh "$REPO/tests/slurm/run.sh" >"$tmp/slurm.out" 2>&1; then
	ok "cluster tests with the installed plugin: $(tail -1 "$tmp/slurm.out")"
else
	grep -E '^FAIL' "$tmp/slurm.out" | head -10
	no "cluster tests with the installed plugin" "$(tail -1 "$tmp/slurm.out")"
fi
finish
