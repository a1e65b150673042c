// The worker's split_maps launch (split_maps_launch.hpp).
#include "split_maps_launch.hpp"

#include <string>

#include <fmt/format.h>

#include "check.hpp"
#include "error.hpp"
#include "launch_plan.h"
#include "tma_maps.h"

namespace sgt::gpu {

void run_split_maps(const SplitMapsKernel& k, int M, int N, int K, float alpha, const float* A,
                    int lda, bool trans_a, const float* B, int ldb, bool trans_b, float beta,
                    float* C, int ldc, int sm_count, bool overlap, cudaMemPool_t pool,
                    cudaStream_t stream) {
  const auto plan = sgt_kernel::plan_split_call(k.BM, k.BN, k.split_k, M, N, K, trans_a, trans_b,
                                                sm_count, overlap, k.BK, k.tail, k.group_m);
  if (plan.too_large) throw Error("grid too large for this problem");
  if (plan.workspace_floats > 0 && !k.split)
    throw Error("split_maps launch without its split prepass (the request's pack_kernel)");
  if ((plan.reduce_blocks > 0 || plan.tail.reduce_blocks > 0) && !k.reduce)
    throw Error("split-K launch without a reduction kernel (the request's reduce_kernel)");
  std::string refused;  // why the tile step launched nothing (run_split_call still frees)
  const auto tile_step = [&](const float* work, float* partial, bool tail) {
    // With K = 0 the kernel copies nothing: zero maps. The tail's maps cover its panel rows.
    sgt_kernel::SplitMaps maps{};
    if (work) {
      if (const CUresult r = sgt_kernel::tma_encode_split_maps(
              maps, work, M, N, K, plan.bf16, tail ? plan.tail.row0 : 0, tail ? plan.tail.col0 : 0);
          r != CUDA_SUCCESS) {
        refused =
            fmt::format("cuTensorMapEncodeTiled failed on a split panel ({})", static_cast<int>(r));
        return cudaErrorInvalidValue;
      }
    }
    return sgt_kernel::launch_split_maps(k.tile, plan, k.threads, k.smem_bytes, maps.a_big,
                                         maps.a_small, maps.b_big, maps.b_small, M, N, K, alpha,
                                         beta, C, ldc, partial, stream, tail);
  };
  const cudaError_t e = sgt_kernel::run_split_call(plan, k.split, k.reduce, M, N, K, alpha, A, lda,
                                                   B, ldb, beta, C, ldc, pool, stream, tile_step);
  if (!refused.empty()) throw Error(refused);
  SGT_CUDA_CHECK(e);
}

}  // namespace sgt::gpu
