// The classic cuBLAS FP32 GEMM entry points of libsgemm_tune_preload (cublasSgemm, cublasSgemmEx,
// cublasGemmEx, their batched and 64-bit forms): each records its call (capture.hpp) and forwards
// it, arguments untouched, to the next definition of the same symbol, the real cuBLAS (dlsym
// RTLD_NEXT), or in serve mode runs it on its tuned kernel (interpose.hpp).
#include "interpose.hpp"

namespace sgt::interpose {

namespace {

// Handle queries, never interposed: straight to cuBLAS.
Next<decltype(&cublasGetMathMode)> g_get_math_mode{"cublasGetMathMode", nullptr};
Next<decltype(&cublasGetPointerMode_v2)> g_get_pointer_mode{"cublasGetPointerMode_v2", nullptr};
Next<decltype(&cublasGetStream_v2)> g_get_stream{"cublasGetStream_v2", nullptr};

// ---------------------------------------------------------------------------------------------
// Describing a call.

// The type of alpha and beta for a compute type (cublasGemmEx's rule).
Scalar scalar_of(cublasComputeType_t c) {
  switch (static_cast<int>(c)) {
    case CUBLAS_COMPUTE_16F:
    case CUBLAS_COMPUTE_16F_PEDANTIC:
      return Scalar::F16;
    case CUBLAS_COMPUTE_64F:
    case CUBLAS_COMPUTE_64F_PEDANTIC:
    case 79:  // CUBLAS_COMPUTE_64F_EMULATED_FIXEDPOINT (CUDA 13)
      return Scalar::F64;
    case CUBLAS_COMPUTE_32I:
    case CUBLAS_COMPUTE_32I_PEDANTIC:
      return Scalar::I32;
    default:
      return Scalar::F32;
  }
}

// The handle's math mode; the flag CUBLAS_MATH_DISALLOW_REDUCED_PRECISION_REDUCTION (16) only
// concerns half-precision reductions.
std::string_view math_name(int mode) {
  switch (mode & 0xf) {
    case CUBLAS_DEFAULT_MATH:
      return "default";
    case CUBLAS_TENSOR_OP_MATH:
      return "tensor_op";
    case CUBLAS_PEDANTIC_MATH:
      return "pedantic";
    case CUBLAS_TF32_TENSOR_OP_MATH:
      return "tf32";
    case 4:  // CUBLAS_FP32_EMULATED_BF16X9_MATH (CUDA 12.9)
      return "bf16x9";
    default:
      return "other";
  }
}

// What every classic (handle-based) entry shares.
void prepare_classic(Runtime& rt, Prepared& p, std::string_view entry, cublasHandle_t handle,
                     cublasOperation_t transa, cublasOperation_t transb, std::int64_t m,
                     std::int64_t n, std::int64_t k, std::int64_t lda, std::int64_t ldb,
                     std::int64_t ldc, const void* alpha, const void* beta, Scalar scalar,
                     const void* A = nullptr, const void* B = nullptr, void* C = nullptr) {
  CallFacts& f = p.facts;
  f.entry = entry;
  p.a = A;
  p.b = B;
  p.c = C;
  p.alpha = alpha;
  p.beta = beta;
  const auto a = sgt::preload::real_op(transa), b = sgt::preload::real_op(transb);
  if (!a || !b) {
    p.why = NotRecorded::UnsupportedOp;
    return;
  }
  if (m == 0 || n == 0 || k == 0) {
    p.why = NotRecorded::Empty;
    return;
  }
  f.call.transa = *a;
  f.call.transb = *b;
  f.call.m = m;
  f.call.n = n;
  f.call.k = k;
  f.call.lda = lda;
  f.call.ldb = ldb;
  f.call.ldc = ldc;
  cublasMath_t math{};
  f.math_mode = call_next(g_get_math_mode, handle, &math) == CUBLAS_STATUS_SUCCESS
                    ? math_name(static_cast<int>(math))
                    : "unknown";
  cublasPointerMode_t mode{};
  if (call_next(g_get_pointer_mode, handle, &mode) != CUBLAS_STATUS_SUCCESS) {
    f.pointer_mode = "unknown";
  } else if (mode == CUBLAS_POINTER_MODE_HOST) {
    f.pointer_mode = "host";
    f.alpha = read_scalar(alpha, scalar);
    f.beta = read_scalar(beta, scalar);
  } else {
    // Reading device memory would synchronise the stream: the class stays unknown.
    f.pointer_mode = "device";
  }
  cudaStream_t stream = nullptr;
  if (call_next(g_get_stream, handle, &stream) == CUBLAS_STATUS_SUCCESS) p.stream = stream;
  note_device(rt, f);
}

void set_types(CallFacts& f, cudaDataType a, cudaDataType b, cudaDataType c) {
  f.a_type = type_name(a);
  f.b_type = type_name(b);
  f.c_type = type_name(c);
}

// cuBLAS's C++ header adds inline overloads of the three GemmEx entries that take a cudaDataType
// compute type: the exported functions' types are spelled out.
using GemmExFn = cublasStatus_t (*)(cublasHandle_t, cublasOperation_t, cublasOperation_t, int, int,
                                    int, const void*, const void*, cudaDataType, int, const void*,
                                    cudaDataType, int, const void*, void*, cudaDataType, int,
                                    cublasComputeType_t, cublasGemmAlgo_t);
using GemmBatchedExFn = cublasStatus_t (*)(cublasHandle_t, cublasOperation_t, cublasOperation_t,
                                           int, int, int, const void*, const void* const[],
                                           cudaDataType, int, const void* const[], cudaDataType,
                                           int, const void*, void* const[], cudaDataType, int, int,
                                           cublasComputeType_t, cublasGemmAlgo_t);
using GemmStridedBatchedExFn = cublasStatus_t (*)(
    cublasHandle_t, cublasOperation_t, cublasOperation_t, int, int, int, const void*, const void*,
    cudaDataType, int, long long int, const void*, cudaDataType, int, long long int, const void*,
    void*, cudaDataType, int, long long int, int, cublasComputeType_t, cublasGemmAlgo_t);

// The interposed functions, each with its real function.
Next<decltype(&cublasSgemm_v2)> g_sgemm{"cublasSgemm_v2", &cublasSgemm_v2};
Next<decltype(&cublasSgemm_v2_64)> g_sgemm_64{"cublasSgemm_v2_64", &cublasSgemm_v2_64};
Next<decltype(&cublasSgemmEx)> g_sgemm_ex{"cublasSgemmEx", &cublasSgemmEx};
Next<decltype(&cublasSgemmEx_64)> g_sgemm_ex_64{"cublasSgemmEx_64", &cublasSgemmEx_64};
Next<GemmExFn> g_gemm_ex{"cublasGemmEx", &cublasGemmEx};
Next<decltype(&cublasGemmEx_64)> g_gemm_ex_64{"cublasGemmEx_64", &cublasGemmEx_64};
Next<decltype(&cublasSgemmBatched)> g_sgemm_batched{"cublasSgemmBatched", &cublasSgemmBatched};
Next<decltype(&cublasSgemmBatched_64)> g_sgemm_batched_64{"cublasSgemmBatched_64",
                                                          &cublasSgemmBatched_64};
Next<decltype(&cublasSgemmStridedBatched)> g_sgemm_strided{"cublasSgemmStridedBatched",
                                                           &cublasSgemmStridedBatched};
Next<decltype(&cublasSgemmStridedBatched_64)> g_sgemm_strided_64{"cublasSgemmStridedBatched_64",
                                                                 &cublasSgemmStridedBatched_64};
Next<GemmBatchedExFn> g_gemm_batched_ex{"cublasGemmBatchedEx", &cublasGemmBatchedEx};
Next<decltype(&cublasGemmBatchedEx_64)> g_gemm_batched_ex_64{"cublasGemmBatchedEx_64",
                                                             &cublasGemmBatchedEx_64};
Next<GemmStridedBatchedExFn> g_gemm_strided_ex{"cublasGemmStridedBatchedEx",
                                               &cublasGemmStridedBatchedEx};
Next<decltype(&cublasGemmStridedBatchedEx_64)> g_gemm_strided_ex_64{"cublasGemmStridedBatchedEx_64",
                                                                    &cublasGemmStridedBatchedEx_64};

}  // namespace

}  // namespace sgt::interpose

