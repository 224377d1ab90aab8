#!/usr/bin/env python3
"""topoplace benchmark: one training step's communication on AI fabrics,
simulated with SimGrid SMPI (tests/bench/simgrid-train.sh runs it).

  train.py --topoplace PATH --exe TRAIN_STEP [--cases N] [--seed S]
           [--net rail,nvl] [--nvl-cards] [--draw busy|runs] [--phases]
           [--keep DIR]

Every rank is a GPU: a SimGrid host of its own, its node's GPUs joined by
NVLink, the rank's traffic to other nodes on its own card.  Two fabrics:

  rail  a rail-optimised fat tree: 8 scalable units (SU) of 16 nodes x 8
        GPUs (1,024 GPUs).  GPU k of a node has NVLink (450 GB/s each way,
        an H100's) and card k (50 GB/s, 400 Gb/s) on rail k: the SU's rail-k
        switch; each rail switch has 8 cables of 50 GB/s up to the spine
        (2:1), the cable to destination node d being d mod 8 (d-mod-k, up
        and down).  Between rails NCCL's PXN: NVLink to the sender node's
        GPU of the destination's rail, then that GPU's card.  topoplace:
        Slurm's topology/tree (a leaf switch an SU) plus Rails=8
        LevelUplinks=8 LevelBandwidth=50.
  nvl   NVL72 blocks over a tree: 8 racks of 18 nodes x 4 GPUs (576 GPUs),
        each rack one NVLink domain (900 GB/s a GPU each way); a node's four
        cards (50 GB/s each) drawn as one port of 200 GB/s its GPUs share
        (as topoplace's block model has it: NCCL spreading a GPU's channels
        over the tray's cards; --nvl-cards gives each GPU its own card
        instead, and topoplace NetworkCards=4), into a
        leaf switch for two
        racks, 18 cables of 200 GB/s up from each leaf to the spine (2:1),
        d mod 18.  topoplace:
        Slurm's topology/block plus TreeTopologyFile= (the leaves),
        LevelUplinks=18 (the leaves' cables up, as a site that knows its
        tree states them) and BlockBandwidth=3600 NetworkBandwidth=200.

Every link 0.1 us; SimGrid's CM02 flow model (no SMPI factors) with its RTT
sharing, which the configs state (FlowSharing=rtt).

Allocations are fragmented, from a seed drawn at run time unless --seed is
given (printed: a run can be repeated).  --draw busy (the default): what a
busy cluster leaves, other jobs' runs and the holes between them in every
domain, and Slurm's choice there, the domains with the most free nodes
first (draw_busy); --draw runs: runs of consecutive free nodes (2 to 6 on
the rail fabric, 2 to 10 on NVL72) at random places on an empty machine
until the job's nodes are there.  Each case places the job three ways,
every rank's GPU its local rank (on the rail fabric local rank k is rail k
for all three):

  slurm   Slurm 26.05's own layout of the step, as topoplace's core models
          it (topoplace map --policy block --slurm-version 26.05.3 with the
          case's slurm.conf): block index, leaf switch, node order;
  kueue   Kueue-like rank by domain: the SUs or racks with the most of the
          job's nodes first (ties by index), nodes in name order inside;
  topoplace  topoplace map (policy auto) with the step's pattern: --parallel
          where `topoplace map --help` lists it, else --graph on the JSON
          graph of the step's messages that this script writes; twice
          with --parallel: as users write it (the default volumes) and
          with bytes= of the bench's true volumes (true_bytes) and its
          micro-batches (micro=, where the help lists it), so that the
          defaults are judged too.

The SMPI program (train_step.c) runs tp-cp-ep-dp-pp ranks (Megatron's
order) with ring all-reduces written as MPI_Sendrecv; each case's time is
its simulated step; each case also says the ratio topoplace predicted
(its report's, against the same Slurm order).  The table gives medians and
the ratio to Slurm's order per case (median, worst).
"""

import argparse
import json
import os
import random
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import platforms  # noqa: E402  (XML head, written the same way)

