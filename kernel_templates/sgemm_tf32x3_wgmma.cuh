// Split-TF32 ("3xTF32") SGEMM on Hopper's warpgroup MMA: wgmma.mma_async m64n128k8 on TF32,
// operands delivered by tensor copies (TMA) into a ring of shared-memory stages. sm_90a only.
// Kernel family tf32x3_wg (tuner/core/families/tf32x3_wg/), which takes ACC 3, 6 or 7; also measured
// with every ACC by tools/tf32x3/tf32x3_probe.cu (--wgmma). Its geometry and index arithmetic
// (tile, stages, panels, the prepass's and the epilogue's indexing) are tf32x3_wg_geometry.h's.
//
// Why it differs from sgemm_tf32x3.cuh: there, every warp splits the fragments it reads from
// shared memory (about a third of its instructions) and mma.sync keeps 252 registers per thread
// busy with fragments, which pins the kernel at 2 warps per scheduler, issue-bound at about half
// the tensor pipe (docs/experiments/2026-12-04-tf32x3-datasets-profile.md). Here:
//  - a prepass (tf32x3_split_operand) writes each operand once as its big and small TF32 parts,
//    k-contiguous (A as M x Kp, B as N x Kp; Kp = K rounded up to 4, the padding zero), so that
//    the GEMM does no conversion and wgmma, which takes TF32 only k-major, reads both operands
//    from shared memory in every layout;
//  - four 128 x 32 tiles per stage (A big, A small, B big, B small) arrive by TMA with the
//    128-byte swizzle that the wgmma descriptors name; one thread of a producer warpgroup issues
//    the copies (a whole warpgroup, so that setmaxnreg can hand its registers to the consumers);
//  - two consumer warpgroups each own 64 rows of the 128 x 128 block tile, 64 accumulators per
//    thread for each set.
// ACC, where the products are summed (as in sgemm_tf32x3.cuh):
//   0: the three products of every k-step into the running accumulator (the tensor core's
//      truncating sum over the whole K: fastest, inaccurate; a ceiling to measure against);
//   1: each k-step's three products into a zeroed partial (scale-d 0 on the first), waited for
//      and added to the running sum by FP32 adds (round to nearest): the accurate method;
//   2: as 1, with two partials in turn, so that one k-step's adds overlap the next one's wgmmas;
//   3: as 2, but each slice's last partial is waited for and added before the next slice (no
//      partial in flight across the slice loop, which ptxas's wgmma pipeline analysis follows).
//   4: a window of one slice: its kWgBK / 8 k-steps' products summed in the tensor core into one
//      zeroed partial, waited for and added by FP32 adds once a slice (a two-level sum: the
//      window's truncating sum, then the FP32 chain of K / kWgBK windows);
//   5: windows of two k-steps, two partials in turn within a slice (the first window's adds
//      overlap the second's wgmmas);
//   6: as 4, with a third level: each slice's partial is added into a middle sum in FP32, which
//      is added to the running sum every kWgMidSlices slices (the FP32 chain kWgMidSlices times
//      shorter, in the registers of ACC 3's second partial set).
//   7: as 6, with each slice's wgmmas in another order: first the cross products (small x big,
//      big x small) of its kWgBK / 8 k-steps, while the partial is still small, then their big x
//      big products, so that fewer of the slice's truncating sums happen at the partial's full
//      size (the same wgmmas and registers as 6).
// Same SGEMM semantics as the other kernels: row-major C = alpha op(A) op(B) + beta C, C never
// read when beta == 0; any M, N, K (tiles past the matrix read TMA's zero fill).
// STAGES (2 or 3: the ring's depth; 4 would not fit 227 KB) and GROUP_M (the block order,
// block_tile_row/col) are the family's knobs, and SPLIT_K: its split configs run the entry
// sgemm_tf32x3_wgmma_splitk, which takes one split's K slices and writes its partial product for
// sgemm_splitk_reduce, the unsplit ones sgemm_tf32x3_wgmma; both run one body (tf32x3_wg_gemm),
// and the unsplit entry's machine code is the one it had before the split entry existed.
//
// No host includes: the host side (the panel maps: tma_maps.h; the launches: launch_plan.h) lives
// with its caller. NVRTC compiles this file as is, with the other kernel files as named headers.
#pragma once