using namespace sgt::interpose;

// ---------------------------------------------------------------------------------------------
// The entry points. Each forwards exactly its arguments; the lambda after it describes the call.

extern "C" {

cublasStatus_t CUBLASWINAPI cublasSgemm_v2(cublasHandle_t handle, cublasOperation_t transa,
                                           cublasOperation_t transb, int m, int n, int k,
                                           const float* alpha, const float* A, int lda,
                                           const float* B, int ldb, const float* beta, float* C,
                                           int ldc) {
  return intercept(
      [&] {
        return call_next(g_sgemm, handle, transa, transb, m, n, k, alpha, A, lda, B, ldb, beta, C,
                         ldc);
      },
      [&](Runtime& rt, Prepared& p) {
        prepare_classic(rt, p, "cublasSgemm_v2", handle, transa, transb, m, n, k, lda, ldb, ldc,
                        alpha, beta, Scalar::F32, A, B, C);
      },
      [&](float* out) {
        return call_next(g_sgemm, handle, transa, transb, m, n, k, alpha, A, lda, B, ldb, beta, out,
                         ldc);
      });
}

cublasStatus_t CUBLASWINAPI cublasSgemm_v2_64(cublasHandle_t handle, cublasOperation_t transa,
                                              cublasOperation_t transb, int64_t m, int64_t n,
                                              int64_t k, const float* alpha, const float* A,
                                              int64_t lda, const float* B, int64_t ldb,
                                              const float* beta, float* C, int64_t ldc) {
  return intercept(
      [&] {
        return call_next(g_sgemm_64, handle, transa, transb, m, n, k, alpha, A, lda, B, ldb, beta,
                         C, ldc);
      },
      [&](Runtime& rt, Prepared& p) {
        prepare_classic(rt, p, "cublasSgemm_v2_64", handle, transa, transb, m, n, k, lda, ldb, ldc,
                        alpha, beta, Scalar::F32, A, B, C);
      },
      [&](float* out) {
        return call_next(g_sgemm_64, handle, transa, transb, m, n, k, alpha, A, lda, B, ldb, beta,
                         out, ldc);
      });
}

cublasStatus_t CUBLASWINAPI cublasSgemmEx(cublasHandle_t handle, cublasOperation_t transa,
                                          cublasOperation_t transb, int m, int n, int k,
                                          const float* alpha, const void* A, cudaDataType Atype,
                                          int lda, const void* B, cudaDataType Btype, int ldb,
                                          const float* beta, void* C, cudaDataType Ctype, int ldc) {
  return intercept(
      [&] {
        return call_next(g_sgemm_ex, handle, transa, transb, m, n, k, alpha, A, Atype, lda, B,
                         Btype, ldb, beta, C, Ctype, ldc);
      },
      [&](Runtime& rt, Prepared& p) {
        prepare_classic(rt, p, "cublasSgemmEx", handle, transa, transb, m, n, k, lda, ldb, ldc,
                        alpha, beta, Scalar::F32, A, B, C);
        set_types(p.facts, Atype, Btype, Ctype);
      },
      [&](float* out) {
        return call_next(g_sgemm_ex, handle, transa, transb, m, n, k, alpha, A, Atype, lda, B,
                         Btype, ldb, beta, out, Ctype, ldc);
      });
}

cublasStatus_t CUBLASWINAPI cublasSgemmEx_64(cublasHandle_t handle, cublasOperation_t transa,
                                             cublasOperation_t transb, int64_t m, int64_t n,
                                             int64_t k, const float* alpha, const void* A,
                                             cudaDataType Atype, int64_t lda, const void* B,
                                             cudaDataType Btype, int64_t ldb, const float* beta,
                                             void* C, cudaDataType Ctype, int64_t ldc) {
  return intercept(
      [&] {
        return call_next(g_sgemm_ex_64, handle, transa, transb, m, n, k, alpha, A, Atype, lda, B,
                         Btype, ldb, beta, C, Ctype, ldc);
      },
      [&](Runtime& rt, Prepared& p) {
        prepare_classic(rt, p, "cublasSgemmEx_64", handle, transa, transb, m, n, k, lda, ldb, ldc,
                        alpha, beta, Scalar::F32, A, B, C);
        set_types(p.facts, Atype, Btype, Ctype);
      },
      [&](float* out) {
        return call_next(g_sgemm_ex_64, handle, transa, transb, m, n, k, alpha, A, Atype, lda, B,
                         Btype, ldb, beta, out, Ctype, ldc);
      });
}

cublasStatus_t CUBLASWINAPI cublasGemmEx(cublasHandle_t handle, cublasOperation_t transa,
                                         cublasOperation_t transb, int m, int n, int k,
                                         const void* alpha, const void* A, cudaDataType Atype,
                                         int lda, const void* B, cudaDataType Btype, int ldb,
                                         const void* beta, void* C, cudaDataType Ctype, int ldc,
                                         cublasComputeType_t computeType, cublasGemmAlgo_t algo) {
  return intercept(
      [&] {
        return call_next(g_gemm_ex, handle, transa, transb, m, n, k, alpha, A, Atype, lda, B, Btype,
                         ldb, beta, C, Ctype, ldc, computeType, algo);
      },
      [&](Runtime& rt, Prepared& p) {
        prepare_classic(rt, p, "cublasGemmEx", handle, transa, transb, m, n, k, lda, ldb, ldc,
                        alpha, beta, scalar_of(computeType), A, B, C);
        set_types(p.facts, Atype, Btype, Ctype);
        p.facts.compute = compute_name(computeType);
      },
      [&](float* out) {
        return call_next(g_gemm_ex, handle, transa, transb, m, n, k, alpha, A, Atype, lda, B, Btype,
                         ldb, beta, out, Ctype, ldc, computeType, algo);
      });
}

cublasStatus_t CUBLASWINAPI cublasGemmEx_64(
    cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb, int64_t m, int64_t n,
    int64_t k, const void* alpha, const void* A, cudaDataType Atype, int64_t lda, const void* B,
    cudaDataType Btype, int64_t ldb, const void* beta, void* C, cudaDataType Ctype, int64_t ldc,
    cublasComputeType_t computeType, cublasGemmAlgo_t algo) {
  return intercept(
      [&] {
        return call_next(g_gemm_ex_64, handle, transa, transb, m, n, k, alpha, A, Atype, lda, B,
                         Btype, ldb, beta, C, Ctype, ldc, computeType, algo);
      },
      [&](Runtime& rt, Prepared& p) {
        prepare_classic(rt, p, "cublasGemmEx_64", handle, transa, transb, m, n, k, lda, ldb, ldc,
                        alpha, beta, scalar_of(computeType), A, B, C);
        set_types(p.facts, Atype, Btype, Ctype);
        p.facts.compute = compute_name(computeType);
      },
      [&](float* out) {
        return call_next(g_gemm_ex_64, handle, transa, transb, m, n, k, alpha, A, Atype, lda, B,
                         Btype, ldb, beta, out, Ctype, ldc, computeType, algo);
      });
}

cublasStatus_t CUBLASWINAPI cublasSgemmBatched(cublasHandle_t handle, cublasOperation_t transa,
                                               cublasOperation_t transb, int m, int n, int k,
                                               const float* alpha, const float* const Aarray[],
                                               int lda, const float* const Barray[], int ldb,
                                               const float* beta, float* const Carray[], int ldc,
                                               int batchCount) {
  return intercept(
      [&] {
        return call_next(g_sgemm_batched, handle, transa, transb, m, n, k, alpha, Aarray, lda,
                         Barray, ldb, beta, Carray, ldc, batchCount);
      },
      [&](Runtime& rt, Prepared& p) {
        prepare_classic(rt, p, "cublasSgemmBatched", handle, transa, transb, m, n, k, lda, ldb, ldc,
                        alpha, beta, Scalar::F32);
        set_batch(p, batchCount, "pointer_array");
      },
      [](float*) { return CUBLAS_STATUS_NOT_SUPPORTED; });
}

cublasStatus_t CUBLASWINAPI cublasSgemmBatched_64(cublasHandle_t handle, cublasOperation_t transa,
                                                  cublasOperation_t transb, int64_t m, int64_t n,
                                                  int64_t k, const float* alpha,
                                                  const float* const Aarray[], int64_t lda,
                                                  const float* const Barray[], int64_t ldb,
                                                  const float* beta, float* const Carray[],
                                                  int64_t ldc, int64_t batchCount) {
  return intercept(
      [&] {
        return call_next(g_sgemm_batched_64, handle, transa, transb, m, n, k, alpha, Aarray, lda,
                         Barray, ldb, beta, Carray, ldc, batchCount);
      },
      [&](Runtime& rt, Prepared& p) {
        prepare_classic(rt, p, "cublasSgemmBatched_64", handle, transa, transb, m, n, k, lda, ldb,
                        ldc, alpha, beta, Scalar::F32);
        set_batch(p, batchCount, "pointer_array");
      },
      [](float*) { return CUBLAS_STATUS_NOT_SUPPORTED; });
}

cublasStatus_t CUBLASWINAPI cublasSgemmStridedBatched(
    cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb, int m, int n, int k,
    const float* alpha, const float* A, int lda, long long int strideA, const float* B, int ldb,
    long long int strideB, const float* beta, float* C, int ldc, long long int strideC,
    int batchCount) {
  return intercept(
      [&] {
        return call_next(g_sgemm_strided, handle, transa, transb, m, n, k, alpha, A, lda, strideA,
                         B, ldb, strideB, beta, C, ldc, strideC, batchCount);
      },
      [&](Runtime& rt, Prepared& p) {
        prepare_classic(rt, p, "cublasSgemmStridedBatched", handle, transa, transb, m, n, k, lda,
                        ldb, ldc, alpha, beta, Scalar::F32, A, B, C);
        set_batch(p, batchCount, "strided");
        set_strides(p, strideA, strideB, strideC);
      },
      [&](float* out) {
        return call_next(g_sgemm_strided, handle, transa, transb, m, n, k, alpha, A, lda, strideA,
                         B, ldb, strideB, beta, out, ldc, strideC, batchCount);
      });
}

cublasStatus_t CUBLASWINAPI cublasSgemmStridedBatched_64(
    cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb, int64_t m, int64_t n,
    int64_t k, const float* alpha, const float* A, int64_t lda, long long int strideA,
    const float* B, int64_t ldb, long long int strideB, const float* beta, float* C, int64_t ldc,
    long long int strideC, int64_t batchCount) {
  return intercept(
      [&] {
        return call_next(g_sgemm_strided_64, handle, transa, transb, m, n, k, alpha, A, lda,
                         strideA, B, ldb, strideB, beta, C, ldc, strideC, batchCount);
      },
      [&](Runtime& rt, Prepared& p) {
        prepare_classic(rt, p, "cublasSgemmStridedBatched_64", handle, transa, transb, m, n, k, lda,
                        ldb, ldc, alpha, beta, Scalar::F32, A, B, C);
        set_batch(p, batchCount, "strided");
        set_strides(p, strideA, strideB, strideC);
      },
      [&](float* out) {
        return call_next(g_sgemm_strided_64, handle, transa, transb, m, n, k, alpha, A, lda,
                         strideA, B, ldb, strideB, beta, out, ldc, strideC, batchCount);
      });
}

cublasStatus_t CUBLASWINAPI
cublasGemmBatchedEx(cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb,
                    int m, int n, int k, const void* alpha, const void* const Aarray[],
                    cudaDataType Atype, int lda, const void* const Barray[], cudaDataType Btype,
                    int ldb, const void* beta, void* const Carray[], cudaDataType Ctype, int ldc,
                    int batchCount, cublasComputeType_t computeType, cublasGemmAlgo_t algo) {
  return intercept(
      [&] {
        return call_next(g_gemm_batched_ex, handle, transa, transb, m, n, k, alpha, Aarray, Atype,
                         lda, Barray, Btype, ldb, beta, Carray, Ctype, ldc, batchCount, computeType,
                         algo);
      },
      [&](Runtime& rt, Prepared& p) {
        prepare_classic(rt, p, "cublasGemmBatchedEx", handle, transa, transb, m, n, k, lda, ldb,
                        ldc, alpha, beta, scalar_of(computeType));
        set_types(p.facts, Atype, Btype, Ctype);
        p.facts.compute = compute_name(computeType);
        set_batch(p, batchCount, "pointer_array");
      },
      [](float*) { return CUBLAS_STATUS_NOT_SUPPORTED; });
}

cublasStatus_t CUBLASWINAPI cublasGemmBatchedEx_64(
    cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb, int64_t m, int64_t n,
    int64_t k, const void* alpha, const void* const Aarray[], cudaDataType Atype, int64_t lda,
    const void* const Barray[], cudaDataType Btype, int64_t ldb, const void* beta,
    void* const Carray[], cudaDataType Ctype, int64_t ldc, int64_t batchCount,
    cublasComputeType_t computeType, cublasGemmAlgo_t algo) {
  return intercept(
      [&] {
        return call_next(g_gemm_batched_ex_64, handle, transa, transb, m, n, k, alpha, Aarray,
                         Atype, lda, Barray, Btype, ldb, beta, Carray, Ctype, ldc, batchCount,
                         computeType, algo);
      },
      [&](Runtime& rt, Prepared& p) {
        prepare_classic(rt, p, "cublasGemmBatchedEx_64", handle, transa, transb, m, n, k, lda, ldb,
                        ldc, alpha, beta, scalar_of(computeType));
        set_types(p.facts, Atype, Btype, Ctype);
        p.facts.compute = compute_name(computeType);
        set_batch(p, batchCount, "pointer_array");
      },
      [](float*) { return CUBLAS_STATUS_NOT_SUPPORTED; });
}

cublasStatus_t CUBLASWINAPI cublasGemmStridedBatchedEx(
    cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb, int m, int n, int k,
    const void* alpha, const void* A, cudaDataType Atype, int lda, long long int strideA,
    const void* B, cudaDataType Btype, int ldb, long long int strideB, const void* beta, void* C,
    cudaDataType Ctype, int ldc, long long int strideC, int batchCount,
    cublasComputeType_t computeType, cublasGemmAlgo_t algo) {
  return intercept(
      [&] {
        return call_next(g_gemm_strided_ex, handle, transa, transb, m, n, k, alpha, A, Atype, lda,
                         strideA, B, Btype, ldb, strideB, beta, C, Ctype, ldc, strideC, batchCount,
                         computeType, algo);
      },
      [&](Runtime& rt, Prepared& p) {
        prepare_classic(rt, p, "cublasGemmStridedBatchedEx", handle, transa, transb, m, n, k, lda,
                        ldb, ldc, alpha, beta, scalar_of(computeType), A, B, C);
        set_types(p.facts, Atype, Btype, Ctype);
        p.facts.compute = compute_name(computeType);
        set_batch(p, batchCount, "strided");
        set_strides(p, strideA, strideB, strideC);
      },
      [&](float* out) {
        return call_next(g_gemm_strided_ex, handle, transa, transb, m, n, k, alpha, A, Atype, lda,
                         strideA, B, Btype, ldb, strideB, beta, out, Ctype, ldc, strideC,
                         batchCount, computeType, algo);
      });
}

cublasStatus_t CUBLASWINAPI cublasGemmStridedBatchedEx_64(
    cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb, int64_t m, int64_t n,
    int64_t k, const void* alpha, const void* A, cudaDataType Atype, int64_t lda,
    long long int strideA, const void* B, cudaDataType Btype, int64_t ldb, long long int strideB,
    const void* beta, void* C, cudaDataType Ctype, int64_t ldc, long long int strideC,
    int64_t batchCount, cublasComputeType_t computeType, cublasGemmAlgo_t algo) {
  return intercept(
      [&] {
        return call_next(g_gemm_strided_ex_64, handle, transa, transb, m, n, k, alpha, A, Atype,
                         lda, strideA, B, Btype, ldb, strideB, beta, C, Ctype, ldc, strideC,
                         batchCount, computeType, algo);
      },
      [&](Runtime& rt, Prepared& p) {
        prepare_classic(rt, p, "cublasGemmStridedBatchedEx_64", handle, transa, transb, m, n, k,
                        lda, ldb, ldc, alpha, beta, scalar_of(computeType), A, B, C);
        set_types(p.facts, Atype, Btype, Ctype);
        p.facts.compute = compute_name(computeType);
        set_batch(p, batchCount, "strided");
        set_strides(p, strideA, strideB, strideC);
      },
      [&](float* out) {
        return call_next(g_gemm_strided_ex_64, handle, transa, transb, m, n, k, alpha, A, Atype,
                         lda, strideA, B, Btype, ldb, strideB, beta, out, Ctype, ldc, strideC,
                         batchCount, computeType, algo);
      });
}

}  // extern "C"
