// The application of the preload tests: cuBLAS and cuBLASLt calls of every kind the capture tells
// apart, made against the stand-in cuBLAS (no GPU, pointers are never dereferenced). It prints
// each call's status; under LD_PRELOAD=libsgemm_tune_preload.so neither the statuses nor the
// stand-in's log of the arguments may change.
// Usage: capture_app mixed | serve | threads THREADS CALLS | fork | exit-early CALLS
#include <cublasLt.h>
#include <cublas_v2.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

namespace {

// Fixed stand-ins for device memory: the same in every run, so the stand-in's logs compare.
template <typename T = float>
T* dev(std::uintptr_t address) {
  return reinterpret_cast<T*>(address);
}

void status(const char* what, cublasStatus_t s) {
  std::printf("%s %d\n", what, static_cast<int>(s));
}

cublasHandle_t handle() {
  cublasHandle_t h = nullptr;
  if (cublasCreate(&h) != CUBLAS_STATUS_SUCCESS) {
    std::fprintf(stderr, "cublasCreate failed\n");
    std::exit(3);
  }
  return h;
}

void sgemm(cublasHandle_t h, cublasOperation_t ta, cublasOperation_t tb, int m, int n, int k,
           int lda, int ldb, int ldc, float alpha = 1.0f, float beta = 0.0f) {
  status("sgemm", cublasSgemm(h, ta, tb, m, n, k, &alpha, dev(0x1000), lda, dev(0x2000), ldb, &beta,
                              dev(0x3000), ldc));
}

cublasLtMatrixLayout_t layout(cudaDataType type, std::uint64_t rows, std::uint64_t cols,
                              std::int64_t ld, cublasLtOrder_t order = CUBLASLT_ORDER_COL) {
  cublasLtMatrixLayout_t l = nullptr;
  cublasLtMatrixLayoutCreate(&l, type, rows, cols, ld);
  const std::int32_t o = order;
  cublasLtMatrixLayoutSetAttribute(l, CUBLASLT_MATRIX_LAYOUT_ORDER, &o, sizeof o);
  return l;
}

struct LtCall {
  cublasComputeType_t compute = CUBLAS_COMPUTE_32F;
  cublasOperation_t ta = CUBLAS_OP_N, tb = CUBLAS_OP_N;
  std::uint32_t epilogue = CUBLASLT_EPILOGUE_DEFAULT;
  cublasLtOrder_t oa = CUBLASLT_ORDER_COL, ob = CUBLASLT_ORDER_COL, oc = CUBLASLT_ORDER_COL;
  std::uint64_t m, n, k;
  std::int64_t lda, ldb, ldc, ldd = 0;
  float alpha = 1, beta = 0;
  bool in_place = true;
};

// D (m x n) = op(A) op(B) through cuBLASLt, every matrix described as stored (before op).
void lt_matmul(cublasLtHandle_t lt, const LtCall& c) {
  cublasLtMatmulDesc_t desc = nullptr;
  cublasLtMatmulDescCreate(&desc, c.compute, CUDA_R_32F);
  const std::int32_t ta = c.ta, tb = c.tb;
  cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_TRANSA, &ta, sizeof ta);
  cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_TRANSB, &tb, sizeof tb);
  cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_EPILOGUE, &c.epilogue,
                                 sizeof c.epilogue);
  const bool na = c.ta == CUBLAS_OP_N, nb = c.tb == CUBLAS_OP_N;
  auto a = layout(CUDA_R_32F, na ? c.m : c.k, na ? c.k : c.m, c.lda, c.oa);
  auto b = layout(CUDA_R_32F, nb ? c.k : c.n, nb ? c.n : c.k, c.ldb, c.ob);
  auto cl = layout(CUDA_R_32F, c.m, c.n, c.ldc, c.oc);
  auto dl = layout(CUDA_R_32F, c.m, c.n, c.ldd ? c.ldd : c.ldc, c.oc);
  status("lt", cublasLtMatmul(lt, desc, &c.alpha, dev(0x1000), a, dev(0x2000), b, &c.beta,
                              dev(0x3000), cl, c.in_place ? dev(0x3000) : dev(0x4000), dl, nullptr,
                              dev<void>(0x9000), 1 << 20, nullptr));
  cublasLtMatrixLayoutDestroy(a);
  cublasLtMatrixLayoutDestroy(b);
  cublasLtMatrixLayoutDestroy(cl);
  cublasLtMatrixLayoutDestroy(dl);
  cublasLtMatmulDescDestroy(desc);
}

