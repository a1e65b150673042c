// Host side of programmatic dependent launch (the kernels' side is wait_for_prior_grid in
// sgemm_warptile.cuh), shared by the tuner's worker and the sgemm_tuned dispatch library. Host code
// only: NVRTC never compiles this file.
#pragma once

#include <cuda_runtime.h>

namespace sgt_kernel {

// Launches `kernel`, which reads what the kernel just before it in `stream` writes. With `overlap`
// (devices of compute capability 9.0 and up) as a programmatic dependent launch: its launch and
// prologue overlap that kernel's last blocks, and it waits for the data in wait_for_prior_grid.
// Otherwise a plain launch, which the stream serializes.
// `smem_bytes`: dynamic shared memory (above 48 KB the caller has set the kernel's
// cudaFuncAttributeMaxDynamicSharedMemorySize).
inline cudaError_t launch_dependent(bool overlap, const void* kernel, dim3 grid, dim3 block,
                                    void** args, cudaStream_t stream, size_t smem_bytes = 0) {
  if (!overlap) return cudaLaunchKernel(kernel, grid, block, args, smem_bytes, stream);
  cudaLaunchAttribute attr{};
  attr.id = cudaLaunchAttributeProgrammaticStreamSerialization;
  attr.val.programmaticStreamSerializationAllowed = 1;
  cudaLaunchConfig_t cfg{};
  cfg.gridDim = grid;
  cfg.blockDim = block;
  cfg.dynamicSmemBytes = smem_bytes;
  cfg.stream = stream;
  cfg.attrs = &attr;
  cfg.numAttrs = 1;
  return cudaLaunchKernelExC(&cfg, kernel, args);
}

}  // namespace sgt_kernel
