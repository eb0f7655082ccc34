#!/usr/bin/env python3
"""Print the golden values used by tests/test_core_dtype.cpp and tests/test_core_uop.cpp, computed by tinygrad itself.

Run against the reference checkout (branch rewrite_rangeify2):
  git clone /work/.mirror/tinygrad+tinygrad/repo /tmp/tg2 && (cd /tmp/tg2 && git checkout rewrite_rangeify2)
  PYTHONPATH=/tmp/tg2 python3 tests/tools/gen_core_golden.py
The output is C++ text pasted into the test files (fp8 dtypes are excluded: graft does not support them).
"""
import math
from tinygrad.dtype import dtypes, least_upper_dtype, least_upper_float, can_lossless_cast, sum_acc_dtype, truncate, Invalid
from tinygrad.uop.ops import UOp, Ops, AxisType, shape_to_shape_arg as sa

# graft DTypeId order (include/graft/core/dtype.hpp), minus void
GRAFT = ["weakint", "bool_", "int8", "uint8", "int16", "uint16", "int32", "uint32", "int64", "uint64",
         "weakfloat", "float16", "bfloat16", "float32", "float64"]
TG = {g: getattr(dtypes, g.rstrip("_")) for g in GRAFT}
BACK = {v: k for k, v in TG.items()}

def section(name): print(f"\n// ---- {name} ----")

section("least_upper_dtype over all pairs: row a, column b")
print("{")
for a in GRAFT:
  print("  {" + ", ".join(f"D::{BACK[least_upper_dtype(TG[a], TG[b])]}" for b in GRAFT) + "},  // " + a)
print("}")

section("least_upper_float, sum_acc_dtype per dtype")
print(", ".join(f"D::{BACK[least_upper_float(TG[a])]}" for a in GRAFT))
print(", ".join(f"D::{BACK[sum_acc_dtype(TG[a])]}" for a in GRAFT))

section("can_lossless_cast(a, b): row a, column b")
for a in GRAFT: print('  "' + "".join("1" if can_lossless_cast(TG[a], TG[b]) else "0" for b in GRAFT) + '",  // ' + a)

section("float truncation: value, float16, bfloat16, float32")
vals = [0.1, -0.1, 1.0/3, 1.0009765625, 1.00048828125, 1.00146484375, 65504.0, 65519.0, 65519.99, 65520.0, -70000.0, 1e-5, 6e-8, 3e-8,
        2.9802322387695312e-08, 1e-8, 3.0e38, 1.00390625, 1.005859375, 1.0078125, 123456.789, -2.5e-3, 16777217.0, math.inf, -math.inf]
for v in vals:
  def t(dt):
    try: return truncate[dt](v)
    except OverflowError: return "overflow"
  print(f"  {{{v!r}, {t(dtypes.float16)!r}, {t(dtypes.bfloat16)!r}, {t(dtypes.float32)!r}}},")

section("int truncation (ctypes): value -> int8 uint8 int16 uint16 int32 uint32 int64 uint64 bool")
for v in [0, 1, -1, 127, 128, 255, 256, -129, 32767, 32768, 65535, 65536, -32769, 2**31-1, 2**31, 2**32-1, 2**32+5, -2**31-1, 2**63-1, -2**63]:
  print(f"  {{{v}, " + ", ".join(str(int(truncate[d](v))) for d in (dtypes.int8, dtypes.uint8, dtypes.int16, dtypes.uint16, dtypes.int32, dtypes.uint32, dtypes.int64, dtypes.uint64, dtypes.bool)) + "},")

section("pretty_print (repr) of graphs")
a = UOp.variable('a', 0, 10)
graphs = {}
graphs["shared"] = (a+3)*(a+3)
graphs["sink"] = UOp.sink(a+1, a*2, (a<3).where(a, a+1))
graphs["floats"] = (UOp.const(1.5, dtypes.float) * UOp.const(-0.0, dtypes.float)).cast(dtypes.half) + UOp.const(1e-4, dtypes.half)
p = UOp.param(0, dtypes.float, (2, 3))
# movement ops built explicitly (shape sources, tinygrad's (offset, size) PAD/SHRINK encoding)
r = UOp(Ops.RESHAPE, src=(p, sa((3, 2))))
pm = UOp(Ops.PERMUTE, src=(r,), arg=(1, 0))
pd = UOp(Ops.PAD, src=(pm, sa((1, 0)), sa((3, 5))))
sh = UOp(Ops.SHRINK, src=(pd, sa((0, 1)), sa((2, 3))))
fl = UOp(Ops.FLIP, src=(sh,), arg=(True, False))
graphs["movement"] = UOp(Ops.EXPAND, src=(fl, sa((4,))))
graphs["reduce"] = UOp(Ops.REDUCE, src=(p,), arg=(Ops.ADD, 1))
graphs["range"] = UOp.range(10, 0) * 4 + UOp.range(4, 1, AxisType.REDUCE)
graphs["tags"] = (a.rtag(True) + a.rtag("mark")).rtag((1, "x"))
graphs["bools"] = UOp.sink(UOp.const(True, dtypes.bool), UOp.invalid(), UOp.const(-5, dtypes.int8), UOp.const(7, dtypes.uint64))
for k, g in graphs.items():
  print(f"// {k}")
  print('R"(' + repr(g) + ')"')

section("toposort op order of the sink graph, with a gate that stops at WHERE, and one that stops at a")
g = graphs["sink"]
print(" ".join(u.op.name for u in g.toposort()))
print(" ".join(u.op.name for u in g.toposort(gate=lambda u: u.op is not Ops.WHERE)))
print(" ".join(u.op.name for u in g.toposort(gate=lambda u: u is not a)))
