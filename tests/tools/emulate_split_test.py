#!/usr/bin/env python3
"""The CPU emulations that the split kernels' predictions rest on (tools/tf32x3/): the operand
splits hold what they claim (three BF16 parts exactly, two TF32 parts to an FP32 ulp, two BF16
parts to no better than 2^-16), the BF16-split emulator's tf32x3 row is emulate_accumulation.py's
ACC 7 to the bit, and on uniform inputs the BF16 split is more accurate than split TF32 and both
than one FFMA chain, a two-part BF16 split far less.

Usage: emulate_split_test.py SOURCE_DIR. Exit 0: all passed, 1: a check failed, 77: no numpy
(ctest reports a skip).
"""

import os
import sys

try:
    import numpy as np
except ImportError:
    print("no numpy: skipped")
    sys.exit(77)

sys.path.insert(0, os.path.join(sys.argv[1], "tools", "tf32x3"))
import emulate_accumulation as acc  # noqa: E402
import emulate_bf16_split as b6  # noqa: E402

failures = []


def expect(cond, what):
    if not cond:
        failures.append(what)
        print("FAILED:", what)


for name, x in (("uniform", acc.uniform(64, 256)), ("exponents", acc.stress(64, 256))):
    expect(b6.representation_error(x, "bf16x6") == 0.0, f"{name}: three BF16 parts hold x exactly")
    t = b6.representation_error(x, "tf32x3")
    expect(0.0 < t <= 1.0, f"{name}: two TF32 parts hold x to within an ulp, not exactly ({t})")
    expect(b6.representation_error(x, "bf16x3") >= 16.0, f"{name}: two BF16 parts miss bits")
    # Every BF16 part is a BF16 value: its low 16 bits are zero.
    for p in b6.parts_bf16(x, 3):
        expect(not np.any(p.view(np.uint32) & np.uint32(0xFFFF)), f"{name}: a part is BF16")

K = 256
a = acc.uniform(128, K)
b = acc.uniform(128, K)
ref = (a.astype(np.float64) * b.astype(np.float64)).sum(axis=1)
base = acc.err(acc.ffma(a, b), ref)
tf32 = b6.run_split(a, b, "tf32x3")
expect(np.array_equal(tf32, acc.run_cross_first(a, b)),
       "the tf32x3 split summed in ACC 7's order is emulate_accumulation's ACC 7, bit for bit")
e_tf32 = acc.err(tf32, ref) / base
e_bf16 = acc.err(b6.run_split(a, b, "bf16x6"), ref) / base
e_bf16x3 = acc.err(b6.run_split(a, b, "bf16x3"), ref) / base
print(f"K={K} uniform, error over FFMA's: tf32x3 {e_tf32:.3f} bf16x6 {e_bf16:.3f} "
      f"bf16x3 {e_bf16x3:.3f}")
expect(e_bf16 < e_tf32 < 1.0, "the BF16 split beats split TF32, which beats one FFMA chain")
expect(e_bf16x3 > 4.0, "a two-part BF16 split is far above FFMA's error")
# Split-K changes where the FP32 adds happen, not what is summed: close to the unsplit result.
split4 = b6.run_split(a, b, "bf16x6", splits=4)
expect(acc.err(split4, ref) / base < 1.0, "the BF16 split with split-K 4 stays below FFMA's error")

sys.exit(1 if failures else 0)
