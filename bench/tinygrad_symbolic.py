#!/usr/bin/env python3
"""tinygrad's numbers for the workloads of bench/bench_symbolic.cpp (same generator, same graphs).

Run with tinygrad importable, e.g.
  PYTHONPATH=/path/to/tinygrad python3 bench/tinygrad_symbolic.py            # small sizes
  PYTHONPATH=/path/to/tinygrad python3 bench/tinygrad_symbolic.py --all      # every size bench_symbolic runs
  ... --only idx_2k,chain_1000 --sym
Method (reference/tinygrad_core.md §9.1): rules warmed up on a small instance; each timed run rewrites a freshly built
graph (round 0, 1, 2, ...), GC disabled during the rewrite, CPU time (time.process_time), min over --runs runs
(1 run when n_in > 40000). rewrites = top-level pm results that returned a new node, counted in a separate run.
"""
import argparse, gc, sys, time

from tinygrad.uop.ops import UOp, Ops, graph_rewrite
from tinygrad.uop.symbolic import symbolic, sym

M64 = 2**64
class Lcg:
  def __init__(self, s): self.s = s % M64
  def next(self):
    self.s = (self.s * 6364136223846793005 + 1442695040888963407) % M64
    return self.s
  def below(self, n): return (self.next() >> 33) % n

def Var(name, lo, hi): return UOp.variable(name, lo, hi)

def idx_graph(m, rnd):
  outs = []
  for i in range(m):
    x, y = Var(f"x{rnd}_{i}", 0, 1023), Var(f"y{rnd}_{i}", 0, 3)
    outs.append(((x*4 + y)//4) % 8)
  return UOp.sink(*outs)

def idx_ranges_graph(m, rnd):
  g = Lcg(12345)
  r = [UOp.range(16, rnd*4 + j) for j in range(4)]
  es = [2, 3, 4, 5, 8, 16]
  outs = []
  for _ in range(m):
    s0, s1, s2 = 1+g.below(128), 1+g.below(128), 1+g.below(128)
    k, d, e = g.below(64), 1+g.below(64), es[g.below(6)]
    outs.append(((r[0]*s0 + r[1]*s1 + r[2]*s2 + r[3] + k)//d) % e)
  return UOp.sink(*outs)

def bsum_graph(n, rnd):
  v = [Var(f"b{rnd}_{j}", 0, 10) for j in range(16)]
  level = [v[i % 16]*(i+1) for i in range(n)]
  while len(level) > 1:
    nxt = [level[i] + level[i+1] for i in range(0, len(level)-1, 2)]
    if len(level) % 2: nxt.append(level[-1])
    level = nxt
  return level[0]

def const_tree_graph(n, rnd):
  g = Lcg(rnd + 1)
  level = []
  for _ in range(n):
    v = g.next() >> 54
    level.append((UOp.const(v), v))
  ops = [Ops.ADD, Ops.MAX, Ops.XOR, Ops.MUL]
  k = 0
  while len(level) > 1:
    nxt = []
    for i in range(0, len(level)-1, 2):
      o = ops[k % 4]; k += 1
      a, b = level[i][1], level[i+1][1]
      if o is Ops.MUL and not (-2**31 < a*b < 2**31): o = Ops.XOR
      r = a+b if o is Ops.ADD else max(a, b) if o is Ops.MAX else a^b if o is Ops.XOR else a*b
      nxt.append((level[i][0].alu(o, level[i+1][0]), r))
    if len(level) % 2: nxt.append(level[-1])
    level = nxt
  return level[0][0]

def cmp_where_graph(m, rnd):
  outs = []
  for i in range(m):
    x, y = Var(f"cx{rnd}_{i}", 0, 1023), Var(f"cy{rnd}_{i}", 0, 3)
    s = x*4 + y
    outs.append((s < 16).where(s, s//4))
  return UOp.sink(*outs)

def chain_graph(n, rnd):
  v = [Var(f"c{rnd}_{j}", 0, 10) for j in range(16)]
  e = v[0]*1
  for i in range(1, n): e = e + v[i % 16]*(i+1)
  return e

WORKLOADS = {  # name: (generator, size, in the default (small) set)
  "idx_2k": (idx_graph, 2000, True), "idx_10k": (idx_graph, 10000, False),
  "idx_ranges_2k": (idx_ranges_graph, 2000, True), "idx_ranges_10k": (idx_ranges_graph, 10000, False),
  "bsum_4k": (bsum_graph, 4096, True), "bsum_32k": (bsum_graph, 32768, False),
  "const_tree_16k": (const_tree_graph, 16384, True), "const_tree_64k": (const_tree_graph, 65536, False),
  "cmp_where_5k": (cmp_where_graph, 5000, True),
  "chain_1000": (chain_graph, 1000, True), "chain_10000": (chain_graph, 10000, False), "chain_100000": (chain_graph, 100000, False),
}

class CountingPM:
  def __init__(self, pm): self.pm, self.n = pm, 0
  def rewrite(self, uop, ctx=None):
    r = self.pm.rewrite(uop, ctx)
    if r is not None and r is not uop: self.n += 1
    return r

def count_rewrites(g, pm):
  # graph_rewrite only needs .rewrite from the matcher; fall back to "-" if this tinygrad version needs more
  try:
    c = CountingPM(pm)
    graph_rewrite(g, c)  # type: ignore[arg-type]
    return c.n
  except Exception:
    return None

def main():
  ap = argparse.ArgumentParser()
  ap.add_argument("--all", action="store_true", help="every size (chain_10000/100000 take very long: O(N^3))")
  ap.add_argument("--only", default="", help="comma-separated workload names")
  ap.add_argument("--runs", type=int, default=3)
  ap.add_argument("--sym", action="store_true", help="rewrite with sym instead of symbolic")
  a = ap.parse_args()
  pm = sym if a.sym else symbolic
  names = a.only.split(",") if a.only else [k for k, v in WORKLOADS.items() if a.all or v[2]]
  sys.setrecursionlimit(100000)
  graph_rewrite(idx_graph(8, -3), pm); graph_rewrite(idx_ranges_graph(8, -3), pm); graph_rewrite(const_tree_graph(64, -3), pm)
  print(f"{'family':<16} {'n_in':>8} {'n_out':>8} {'rewrites':>9} {'cpu s':>9} {'in-nodes/s':>11} {'rewrites/s':>11}")
  for name in names:
    gen, n, _ = WORKLOADS[name]
    probe = gen(n, -1)
    n_in = len(probe.toposort())
    out = graph_rewrite(probe, pm)
    n_out = len(out.toposort())
    rw = count_rewrites(gen(n, -4), pm)
    runs = 1 if n_in > 40000 or name.startswith("chain_") and n >= 1000 else a.runs
    best = float("inf")
    for rnd in range(runs):
      g = gen(n, rnd)
      gc.collect(); gc.disable()
      t0 = time.process_time()
      graph_rewrite(g, pm)
      t = time.process_time() - t0
      gc.enable()
      best = min(best, t)
    rws = "-" if rw is None else str(rw)
    rps = "-" if rw is None else f"{rw/best:.0f}"
    print(f"{name:<16} {n_in:>8} {n_out:>8} {rws:>9} {best:>9.3f} {n_in/best:>11.0f} {rps:>11}", flush=True)

if __name__ == "__main__": main()