#include "sgemm_ws_tma.cuh"
#include "tf32x3_wg_geometry.h"

namespace sgt_kernel {

// ACC 6: slices summed into the middle sum before it joins the running sum.
constexpr int kWgMidSlices = 8;

__device__ __forceinline__ void tf32x3_wg_split(float x, float& big, float& small) {
  unsigned b, s;
  asm("cvt.rna.tf32.f32 %0, %1;" : "=r"(b) : "f"(x));
  const float rest = x - __uint_as_float(b);
  asm("cvt.rna.tf32.f32 %0, %1;" : "=r"(s) : "f"(rest));
  big = __uint_as_float(b);
  small = __uint_as_float(s);
}

// A k-major wgmma operand descriptor of a 1024-byte aligned tile of 8-row groups of 128-byte
// rows (32 floats), swizzled by TMA's 128-byte pattern: start address, stride between 8-row
// groups 1024 bytes, swizzle mode 1 (128 B). The leading offset is unused for this layout.
__device__ __forceinline__ unsigned long long tf32x3_wg_desc(const float* tile) {
  const unsigned long long a = smem_u32(tile);
  return ((a & 0x3FFFFull) >> 4) | (1ull << 16) | ((1024ull >> 4) << 32) | (1ull << 62);
}

__device__ __forceinline__ void tf32x3_wg_fence() {
  asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory");
}
__device__ __forceinline__ void tf32x3_wg_commit() {
  asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory");
}
template <int N>
__device__ __forceinline__ void tf32x3_wg_wait() {
  asm volatile("wgmma.wait_group.sync.aligned %0;\n" ::"n"(N) : "memory");
}
// Keeps the compiler from moving accesses of a register that an in-flight wgmma writes.
__device__ __forceinline__ void tf32x3_wg_pin(float (&d)[64]) {
#pragma unroll
  for (int i = 0; i < 64; ++i) asm volatile("" : "+f"(d[i])::"memory");
}

// d (+)= a * b on a 64 x 128 x 8 tile; scale_d 0 ignores d's old value.
__device__ __forceinline__ void tf32x3_wg_mma(float (&d)[64], unsigned long long desc_a,
                                              unsigned long long desc_b, int scale_d) {
    asm volatile(
        "{\n.reg .pred p;\nsetp.ne.b32 p, %66, 0;\n"
        "wgmma.mma_async.sync.aligned.m64n128k8.f32.tf32.tf32 "
        "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, %32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, %48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63}, %64, %65, p, 1, 1;\n}\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]), "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]), "+f"(d[40]), "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]), "+f"(d[48]), "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]), "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63])
        : "l"(desc_a), "l"(desc_b), "r"(scale_d));
}

}  // namespace sgt_kernel

// op(X), R x K (A: M x K; B: op(B)^T, N x K), written k-contiguous as its big and small TF32
// parts, R rows of Kp floats; columns K..Kp-1 zero. X(r, k) is X[r * ldx + k] when k_contig,
// else X[k * ldx + r] (then read through a shared tile, so that both sides stay coalesced).
// Block 32 x 8 threads, grid (ceil(Kp / 32), ceil(R / 32)).
__global__ void __launch_bounds__(256) tf32x3_split_operand(int R, int K, int Kp,
                                                            const float* __restrict__ X, int ldx,
                                                            int k_contig, float* __restrict__ big,
                                                            float* __restrict__ small) {
  using namespace sgt_kernel;
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
#pragma unroll
  for (int i = 0; i < kSplitPasses; ++i) {
    const int r = tf32x3_split_store_r(r0, ty, i), k = tf32x3_split_store_k(k0, tx);
    if (r >= R || k >= Kp) continue;
    float v;
    if (k_contig)
      v = k < K ? X[tf32x3_split_src(r, k, ldx, true)] : 0.0f;
    else
      v = t[k - k0][r - r0];
    float b, s;
    tf32x3_wg_split(v, b, s);
    big[tf32x3_split_dst(r, k, Kp)] = b;
    small[tf32x3_split_dst(r, k, Kp)] = s;
  }
}

