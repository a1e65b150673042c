// The warp-tiling SGEMM kernel with a ring of cp.async copies (family warptile_ring): the k-slices
// go from global to shared memory by cp.async (sm_80 and later), STAGES - 1 of them in flight
// ahead of the one computed (the schedule in warptile_ring.h), with no round trip through
// registers, so no warp waits on a global load before it can store it. The geometry, the edge
// loop and the epilogue are sgemm_warptile's (same warptile_geometry.h functions), and so is the
// compute loop on k-major buffers; on a k-contiguous one it reads 4 k at a time (below).
//
// cp.async cannot transpose, so every copy is straight: an operand stored k-major (A as K x M, B
// as K x N) goes into the k-major buffers the compute loop of sgemm_warptile reads, and one stored
// with k contiguous (A as M x K, B as N x K) into a k-contiguous buffer (warptile_ring.h: kc_size,
// kc_index), from which the compute loop reads 4 consecutive k of a fragment element as one
// float4. So the float4 instance of every layout runs the ring (TRANS_A, TRANS_B: the layout);
// PACK's k-major panels run the TN one. The instance for operands that refuse float4s is
// sgemm_warptile's double buffer with the same tiles (STAGES 2), from the same program: the
// family names that instance instead. At run time, operands whose pointers refuse 16-byte accesses
// take the guarded edge loop for every slice, as in sgemm_warptile.
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
// are launch parameters), then the layout (TRANS_A: A stored K x M; TRANS_B: B stored N x K); the
// loads are float4s. STAGE_C is always 0. PACK runs the TN instance, on the panels.
template <int BM, int BN, int BK, int WM, int WN, int WNITER, int TM, int TN, int NUM_THREADS,
          int MIN_BLOCKS, int STAGES, int PAD_A, int GROUP_M, int FMA_ORDER, int PAD_B, int PACK,
          int STAGE_C, int TRANS_A, int TRANS_B>
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
  static_assert(PACK == 0 || (TRANS_A == 1 && TRANS_B == 0), "pack_instance: PACK runs TN");

  // Which operands are copied into k-contiguous buffers, and one buffer's floats of each.
  constexpr bool A_KC = ring_a_kc(TRANS_A != 0);
  constexpr bool B_KC = ring_b_kc(TRANS_B != 0);
  constexpr int A_BUF = A_KC ? kc_size(BM, BK, TM) : g.AS_SIZE;
  constexpr int B_BUF = B_KC ? kc_size(BN, BK, TN) : g.BS_SIZE;
  __shared__ __align__(16) float As[STAGES * A_BUF];
  __shared__ __align__(16) float Bs[STAGES * B_BUF];

  const int tid = threadIdx.x;
  if constexpr (PACK == 1) wait_for_prior_grid();  // the panels sgemm_pack writes
  const int grid_m = (M + BM - 1) / BM;
  const int grid_n = (N + BN - 1) / BN;
  const int blockRow = block_tile_row(blockIdx.x, grid_m, grid_n, GROUP_M) * BM;
  const int blockCol = block_tile_col(blockIdx.x, grid_m, grid_n, GROUP_M) * BN;
  const int kbeg = blockIdx.z * k_chunk;
  const int kend = min(K, kbeg + k_chunk);
  const int ntiles = kend > kbeg ? (kend - kbeg + BK - 1) / BK : 0;

  // The operands as stored: a k-major one as K rows along m (n), a k-contiguous one as M (N) rows
  // along k. Every copy is straight.
  constexpr int A_COLS = a_slice_cols(g, TRANS_A != 0);
  constexpr int B_COLS = b_slice_cols(g, TRANS_B != 0);
  const bool fullM = blockRow + BM <= M;
  const bool fullN = blockCol + BN <= N;
  // sgemm_warptile's float4 condition (float4_operand): panels are padded to whole float4s, and a
  // k-contiguous operand's float4s run along k.
  const bool main_loop = aligned16(A) && lda % kVec == 0 && (A_KC || PACK || M % kVec == 0) &&
                         aligned16(B) && ldb % kVec == 0 && (B_KC || PACK || N % kVec == 0);

  // Sized for at least one sub-tile, so that a rejected config fails on its static_assert alone.
  constexpr int kWmiter = g.WMITER > 0 ? g.WMITER : 1;
  float acc[kWmiter * TM * WNITER * TN] = {0.0f};
  float regM[kWmiter * TM];
  float regN[WNITER * TN];
  float4 ra[g.A_PASSES], rb[g.B_PASSES];

  // Each pass's global pointer at the first k-slice, clamped into the matrix in M and N for the
  // main loop (k-major: clamp_mn_vec, or clamp_mn_panel on panels, of the start column;
  // k-contiguous: clamp_mn of the row); advanced by one slice per copy.
  const long long a_step = A_KC ? BK : static_cast<long long>(BK) * lda;
  const long long b_step = B_KC ? BK : static_cast<long long>(BK) * ldb;
  const float* pa[g.A_PASSES];
  const float* pb[g.B_PASSES];
  auto place = [&](int c, int ext) {
    if (!main_loop) return c;
    return PACK ? clamp_mn_panel(c, ext) : clamp_mn_vec(c, ext);
  };
  auto place_row = [&](int r, int ext) { return main_loop ? clamp_mn(r, ext) : r; };
