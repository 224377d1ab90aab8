#!/bin/sh
# Task graphs from real unstructured meshes, for bench_graph and
# bench_peers (1,024 parts).
#   sh tests/bench/make-meshes.sh [OUTDIR]     (default build-bench/meshes)
# A 3-D demo geometry shipped by Debian's gmsh-doc is meshed with gmsh
# (tetrahedra), its dual graph (elements sharing a face, m2gmetis -ncommon=3)
# is partitioned by gpmetis, and the part adjacency becomes the task graph:
# one task per part, edge bytes = number of faces shared by the two parts, as
# an unstructured solver's halo exchange would send.  Output: OUTDIR/NAME-PARTS.json
# ({"tasks":P,"edges":[[a,b,bytes],...]}, no coordinates).  Cached: files that
# exist are not rebuilt.  Not run by run.sh (bench_graph calls it).
set -e
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
out=${1:-$root/build-bench/meshes}
mkdir -p "$out"
for t in gmsh m2gmetis gpmetis; do
	if ! command -v $t >/dev/null 2>&1; then
		sh "$root/contrib/install-deps.sh" bench >&2 || true
		break
	fi
done
for t in gmsh m2gmetis gpmetis; do
	command -v $t >/dev/null 2>&1 || { echo "make-meshes: $t not installed (sh contrib/install-deps.sh bench)" >&2; exit 1; }
done
demos=$(ls -d /usr/share/doc/gmsh-doc/doc/gmsh/demos /usr/share/doc/gmsh*/demos 2>/dev/null | head -1)
[ -n "$demos" ] || { echo "make-meshes: gmsh-doc demos not found" >&2; exit 1; }

# name geometry mesh-size-factor: "boolean" is the CSG demo (cube ∩ sphere
# minus three cylinders); "piece" is a machined part from simple_geo.
mesh() {
	name=$1 geo=$2 scale=$3
	[ -s "$out/$name.mesh" ] && return 0
	gmsh -3 -format msh2 -clscale "$scale" -nt 1 "$demos/$geo" -o "$out/$name.msh" >"$out/$name.gmsh.log" 2>&1
	# .msh v2 -> METIS mesh: tetrahedra (type 4) only, 1-based node ids.
	awk '/^\$Elements/ { e = 1; getline; next } /^\$EndElements/ { e = 0 }
	     e && $2 == 4 { nt = $3; n++; l[n] = $(4+nt) " " $(5+nt) " " $(6+nt) " " $(7+nt) }
	     END { print n; for (i = 1; i <= n; i++) print l[i] }' \
		"$out/$name.msh" >"$out/$name.mesh.tmp"
	mv "$out/$name.mesh.tmp" "$out/$name.mesh"
	rm -f "$out/$name.msh"
}
dual() {
	name=$1
	[ -s "$out/$name.dual" ] && return 0
	m2gmetis -gtype=dual -ncommon=3 "$out/$name.mesh" "$out/$name.dual.tmp" >"$out/$name.m2g.log" 2>&1
	mv "$out/$name.dual.tmp" "$out/$name.dual"
}
parts() {
	name=$1 p=$2
	j="$out/$name-$p.json"
	[ -s "$j" ] && return 0
	gpmetis -seed=1 "$out/$name.dual" "$p" >"$out/$name-$p.gpmetis.log" 2>&1
	# Part adjacency: every dual edge (shared face) across two parts adds 1.
	awk -v P="$p" 'NR == FNR { part[NR] = $1; next }
	     FNR == 1 { next }
	     { i = FNR - 1; pi = part[i]
	       for (k = 1; k <= NF; k++) { j = $k; if (j <= i) continue; pj = part[j]
	         if (pi == pj) continue
	         key = pi < pj ? pi " " pj : pj " " pi; w[key]++ } }
	     END { printf "{\"tasks\":%d,\"edges\":[", P; s = ""
	           for (key in w) { split(key, a, " "); printf "%s[%d,%d,%d]", s, a[1], a[2], w[key]; s = "," }
	           print "]}" }' \
		"$out/$name.dual.part.$p" "$out/$name.dual" >"$j.tmp"
	mv "$j.tmp" "$j"
	rm -f "$out/$name.dual.part.$p"
}
mesh boolean boolean/boolean.geo 0.1
dual boolean
parts boolean 1024
parts boolean 4096
parts boolean 65536
mesh piece simple_geo/piece.geo ${PIECE_SCALE:-0.3}
dual piece
parts piece 4096
ls -l "$out"/*.json
