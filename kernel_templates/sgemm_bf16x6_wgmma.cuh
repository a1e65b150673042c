// Split BF16 ("BF16x6") SGEMM on Hopper's warpgroup MMA: the alternative to split TF32 that
// issue 39 asks to measure. Not a kernel family yet: tools/tf32x3/tf32x3_probe.cu (--wgmma) runs it
// beside sgemm_tf32x3_wgmma.cuh and cuBLAS, to decide whether it becomes one. sm_90a only.
//
// Why it might pay: wgmma runs BF16 at twice its TF32 rate (k = 16 a step instead of 8), and three
// BF16 parts hold an FP32 value exactly (8 + 8 + 8 significant bits: x = b0 + b1 + b2), where
// split TF32's two parts hold 22 bits and a sign. Six products, b2.b0, b0.b2, b1.b1, b1.b0, b0.b1,
// b0.b0 (b1.b2 and b2.b1 are below 2^-25 of the product, left out), cost the tensor-core time of
// split TF32's three, and the parts take 6 bytes an element instead of 8. The CPU emulation
// (tools/tf32x3/emulate_bf16_split.py) gives 0.4-0.6x ACC 7's error on uniform inputs and
// 0.73-0.93x on the exponents stress case; docs/experiments/2026-12-05-bf16x6-split.md.
//
// The same design as sgemm_tf32x3_wgmma.cuh, byte for byte where it can be (the geometry is
// tf32x3_wg_geometry.h's BF16 section):
//  - a prepass (bf16x6_split_operand, tf32x3_split_operand's arguments and indexing) writes op(A)
//    as the three panels b0, b1, b2 of M rows of Kp BF16 values (Kp = K rounded up to 8, whole
//    16-byte rows; columns K..Kp-1 zero), and op(B)^T likewise;
//  - the same four maps: "big" over b0 (2-D), "small" over b1 and b2 as two planes of a 3-D map
//    (plane j - 1 of part j, R rows each, the planes R Kp values apart), in boxes of 64 x 128
//    BF16 values: 128-byte rows and the 128-byte swizzle, the TF32 boxes' bytes, so that the TF32
//    kernel's wgmma descriptors serve unchanged (a k16 BF16 step is 32 bytes, as a k8 TF32 step
//    is). A box's rows past R are TMA's zero fill. The plane stride is the operand's R whatever
//    rows a map covers, so a map of rows r0.. of the panels (a wave-aware tail's sub-problem,
//    launch_plan.h) is the same map from a later base;
//  - a slice is 64 BF16 values of k: six 16 KB tiles a stage, 96 KB, so two stages fit (the TF32
//    kernel's ring is three stages of 64 KB: the same 192 KB);
//  - ACC 7's sum, in windows of 32 k (two k16 steps, two windows a slice): a window's twelve
//    wgmmas into a zeroed partial, smallest products first (the three 2^-16 ones, then the two
//    2^-8 ones, each over both steps, then b0.b0), waited for and added into the middle sum in
//    FP32, which joins the running sum every kWgMidSlices windows (256 k, as ACC 7's);
//  - split-K as the TF32 kernel's: an entry of its own (sgemm_bf16x6_wgmma_splitk) writes each
//    split's partial product for sgemm_splitk_reduce, in whole 64-value slices.
// Same SGEMM semantics as the other kernels: row-major C = alpha op(A) op(B) + beta C, C never
// read when beta == 0; any M, N, K, layout, leading dimension and alignment.
// The prologue and the producer's loop repeat the TF32 kernel's on purpose: one function for both
// changed the machine code of all 48 TF32 configs, whose H200 figures would then not hold
// (tools/machine_code/manifest-sm_90a-tf32x3_wg.json); the epilogue is shared (tf32x3_wg_store).
#pragma once

#include "sgemm_tf32x3_wgmma.cuh"

// For the sgemm_tuned dispatch library: a table whose kernel file this is holds the BF16 split's
// prepass.
#define SGT_BF16X6_WGMMA 1

