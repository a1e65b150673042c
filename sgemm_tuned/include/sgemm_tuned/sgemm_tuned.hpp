// sgemm_tuned: SGEMM that runs the kernel sgemm-tune found fastest for this GPU and shape, from a
// table embedded at build time, and cuBLAS for every call no tuned kernel can serve.
// Plain C++ (only the CUDA runtime's declarations): include it from .cpp or .cu files.
#pragma once

#include <cuda_runtime_api.h>

#include <string>

namespace sgemm_tuned {

// Whether an operand is used as stored (N) or transposed (T).
enum class Op { N, T };

// Row-major single-precision GEMM on the current device, enqueued on `stream`:
//
//   C = alpha * op(A) * op(B) + beta * C,   op(A) is M x K, op(B) is K x N, C is M x N
//
// Everything is row-major with a row stride: op_a == N means A is stored M x K (element (i, k) at
// A[i * lda + k], lda >= K); op_a == T means A is stored K x M and used transposed (lda >= M).
// Likewise op_b == N: B stored K x N (ldb >= N); op_b == T: B stored N x K (ldb >= K). C is M x N
// with ldc >= N. All are device pointers of any float alignment. As in BLAS, with beta == 0 C is
// only written, so it may hold NaN or garbage on entry; K == 0 gives C = beta * C; M == 0 or
// N == 0 does nothing and returns cudaSuccess.
//
// In cuBLAS's column-major terms this is cublasSgemm(handle, op_b, op_a, N, M, K, &alpha, B, ldb,
// A, lda, &beta, C, ldc): a row-major matrix is its transpose in column-major storage, so the
// operands swap and each keeps its op and stride.
//
// Path, for the device's name, compute capability and SM count matched against the embedded table
// and for this layout: the tuned winner of exactly this shape, else the winner of the nearest tuned
// shape of the layout (log2 distance), else the GPU's default config, else cublasSgemm with
// CUBLAS_PEDANTIC_MATH (FP32, no TF32). Tuned kernels serve every shape: tiles inside the matrix
// use 128-bit accesses where the pointer and leading dimension allow it, edge tiles and unaligned
// operands are read element by element. A ws_tma winner (tensor copies, sm_90a) runs only on a
// compute capability 9.0 device from a build with 90a in CMAKE_CUDA_ARCHITECTURES, and only when A
// and B are 16-byte aligned with leading dimensions that are multiples of 4 (or K == 0); otherwise
// it is passed over like a winner that cannot run, for the next shape's winner, the default or
// cuBLAS. cuBLAS serves a device not in the table or a build without a kernel image for the device.
// A split-K config's workspace and a PACK config's panels are stream-ordered allocations on
// `stream` from a memory pool of the library's own (one per device), which keeps freed memory for
// the next call; release_memory() returns it.
//
// Returns the launch's (or cuBLAS's, as the nearest cudaError_t) status; cudaErrorInvalidValue for
// negative sizes or too small leading dimensions. Thread-safe; one cuBLAS handle per device is
// created on the first call that needs it.
cudaError_t sgemm(Op op_a, Op op_b, int M, int N, int K, float alpha, const float* A, int lda,
                  const float* B, int ldb, float beta, float* C, int ldc,
                  cudaStream_t stream = nullptr);

// The same with op_a = op_b = N.
cudaError_t sgemm(int M, int N, int K, float alpha, const float* A, int lda, const float* B,
                  int ldb, float beta, float* C, int ldc, cudaStream_t stream = nullptr);

// Returns to the system the memory the current device's pool keeps for split-K workspaces and
// PACK panels (what calls in flight use stays theirs); later calls allocate it again.
cudaError_t release_memory();

// What sgemm() would do for this call on the current device, and why: the path (tuned kernel and
// its config name, or cuBLAS), the tuned shape it came from, what was passed over, which accesses
// are 128-bit, and where the table came from (sgemm-tune version, database, date). Pointers are
// only checked for alignment.
std::string explain(Op op_a, Op op_b, int M, int N, int K, int lda, int ldb, int ldc,
                    const void* A = nullptr, const void* B = nullptr, const void* C = nullptr);
std::string explain(int M, int N, int K, int lda, int ldb, int ldc, const void* A = nullptr,
                    const void* B = nullptr, const void* C = nullptr);

}  // namespace sgemm_tuned
