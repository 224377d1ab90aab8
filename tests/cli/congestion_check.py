#!/usr/bin/env python3
"""Independent check of topoplace's congestion model.

Written from the model's definition (metrics.h, doc/algorithms.md), not from
the C code: every task-graph edge {u, v} of w bytes is two messages, u -> v
and v -> u, of w bytes each; each is routed from its sender's node to its
receiver's node; links are full duplex, so a link's two directions are
loaded separately; the result is the largest directed load (bytes) and the
most messages on one directed link.

Routing, restated here:
  torus/mesh  dimension order (x, then y, then z); on a wrapped dimension the
              shorter way round, the positive way on a tie;
  tree        up from the sender's node to the lowest common switch, down to
              the receiver's node (a node's link to its switch is a link);
  dragonfly   direct: local hop to the router that holds the best global link
              (fewest hops, lowest link index on ties), the global link,
              local hop to the receiver; global link k between groups g and h
              leaves g at router ((h - g - 1 mod G) * L + k) mod A;
  block       inside a block the sender's NVLink port up and the
              receiver's down; between blocks up/down the tree Slurm's
              block aggregation makes (BlockSizes=).

Random machines, allocations, graphs and mappings; each mapping is written as
a hostfile and scored by `topoplace eval --format json`; both results must
agree exactly.  Prints one line per case; exits 1 on any mismatch.

usage: congestion_check.py TOPOPLACE TMPDIR
"""
import json
import random
import subprocess
import sys


def torus_route(a, b, dims, wrap):
    """Directed links (coords of the sender, dim, +1/-1) of a -> b."""
    cur = list(a)
    links = []
    for d in range(len(dims)):
        n = dims[d]
        if wrap[d]:
            fwd = (b[d] - cur[d]) % n
            step, count = (1, fwd) if fwd <= n - fwd else (-1, n - fwd)
        else:
            step = 1 if b[d] >= cur[d] else -1
            count = abs(b[d] - cur[d])
        for _ in range(count):
            links.append((tuple(cur), d, step))
            cur[d] = (cur[d] + step) % n
    assert cur == list(b)
    return links


def tree_route(a, b, parent):
    """a, b: node names; parent: name -> parent name (None at the top)."""
    def chain(x):
        out = [x]
        while parent[x] is not None:
            x = parent[x]
            out.append(x)
        return out
    ca, cb = chain(a), chain(b)
    common = next(x for x in ca if x in cb)
    up = [(x, "up") for x in ca[:ca.index(common)]]
    down = [(x, "down") for x in reversed(cb[:cb.index(common)])]
    return up + down


def dragonfly_route(a, b, G, A, L):
    """a, b: (router, group).  Direct routing."""
    (ra, ga), (rb, gb) = a, b
    if ga == gb:
        return [] if ra == rb else [("local", ga, ra, rb)]
    best = None
    for k in range(min(L, 2 * A)):
        x = ((gb - ga - 1) % G * L + k) % A
        y = ((ga - gb - 1) % G * L + k) % A
        cost = (ra != x) + 1 + (rb != y)
        if best is None or cost < best[0]:
            best = (cost, k, x, y)
    _, k, x, y = best
    out = []
    if ra != x:
        out.append(("local", ga, ra, x))
    out.append(("global", ga, gb, k))
    if y != rb:
        out.append(("local", gb, y, rb))
    return out


def score(edges, where, route):
    load, msgs = {}, {}
    for u, v, w in edges:
        for s, t in ((u, v), (v, u)):
            if where[s] == where[t]:
                continue
            for link in route(where[s], where[t]):
                load[link] = load.get(link, 0) + w
                msgs[link] = msgs.get(link, 0) + 1
    return max(load.values(), default=0), max(msgs.values(), default=0)


def run_eval(tp, tmp, conf, names, mapping, edges, ntasks):
    with open(f"{tmp}/cc.conf", "w") as f:
        f.write(conf)
    with open(f"{tmp}/cc.json", "w") as f:
        json.dump({"tasks": ntasks, "edges": [list(e) for e in edges]}, f)
    with open(f"{tmp}/cc.hosts", "w") as f:
        f.write("".join(names[i] + "\n" for i in mapping))
    used = sorted(set(mapping), key=mapping.index)
    r = subprocess.run([tp, "eval", "--config", f"{tmp}/cc.conf",
                        "--nodes", ",".join(names[i] for i in used),
                        "--hostfile", f"{tmp}/cc.hosts", "--graph",
                        f"{tmp}/cc.json", "--format", "json"],
                       capture_output=True, text=True)
    if r.returncode:
        raise SystemExit(f"topoplace eval failed: {r.stderr.strip()}")
    m = json.loads(r.stdout)["metrics"]
    return m["max_congestion_bytes"], m["max_congestion_msgs"]


def random_graph(rng, n, m):
    edges = {}
    while len(edges) < m:
        u, v = rng.randrange(n), rng.randrange(n)
        if u != v:
            edges[(min(u, v), max(u, v))] = rng.randint(1, 50)
    return [(u, v, w) for (u, v), w in sorted(edges.items())]


