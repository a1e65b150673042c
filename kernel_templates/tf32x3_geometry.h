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
  int FRAGMENTS;     // per thread, the big and small parts of one k-step's A (8 MI) and B (4 NI)
};

SGT_HD constexpr int tf32x3_div(int a, int b) {
  return b == 0 ? 0 : a / b;
}
SGT_HD constexpr int tf32x3_mod(int a, int b) {
  return b == 0 ? 0 : a % b;
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
  g.FRAGMENTS = 8 * g.MI + 4 * g.NI;
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

// Where warp `warp` sits in the block tile: its warp tile starts at row tf32x3_warp_m0, column
// tf32x3_warp_n0 (warps in row-major order over the WARPS_M x WARPS_N grid).
SGT_HD constexpr int tf32x3_warp_m0(const Tf32x3Geometry& g, int warp) {
  return tf32x3_div(warp, g.WARPS_N) * g.WM;
}
SGT_HD constexpr int tf32x3_warp_n0(const Tf32x3Geometry& g, int warp) {
  return tf32x3_mod(warp, g.WARPS_N) * g.WN;
}
// The lane's group g and thread-in-group t.
SGT_HD constexpr int tf32x3_lane_group(int lane) {
  return lane / 4;
}
SGT_HD constexpr int tf32x3_lane_thread(int lane) {
  return lane % 4;
}
// The fragment registers' positions relative to the lane's base slot (row g, column t of the A
// tile; row t, column g of the B tile, see above): register r of A tile i at k-step ks is at row
// tf32x3_a_frag_m(i, r), k tf32x3_a_frag_k(ks, r) of the warp tile and slice; register r of B tile
// j at k tf32x3_b_frag_k(ks, r), column tf32x3_b_frag_n(j). The kernel adds the slot of the offset
// to the slot of the base (the slot functions are linear in m, n and k).
SGT_HD constexpr int tf32x3_a_frag_m(int i, int r) {
  return i * kMmaM + 8 * (r & 1);
}
SGT_HD constexpr int tf32x3_a_frag_k(int ks, int r) {
  return ks * kMmaK + 4 * (r >> 1);
}
SGT_HD constexpr int tf32x3_b_frag_k(int ks, int r) {
  return ks * kMmaK + 4 * r;
}
SGT_HD constexpr int tf32x3_b_frag_n(int j) {
  return j * kMmaN;
}
// Accumulator r of tile (i, j) is stored at row tf32x3_acc_m(i, r) + g and column
// tf32x3_acc_n(j, r) + 2 t of the warp tile; r = 2 h and 2 h + 1 are adjacent columns of one row.
SGT_HD constexpr int tf32x3_acc_m(int i, int r) {
  return i * kMmaM + 8 * (r >> 1);
}
SGT_HD constexpr int tf32x3_acc_n(int j, int r) {
  return j * kMmaN + (r & 1);
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
SGT_HD constexpr int tf32x3_copy_per_row(int cols, bool vec) {
  return cols / tf32x3_copy_width(vec);
}
// Copies per thread and slice, and the stored rows between one thread's passes.
SGT_HD constexpr int tf32x3_copy_passes(int rows, int cols, bool vec, int nt) {
  return tf32x3_div(tf32x3_copies(rows, cols, vec), nt);
}
SGT_HD constexpr int tf32x3_copy_row_step(int cols, bool vec, int nt) {
  return tf32x3_div(nt, tf32x3_copy_per_row(cols, vec));
}
// Thread tid's first stored row (pass p adds p * row_step) and its stored column.
SGT_HD constexpr int tf32x3_copy_row(int cols, bool vec, int tid) {
  return tf32x3_div(tid, tf32x3_copy_per_row(cols, vec));
}
SGT_HD constexpr int tf32x3_copy_col(int cols, bool vec, int tid) {
  return tf32x3_mod(tid, tf32x3_copy_per_row(cols, vec)) * tf32x3_copy_width(vec);
}
// The static_asserts of a slice's copies (sgemm_tf32x3.cuh's tf32x3_copy_slice): whole copies per
// stored row, and NUM_THREADS covering whole rows of the slice and the slice in whole passes.
SGT_HD constexpr bool tf32x3_copy_width_ok(int cols, bool vec) {
  return cols % tf32x3_copy_width(vec) == 0;
}
SGT_HD constexpr bool tf32x3_copy_mapping_ok(int rows, int cols, bool vec, int nt) {
  return nt > 0 && tf32x3_copy_per_row(cols, vec) > 0 && nt % tf32x3_copy_per_row(cols, vec) == 0 &&
         tf32x3_copies(rows, cols, vec) % nt == 0;
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