LAT_US = 0.1

FABRICS = {
    "rail": {
        "label": "rail fat tree, 8 SUs x 16 nodes x 8 GPUs",
        "domains": 8, "nodes_per_domain": 16, "gpus": 8,
        "prefix": "g", "width": 3, "job_nodes": 32, "run": (2, 6),
        "nvl_bw": 450, "nic_bw": 50, "up_bw": 50, "uplinks": 8,
        # tp=8 fills a node; DP peers 8 ranks apart, PP stages 64
        "par": {"tp": 8, "cp": 1, "ep": 1, "pp": 4, "dp": 8},
    },
    "nvl": {
        "label": "NVL72 racks, 8 x 18 nodes x 4 GPUs, a tree above",
        "domains": 8, "nodes_per_domain": 18, "gpus": 4,
        "prefix": "gb", "width": 3, "job_nodes": 64, "run": (2, 10),
        "nvl_bw": 900, "nic_bw": 50, "up_bw": 200, "uplinks": 18,
        "leaf_domains": 2,
        # an MoE step: EP all-to-all inside 4 ranks
        "par": {"tp": 4, "cp": 1, "ep": 4, "pp": 4, "dp": 4},
    },
}

# One step: 2 layers a stage, 2 microbatches; bytes of one collective
LAYERS, MICRO = 2, 2
SIZES = {"tp": 8 << 20, "pp": 8 << 20, "dp": 64 << 20, "ep": 8 << 20}


def true_bytes(par):
    """The bench's own volumes as bytes= (MiB a rank a step, as topoplace
    reads them): what train_step.c moves, in the units of --parallel."""
    mib = float(1 << 20)
    b = {
        # a ring all-reduce of SIZES["tp"] each layer, forward and backward
        "tp": 2 * LAYERS * MICRO * SIZES["tp"] / mib,
        # ring attention: (n-1) hops of tp/n a layer, both ways; topoplace's
        # ring of 2B(n-1)/n carries that with B = LAYERS x MICRO x tp
        "cp": LAYERS * MICRO * SIZES["tp"] / mib,
        "ep": 2 * LAYERS * MICRO * SIZES["ep"] / mib,
        "dp": SIZES["dp"] / mib,
        # one activation forward, one gradient back a microbatch
        "pp": MICRO * SIZES["pp"] / mib,
    }
    return ",".join("%s:%g" % (k, b[k]) for k in ("tp", "cp", "ep", "dp", "pp"))


def sh(argv, cwd=None, timeout=1800):
    p = subprocess.run(argv, cwd=cwd, stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, text=True, timeout=timeout)
    return p.returncode, p.stdout, p.stderr


def name(f, i):
    return "%s%0*d" % (f["prefix"], f["width"], i)


def hostlist(f, idx):
    runs, start, prev = [], None, None
    for n in sorted(idx):
        if start is None:
            start = prev = n
        elif n == prev + 1:
            prev = n
        else:
            runs.append((start, prev))
            start = prev = n
    runs.append((start, prev))
    w = f["width"]
    return f["prefix"] + "[" + ",".join(
        "%0*d" % (w, a) if a == b else "%0*d-%0*d" % (w, a, w, b)
        for a, b in runs) + "]"


# ---- the fabrics as topoplace and Slurm see them ----