void mixed() {
  cublasHandle_t h = handle();
  const float one = 1, zero = 0, two = 2;
  // Plain SGEMMs in each op combination, repeated to be counted.
  for (int i = 0; i < 3; ++i) sgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, 64, 32, 16, 64, 16, 64);
  for (int i = 0; i < 2; ++i) sgemm(h, CUBLAS_OP_T, CUBLAS_OP_N, 100, 50, 30, 40, 30, 128, 2, 1);
  sgemm(h, CUBLAS_OP_C, CUBLAS_OP_N, 8, 8, 8, 8, 8, 8, 1, 0.5f);  // OP_C is OP_T for real data
  status("sgemm64", cublasSgemm_v2_64(h, CUBLAS_OP_N, CUBLAS_OP_T, 5, 6, 7, &one, dev(0x1000), 5,
                                      dev(0x2000), 6, &zero, dev(0x3000), 5));
  // GemmEx: plain FP32, FP16 inputs, TF32 allowed by the compute type.
  status("gemmex", cublasGemmEx(h, CUBLAS_OP_N, CUBLAS_OP_N, 128, 256, 64, &one, dev(0x1000),
                                CUDA_R_32F, 128, dev(0x2000), CUDA_R_32F, 64, &zero, dev(0x3000),
                                CUDA_R_32F, 128, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
  status("gemmex_f16",
         cublasGemmEx(h, CUBLAS_OP_N, CUBLAS_OP_N, 128, 256, 64, &one, dev(0x1000), CUDA_R_16F, 128,
                      dev(0x2000), CUDA_R_16F, 64, &zero, dev(0x3000), CUDA_R_32F, 128,
                      CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
  status("gemmex_tf32",
         cublasGemmEx(h, CUBLAS_OP_T, CUBLAS_OP_T, 96, 96, 96, &one, dev(0x1000), CUDA_R_32F, 96,
                      dev(0x2000), CUDA_R_32F, 96, &zero, dev(0x3000), CUDA_R_32F, 96,
                      CUBLAS_COMPUTE_32F_FAST_TF32, CUBLAS_GEMM_DEFAULT));
  status("gemmex64",
         cublasGemmEx_64(h, CUBLAS_OP_N, CUBLAS_OP_N, 33, 44, 55, &one, dev(0x1000), CUDA_R_32F, 33,
                         dev(0x2000), CUDA_R_32F, 55, &zero, dev(0x3000), CUDA_R_32F, 33,
                         CUBLAS_COMPUTE_32F_PEDANTIC, CUBLAS_GEMM_DEFAULT));
  status("sgemmex",
         cublasSgemmEx(h, CUBLAS_OP_N, CUBLAS_OP_T, 40, 30, 20, &one, dev(0x1000), CUDA_R_32F, 40,
                       dev(0x2000), CUDA_R_32F, 30, &two, dev(0x3000), CUDA_R_32F, 40));
  // The handle's math mode allows TF32: the same SGEMM is another problem, not served later.
  cublasSetMathMode(h, CUBLAS_TF32_TENSOR_OP_MATH);
  sgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, 64, 32, 16, 64, 16, 64);
  cublasSetMathMode(h, CUBLAS_DEFAULT_MATH);
  // alpha and beta on the device: their values are not read.
  cublasSetPointerMode(h, CUBLAS_POINTER_MODE_DEVICE);
  status("sgemm_dev", cublasSgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, 16, 16, 16, dev(0x5000), dev(0x1000),
                                  16, dev(0x2000), 16, dev(0x5004), dev(0x3000), 16));
  cublasSetPointerMode(h, CUBLAS_POINTER_MODE_HOST);
  sgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, 20, 20, 20, 20, 20, 20, 0, 1);  // alpha = 0
  sgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, -1, 4, 4, 4, 4, 4);             // refused: not recorded
  sgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, 4, 4, 0, 4, 4, 4);              // k = 0: nothing to record
  // Batched: recorded with their batch (sgemm-tune leaves them out); batch 1 is one GEMM.
  status("batched",
         cublasSgemmBatched(h, CUBLAS_OP_N, CUBLAS_OP_N, 32, 32, 32, &one,
                            dev<const float* const>(0x6000), 32, dev<const float* const>(0x7000),
                            32, &zero, dev<float* const>(0x8000), 32, 4));
  status("strided",
         cublasSgemmStridedBatched(h, CUBLAS_OP_T, CUBLAS_OP_N, 24, 24, 24, &one, dev(0x1000), 24,
                                   576, dev(0x2000), 24, 576, &zero, dev(0x3000), 24, 576, 3));
  status("strided_ex1", cublasGemmStridedBatchedEx(
                            h, CUBLAS_OP_N, CUBLAS_OP_N, 72, 80, 88, &one, dev(0x1000), CUDA_R_32F,
                            72, 0, dev(0x2000), CUDA_R_32F, 88, 0, &zero, dev(0x3000), CUDA_R_32F,
                            72, 0, 1, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));

  cublasLtHandle_t lt = nullptr;
  cublasLtCreate(&lt);
  LtCall c;
  c.m = 48, c.n = 40, c.k = 24, c.lda = 48, c.ldb = 24, c.ldc = 48;
  lt_matmul(lt, c);  // column-major NN: 40x48x24 NN
  LtCall r;
  r.tb = CUBLAS_OP_T;
  r.oa = r.ob = r.oc = CUBLASLT_ORDER_ROW;
  r.m = 10, r.n = 20, r.k = 30, r.lda = 30, r.ldb = 30, r.ldc = 20;
  lt_matmul(lt, r);  // row-major D: 10x20x30 NT
  LtCall t = c;
  t.compute = CUBLAS_COMPUTE_32F_FAST_TF32;
  lt_matmul(lt, t);
  LtCall e = c;
  e.epilogue = CUBLASLT_EPILOGUE_BIAS;
  lt_matmul(lt, e);
  LtCall o = c;
  o.in_place = false, o.ldd = 64, o.beta = 1;
  lt_matmul(lt, o);  // C and D differ in leading dimension
  LtCall x = c;
  x.ob = CUBLASLT_ORDER_ROW, x.ldb = 40;
  lt_matmul(lt, x);  // B row-major in a column-major call
  cublasLtDestroy(lt);
  cublasDestroy(h);
}

