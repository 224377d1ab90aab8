#!/bin/sh
# The plugin's node detection on a real GPU node (the `device` machine of
# the development environment, or any GPU node of a site): what
# tp_node_detect finds through hwloc and the vendor's library, beside what
# the vendor's own tool says, and what it costs cold and cached.
#   sh tests/device/gpu-node.sh [BUILD]      (run from the repository root)
# Needs the build's deps (contrib/install-deps.sh build); prints, exits 0
# unless the build fails.  Nothing here runs in CI: CI has no GPU.
set -u
BUILD=${1:-build}
make -s -j"$(nproc)" BUILD="$BUILD" all "$BUILD/bench/bench_node" >/dev/null || exit 1
T=$BUILD/topoplace
echo "== machine"
uname -sr
nproc
command -v nvidia-smi >/dev/null && nvidia-smi --query-gpu=name,pci.bus_id,driver_version --format=csv,noheader
command -v amd-smi >/dev/null && amd-smi list 2>/dev/null | head -20
echo "== vendor tool"
command -v nvidia-smi >/dev/null && nvidia-smi topo -m
command -v amd-smi >/dev/null && amd-smi topology 2>/dev/null
echo "== topoplace node-info (hwloc + vendor library, no cache)"
"$T" node-info
echo "== the same as one hwloc XML: the fabric's distances"
"$T" node-info --format xml | grep -A3 'Bandwidth"' | head -12
dir=$(mktemp -d /tmp/tp-device-cache.XXXXXX)
chmod 0755 "$dir"
echo "== cache: first (detect + store) and second (cached) run"
"$T" node-info --cache "$dir" | head -1
"$T" node-info --cache "$dir" | head -1
ls -l "$dir"
rm -rf "$dir"
echo "== cost (bench_node)"
"$BUILD/bench/bench_node" --reps 11
