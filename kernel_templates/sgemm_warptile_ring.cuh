// The warp-tiling SGEMM kernel with a ring of cp.async copies (family warptile_ring): the k-slices
// go from global to shared memory by cp.async (sm_80 and later), STAGES - 1 of them in flight
// ahead of the one computed (the schedule in warptile_ring.h), with no round trip through
// registers, so no warp waits on a global load before it can store it. The compute loop, the
// edge loop and the epilogue are sgemm_warptile's (same geometry, same warptile_geometry.h
// functions, same results bit for bit).
//
// cp.async cannot transpose, so this kernel is the one instance whose copies are all straight:
// A stored transposed (K x M) and B not (K x N), with float4 loads: a TN problem's float4
// instance, which PACK's k-major panels run too. Every other instance of a warptile_ring config
// (another layout without PACK, or operands that refuse float4s) is sgemm_warptile's double buffer
// with the same tiles (STAGES 2), from the same program: the family names that instance instead.
// At run time, operands whose pointers refuse 16-byte accesses take the guarded edge loop for
// every slice, as in sgemm_warptile.
//
// It is a kernel of its own, not a branch of sgemm_warptile, so that sgemm_warptile.cuh and
// warptile_geometry.h stay byte for byte what every stored trial of the other families was
// compiled from (a change to them makes those trials stale). The price is that the prologue,
// compute loop and epilogue below repeat sgemm_warptile's for this one instance.
//
// Below sm_80 the copies are synchronous float4 loads and stores (correct, not a ring): a library
// built for several architectures still builds; the family is not offered there.
#pragma once

#include "sgemm_warptile.cuh"
#include "warptile_ring.h"

namespace sgt_kernel {

// One float4 from global to shared memory, bypassing registers and L1; the end of a commit group;
// the wait until at most N of this thread's groups are still in flight.
__device__ __forceinline__ void cp_async_float4(float* smem, const float* gmem) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  const unsigned s = static_cast<unsigned>(__cvta_generic_to_shared(smem));
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" ::"r"(s), "l"(gmem) : "memory");
#else
  *reinterpret_cast<float4*>(smem) = __ldg(reinterpret_cast<const float4*>(gmem));
#endif
}
__device__ __forceinline__ void cp_async_commit() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  asm volatile("cp.async.commit_group;" ::: "memory");
#endif
}
template <int N>
__device__ __forceinline__ void cp_async_wait() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  asm volatile("cp.async.wait_group %0;" ::"n"(N) : "memory");
#endif
}

}  // namespace sgt_kernel

// The template arguments are sgemm_warptile's config fields, in the same order (SPLIT_K and TAIL
// are launch parameters); the layout is TN and the loads float4s. STAGE_C is always 0.
template <int BM, int BN, int BK, int WM, int WN, int WNITER, int TM, int TN, int NUM_THREADS,
          int MIN_BLOCKS, int STAGES, int PAD_A, int GROUP_M, int FMA_ORDER, int PAD_B, int PACK,
          int STAGE_C>
