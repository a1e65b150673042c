// A stand-in for cuBLAS and cuBLASLt in the preload tests: the handle and descriptor functions and
// the FP32 GEMM entry points, which do no math and no CUDA but append one line per call, with
// every argument, to the file named by SGT_FAKE_CUBLAS_LOG. The real headers declare every
// function defined here, so the compiler holds each to cuBLAS's own signature.
#include <cublasLt.h>
#include <cublas_api.h>

#include <cinttypes>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <new>
#include <string>

namespace {

struct Handle {
  int id;
  cublasMath_t math = CUBLAS_DEFAULT_MATH;
  cublasPointerMode_t pointer_mode = CUBLAS_POINTER_MODE_HOST;
  cudaStream_t stream = nullptr;
};

std::mutex g_mutex;
int g_next_handle = 1;

// One line to the log; the handle by its number (its address changes from run to run).
void log_line(const char* format, ...) {
  const char* path = std::getenv("SGT_FAKE_CUBLAS_LOG");
  if (!path) return;
  std::lock_guard lock(g_mutex);
  FILE* f = std::fopen(path, "a");
  if (!f) return;
  va_list args;
  va_start(args, format);
  std::vfprintf(f, format, args);
  va_end(args);
  std::fputc('\n', f);
  std::fclose(f);
}

int handle_id(cublasHandle_t h) {
  return h ? reinterpret_cast<Handle*>(h)->id : 0;
}

// A scalar as the call passes it: its value (exactly, in hex) from host memory, or the pointer.
std::string scalar(cublasHandle_t h, const void* p, int bytes) {
  char buf[64];
  if (!p) return "null";
  if (h && reinterpret_cast<Handle*>(h)->pointer_mode == CUBLAS_POINTER_MODE_DEVICE) {
    std::snprintf(buf, sizeof buf, "dev:%p", p);
  } else if (bytes == 4) {
    float v;
    std::memcpy(&v, p, 4);
    std::snprintf(buf, sizeof buf, "%a", static_cast<double>(v));
  } else if (bytes == 8) {
    double v;
    std::memcpy(&v, p, 8);
    std::snprintf(buf, sizeof buf, "%a", v);
  } else {
    std::uint16_t v;
    std::memcpy(&v, p, 2);
    std::snprintf(buf, sizeof buf, "h%04x", v);
  }
  return buf;
}

int scalar_bytes(cublasComputeType_t c) {
  switch (c) {
    case CUBLAS_COMPUTE_16F:
    case CUBLAS_COMPUTE_16F_PEDANTIC:
      return 2;
    case CUBLAS_COMPUTE_64F:
    case CUBLAS_COMPUTE_64F_PEDANTIC:
      return 8;
    default:
      return 4;
  }
}

// cuBLAS's own argument checks, as far as the tests need them: negative sizes and unknown
// operations are refused, like the real library does.
cublasStatus_t check(cublasHandle_t h, int transa, int transb, std::int64_t m, std::int64_t n,
                     std::int64_t k, std::int64_t batch = 1) {
  if (!h) return CUBLAS_STATUS_NOT_INITIALIZED;
  if (transa < 0 || transa > 2 || transb < 0 || transb > 2) return CUBLAS_STATUS_INVALID_VALUE;
  if (m < 0 || n < 0 || k < 0 || batch < 0) return CUBLAS_STATUS_INVALID_VALUE;
  return CUBLAS_STATUS_SUCCESS;
}

// cuBLASLt's descriptors, kept in the caller-visible opaque storage.
struct Desc {
  std::int32_t compute, scale, pointer_mode = 0, transa = 0, transb = 0, transc = 0;
  std::uint32_t epilogue = CUBLASLT_EPILOGUE_DEFAULT;
};
struct Layout {
  std::uint32_t type;
  std::int32_t order = CUBLASLT_ORDER_COL;
  std::uint64_t rows, cols;
  std::int64_t ld;
  std::int32_t batch = 1;
  std::uint32_t batch_mode = 0;
  std::int64_t stride = 0;
};
static_assert(sizeof(Desc) <= sizeof(cublasLtMatmulDescOpaque_t));
static_assert(sizeof(Layout) <= sizeof(cublasLtMatrixLayoutOpaque_t));

template <typename T, typename O>
T load(const O* o) {
  T t;
  std::memcpy(&t, o->data, sizeof t);
  return t;
}
template <typename T, typename O>
void store(O* o, const T& t) {
  std::memcpy(o->data, &t, sizeof t);
}

// Copies an attribute's bytes in or out when the size is the attribute's.
template <typename V>
cublasStatus_t attr(V& field, void* out, const void* in, size_t size, size_t* written) {
  if (size != sizeof field) return CUBLAS_STATUS_INVALID_VALUE;
  if (in) std::memcpy(&field, in, size);
  if (out) std::memcpy(out, &field, size);
  if (written) *written = size;
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t desc_attr(cublasLtMatmulDesc_t d, int a, void* out, const void* in, size_t size,
                         size_t* written) {
  if (!d) return CUBLAS_STATUS_INVALID_VALUE;
  Desc v = load<Desc>(d);
  cublasStatus_t s = CUBLAS_STATUS_INVALID_VALUE;
  switch (a) {
    case CUBLASLT_MATMUL_DESC_COMPUTE_TYPE:
      s = attr(v.compute, out, in, size, written);
      break;
    case CUBLASLT_MATMUL_DESC_SCALE_TYPE:
      s = attr(v.scale, out, in, size, written);
      break;
    case CUBLASLT_MATMUL_DESC_POINTER_MODE:
      s = attr(v.pointer_mode, out, in, size, written);
      break;
    case CUBLASLT_MATMUL_DESC_TRANSA:
      s = attr(v.transa, out, in, size, written);
      break;
    case CUBLASLT_MATMUL_DESC_TRANSB:
      s = attr(v.transb, out, in, size, written);
      break;
    case CUBLASLT_MATMUL_DESC_TRANSC:
      s = attr(v.transc, out, in, size, written);
      break;
    case CUBLASLT_MATMUL_DESC_EPILOGUE:
      s = attr(v.epilogue, out, in, size, written);
      break;
  }
  if (in && s == CUBLAS_STATUS_SUCCESS) store(d, v);
  return s;
}

cublasStatus_t layout_attr(cublasLtMatrixLayout_t l, int a, void* out, const void* in, size_t size,
                           size_t* written) {
  if (!l) return CUBLAS_STATUS_INVALID_VALUE;
  Layout v = load<Layout>(l);
  cublasStatus_t s = CUBLAS_STATUS_INVALID_VALUE;
  switch (a) {
    case CUBLASLT_MATRIX_LAYOUT_TYPE:
      s = attr(v.type, out, in, size, written);
      break;
    case CUBLASLT_MATRIX_LAYOUT_ORDER:
      s = attr(v.order, out, in, size, written);
      break;
    case CUBLASLT_MATRIX_LAYOUT_ROWS:
      s = attr(v.rows, out, in, size, written);
      break;
    case CUBLASLT_MATRIX_LAYOUT_COLS:
      s = attr(v.cols, out, in, size, written);
      break;
    case CUBLASLT_MATRIX_LAYOUT_LD:
      s = attr(v.ld, out, in, size, written);
      break;
    case CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT:
      s = attr(v.batch, out, in, size, written);
      break;
    case CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET:
      s = attr(v.stride, out, in, size, written);
      break;
    case 8:  // CUBLASLT_MATRIX_LAYOUT_BATCH_MODE (CUDA 13)
      s = attr(v.batch_mode, out, in, size, written);
      break;
  }
  if (in && s == CUBLAS_STATUS_SUCCESS) store(l, v);
  return s;
}

std::string describe(cublasLtMatrixLayout_t l) {
  if (!l) return "null";
  const Layout v = load<Layout>(l);
  char buf[160];
  std::snprintf(buf, sizeof buf,
                "[t%u o%d %" PRIu64 "x%" PRIu64 " ld%" PRId64 " b%d m%u s%" PRId64 "]", v.type,
                v.order, v.rows, v.cols, v.ld, v.batch, v.batch_mode, v.stride);
  return buf;
}

}  // namespace

extern "C" {

cublasStatus_t CUBLASWINAPI cublasCreate_v2(cublasHandle_t* handle) {
  std::lock_guard lock(g_mutex);
  *handle = reinterpret_cast<cublasHandle_t>(new Handle{g_next_handle++});
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t CUBLASWINAPI cublasDestroy_v2(cublasHandle_t handle) {
  delete reinterpret_cast<Handle*>(handle);
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t CUBLASWINAPI cublasSetMathMode(cublasHandle_t handle, cublasMath_t mode) {
  reinterpret_cast<Handle*>(handle)->math = mode;
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t CUBLASWINAPI cublasGetMathMode(cublasHandle_t handle, cublasMath_t* mode) {
  *mode = reinterpret_cast<Handle*>(handle)->math;
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t CUBLASWINAPI cublasSetPointerMode_v2(cublasHandle_t handle,
                                                    cublasPointerMode_t mode) {
  reinterpret_cast<Handle*>(handle)->pointer_mode = mode;
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t CUBLASWINAPI cublasGetPointerMode_v2(cublasHandle_t handle,
                                                    cublasPointerMode_t* mode) {
  *mode = reinterpret_cast<Handle*>(handle)->pointer_mode;
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t CUBLASWINAPI cublasSetStream_v2(cublasHandle_t handle, cudaStream_t stream) {
  reinterpret_cast<Handle*>(handle)->stream = stream;
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t CUBLASWINAPI cublasGetStream_v2(cublasHandle_t handle, cudaStream_t* stream) {
  *stream = reinterpret_cast<Handle*>(handle)->stream;
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t CUBLASWINAPI cublasSgemm_v2(cublasHandle_t handle, cublasOperation_t transa,
                                           cublasOperation_t transb, int m, int n, int k,
                                           const float* alpha, const float* A, int lda,
                                           const float* B, int ldb, const float* beta, float* C,
                                           int ldc) {
  log_line("cublasSgemm_v2 h%d %d %d %d %d %d alpha=%s %p %d %p %d beta=%s %p %d",
           handle_id(handle), transa, transb, m, n, k, scalar(handle, alpha, 4).c_str(), A, lda, B,
           ldb, scalar(handle, beta, 4).c_str(), C, ldc);
  return check(handle, transa, transb, m, n, k);
}

cublasStatus_t CUBLASWINAPI cublasSgemm_v2_64(cublasHandle_t handle, cublasOperation_t transa,
                                              cublasOperation_t transb, int64_t m, int64_t n,
                                              int64_t k, const float* alpha, const float* A,
                                              int64_t lda, const float* B, int64_t ldb,
                                              const float* beta, float* C, int64_t ldc) {
  log_line("cublasSgemm_v2_64 h%d %d %d %" PRId64 " %" PRId64 " %" PRId64 " alpha=%s %p %" PRId64
           " %p %" PRId64 " beta=%s %p %" PRId64,
           handle_id(handle), transa, transb, m, n, k, scalar(handle, alpha, 4).c_str(), A, lda, B,
           ldb, scalar(handle, beta, 4).c_str(), C, ldc);
  return check(handle, transa, transb, m, n, k);
}

cublasStatus_t CUBLASWINAPI cublasSgemmEx(cublasHandle_t handle, cublasOperation_t transa,
                                          cublasOperation_t transb, int m, int n, int k,
                                          const float* alpha, const void* A, cudaDataType Atype,
                                          int lda, const void* B, cudaDataType Btype, int ldb,
                                          const float* beta, void* C, cudaDataType Ctype, int ldc) {
  log_line("cublasSgemmEx h%d %d %d %d %d %d alpha=%s %p t%d %d %p t%d %d beta=%s %p t%d %d",
           handle_id(handle), transa, transb, m, n, k, scalar(handle, alpha, 4).c_str(), A, Atype,
           lda, B, Btype, ldb, scalar(handle, beta, 4).c_str(), C, Ctype, ldc);
  return check(handle, transa, transb, m, n, k);
}

cublasStatus_t CUBLASWINAPI cublasSgemmEx_64(cublasHandle_t handle, cublasOperation_t transa,
                                             cublasOperation_t transb, int64_t m, int64_t n,
                                             int64_t k, const float* alpha, const void* A,
                                             cudaDataType Atype, int64_t lda, const void* B,
                                             cudaDataType Btype, int64_t ldb, const float* beta,
                                             void* C, cudaDataType Ctype, int64_t ldc) {
  log_line("cublasSgemmEx_64 h%d %d %d %" PRId64 " %" PRId64 " %" PRId64 " alpha=%s %p t%d %" PRId64
           " %p t%d %" PRId64 " beta=%s %p t%d %" PRId64,
           handle_id(handle), transa, transb, m, n, k, scalar(handle, alpha, 4).c_str(), A, Atype,
           lda, B, Btype, ldb, scalar(handle, beta, 4).c_str(), C, Ctype, ldc);
  return check(handle, transa, transb, m, n, k);
}

cublasStatus_t CUBLASWINAPI cublasGemmEx(cublasHandle_t handle, cublasOperation_t transa,
                                         cublasOperation_t transb, int m, int n, int k,
                                         const void* alpha, const void* A, cudaDataType Atype,
                                         int lda, const void* B, cudaDataType Btype, int ldb,
                                         const void* beta, void* C, cudaDataType Ctype, int ldc,
                                         cublasComputeType_t computeType, cublasGemmAlgo_t algo) {
  const int bytes = scalar_bytes(computeType);
  log_line("cublasGemmEx h%d %d %d %d %d %d alpha=%s %p t%d %d %p t%d %d beta=%s %p t%d %d c%d a%d",
           handle_id(handle), transa, transb, m, n, k, scalar(handle, alpha, bytes).c_str(), A,
           Atype, lda, B, Btype, ldb, scalar(handle, beta, bytes).c_str(), C, Ctype, ldc,
           computeType, algo);
  return check(handle, transa, transb, m, n, k);
}

cublasStatus_t CUBLASWINAPI cublasGemmEx_64(
    cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb, int64_t m, int64_t n,
    int64_t k, const void* alpha, const void* A, cudaDataType Atype, int64_t lda, const void* B,
    cudaDataType Btype, int64_t ldb, const void* beta, void* C, cudaDataType Ctype, int64_t ldc,
    cublasComputeType_t computeType, cublasGemmAlgo_t algo) {
  const int bytes = scalar_bytes(computeType);
  log_line("cublasGemmEx_64 h%d %d %d %" PRId64 " %" PRId64 " %" PRId64 " alpha=%s %p t%d %" PRId64
           " %p t%d %" PRId64 " beta=%s %p t%d %" PRId64 " c%d a%d",
           handle_id(handle), transa, transb, m, n, k, scalar(handle, alpha, bytes).c_str(), A,
           Atype, lda, B, Btype, ldb, scalar(handle, beta, bytes).c_str(), C, Ctype, ldc,
           computeType, algo);
  return check(handle, transa, transb, m, n, k);
}

cublasStatus_t CUBLASWINAPI cublasSgemmBatched(cublasHandle_t handle, cublasOperation_t transa,
                                               cublasOperation_t transb, int m, int n, int k,
                                               const float* alpha, const float* const Aarray[],
                                               int lda, const float* const Barray[], int ldb,
                                               const float* beta, float* const Carray[], int ldc,
                                               int batchCount) {
  log_line("cublasSgemmBatched h%d %d %d %d %d %d alpha=%s %p %d %p %d beta=%s %p %d b%d",
           handle_id(handle), transa, transb, m, n, k, scalar(handle, alpha, 4).c_str(),
           static_cast<const void*>(Aarray), lda, static_cast<const void*>(Barray), ldb,
           scalar(handle, beta, 4).c_str(), static_cast<const void*>(Carray), ldc, batchCount);
  return check(handle, transa, transb, m, n, k, batchCount);
}

cublasStatus_t CUBLASWINAPI cublasSgemmBatched_64(cublasHandle_t handle, cublasOperation_t transa,
                                                  cublasOperation_t transb, int64_t m, int64_t n,
                                                  int64_t k, const float* alpha,
                                                  const float* const Aarray[], int64_t lda,
                                                  const float* const Barray[], int64_t ldb,
                                                  const float* beta, float* const Carray[],
                                                  int64_t ldc, int64_t batchCount) {
  log_line("cublasSgemmBatched_64 h%d %d %d %" PRId64 " %" PRId64 " %" PRId64
           " alpha=%s %p %" PRId64 " %p %" PRId64 " beta=%s %p %" PRId64 " b%" PRId64,
           handle_id(handle), transa, transb, m, n, k, scalar(handle, alpha, 4).c_str(),
           static_cast<const void*>(Aarray), lda, static_cast<const void*>(Barray), ldb,
           scalar(handle, beta, 4).c_str(), static_cast<const void*>(Carray), ldc, batchCount);
  return check(handle, transa, transb, m, n, k, batchCount);
}

cublasStatus_t CUBLASWINAPI cublasSgemmStridedBatched(
    cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb, int m, int n, int k,
    const float* alpha, const float* A, int lda, long long int strideA, const float* B, int ldb,
    long long int strideB, const float* beta, float* C, int ldc, long long int strideC,
    int batchCount) {
  log_line(
      "cublasSgemmStridedBatched h%d %d %d %d %d %d alpha=%s %p %d %lld %p %d %lld beta=%s "
      "%p %d %lld b%d",
      handle_id(handle), transa, transb, m, n, k, scalar(handle, alpha, 4).c_str(), A, lda, strideA,
      B, ldb, strideB, scalar(handle, beta, 4).c_str(), C, ldc, strideC, batchCount);
  return check(handle, transa, transb, m, n, k, batchCount);
}

cublasStatus_t CUBLASWINAPI cublasSgemmStridedBatched_64(
    cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb, int64_t m, int64_t n,
    int64_t k, const float* alpha, const float* A, int64_t lda, long long int strideA,
    const float* B, int64_t ldb, long long int strideB, const float* beta, float* C, int64_t ldc,
    long long int strideC, int64_t batchCount) {
  log_line("cublasSgemmStridedBatched_64 h%d %d %d %" PRId64 " %" PRId64 " %" PRId64
           " alpha=%s %p %" PRId64 " %lld %p %" PRId64 " %lld beta=%s %p %" PRId64
           " %lld b%" PRId64,
           handle_id(handle), transa, transb, m, n, k, scalar(handle, alpha, 4).c_str(), A, lda,
           strideA, B, ldb, strideB, scalar(handle, beta, 4).c_str(), C, ldc, strideC, batchCount);
  return check(handle, transa, transb, m, n, k, batchCount);
}

cublasStatus_t CUBLASWINAPI
cublasGemmBatchedEx(cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb,
                    int m, int n, int k, const void* alpha, const void* const Aarray[],
                    cudaDataType Atype, int lda, const void* const Barray[], cudaDataType Btype,
                    int ldb, const void* beta, void* const Carray[], cudaDataType Ctype, int ldc,
                    int batchCount, cublasComputeType_t computeType, cublasGemmAlgo_t algo) {
  const int bytes = scalar_bytes(computeType);
  log_line(
      "cublasGemmBatchedEx h%d %d %d %d %d %d alpha=%s %p t%d %d %p t%d %d beta=%s %p t%d "
      "%d b%d c%d a%d",
      handle_id(handle), transa, transb, m, n, k, scalar(handle, alpha, bytes).c_str(),
      static_cast<const void*>(Aarray), Atype, lda, static_cast<const void*>(Barray), Btype, ldb,
      scalar(handle, beta, bytes).c_str(), static_cast<const void*>(Carray), Ctype, ldc, batchCount,
      computeType, algo);
  return check(handle, transa, transb, m, n, k, batchCount);
}

cublasStatus_t CUBLASWINAPI cublasGemmBatchedEx_64(
    cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb, int64_t m, int64_t n,
    int64_t k, const void* alpha, const void* const Aarray[], cudaDataType Atype, int64_t lda,
    const void* const Barray[], cudaDataType Btype, int64_t ldb, const void* beta,
    void* const Carray[], cudaDataType Ctype, int64_t ldc, int64_t batchCount,
    cublasComputeType_t computeType, cublasGemmAlgo_t algo) {
  const int bytes = scalar_bytes(computeType);
  log_line("cublasGemmBatchedEx_64 h%d %d %d %" PRId64 " %" PRId64 " %" PRId64
           " alpha=%s %p t%d %" PRId64 " %p t%d %" PRId64 " beta=%s %p t%d %" PRId64 " b%" PRId64
           " c%d a%d",
           handle_id(handle), transa, transb, m, n, k, scalar(handle, alpha, bytes).c_str(),
           static_cast<const void*>(Aarray), Atype, lda, static_cast<const void*>(Barray), Btype,
           ldb, scalar(handle, beta, bytes).c_str(), static_cast<const void*>(Carray), Ctype, ldc,
           batchCount, computeType, algo);
  return check(handle, transa, transb, m, n, k, batchCount);
}

cublasStatus_t CUBLASWINAPI cublasGemmStridedBatchedEx(
    cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb, int m, int n, int k,
    const void* alpha, const void* A, cudaDataType Atype, int lda, long long int strideA,
    const void* B, cudaDataType Btype, int ldb, long long int strideB, const void* beta, void* C,
    cudaDataType Ctype, int ldc, long long int strideC, int batchCount,
    cublasComputeType_t computeType, cublasGemmAlgo_t algo) {
  const int bytes = scalar_bytes(computeType);
  log_line(
      "cublasGemmStridedBatchedEx h%d %d %d %d %d %d alpha=%s %p t%d %d %lld %p t%d %d %lld "
      "beta=%s %p t%d %d %lld b%d c%d a%d",
      handle_id(handle), transa, transb, m, n, k, scalar(handle, alpha, bytes).c_str(), A, Atype,
      lda, strideA, B, Btype, ldb, strideB, scalar(handle, beta, bytes).c_str(), C, Ctype, ldc,
      strideC, batchCount, computeType, algo);
  return check(handle, transa, transb, m, n, k, batchCount);
}

cublasStatus_t CUBLASWINAPI cublasGemmStridedBatchedEx_64(
    cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb, int64_t m, int64_t n,
    int64_t k, const void* alpha, const void* A, cudaDataType Atype, int64_t lda,
    long long int strideA, const void* B, cudaDataType Btype, int64_t ldb, long long int strideB,
    const void* beta, void* C, cudaDataType Ctype, int64_t ldc, long long int strideC,
    int64_t batchCount, cublasComputeType_t computeType, cublasGemmAlgo_t algo) {
  const int bytes = scalar_bytes(computeType);
  log_line("cublasGemmStridedBatchedEx_64 h%d %d %d %" PRId64 " %" PRId64 " %" PRId64
           " alpha=%s %p t%d %" PRId64 " %lld %p t%d %" PRId64 " %lld beta=%s %p t%d %" PRId64
           " %lld b%" PRId64 " c%d a%d",
           handle_id(handle), transa, transb, m, n, k, scalar(handle, alpha, bytes).c_str(), A,
           Atype, lda, strideA, B, Btype, ldb, strideB, scalar(handle, beta, bytes).c_str(), C,
           Ctype, ldc, strideC, batchCount, computeType, algo);
  return check(handle, transa, transb, m, n, k, batchCount);
}

cublasStatus_t CUBLASWINAPI cublasLtCreate(cublasLtHandle_t* lightHandle) {
  static int token;
  *lightHandle = reinterpret_cast<cublasLtHandle_t>(&token);
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t CUBLASWINAPI cublasLtDestroy(cublasLtHandle_t) {
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t CUBLASWINAPI cublasLtMatmulDescCreate(cublasLtMatmulDesc_t* matmulDesc,
                                                     cublasComputeType_t computeType,
                                                     cudaDataType_t scaleType) {
  auto* d = new (std::nothrow) cublasLtMatmulDescOpaque_t{};
  if (!d) return CUBLAS_STATUS_ALLOC_FAILED;
  Desc v{};
  v.compute = computeType;
  v.scale = scaleType;
  v.epilogue = CUBLASLT_EPILOGUE_DEFAULT;
  store(d, v);
  *matmulDesc = d;
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t CUBLASWINAPI cublasLtMatmulDescDestroy(cublasLtMatmulDesc_t matmulDesc) {
  delete matmulDesc;
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t CUBLASWINAPI cublasLtMatmulDescSetAttribute(cublasLtMatmulDesc_t matmulDesc,
                                                           cublasLtMatmulDescAttributes_t attr,
                                                           const void* buf, size_t sizeInBytes) {
  if (!buf) return CUBLAS_STATUS_INVALID_VALUE;
  return desc_attr(matmulDesc, attr, nullptr, buf, sizeInBytes, nullptr);
}

cublasStatus_t CUBLASWINAPI cublasLtMatmulDescGetAttribute(cublasLtMatmulDesc_t matmulDesc,
                                                           cublasLtMatmulDescAttributes_t attr,
                                                           void* buf, size_t sizeInBytes,
                                                           size_t* sizeWritten) {
  if (!buf) return CUBLAS_STATUS_INVALID_VALUE;
  return desc_attr(matmulDesc, attr, buf, nullptr, sizeInBytes, sizeWritten);
}

cublasStatus_t CUBLASWINAPI cublasLtMatrixLayoutCreate(cublasLtMatrixLayout_t* matLayout,
                                                       cudaDataType type, uint64_t rows,
                                                       uint64_t cols, int64_t ld) {
  auto* l = new (std::nothrow) cublasLtMatrixLayoutOpaque_t{};
  if (!l) return CUBLAS_STATUS_ALLOC_FAILED;
  Layout v{};
  v.type = static_cast<std::uint32_t>(type);
  v.order = CUBLASLT_ORDER_COL;
  v.rows = rows;
  v.cols = cols;
  v.ld = ld;
  v.batch = 1;
  store(l, v);
  *matLayout = l;
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t CUBLASWINAPI cublasLtMatrixLayoutDestroy(cublasLtMatrixLayout_t matLayout) {
  delete matLayout;
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t CUBLASWINAPI cublasLtMatrixLayoutSetAttribute(cublasLtMatrixLayout_t matLayout,
                                                             cublasLtMatrixLayoutAttribute_t attr,
                                                             const void* buf, size_t sizeInBytes) {
  if (!buf) return CUBLAS_STATUS_INVALID_VALUE;
  return layout_attr(matLayout, attr, nullptr, buf, sizeInBytes, nullptr);
}

cublasStatus_t CUBLASWINAPI cublasLtMatrixLayoutGetAttribute(cublasLtMatrixLayout_t matLayout,
                                                             cublasLtMatrixLayoutAttribute_t attr,
                                                             void* buf, size_t sizeInBytes,
                                                             size_t* sizeWritten) {
  if (!buf) return CUBLAS_STATUS_INVALID_VALUE;
  return layout_attr(matLayout, attr, buf, nullptr, sizeInBytes, sizeWritten);
}

cublasStatus_t CUBLASWINAPI cublasLtMatmul(
    cublasLtHandle_t lightHandle, cublasLtMatmulDesc_t computeDesc, const void* alpha,
    const void* A, cublasLtMatrixLayout_t Adesc, const void* B, cublasLtMatrixLayout_t Bdesc,
    const void* beta, const void* C, cublasLtMatrixLayout_t Cdesc, void* D,
    cublasLtMatrixLayout_t Ddesc, const cublasLtMatmulAlgo_t* algo, void* workspace,
    size_t workspaceSizeInBytes, cudaStream_t stream) {
  if (!lightHandle || !computeDesc || !Adesc || !Bdesc || !Cdesc || !Ddesc) {
    return CUBLAS_STATUS_INVALID_VALUE;
  }
  const Desc d = load<Desc>(computeDesc);
  const int bytes = d.scale == CUDA_R_64F ? 8 : d.scale == CUDA_R_16F ? 2 : 4;
  // A device-pointer mode has the fake print pointers; the handle-less cuBLASLt passes nullptr.
  auto lt_scalar = [&](const void* p) {
    if (d.pointer_mode != CUBLASLT_POINTER_MODE_HOST &&
        !(p == beta && d.pointer_mode == CUBLASLT_POINTER_MODE_ALPHA_DEVICE_VECTOR_BETA_HOST)) {
      char buf[32];
      std::snprintf(buf, sizeof buf, "dev:%p", p);
      return std::string(buf);
    }
    return scalar(nullptr, p, bytes);
  };
  log_line(
      "cublasLtMatmul c%d s%d p%d ta%d tb%d e%u alpha=%s %p %s %p %s beta=%s %p %s %p %s "
      "algo=%p ws=%p %zu stream=%p",
      d.compute, d.scale, d.pointer_mode, d.transa, d.transb, d.epilogue, lt_scalar(alpha).c_str(),
      A, describe(Adesc).c_str(), B, describe(Bdesc).c_str(), lt_scalar(beta).c_str(), C,
      describe(Cdesc).c_str(), D, describe(Ddesc).c_str(), static_cast<const void*>(algo),
      workspace, workspaceSizeInBytes, static_cast<void*>(stream));
  const Layout a = load<Layout>(Adesc), dl = load<Layout>(Ddesc);
  if (d.transa < 0 || d.transa > 2 || d.transb < 0 || d.transb > 2 || a.batch < 0 || dl.batch < 0) {
    return CUBLAS_STATUS_INVALID_VALUE;
  }
  return CUBLAS_STATUS_SUCCESS;
}

}  // extern "C"
