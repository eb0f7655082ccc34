#!/usr/bin/env python3
"""graft against tinygrad in the same minutes: bench_symbolic or bench_schedule rounds interleaved with the tinygrad
script's rounds (g t g t g ...), each side's best round kept.

  PYTHONPATH=/path/to/tinygrad python3 bench/vs_tinygrad.py symbolic [--build build] [--rounds 3]
  PYTHONPATH=/path/to/tinygrad python3 bench/vs_tinygrad.py schedule [--build build] [--rounds 5]

Three ratios per workload: graft's mean iteration (Google Benchmark's cpu_time, preempted iterations included) and its
median iteration (the us_/ms_median counter), each over tinygrad's minimum run, and graft's median over tinygrad's
median run (schedule only; tinygrad_symbolic.py prints its minimum alone). All are CPU times.
"""
import argparse, json, os, subprocess, sys

SYMBOLIC = {"idx_2k": "BM_idx/2000", "idx_10k": "BM_idx/10000", "idx_ranges_2k": "BM_idx_ranges/2000",
            "bsum_4k": "BM_bsum/4096", "bsum_32k": "BM_bsum/32768", "const_tree_16k": "BM_const_tree/16384",
            "const_tree_64k": "BM_const_tree/65536", "cmp_where_5k": "BM_cmp_where/5000"}
SCHEDULE = {k: k for k in ["mlp", "softmax", "layernorm", "conv2d", "attention"]}
HERE = os.path.dirname(os.path.abspath(__file__))

def main():
  ap = argparse.ArgumentParser()
  ap.add_argument("mode", choices=["symbolic", "schedule"])
  ap.add_argument("--build", default=os.path.join(HERE, "..", "build"))
  ap.add_argument("--rounds", type=int, default=0, help="graft rounds (tinygrad gets one fewer, at least one); 3 symbolic, 5 schedule")
  a = ap.parse_args()
  sym = a.mode == "symbolic"
  names = SYMBOLIC if sym else SCHEDULE
  rounds = a.rounds or (3 if sym else 5)
  unit, per_ms = ("ms", 1.0) if sym else ("us", 1e3)  # graft's time unit, and how many of it make a millisecond
  g_mean, g_med, t_min, t_med = {}, {}, {}, {}  # graft in `unit`, tinygrad in ms

  def keep(d, k, v): d[k] = min(d.get(k, float("inf")), v)

  def graft():
    bench = os.path.join(a.build, "bench", "bench_" + a.mode)
    flt = "^(" + "|".join(names.values()) + ")$"
    out = subprocess.run([bench, "--benchmark_min_time=0.2", "--benchmark_format=json", "--benchmark_filter=" + flt],
                         capture_output=True, text=True, check=True).stdout
    for b in json.loads(out)["benchmarks"]:
      keep(g_mean, b["name"], b["cpu_time"])
      keep(g_med, b["name"], b["ms_median" if sym else "us_median"])

  def tinygrad():
    script = os.path.join(HERE, "tinygrad_" + a.mode + ".py")
    args = ["--runs", "3", "--only", ",".join(names)] if sym else ["--runs", "9"]
    out = subprocess.run([sys.executable, script] + args, capture_output=True, text=True, check=True).stdout
    for line in out.splitlines()[1:]:
      f = line.split()
      if sym and len(f) >= 5 and f[0] in names: keep(t_min, f[0], float(f[4]) * 1e3)  # s -> ms
      if not sym and len(f) >= 4 and f[0] in names: keep(t_min, f[0], float(f[2])), keep(t_med, f[0], float(f[3]))

  for r in range(max(2, 2 * rounds - 1)): (tinygrad if r % 2 else graft)()  # g t g ... g; one round: g t
  print(f"{'workload':16s}{'tinygrad min':>14s}{'graft mean':>12s}{'graft median':>14s}{'mean/min':>10s}{'median/min':>12s}"
        + ("" if sym else f"{'median/median':>15s}"))
  for k, b in names.items():
    gm, gd = g_mean[b], g_med[b]
    row = f"{k:16s}{t_min[k]:11.2f} ms{gm:9.2f} {unit}{gd:11.2f} {unit}"
    row += f"{t_min[k] * per_ms / gm:9.0f}x{t_min[k] * per_ms / gd:11.0f}x"
    if not sym: row += f"{t_med[k] * per_ms / gd:14.0f}x"
    print(row)

if __name__ == "__main__": main()