// What serve mode must tell apart beyond `mixed`: the handle's stream, an operand whose rows are
// not 16-byte aligned, and cuBLASLt writing D apart from C (served only when beta = 0).
void serve_extra() {
  cublasHandle_t h = handle();
  cublasSetStream(h, reinterpret_cast<cudaStream_t>(0x5150));
  sgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, 64, 32, 16, 64, 16, 64, 3, 0.5f);
  const float one = 1, zero = 0;
  status("sgemm_b4", cublasSgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, 64, 32, 16, &one, dev(0x1000), 64,
                                 dev(0x2004), 16, &zero, dev(0x3000), 64));
  cublasDestroy(h);
  cublasLtHandle_t lt = nullptr;
  cublasLtCreate(&lt);
  LtCall c;
  c.m = 48, c.n = 40, c.k = 24, c.lda = 48, c.ldb = 24, c.ldc = 48;
  c.in_place = false;
  lt_matmul(lt, c);  // D apart from C, beta = 0: C is not read
  c.beta = 1;
  lt_matmul(lt, c);  // beta = 1: C is read, D written
  cublasLtDestroy(lt);
}

void threads(int n, int calls) {
  std::vector<std::thread> pool;
  for (int t = 0; t < n; ++t) {
    pool.emplace_back([t, calls] {
      cublasHandle_t h = handle();
      const float one = 1, zero = 0;
      for (int i = 0; i < calls; ++i) {
        // Two problems per thread, two threads per problem: shared and separate entries.
        const int m = 16 * (1 + (t / 2) + (i % 2) * 8);
        cublasSgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, m, 16, 16, &one, dev(0x1000), m, dev(0x2000), 16,
                    &zero, dev(0x3000), m);
      }
      cublasDestroy(h);
    });
  }
  for (auto& th : pool) th.join();
  std::printf("threads done\n");
}

void fork_calls() {
  cublasHandle_t h = handle();
  for (int i = 0; i < 5; ++i) sgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, 11, 11, 11, 11, 11, 11);
  std::fflush(stdout);
  const pid_t child = fork();
  if (child == 0) {
    for (int i = 0; i < 3; ++i) sgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, 22, 22, 22, 22, 22, 22);
    std::fflush(stdout);
    std::exit(0);  // atexit handlers run: the child writes its own calls
  }
  int st = 0;
  waitpid(child, &st, 0);
  for (int i = 0; i < 2; ++i) sgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, 11, 11, 11, 11, 11, 11);
  cublasDestroy(h);
}

}  // namespace

int main(int argc, char** argv) {
  const std::string what = argc > 1 ? argv[1] : "";
  if (what == "mixed") {
    mixed();
  } else if (what == "serve") {
    serve_extra();
  } else if (what == "threads" && argc == 4) {
    threads(std::atoi(argv[2]), std::atoi(argv[3]));
  } else if (what == "fork") {
    fork_calls();
  } else if (what == "exit-early" && argc == 3) {
    cublasHandle_t h = handle();
    for (int i = 0; i < std::atoi(argv[2]); ++i) {
      sgemm(h, CUBLAS_OP_N, CUBLAS_OP_T, 128, 64, 32, 128, 64, 128);
    }
    std::fflush(stdout);
    _exit(0);  // no atexit handlers: only the periodic writes saved anything
  } else {
    std::fprintf(stderr,
                 "usage: capture_app mixed | serve | threads N CALLS | fork | exit-early CALLS\n");
    return 2;
  }
  return 0;
}
