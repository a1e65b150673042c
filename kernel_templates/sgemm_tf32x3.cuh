// SGEMM at FP32 accuracy on the TF32 tensor cores: the split-TF32 ("3xTF32") method. Row-major
// C (M x N) = alpha * op(A) * op(B) + beta * C, the same semantics and argument list as
// sgemm_warptile (sgemm_warptile.cuh): any M, N, K >= 0, any leading dimensions, A stored M x K
// (TRANS_A: K x M), B stored K x N (TRANS_B: N x K), split-K through k_chunk and partial, and C
// never read when beta == 0.
//
// The split: each FP32 operand element x becomes big = tf32(x) (cvt.rna: round to nearest, ties
// away) and small = tf32(x - big); x - big is exact in FP32, and big + small carries about 22 of
// x's 24 significand bits. Each mma k-step adds small_a * big_b + big_a * small_b + big_a * big_b
// (the small products first, as they are the smaller numbers). The split happens as fragments
// are read from shared memory: shared memory holds the operands as stored, cp.async copies them
// there with no register staging, and the conversion costs 2 cvt + 1 subtraction per fragment
// element. (The alternative, splitting once per slice into separate big and small tiles, doubles
// shared memory and adds a barrier per slice; it saves the conversions of the (WARPS_N or
// WARPS_M)-fold re-reads. Not built yet.)
//
// ACC picks where the products are summed across k-steps:
//   0: in the tensor core, every mma adding into the running accumulator. The fastest, but the
//      tensor core adds with truncation (round toward zero) rather than round-to-nearest, and on
//      a running sum that bias grows linearly with K.
//   1: each k-step's three products go into a zeroed partial (8 terms of k), which one FP32 FADD
//      per accumulator (round to nearest) then adds to the running sum. The truncation then only
//      touches 8-term partial sums, and the long sum is rounded to nearest, one rounding per 8 k
//      instead of FFMA's one per k. An emulation of both (truncating 8-term sums) put ACC = 0 at
//      1.7-260x cuBLAS FP32's error (growing with K) and ACC = 1 at 0.3-0.8x from K = 1024 up,
//      above 1x only for K <= 128 (where one term's representation error is all there is). On
//      the H200 at 4096^3: ACC = 0 25x cuBLAS FP32's error, 11 % faster; ACC = 1 0.36x. ACC = 1
//      is the accurate setting; 0 is there to measure what it costs.
//
// Shared memory: STAGES slices of A and B, as stored, rows padded for conflict-free fragment
// reads (see tf32x3_geometry.h); plain 32-bit shared loads rather than ldmatrix, which applies to
// the k-contiguous layouts only (it moves 16-byte rows) and would give this kernel two fragment
// paths. The shared-memory bandwidth is not what limits it: a warp's k-step reads 32 fragment
// words per lane (one wavefront each) against 3 * MI * NI mma.
//
// Memory: dynamic shared memory of Tf32x3Geometry::SMEM_BYTES (above 48 KB for most configs: the
// launcher sets cudaFuncAttributeMaxDynamicSharedMemorySize). Launch: launch_dims' grid (grid_m *
// grid_n blocks in block_tile_row/col order, grid_z k-splits), NUM_THREADS threads.
//
// VEC: true copies 16-byte chunks with cp.async.cg, which needs tf32x3_vec_ok (16-byte aligned
// pointers, leading dimensions multiples of 4); false copies single floats with cp.async.ca, for
// any operands. Either way every slice, edge or not, takes the one loop: a copy reaching past the
// matrix (in m, n or this split's k range) reads only its part inside and zero-fills the rest.
//
// Split-K partial products are summed by sgemm_warptile.cuh's sgemm_splitk_reduce, which the
// launch plan runs after this kernel (launch_plan.h): included here, so that one NVRTC program
// holds both (kernel family tf32x3).
//
// No host includes: NVRTC compiles this file as is (with the other kernel files as named headers).
#pragma once

#include "sgemm_warptile.cuh"
#include "tf32x3_geometry.h"
#include "warptile_geometry.h"

