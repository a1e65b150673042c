// Index arithmetic of the split-TF32 ("3xTF32") tensor-core SGEMM kernel (sgemm_tf32x3.cuh),
// shared by the kernel (nvcc, NVRTC) and by hosts (the probe, a launcher, a CPU simulation).
//
// No includes: NVRTC compiles this file as is.
#pragma once

#if defined(__CUDACC__) || defined(__CUDACC_RTC__)
#ifndef SGT_HD
#define SGT_HD __host__ __device__
#endif
#else
#ifndef SGT_HD
#define SGT_HD
#endif
#endif

namespace sgt_kernel {

// The tensor-core instruction: mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32.
constexpr int kMmaM = 16;
constexpr int kMmaN = 8;
constexpr int kMmaK = 8;

// Shared-memory tiles are kept as the operands are stored in global memory (no transpose on the
// way in, so cp.async copies them directly): a slice of R stored rows by C stored columns, C
// contiguous, each row padded. The padding makes the fragment reads of mma.sync conflict-free:
//  - k contiguous (A, B^T): lane (g, t) = (lane / 4, lane % 4) reads row g, column t. With a row
//    length of BK + 4 floats (BK a multiple of 8), g * (BK + 4) mod 32 takes 8 distinct multiples
//    of 4, so the 32 lanes hit 32 banks.
//  - m or n contiguous (A^T, B): lane (g, t) reads row t, column g. With a row length of
//    BM + 8 (BN + 8), BM a multiple of 32, t * (BM + 8) mod 32 = 8 t: again 32 banks.
// Each row length is a multiple of 4 floats, so every 16-byte cp.async destination is aligned.
constexpr int kPadK = 4;
constexpr int kPadMn = 8;

struct Tf32x3Geometry {
  int BM, BN, BK, WM, WN, STAGES;
  int WARPS_M, WARPS_N, NUM_THREADS;
  int MI, NI;                // mma tiles per warp along M (WM / 16) and N (WN / 8)
  int KSTEPS;                // mma k-steps per slice (BK / 8)
  int A_ROWS, A_COLS, A_LD;  // the stored A slice: rows, columns (contiguous), padded row length
  int B_ROWS, B_COLS, B_LD;
  int A_FLOATS, B_FLOATS;  // one stage of each
  int STAGE_FLOATS;
  int SMEM_BYTES;    // dynamic shared memory of the whole pipeline
  int ACCUMULATORS;  // per thread: MI * NI * 4
};

SGT_HD constexpr int tf32x3_div(int a, int b) {
  return b == 0 ? 0 : a / b;
}

// A is stored M x K (trans_a false: k contiguous) or K x M; B is stored K x N (trans_b false: n
// contiguous) or N x K.
SGT_HD constexpr Tf32x3Geometry make_tf32x3_geometry(int BM, int BN, int BK, int WM, int WN,
                                                     int STAGES, bool trans_a, bool trans_b) {
  Tf32x3Geometry g{};
  g.BM = BM;
  g.BN = BN;
  g.BK = BK;
  g.WM = WM;
  g.WN = WN;
  g.STAGES = STAGES;
  g.WARPS_M = tf32x3_div(BM, WM);
  g.WARPS_N = tf32x3_div(BN, WN);
  g.NUM_THREADS = g.WARPS_M * g.WARPS_N * 32;
  g.MI = WM / kMmaM;
  g.NI = WN / kMmaN;
  g.KSTEPS = BK / kMmaK;
  g.A_ROWS = trans_a ? BK : BM;
  g.A_COLS = trans_a ? BM : BK;
  g.A_LD = g.A_COLS + (trans_a ? kPadMn : kPadK);
  g.B_ROWS = trans_b ? BN : BK;
  g.B_COLS = trans_b ? BK : BN;
  g.B_LD = g.B_COLS + (trans_b ? kPadK : kPadMn);
  g.A_FLOATS = g.A_ROWS * g.A_LD;
  g.B_FLOATS = g.B_ROWS * g.B_LD;
  g.STAGE_FLOATS = g.A_FLOATS + g.B_FLOATS;
  g.SMEM_BYTES = STAGES * g.STAGE_FLOATS * 4;
  g.ACCUMULATORS = g.MI * g.NI * 4;
  return g;
}

// --- Shared-memory slots of the mma fragments ---------------------------------------------------
// Lane (g, t) = (lane / 4, lane % 4). A fragment of the 16 x 8 tile (row m, column k): register j
// holds (g + 8 (j & 1), t + 4 (j >> 1)). B fragment of the 8 x 8 tile (row k, column n): register
// j holds (t + 4 j, g). Accumulator j: (g + 8 (j >> 1), 2 t + (j & 1)).
SGT_HD constexpr int tf32x3_a_slot(const Tf32x3Geometry& g, bool trans_a, int m, int k) {
  return trans_a ? k * g.A_LD + m : m * g.A_LD + k;
}
SGT_HD constexpr int tf32x3_b_slot(const Tf32x3Geometry& g, bool trans_b, int k, int n) {
  return trans_b ? n * g.B_LD + k : k * g.B_LD + n;
}

// --- cp.async copies of one slice ------------------------------------------------------------
// VEC: 16-byte chunks (4 floats along the stored columns), else single floats. Copy number
// i = tid + p * NUM_THREADS of a slice of `cols` stored columns covers stored row i / per_row and
// columns (i % per_row) * width ... + width - 1, per_row = cols / width.
SGT_HD constexpr int tf32x3_copy_width(bool vec) {
  return vec ? 4 : 1;
}
SGT_HD constexpr int tf32x3_copies(int rows, int cols, bool vec) {
  return rows * cols / tf32x3_copy_width(vec);
}

// Whether the 16-byte instance may run on these operands: both pointers 16-byte aligned and both
// leading dimensions multiples of 4, so that every chunk starting at a multiple-of-4 column is an
// aligned 16-byte access. Extents need not be multiples of 4: a chunk running past the matrix
// copies only its part inside (cp.async's source size) and fills the rest with zeros.
SGT_HD constexpr bool tf32x3_vec_ok(unsigned long long a_addr, int lda, unsigned long long b_addr,
                                    int ldb) {
  return (a_addr % 16) == 0 && (b_addr % 16) == 0 && lda % 4 == 0 && ldb % 4 == 0;
}

}  // namespace sgt_kernel