namespace sgt_kernel {

// Copies the box at (c0 inner, c1 rows, c2 plane) of a 3-D `map` to dst; its bytes complete on
// `bar` (tma_copy_2d's, one dimension more).
__device__ __forceinline__ void tma_copy_3d(void* dst, const TmaMap* map, int c0, int c1, int c2,
                                            unsigned long long* bar) {
  asm volatile(
      "cp.async.bulk.tensor.3d.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1, {%2, "
      "%3, %4}], [%5];" ::"r"(smem_u32(dst)),
      "l"(reinterpret_cast<unsigned long long>(map)), "r"(c0), "r"(c1), "r"(c2), "r"(smem_u32(bar))
      : "memory");
}

constexpr int kB6WindowSteps = 2;  // k16 steps a window: 32 k, ACC 7's slice
// The products in the order a window issues them (each over the window's k16 steps), smallest
// first, b0.b0 last: product t multiplies A's part bf16x6_part(t, true) by B's bf16x6_part(t,
// false): b2.b0, b0.b2, b1.b1, b1.b0, b0.b1, b0.b0.
constexpr int kB6Products = 6;
SGT_HD constexpr int bf16x6_part(int t, bool a) {
  constexpr unsigned kA = 0x001102, kB = 0x010120;  // a hex digit a product, t = 0 lowest
  return static_cast<int>(((a ? kA : kB) >> (4 * t)) & 0xF);
}
__device__ __forceinline__ unsigned short bf16x6_rn(float x) {
  unsigned short h;
  asm("cvt.rn.bf16.f32 %0, %1;" : "=h"(h) : "f"(x));
  return h;
}
__device__ __forceinline__ float bf16x6_value(unsigned short h) {
  return __uint_as_float(static_cast<unsigned>(h) << 16);
}

// d (+)= a * b on a 64 x 128 x 16 BF16 tile, both operands k-major in shared memory.
__device__ __forceinline__ void bf16x6_wg_mma(float (&d)[64], unsigned long long desc_a,
                                              unsigned long long desc_b, int scale_d) {
  asm volatile(
      "{\n.reg .pred p;\nsetp.ne.b32 p, %66, 0;\n"
      "wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16 "
      "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, "
      "%20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, %32, %33, %34, %35, %36, %37, "
      "%38, %39, %40, %41, %42, %43, %44, %45, %46, %47, %48, %49, %50, %51, %52, %53, %54, %55, "
      "%56, %57, %58, %59, %60, %61, %62, %63}, %64, %65, p, 1, 1, 0, 0;\n}\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]),
        "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]),
        "+f"(d[14]), "+f"(d[15]), "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]),
        "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]),
        "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]), "+f"(d[32]), "+f"(d[33]), "+f"(d[34]),
        "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]), "+f"(d[40]), "+f"(d[41]),
        "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]), "+f"(d[48]),
        "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]),
        "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]),
        "+f"(d[63])
      : "l"(desc_a), "l"(desc_b), "r"(scale_d));
}

}  // namespace sgt_kernel

// op(X), R x K, written k-contiguous as its three BF16 parts: b0 into the panel at `big`, b1 into
// the panel at `small` and b2 into the one after it (R rows of Kp values each; columns K..Kp-1
// zero). tf32x3_split_operand's arguments (the panels typed as float there) and indexing; block
// 32 x 8 threads, grid (ceil(Kp / 32), ceil(R / 32)). A template (PARTS: kB6Parts), so that only
// the programs that name it hold it: the TF32 configs' binaries stay as they were.
template <int PARTS>
__global__ void __launch_bounds__(256)
    bf16x6_split_operand(int R, int K, int Kp, const float* __restrict__ X, int ldx, int k_contig,
                         float* __restrict__ big, float* __restrict__ small) {
  using namespace sgt_kernel;
  static_assert(PARTS == kB6Parts, "bf16x6: three BF16 parts");
  __shared__ float t[kSplitTile][kSplitTile + 1];
  const int tx = threadIdx.x, ty = threadIdx.y;
  const int k0 = blockIdx.x * kSplitTile, r0 = blockIdx.y * kSplitTile;
  if (!k_contig) {
#pragma unroll
    for (int i = 0; i < kSplitPasses; ++i) {
      const int k = tf32x3_split_load_k(k0, ty, i), r = tf32x3_split_load_r(r0, tx);
      t[k - k0][r - r0] = k < K && r < R ? X[tf32x3_split_src(r, k, ldx, false)] : 0.0f;
    }
    __syncthreads();
  }
  unsigned short* const b0 = reinterpret_cast<unsigned short*>(big);
  unsigned short* const b1 = reinterpret_cast<unsigned short*>(small);
  const long long panel = static_cast<long long>(R) * Kp;
#pragma unroll
  for (int i = 0; i < kSplitPasses; ++i) {
    const int r = tf32x3_split_store_r(r0, ty, i), k = tf32x3_split_store_k(k0, tx);
    if (r >= R || k >= Kp) continue;
    float v;
    if (k_contig)
      v = k < K ? X[tf32x3_split_src(r, k, ldx, true)] : 0.0f;
    else
      v = t[k - k0][r - r0];
    const long long at = tf32x3_split_dst(r, k, Kp);
#pragma unroll
    for (int j = 0; j < PARTS; ++j) {
      const unsigned short h = bf16x6_rn(v);
      (j == 0 ? b0 : b1 + (j - 1) * panel)[at] = h;
      v -= bf16x6_value(h);  // exact: the bits below the part just taken
    }
  }
}

