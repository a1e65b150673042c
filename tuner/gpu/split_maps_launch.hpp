// The worker's launch of a family whose kernel runs as split_maps (LaunchAbi, family.hpp;
// tf32x3_wg): the launch plan of launch_plan.h (plan_split_call, run_split_call) with the four
// panel maps of tma_maps.h, as the sgemm_tuned dispatch library runs it too.
#pragma once

#include <cstddef>

#include <cuda_runtime.h>

namespace sgt::gpu {

// What a loaded split_maps candidate contributes: its tile kernel and split prepass (the trial
// request's kernel and pack_kernel), its block, dynamic shared memory and tile.
struct SplitMapsKernel {
  const void* tile = nullptr;
  const void* split = nullptr;  // tf32x3_split_operand; needed whenever K > 0
  unsigned threads = 0;
  std::size_t smem_bytes = 0;
  int BM = 0, BN = 0;
};

// Runs one call in `stream` (row-major C = alpha op(A) op(B) + beta C, any layout, leading
// dimensions and alignment), its workspace from `pool`. Throws Error with the reason when a grid
// is too large, the prepass is missing, a map cannot be encoded or a launch fails.
void run_split_maps(const SplitMapsKernel& k, int M, int N, int K, float alpha, const float* A,
                    int lda, bool trans_a, const float* B, int ldb, bool trans_b, float beta,
                    float* C, int ldc, cudaMemPool_t pool, cudaStream_t stream);

}  // namespace sgt::gpu
