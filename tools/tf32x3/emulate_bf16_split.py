#!/usr/bin/env python3
"""CPU emulation: is a split into BF16 parts an FP32-accurate alternative to split TF32 on wgmma?

Hopper's wgmma runs BF16 at twice its TF32 rate (k = 16 a step instead of 8), so six BF16
products cost the tensor-core time of three TF32 ones. The splits compared, each summed the way
the tf32x3_wg family's ACC 7 sums (a 32-deep slice summed in the tensor core, smallest products
issued first; the slice's partial into a middle sum, which joins the running sum every 8 slices):

  tf32x3   x = big + small (TF32, round to nearest away), 3 products: small.big, big.small, big.big
  bf16x3   x = b0 + b1 (BF16, round to nearest even), 3 products: b1.b0, b0.b1, b0.b0
  bf16x6   x = b0 + b1 + b2, 6 products: b2.b0, b0.b2, b1.b1, b1.b0, b0.b1, b0.b0
           (left out: b1.b2 and b2.b1, below 2^-25 of the product, and b2.b2)

Three BF16 parts hold an FP32 value exactly (8 + 8 + 8 significant bits); two TF32 parts hold
22 bits and a sign, so split TF32 already misses up to half an FP32 ulp of each operand.
The tensor core is modelled as in emulate_accumulation.py: a step's exact products and its
accumulator input aligned to the largest, truncated to 24 bits, rounded toward zero. Errors are
relative to one sequential FFMA chain, both against an FP64 sum.

usage: emulate_bf16_split.py K {exponents|uniform} [dot products, default 1024]
Needs numpy (Debian python3-numpy).
"""
import sys

import numpy as np

from emulate_accumulation import err, ffma, hmma, rna, stress, uniform

SLICE = 32  # kWgBK: the k depth of one slice, summed in the tensor core
MID = 8     # kWgMidSlices: slices in the middle sum


def bf16_rn(x):  # float32 -> bfloat16, round to nearest even (__float2bfloat16_rn)
    b = x.view(np.uint32).astype(np.uint64)
    b = (b + 0x7FFF + ((b >> 16) & 1)) & 0xFFFF0000
    return b.astype(np.uint32).view(np.float32)


def parts_tf32(x):
    big = rna(x)
    return [big, rna((x - big).astype(np.float32))]


def parts_bf16(x, n):
    out, r = [], x
    for _ in range(n):
        p = bf16_rn(r)
        out.append(p)
        r = (r - p).astype(np.float32)
    return out


# Each split: (parts of an operand, k per tensor-core step, products in issue order as part indices)
SPLITS = {
    'tf32x3': (parts_tf32, 8, [(1, 0), (0, 1), (0, 0)]),
    'bf16x3': (lambda x: parts_bf16(x, 2), 16, [(1, 0), (0, 1), (0, 0)]),
    'bf16x6': (lambda x: parts_bf16(x, 3), 16, [(2, 0), (0, 2), (1, 1), (1, 0), (0, 1), (0, 0)]),
}


def run_split(a, b, name, splits=1):
    """One slice: every product but the last (the big one) for all of the slice's steps first,
    smallest first, then the big.big products (ACC 7's order); FP32 adds above the slice."""
    parts, step, order = SPLITS[name]
    pa = [p.astype(np.float64) for p in parts(a)]
    pb = [p.astype(np.float64) for p in parts(b)]
    n, K = a.shape
    chunk = K // splits
    tot = np.zeros(n, np.float32)
    for s in range(splits):
        acc = np.zeros(n, np.float32)
        mid = np.zeros(n, np.float32)
        nslices = 0
        for k0 in range(s * chunk, (s + 1) * chunk, SLICE):
            steps = [slice(k, k + step) for k in range(k0, min(k0 + SLICE, (s + 1) * chunk), step)]
            part = np.zeros(n, np.float32)
            for i, j in order[:-1]:
                for sl in steps:
                    part = hmma(part, pa[i][:, sl] * pb[j][:, sl])
            i, j = order[-1]
            for sl in steps:
                part = hmma(part, pa[i][:, sl] * pb[j][:, sl])
            mid = (mid + part).astype(np.float32)
            nslices += 1
            if nslices % MID == 0:
                acc = (acc + mid).astype(np.float32)
                mid[:] = 0
        tot = (tot + (acc + mid).astype(np.float32)).astype(np.float32)
    return tot


def representation_error(x, name):
    """Largest |x - sum of parts| over |x|, in FP32 ulps of x."""
    total = sum(p.astype(np.float64) for p in SPLITS[name][0](x))
    ulp = np.spacing(np.abs(x)).astype(np.float64)
    return float(np.max(np.abs(total - x.astype(np.float64)) / ulp))


def main():
    K = int(sys.argv[1])
    kind = sys.argv[2]
    n = int(sys.argv[3]) if len(sys.argv) > 3 else 1024
    gen = stress if kind == 'exponents' else uniform
    a = gen(n, K)
    b = gen(n, K)
    ref = (a.astype(np.float64) * b.astype(np.float64)).sum(axis=1)
    base = err(ffma(a, b), ref)
    print(f"K={K} {kind}: ffma seq {base:.3e}; error relative to it:")
    for name in SPLITS:
        row = "  ".join(f"splitK {s} {err(run_split(a, b, name, s), ref) / base:8.3f}"
                        for s in (1, 4) if K % (SLICE * s) == 0)
        print(f"  {name}  representation {representation_error(a, name):.2f} ulp  {row}")


if __name__ == '__main__':
    main()