namespace sgt_kernel {

// The tile kernel's body, which both entries below run, as tf32x3_wg_gemm: the block tile
// blockIdx.x (in GROUP_M order) over the K slices first .. first + nk - 1 of the panels, then
// C = alpha acc + beta C (C never read when beta == 0) with leading dimension ldc. Windows count
// from the first local slice, so that a split sums its slices as the unsplit kernel sums the
// whole K.
template <int STAGES, int GROUP_M>
__device__ __forceinline__ void bf16x6_wg_gemm(int M, int N, int first, int nk, float alpha,
                                               const TmaMap& a_big, const TmaMap& a_small,
                                               const TmaMap& b_big, const TmaMap& b_small,
                                               float beta, float* __restrict__ C, int ldc) {
  static_assert(STAGES >= kB6MinStages && STAGES <= kB6MaxStages,
                "tf32x3_wg_stages: the BF16 split's ring has two stages of 96 KB");
  static_assert(GROUP_M >= 1, "positive_values: GROUP_M is at least 1");
  constexpr int ST = STAGES, T = kB6TileBytes;
  extern __shared__ __align__(1024) unsigned char b6_smem_raw[];
  unsigned char* const base = b6_smem_raw + ((1024 - (smem_u32(b6_smem_raw) & 1023)) & 1023);
  __shared__ __align__(8) unsigned long long full[ST], empty[ST];

  const int tid = threadIdx.x;
  const int grid_m = (M + kWgBM - 1) / kWgBM, grid_n = (N + kWgBN - 1) / kWgBN;
  const int bm0 = block_tile_row(blockIdx.x, grid_m, grid_n, GROUP_M) * kWgBM;
  const int bn0 = block_tile_col(blockIdx.x, grid_m, grid_n, GROUP_M) * kWgBN;

  if (tid == 0) {
#pragma unroll
    for (int s = 0; s < ST; ++s) {
      mbar_init(&full[s], 1);
      mbar_init(&empty[s], kWgConsumers);
    }
    asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
  }
  __syncthreads();

  if (tid >= kWgConsumers) {  // the producer warpgroup: one thread issues every copy
    asm volatile("setmaxnreg.dec.sync.aligned.u32 %0;\n" ::"n"(kWgProducerRegs));
    if (tid == kWgConsumers) {
      for (int kb = 0; kb < nk; ++kb) {
        const int s = kb % ST;
        if (kb >= ST) mbar_wait(&empty[s], ((kb / ST) - 1) & 1);
        unsigned char* st = base + s * kB6StageBytes;
        mbar_arrive_expect(&full[s], kB6StageBytes);
        const int k0 = bf16x6_slice_k(first, kb);
        tma_copy_2d(reinterpret_cast<float*>(st), &a_big, k0, bm0, &full[s]);
        tma_copy_2d(reinterpret_cast<float*>(st + kB6Parts * T), &b_big, k0, bn0, &full[s]);
#pragma unroll
        for (int j = 1; j < kB6Parts; ++j) {
          tma_copy_3d(st + j * T, &a_small, k0, bm0, bf16x6_map_plane(j), &full[s]);
          tma_copy_3d(st + (kB6Parts + j) * T, &b_small, k0, bn0, bf16x6_map_plane(j), &full[s]);
        }
      }
    }
    return;
  }

  asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;\n" ::"n"(kWgConsumerRegs));
  const int wg = tid / 128;
  float acc[64], p0[64], p1[64];  // running sum, a window's partial, the middle sum
#pragma unroll
  for (int i = 0; i < 64; ++i) acc[i] = 0.0f, p1[i] = 0.0f;
  int windows = 0;

  for (int kb = 0; kb < nk; ++kb) {
    const int s = kb % ST;
    mbar_wait(&full[s], (kb / ST) & 1);
    const unsigned char* st = base + s * kB6StageBytes;
    unsigned long long da[kB6Parts], db[kB6Parts];
#pragma unroll
    for (int j = 0; j < kB6Parts; ++j) {
      da[j] = tf32x3_wg_desc(reinterpret_cast<const float*>(st + j * T + wg * 64 * 128));
      db[j] = tf32x3_wg_desc(reinterpret_cast<const float*>(st + (kB6Parts + j) * T));
    }
#pragma unroll
    for (int w = 0; w < kB6BK / 16 / kB6WindowSteps; ++w) {
      tf32x3_wg_fence();
#pragma unroll
      for (int t = 0; t < kB6Products; ++t) {
#pragma unroll
        for (int q = 0; q < kB6WindowSteps; ++q) {
          const unsigned long long o = 2ull * (w * kB6WindowSteps + q);  // 32 bytes a k16 step
          bf16x6_wg_mma(p0, da[bf16x6_part(t, true)] + o, db[bf16x6_part(t, false)] + o, t + q > 0);
        }
      }
      tf32x3_wg_commit();
      tf32x3_wg_wait<0>();
      tf32x3_wg_pin(p0);
#pragma unroll
      for (int i = 0; i < 64; ++i) p1[i] += p0[i];
      if (++windows % kWgMidSlices == 0) {
#pragma unroll
        for (int i = 0; i < 64; ++i) acc[i] += p1[i], p1[i] = 0.0f;
      }
    }
    mbar_arrive(&empty[s]);
  }
#pragma unroll
  for (int i = 0; i < 64; ++i) acc[i] += p1[i];  // the last, partly filled middle sum

  // The m64nNk16 D fragment is the k8 one's.
  tf32x3_wg_store(acc, tid, bm0, bn0, M, N, alpha, beta, C, ldc);
}

}  // namespace sgt_kernel

