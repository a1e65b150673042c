// The warp-tiling SGEMM kernel (seed kernel 8), parameterised by the tuner's WarpTileConfig.
// Row-major C = alpha * A * B + beta * C with A: MxK, B: KxN, C: MxN, all leading dimensions equal
// to the row length. Requires M % BM == 0, N % BN == 0, K % BK == 0 and 16-byte aligned pointers;
// the tuner's shape filter keeps it to those problems.
//
// No host includes: NVRTC compiles this file as is (with warptile_geometry.h as a named header),
// and nvcc compiles it for embedded builds. Every index comes from warptile_geometry.h, which the
// tuner's CPU simulation replays.
#pragma once

#include "warptile_geometry.h"

template <int BM, int BN, int BK, int WM, int WN, int WNITER, int TM, int TN, int NUM_THREADS,
          int MIN_BLOCKS>
__global__ void __launch_bounds__(NUM_THREADS, MIN_BLOCKS)
    sgemm_warptile(int M, int N, int K, float alpha, const float* __restrict__ A,
                   const float* __restrict__ B, float beta, float* __restrict__ C) {
  using namespace sgt_kernel;
  constexpr Geometry g = make_geometry(BM, BN, BK, WM, WN, WNITER, TM, TN, NUM_THREADS);
  // The tuner's check() rejects these configs before they get here; the asserts are the same rules
  // for anyone instantiating the template by hand.
  static_assert(g.WMITER >= 1 && g.WMITER * kWarpSize * TM * TN * WNITER == WM * WN,
                "wmiter_divisibility: WM*WN must be a multiple of 32*TM*TN*WNITER");
  static_assert(NUM_THREADS == (BM / WM) * (BN / WN) * kWarpSize,
                "thread_count: NUM_THREADS must be (BM/WM)*(BN/WN)*32");
  static_assert((g.WSUBM / TM) * (g.WSUBN / TN) == kWarpSize,
                "subtile_lane_grid: a sub-tile must hold exactly 32 lanes");
  static_assert(g.ROW_STRIDE_A > 0 && BM % g.ROW_STRIDE_A == 0, "load_stride_a");
  static_assert(g.ROW_STRIDE_B > 0 && BK % g.ROW_STRIDE_B == 0, "load_stride_b");
  static_assert(BK % kVec == 0 && BN % kVec == 0 && TN % kVec == 0, "float4_alignment");
  (void)M;

  __shared__ __align__(16) float As[BK * BM];
  __shared__ __align__(16) float Bs[BK * BN];

  const int tid = threadIdx.x;
  const int blockRow = blockIdx.y * BM;
  const int blockCol = blockIdx.x * BN;

  A += static_cast<long long>(blockRow) * K;
  B += blockCol;

  const int aRow = a_load_row(g, tid);
  const int aCol = a_load_col(g, tid);
  const int bRow = b_load_row(g, tid);
  const int bCol = b_load_col(g, tid);

  // Sized for at least one sub-tile so that a rejected config fails on its static_assert alone,
  // not also on zero-sized arrays.
  constexpr int kWmiter = g.WMITER > 0 ? g.WMITER : 1;
  float acc[kWmiter * TM * WNITER * TN] = {0.0f};
  float regM[kWmiter * TM];
  float regN[WNITER * TN];

  for (int bk = 0; bk < K; bk += BK) {
#pragma unroll
    for (int off = 0; a_load_continues(g, off); off += g.ROW_STRIDE_A) {
      const float4 v =
          *reinterpret_cast<const float4*>(&A[static_cast<long long>(aRow + off) * K + aCol]);
      As[as_index(g, aRow + off, aCol + 0)] = v.x;
      As[as_index(g, aRow + off, aCol + 1)] = v.y;
      As[as_index(g, aRow + off, aCol + 2)] = v.z;
      As[as_index(g, aRow + off, aCol + 3)] = v.w;
    }
#pragma unroll
    for (int off = 0; b_load_continues(g, off); off += g.ROW_STRIDE_B) {
      *reinterpret_cast<float4*>(&Bs[bs_index(g, bRow + off, bCol)]) =
          *reinterpret_cast<const float4*>(&B[static_cast<long long>(bRow + off) * N + bCol]);
    }
    __syncthreads();
    A += BK;
    B += static_cast<long long>(BK) * N;

    // Unrolling the k loop fully gives every shared-memory read an immediate offset but makes
    // ptxas several times slower on deep tiles; SGT_K_UNROLL (an NVRTC/nvcc -D option, part of
    // the compile-cache key) picks a partial unroll instead.
#ifdef SGT_K_UNROLL
#pragma unroll SGT_K_UNROLL
#else
#pragma unroll
#endif
    for (int k = 0; k < BK; ++k) {
#pragma unroll
      for (int ws = 0; ws < g.WMITER; ++ws)
#pragma unroll
        for (int i = 0; i < TM; ++i) regM[ws * TM + i] = As[k * BM + tile_row(g, tid, ws, i)];
#pragma unroll
      for (int ws = 0; ws < WNITER; ++ws)
#pragma unroll
        for (int i = 0; i < TN; ++i) regN[ws * TN + i] = Bs[k * BN + tile_col(g, tid, ws, i)];
#pragma unroll
      for (int wm = 0; wm < g.WMITER; ++wm)
#pragma unroll
        for (int wn = 0; wn < WNITER; ++wn)
#pragma unroll
          for (int m = 0; m < TM; ++m)
#pragma unroll
            for (int n = 0; n < TN; ++n)
              acc[(wm * TM + m) * (WNITER * TN) + wn * TN + n] +=
                  regM[wm * TM + m] * regN[wn * TN + n];
    }
    __syncthreads();
  }

  // BLAS convention: with beta == 0, C is write-only and may hold NaN or garbage on entry.
  const bool readC = beta != 0.0f;
#pragma unroll
  for (int wm = 0; wm < g.WMITER; ++wm)
#pragma unroll
    for (int wn = 0; wn < WNITER; ++wn)
#pragma unroll
      for (int m = 0; m < TM; ++m)
#pragma unroll
        for (int n = 0; n < TN; n += kVec) {
          const int row = blockRow + tile_row(g, tid, wm, m);
          const int col = blockCol + tile_col(g, tid, wn, n);
          float4* p = reinterpret_cast<float4*>(&C[static_cast<long long>(row) * N + col]);
          const float* r = &acc[(wm * TM + m) * (WNITER * TN) + wn * TN + n];
          float4 out = make_float4(alpha * r[0], alpha * r[1], alpha * r[2], alpha * r[3]);
          if (readC) {
            const float4 old = *p;
            out.x += beta * old.x;
            out.y += beta * old.y;
            out.z += beta * old.z;
            out.w += beta * old.w;
          }
          *p = out;
        }
}
