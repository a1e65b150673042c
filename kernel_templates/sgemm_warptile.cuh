// The warp-tiling SGEMM kernel (seed kernel 8), parameterised by the tuner's WarpTileConfig, with
// real SGEMM semantics: row-major C (M x N) = alpha * op(A) * op(B) + beta * C for any M, N, K >=
// 0, leading dimensions lda, ldb, ldc >= the stored row length, any float alignment, and op(X) = X
// or X^T (TRANS_A, TRANS_B). A is stored M x K (lda >= K), or K x M when TRANS_A (lda >= M); B is
// stored K x N (ldb >= N), or N x K when TRANS_B (ldb >= K).
//
// Main and edge loops: every block reads its whole k-slices in the main loop, with no guard; where
// its tile reaches past the matrix in M or N, the loads are moved back inside it (clamp_mn,
// clamp_mn_vec in warptile_geometry.h) and what they read feeds only outputs the epilogue never
// stores. VEC picks the main loop's loads. VEC = true reads float4s, which needs both operands'
// pointers, leading dimensions and (where a float4 runs along M or N) extents to allow 16-byte
// accesses; operands that do not allow them send every slice to the edge loop instead. VEC =
// false reads single floats, legal for any operands: the instance for unaligned ones, a separate
// instantiation because a second copy of the main loop in one kernel costs the float4 one its
// register allocation. The partial last k-slice takes the guarded edge loop: element by element,
// everything outside the matrix read as 0. The epilogue stores float4s only where legal. Each
// choice is uniform across the block.
//
// Launch (see launch_dims in warptile_geometry.h): grid (grid_m * grid_n, 1, grid_z), block
// NUM_THREADS. With grid_z > 1 (split-K) split z computes k in [z*k_chunk, (z+1)*k_chunk) and
// writes its raw partial product to partial[z*M*N ...]; sgemm_splitk_reduce then forms C.
//
// PACK = 1: the host first runs sgemm_pack (see PackOperand in warptile_geometry.h), which copies
// the operands into k-major, zero-padded panels, then this kernel's TN float4 instance on them. The
// flag tells the kernel that a float4 may run past M (N) into a panel's zeros: the main loop then
// runs for any M and N, with clamp_mn_panel in place of clamp_mn_vec.
//
// STAGE_C = 1: a block whose C tile cannot take float4 stores (an edge tile, or C rows that are
// not 16-byte aligned) writes it through shared memory, whole rows at a time (see stage_slot in
// warptile_geometry.h), instead of single floats 16 bytes apart.
//
// No host includes: NVRTC compiles this file as is (with warptile_geometry.h as a named header),
// and nvcc compiles it for embedded builds. Every index comes from warptile_geometry.h, which the
// tuner's CPU simulation replays.
#pragma once

#include "warptile_geometry.h"

namespace sgt_kernel {

// Reads the float4 at p: stored element (row, col..col+3) of a slice whose top-left element is at
// stored (r0, c0) of a rows x cols matrix. FAST: the whole slice is in bounds and 16-byte aligned.
// Otherwise element by element, each outside the matrix read as 0 and never touched in memory.
template <bool FAST>
__device__ __forceinline__ float4 load_slice_vec(const float* __restrict__ p, int row, int col,
                                                 int r0, int c0, int rows, int cols) {
  if (FAST) return __ldg(reinterpret_cast<const float4*>(p));
  float v[kVec];
  const bool row_in = r0 + row < rows;
  const int cols_left = cols - c0 - col;
#pragma unroll
  for (int j = 0; j < kVec; ++j) v[j] = (row_in && j < cols_left) ? __ldg(p + j) : 0.0f;
  return make_float4(v[0], v[1], v[2], v[3]);
}

// Reads stored elements (row, col..col+3) of a whole k-slice as single floats, with no guard,
// through a pointer already clamped into the matrix (any alignment). COLS_K: the stored columns run
// along k, all inside the slice. Otherwise they run along m (n) and element j is read from
// clamp_mn(col + j, ext), i.e. at p + min(j, last) with last = clamp_last(col, ext), fixed once
// for the pass.
template <bool COLS_K>
__device__ __forceinline__ float4 load_slice_scalar(const float* __restrict__ p, int last) {
  if (COLS_K) return make_float4(__ldg(p), __ldg(p + 1), __ldg(p + 2), __ldg(p + 3));
  return make_float4(__ldg(p), __ldg(p + min(1, last)), __ldg(p + min(2, last)),
                     __ldg(p + min(3, last)));
}

// Stores a float4 of a stored slice (row, col..col+3) into the k-major shared tile at the slots
// as_index/bs_index give. When the stored columns are the tile's contiguous dimension (A^T into As,
// B into Bs) that is one float4 store; otherwise four scalar stores (a transpose).
template <bool TRANS, bool IS_A>
__device__ __forceinline__ void store_slice_vec(const Geometry& g, float* __restrict__ smem,
                                                float4 v, int row, int col) {
  auto slot = [&](int j) {
    const int k = slice_k(TRANS, IS_A, row, col + j);
    const int mn = slice_mn(TRANS, IS_A, row, col + j);
    return IS_A ? as_index(g, k, mn) : bs_index(g, k, mn);
  };
  if (IS_A == TRANS) {
    *reinterpret_cast<float4*>(&smem[slot(0)]) = v;
  } else {
    const float e[kVec] = {v.x, v.y, v.z, v.w};
#pragma unroll
    for (int j = 0; j < kVec; ++j) smem[slot(j)] = e[j];
  }
}

// A compile-time flag passed to the kernel's generic lambdas (NVRTC's C++17 has no template
// lambdas and no <type_traits>).
template <bool B>
struct Flag {
  static constexpr bool value = B;
};

// Programmatic dependent launch (sm_90+): a kernel the host launches to overlap the one before it
// in the stream (its launch and prologue run while that one's last blocks finish) waits here until
// that grid has completed and its writes are visible. Launched normally, it returns at once.
__device__ __forceinline__ void wait_for_prior_grid() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
}