#pragma unroll
  for (int p = 0; p < g.A_PASSES; ++p) {
    if constexpr (A_KC) {
      const int r = place_row(blockRow + load_row(g, A_COLS, tid, p), M);
      pa[p] = A + static_cast<long long>(r) * lda + kbeg + load_col(g, A_COLS, tid, p);
    } else {
      const int r = kbeg + load_row(g, A_COLS, tid, p);
      const int c = place(blockRow + load_col(g, A_COLS, tid, p), M);
      pa[p] = A + static_cast<long long>(r) * lda + c;
    }
  }
#pragma unroll
  for (int p = 0; p < g.B_PASSES; ++p) {
    if constexpr (B_KC) {
      const int r = place_row(blockCol + load_row(g, B_COLS, tid, p), N);
      pb[p] = B + static_cast<long long>(r) * ldb + kbeg + load_col(g, B_COLS, tid, p);
    } else {
      const int r = kbeg + load_row(g, B_COLS, tid, p);
      const int c = place(blockCol + load_col(g, B_COLS, tid, p), N);
      pb[p] = B + static_cast<long long>(r) * ldb + c;
    }
  }
  // Where stored element (row, col) of a slice goes in buffer `buf`: k-major as sgemm_warptile's
  // straight store puts it, or k-contiguous (row m or n, column k).
  auto a_slot = [&](int buf, int row, int col) {
    if constexpr (A_KC) return buf * A_BUF + kc_index(BK, TM, row, col);
    return buf * A_BUF + as_index(g, slice_k(true, true, row, col), slice_mn(true, true, row, col));
  };
  auto b_slot = [&](int buf, int row, int col) {
    if constexpr (B_KC) return buf * B_BUF + kc_index(BK, TN, row, col);
    return buf * B_BUF +
           bs_index(g, slice_k(false, false, row, col), slice_mn(false, false, row, col));
  };

  // Global -> shared buffer `buf` for the next whole k-slice by cp.async: each pass's float4 to
  // where sgemm_warptile's straight store puts it.
  auto copy_async = [&](int buf) {
#pragma unroll
    for (int p = 0; p < g.A_PASSES; ++p) {
      const int row = load_row(g, A_COLS, tid, p), col = load_col(g, A_COLS, tid, p);
      cp_async_float4(&As[a_slot(buf, row, col)], pa[p]);
      pa[p] += a_step;
    }
#pragma unroll
    for (int p = 0; p < g.B_PASSES; ++p) {
      const int row = load_row(g, B_COLS, tid, p), col = load_col(g, B_COLS, tid, p);
      cp_async_float4(&Bs[b_slot(buf, row, col)], pb[p]);
      pb[p] += b_step;
    }
  };
  // The edge loop's slice t into buffer 0: element by element, whatever lies outside the matrix
  // (or this split's k range) stored as 0, through registers.
  // (A k-contiguous operand's stored rows run along m (n), its columns along k.)
  auto fetch_store_guarded = [&](int t) {
    const int k0 = kbeg + t * BK;
#pragma unroll
    for (int p = 0; p < g.A_PASSES; ++p) {
      const int row = load_row(g, A_COLS, tid, p), col = load_col(g, A_COLS, tid, p);
      ra[p] = A_KC ? load_slice_vec<false>(pa[p], row, col, blockRow, k0, M, kend)
                   : load_slice_vec<false>(pa[p], row, col, k0, blockRow, kend, M);
      pa[p] += a_step;
    }
#pragma unroll
    for (int p = 0; p < g.B_PASSES; ++p) {
      const int row = load_row(g, B_COLS, tid, p), col = load_col(g, B_COLS, tid, p);
      rb[p] = B_KC ? load_slice_vec<false>(pb[p], row, col, blockCol, k0, N, kend)
                   : load_slice_vec<false>(pb[p], row, col, k0, blockCol, kend, N);
      pb[p] += b_step;
    }
#pragma unroll
    for (int p = 0; p < g.A_PASSES; ++p) {
      const int row = load_row(g, A_COLS, tid, p), col = load_col(g, A_COLS, tid, p);
      if constexpr (A_KC)
        *reinterpret_cast<float4*>(&As[a_slot(0, row, col)]) = ra[p];
      else
        store_slice_vec<true, true>(g, As, ra[p], row, col);
    }
#pragma unroll
    for (int p = 0; p < g.B_PASSES; ++p) {
      const int row = load_row(g, B_COLS, tid, p), col = load_col(g, B_COLS, tid, p);
      if constexpr (B_KC)
        *reinterpret_cast<float4*>(&Bs[b_slot(0, row, col)]) = rb[p];
      else
        store_slice_vec<false, false>(g, Bs, rb[p], row, col);
    }
  };
  // The thread's fragments of step k from buffer `buf`, and one outer product in FMA_ORDER's
  // order: sgemm_warptile's load_frag and outer.
  // (Only the k-major operands: a k-contiguous one's fragments come from load_kc below.)
  auto load_frag = [&](int buf, int k) {
    const float* as = As + buf * A_BUF;
    const float* bs = Bs + buf * B_BUF;
#pragma unroll
    for (int ws = 0; ws < (A_KC ? 0 : g.WMITER); ++ws) {
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
    for (int ws = 0; ws < (B_KC ? 0 : WNITER); ++ws)
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
  // With a k-contiguous operand: the fragments of 4 consecutive k, one float4 per element of the
  // thread tile, then the 4 outer products, each taking its k's column of them (a k-major
  // operand's fragments read per k as above).
  constexpr int kRows = kWmiter * TM;
  float kcM[A_KC ? kRows * kVec : 1];
  float kcN[B_KC ? kCols * kVec : 1];
  auto load_kc = [&](int buf, int k4) {
    if constexpr (A_KC) {
      const float* as = As + buf * A_BUF;
#pragma unroll
      for (int ws = 0; ws < g.WMITER; ++ws)
#pragma unroll
        for (int i = 0; i < TM; ++i) {
          const float4 v = *reinterpret_cast<const float4*>(
              &as[kc_group_index(BK, TM, tile_row(g, tid, ws, 0), i, k4)]);
          float* r = &kcM[(ws * TM + i) * kVec];
          r[0] = v.x, r[1] = v.y, r[2] = v.z, r[3] = v.w;
        }
    }
    if constexpr (B_KC) {
      const float* bs = Bs + buf * B_BUF;
#pragma unroll
      for (int ws = 0; ws < WNITER; ++ws)
#pragma unroll
        for (int i = 0; i < TN; ++i) {
          const float4 v = *reinterpret_cast<const float4*>(
              &bs[kc_group_index(BK, TN, tile_col(g, tid, ws, 0), i, k4)]);
          float* r = &kcN[(ws * TN + i) * kVec];
          r[0] = v.x, r[1] = v.y, r[2] = v.z, r[3] = v.w;
        }
    }
  };
  auto compute = [&](auto main, int buf) {
    if constexpr (!A_KC && !B_KC) {
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
    } else {
      constexpr int kUnroll = decltype(main)::value ? BK / kVec : 1;
#pragma unroll kUnroll
      for (int k4 = 0; k4 < BK; k4 += kVec) {
        load_kc(buf, k4);
#pragma unroll
        for (int kk = 0; kk < kVec; ++kk) {
          load_frag(buf, k4 + kk);  // the k-major operand's fragments, if there is one
#pragma unroll
          for (int i = 0; i < kRows; ++i)
            if constexpr (A_KC) regM[i] = kcM[i * kVec + kk];
#pragma unroll
          for (int j = 0; j < kCols; ++j)
            if constexpr (B_KC) regN[j] = kcN[j * kVec + kk];
#pragma unroll
          for (int s = 0; s < kRows * kCols; ++s) {
            const FmaStep f = fma_step(g, FMA_ORDER, s);
            acc[f.i * kCols + f.j] += regM[f.i] * regN[f.j];
          }
        }
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
