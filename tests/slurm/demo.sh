#!/bin/bash
# topoplace — the SPANK plugin at work (make slurm-demo).  Starts the test
# cluster (8 nodes as a 2x2x2 torus), submits one job of 64 tasks with a
# 4x4x4 periodic stencil hint and --topo-report, shows where every rank ran
# next to Slurm's default order, and stops the cluster.  Needs root.
[ -n "${BASH_VERSION:-}" ] || exec bash "$0" "$@"   # make runs it with sh
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
REPO=$(cd "$HERE/../.." && pwd)
BUILD=${BUILD:-build}
case "$BUILD" in /*) B=$BUILD ;; *) B=$REPO/$BUILD ;; esac
export TP_SLURM_DIR=${TP_SLURM_DIR:-/tmp/topoplace-slurm}
export TP_NNODES=8 TP_CPUS=8 TP_GPUS=4 TP_DIMS=2x2x2 TP_PLUGIN=$B/topoplace.so
DIR=$TP_SLURM_DIR
TPUSER=${TP_USER:-tpuser}
export TP_USER=$TPUSER

if [ "$(id -u)" != 0 ]; then
	echo "slurm-demo: needs root (it starts a Slurm cluster on this machine)"
	exit 1
fi
[ -r "$TP_PLUGIN" ] || { echo "slurm-demo: $TP_PLUGIN not built"; exit 1; }
# one test cluster per host: wait for the lock before touching it
exec 9>/tmp/topoplace-slurm.lock; flock 9   # one test cluster per host
bash "$HERE/cluster.sh" status >/dev/null 2>&1 && bash "$HERE/cluster.sh" stop
trap 'bash "$HERE/cluster.sh" stop' EXIT
bash "$HERE/cluster.sh" start || exit 1
# shellcheck disable=SC1091
. "$DIR/env.sh"
W=$DIR/home/$TPUSER/demo
rm -rf "$W"; mkdir -p "$W"; chown "$TPUSER:" "$W"

cat > "$W/job.sh" <<'EOF'
#!/bin/bash
echo "ranks: $(srun -l hostname | sort -n | awk '{print $2}' | paste -sd' ')"
echo "default: $(srun -m block -l hostname | sort -n | awk '{print $2}' | paste -sd' ')"
EOF
chown "$TPUSER:" "$W/job.sh"; chmod 0755 "$W/job.sh"

echo
echo "== the cluster"
sinfo -N -o '%N %c %G %T' | column -t
echo
echo "== topoplace.conf"
grep -v '^#' "$DIR/etc/topoplace.conf"
echo
SPEC=4x4x4:7pt:periodic=all
echo "== sbatch -N8 --ntasks-per-node=8 --topo-stencil=$SPEC --topo-report job.sh   (as $TPUSER)"
j=$(setpriv --reuid="$TPUSER" --regid="$TPUSER" --init-groups env -i PATH=/usr/bin:/bin \
	HOME="$W" SLURM_CONF="$SLURM_CONF" bash -c "cd '$W' && sbatch --parsable \
	-N8 --ntasks-per-node=8 --topo-stencil=$SPEC --topo-report -o out.txt -e err.txt ./job.sh")
for ((i = 0; i < 600; i++)); do [ -z "$(squeue -h -j "$j" 2>/dev/null)" ] && break; sleep 0.1; done
echo
echo "== the job's stderr"
cat "$W/err.txt"
echo
echo "== where every rank ran; xyz = the rank's stencil position (rank % 4, rank / 4 % 4, rank / 16),
==   box = the extent of the stencil block each node holds"
python3 - "$W/out.txt" <<'EOF'
import sys
lines = dict(l.split(": ", 1) for l in open(sys.argv[1]) if ": " in l)
def table(names, title):
    hosts = names.split()
    by = {}
    for r, h in enumerate(hosts):
        by.setdefault(h, []).append(r)
    print(title)
    for h in sorted(by, key=lambda s: int(s[4:])):
        cells = " ".join(f"{r % 4}{r // 4 % 4}{r // 16}" for r in by[h])
        xs = {r % 4 for r in by[h]}; ys = {r // 4 % 4 for r in by[h]}; zs = {r // 16 for r in by[h]}
        print(f"  {h:<6} ranks {' '.join(f'{r:2d}' for r in by[h])}   xyz {cells}   box {len(xs)}x{len(ys)}x{len(zs)}")
table(lines["ranks"].strip(), "with topoplace (plain srun in the job: the plugin's SLURM_HOSTFILE)")
print()
table(lines["default"].strip(), "Slurm's default order (srun -m block in the same job)")
EOF
echo