namespace sgt_kernel {

// The epilogue of both kernels (and of sgemm_bf16x6_wgmma.cuh's): consumer thread tid's
// accumulators of the block tile at (bm0, bn0) into C = alpha acc + beta C (C never read when
// beta == 0), only inside M x N, as float2 pairs where C allows.
__device__ __forceinline__ void tf32x3_wg_store(const float (&acc)[64], int tid, int bm0, int bn0,
                                                int M, int N, float alpha, float beta,
                                                float* __restrict__ C, int ldc) {
  // Accumulator 4j + 2h + e: row 16 warp + lane / 4 + 8h, column 8j + 2 (lane % 4) + e.
  const bool pairs = (reinterpret_cast<unsigned long long>(C) & 7ull) == 0 && ldc % 2 == 0;
#pragma unroll
  for (int h = 0; h < 2; ++h) {
    const int row = bm0 + tf32x3_wg_acc_row(tid, 2 * h);
    if (row >= M) continue;
#pragma unroll
    for (int j = 0; j < 16; ++j) {
      const int col = bn0 + tf32x3_wg_acc_col(tid, 4 * j);
      float* p = C + static_cast<long long>(row) * ldc + col;
      float v0 = alpha * acc[4 * j + 2 * h], v1 = alpha * acc[4 * j + 2 * h + 1];
      if (pairs && col + 1 < N) {
        if (beta != 0.0f) {
          const float2 old = *reinterpret_cast<const float2*>(p);
          v0 += beta * old.x;
          v1 += beta * old.y;
        }
        *reinterpret_cast<float2*>(p) = make_float2(v0, v1);
      } else {
        if (col < N) p[0] = v0 + (beta != 0.0f ? beta * p[0] : 0.0f);
        if (col + 1 < N) p[1] = v1 + (beta != 0.0f ? beta * p[1] : 0.0f);
      }
    }
  }
}

// The tile kernel's body, which both of its entries below run: the block tile blockIdx.x (in
// GROUP_M order) over the K slices first .. first + nk - 1 of the panels, then C = alpha acc +
// beta C (C never read when beta == 0) with leading dimension ldc. sgemm_tf32x3_wgmma runs it on
// every slice into C; sgemm_tf32x3_wgmma_splitk on one split's slices, into its partial product
// where the launch splits. The slice loop and the accumulations count local slices (kb from 0),
// so that a split sums its slices as the unsplit kernel sums the whole K.
template <int ACC, int STAGES, int GROUP_M>
__device__ __forceinline__ void tf32x3_wg_gemm(int M, int N, int first, int nk, float alpha,
                                               const TmaMap& a_big, const TmaMap& a_small,
                                               const TmaMap& b_big, const TmaMap& b_small,
                                               float beta, float* __restrict__ C, int ldc) {
  static_assert(ACC >= 0 && ACC <= 7, "acc: 0 to 7");
  static_assert(STAGES >= kWgMinStages && STAGES <= kWgMaxStages,
                "tf32x3_wg_stages: STAGES is 2 or 3 (the ring fits 227 KB of shared memory)");
  static_assert(GROUP_M >= 1, "positive_values: GROUP_M is at least 1");
  constexpr int ST = STAGES, T = kWgTileFloats;
  extern __shared__ __align__(1024) unsigned char wg_smem_raw[];
  float* const base = reinterpret_cast<float*>(
      wg_smem_raw + ((1024 - (smem_u32(wg_smem_raw) & 1023)) & 1023));
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
        float* st = base + s * kWgStageFloats;
        mbar_arrive_expect(&full[s], kWgStageFloats * 4);
        const int k0 = tf32x3_wg_slice_k(first, kb);
        tma_copy_2d(st, &a_big, k0, bm0, &full[s]);
        tma_copy_2d(st + T, &a_small, k0, bm0, &full[s]);
        tma_copy_2d(st + 2 * T, &b_big, k0, bn0, &full[s]);
        tma_copy_2d(st + 3 * T, &b_small, k0, bn0, &full[s]);
      }
    }
    return;
  }

  asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;\n" ::"n"(kWgConsumerRegs));
  const int wg = tid / 128;
  float acc[64], p0[64], p1[64];