def torus_case(rng, dims, wrap):
    X, Y, Z = dims
    coords = [(x, y, z) for z in range(Z) for y in range(Y) for x in range(X)]
    names = [f"n{i:03d}" for i in range(len(coords))]
    conf = (f"Network=torus Dims={X}x{Y}x{Z} "
            f"Wrap={','.join('yes' if w else 'no' for w in wrap)}\n"
            f"NodeName=n[000-{len(coords) - 1:03d}] CoordOrder=x-major\n")
    return conf, names, lambda a, b: torus_route(coords[a], coords[b], dims, wrap)


def tree_case():
    text = ("SwitchName=top Switches=a0,a1\n"
            "SwitchName=a0 Switches=l0,l1\nSwitchName=a1 Switches=l2,l3\n"
            "SwitchName=l0 Nodes=t[00-03]\nSwitchName=l1 Nodes=t[04-07]\n"
            "SwitchName=l2 Nodes=t[08-11]\nSwitchName=l3 Nodes=t[12-15]\n")
    parent = {"top": None, "a0": "top", "a1": "top"}
    for leaf, agg in (("l0", "a0"), ("l1", "a0"), ("l2", "a1"), ("l3", "a1")):
        parent[leaf] = agg
    names = [f"t{i:02d}" for i in range(16)]
    for i, n in enumerate(names):
        parent[n] = f"l{i // 4}"
    conf = "Network=tree TopologyFile=cc.topo\nNodeName=t[00-15]\n"
    return text, conf, names, lambda a, b: tree_route(names[a], names[b], parent)


def dragonfly_case():
    G, A, P, L = 5, 4, 2, 2
    conf = (f"Network=dragonfly Groups={G} RoutersPerGroup={A} "
            f"NodesPerRouter={P} LinksPerGroupPair={L} Routing=direct\n"
            f"NodeName=d[000-{G * A * P - 1:03d}] CoordOrder=x-major\n")
    names = [f"d{i:03d}" for i in range(G * A * P)]
    # x-major over (router, group) with P nodes per router: node i sits on
    # router i // P, whose coordinates are (r % A, r // A)
    pos = [((i // P) % A, (i // P) // A) for i in range(G * A * P)]
    return conf, names, lambda a, b: dragonfly_route(pos[a], pos[b], G, A, L)


def block_case():
    """Slurm topology/block: 4 blocks of 4 nodes, BlockSizes=4,8: pairs of
    blocks under a switch, a top switch over both (the generated tree).
    Inside a block: the sender's NVLink port up, the receiver's down;
    between blocks: up/down the tree."""
    text = "".join(f"BlockName=b{i} Nodes=k[{4 * i:02d}-{4 * i + 3:02d}]\n"
                   for i in range(4)) + "BlockSizes=4,8\n"
    names = [f"k{i:02d}" for i in range(16)]
    parent = {"top": None, "p0": "top", "p1": "top"}
    for i in range(4):
        parent[f"b{i}"] = f"p{i // 2}"
    for i, n in enumerate(names):
        parent[n] = f"b{i // 4}"

    def route(a, b):
        if a // 4 == b // 4:
            return [("port", a, "up"), ("port", b, "down")]
        return [("tree",) + x for x in tree_route(names[a], names[b], parent)]
    conf = "Network=block TopologyFile=cc.block\nNodeName=k[00-15]\n"
    return text, conf, names, route


def main():
    tp, tmp = sys.argv[1], sys.argv[2]
    rng = random.Random(13)
    bad = 0
    cases = []
    for dims, wrap in (((4, 3, 5), (True, False, True)), ((6, 6, 2), (True, True, True)),
                       ((5, 4, 3), (False, False, False))):
        cases.append(("torus %dx%dx%d wrap %s" % (*dims, wrap),) + torus_case(rng, dims, wrap))
    topo, conf, names, route = tree_case()
    with open(f"{tmp}/cc.topo", "w") as f:
        f.write(topo)
    cases.append(("tree 4 leaves x 4 nodes", conf, names, route))
    cases.append(("dragonfly 5x4x2, 2 links/pair",) + dragonfly_case())
    btext, bconf, bnames, broute = block_case()
    with open(f"{tmp}/cc.block", "w") as f:
        f.write(btext)
    cases.append(("block 4 blocks x 4 nodes", bconf, bnames, broute))
    for label, conf, names, route in cases:
        for rep in range(3):
            nn = rng.randint(3, min(12, len(names)))
            nodes = rng.sample(range(len(names)), nn)
            ntasks = 2 * nn + rng.randint(0, nn)
            mapping = [nodes[i % nn] for i in range(ntasks)]
            rng.shuffle(mapping)
            edges = random_graph(rng, ntasks, 3 * ntasks)
            want = score(edges, mapping, route)
            got = run_eval(tp, tmp, conf, names, mapping, edges, ntasks)
            same = abs(got[0] - want[0]) < 1e-9 and got[1] == want[1]
            bad += not same
            print(f"{'ok  ' if same else 'FAIL'} {label} #{rep}: "
                  f"independent {want[0]:g} B / {want[1]} msgs, "
                  f"topoplace {got[0]:g} B / {got[1]} msgs")
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
