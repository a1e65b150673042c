// Example: sgemm_tuned::sgemm() on random inputs, checked against cuBLAS (FP32, pedantic math) and
// timed against it with CUDA events (median of 20). Exit 0: every shape matched; 1: a mismatch or
// a CUDA error; 2: no CUDA device. Arguments: shapes as MxNxK (default: a few).
#include <sgemm_tuned/sgemm_tuned.hpp>

#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <vector>

namespace {

#define CHECK_CUDA(call)                                                        \
  do {                                                                          \
    const cudaError_t e_ = (call);                                              \
    if (e_ != cudaSuccess) {                                                    \
      std::fprintf(stderr, "%s:%d: %s failed: %s\n", __FILE__, __LINE__, #call, \
                   cudaGetErrorString(e_));                                     \
      std::exit(1);                                                             \
    }                                                                           \
  } while (0)

#define CHECK_CUBLAS(call)                                                      \
  do {                                                                          \
    const cublasStatus_t s_ = (call);                                           \
    if (s_ != CUBLAS_STATUS_SUCCESS) {                                          \
      std::fprintf(stderr, "%s:%d: %s failed: %s\n", __FILE__, __LINE__, #call, \
                   cublasGetStatusString(s_));                                  \
      std::exit(1);                                                             \
    }                                                                           \
  } while (0)

struct Shape {
  int M, N, K;
};

bool parse_shape(const char* s, Shape& out) {
  char tail = 0;
  return std::sscanf(s, "%dx%dx%d%c", &out.M, &out.N, &out.K, &tail) == 3 && out.M > 0 &&
         out.N > 0 && out.K > 0;
}

// Median of 20 timed runs after one warm-up, by CUDA events on `stream`.
template <class Run>
float median_ms(Run&& run, cudaStream_t stream) {
  constexpr int kRuns = 20;
  cudaEvent_t start, stop;
  CHECK_CUDA(cudaEventCreate(&start));
  CHECK_CUDA(cudaEventCreate(&stop));
  run();
  std::vector<float> ms(kRuns);
  for (float& t : ms) {
    CHECK_CUDA(cudaEventRecord(start, stream));
    run();
    CHECK_CUDA(cudaEventRecord(stop, stream));
    CHECK_CUDA(cudaEventSynchronize(stop));
    CHECK_CUDA(cudaEventElapsedTime(&t, start, stop));
  }
  CHECK_CUDA(cudaEventDestroy(start));
  CHECK_CUDA(cudaEventDestroy(stop));
  std::sort(ms.begin(), ms.end());
  return 0.5f * (ms[kRuns / 2 - 1] + ms[kRuns / 2]);
}

// One shape: both results from C full of NaN (beta = 0 must not read C), compared, then timed.
bool run_shape(const Shape& s, cublasHandle_t handle, cudaStream_t stream) {
  const size_t a_n = size_t(s.M) * s.K, b_n = size_t(s.K) * s.N, c_n = size_t(s.M) * s.N;
  std::mt19937 rng(42);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  std::vector<float> a(a_n), b(b_n), c(c_n), ref(c_n);
  for (float& v : a) v = dist(rng);
  for (float& v : b) v = dist(rng);

  float *dA, *dB, *dC, *dRef;
  CHECK_CUDA(cudaMalloc(&dA, a_n * sizeof(float)));
  CHECK_CUDA(cudaMalloc(&dB, b_n * sizeof(float)));
  CHECK_CUDA(cudaMalloc(&dC, c_n * sizeof(float)));
  CHECK_CUDA(cudaMalloc(&dRef, c_n * sizeof(float)));
  CHECK_CUDA(cudaMemcpy(dA, a.data(), a_n * sizeof(float), cudaMemcpyHostToDevice));
  CHECK_CUDA(cudaMemcpy(dB, b.data(), b_n * sizeof(float), cudaMemcpyHostToDevice));
  CHECK_CUDA(cudaMemset(dC, 0xff, c_n * sizeof(float)));
  CHECK_CUDA(cudaMemset(dRef, 0xff, c_n * sizeof(float)));

  std::printf("%dx%dx%d\n  %s\n", s.M, s.N, s.K,
              sgemm_tuned::explain(s.M, s.N, s.K, s.K, s.N, s.N, dA, dB, dC).c_str());
  const float one = 1.0f, zero = 0.0f;
  auto tuned = [&] {
    CHECK_CUDA(sgemm_tuned::sgemm(s.M, s.N, s.K, one, dA, s.K, dB, s.N, zero, dC, s.N, stream));
  };
  // Row-major C = A * B as column-major C^T = B^T * A^T.
  auto cublas = [&] {
    CHECK_CUBLAS(cublasSgemm(handle, CUBLAS_OP_N, CUBLAS_OP_N, s.N, s.M, s.K, &one, dB, s.N, dA,
                             s.K, &zero, dRef, s.N));
  };
  tuned();
  cublas();
  CHECK_CUDA(cudaStreamSynchronize(stream));
  CHECK_CUDA(cudaMemcpy(c.data(), dC, c_n * sizeof(float), cudaMemcpyDeviceToHost));
  CHECK_CUDA(cudaMemcpy(ref.data(), dRef, c_n * sizeof(float), cudaMemcpyDeviceToHost));
  double max_err = 0, max_ref = 0;
  for (size_t i = 0; i < c_n; ++i) {
    // NaN compares false: count it as an infinite error.
    const double d = std::fabs(double(c[i]) - double(ref[i]));
    max_err = std::max(max_err, std::isnan(d) ? INFINITY : d);
    max_ref = std::max(max_ref, std::fabs(double(ref[i])));
  }
  const double rel = max_ref > 0 ? max_err / max_ref : max_err;
  const bool ok = rel < 1e-4;

  const float t_tuned = median_ms(tuned, stream);
  const float t_cublas = median_ms(cublas, stream);
  const double gflop = 2.0 * s.M * s.N * s.K * 1e-9;
  std::printf("  max |sgemm - cuBLAS| = %.3g (%.3g of max |C|) %s\n", max_err, rel,
              ok ? "ok" : "MISMATCH");
  std::printf("  sgemm  %.4f ms  %8.0f GFLOP/s (median of 20)\n", t_tuned, gflop / t_tuned * 1e3);
  std::printf("  cuBLAS %.4f ms  %8.0f GFLOP/s (median of 20)  sgemm at %.1f%% of cuBLAS speed\n",
              t_cublas, gflop / t_cublas * 1e3, 100.0 * t_cublas / t_tuned);

  CHECK_CUDA(cudaFree(dA));
  CHECK_CUDA(cudaFree(dB));
  CHECK_CUDA(cudaFree(dC));
  CHECK_CUDA(cudaFree(dRef));
  return ok;
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<Shape> shapes;
  for (int i = 1; i < argc; ++i) {
    Shape s{};
    if (!parse_shape(argv[i], s)) {
      std::fprintf(stderr, "usage: %s [MxNxK ...]   (bad shape '%s')\n", argv[0], argv[i]);
      return 1;
    }
    shapes.push_back(s);
  }
  if (shapes.empty()) shapes = {{2048, 2048, 1024}, {4096, 4096, 2048}, {1000, 1000, 1000}};

  int devices = 0;
  const cudaError_t e = cudaGetDeviceCount(&devices);
  if (e != cudaSuccess || devices == 0) {
    std::printf("no CUDA device (%s); nothing to run. What sgemm() would say:\n  %s\n",
                e != cudaSuccess ? cudaGetErrorString(e) : "0 devices",
                sgemm_tuned::explain(shapes[0].M, shapes[0].N, shapes[0].K, shapes[0].K,
                                     shapes[0].N, shapes[0].N)
                    .c_str());
    return 2;
  }

  cudaStream_t stream;
  CHECK_CUDA(cudaStreamCreate(&stream));
  cublasHandle_t handle;
  CHECK_CUBLAS(cublasCreate(&handle));
  CHECK_CUBLAS(cublasSetMathMode(handle, CUBLAS_PEDANTIC_MATH));
  CHECK_CUBLAS(cublasSetStream(handle, stream));
  bool ok = true;
  for (const auto& s : shapes) ok = run_shape(s, handle, stream) && ok;
  CHECK_CUBLAS(cublasDestroy(handle));
  CHECK_CUDA(cudaStreamDestroy(stream));
  return ok ? 0 : 1;
}