// The sm_90a image only (SGT_TF32X3_WG_BODY, sgemm_tf32x3_wgmma.cuh). The entries take the TF32
// kernel's arguments (the split_maps ABI: four maps, here over the BF16 panels; box 64 x 128,
// 128-byte swizzle). Grid: ceil(M / 128) * ceil(N / 128) blocks in GROUP_M order (x grid_z for
// the split entry), kWgThreads threads, bf16x6_smem_bytes(STAGES) of dynamic shared memory.
template <int STAGES, int GROUP_M>
__global__ void __launch_bounds__(sgt_kernel::kWgThreads, 1)
    sgemm_bf16x6_wgmma(int M, int N, int K, float alpha,
                       const __grid_constant__ sgt_kernel::TmaMap a_big,
                       const __grid_constant__ sgt_kernel::TmaMap a_small,
                       const __grid_constant__ sgt_kernel::TmaMap b_big,
                       const __grid_constant__ sgt_kernel::TmaMap b_small, float beta,
                       float* __restrict__ C, int ldc) {
#if SGT_TF32X3_WG_BODY
  using namespace sgt_kernel;
  bf16x6_wg_gemm<STAGES, GROUP_M>(M, N, 0, (K + kB6BK - 1) / kB6BK, alpha, a_big, a_small, b_big,
                                  b_small, beta, C, ldc);
#endif
}

// Split over K as sgemm_tf32x3_wgmma_splitk, in slices of kB6BK: split z owns k in
// [z k_chunk, min(K, (z + 1) k_chunk)) (k_chunk a multiple of kB6BK) and, with gridDim.z > 1,
// writes its raw partial product to partial + z M N (leading dimension N) for sgemm_splitk_reduce.
template <int STAGES, int GROUP_M>
__global__ void __launch_bounds__(sgt_kernel::kWgThreads, 1)
    sgemm_bf16x6_wgmma_splitk(int M, int N, int K, float alpha,
                              const __grid_constant__ sgt_kernel::TmaMap a_big,
                              const __grid_constant__ sgt_kernel::TmaMap a_small,
                              const __grid_constant__ sgt_kernel::TmaMap b_big,
                              const __grid_constant__ sgt_kernel::TmaMap b_small, float beta,
                              float* __restrict__ C, int ldc, int k_chunk,
                              float* __restrict__ partial) {
#if SGT_TF32X3_WG_BODY
  using namespace sgt_kernel;
  const int z = blockIdx.z;
  const bool split = gridDim.z > 1;
  float* const out = split ? partial + tf32x3_wg_partial_offset(z, M, N) : C;
  bf16x6_wg_gemm<STAGES, GROUP_M>(M, N, bf16x6_split_first_slice(z, k_chunk),
                                  bf16x6_split_slices(K, z, k_chunk), split ? 1.0f : alpha, a_big,
                                  a_small, b_big, b_small, split ? 0.0f : beta, out,
                                  split ? N : ldc);
#endif
}
