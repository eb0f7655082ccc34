#!/usr/bin/env python3
"""tinygrad's uncached scheduling time for the programs of bench/bench_schedule.cpp (same shapes, inputs Tensor.empty).

Run with tinygrad (branch rewrite_rangeify2) importable:
  PYTHONPATH=/path/to/tinygrad python3 bench/tinygrad_schedule.py [--runs 9]
Method: SCACHE=0 (no schedule cache); each program is scheduled once untimed (the scheduler's rules compile lazily), then
--runs times on freshly built tensors (schedule_linear re-points the tensors it schedules, so a program is scheduled once
per build); building is not timed; GC off during the call; CPU time (time.process_time); the minimum is printed, as
bench_schedule.cpp's `tinygrad_ms` counters expect.
"""
import argparse, gc, math, os, time

os.environ["SCACHE"] = "0"  # read by tinygrad.helpers at import
from tinygrad import Tensor

def linear(x, n_in, n_out): return x.matmul(Tensor.empty(n_in, n_out)) + Tensor.empty(n_out)

def attention():
  q, k, v = Tensor.empty(1, 4, 64, 32), Tensor.empty(1, 4, 64, 32), Tensor.empty(1, 4, 64, 32)
  return (q.matmul(k.transpose(-1, -2)) * (1.0 / math.sqrt(32.0))).softmax().matmul(v)

PROGRAMS = {
  "mlp": lambda: linear(linear(Tensor.empty(32, 784), 784, 128).relu(), 128, 10),
  "softmax": lambda: Tensor.empty(64, 512).softmax(),
  "layernorm": lambda: Tensor.empty(64, 768).layernorm() * Tensor.empty(768) + Tensor.empty(768),
  "conv2d": lambda: Tensor.empty(1, 3, 32, 32).conv2d(Tensor.empty(8, 3, 3, 3)),
  "attention": attention,
}

def timed(build):
  t = build()
  gc.disable()
  try:
    t0 = time.process_time()
    linear_uop = t.schedule_linear()
    return time.process_time() - t0, len(linear_uop.src)
  finally:
    gc.enable()

if __name__ == "__main__":
  ap = argparse.ArgumentParser()
  ap.add_argument("--runs", type=int, default=9)
  args = ap.parse_args()
  print(f"{'program':<12}{'kernels':>8}{'min ms':>10}{'median ms':>11}")
  for name, build in PROGRAMS.items():
    timed(build)  # warm-up: lazy rule compilation
    times, kernels = [], 0
    for _ in range(args.runs):
      secs, kernels = timed(build)
      times.append(secs * 1e3)
    times.sort()
    print(f"{name:<12}{kernels:>8}{times[0]:>10.2f}{times[len(times) // 2]:>11.2f}")