__global__ void __launch_bounds__(NUM_THREADS, MIN_BLOCKS)
    sgemm_warptile_ring(int M, int N, int K, float alpha, const float* __restrict__ A, int lda,
                        const float* __restrict__ B, int ldb, float beta, float* __restrict__ C,
                        int ldc, int k_chunk, float* __restrict__ partial) {
  using namespace sgt_kernel;
  constexpr Geometry g =
      make_geometry(BM, BN, BK, WM, WN, WNITER, TM, TN, NUM_THREADS, STAGES, PAD_A, PAD_B);
  static_assert(g.WMITER >= 1 && g.WMITER * kWarpSize * TM * TN * WNITER == WM * WN,
                "wmiter_divisibility: WM*WN must be a multiple of 32*TM*TN*WNITER");
  static_assert(NUM_THREADS == (BM / WM) * (BN / WN) * kWarpSize,
                "thread_count: NUM_THREADS must be (BM/WM)*(BN/WN)*32");
  static_assert((g.WSUBM / TM) * (g.WSUBN / TN) == kWarpSize,
                "subtile_lane_grid: a sub-tile must hold exactly 32 lanes");
  static_assert(g.A_PASSES >= 1 && g.A_PASSES * kVec * NUM_THREADS == BM * BK, "load_stride_a");
  static_assert(g.B_PASSES >= 1 && g.B_PASSES * kVec * NUM_THREADS == BK * BN, "load_stride_b");
  static_assert(BM % kVec == 0 && BK % kVec == 0 && BN % kVec == 0 && TN % kVec == 0,
                "float4_alignment");
  static_assert(PAD_A >= 0 && PAD_A % kVec == 0 && PAD_B >= 0 && PAD_B % kVec == 0,
                "pad_alignment");
  static_assert(STAGES >= kMinRingStages && STAGES <= kMaxRingStages, "pipeline_stages");
  static_assert(GROUP_M >= 1, "GROUP_M must be positive");
  static_assert(FMA_ORDER >= 0 && FMA_ORDER <= 3, "fma_order");
  static_assert(PACK == 0 || PACK == 1, "pack_flag");
  static_assert(STAGE_C == 0, "stage_c_flag");

  __shared__ __align__(16) float As[STAGES * g.AS_SIZE];
  __shared__ __align__(16) float Bs[STAGES * g.BS_SIZE];

  const int tid = threadIdx.x;
  if constexpr (PACK == 1) wait_for_prior_grid();  // the panels sgemm_pack writes
  const int grid_m = (M + BM - 1) / BM;
  const int grid_n = (N + BN - 1) / BN;
  const int blockRow = block_tile_row(blockIdx.x, grid_m, grid_n, GROUP_M) * BM;
  const int blockCol = block_tile_col(blockIdx.x, grid_m, grid_n, GROUP_M) * BN;
  const int kbeg = blockIdx.z * k_chunk;
  const int kend = min(K, kbeg + k_chunk);
  const int ntiles = kend > kbeg ? (kend - kbeg + BK - 1) / BK : 0;

  // A^T and B as stored: K rows, their columns along m (n). Both copies are straight.
  constexpr int A_COLS = a_slice_cols(g, true);
  constexpr int B_COLS = b_slice_cols(g, false);
  const bool fullM = blockRow + BM <= M;
  const bool fullN = blockCol + BN <= N;
  // sgemm_warptile's float4 condition for TN (float4_operand): panels are padded to whole float4s.
  const bool main_loop = aligned16(A) && lda % kVec == 0 && (PACK || M % kVec == 0) &&
                         aligned16(B) && ldb % kVec == 0 && (PACK || N % kVec == 0);

  // Sized for at least one sub-tile, so that a rejected config fails on its static_assert alone.
  constexpr int kWmiter = g.WMITER > 0 ? g.WMITER : 1;
  float acc[kWmiter * TM * WNITER * TN] = {0.0f};
  float regM[kWmiter * TM];
  float regN[WNITER * TN];
  float4 ra[g.A_PASSES], rb[g.B_PASSES];

  // Each pass's global pointer at the first k-slice, clamped into the matrix in M and N for the
  // main loop (clamp_mn_vec, or clamp_mn_panel on panels); advanced by one slice per copy.
  const long long a_step = static_cast<long long>(BK) * lda;
  const long long b_step = static_cast<long long>(BK) * ldb;
  const float* pa[g.A_PASSES];
  const float* pb[g.B_PASSES];
  auto place = [&](int c, int ext) {
    if (!main_loop) return c;
    return PACK ? clamp_mn_panel(c, ext) : clamp_mn_vec(c, ext);
  };
#pragma unroll
  for (int p = 0; p < g.A_PASSES; ++p) {
    const int r = kbeg + load_row(g, A_COLS, tid, p);
    const int c = place(blockRow + load_col(g, A_COLS, tid, p), M);
    pa[p] = A + static_cast<long long>(r) * lda + c;
  }
#pragma unroll
  for (int p = 0; p < g.B_PASSES; ++p) {
    const int r = kbeg + load_row(g, B_COLS, tid, p);
    const int c = place(blockCol + load_col(g, B_COLS, tid, p), N);
    pb[p] = B + static_cast<long long>(r) * ldb + c;
  }

  // Global -> shared buffer `buf` for the next whole k-slice by cp.async: each pass's float4 to
  // where sgemm_warptile's straight store puts it.
  auto copy_async = [&](int buf) {
#pragma unroll
    for (int p = 0; p < g.A_PASSES; ++p) {
      const int row = load_row(g, A_COLS, tid, p), col = load_col(g, A_COLS, tid, p);
      cp_async_float4(&As[buf * g.AS_SIZE + as_index(g, slice_k(true, true, row, col),
                                                     slice_mn(true, true, row, col))],
                      pa[p]);
      pa[p] += a_step;
    }
#pragma unroll
    for (int p = 0; p < g.B_PASSES; ++p) {
      const int row = load_row(g, B_COLS, tid, p), col = load_col(g, B_COLS, tid, p);
      cp_async_float4(&Bs[buf * g.BS_SIZE + bs_index(g, slice_k(false, false, row, col),
                                                     slice_mn(false, false, row, col))],
                      pb[p]);
      pb[p] += b_step;
    }
  };
  // The edge loop's slice t into buffer 0: element by element, whatever lies outside the matrix
  // (or this split's k range) stored as 0, through registers.
  auto fetch_store_guarded = [&](int t) {
    const int k0 = kbeg + t * BK;
#pragma unroll
    for (int p = 0; p < g.A_PASSES; ++p) {
      ra[p] = load_slice_vec<false>(pa[p], load_row(g, A_COLS, tid, p), load_col(g, A_COLS, tid, p),
                                    k0, blockRow, kend, M);
      pa[p] += a_step;
    }
#pragma unroll
    for (int p = 0; p < g.B_PASSES; ++p) {
      rb[p] = load_slice_vec<false>(pb[p], load_row(g, B_COLS, tid, p), load_col(g, B_COLS, tid, p),
                                    k0, blockCol, kend, N);
      pb[p] += b_step;
    }
#pragma unroll
    for (int p = 0; p < g.A_PASSES; ++p)
      store_slice_vec<true, true>(g, As, ra[p], load_row(g, A_COLS, tid, p),
                                  load_col(g, A_COLS, tid, p));
#pragma unroll
    for (int p = 0; p < g.B_PASSES; ++p)
      store_slice_vec<false, false>(g, Bs, rb[p], load_row(g, B_COLS, tid, p),
                                    load_col(g, B_COLS, tid, p));
  };
  // The thread's fragments of step k from buffer `buf`, and one outer product in FMA_ORDER's
  // order: sgemm_warptile's load_frag and outer.
  auto load_frag = [&](int buf, int k) {
    const float* as = As + buf * g.AS_SIZE;
    const float* bs = Bs + buf * g.BS_SIZE;
#pragma unroll
    for (int ws = 0; ws < g.WMITER; ++ws) {
      if (TM % kVec == 0) {
#pragma unroll
        for (int i = 0; i < TM; i += kVec) {
          const float4 v =
              *reinterpret_cast<const float4*>(&as[as_index(g, k, tile_row(g, tid, ws, i))]);
          regM[ws * TM + i + 0] = v.x;
          regM[ws * TM + i + 1] = v.y;
          regM[ws * TM + i + 2] = v.z;
          regM[ws * TM + i + 3] = v.w;
        }
      } else {
#pragma unroll
        for (int i = 0; i < TM; ++i)
          regM[ws * TM + i] = as[as_index(g, k, tile_row(g, tid, ws, i))];
      }
    }
#pragma unroll
    for (int ws = 0; ws < WNITER; ++ws)
#pragma unroll
      for (int i = 0; i < TN; i += kVec) {
        const float4 v =
            *reinterpret_cast<const float4*>(&bs[bs_index(g, k, tile_col(g, tid, ws, i))]);
        regN[ws * TN + i + 0] = v.x;
        regN[ws * TN + i + 1] = v.y;
        regN[ws * TN + i + 2] = v.z;
        regN[ws * TN + i + 3] = v.w;
      }
  };
  constexpr int kCols = WNITER * TN;
  auto compute = [&](auto main, int buf) {
    constexpr int kUnroll = decltype(main)::value ? BK : 1;
#pragma unroll kUnroll
    for (int k = 0; k < BK; ++k) {
      load_frag(buf, k);
#pragma unroll
      for (int s = 0; s < kWmiter * TM * kCols; ++s) {
        const FmaStep f = fma_step(g, FMA_ORDER, s);
        acc[f.i * kCols + f.j] += regM[f.i] * regN[f.j];
      }
    }
  };

  // The ring over the whole k-slices (warptile_ring.h), then the partial last slice, or every
  // slice of operands whose pointers refuse float4s, through the guarded edge loop.
  const int nfull = kend > kbeg ? (kend - kbeg) / BK : 0;
  int t = 0;
  if (main_loop) {
    constexpr int kLead = ring_lead(STAGES);
#pragma unroll
    for (int s = 0; s < kLead; ++s) {
      if (s < nfull) copy_async(ring_buffer(s, STAGES));
      cp_async_commit();
    }
    for (; t < nfull; ++t) {
      cp_async_wait<ring_wait(STAGES)>();
      __syncthreads();
      if (t + kLead < nfull) copy_async(ring_buffer(t + kLead, STAGES));
      cp_async_commit();
      compute(Flag<true>{}, ring_buffer(t, STAGES));
    }
    cp_async_wait<0>();
    __syncthreads();
  }
  for (; t < ntiles; ++t) {
    fetch_store_guarded(t);
    __syncthreads();
    compute(Flag<false>{}, 0);
    __syncthreads();
  }

  // Epilogue: sgemm_warptile's direct one. Split-K writes this split's raw partial product;
  // otherwise C = alpha*acc + beta*C, C never read when beta == 0.
  const bool split = gridDim.z > 1;
  float* out = split ? partial + static_cast<long long>(blockIdx.z) * M * N : C;
  const int ldo = split ? N : ldc;
  const float a = split ? 1.0f : alpha;
  const bool readC = !split && beta != 0.0f;
  const bool fastC = fullM && fullN && aligned16(out) && ldo % kVec == 0;
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
          float* p = out + static_cast<long long>(row) * ldo + col;
          const float* r = &acc[(wm * TM + m) * kCols + wn * TN + n];
          if (fastC) {
            float4 v = make_float4(a * r[0], a * r[1], a * r[2], a * r[3]);
            if (readC) {
              const float4 old = *reinterpret_cast<const float4*>(p);
              v.x += beta * old.x;
              v.y += beta * old.y;
              v.z += beta * old.z;
              v.w += beta * old.w;
            }
            *reinterpret_cast<float4*>(p) = v;
          } else if (row < M) {
#pragma unroll
            for (int j = 0; j < kVec; ++j) {
              if (col + j < N) p[j] = a * r[j] + (readC ? beta * p[j] : 0.0f);
            }
          }
        }
}