namespace sgt_kernel {

__device__ __forceinline__ unsigned tf32x3_smem_u32(const void* p) {
  return static_cast<unsigned>(__cvta_generic_to_shared(p));
}

// Copies `bytes` (0 .. SIZE) from src to shared dst and fills the rest of the SIZE bytes with
// zeros. bytes == 0 reads nothing (src must still be a valid address).
template <int SIZE>
__device__ __forceinline__ void tf32x3_cp_async(float* dst, const float* src, int bytes) {
  if constexpr (SIZE == 16) {
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(tf32x3_smem_u32(dst)),
                 "l"(src), "r"(bytes)
                 : "memory");
  } else {
    asm volatile("cp.async.ca.shared.global [%0], [%1], 4, %2;\n" ::"r"(tf32x3_smem_u32(dst)),
                 "l"(src), "r"(bytes)
                 : "memory");
  }
}
__device__ __forceinline__ void tf32x3_cp_commit() {
  asm volatile("cp.async.commit_group;\n" ::: "memory");
}
template <int N>
__device__ __forceinline__ void tf32x3_cp_wait() {
  asm volatile("cp.async.wait_group %0;\n" ::"n"(N) : "memory");
}

// x = big + small (+ what neither holds), both TF32 values in 32-bit registers.
__device__ __forceinline__ void tf32x3_split(float x, unsigned& big, unsigned& small) {
  asm("cvt.rna.tf32.f32 %0, %1;" : "=r"(big) : "f"(x));
  const float rest = x - __uint_as_float(big);
  asm("cvt.rna.tf32.f32 %0, %1;" : "=r"(small) : "f"(rest));
}

// d += a * b on one 16 x 8 x 8 tile.
__device__ __forceinline__ void tf32x3_mma(float* d, const unsigned* a, const unsigned* b) {
  asm("mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, "
      "{%8, %9}, {%0, %1, %2, %3};\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
}

// Issues the cp.async copies of one stored slice: ROWS x COLS, its top-left element at stored
// (r0, c0) of a rows x cols matrix `src` (leading dimension ld), into dst (row length LD).
template <int ROWS, int COLS, int LD, int NT, bool VEC>
__device__ __forceinline__ void tf32x3_copy_slice(float* dst, const float* __restrict__ src, int ld,
                                                  int r0, int c0, int rows, int cols, int tid) {
  constexpr int W = tf32x3_copy_width(VEC);
  static_assert(tf32x3_copy_width_ok(COLS, VEC), "copy_width");
  static_assert(tf32x3_copy_mapping_ok(ROWS, COLS, VEC, NT),
                "copy_mapping: NUM_THREADS must cover "
                "whole rows of a slice, and a slice whole "
                "passes");
  constexpr int PASSES = tf32x3_copy_passes(ROWS, COLS, VEC, NT);
  constexpr int ROW_STEP = tf32x3_copy_row_step(COLS, VEC, NT);
  const int row = tf32x3_copy_row(COLS, VEC, tid), col = tf32x3_copy_col(COLS, VEC, tid);
  const int gc = c0 + col;
  const int col_bytes = gc < cols ? min(W, cols - gc) * 4 : 0;
  const float* p = src + static_cast<long long>(r0 + row) * ld + gc;
  long long step = static_cast<long long>(ROW_STEP) * ld;
  // Opaque to the compiler, so that it recomputes each pass's address per slice (one IMAD)
  // instead of keeping PASSES 64-bit pointers live across the main loop: at 64x64 warp tiles
  // those pointers made the difference between 0 and 184 bytes of spills.
  asm volatile("mov.b64 %0, %0;" : "+l"(step));
#pragma unroll
  for (int s = 0; s < PASSES; ++s) {
    const int bytes = r0 + row + s * ROW_STEP < rows ? col_bytes : 0;
    tf32x3_cp_async<W * 4>(dst + (row + s * ROW_STEP) * LD + col, bytes ? p + s * step : src,
                           bytes);
  }
}

}  // namespace sgt_kernel

template <int BM, int BN, int BK, int WM, int WN, int STAGES, int GROUP_M, int ACC, bool TRANS_A,
          bool TRANS_B, bool VEC>
