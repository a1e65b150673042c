// The TMA-fed, warp-specialised instance of the warp-tiling kernel: the config knob TMA = 1 (sm_90a
// only: setmaxnreg, tensor copies, mbarrier transaction counts). Same SGEMM semantics, tile, block
// order, split-K and epilogue as sgemm_warptile (sgemm_warptile.cuh); what differs is how k-slices
// reach shared memory. The config's NUM_THREADS consumers never load from global memory, store to
// shared memory or meet at a block barrier: they wait on a stage's "full" mbarrier, run the slice's
// outer products from As and Bs, and arrive on its "empty" one. One extra warpgroup produces: its
// thread 0 issues the slice's tensor copies into an STAGES-deep ring, and where an operand's stored
// rows are not k-rows (A, B^T) all its threads transpose the staged box into As (Bs). See
// tma_geometry.h for the layout, and bench/NOTES.md for what it measured (+7-10 % on 64x128 tiles
// at 1024^3, about 0 on 128x256 ones).
//
// Operands arrive as tensor maps encoded on the host (tma_maps.h): they need 16-byte aligned
// pointers and leading dimensions that are multiples of 4. The tuner tunes a TMA config only on
// problems whose operands allow that (shape rule shape_tma_operands); the dispatch library passes
// other calls on to the next winner that takes them. Outside the matrix the copies read zeros, so
// every slice, edge or not, runs the one unguarded loop. Launch: launch_dims' grid,
// make_tma_layout's THREADS and SMEM_BYTES (dynamic shared memory).
//
// No host includes: NVRTC compiles this file as is, with the other kernel files as named headers.
#pragma once

#include "sgemm_warptile.cuh"
#include "tma_geometry.h"

namespace sgt_kernel {

// The 128-byte opaque tensor map the host's cuTensorMapEncodeTiled fills (CUtensorMap), passed by
// value as a __grid_constant__ parameter.
struct alignas(64) TmaMap {
  unsigned long long opaque[16];
};

__device__ __forceinline__ unsigned smem_u32(const void* p) {
  return static_cast<unsigned>(__cvta_generic_to_shared(p));
}
__device__ __forceinline__ void mbar_init(unsigned long long* bar, int count) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" ::"r"(smem_u32(bar)), "r"(count));
}
__device__ __forceinline__ void mbar_wait(unsigned long long* bar, unsigned parity) {
  const unsigned a = smem_u32(bar);
  unsigned done = 0;
  while (!done) {
    asm volatile(
        "{\n .reg .pred p;\n mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\n"
        " selp.u32 %0, 1, 0, p;\n}"
        : "=r"(done)
        : "r"(a), "r"(parity)
        : "memory");
  }
}
__device__ __forceinline__ void mbar_arrive(unsigned long long* bar) {
  asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];" ::"r"(smem_u32(bar)) : "memory");
}
// Arrives and adds `bytes` to the phase's expected transaction count.
__device__ __forceinline__ void mbar_arrive_expect(unsigned long long* bar, unsigned bytes) {
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(smem_u32(bar)),
               "r"(bytes)
               : "memory");
}
// Orders this thread's earlier generic-proxy accesses of shared memory (ld/st) before later
// async-proxy ones (the tensor copies). A stage read with loads and then released on an mbarrier
// is rewritten by the producer's next copy into it, a write-after-read across proxies that the
// mbarrier's release and acquire alone do not order: without this fence that copy can land
// before a load still in flight has read the old slice.
__device__ __forceinline__ void fence_proxy_async_shared() {
  asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
}
// Copies the box at (c0 inner, c1 outer) of `map` to dst; its bytes complete on `bar`.
__device__ __forceinline__ void tma_copy_2d(float* dst, const TmaMap* map, int c0, int c1,
                                            unsigned long long* bar) {
  asm volatile(
      "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1, {%2, "
      "%3}], [%4];" ::"r"(smem_u32(dst)),
      "l"(reinterpret_cast<unsigned long long>(map)), "r"(c0), "r"(c1), "r"(smem_u32(bar))
      : "memory");
}

// The producer warpgroup's share of one staged box: float4 chunks of `rows` staging rows of BK
// floats (swizzled) written out as k-rows of `ld` floats (As or Bs, k-major).
template <int ROWS, int BK>
__device__ __forceinline__ void tma_transpose(const float* __restrict__ staged,
                                              float* __restrict__ tile, int ld, int p) {
#pragma unroll
  for (int j = 0; j < tma_transpose_passes(ROWS, BK); ++j) {
    const int row = tma_transpose_row(ROWS, p, j), chunk = tma_transpose_chunk(ROWS, p, j);
    const float4 v = *reinterpret_cast<const float4*>(&staged[tma_staged_index(BK, row, chunk)]);
    tile[(chunk * kVec + 0) * ld + row] = v.x;
    tile[(chunk * kVec + 1) * ld + row] = v.y;
    tile[(chunk * kVec + 2) * ld + row] = v.z;
    tile[(chunk * kVec + 3) * ld + row] = v.w;
  }
}

}  // namespace sgt_kernel

