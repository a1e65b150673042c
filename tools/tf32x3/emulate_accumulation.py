#!/usr/bin/env python3
"""CPU emulation of the split-TF32 kernels' accumulation, to predict error ratios before a GPU run.

Each FP32 operand becomes big = tf32_rna(x) and small = tf32_rna(x - big); a tensor-core step
(m16n8k8 or wgmma k8) sums 8 exact products and its accumulator input aligned to the largest
exponent, truncated to 24 bits, rounded toward zero (the tensor core's behaviour on FP32
accumulation); FP32 adds round to nearest. Compared, as errors relative to sequential FFMA (both
against an FP64 sum): FFMA with several interleaved chains, ACC 1 (a zeroed partial per k-step,
added by FP32 adds), ACC 1 with split-K, a two-level sum (partials into a window of w k-steps,
the window into the running sum), and the wgmma family's ACC 4 and ACC 6 with split-K.

usage: emulate_accumulation.py K {exponents|uniform} [dot products, default 1024]
exponents: +-m 2^e, m in [1, 2), e in -30..30 (the tuner's exponents stress case).
Needs numpy (Debian python3-numpy).
"""
import sys

import numpy as np

rng = np.random.default_rng(1)
def stress(n, K):
    m = 1.0 + rng.integers(0, 1 << 23, size=(n, K)) * 2.0**-23
    s = np.where(rng.random((n, K)) < 0.5, -1.0, 1.0)
    e = rng.integers(-30, 31, size=(n, K))
    return (s * np.ldexp(m, e)).astype(np.float32)
def uniform(n, K):
    return rng.uniform(-1, 1, size=(n, K)).astype(np.float32)
def rna(x):  # float32 -> tf32, round to nearest ties away
    b = x.view(np.uint32)
    return ((b + np.uint32(0x1000)) & np.uint32(0xFFFFE000)).view(np.float32)
def split(x):
    big = rna(x); small = rna((x - big).astype(np.float32)); return big, small
def split_big_truncated(x):
    # The big part as the tensor core reads an unrounded FP32 operand (its low 13 bits dropped):
    # what a prepass that wrote only the small parts would give.
    big = (x.view(np.uint32) & np.uint32(0xFFFFE000)).view(np.float32)
    small = rna((x - big).astype(np.float32)); return big, small
def rz32(x):  # float64 -> float32 toward zero
    f = x.astype(np.float32)
    over = np.abs(f.astype(np.float64)) > np.abs(x)
    f[over] = np.nextafter(f[over], np.float32(0))
    return f
def hmma(c, p):  # c (n,), p (n,8) exact products in float64; truncating aligned sum
    allt = np.concatenate([c[:, None].astype(np.float64), p], axis=1)
    mx = np.max(np.abs(allt), axis=1)
    E = np.floor(np.log2(np.where(mx > 0, mx, 1.0)))
    q = np.exp2(E - 23)[:, None]
    t = np.trunc(allt / q) * q
    return rz32(t.sum(axis=1))
def run(a, b, mode, w=1, splits=1, mid=8):
    n, K = a.shape
    ab, as_ = split(a); bb, bs = split(b)
    ab = ab.astype(np.float64); as_ = as_.astype(np.float64); bb = bb.astype(np.float64); bs = bs.astype(np.float64)
    chunk = K // splits
    outs = []
    for s in range(splits):
        acc = np.zeros(n, np.float32); win = np.zeros(n, np.float32); run.nwin = 0
        nsteps = chunk // 8
        for ks in range(nsteps):
            sl = slice(s * chunk + ks * 8, s * chunk + ks * 8 + 8)
            if mode == 'acc0':
                acc = hmma(acc, as_[:, sl] * bb[:, sl]); acc = hmma(acc, ab[:, sl] * bs[:, sl]); acc = hmma(acc, ab[:, sl] * bb[:, sl])
                continue
            if mode in ('acc4', 'acc6'):  # a window of w k-steps summed in the tensor core
                if ks % w == 0: part = np.zeros(n, np.float32)
                part = hmma(part, as_[:, sl] * bb[:, sl]); part = hmma(part, ab[:, sl] * bs[:, sl]); part = hmma(part, ab[:, sl] * bb[:, sl])
                if (ks + 1) % w != 0 and ks != nsteps - 1: continue
                if mode == 'acc4':
                    acc = (acc + part).astype(np.float32); continue
                win = (win + part).astype(np.float32); nwin = getattr(run, 'nwin', 0) + 1; run.nwin = nwin
                if nwin % mid == 0 or ks == nsteps - 1:  # ACC 6: the middle sum joins the running sum
                    acc = (acc + win).astype(np.float32); win[:] = 0
                continue
            part = np.zeros(n, np.float32)
            part = hmma(part, as_[:, sl] * bb[:, sl]); part = hmma(part, ab[:, sl] * bs[:, sl]); part = hmma(part, ab[:, sl] * bb[:, sl])
            if mode == 'acc1':
                acc = (acc + part).astype(np.float32)
            else:  # acc2: window of w k-steps
                win = (win + part).astype(np.float32)
                if (ks + 1) % w == 0 or ks == nsteps - 1:
                    acc = (acc + win).astype(np.float32); win[:] = 0
        outs.append(acc)
    tot = np.zeros(n, np.float32)
    for o in outs: tot = (tot + o).astype(np.float32)
    return tot