def write_confs(key, f, d, nvl_cards=False):
    nd, npd = f["domains"], f["nodes_per_domain"]
    last = name(f, nd * npd - 1)
    with open(os.path.join(d, "slurm.conf"), "w") as out:
        out.write("ClusterName=bench\nSelectType=select/cons_tres\n"
                  "TopologyPlugin=topology/%s\nNodeName=%s[%0*d-%s] CPUs=%d\n"
                  "PartitionName=p Nodes=ALL Default=YES\n" % (
                      "tree" if key == "rail" else "block", f["prefix"],
                      f["width"], 0, last[len(f["prefix"]):], 2 * f["gpus"]))
    dom = lambda i: "%s[%0*d-%0*d]" % (f["prefix"], f["width"], i * npd,
                                       f["width"], (i + 1) * npd - 1)
    fabric = "FlowSharing=rtt\nHopLatency=%gus\n" % LAT_US
    if key == "rail":
        topo = "".join("SwitchName=su%d Nodes=%s\n" % (i, dom(i)) for i in range(nd))
        topo += "SwitchName=spine Switches=su[0-%d]\n" % (nd - 1)
        conf = ("Rails=%d LevelUplinks=%d LevelBandwidth=%g\n"
                "NodeBandwidth=%gGB/s IntraNodeBandwidth=%gGB/s\n" % (
                    f["gpus"], f["uplinks"], f["up_bw"], f["nic_bw"], f["nvl_bw"]))
    else:
        topo = "".join("BlockName=nvl%d Nodes=%s\n" % (i, dom(i)) for i in range(nd))
        topo += "BlockSizes=%d\n" % npd
        ld = f["leaf_domains"]
        tree = "".join("SwitchName=leaf%d Nodes=%s[%0*d-%0*d]\n" % (
            l, f["prefix"], f["width"], l * ld * npd, f["width"],
            (l + 1) * ld * npd - 1) for l in range(nd // ld))
        tree += "SwitchName=spine Switches=leaf[0-%d]\n" % (nd // ld - 1)
        with open(os.path.join(d, "fabric.conf"), "w") as out:
            out.write(tree)
        # the tree's cables up are the fabric's, stated as for the rail
        # fabric; their bandwidth is NetworkBandwidth='s (200 GB/s)
        conf = ("TreeTopologyFile=fabric.conf LevelUplinks=%d\n"
                "BlockBandwidth=%g NetworkBandwidth=%g\n"
                "IntraNodeBandwidth=%gGB/s\n" % (
                    f["uplinks"], f["gpus"] * f["nvl_bw"], f["gpus"] * f["nic_bw"],
                    f["nvl_bw"]))
        if nvl_cards:   # a card a GPU, sharing the tray's bandwidth
            conf += "NetworkCards=%d\n" % f["gpus"]
    with open(os.path.join(d, "topology.conf"), "w") as out:
        out.write(topo)
    with open(os.path.join(d, "topoplace.conf"), "w") as out:
        out.write(conf + fabric)


# ---- the SimGrid platform of one allocation (its GPUs only) ----

def platform(key, f, alloc, path, nvl_cards=False):
    """A Full zone over the allocation's GPUs: every ordered pair's route
    written out, as the fabric routes it (module docstring)."""
    g = f["gpus"]
    npd = f["nodes_per_domain"]
    hosts = [(n, k) for n in alloc for k in range(g)]
    lk = lambda bw: 'bandwidth="%gGBps" latency="%gus"' % (bw, LAT_US)
    out = [platforms.XML_HEAD, '  <zone id="job" routing="Full">\n']
    for n, k in hosts:
        out.append('    <host id="%s-%d" speed="1Gf"/>\n' % (name(f, n), k))
    for n, k in hosts:
        h = "%s-%d" % (name(f, n), k)
        for l, bw in (("nu", f["nvl_bw"]), ("nd", f["nvl_bw"]),
                      ("cu", f["nic_bw"]), ("cd", f["nic_bw"])):
            if l[0] == "c" and key == "nvl" and not nvl_cards:
                continue
            out.append('    <link id="%s_%s" %s/>\n' % (l, h, lk(bw)))
    if key == "nvl" and not nvl_cards:   # a tray's cards as one shared port
        for n in alloc:
            for l in ("pu", "pd"):
                out.append('    <link id="%s_%s" %s/>\n' % (
                    l, name(f, n), lk(g * f["nic_bw"])))
    # the switch cables the job can use
    U = f["uplinks"]
    if key == "rail":
        sws = sorted({(n // npd, r) for n in alloc for r in range(g)})
        for s, r in sws:
            for c in range(U):
                for l in ("up", "dn"):
                    out.append('    <link id="%s_su%d_r%d_%d" %s/>\n' % (
                        l, s, r, c, lk(f["up_bw"])))
    else:
        leaves = sorted({n // (npd * f["leaf_domains"]) for n in alloc})
        for s in leaves:
            for c in range(U):
                for l in ("up", "dn"):
                    out.append('    <link id="%s_leaf%d_%d" %s/>\n' % (
                        l, s, c, lk(f["up_bw"])))
    for na, ka in hosts:
        a = "%s-%d" % (name(f, na), ka)
        for nb, kb in hosts:
            if (na, ka) == (nb, kb):
                continue
            b = "%s-%d" % (name(f, nb), kb)
            links = []
            if key == "rail":
                if na == nb:
                    links = ["nu_" + a, "nd_" + b]
                else:
                    src = a
                    if ka != kb:      # PXN: NVLink to the rail's GPU first
                        src = "%s-%d" % (name(f, na), kb)
                        links = ["nu_" + a, "nd_" + src]
                    links.append("cu_" + src)
                    if na // npd != nb // npd:
                        c = nb % U
                        links += ["up_su%d_r%d_%d" % (na // npd, kb, c),
                                  "dn_su%d_r%d_%d" % (nb // npd, kb, c)]
                    links.append("cd_" + b)
            else:
                if na // npd == nb // npd:
                    links = ["nu_" + a, "nd_" + b]
                else:
                    links = ["cu_" + a if nvl_cards else "pu_" + name(f, na)]
                    la = na // (npd * f["leaf_domains"])
                    lb = nb // (npd * f["leaf_domains"])
                    if la != lb:
                        c = nb % U
                        links += ["up_leaf%d_%d" % (la, c), "dn_leaf%d_%d" % (lb, c)]
                    links.append("cd_" + b if nvl_cards else "pd_" + name(f, nb))
            out.append('    <route src="%s" dst="%s" symmetrical="NO">%s</route>\n' % (
                a, b, "".join('<link_ctn id="%s"/>' % l for l in links)))
    out.append("  </zone>\n</platform>\n")
    with open(path, "w") as fh:
        fh.write("".join(out))


# ---- the step's pattern, for topoplace --graph ----

def step_graph(par, path):
    dims = ["tp", "cp", "ep", "dp", "pp"]
    size = [par[d] for d in dims]
    world = 1
    for s in size:
        world *= s
    edges = {}

    def add(a, b, w):
        if a != b and w > 0:
            edges[(a, b)] = edges.get((a, b), 0) + w

    def coords(r):
        c = []
        for s in size:
            c.append(r % s)
            r //= s
        return c

    def rank(c):
        r = 0
        for k in reversed(range(len(size))):
            r = r * size[k] + c[k]
        return r

    def peer(c, d, x):
        c2 = list(c)
        c2[d] = x % size[d]
        return rank(c2)
    per_layer = 2 * LAYERS * MICRO        # forward and backward
    for r in range(world):
        c = coords(r)
        n = par["tp"]
        if n > 1:
            add(r, peer(c, 0, c[0] + 1), per_layer * 2 * (n - 1) * SIZES["tp"] // n)
        n = par["cp"]
        if n > 1:
            add(r, peer(c, 1, c[1] + 1), per_layer * (n - 1) * SIZES["tp"] // n)
        n = par["ep"]
        if n > 1:
            for j in range(1, n):
                add(r, peer(c, 2, c[2] + j), per_layer * SIZES["ep"] // n)
        n = par["dp"]
        if par["ep"] > 1:   # MoE: dense over ep x dp, experts over dp, half each
            m = par["ep"] * n
            g = (c[2] + par["ep"] * c[3] + 1) % m
            c2 = list(c)
            c2[2], c2[3] = g % par["ep"], g // par["ep"]
            add(r, rank(c2), 2 * (m - 1) * (SIZES["dp"] // 2) // m)
            if n > 1:
                add(r, peer(c, 3, c[3] + 1), 2 * (n - 1) * (SIZES["dp"] // 2) // n)
        elif n > 1:
            add(r, peer(c, 3, c[3] + 1), 2 * (n - 1) * SIZES["dp"] // n)
        if c[4] + 1 < par["pp"]:
            add(r, peer(c, 4, c[4] + 1), MICRO * SIZES["pp"])
            add(peer(c, 4, c[4] + 1), r, MICRO * SIZES["pp"])
    with open(path, "w") as fh:
        json.dump({"tasks": world, "directed": True,
                   "edges": [[a, b, w] for (a, b), w in sorted(edges.items())]}, fh)


# ---- the three layouts ----

def read_hostfile(text):
    return [ln.strip() for ln in text.splitlines() if ln.strip()]


def topoplace_map(a, d, f, alloc, extra):
    """The rank -> node list topoplace map gives, and its predicted ratio
    to Slurm's order (None when it predicted none)."""
    argv = [a.topoplace, "map", "-c", os.path.join(d, "topoplace.conf"),
            "--slurm-conf", os.path.join(d, "slurm.conf"),
            "--slurm-version", "26.05.3", "-w", hostlist(f, alloc),
            "-N", str(f["gpus"]), "-f", "json"] + extra
    rc, out, err = sh(argv)
    if rc:
        raise RuntimeError("topoplace map: %s" % (err.strip().splitlines() or ["?"])[-1])
    rep = json.loads(out)
    pred = rep.get("predicted") or {}
    return list(rep["mapping"]), pred.get("ratio")


def kueue_order(f, alloc):
    npd = f["nodes_per_domain"]
    count = {}
    for n in alloc:
        count[n // npd] = count.get(n // npd, 0) + 1
    doms = sorted(count, key=lambda s: (-count[s], s))
    nodes = [n for s in doms for n in sorted(x for x in alloc if x // npd == s)]
    return [name(f, n) for n in nodes for _ in range(f["gpus"])]


def has_parallel(tp):
    rc, out, err = sh([tp, "map", "--help"])
    return "--parallel" in out + err


def has_micro(tp):
    """micro= in --parallel (the step's micro-batches, for the pipeline)."""
    rc, out, err = sh([tp, "map", "--help"])
    return "micro=M" in out + err


def draw_busy(f, rnd):
    """What a busy cluster leaves, and Slurm's choice in it: each domain
    (SU, rack) is walked node by node as other jobs' runs (1 to 6 nodes)
    and holes they left (1 to 3), a domain's share of busy runs drawn from
    30 % to 95 %; redrawn until the job fits.  Slurm's topology/tree and
    topology/block select the fewest domains: the domains with the most
    free nodes first (ties by index), all their free nodes, the last one
    its lowest free nodes.  So the job sits in few domains, most of them
    partly, in the holes of each."""
    nd, npd = f["domains"], f["nodes_per_domain"]
    while True:
        free = {}
        for dom in range(nd):
            busy = rnd.uniform(0.30, 0.95)
            n, end, holes = dom * npd, (dom + 1) * npd, []
            while n < end:
                if rnd.random() < busy:
                    n += rnd.randint(1, 6)
                else:
                    k = rnd.randint(1, 3)
                    holes.extend(range(n, min(end, n + k)))
                    n += k
            free[dom] = holes
        if sum(len(h) for h in free.values()) >= f["job_nodes"]:
            break
    alloc = []
    for dom in sorted(free, key=lambda x: (-len(free[x]), x)):
        for n in free[dom]:
            if len(alloc) < f["job_nodes"]:
                alloc.append(n)
    return sorted(alloc)


def draw_alloc(f, rnd):
    total = f["domains"] * f["nodes_per_domain"]
    free = set(range(total))
    alloc = set()
    lo, hi = f["run"]
    while len(alloc) < f["job_nodes"]:
        start = rnd.randrange(total)
        for n in range(start, min(total, start + rnd.randint(lo, hi))):
            if len(alloc) < f["job_nodes"] and n in free:
                alloc.add(n)
                free.discard(n)
    return sorted(alloc)


def simulate(a, plat, hosts, par, d, sizes=None):
    sizes = sizes or SIZES
    hf = os.path.join(d, "ranks.hosts")
    with open(hf, "w") as fh:
        fh.write("\n".join(hosts) + "\n")
    argv = ["smpirun", "-np", str(len(hosts)), "-platform", plat, "-hostfile", hf,
            "-quiet", "--cfg=smpi/privatization:no",
            "--cfg=smpi/simulate-computation:no", "--cfg=smpi/host-speed:1Gf",
            "--cfg=smpi/display-timing:no", "--cfg=network/crosstraffic:0",
            "--cfg=network/model:CM02", "--log=root.thres:error", a.exe,
            str(par["tp"]), str(par["cp"]), str(par["ep"]), str(par["pp"]),
            str(par["dp"]), str(LAYERS), str(MICRO), str(sizes["tp"]),
            str(sizes["pp"]), str(sizes["dp"]), str(sizes["ep"])]
    rc, out, err = sh(argv, cwd=d)
    m = re.search(r"step_us ([0-9.]+)", out)
    if rc or not m:
        raise RuntimeError("smpirun exit %d: %s" % (
            rc, (err.strip().splitlines() or out.strip().splitlines() or [""])[-1][:200]))
    return float(m.group(1))


def gpu_hosts(f, node_per_rank):
    """Rank -> its GPU host: the node's next local rank's GPU."""
    seen, out = {}, []
    for nd in node_per_rank:
        k = seen.get(nd, 0)
        seen[nd] = k + 1
        out.append("%s-%d" % (nd, k))
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--topoplace", required=True)
    ap.add_argument("--exe", required=True, help="train_step built with smpicc")
    ap.add_argument("--cases", type=int, default=3, help="allocations a fabric")
    ap.add_argument("--seed", type=int, help="first seed (default: drawn)")
    ap.add_argument("--net", default="rail,nvl")
    ap.add_argument("--keep", help="keep the work files here")
    ap.add_argument("--phases", action="store_true",
                    help="also simulate each phase alone (TP, PP, DP, EP) "
                    "in Slurm's order and topoplace's")
    ap.add_argument("--draw", choices=("busy", "runs"), default="busy",
                    help="allocations: what a busy cluster leaves, as Slurm "
                    "selects in it (default), or runs of free nodes anywhere")
    ap.add_argument("--nvl-cards", action="store_true",
                    help="NVL72: a card a GPU (50 GB/s each), not one shared "
                    "port a node (topoplace: NetworkCards=4)")
    a = ap.parse_args()
    seed = a.seed if a.seed is not None else random.SystemRandom().randrange(1000, 10 ** 6)
    work = a.keep or tempfile.mkdtemp(prefix="topoplace-train.")
    os.makedirs(work, exist_ok=True)
    parallel = has_parallel(a.topoplace)
    micro = parallel and has_micro(a.topoplace)
    print("train: one step's communication in SMPI (CM02, %d layers, %d "
          "microbatches); seed %d (--seed %d repeats); allocations: %s; "
          "topoplace given %s; NVL72 nodes: %s" % (
              LAYERS, MICRO, seed, seed, a.draw,
              "--parallel" if parallel else "the step's graph (--graph)",
              "a card a GPU" if a.nvl_cards else "one shared port"))
    rows = []
    t_start = time.time()
    try:
        for key in a.net.split(","):
            f = FABRICS[key]
            d = os.path.join(work, key)
            os.makedirs(d, exist_ok=True)
            write_confs(key, f, d, a.nvl_cards)
            par = f["par"]
            graph = os.path.join(d, "step.json")
            step_graph(par, graph)
            ptxt = ",".join("%s=%d" % (k, par[k]) for k in ("tp", "cp", "ep", "pp", "dp"))
            hint = (["--parallel", ptxt] if parallel else ["--graph", graph])
            # the hint as users write it (the default volumes) and with the
            # bench's true volumes (bytes=) and micro-batches: the defaults
            # judged too
            hint_b = (["--parallel", ptxt + ",bytes=" + true_bytes(par) +
                       (",micro=%d" % MICRO if micro else "")]
                      if parallel else None)
            res = {"slurm": [], "kueue": [], "topoplace": [], "bytes": []}
            for c in range(a.cases):
                s = seed + c
                rnd = random.Random("%s-train-%d" % (key, s))
                alloc = (draw_busy(f, rnd) if a.draw == "busy"
                         else draw_alloc(f, rnd))
                plat = os.path.join(d, "platform-%d.xml" % s)
                platform(key, f, alloc, plat, a.nvl_cards)
                slurm, _ = topoplace_map(a, d, f, alloc, ["--policy", "block"])
                tpl, pratio = topoplace_map(a, d, f, alloc, hint)
                tpb, bratio = (topoplace_map(a, d, f, alloc, hint_b) if hint_b
                               else (tpl, pratio))
                orders = {"slurm": slurm, "kueue": kueue_order(f, alloc),
                          "topoplace": tpl, "bytes": tpb}
                t = {}
                for o, nodes in orders.items():
                    if o == "bytes" and nodes == tpl:   # the same layout
                        t[o] = t["topoplace"]
                    else:
                        t[o] = simulate(a, plat, gpu_hosts(f, nodes), par, d)
                    res[o].append(t[o])
                print("  %s seed %d, %s: slurm %.0f us, kueue %.0f us (%.2fx), "
                      "topoplace %.0f us (%.2fx; it predicted %s), with bytes= "
                      "%.0f us (%.2fx; %s)" % (
                          key, s, hostlist(f, alloc), t["slurm"], t["kueue"],
                          t["kueue"] / t["slurm"], t["topoplace"],
                          t["topoplace"] / t["slurm"],
                          "%.2fx" % pratio if pratio else "nothing",
                          t["bytes"], t["bytes"] / t["slurm"],
                          "the same layout" if tpb == tpl else
                          "predicted %.2fx" % bratio if bratio else "nothing"))
                if a.phases:
                    ph = []
                    for k in ("tp", "pp", "dp", "ep"):
                        if k == "ep" and par["ep"] < 2:
                            continue
                        one = {x: (SIZES[x] if x == k else 0) for x in SIZES}
                        ts = simulate(a, plat, gpu_hosts(f, slurm), par, d, one)
                        tt = simulate(a, plat, gpu_hosts(f, tpl), par, d, one)
                        ph.append("%s %.0f -> %.0f us" % (k, ts, tt))
                    print("    alone, slurm -> topoplace: " + ", ".join(ph))
                sys.stdout.flush()
                if not a.keep:
                    os.remove(plat)
            rows.append((key, f, ptxt, res))
    finally:
        if not a.keep:
            shutil.rmtree(work, ignore_errors=True)
    print()
    print("%-6s %-26s %5s %10s %10s %10s %10s %16s %16s %16s" % (
        "fabric", "parallelism", "cases", "slurm us", "kueue us", "tp us",
        "tp+b us", "kueue/slurm", "topoplace/slurm", "+bytes=/slurm"))
    for key, f, ptxt, res in rows:
        def ratio(o):
            r = [x / y for x, y in zip(res[o], res["slurm"])]
            return "%.2f (max %.2f)" % (statistics.median(r), max(r))
        print("%-6s %-26s %5d %10.0f %10.0f %10.0f %10.0f %16s %16s %16s" % (
            key, ptxt, len(res["slurm"]), statistics.median(res["slurm"]),
            statistics.median(res["kueue"]), statistics.median(res["topoplace"]),
            statistics.median(res["bytes"]), ratio("kueue"), ratio("topoplace"),
            ratio("bytes")))
        print("%-6s bytes= %s%s (the bench's true volumes)" % (
            key, true_bytes(f["par"]), ",micro=%d" % MICRO if micro else ""))
    print("ratios: per case against Slurm 26.05's order, median (worst); "
          "topoplace: --parallel as users write it (default volumes), "
          "+bytes=: with the bench's volumes; allocations: %s; %.0f s" % (
              a.draw, time.time() - t_start))


if __name__ == "__main__":
    main()