#pragma unroll
  for (int i = 0; i < 64; ++i) acc[i] = 0.0f;
  if constexpr (ACC == 6 || ACC == 7) {
#pragma unroll
    for (int i = 0; i < 64; ++i) p1[i] = 0.0f;  // the middle sum
  }

  for (int kb = 0; kb < nk; ++kb) {
    const int s = kb % ST;
    mbar_wait(&full[s], (kb / ST) & 1);
    const float* st = base + s * kWgStageFloats;
    const unsigned long long dab = tf32x3_wg_desc(st + wg * 64 * kWgBK);
    const unsigned long long das = tf32x3_wg_desc(st + T + wg * 64 * kWgBK);
    const unsigned long long dbb = tf32x3_wg_desc(st + 2 * T);
    const unsigned long long dbs = tf32x3_wg_desc(st + 3 * T);
#pragma unroll
    for (int ks = 0; ks < kWgBK / 8; ++ks) {
      const unsigned long long o = 2ull * ks;  // 8 floats = 32 bytes, in 16-byte units
      if constexpr (ACC == 0) {
        if (ks == 0) tf32x3_wg_fence();
        tf32x3_wg_mma(acc, das + o, dbb + o, 1);
        tf32x3_wg_mma(acc, dab + o, dbs + o, 1);
        tf32x3_wg_mma(acc, dab + o, dbb + o, 1);
      } else if constexpr (ACC == 1) {
        tf32x3_wg_fence();
        tf32x3_wg_mma(p0, das + o, dbb + o, 0);
        tf32x3_wg_mma(p0, dab + o, dbs + o, 1);
        tf32x3_wg_mma(p0, dab + o, dbb + o, 1);
        tf32x3_wg_commit();
        tf32x3_wg_wait<0>();
        tf32x3_wg_pin(p0);
#pragma unroll
        for (int i = 0; i < 64; ++i) acc[i] += p0[i];
      } else if constexpr (ACC == 3) {
        float(&cur)[64] = (ks & 1) ? p1 : p0;
        float(&prev)[64] = (ks & 1) ? p0 : p1;
        tf32x3_wg_fence();
        tf32x3_wg_mma(cur, das + o, dbb + o, 0);
        tf32x3_wg_mma(cur, dab + o, dbs + o, 1);
        tf32x3_wg_mma(cur, dab + o, dbb + o, 1);
        tf32x3_wg_commit();
        if (ks > 0) {
          tf32x3_wg_wait<1>();
          tf32x3_wg_pin(prev);
#pragma unroll
          for (int i = 0; i < 64; ++i) acc[i] += prev[i];
        }
        if (ks == kWgBK / 8 - 1) {
          tf32x3_wg_wait<0>();
          tf32x3_wg_pin(cur);
#pragma unroll
          for (int i = 0; i < 64; ++i) acc[i] += cur[i];
        }
      } else if constexpr (ACC == 4 || ACC == 6) {
        if (ks == 0) tf32x3_wg_fence();
        tf32x3_wg_mma(p0, das + o, dbb + o, ks == 0 ? 0 : 1);
        tf32x3_wg_mma(p0, dab + o, dbs + o, 1);
        tf32x3_wg_mma(p0, dab + o, dbb + o, 1);
        if (ks == kWgBK / 8 - 1) {
          tf32x3_wg_commit();
          tf32x3_wg_wait<0>();
          tf32x3_wg_pin(p0);
          float(&sum)[64] = ACC == 6 ? p1 : acc;
#pragma unroll
          for (int i = 0; i < 64; ++i) sum[i] += p0[i];
          if (ACC == 6 && (kb + 1) % kWgMidSlices == 0) {
#pragma unroll
            for (int i = 0; i < 64; ++i) acc[i] += p1[i], p1[i] = 0.0f;
          }
        }
      } else if constexpr (ACC == 7) {
        if (ks == 0) tf32x3_wg_fence();
        tf32x3_wg_mma(p0, das + o, dbb + o, ks == 0 ? 0 : 1);
        tf32x3_wg_mma(p0, dab + o, dbs + o, 1);
        if (ks == kWgBK / 8 - 1) {
#pragma unroll
          for (int kt = 0; kt < kWgBK / 8; ++kt) {
            tf32x3_wg_mma(p0, dab + 2ull * kt, dbb + 2ull * kt, 1);
          }
          tf32x3_wg_commit();
          tf32x3_wg_wait<0>();
          tf32x3_wg_pin(p0);
#pragma unroll
          for (int i = 0; i < 64; ++i) p1[i] += p0[i];
          if ((kb + 1) % kWgMidSlices == 0) {
#pragma unroll
            for (int i = 0; i < 64; ++i) acc[i] += p1[i], p1[i] = 0.0f;
          }
        }
      } else if constexpr (ACC == 5) {
        static_assert(kWgBK / 8 == 4, "acc 5: two windows of two k-steps a slice");
        float(&cur)[64] = ks < 2 ? p0 : p1;
        if (ks % 2 == 0) tf32x3_wg_fence();
        tf32x3_wg_mma(cur, das + o, dbb + o, ks % 2);
        tf32x3_wg_mma(cur, dab + o, dbs + o, 1);
        tf32x3_wg_mma(cur, dab + o, dbb + o, 1);
        if (ks % 2 == 1) tf32x3_wg_commit();
        if (ks == 3) {
          tf32x3_wg_wait<1>();
          tf32x3_wg_pin(p0);
#pragma unroll
          for (int i = 0; i < 64; ++i) acc[i] += p0[i];
          tf32x3_wg_wait<0>();
          tf32x3_wg_pin(p1);
#pragma unroll
          for (int i = 0; i < 64; ++i) acc[i] += p1[i];
        }
      } else {
        float(&cur)[64] = (ks & 1) ? p1 : p0;
        float(&prev)[64] = (ks & 1) ? p0 : p1;
        tf32x3_wg_fence();
        tf32x3_wg_mma(cur, das + o, dbb + o, 0);
        tf32x3_wg_mma(cur, dab + o, dbs + o, 1);
        tf32x3_wg_mma(cur, dab + o, dbb + o, 1);
        tf32x3_wg_commit();
        tf32x3_wg_wait<1>();  // the previous k-step's group is done
        if (kb > 0 || ks > 0) {
          tf32x3_wg_pin(prev);
#pragma unroll
          for (int i = 0; i < 64; ++i) acc[i] += prev[i];
          // The previous k-step was the last of slice kb - 1: its stage is free.
          if (ks == 0) mbar_arrive(&empty[(kb + ST - 1) % ST]);
        }
      }
    }
    if constexpr (ACC == 0) {
      tf32x3_wg_commit();
      tf32x3_wg_wait<1>();
      if (kb > 0) mbar_arrive(&empty[(kb + ST - 1) % ST]);
    } else if constexpr (ACC == 1 || ACC >= 3) {
      mbar_arrive(&empty[s]);
    }
  }
  if constexpr (ACC == 0) {
    tf32x3_wg_wait<0>();
    tf32x3_wg_pin(acc);
  } else if constexpr (ACC == 6 || ACC == 7) {
#pragma unroll
    for (int i = 0; i < 64; ++i) acc[i] += p1[i];  // the last, partly filled middle sum
  } else if constexpr (ACC == 2) {
    tf32x3_wg_wait<0>();
    if (nk > 0) {
      tf32x3_wg_pin(p1);  // kWgBK / 8 k-steps: the last one used p1
#pragma unroll
      for (int i = 0; i < 64; ++i) acc[i] += p1[i];
    }
  }

  tf32x3_wg_store(acc, tid, bm0, bn0, M, N, alpha, beta, C, ldc);
}

}  // namespace sgt_kernel

