// Index arithmetic of the TMA-fed, warp-specialised kernel (TMA = 1, sgemm_ws_tma.cuh), shared by
// that kernel, the hosts that encode its tensor maps and launch it, and the tuner's CPU index
// simulation, which replays these functions. Everything not here (the consumers' fragments, the
// block order, split-K, the epilogue) is warptile_geometry.h's.
//
// The block is NUM_THREADS consumer threads (the config's warps, computing as in the template)
// plus one producer warpgroup of kTmaProducerThreads. Its thread 0 issues the tensor-memory-
// accelerator copies of every k-slice into a ring of STAGES stages. A k-major operand (A^T, B) is
// copied straight into As (Bs): a box of BK rows of AS_LD (BS_LD) floats, the padding columns
// included, so that the box lands in the padded layout as is. The other operand (A, B^T) is copied
// into a staging box of BM (BN) rows of BK floats, 16-byte chunks swizzled, and the producer
// warpgroup's threads transpose it into the k-major, padded As (Bs). Outside the matrix (M, N, K)
// the copies fill zeros, so edge tiles and the partial last k-slice need no guard.
//
// No includes: NVRTC compiles this file as is.
#pragma once

#include "warptile_geometry.h"

namespace sgt_kernel {

// One warpgroup: setmaxnreg moves registers between whole warpgroups.
constexpr int kTmaProducerThreads = 128;
// The producer's registers after setmaxnreg.dec: it only counts slices and moves float4s.
constexpr int kTmaProducerRegs = 40;
// Staging boxes start on 1024-byte boundaries, where the 128-byte swizzle pattern repeats; the
// kernel aligns its dynamic shared memory by hand and the launch adds this much slack.
constexpr int kTmaAlignBytes = 1024;
// As and Bs stages start on 128-byte boundaries (a tensor copy's destination).
constexpr int kTmaStageAlignFloats = 32;

// Whether an operand goes through the staging ring: the one whose stored rows are not k-rows.
SGT_HD constexpr bool tma_staged_a(bool trans_a) {
  return !trans_a;
}
SGT_HD constexpr bool tma_staged_b(bool trans_b) {
  return trans_b;
}

SGT_HD constexpr int round_up(int v, int m) {
  return safe_div(v + m - 1, m) * m;
}

// Where the staging box's 16-byte chunk `chunk` of row `row` lies, in floats from the box start.
// A row is BK floats: 128 bytes for BK = 32 (the 128-byte swizzle: chunk ^ row % 8), 64 bytes for
// BK = 16 (the 64-byte swizzle: chunk ^ (row / 2) % 4). The XOR spreads the eight rows a quarter
// warp reads at one chunk over all eight chunk positions of a 128-byte line.
SGT_HD constexpr int tma_staged_index(int bk, int row, int chunk) {
  const int swz = bk == 32 ? (row & 7) : ((row >> 1) & 3);
  return row * bk + ((chunk ^ swz) * kVec);
}

// The transposing producer's j-th float4 of a staging box of `rows` rows: producer thread p takes
// float4 number f = p + j * kTmaProducerThreads, which is row f % rows, chunk f / rows, so that the
// threads of a warp store consecutive m (n) of one k-row.
SGT_HD constexpr int tma_transpose_row(int rows, int p, int j) {
  return safe_mod(p + j * kTmaProducerThreads, rows);
}
SGT_HD constexpr int tma_transpose_chunk(int rows, int p, int j) {
  return safe_div(p + j * kTmaProducerThreads, rows);
}
// float4s each producer thread moves per staged box: rows * BK / 4 over the warpgroup.
SGT_HD constexpr int tma_transpose_passes(int rows, int bk) {
  return safe_div(rows * bk, kVec * kTmaProducerThreads);
}

struct TmaLayout {
  bool STAGED_A, STAGED_B;
  int STAGE_A_FLOATS;  // one staging box of A (BM x BK), 0 when A^T is copied straight into As
  int STAGE_B_FLOATS;  // one staging box of B^T (BN x BK), 0 when B is copied straight into Bs
  int AS_STRIDE;       // floats from one As stage to the next: AS_SIZE, 128-byte aligned
  int BS_STRIDE;
  // Offsets in floats from the aligned base: staging rings first (1024-byte aligned), then As, Bs.
  int STAGE_B_OFFSET, AS_OFFSET, BS_OFFSET;
  int SMEM_BYTES;     // dynamic shared memory to request: the rings plus kTmaAlignBytes of slack
  int THREADS;        // NUM_THREADS + kTmaProducerThreads
  int LAUNCH_REGS;    // registers a thread starts with: what __launch_bounds__ leaves
  int CONSUMER_REGS;  // after setmaxnreg.inc: the producer's surplus shared out
  int A_BOX_BYTES;    // bytes one slice's copy of A brings (straight or staged)
  int B_BOX_BYTES;
};

SGT_HD constexpr TmaLayout make_tma_layout(const Geometry& g, bool trans_a, bool trans_b,
                                           int min_blocks) {
  TmaLayout t{};
  t.STAGED_A = tma_staged_a(trans_a);
  t.STAGED_B = tma_staged_b(trans_b);
  t.STAGE_A_FLOATS = t.STAGED_A ? g.BM * g.BK : 0;
  t.STAGE_B_FLOATS = t.STAGED_B ? g.BN * g.BK : 0;
  t.AS_STRIDE = round_up(g.AS_SIZE, kTmaStageAlignFloats);
  t.BS_STRIDE = round_up(g.BS_SIZE, kTmaStageAlignFloats);
  t.STAGE_B_OFFSET = g.STAGES * t.STAGE_A_FLOATS;
  t.AS_OFFSET = t.STAGE_B_OFFSET + g.STAGES * t.STAGE_B_FLOATS;
  t.BS_OFFSET = t.AS_OFFSET + g.STAGES * t.AS_STRIDE;
  t.SMEM_BYTES = (t.BS_OFFSET + g.STAGES * t.BS_STRIDE) * 4 + kTmaAlignBytes;
  t.THREADS = g.NUM_THREADS + kTmaProducerThreads;
  // ptxas gives each thread the register file over THREADS * min_blocks, in multiples of 8; at
  // most 248 so that setmaxnreg's arguments stay in range.
  const int per_thread = safe_div(65536, t.THREADS * (min_blocks > 0 ? min_blocks : 1));
  t.LAUNCH_REGS = per_thread >= 248 ? 248 : per_thread / 8 * 8;
  // setmaxnreg.inc takes registers from the pool the producer's dec returned to.
  const int surplus = (t.LAUNCH_REGS - kTmaProducerRegs) * kTmaProducerThreads;
  const int extra = safe_div(surplus, g.NUM_THREADS) / 8 * 8;
  t.CONSUMER_REGS = t.LAUNCH_REGS + extra > 248 ? 248 : t.LAUNCH_REGS + extra;
  t.A_BOX_BYTES = (t.STAGED_A ? g.BM * g.BK : g.AS_SIZE) * 4;
  t.B_BOX_BYTES = (t.STAGED_B ? g.BN * g.BK : g.BS_SIZE) * 4;
  return t;
}

// The box a slice copy brings, {inner, outer} in elements of the stored matrix, and where it
// starts. Straight (k-major) operands: AS_LD (BS_LD) columns along m (n) by BK k-rows, at (block
// offset, k0). Staged: BK columns along k by BM (BN) rows, at (k0, block offset).
SGT_HD constexpr int tma_box_inner(const Geometry& g, bool is_a, bool staged) {
  return staged ? g.BK : (is_a ? g.AS_LD : g.BS_LD);
}
SGT_HD constexpr int tma_box_outer(const Geometry& g, bool is_a, bool staged) {
  return staged ? (is_a ? g.BM : g.BN) : g.BK;
}

}  // namespace sgt_kernel
