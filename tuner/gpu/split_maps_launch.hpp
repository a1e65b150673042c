// The worker's launch of a family whose kernel runs as split_maps (LaunchAbi, family.hpp;
// tf32x3_wg): the launch plan of launch_plan.h (plan_split_call, run_split_call) with the four
// panel maps of tma_maps.h and, for a split config, the split-K reduction, as the sgemm_tuned
// dispatch library runs it too.
#pragma once

#include <cstddef>

#include <cuda_runtime.h>

namespace sgt::gpu {

// What a loaded split_maps candidate contributes: its tile kernel, split prepass and split-K
// reduction (the trial request's kernel, pack_kernel and reduce_kernel), its block, dynamic
// shared memory, tile and SPLIT_K (> 1: the tile kernel is the split entry, which takes k_chunk
// and the partial products' workspace); BK names the panels (kB6BK: the BF16 split's).
struct SplitMapsKernel {
  const void* tile = nullptr;
  const void* split = nullptr;   // tf32x3_split_operand; needed whenever K > 0
  const void* reduce = nullptr;  // sgemm_splitk_reduce; needed whenever the launch splits K
  unsigned threads = 0;
  std::size_t smem_bytes = 0;
  int BM = 0, BN = 0;
  int split_k = 1;
  int BK = 32;
  bool tail = false;  // the wave-aware tail (TAIL 1; tile is the split entry)
  int group_m = 1;    // the config's GROUP_M: the block order the tail is found in
};

// Runs one call in `stream` (row-major C = alpha op(A) op(B) + beta C, any layout, leading
// dimensions and alignment), its workspaces from `pool`, the reduction over `sm_count` SMs and a
// dependent launch where `overlap` (compute capability 9.0 and up). Throws Error with the reason
// when a grid is too large, the prepass or the reduction is missing, a map cannot be encoded or
// a launch fails.
void run_split_maps(const SplitMapsKernel& k, int M, int N, int K, float alpha, const float* A,
                    int lda, bool trans_a, const float* B, int ldb, bool trans_b, float beta,
                    float* C, int ldc, int sm_count, bool overlap, cudaMemPool_t pool,
                    cudaStream_t stream);

}  // namespace sgt::gpu