// The sm_90a image only: wgmma, setmaxnreg and tensor copies; elsewhere the entries are empty.
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ == 900 &&                         \
    (defined(__CUDA_ARCH_FEAT_SM90_ALL) || defined(__CUDA_ARCH_SPECIFIC__) || \
     defined(__CUDA_ARCH_FAMILY_SPECIFIC__))
#define SGT_TF32X3_WG_BODY 1
#else
#define SGT_TF32X3_WG_BODY 0
#endif

// The GEMM on the split operands: maps over the prepass's four arrays (inner dimension Kp, box
// 32 x 128, 128-byte swizzle). Grid: ceil(M / 128) * ceil(N / 128) blocks in GROUP_M order,
// kWgThreads threads, tf32x3_wg_smem_bytes(STAGES) of dynamic shared memory.
template <int ACC, int STAGES, int GROUP_M>
__global__ void __launch_bounds__(sgt_kernel::kWgThreads, 1)
    sgemm_tf32x3_wgmma(int M, int N, int K, float alpha,
                       const __grid_constant__ sgt_kernel::TmaMap a_big,
                       const __grid_constant__ sgt_kernel::TmaMap a_small,
                       const __grid_constant__ sgt_kernel::TmaMap b_big,
                       const __grid_constant__ sgt_kernel::TmaMap b_small, float beta,
                       float* __restrict__ C, int ldc) {
#if SGT_TF32X3_WG_BODY
  using namespace sgt_kernel;
  tf32x3_wg_gemm<ACC, STAGES, GROUP_M>(M, N, 0, (K + kWgBK - 1) / kWgBK, alpha, a_big, a_small,
                                       b_big, b_small, beta, C, ldc);
#endif
}