def run_cross_first(a, b, w=4, mid=8, splits=1):
    """ACC 6 with each window's wgmmas reordered: first the 2w cross products (small x big, big x
    small) of its w k-steps, while the partial is still small, then its w big x big products, so
    that only w of the window's 3w truncating sums happen at the partial's full magnitude."""
    n, K = a.shape
    ab, as_ = split(a); bb, bs = split(b)
    ab, as_, bb, bs = (x.astype(np.float64) for x in (ab, as_, bb, bs))
    chunk = K // splits
    tot = np.zeros(n, np.float32)
    for s in range(splits):
        acc = np.zeros(n, np.float32); win = np.zeros(n, np.float32); nwin = 0
        nsteps = chunk // 8
        for w0 in range(0, nsteps, w):
            steps = [slice(s * chunk + ks * 8, s * chunk + ks * 8 + 8) for ks in range(w0, min(w0 + w, nsteps))]
            part = np.zeros(n, np.float32)
            for sl in steps:
                part = hmma(part, as_[:, sl] * bb[:, sl]); part = hmma(part, ab[:, sl] * bs[:, sl])
            for sl in steps:
                part = hmma(part, ab[:, sl] * bb[:, sl])
            win = (win + part).astype(np.float32); nwin += 1
            if nwin % mid == 0 or w0 + w >= nsteps:
                acc = (acc + win).astype(np.float32); win[:] = 0
        tot = (tot + acc).astype(np.float32)
    return tot
def ffma(a, b, chains=1):
    n, K = a.shape; a64 = a.astype(np.float64); b64 = b.astype(np.float64)
    # `chains` interleaved accumulators per dot product (k mod chains), summed at the end
    accs = [np.zeros(n, np.float32) for _ in range(chains)]
    for k in range(K):
        c = k % chains
        accs[c] = (accs[c].astype(np.float64) + a64[:, k] * b64[:, k]).astype(np.float32)
    tot = np.zeros(n, np.float32)
    for x in accs: tot = (tot + x).astype(np.float32)
    return tot
def err(c, r):
    d = c.astype(np.float64) - r
    return np.sqrt((d * d).sum() / (r * r).sum())
def main():
    global split
    K = int(sys.argv[1]); kind = sys.argv[2]; n = int(sys.argv[3]) if len(sys.argv) > 3 else 1024
    gen = stress if kind == 'exponents' else uniform
    a = gen(n, K); b = gen(n, K)
    ref = (a.astype(np.float64) * b.astype(np.float64)).sum(axis=1)
    base = err(ffma(a, b), ref)
    print(f"K={K} {kind}: ffma seq {base:.3e}")
    for ch in (4, 16):
        print(f"  ffma {ch} chains  {err(ffma(a, b, ch), ref)/base:.3f}")
    print(f"  acc1           {err(run(a, b, 'acc1'), ref)/base:.3f}")
    for s in (2, 4, 16):
        print(f"  acc1 splitK {s:2d} {err(run(a, b, 'acc1', splits=s), ref)/base:.3f}")
    for w in (4, 8, 16, int(np.ceil(np.sqrt(K/8)))):
        print(f"  acc2 w={w:3d}     {err(run(a, b, 'acc2', w=w), ref)/base:.3f}")
    # The wgmma family (kWgBK = 32: a slice is 4 k-steps): ACC 4 (a slice summed in the tensor core),
    # ACC 6 (ACC 4 with slices summed in groups of kWgMidSlices = 8 first), each with split-K.
    for s in (1, 2, 3, 4):
        if K % (32 * s): continue
        print(f"  acc4 splitK {s}   {err(run(a, b, 'acc4', w=4, splits=s), ref)/base:.3f}"
              f"   acc6 splitK {s}   {err(run(a, b, 'acc6', w=4, splits=s), ref)/base:.3f}"
              f"   acc6 cross first splitK {s}   {err(run_cross_first(a, b, splits=s), ref)/base:.3f}")
    _rna_split = split
    split = split_big_truncated
    print(f"  acc6, big parts truncated (no big panel) {err(run(a, b, 'acc6', w=4), ref)/base:.3f}")
    split = _rna_split


if __name__ == '__main__':
    main()
