// sgemm_tuned: SGEMM that runs the kernel sgemm-tune found fastest for this GPU and shape, from a
// table embedded at build time, and cuBLAS for every call no tuned kernel can serve.
// Plain C++ (only the CUDA runtime's declarations): include it from .cpp or .cu files.
#pragma once

#include <cuda_runtime_api.h>

#include <string>

namespace sgemm_tuned {

// Row-major single-precision GEMM on the current device, enqueued on `stream`:
//
//   C = alpha * A * B + beta * C
//
// A is M x K with row stride lda (element (i, k) at A[i * lda + k], lda >= K), B is K x N with row
// stride ldb (ldb >= N), C is M x N with row stride ldc (ldc >= N); all are device pointers. As in
// BLAS, with beta == 0 C is only written, so it may hold NaN or garbage on entry.
//
// Path, for the device's name, compute capability and SM count matched against the embedded table:
// the tuned winner of exactly this shape, else the winner of the nearest tuned shape (log2
// distance) whose tile divides the shape, else the GPU's default config, else cublasSgemm with
// CUBLAS_PEDANTIC_MATH (FP32, no TF32). cuBLAS also serves every call a tuned kernel cannot: a
// shape that is not a multiple of the tile, lda != K, ldb != N or ldc != N, pointers that are not
// 16-byte aligned, a device not in the table, a build without a kernel image for the device.
//
// Returns the launch's (or cuBLAS's, as the nearest cudaError_t) status; cudaErrorInvalidValue for
// negative sizes or too small leading dimensions. Thread-safe; one cuBLAS handle per device is
// created on the first call that needs it.
cudaError_t sgemm(int M, int N, int K, float alpha, const float* A, int lda, const float* B,
                  int ldb, float beta, float* C, int ldc, cudaStream_t stream = nullptr);

// What sgemm() would do for this call on the current device, and why: the path (tuned kernel and
// its config name, or cuBLAS), the tuned shape it came from, what was passed over, and where the
// table came from (sgemm-tune version, database, date). Pointers are only checked for alignment.
std::string explain(int M, int N, int K, int lda, int ldb, int ldc, const void* A = nullptr,
                    const void* B = nullptr, const void* C = nullptr);

}  // namespace sgemm_tuned