__device__ __forceinline__ bool aligned16(const void* p) {
  return (reinterpret_cast<unsigned long long>(p) & 15ull) == 0;
}

}  // namespace sgt_kernel

template <int BM, int BN, int BK, int WM, int WN, int WNITER, int TM, int TN, int NUM_THREADS,
          int MIN_BLOCKS, int STAGES, int PAD_A, int GROUP_M, int FMA_ORDER, int PAD_B, int PACK,
          int STAGE_C, bool TRANS_A, bool TRANS_B, bool VEC>
__global__ void __launch_bounds__(NUM_THREADS, MIN_BLOCKS)
    sgemm_warptile(int M, int N, int K, float alpha, const float* __restrict__ A, int lda,
                   const float* __restrict__ B, int ldb, float beta, float* __restrict__ C, int ldc,
                   int k_chunk, float* __restrict__ partial) {
  using namespace sgt_kernel;
  constexpr Geometry g =
      make_geometry(BM, BN, BK, WM, WN, WNITER, TM, TN, NUM_THREADS, STAGES, PAD_A, PAD_B);
  // The tuner's check() rejects these configs before they get here; the asserts are the same rules
  // for anyone instantiating the template by hand.
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
  static_assert(STAGES == 1 || STAGES == 2, "pipeline_stages");
  static_assert(GROUP_M >= 1, "GROUP_M must be positive");
  static_assert(FMA_ORDER >= 0 && FMA_ORDER <= 3, "fma_order");
  static_assert(PACK == 0 || PACK == 1, "pack_flag");
  static_assert(STAGE_C == 0 || STAGE_C == 1, "stage_c_flag");
  static_assert(STAGE_C == 0 || stage_buffer(g) != 0, "stage_c_buffer");

  __shared__ __align__(16) float As[STAGES * g.AS_SIZE];
  __shared__ __align__(16) float Bs[STAGES * g.BS_SIZE];

  const int tid = threadIdx.x;
  // A PACK instance reads the panels sgemm_pack writes just before it (see
  // wait_for_prior_grid); no other instance has a kernel before it to wait for.
  if constexpr (PACK == 1) wait_for_prior_grid();
  const int grid_m = (M + BM - 1) / BM;
  const int grid_n = (N + BN - 1) / BN;
  const int blockRow = block_tile_row(blockIdx.x, grid_m, grid_n, GROUP_M) * BM;
  const int blockCol = block_tile_col(blockIdx.x, grid_m, grid_n, GROUP_M) * BN;
  const int kbeg = blockIdx.z * k_chunk;
  const int kend = min(K, kbeg + k_chunk);
  const int ntiles = kend > kbeg ? (kend - kbeg + BK - 1) / BK : 0;

  // Stored extents and the slice origins: A^T and B are K rows; A and B^T have K columns.
  constexpr int A_COLS = a_slice_cols(g, TRANS_A);
  constexpr int B_COLS = b_slice_cols(g, TRANS_B);
  const int a_rows = TRANS_A ? kend : M, a_cols = TRANS_A ? M : kend;
  const int b_rows = TRANS_B ? N : kend, b_cols = TRANS_B ? kend : N;
#ifdef SGT_ASSUME_FULL_TILES
  // Measurement aid only (an NVRTC/nvcc -D option): every guard compiled out, as in the seed
  // kernel, which is correct only for tile multiples with aligned operands. It measures what the
  // guards cost; nothing the tuner serves is built with it.
  constexpr bool kGuarded = false;
#else
  constexpr bool kGuarded = true;
#endif
  const bool fullM = !kGuarded || blockRow + BM <= M;
  const bool fullN = !kGuarded || blockCol + BN <= N;
  // Stored columns run along k for A and B^T, along m (n) for A^T and B.
  constexpr bool A_COLS_K = !TRANS_A, B_COLS_K = TRANS_B;
  // Whether the main loop runs. Scalar loads (VEC = false) serve any operands. float4 loads need
  // aligned pointers and leading dimensions, and where a float4 runs along M (N), a multiple of 4
  // there, so that a float4 is either whole inside the matrix or whole outside it (and then
  // clamped to the last one); operands that do not allow them take the edge loop throughout.
  // This is float4_operand (warptile_geometry.h) for A and B, written out: calling it changes the
  // float4 instance's machine code, and with it its register allocation. Panels (PACK) are padded
  // to whole float4s in M and N.
  const bool main_loop = !kGuarded || !VEC ||
                         (aligned16(A) && lda % kVec == 0 && (A_COLS_K || PACK || M % kVec == 0) &&
                          aligned16(B) && ldb % kVec == 0 && (B_COLS_K || PACK || N % kVec == 0));

  // Sized for at least one sub-tile so that a rejected config fails on its static_assert alone,
  // not also on zero-sized arrays.
  constexpr int kWmiter = g.WMITER > 0 ? g.WMITER : 1;
  float acc[kWmiter * TM * WNITER * TN] = {0.0f};
  float regM[kWmiter * TM];
  float regN[WNITER * TN];
  float4 ra[g.A_PASSES], rb[g.B_PASSES];

  // Each pass's global pointer, set for the first k-slice and advanced by one slice per fetch: the
  // loop then spends no arithmetic on addresses. For the main loop it is clamped into the matrix in
  // M and N (see clamp_mn); the edge loop's guard never reads where it was moved.
  const int ar0 = TRANS_A ? kbeg : blockRow, ac0 = TRANS_A ? blockRow : kbeg;
  const int br0 = TRANS_B ? blockCol : kbeg, bc0 = TRANS_B ? kbeg : blockCol;
  const long long a_step = TRANS_A ? static_cast<long long>(BK) * lda : BK;
  const long long b_step = TRANS_B ? BK : static_cast<long long>(BK) * ldb;
  const float* pa[g.A_PASSES];
  const float* pb[g.B_PASSES];
  // Scalar loads along m (n): the last of a pass's four elements inside the matrix (see
  // load_slice_scalar).
  int a_last[g.A_PASSES], b_last[g.B_PASSES];
  const bool clamp = kGuarded && main_loop;
  // Where a pass's loads start, clamped into the matrix in m (n) (ext is M for A, N for B).
  auto place = [&](bool cols_k, int& r, int& c, int ext) {
    int last = kVec - 1;
    if (clamp) {
      if (cols_k) {
        r = clamp_mn(r, ext);
      } else if (VEC) {
        c = PACK ? clamp_mn_panel(c, ext) : clamp_mn_vec(c, ext);
      } else {
        last = clamp_last(c, ext);
        c = clamp_mn(c, ext);
      }
    }
    return last;
  };
#pragma unroll
  for (int p = 0; p < g.A_PASSES; ++p) {
    int r = ar0 + load_row(g, A_COLS, tid, p), c = ac0 + load_col(g, A_COLS, tid, p);
    a_last[p] = place(A_COLS_K, r, c, M);
    pa[p] = A + static_cast<long long>(r) * lda + c;
  }
#pragma unroll
  for (int p = 0; p < g.B_PASSES; ++p) {
    int r = br0 + load_row(g, B_COLS, tid, p), c = bc0 + load_col(g, B_COLS, tid, p);
    b_last[p] = place(B_COLS_K, r, c, N);
    pb[p] = B + static_cast<long long>(r) * ldb + c;
  }

  // Global -> registers for k-slice t (called once per slice, in order). Main loop: float4s (VEC)
  // or single floats from the clamped pointers. GUARD (the edge loop): element by element,
  // whatever lies outside the matrix (or this split's k range) read as 0.
  auto fetch = [&](auto guard, int t) {
    if constexpr (!decltype(guard)::value) {
#pragma unroll
      for (int p = 0; p < g.A_PASSES; ++p)
        ra[p] = VEC ? load_slice_vec<true>(pa[p], 0, 0, 0, 0, 0, 0)
                    : load_slice_scalar<A_COLS_K>(pa[p], a_last[p]);
#pragma unroll
      for (int p = 0; p < g.B_PASSES; ++p)
        rb[p] = VEC ? load_slice_vec<true>(pb[p], 0, 0, 0, 0, 0, 0)
                    : load_slice_scalar<B_COLS_K>(pb[p], b_last[p]);
    } else {
      const int k0 = kbeg + t * BK;
      const int ar = TRANS_A ? k0 : blockRow, ac = TRANS_A ? blockRow : k0;
      const int br = TRANS_B ? blockCol : k0, bc = TRANS_B ? k0 : blockCol;
#pragma unroll
      for (int p = 0; p < g.A_PASSES; ++p)
        ra[p] = load_slice_vec<false>(pa[p], load_row(g, A_COLS, tid, p),
                                      load_col(g, A_COLS, tid, p), ar, ac, a_rows, a_cols);
#pragma unroll
      for (int p = 0; p < g.B_PASSES; ++p)
        rb[p] = load_slice_vec<false>(pb[p], load_row(g, B_COLS, tid, p),
                                      load_col(g, B_COLS, tid, p), br, bc, b_rows, b_cols);
    }
#pragma unroll
    for (int p = 0; p < g.A_PASSES; ++p) pa[p] += a_step;
#pragma unroll
    for (int p = 0; p < g.B_PASSES; ++p) pb[p] += b_step;
  };
  // Registers -> shared buffer `buf`.
  auto store = [&](int buf) {
#pragma unroll
    for (int p = 0; p < g.A_PASSES; ++p)
      store_slice_vec<TRANS_A, true>(g, As + buf * g.AS_SIZE, ra[p], load_row(g, A_COLS, tid, p),
                                     load_col(g, A_COLS, tid, p));
#pragma unroll
    for (int p = 0; p < g.B_PASSES; ++p)
      store_slice_vec<TRANS_B, false>(g, Bs + buf * g.BS_SIZE, rb[p], load_row(g, B_COLS, tid, p),
                                      load_col(g, B_COLS, tid, p));
  };
  // The thread's fragments of step k from shared buffer `buf`: its TM * WMITER rows of As and
  // WNITER * TN columns of Bs, as float4s where the thread tile allows.
  auto load_frag = [&](int buf, int k, float* rm, float* rn) {
    const float* as = As + buf * g.AS_SIZE;
    const float* bs = Bs + buf * g.BS_SIZE;
#pragma unroll
    for (int ws = 0; ws < g.WMITER; ++ws) {
      if (TM % kVec == 0) {
#pragma unroll
        for (int i = 0; i < TM; i += kVec) {
          const float4 v =
              *reinterpret_cast<const float4*>(&as[as_index(g, k, tile_row(g, tid, ws, i))]);
          rm[ws * TM + i + 0] = v.x;
          rm[ws * TM + i + 1] = v.y;
          rm[ws * TM + i + 2] = v.z;
          rm[ws * TM + i + 3] = v.w;
        }
      } else {
#pragma unroll
        for (int i = 0; i < TM; ++i) rm[ws * TM + i] = as[as_index(g, k, tile_row(g, tid, ws, i))];
      }
    }
#pragma unroll
    for (int ws = 0; ws < WNITER; ++ws)
#pragma unroll
      for (int i = 0; i < TN; i += kVec) {
        const float4 v =
            *reinterpret_cast<const float4*>(&bs[bs_index(g, k, tile_col(g, tid, ws, i))]);
        rn[ws * TN + i + 0] = v.x;
        rn[ws * TN + i + 1] = v.y;
        rn[ws * TN + i + 2] = v.z;
        rn[ws * TN + i + 3] = v.w;
      }
  };
  // One outer product of the fragments into the accumulators, in the order FMA_ORDER names (see
  // fma_step): the order decides the register allocation of the accumulators, and with it the
  // register-bank conflicts and operand reuse of the FFMAs.
  constexpr int kCols = WNITER * TN;
  auto outer = [&](const float* rm, const float* rn) {
#pragma unroll
    for (int s = 0; s < kWmiter * TM * kCols; ++s) {
      const FmaStep f = fma_step(g, FMA_ORDER, s);
      acc[f.i * kCols + f.j] += rm[f.i] * rn[f.j];
    }
  };
  // One k-slice of outer products from shared buffer `buf`. The main loop unrolls the k loop
  // fully (every shared-memory read gets an immediate offset; SGT_K_UNROLL, an NVRTC/nvcc -D
  // option in the compile-cache key, picks a partial unroll instead); the edge loop, which runs
  // on few blocks, not at all, to keep the code small.
  auto compute = [&](auto main_loop, int buf) {
#ifdef SGT_K_UNROLL
    constexpr int kUnroll = decltype(main_loop)::value ? SGT_K_UNROLL : 1;
#else
    constexpr int kUnroll = decltype(main_loop)::value ? BK : 1;
#endif
#pragma unroll kUnroll
    for (int k = 0; k < BK; ++k) {
      load_frag(buf, k, regM, regN);
      outer(regM, regN);
    }
  };

  // Main loop: the whole k-slices of every block, loads clamped into the matrix and nothing else.
  // Edge loop: the rest (the partial last slice; every slice when VEC and the operands do not
  // allow float4s), guarded. Keeping the guards, and any second copy of the unrolled loop, out of
  // the main loop keeps its register allocation what the unguarded kernel's is: a scalar copy of
  // the main loop in the same kernel measured 7 % slower at 4096^3 for being there at all
  // (bench/NOTES.md); hence VEC, one main loop per instantiation.
  const int nfull = kend > kbeg ? (kend - kbeg) / BK : 0;
  int t = 0;
  if (main_loop) {
    if (STAGES == 1) {
      // The seed's loop: load, sync, compute, sync.
      for (; t < nfull; ++t) {
        fetch(Flag<false>{}, t);
        store(0);
        __syncthreads();
        compute(Flag<true>{}, 0);
        __syncthreads();
      }
    } else {
      // Double buffer: slice t+1 travels from global memory into registers while slice t is
      // computed, then goes to the other buffer; one barrier per slice.
      if (nfull > 0) {
        fetch(Flag<false>{}, 0);
        store(0);
      }
      __syncthreads();
      for (; t < nfull; ++t) {
        if (t + 1 < nfull) fetch(Flag<false>{}, t + 1);
        compute(Flag<true>{}, t & 1);
        if (t + 1 < nfull) store((t + 1) & 1);
        __syncthreads();
      }
    }
  }
  if (kGuarded) {
    // The partial last slice, and every slice of operands without float4 loads. Double-buffering
    // it, though it helped those operands 4-9 %, cost the 128x256x8 winners 3 % through the main
    // loop's register allocation (bench/NOTES.md); its compute stays rolled for the same reason.
    for (; t < ntiles; ++t) {
      fetch(Flag<true>{}, t);
      store(0);
      __syncthreads();
      compute(Flag<false>{}, 0);
      __syncthreads();
    }
  }

  // Epilogue. Split-K writes the raw partial product of this split; otherwise C = alpha*acc +
  // beta*C. BLAS convention: with beta == 0, C is write-only and may hold NaN or garbage on entry.
  const bool split = gridDim.z > 1;
  float* out = split ? partial + static_cast<long long>(blockIdx.z) * M * N : C;
  const int ldo = split ? N : ldc;
  const float a = split ? 1.0f : alpha;
  const bool readC = !split && beta != 0.0f;
  const bool fastC = !kGuarded || (fullM && fullN && aligned16(out) && ldo % kVec == 0);
  if constexpr (STAGE_C == 1) {
    // Staged through As or Bs (see stage_slot): every warp store writes consecutive columns. The
    // last k-slice ended on a barrier, so the buffer is free; each warp uses its own block of it.
    // Not in every instance: the mere presence of this code changes the main loop's register
    // allocation, -7 % at 4096^3 (bench/NOTES.md), hence a knob. It stages alpha * acc: staging
    // acc itself would pin the accumulators to the aligned register quads of 128-bit stores.
    if (!fastC) {
      float* const stage = (stage_buffer(g) == 1 ? As : Bs) + stage_base(g, tid);
      const int lane = tid % kWarpSize;
#pragma unroll
      for (int wm = 0; wm < g.WMITER; ++wm)
#pragma unroll
        for (int m = 0; m < TM; ++m) {
#pragma unroll
          for (int wn = 0; wn < WNITER; ++wn)
#pragma unroll
            for (int n = 0; n < TN; n += kVec) {
              const float* r = &acc[(wm * TM + m) * (WNITER * TN) + wn * TN + n];
              *reinterpret_cast<float4*>(&stage[stage_slot(g, tid, wn, n)]) =
                  make_float4(a * r[0], a * r[1], a * r[2], a * r[3]);
            }
          __syncwarp();
#pragma unroll 1
          for (int i = 0; i < WNITER * TN; ++i) {
            const int s = lane + i * kWarpSize;
            const int row = blockRow + stage_tile_row(g, tid, wm, m, s);
            const int col = blockCol + stage_tile_col(g, tid, s);
            if (row < M && col < N) {
              float* p = out + static_cast<long long>(row) * ldo + col;
              *p = stage[s] + (readC ? beta * *p : 0.0f);
            }
          }
          __syncwarp();
        }
      return;
    }
  }
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
          const float* r = &acc[(wm * TM + m) * (WNITER * TN) + wn * TN + n];
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

// Packs the operands for PACK = 1 (see PackOperand in warptile_geometry.h): grid (pack_grid_x,
// pack_grid_y, 2), kPackThreads threads; blockIdx.z = 0 packs a, 1 packs b. A rows-major operand
// is transposed through a padded shared tile, so that both its reads (along k) and the panel's
// writes (along i) are coalesced; a k-major one is copied. The template parameter only gives the
// kernel a name expression NVRTC can look up; it is always 0.
template <int UNUSED>
__global__ void __launch_bounds__(sgt_kernel::kPackThreads)
    sgemm_pack(int K, sgt_kernel::PackOperand a, sgt_kernel::PackOperand b) {
  using namespace sgt_kernel;
  constexpr int kRowsPerPass = kPackThreads / kPackTile;
  __shared__ float tile[kPackTile][kPackTile + 1];
  const PackOperand op = blockIdx.z == 0 ? a : b;
  const int i0 = blockIdx.x * kPackTile;
  if (op.src == nullptr || i0 >= op.panel_ld) return;  // uniform across the block
  const int tx = threadIdx.x % kPackTile, ty = threadIdx.x / kPackTile;
  for (int k0 = blockIdx.y * kPackTile; k0 < K; k0 += gridDim.y * kPackTile) {
    if (op.rows_major) {
      for (int r = ty; r < kPackTile; r += kRowsPerPass) {
        const int i = i0 + r, k = k0 + tx;
        tile[r][tx] =
            (i < op.ext && k < K) ? __ldg(op.src + static_cast<long long>(i) * op.ld + k) : 0.0f;
      }
      __syncthreads();
      for (int r = ty; r < kPackTile; r += kRowsPerPass) {
        const int k = k0 + r, i = i0 + tx;
        if (k < K && i < op.panel_ld)
          op.panel[static_cast<long long>(k) * op.panel_ld + i] = tile[tx][r];
      }
      __syncthreads();
    } else {
      for (int r = ty; r < kPackTile; r += kRowsPerPass) {
        const int k = k0 + r, i = i0 + tx;
        if (k < K && i < op.panel_ld)
          op.panel[static_cast<long long>(k) * op.panel_ld + i] =
              i < op.ext ? __ldg(op.src + static_cast<long long>(k) * op.ld + i) : 0.0f;
      }
    }
  }
}

// Sums the split-K partial products in split order (deterministic: the same bits every run) and
// forms C = alpha * sum + beta * C, never reading C when beta == 0. The template parameter only
// gives the kernel a name expression NVRTC can look up; it is always 0.
template <int UNUSED>
__global__ void sgemm_splitk_reduce(int M, int N, int splits, float alpha,
                                    const float* __restrict__ partial, float beta,
                                    float* __restrict__ C, int ldc) {
  sgt_kernel::wait_for_prior_grid();  // the tile kernel's partial products
  const long long total = static_cast<long long>(M) * N;
  const long long stride = static_cast<long long>(gridDim.x) * blockDim.x;
  for (long long i = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x; i < total;
       i += stride) {
    float sum = 0.0f;
    for (int z = 0; z < splits; ++z) sum += partial[z * total + i];
    const long long row = i / N, col = i % N;
    float* c = C + row * ldc + col;
    *c = alpha * sum + (beta != 0.0f ? beta * *c : 0.0f);
  }
}
