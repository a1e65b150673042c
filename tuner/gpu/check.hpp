// Check macros for CUDA runtime, NVRTC and cuBLAS calls: a failure throws sgt::Error carrying the
// call's text, file:line and the API's own message, so the evidence survives into the log.
#pragma once

#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <nvrtc.h>

#include <fmt/format.h>

#include "error.hpp"

namespace sgt::gpu {

[[noreturn]] inline void throw_api_error(const char* api, const char* call, const char* file,
                                         int line, int code, const char* message) {
  throw Error(
      fmt::format("{} call failed at {}:{}: {} -> {} ({})", api, file, line, call, message, code));
}

}  // namespace sgt::gpu

#define SGT_CUDA_CHECK(call)                                                                     \
  do {                                                                                           \
    const cudaError_t sgt_err_ = (call);                                                         \
    if (sgt_err_ != cudaSuccess)                                                                 \
      ::sgt::gpu::throw_api_error("CUDA", #call, __FILE__, __LINE__, static_cast<int>(sgt_err_), \
                                  cudaGetErrorString(sgt_err_));                                 \
  } while (0)

#define SGT_NVRTC_CHECK(call)                                                                     \
  do {                                                                                            \
    const nvrtcResult sgt_err_ = (call);                                                          \
    if (sgt_err_ != NVRTC_SUCCESS)                                                                \
      ::sgt::gpu::throw_api_error("NVRTC", #call, __FILE__, __LINE__, static_cast<int>(sgt_err_), \
                                  nvrtcGetErrorString(sgt_err_));                                 \
  } while (0)

#define SGT_CUBLAS_CHECK(call)                                                                     \
  do {                                                                                             \
    const cublasStatus_t sgt_err_ = (call);                                                        \
    if (sgt_err_ != CUBLAS_STATUS_SUCCESS)                                                         \
      ::sgt::gpu::throw_api_error("cuBLAS", #call, __FILE__, __LINE__, static_cast<int>(sgt_err_), \
                                  cublasGetStatusString(sgt_err_));                                \
  } while (0)