__global__ void __launch_bounds__((BM / WM) * (BN / WN) * 32, 1)
    sgemm_tf32x3(int M, int N, int K, float alpha, const float* __restrict__ A, int lda,
                 const float* __restrict__ B, int ldb, float beta, float* __restrict__ C, int ldc,
                 int k_chunk, float* __restrict__ partial) {
  using namespace sgt_kernel;
  constexpr Tf32x3Geometry g = make_tf32x3_geometry(BM, BN, BK, WM, WN, STAGES, TRANS_A, TRANS_B);
  constexpr int NT = g.NUM_THREADS;
  static_assert(BM % WM == 0 && BN % WN == 0,
                "warp_grid: the warp tile must divide the block tile");
  static_assert(WM % kMmaM == 0 && WN % kMmaN == 0, "warp_tile: WM a multiple of 16, WN of 8");
  static_assert(BK % kMmaK == 0, "bk: a multiple of 8");
  static_assert(BM % 32 == 0 && BN % 32 == 0, "block_tile: BM and BN multiples of 32 (padding)");
  static_assert(STAGES >= 2 && STAGES <= 8, "stages: 2 to 8");
  static_assert(GROUP_M >= 1, "group_m");
  static_assert(ACC == 0 || ACC == 1, "acc: 0 (in the tensor core) or 1 (FP32 adds)");

  extern __shared__ __align__(16) float tf32x3_smem[];

  const int tid = threadIdx.x;
  const int lane = tid % 32, warp = tid / 32;
  const int grid_m = (M + BM - 1) / BM;
  const int grid_n = (N + BN - 1) / BN;
  const int block_row = block_tile_row(blockIdx.x, grid_m, grid_n, GROUP_M) * BM;
  const int block_col = block_tile_col(blockIdx.x, grid_m, grid_n, GROUP_M) * BN;
  const int kbeg = blockIdx.z * k_chunk;
  const int kend = min(K, kbeg + k_chunk);
  const int ntiles = kend > kbeg ? (kend - kbeg + BK - 1) / BK : 0;

  // Copies slice `t` (k from kbeg + t * BK) into stage `buf`. Stored extents: A is M x kend
  // (TRANS_A: kend x M), B kend x N (TRANS_B: N x kend); whatever lies outside is zero-filled.
  auto load = [&](int buf, int t) {
    float* as = tf32x3_smem + buf * g.STAGE_FLOATS;
    float* bs = as + g.A_FLOATS;
    const int k0 = kbeg + t * BK;
    if (TRANS_A)
      tf32x3_copy_slice<BK, BM, g.A_LD, NT, VEC>(as, A, lda, k0, block_row, kend, M, tid);
    else
      tf32x3_copy_slice<BM, BK, g.A_LD, NT, VEC>(as, A, lda, block_row, k0, M, kend, tid);
    if (TRANS_B)
      tf32x3_copy_slice<BN, BK, g.B_LD, NT, VEC>(bs, B, ldb, block_col, k0, N, kend, tid);
    else
      tf32x3_copy_slice<BK, BN, g.B_LD, NT, VEC>(bs, B, ldb, k0, block_col, kend, N, tid);
  };

  // Where this lane's fragments start: lane (gid, tig), warp tile (wm0, wn0).
  const int gid = tf32x3_lane_group(lane), tig = tf32x3_lane_thread(lane);
  const int wm0 = tf32x3_warp_m0(g, warp), wn0 = tf32x3_warp_n0(g, warp);
  const int a_base = tf32x3_a_slot(g, TRANS_A, wm0 + gid, tig);
  const int b_base = tf32x3_b_slot(g, TRANS_B, tig, wn0 + gid);

  float acc[g.MI][g.NI][4];
#pragma unroll
  for (int i = 0; i < g.MI; ++i)
#pragma unroll
    for (int j = 0; j < g.NI; ++j)
#pragma unroll
      for (int r = 0; r < 4; ++r) acc[i][j][r] = 0.0f;

        // One slice from stage `buf`: per k-step, the warp's A fragments (split) once, then per
        // n-tile its B fragment (split) and the MI tiles' three products.
        // The k-steps of a slice stay rolled: unrolled, ptxas hoists the next steps' fragments (64
        // registers a step at 64x64 warp tiles) and spilled up to 250 bytes. SGT_TF32X3_KS_UNROLL
        // (an NVRTC/nvcc -D option) unrolls them to measure it.
#ifdef SGT_TF32X3_KS_UNROLL
  constexpr int KS_UNROLL = SGT_TF32X3_KS_UNROLL;
#else
  constexpr int KS_UNROLL = 1;
#endif
  auto compute = [&](int buf) {
    const float* as = tf32x3_smem + buf * g.STAGE_FLOATS + a_base;
    const float* bs = tf32x3_smem + buf * g.STAGE_FLOATS + g.A_FLOATS + b_base;
#pragma unroll KS_UNROLL
    for (int ks = 0; ks < g.KSTEPS; ++ks) {
      unsigned a_big[g.MI][4], a_small[g.MI][4];
#pragma unroll
      for (int i = 0; i < g.MI; ++i)
#pragma unroll
        for (int r = 0; r < 4; ++r)
          tf32x3_split(as[tf32x3_a_slot(g, TRANS_A, tf32x3_a_frag_m(i, r), tf32x3_a_frag_k(ks, r))],
                       a_big[i][r], a_small[i][r]);
#pragma unroll
      for (int j = 0; j < g.NI; ++j) {
        unsigned b_big[2], b_small[2];
#pragma unroll
        for (int r = 0; r < 2; ++r)
          tf32x3_split(bs[tf32x3_b_slot(g, TRANS_B, tf32x3_b_frag_k(ks, r), tf32x3_b_frag_n(j))],
                       b_big[r], b_small[r]);
#pragma unroll
        for (int i = 0; i < g.MI; ++i) {
          if constexpr (ACC == 1) {
            float part[4] = {0.0f, 0.0f, 0.0f, 0.0f};
            tf32x3_mma(part, a_small[i], b_big);
            tf32x3_mma(part, a_big[i], b_small);
            tf32x3_mma(part, a_big[i], b_big);
#pragma unroll
            for (int r = 0; r < 4; ++r) acc[i][j][r] += part[r];
          } else {
            tf32x3_mma(acc[i][j], a_small[i], b_big);
            tf32x3_mma(acc[i][j], a_big[i], b_small);
            tf32x3_mma(acc[i][j], a_big[i], b_big);
          }
        }
      }
    }
  };

  // The pipeline: STAGES - 1 slices in flight ahead of the one computed. Every iteration commits
  // one group (possibly empty) so that wait_group<STAGES - 2> always means "slice t has landed".
#pragma unroll
  for (int s = 0; s < STAGES - 1; ++s) {
    if (s < ntiles) load(s, s);
    tf32x3_cp_commit();
  }
  for (int t = 0; t < ntiles; ++t) {
    tf32x3_cp_wait<STAGES - 2>();
    // Slice t is visible to all, and every warp is done with slice t - 1, whose stage the next
    // copy overwrites.
    __syncthreads();
    const int next = t + STAGES - 1;
    if (next < ntiles) load(next % STAGES, next);
    tf32x3_cp_commit();
    compute(t % STAGES);
  }
  tf32x3_cp_wait<0>();

  // Epilogue. Split-K writes the raw partial product of this split; otherwise C = alpha * acc +
  // beta * C, C write-only when beta == 0. Accumulator r of tile (i, j) is row gid + 8 (r >> 1),
  // column 2 tig + (r & 1): pairs of adjacent columns, stored as float2 where aligned.
  const bool split = gridDim.z > 1;
  float* out = split ? partial + static_cast<long long>(blockIdx.z) * M * N : C;
  const int ldo = split ? N : ldc;
  const float a = split ? 1.0f : alpha;
  const bool read_c = !split && beta != 0.0f;
  const bool pairs = (reinterpret_cast<unsigned long long>(out) & 7ull) == 0 && ldo % 2 == 0;
#pragma unroll
  for (int i = 0; i < g.MI; ++i)
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      const int row = block_row + wm0 + gid + tf32x3_acc_m(i, 2 * h);
      if (row >= M) continue;
#pragma unroll
      for (int j = 0; j < g.NI; ++j) {
        const int col = block_col + wn0 + 2 * tig + tf32x3_acc_n(j, 0);
        float* p = out + static_cast<long long>(row) * ldo + col;
        float v0 = a * acc[i][j][2 * h], v1 = a * acc[i][j][2 * h + 1];
        if (pairs && col + 1 < N) {
          if (read_c) {
            const float2 old = *reinterpret_cast<const float2*>(p);
            v0 += beta * old.x;
            v1 += beta * old.y;
          }
          *reinterpret_cast<float2*>(p) = make_float2(v0, v1);
        } else {
          if (col < N) p[0] = v0 + (read_c ? beta * p[0] : 0.0f);
          if (col + 1 < N) p[1] = v1 + (read_c ? beta * p[1] : 0.0f);
        }
      }
    }
}