// The same GEMM split over K (the family's SPLIT_K > 1): the grid's z runs the launch's splits
// (launch_dims: split z owns k in [z k_chunk, min(K, (z + 1) k_chunk)), k_chunk a multiple of
// kWgBK), and with gridDim.z > 1 each split writes its raw partial product (alpha 1, beta 0) to
// partial + z M N with leading dimension N, which sgemm_splitk_reduce (sgemm_warptile.cuh) sums in
// split order into C = alpha sum + beta C. With gridDim.z == 1 (k_chunk = K: a K too short to
// split) it writes C itself, as sgemm_tf32x3_wgmma does. An entry of its own, so that the unsplit
// configs keep the machine code they were measured with.
// Grid: (ceil(M / 128) * ceil(N / 128), 1, grid_z), else as sgemm_tf32x3_wgmma.
template <int ACC, int STAGES, int GROUP_M>
__global__ void __launch_bounds__(sgt_kernel::kWgThreads, 1)
    sgemm_tf32x3_wgmma_splitk(int M, int N, int K, float alpha,
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
  tf32x3_wg_gemm<ACC, STAGES, GROUP_M>(M, N, tf32x3_wg_split_first_slice(z, k_chunk),
                                       tf32x3_wg_split_slices(K, z, k_chunk), split ? 1.0f : alpha,
                                       a_big, a_small, b_big, b_small, split ? 0.0f : beta, out,
                                       split ? N : ldc);
#endif
}
