#!/bin/sh
# Picture tests for topoplace: map --format svg, map --format svg --node,
# node-info --format svg.
#
# usage: tests/cli/svg.sh path/to/topoplace
#
# Every picture is rendered by a real renderer (rsvg-convert, Debian's
# librsvg2-bin: make deps installs it) and checked in one Python run at the
# end: the SVG is well-formed XML, the PNG is not empty (pixels other than
# the background, counted from the PNG decoded with zlib alone), and the
# block and topoplace panels, rendered apart by their ids, differ exactly
# when the mappings differ.  Plus determinism, size bounds at 4,096 nodes
# and more, escaping, and every error path of the new options.
# TP_VALGRIND=1 runs every topoplace command under valgrind.

if [ $# -ne 1 ] || [ ! -x "$1" ]; then
	echo "usage: $0 path/to/topoplace" >&2
	exit 2
fi
case $1 in
/*) T=$1 ;;
*) T=$(pwd)/$1 ;;
esac
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
DATA=$HERE/data
EX=$ROOT/conf/examples
NODES=$EX/nodes
tmp=$(mktemp -d "${TMPDIR:-/tmp}/topoplace-svg.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT
trap 'exit 1' HUP INT TERM

if ! command -v rsvg-convert >/dev/null 2>&1; then
	echo "svg: rsvg-convert not found (Debian package librsvg2-bin: run 'make deps')" >&2
	exit 1
fi

VG=""
if [ -n "$TP_VALGRIND" ]; then
	VG="valgrind -q --error-exitcode=99 --leak-check=full \
--errors-for-leak-kinds=definite,indirect --log-file=$tmp/valgrind.log"
fi

pass=0
fail=0
ok() { pass=$((pass + 1)); echo "ok   $1"; }
no() {
	fail=$((fail + 1))
	echo "FAIL $1: $2"
	if [ -s "$tmp/valgrind.log" ]; then sed 's/^/     /' "$tmp/valgrind.log" | head -20; fi
}

tp() {
	: >"$tmp/valgrind.log"
	$VG "$T" "$@" >"$tmp/out" 2>"$tmp/err"
	rc=$?
}

# What Python checks at the end, one line each (see check.py below).
M=$tmp/manifest
: >"$M"

# picture NAME FILE ARGS...: run topoplace writing FILE; it must succeed
# and FILE render; queues the XML and "not empty" checks.
picture() {
	name=$1 file=$2
	shift 2
	tp "$@"
	if [ "$rc" -ne 0 ]; then
		no "$name" "exit status $rc: $(head -c 300 "$tmp/err")"
		return 1
	fi
	if [ ! -s "$file" ]; then
		no "$name" "no picture written"
		return 1
	fi
	if ! rsvg-convert -f png -w 360 -a -o "$file.png" "$file" 2>"$tmp/rsvg.err"; then
		no "$name" "rsvg-convert: $(head -c 300 "$tmp/rsvg.err")"
		return 1
	fi
	echo "xml $name $file" >>"$M"
	echo "ink $name $file.png 2000" >>"$M"
	return 0
}

# panels NAME FILE same|differ: render the two network panels apart (their
# ids) and compare them.
panels() {
	for id in block-net topoplace-net; do
		if ! rsvg-convert -f png -i "$id" -o "$2.$id.png" "$2" 2>"$tmp/rsvg.err"; then
			no "$1" "rsvg-convert -i $id: $(head -c 300 "$tmp/rsvg.err")"
			return 1
		fi
	done
	echo "ink $1 $2.block-net.png 500" >>"$M"
	echo "$3 $1 $2.block-net.png $2.topoplace-net.png" >>"$M"
}

# fails2 NAME MENTION OUT ARGS...: exit 2, one line on stderr mentioning
# MENTION, nothing on stdout, OUT (unless "-") not created.
fails2() {
	name=$1 mention=$2 out=$3
	shift 3
	tp "$@"
	lines=$(wc -l <"$tmp/err" | tr -d ' ')
	why=""
	if [ "$rc" -ne 2 ]; then why="exit status $rc (expected 2)"
	elif [ "$lines" -ne 1 ]; then why="$lines lines on stderr (expected 1)"
	elif ! grep -q '^topoplace: ' "$tmp/err"; then why="stderr does not start with 'topoplace: '"
	elif ! grep -qF -- "$mention" "$tmp/err"; then why="stderr does not mention '$mention'"
	elif [ -s "$tmp/out" ]; then why="something was printed on stdout"
	elif [ "$out" != - ] && ls "$out"* >/dev/null 2>&1; then why="output file created"
	fi
	if [ -z "$why" ]; then ok "$name"; else no "$name" "$why: $(cat "$tmp/err")"; fi
}

# ---- configurations ----

C4=$DATA/torus4.conf                    # 4x4x4 torus n00..n63
cat >"$tmp/ring.conf" <<'EOF'
Network=torus Dims=4096
NodeName=r[0000-4095] CoordOrder=x-major
EOF
cat >"$tmp/t16.conf" <<'EOF'
Network=torus Dims=16x16x16
NodeName=nid[00000-04095] CoordOrder=x-major
EOF
cat >"$tmp/t5.conf" <<'EOF'
Network=torus Dims=4x4x4x4x4 NodesPerRouter=2
NodeName=f[0000-2047] CoordOrder=x-major
EOF
cat >"$tmp/m128.conf" <<'EOF'
Network=mesh Dims=128x128
NodeName=m[00000-16383] CoordOrder=x-major
EOF
# a 4,096-node fat tree: 128 leaves of 32 nodes, 8 pods, one core
awk 'BEGIN {
	for (l = 0; l < 128; l++)
		printf "SwitchName=leaf%03d Nodes=c[%04d-%04d]\n", l, 32 * l, 32 * l + 31
	for (p = 0; p < 8; p++)
		printf "SwitchName=pod%d Switches=leaf[%03d-%03d]\n", p, 16 * p, 16 * p + 15
	print "SwitchName=core Switches=pod[0-7]"
}' >"$tmp/ft-topology.conf"
printf 'Network=tree TopologyFile=ft-topology.conf\n' >"$tmp/ft.conf"
cat >"$tmp/df100.conf" <<'EOF'
Network=dragonfly Groups=100 RoutersPerGroup=16 NodesPerRouter=4
NodeName=d[0000-6399] CoordOrder=x-major
EOF
# names that need escaping, and bytes that are not UTF-8
printf 'SwitchName=l&0 Nodes=a[0-3]\nSwitchName=l<1> Nodes=b[0-3]\nSwitchName=t"\377 Switches=l&0,l<1>\n' \
	>"$tmp/esc-topology.conf"
printf 'Network=tree TopologyFile=esc-topology.conf\n' >"$tmp/esc.conf"

# every 4th node of the 4x4x4 torus, in name order: a scattered job
SCATTER=$(awk 'BEGIN { for (i = 0; i < 64; i += 3) printf "%sn%02d", (i ? "," : ""), i; print "" }')

# ---- map --format svg: each kind of network ----

O=$tmp/mesh.svg
if picture "map svg: 2-D mesh" "$O" map -c "$EX/mesh2d.conf" -w 'node[00-15]' -N 4 \
	-s 8x8:5pt --format svg -o "$O"; then
	ok "map svg: 2-D mesh runs"
	panels "map svg: 2-D mesh, block and topoplace differ" "$O" differ
	grep -q 'topoplace: auto' "$O" && grep -q "Slurm's block order" "$O" &&
		ok "map svg: panels named" || no "map svg: panels named" "$(grep -c text "$O") texts"
fi
# the same job kept in Slurm's order: both panels the same picture
O=$tmp/mesh-block.svg
if picture "map svg: policy block" "$O" map -c "$EX/mesh2d.conf" -w 'node[00-15]' -N 4 \
	-s 8x8:5pt --policy block --format svg -o "$O"; then
	panels "map svg: policy block, panels identical" "$O" same
fi
O=$tmp/torus.svg
if picture "map svg: 3-D torus" "$O" map -c "$C4" -w "$SCATTER" -N 2 -s 11x4:9pt:bytes=65536 \
	--policy geometric --format svg -o "$O"; then
	panels "map svg: 3-D torus, panels differ" "$O" differ
	grep -q '>z=3<' "$O" && ok "map svg: torus slices labelled" ||
		no "map svg: torus slices labelled" "no z=3 label"
fi
# no pattern: tasks coloured by number, no loads; zorder moves them
O=$tmp/zorder.svg
if picture "map svg: no pattern" "$O" map -c "$C4" -w "$SCATTER" -n 21 --policy zorder \
	--format svg -o "$O"; then
	panels "map svg: no pattern, zorder differs from block" "$O" differ
	grep -q 'no communication pattern: no link loads' "$O" &&
		! grep -q 'link load (' "$O" && ok "map svg: no pattern, no heat scale" ||
		no "map svg: no pattern, no heat scale" "heat legend without loads"
fi
O=$tmp/tree.svg
if picture "map svg: switch tree" "$O" map -c "$EX/fattree.conf" \
	-w 'tux[000-007,016-023,064-079]' -N 4 -s 8x4x4 --format svg -o "$O"; then
	panels "map svg: switch tree, panels differ" "$O" differ
	grep -q 'leaf4 -&gt; agg2' "$O" && ok "map svg: tree uplink tooltips" ||
		no "map svg: tree uplink tooltips" "no 'leaf4 -> agg2' tooltip"
fi
# directed links: a cable shows its heavier direction's load.
# One 1000-byte edge from leaf0 to leaf2 over the core (LevelBandwidth=
# 100 at the leaves, 200 above): every cable on the way reads its load,
# the others 0, whatever the numbering of the two directions
printf '{"tasks": 2, "edges": [[0, 1, 1000]]}' >"$tmp/one-edge.json"
O=$tmp/tree-edge.svg
if picture "map svg: tree, one edge" "$O" map -c "$EX/fattree.conf" -w 'tux[000,032]' -N 1 \
	-g "$tmp/one-edge.json" --policy block --format svg -o "$O"; then
	t=$(grep -o '<title>[^<]*</title>' "$O" | sort -u)
	if echo "$t" | grep -q 'leaf0 -&gt; agg0: 10<' && echo "$t" | grep -q 'leaf2 -&gt; agg1: 10<' &&
	   echo "$t" | grep -q 'agg0 -&gt; core: 5<' && echo "$t" | grep -q 'agg1 -&gt; core: 5<' &&
	   echo "$t" | grep -q 'leaf1 -&gt; agg0: 0<'; then
		ok "map svg: tree cables carry their heavier direction's load"
	else no "map svg: tree cables carry their heavier direction's load" "$(echo "$t" | grep -- '-&gt;' | head -6)"; fi
fi
O=$tmp/df.svg
if picture "map svg: dragonfly" "$O" map -c "$EX/dragonfly.conf" -w 'df[000-071]' -N 2 \
	-s 12x12 --format svg -o "$O"; then
	panels "map svg: dragonfly, panels differ" "$O" differ
	grep -q 'groups [0-8] - [0-8]: busiest global link' "$O" && ok "map svg: dragonfly chords" ||
		no "map svg: dragonfly chords" "no chord tooltip"
fi
picture "map svg: 1-D ring folded" "$tmp/ring.svg" map -c "$tmp/ring.conf" \
	-w 'r[0000-4095]' -N 1 -s 64x64 --format svg -o "$tmp/ring.svg" &&
	grep -q 'x runs along rows of 64' "$tmp/ring.svg" && ok "map svg: ring note"
picture "map svg: 5-D torus projected" "$tmp/t5.svg" map -c "$tmp/t5.conf" \
	-w 'f[0000-1023]' -N 2 -s 16x16x8 --format svg -o "$tmp/t5.svg" &&
	grep -q 'u-v projected' "$tmp/t5.svg" && ok "map svg: 5-D note"

# ---- bounded at 4,096 nodes and beyond ----

# bound NAME FILE RECTS BYTES: at most RECTS <rect> elements and BYTES bytes
bound() {
	r=$(grep -c '<rect' "$2")
	b=$(wc -c <"$2" | tr -d ' ')
	if [ "$r" -le "$3" ] && [ "$b" -le "$4" ]; then ok "$1 ($r rects, $b bytes)"
	else no "$1" "$r rects (at most $3), $b bytes (at most $4)"; fi
}
picture "map svg: 4,096-node torus" "$tmp/t16.svg" map -c "$tmp/t16.conf" \
	-w 'nid[00000-04095]' -N 1 -s 16x16x16:7pt:periodic=all --format svg -o "$tmp/t16.svg" &&
	bound "map svg: 4,096-node torus bounded" "$tmp/t16.svg" 30000 4000000
# 16,384 routers: binned into at most 4,096 cells a side
picture "map svg: 16,384-node mesh binned" "$tmp/m128.svg" map -c "$tmp/m128.conf" \
	-w 'm[00000-16383]' -N 1 -s 128x128 --format svg -o "$tmp/m128.svg" &&
	grep -q 'a cell is 2x2 routers' "$tmp/m128.svg" &&
	bound "map svg: 16,384-node mesh bounded" "$tmp/m128.svg" 30000 4000000
picture "map svg: 4,096-node fat tree" "$tmp/ft.svg" map -c "$tmp/ft.conf" \
	-w 'c[0000-4095]' -N 1 -s 64x64 --format svg -o "$tmp/ft.svg" &&
	bound "map svg: 4,096-node fat tree bounded" "$tmp/ft.svg" 20000 4000000
# a small job on the big tree: the rest collapses
picture "map svg: small job on the fat tree" "$tmp/ft-small.svg" map -c "$tmp/ft.conf" \
	-w 'c[0000-0063]' -N 1 -s 8x8 --format svg -o "$tmp/ft-small.svg" &&
	grep -q '32 nodes, none in the job' "$tmp/ft-small.svg" &&
	bound "map svg: small job, collapsed subtrees" "$tmp/ft-small.svg" 1000 200000
picture "map svg: 100-group dragonfly binned" "$tmp/df100.svg" map -c "$tmp/df100.conf" \
	-w 'd[0000-2047]' -N 2 -s 64x64 --format svg -o "$tmp/df100.svg" &&
	grep -q 'g98-99' "$tmp/df100.svg" &&
	bound "map svg: 100-group dragonfly bounded" "$tmp/df100.svg" 10000 1000000

# ---- the same bytes every time, to stdout as to a file ----

tp map -c "$EX/mesh2d.conf" -w 'node[00-15]' -N 4 -s 8x8:5pt --format svg
if [ "$rc" -eq 0 ] && cmp -s "$tmp/out" "$tmp/mesh.svg"; then ok "map svg: deterministic, stdout = file"
else no "map svg: deterministic, stdout = file" "rc $rc, $(cmp "$tmp/out" "$tmp/mesh.svg" 2>&1)"; fi

# ---- escaping ----

if picture "map svg: names escaped" "$tmp/esc.svg" map -c "$tmp/esc.conf" -w 'a[0-3],b[0-3]' \
	-N 1 -s 8x1 --format svg -o "$tmp/esc.svg"; then
	grep -q 'l&amp;0' "$tmp/esc.svg" && grep -q 'l&lt;1&gt;' "$tmp/esc.svg" &&
		grep -q 't&quot;?' "$tmp/esc.svg" && ok "map svg: entities and bad bytes" ||
		no "map svg: entities and bad bytes" "$(grep -o 'l&[a-z]*;[0-9]' "$tmp/esc.svg" | head -3)"
fi

# ---- a node's inside ----

for x in dgx8 nvl4 pcie16 cpu2; do
	L=""
	[ -f "$NODES/$x.links" ] && L=$NODES/$x.links
	picture "node-info svg: $x" "$tmp/node-$x.svg" node-info --format svg -o "$tmp/node-$x.svg" \
		"$NODES/$x.xml" $L
done
grep -q '>NVSwitch<' "$tmp/node-dgx8.svg" && ok "node-info svg: dgx8 NVSwitch" ||
	no "node-info svg: dgx8 NVSwitch" "no NVSwitch bar"
[ "$(grep -c 'NVLink x4' "$tmp/node-nvl4.svg")" -eq 2 ] && ok "node-info svg: nvl4 NVLinks" ||
	no "node-info svg: nvl4 NVLinks" "$(grep -c 'NVLink x4' "$tmp/node-nvl4.svg") NVLink curves"
[ "$(grep -c '>GPU[0-9]*<' "$tmp/node-pcie16.svg")" -eq 16 ] && ok "node-info svg: pcie16 GPUs" ||
	no "node-info svg: pcie16 GPUs" "$(grep -c '>GPU[0-9]*<' "$tmp/node-pcie16.svg") GPU boxes"
# text stays the default
tp node-info "$NODES/nvl4.xml"
[ "$rc" -eq 0 ] && grep -q '^socket0: cores 0-7' "$tmp/out" && ok "node-info: text by default" ||
	no "node-info: text by default" "rc $rc"
tp node-info --format svg "$NODES/nvl4.xml" "$NODES/nvl4.links"
[ "$rc" -eq 0 ] && cmp -s "$tmp/out" "$tmp/node-nvl4.svg" && ok "node-info svg: stdout = file" ||
	no "node-info svg: stdout = file" "rc $rc"

# map --node: the tasks and GPUs chosen for one node
GM=$tmp/gm.json
echo '{"tasks": 8, "traffic": [[0,1,1e9],[2,3,1e9],[4,5,1e9],[6,7,1e9],[0,4,1e8]]}' >"$GM"
O=$tmp/node-map.svg
if picture "map svg --node" "$O" map -c "$EX/gpu-cluster.conf" -w 'nvl[01-02]' -N 4 -s 8x1 \
	--gpu-matrix "$GM" --format svg --node nvl01 -o "$O"; then
	# the four tasks of nvl01 listed; task colours on cores and GPUs (the
	# first task's colour at least twice: a core and a GPU)
	if [ "$(grep -c '>task [0-9]*: CPUs [0-9-]*, GPU [0-3]<' "$O")" -eq 4 ] &&
	   [ "$(grep -c 'fill="#1f78b4"' "$O")" -ge 3 ] &&
	   ! grep -q 'fill="#1f78b4"' "$tmp/node-nvl4.svg"; then ok "map svg --node: tasks, cores, GPUs"
	else no "map svg --node: tasks, cores, GPUs" "$(grep -o 'task [0-9]*: [^<]*' "$O")"; fi
	echo "differ map svg --node: placement drawn $O.png $tmp/node-nvl4.svg.png" >>"$M"
fi

# ---- errors ----

O=$tmp/err.svg
fails2 "map --node needs --format svg" "needs --format svg" "$O" \
	map -c "$C4" -w 'n[00-07]' -n 8 --node n00 -o "$O"
fails2 "map --node: not in the job" "--node n09: not a node of the job" "$O" \
	map -c "$C4" -w 'n[00-07]' -n 8 --format svg --node n09 -o "$O"
fails2 "map --node: no model" "--node n01: the node has no model" "$O" \
	map -c "$C4" -w 'n[00-07]' -n 8 --format svg --node n01 -o "$O"
fails2 "map --node: empty" "--node: empty node name" "$O" \
	map -c "$C4" -w 'n[00-07]' -n 8 --format svg --node '' -o "$O"
fails2 "map --format: unknown names svg" "json, rankfile, mpich, tasks or svg" "$O" \
	map -c "$C4" -w 'n[00-07]' -n 8 --format png -o "$O"
fails2 "node-info --format: unknown" "text, svg or xml" "$O" node-info --format png -o "$O" "$NODES/nvl4.xml"
fails2 "node-info --output: needs svg or xml" "--output: only with --format svg or xml" "$O" \
	node-info -o "$O" "$NODES/nvl4.xml"
fails2 "node-info --format: missing value" "requires a value" - node-info --format
fails2 "node-info: unknown option" "unknown option '--bogus'" - node-info --bogus
fails2 "node-info svg: bad XML" "bad-node.xml" "$O" node-info --format svg -o "$O" "$DATA/bad-node.xml"
# an output that cannot be written: status 1, one line (bytes= given: no
# note of an assumed size before the error)
tp map -c "$EX/mesh2d.conf" -w 'node[00-15]' -N 4 -s 8x8:bytes=8 --format svg -o "$tmp/no/such/dir.svg"
if [ "$rc" -eq 1 ] && [ "$(wc -l <"$tmp/err")" -eq 1 ] && grep -q 'no/such/dir.svg' "$tmp/err"; then
	ok "map svg: unwritable output"
else no "map svg: unwritable output" "rc $rc: $(cat "$tmp/err")"; fi

# ---- the checks queued above, in one Python run ----

cat >"$tmp/check.py" <<'EOF'
"""Checks of the pictures: XML well-formed, PNG not empty, panels compared.
PNGs are decoded with zlib alone (8-bit RGB or RGBA, not interlaced)."""
import struct
import sys
import xml.etree.ElementTree as ET
import zlib


def pixels(path):
    data = open(path, "rb").read()
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        raise ValueError("not a PNG")
    pos, idat, head = 8, [], None
    while pos < len(data):
        n, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + n]
        pos += 12 + n
        if kind == b"IHDR":
            head = struct.unpack(">IIBBBBB", body)
        elif kind == b"IDAT":
            idat.append(body)
        elif kind == b"IEND":
            break
    w, h, depth, ctype, _, _, interlace = head
    if depth != 8 or ctype not in (2, 6) or interlace:
        raise ValueError("unsupported PNG (depth %d, colour type %d)" % (depth, ctype))
    bpp = 4 if ctype == 6 else 3
    raw, stride = zlib.decompress(b"".join(idat)), w * bpp
    out, prev, i = bytearray(), bytearray(stride), 0
    for _ in range(h):
        f, line = raw[i], bytearray(raw[i + 1:i + 1 + stride])
        i += 1 + stride
        if f == 1:
            for x in range(bpp, stride):
                line[x] = (line[x] + line[x - bpp]) & 255
        elif f == 2:
            line = bytearray((a + b) & 255 for a, b in zip(line, prev))
        elif f == 3:
            for x in range(stride):
                left = line[x - bpp] if x >= bpp else 0
                line[x] = (line[x] + ((left + prev[x]) >> 1)) & 255
        elif f == 4:
            for x in range(stride):
                a = line[x - bpp] if x >= bpp else 0
                b, c = prev[x], prev[x - bpp] if x >= bpp else 0
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                line[x] = (line[x] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
        out += line
        prev = line
    return w, h, bpp, bytes(out)


def ink(path):
    """Pixels that are not background: opaque white, or transparent."""
    w, h, bpp, px = pixels(path)
    n = 0
    for k in range(0, len(px), bpp):
        p = px[k:k + bpp]
        if bpp == 4 and p[3] == 0:
            continue
        if p[0] < 250 or p[1] < 250 or p[2] < 250:
            n += 1
    return n


def main(manifest):
    good = bad = 0
    for line in open(manifest):
        kind, rest = line.split(" ", 1)
        rest = rest.rstrip("\n")
        try:
            if kind == "xml":
                name, f = rest.rsplit(" ", 1)
                root = ET.parse(f).getroot()
                if root.tag != "{http://www.w3.org/2000/svg}svg":
                    raise ValueError("root element is %s" % root.tag)
                what = "well-formed SVG"
            elif kind == "ink":
                name, f, least = rest.rsplit(" ", 2)
                n = ink(f)
                if n < int(least):
                    raise ValueError("%d drawn pixels, expected at least %s" % (n, least))
                what = "%d pixels drawn" % n
            else:
                name, a, b = rest.rsplit(" ", 2)
                pa, pb = pixels(a), pixels(b)
                if kind == "same" and pa != pb:
                    raise ValueError("the panels differ")
                if kind == "differ" and pa == pb:
                    raise ValueError("the panels are the same picture")
                what = "rendered panels " + ("identical" if kind == "same" else "differ")
            print("ok   %s: %s" % (name, what))
            good += 1
        except Exception as e:  # one line per failed check
            print("FAIL %s: %s" % (name if "name" in dir() else line.strip(), e))
            bad += 1
    print("checks %d %d" % (good, bad))


main(sys.argv[1])
EOF
python3 "$tmp/check.py" "$M" >"$tmp/checks"
grep -v '^checks ' "$tmp/checks"
set -- $(sed -n 's/^checks //p' "$tmp/checks")
pass=$((pass + ${1:-0}))
fail=$((fail + ${2:-1}))

echo "svg: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