// The template parameters are sgemm_warptile's (PACK and STAGE_C are always 0 here, and VEC is
// implied); TMA is the knob that picks this kernel.
template <int BM, int BN, int BK, int WM, int WN, int WNITER, int TM, int TN, int NUM_THREADS,
          int MIN_BLOCKS, int STAGES, int PAD_A, int GROUP_M, int FMA_ORDER, int PAD_B,
          bool TRANS_A, bool TRANS_B>
__global__ void __launch_bounds__(NUM_THREADS + sgt_kernel::kTmaProducerThreads, MIN_BLOCKS)
    sgemm_ws_tma(int M, int N, int K, float alpha, const __grid_constant__ sgt_kernel::TmaMap map_a,
                 const __grid_constant__ sgt_kernel::TmaMap map_b, float beta,
                 float* __restrict__ C, int ldc, int k_chunk, float* __restrict__ partial) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ == 900 &&                         \
    (defined(__CUDA_ARCH_FEAT_SM90_ALL) || defined(__CUDA_ARCH_SPECIFIC__) || \
     defined(__CUDA_ARCH_FAMILY_SPECIFIC__))
  using namespace sgt_kernel;
  constexpr Geometry g =
      make_geometry(BM, BN, BK, WM, WN, WNITER, TM, TN, NUM_THREADS, STAGES, PAD_A, PAD_B);
  constexpr TmaLayout L = make_tma_layout(g, TRANS_A, TRANS_B, MIN_BLOCKS);
  // check() rejects these configs before they get here (the rules of the same names).
  static_assert(g.WMITER >= 1 && g.WMITER * kWarpSize * TM * TN * WNITER == WM * WN,
                "wmiter_divisibility");
  static_assert(NUM_THREADS == (BM / WM) * (BN / WN) * kWarpSize, "thread_count");
  static_assert((g.WSUBM / TM) * (g.WSUBN / TN) == kWarpSize, "subtile_lane_grid");
  static_assert(TM % kVec == 0 && TN % kVec == 0 && PAD_A % kVec == 0 && PAD_B % kVec == 0,
                "float4_alignment");
  static_assert(BK == 16 || BK == 32, "tma_slice: BK 16 or 32 (64- or 128-byte staging rows)");
  static_assert(STAGES >= 2 && STAGES <= 8, "tma_stages");
  static_assert(g.AS_LD <= 256 && g.BS_LD <= 256 && BM <= 256 && BN <= 256, "tma_box");
  static_assert(!L.STAGED_A || tma_transpose_passes(BM, BK) * kVec * kTmaProducerThreads == BM * BK,
                "tma_transpose: whole float4s per producer thread");
  static_assert(!L.STAGED_B || tma_transpose_passes(BN, BK) * kVec * kTmaProducerThreads == BN * BK,
                "tma_transpose: whole float4s per producer thread");
  static_assert(L.LAUNCH_REGS < 248 && L.LAUNCH_REGS >= kTmaProducerRegs,
                "tma_registers: the launch bounds must cap the registers above the producer's");
  static_assert(NUM_THREADS % kTmaProducerThreads == 0,
                "tma_warpgroups: setmaxnreg needs the consumers to be whole warpgroups");

  extern __shared__ __align__(16) unsigned char smem_raw[];
  // The staging boxes need 1024-byte alignment; offset from the pointer itself (not through an
  // integer) so that the compiler keeps shared-memory accesses (LDS/STS, not generic ones).
  float* const base =
      reinterpret_cast<float*>(smem_raw + ((kTmaAlignBytes - (smem_u32(smem_raw) & 1023)) & 1023));
  float* const As = base + L.AS_OFFSET;
  float* const Bs = base + L.BS_OFFSET;
  __shared__ __align__(8) unsigned long long full[STAGES], empty[STAGES], staged[STAGES];

  const int tid = threadIdx.x;
  const int grid_m = (M + BM - 1) / BM;
  const int grid_n = (N + BN - 1) / BN;
  const int blockRow = block_tile_row(blockIdx.x, grid_m, grid_n, GROUP_M) * BM;
  const int blockCol = block_tile_col(blockIdx.x, grid_m, grid_n, GROUP_M) * BN;
  const int kbeg = blockIdx.z * k_chunk;
  const int kend = min(K, kbeg + k_chunk);
  // k_chunk is a multiple of BK (split_k_chunk), so only the matrix's last slice is partial, and
  // the copies fill what lies past K with zeros.
  const int ntiles = kend > kbeg ? (kend - kbeg + BK - 1) / BK : 0;
  constexpr bool kAnyStaged = L.STAGED_A || L.STAGED_B;
  constexpr bool kAnyStraight = !L.STAGED_A || !L.STAGED_B;
  if (tid == 0) {
    for (int s = 0; s < STAGES; ++s) {
      // full: the expect_tx arrival of the straight copies, plus the transposers' arrivals.
      mbar_init(&full[s], (kAnyStraight ? 1 : 0) + (kAnyStaged ? kTmaProducerThreads : 0));
      mbar_init(&empty[s], NUM_THREADS);
      mbar_init(&staged[s], 1);
    }
    asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
  }
  __syncthreads();

  if (tid >= NUM_THREADS) {
    // The producer warpgroup.
    asm volatile("setmaxnreg.dec.sync.aligned.u32 %0;" ::"n"(kTmaProducerRegs));
    const int p = tid - NUM_THREADS;
    if (!kAnyStaged && p != 0) return;
    float* const stage_a = base;
    float* const stage_b = base + L.STAGE_B_OFFSET;
    for (int t = 0; t < ntiles; ++t) {
      const int s = t % STAGES;
      const unsigned phase = (t / STAGES) & 1;
      if (t >= STAGES) mbar_wait(&empty[s], phase ^ 1);
      const int k0 = kbeg + t * BK;
      if (p == 0) {
        if constexpr (kAnyStaged)
          mbar_arrive_expect(&staged[s],
                             (L.STAGED_A ? L.A_BOX_BYTES : 0) + (L.STAGED_B ? L.B_BOX_BYTES : 0));
        if constexpr (kAnyStraight)
          mbar_arrive_expect(&full[s],
                             (L.STAGED_A ? 0 : L.A_BOX_BYTES) + (L.STAGED_B ? 0 : L.B_BOX_BYTES));
        if (L.STAGED_A) {
          tma_copy_2d(stage_a + s * L.STAGE_A_FLOATS, &map_a, k0, blockRow, &staged[s]);
        } else {
          tma_copy_2d(As + s * L.AS_STRIDE, &map_a, blockRow, k0, &full[s]);
        }
        if (L.STAGED_B) {
          tma_copy_2d(stage_b + s * L.STAGE_B_FLOATS, &map_b, k0, blockCol, &staged[s]);
        } else {
          tma_copy_2d(Bs + s * L.BS_STRIDE, &map_b, blockCol, k0, &full[s]);
        }
      }
      if constexpr (kAnyStaged) {
        mbar_wait(&staged[s], phase);
        if constexpr (L.STAGED_A)
          tma_transpose<BM, BK>(stage_a + s * L.STAGE_A_FLOATS, As + s * L.AS_STRIDE, g.AS_LD, p);
        if constexpr (L.STAGED_B)
          tma_transpose<BN, BK>(stage_b + s * L.STAGE_B_FLOATS, Bs + s * L.BS_STRIDE, g.BS_LD, p);
        fence_proxy_async_shared();  // the next copy into this staging box follows the arrivals
        mbar_arrive(&full[s]);
      }
    }
    return;
  }

  // The consumers.
  if constexpr (L.CONSUMER_REGS > L.LAUNCH_REGS)
    asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;" ::"n"(L.CONSUMER_REGS));
  constexpr int kCols = WNITER * TN;
  float acc[g.WMITER * TM * kCols] = {0.0f};
  float regM[g.WMITER * TM];
  float regN[kCols];
  for (int t = 0; t < ntiles; ++t) {
    const int s = t % STAGES;
    mbar_wait(&full[s], (t / STAGES) & 1);
    const float* as = As + s * L.AS_STRIDE;
    const float* bs = Bs + s * L.BS_STRIDE;
#pragma unroll
    for (int k = 0; k < BK; ++k) {
#pragma unroll
      for (int ws = 0; ws < g.WMITER; ++ws)
#pragma unroll
        for (int i = 0; i < TM; i += kVec) {
          const float4 v =
              *reinterpret_cast<const float4*>(&as[as_index(g, k, tile_row(g, tid, ws, i))]);
          regM[ws * TM + i + 0] = v.x;
          regM[ws * TM + i + 1] = v.y;
          regM[ws * TM + i + 2] = v.z;
          regM[ws * TM + i + 3] = v.w;
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
#pragma unroll
      for (int q = 0; q < g.WMITER * TM * kCols; ++q) {
        const FmaStep f = fma_step(g, FMA_ORDER, q);
        acc[f.i * kCols + f.j] += regM[f.i] * regN[f.j];
      }
    }
    fence_proxy_async_shared();  // the producer's next copy into stage s follows the arrival
    mbar_arrive(&empty[s]);
  }

  // Epilogue: sgemm_warptile's direct one (split-K's raw partial products, else alpha * acc +
  // beta * C, float4 stores where the tile is whole and C's rows are 16-byte aligned).
  const bool split = gridDim.z > 1;
  float* out = split ? partial + static_cast<long long>(blockIdx.z) * M * N : C;
  const int ldo = split ? N : ldc;
  const float a = split ? 1.0f : alpha;
  const bool readC = !split && beta != 0.0f;
  const bool fastC = blockRow + BM <= M && blockCol + BN <= N && aligned16(out) && ldo % kVec == 0;
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
#elif defined(__CUDA_ARCH__)
  // Compiled for any target but sm_90a (no setmaxnreg, or not measured there): hosts never launch
  // this image (the tuner tunes TMA configs on sm_90 GPUs only, the dispatch library probes for
  // the body); if one does, it traps instead of leaving C unwritten.
  __trap();
#endif
}
