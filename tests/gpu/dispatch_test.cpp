// GPU tests of the sgemm_tuned dispatch library (label gpu): sgemm() matches cuBLAS on tuned,
// nearest and fallback shapes, beta = 0 never reads C (NaN-filled), explain() names the path taken.
// The fixture's TMA = 1 winners run in every layout on edge shapes and split over K, and pass
// operands their tensor copies cannot read on to another winner. Every test skips without a CUDA
// device, or when the build had no nvcc for the library; the TMA tests also skip unless the device
// is sm_90 and the library was built with 90a in CMAKE_CUDA_ARCHITECTURES.
#include <gtest/gtest.h>

#include <cublas_v2.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <optional>
#include <random>
#include <string>
#include <thread>
#include <vector>

#ifdef SGT_HAVE_SGEMM_TUNED
#include <sgemm_tuned/sgemm_tuned.hpp>

#include "gpu_support.hpp"
#include "sgemm_tuned_table.hpp"
#include "tma_cases.hpp"
#endif

namespace {

#ifdef SGT_HAVE_SGEMM_TUNED

bool contains(const std::string& s, const std::string& needle) {
  return s.find(needle) != std::string::npos;
}

struct Case {
  int M, N, K;
  int lda = 0, ldb = 0, ldc = 0;  // 0: packed
  float alpha = 1.0f, beta = 0.0f;
  int a_offset = 0;  // floats: 1 makes A only 4-byte aligned
  cudaStream_t stream = nullptr;
  bool trans_a = false, trans_b = false;
};

std::string layout_of(const Case& c) {
  return std::string(c.trans_a ? "T" : "N") + (c.trans_b ? "T" : "N");
}

struct Outcome {
  cudaError_t status = cudaErrorUnknown;
  double rel_error = INFINITY;  // max |sgemm - cuBLAS| / max |cuBLAS| over C's M x N elements
  std::string explain;
};

// sgemm() and cuBLAS (FP32, pedantic) on the same random A, B and initial C. With beta == 0, C
// starts as NaN for both, so any read of it shows up as NaN in the result.
Outcome run_against_cublas(Case c) {
  // Stored shapes: A is M x K, or K x M when transposed; B is K x N, or N x K.
  const int a_rows = c.trans_a ? c.K : c.M, a_cols = c.trans_a ? c.M : c.K;
  const int b_rows = c.trans_b ? c.N : c.K, b_cols = c.trans_b ? c.K : c.N;
  if (!c.lda) c.lda = std::max(1, a_cols);
  if (!c.ldb) c.ldb = std::max(1, b_cols);
  if (!c.ldc) c.ldc = std::max(1, c.N);
  const size_t a_n = size_t(a_rows) * c.lda + c.a_offset + 1, b_n = size_t(b_rows) * c.ldb + 1,
               c_n = size_t(c.M) * c.ldc + 1;
  std::mt19937 rng(1234);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  std::vector<float> a(a_n), b(b_n), c0(c_n, NAN);
  for (float& v : a) v = dist(rng);
  for (float& v : b) v = dist(rng);
  if (c.beta != 0.0f) {
    for (float& v : c0) v = dist(rng);
  }
  float *dA = nullptr, *dB = nullptr, *dC = nullptr, *dRef = nullptr;
  Outcome out;
  EXPECT_EQ(cudaMalloc(&dA, a_n * sizeof(float)), cudaSuccess);
  EXPECT_EQ(cudaMalloc(&dB, b_n * sizeof(float)), cudaSuccess);
  EXPECT_EQ(cudaMalloc(&dC, c_n * sizeof(float)), cudaSuccess);
  EXPECT_EQ(cudaMalloc(&dRef, c_n * sizeof(float)), cudaSuccess);
  cudaMemcpy(dA, a.data(), a_n * sizeof(float), cudaMemcpyHostToDevice);
  cudaMemcpy(dB, b.data(), b_n * sizeof(float), cudaMemcpyHostToDevice);
  cudaMemcpy(dC, c0.data(), c_n * sizeof(float), cudaMemcpyHostToDevice);
  cudaMemcpy(dRef, c0.data(), c_n * sizeof(float), cudaMemcpyHostToDevice);
  const float* A = dA + c.a_offset;

  using sgemm_tuned::Op;
  const Op op_a = c.trans_a ? Op::T : Op::N, op_b = c.trans_b ? Op::T : Op::N;
  out.explain = sgemm_tuned::explain(op_a, op_b, c.M, c.N, c.K, c.lda, c.ldb, c.ldc, A, dB, dC);
  out.status = sgemm_tuned::sgemm(op_a, op_b, c.M, c.N, c.K, c.alpha, A, c.lda, dB, c.ldb, c.beta,
                                  dC, c.ldc, c.stream);

  cublasHandle_t h = nullptr;
  EXPECT_EQ(cublasCreate(&h), CUBLAS_STATUS_SUCCESS);
  cublasSetMathMode(h, CUBLAS_PEDANTIC_MATH);
  cublasSetStream(h, c.stream);
  // Row-major C = op(A) op(B) is column-major C^T = op(B)^T op(A)^T.
  if (c.M > 0 && c.N > 0) {
    EXPECT_EQ(
        cublasSgemm(h, c.trans_b ? CUBLAS_OP_T : CUBLAS_OP_N, c.trans_a ? CUBLAS_OP_T : CUBLAS_OP_N,
                    c.N, c.M, c.K, &c.alpha, dB, c.ldb, A, c.lda, &c.beta, dRef, c.ldc),
        CUBLAS_STATUS_SUCCESS);
  }
  EXPECT_EQ(cudaStreamSynchronize(c.stream), cudaSuccess);
  cublasDestroy(h);

  std::vector<float> got(c_n), want(c_n);
  cudaMemcpy(got.data(), dC, c_n * sizeof(float), cudaMemcpyDeviceToHost);
  cudaMemcpy(want.data(), dRef, c_n * sizeof(float), cudaMemcpyDeviceToHost);
  double max_err = 0, max_ref = 0;
  for (size_t k = 0; k < c_n; ++k) {
    const bool inside = k < size_t(c.M) * c.ldc && int(k % c.ldc) < c.N;
    if (!inside) {
      // Padding and the element past the end: untouched (NaN-filled or random like the reference).
      if (std::memcmp(&got[k], &want[k], sizeof(float)) != 0) max_err = INFINITY;
      continue;
    }
    const double d = std::fabs(double(got[k]) - double(want[k]));
    max_err = std::max(max_err, std::isnan(d) ? INFINITY : d);
    max_ref = std::max(max_ref, std::fabs(double(want[k])));
  }
  out.rel_error = max_ref > 0 ? max_err / max_ref : max_err;
  cudaFree(dA);
  cudaFree(dB);
  cudaFree(dC);
  cudaFree(dRef);
  return out;
}

// The smallest tuned NN shape of the current device in the embedded table, with its config name.
struct Tuned {
  int M, N, K;
  std::string config;
};
// The tuned NN shapes of the current device in the embedded table whose winners are warp-tiling
// (TMA = 0) kernels, with their config names. The TMA = 1 winners have tests of their own.
std::vector<Tuned> tuned_nn_shapes() {
  namespace t = sgt_tuned_table;
  int dev = 0;
  cudaDeviceProp p{};
  if (cudaGetDevice(&dev) != cudaSuccess || cudaGetDeviceProperties(&p, dev) != cudaSuccess) {
    return {};
  }
  std::vector<Tuned> out;
  for (int g = 0; g < t::kGpuCount; ++g) {
    const auto& gpu = t::kGpus[g];
    if (std::strcmp(gpu.name, p.name) != 0 || gpu.cc_major != p.major || gpu.cc_minor != p.minor ||
        gpu.sm_count != p.multiProcessorCount) {
      continue;
    }
    for (int i = gpu.first_shape; i < gpu.first_shape + gpu.shape_count; ++i) {
      const auto& s = t::kShapes[i];
      if (std::strcmp(s.layout, "NN") != 0 || t::kConfigLaunch[s.config].abi == 1) continue;
      out.push_back(Tuned{int(s.M), int(s.N), int(s.K), t::kConfigNames[s.config]});
    }
  }
  return out;
}

std::optional<Tuned> smallest_tuned_shape() {
  std::optional<Tuned> best;
  for (const auto& s : tuned_nn_shapes()) {
    if (!best || double(s.M) * s.N * s.K < double(best->M) * best->N * best->K) best = s;
  }
  return best;
}

std::string device_name() {
  cudaDeviceProp p{};
  int dev = 0;
  cudaGetDevice(&dev);
  cudaGetDeviceProperties(&p, dev);
  return p.name;
}

constexpr double kTolerance = 1e-5;

TEST(DispatchGpu, TunedShapeRunsItsWinnerAndMatchesCublas) {
  SKIP_WITHOUT_GPU();
  const auto tuned = smallest_tuned_shape();
  if (!tuned) {
    GTEST_SKIP() << "nothing tuned for this device in the embedded table: "
                 << sgemm_tuned::explain(2048, 2048, 1024, 1024, 2048, 2048);
  }
  // beta = 0 over a NaN-filled C, then an update of a random C.
  for (const auto& [alpha, beta] : {std::pair{1.0f, 0.0f}, std::pair{1.5f, -0.75f}}) {
    const auto r = run_against_cublas({tuned->M, tuned->N, tuned->K, 0, 0, 0, alpha, beta});
    EXPECT_EQ(r.status, cudaSuccess);
    EXPECT_LT(r.rel_error, kTolerance) << "alpha " << alpha << " beta " << beta << "\n"
                                       << r.explain;
    EXPECT_TRUE(contains(r.explain, "tuned kernel " + tuned->config)) << r.explain;
    EXPECT_TRUE(contains(r.explain, "the winner of exactly this tuned shape")) << r.explain;
  }
}

TEST(DispatchGpu, UntunedShapeRunsTheNearestWinnerAndMatchesCublas) {
  SKIP_WITHOUT_GPU();
  const auto tuned = smallest_tuned_shape();
  if (!tuned) GTEST_SKIP() << "nothing tuned for this device in the embedded table";
  // Twice K: not tuned, and the tuned shape's own winner divides it, so some winner fits.
  const auto r = run_against_cublas({tuned->M, tuned->N, 2 * tuned->K});
  EXPECT_EQ(r.status, cudaSuccess);
  EXPECT_LT(r.rel_error, kTolerance) << r.explain;
  EXPECT_TRUE(contains(r.explain, "tuned kernel wt_")) << r.explain;
  EXPECT_TRUE(contains(r.explain, "the winner of the nearest tuned shape")) << r.explain;
}

TEST(DispatchGpu, OddShapeRunsATunedKernelAndMatchesCublas) {
  SKIP_WITHOUT_GPU();
  if (!smallest_tuned_shape()) GTEST_SKIP() << "nothing tuned for this device in the table";
  // No tile divides 1001x999x1003: edge tiles in M and N, a partial last k-slice.
  for (const float beta : {0.0f, 0.5f}) {
    const auto r = run_against_cublas({1001, 999, 1003, 0, 0, 0, 1.0f, beta});
    EXPECT_EQ(r.status, cudaSuccess);
    EXPECT_LT(r.rel_error, kTolerance) << r.explain;
    EXPECT_TRUE(contains(r.explain, "tuned kernel wt_")) << r.explain;
  }
}

TEST(DispatchGpu, PaddedAndMisalignedOperandsRunATunedKernelAndSaySo) {
  SKIP_WITHOUT_GPU();
  const auto tuned = smallest_tuned_shape();
  if (!tuned) GTEST_SKIP() << "nothing tuned for this device in the table";
  const int M = tuned->M, N = tuned->N, K = tuned->K;
  const auto padded = run_against_cublas({M, N, K, K + 4, N + 8, N + 4});
  EXPECT_EQ(padded.status, cudaSuccess);
  EXPECT_LT(padded.rel_error, kTolerance) << padded.explain;
  EXPECT_TRUE(contains(padded.explain, "tuned kernel wt_")) << padded.explain;
  EXPECT_TRUE(contains(padded.explain, "A float4, B float4, C float4")) << padded.explain;

  Case misaligned{M, N, K};
  misaligned.a_offset = 1;
  const auto r = run_against_cublas(misaligned);
  EXPECT_EQ(r.status, cudaSuccess);
  EXPECT_LT(r.rel_error, kTolerance) << r.explain;
  EXPECT_TRUE(contains(r.explain, "A scalar (pointer not 16-byte aligned)")) << r.explain;

  const auto odd_ld = run_against_cublas({M, N, K, K + 3, N + 1, N + 5});
  EXPECT_LT(odd_ld.rel_error, kTolerance) << odd_ld.explain;
  EXPECT_TRUE(contains(odd_ld.explain, "leading dimension not a multiple of 4")) << odd_ld.explain;
}

// A winner with PACK (the fixture's 2048x2048x1024 one): the library packs A (stored M x K) and
// whatever of B is not an aligned, k-major float4 matrix into panels, then runs the TN instance.
TEST(DispatchGpu, PackedWinnerMatchesCublasOnAlignedOddAndMisalignedOperands) {
  SKIP_WITHOUT_GPU();
  std::optional<Tuned> packed;
  for (const auto& s : tuned_nn_shapes()) {
    if (contains(s.config, "_x1")) packed = s;
  }
  if (!packed) GTEST_SKIP() << "no PACK winner for this device in the embedded table";
  const int M = packed->M, N = packed->N, K = packed->K;
  Case misaligned{M, N, K};
  misaligned.a_offset = 1;
  const Case cases[] = {
      {M, N, K},                                     // A packed, B read in place
      {M, N, K, K + 3, N + 1, N + 5, 1.5f, -0.75f},  // both packed: odd leading dimensions
      misaligned,
      {M, N, K - 1, 0, 0, 0, 1.0f, 0.5f},  // a k tail
  };
  for (const auto& c : cases) {
    const auto r = run_against_cublas(c);
    EXPECT_EQ(r.status, cudaSuccess);
    EXPECT_LT(r.rel_error, kTolerance) << r.explain;
    EXPECT_TRUE(contains(r.explain, "tuned kernel " + packed->config)) << r.explain;
  }
}

// The four layouts over odd and degenerate shapes, both alpha/beta kinds (beta = 0 over NaN),
// offset pointers and padded leading dimensions, all against cuBLAS FP32.
TEST(DispatchGpu, EveryLayoutMatchesCublasOverOddShapes) {
  SKIP_WITHOUT_GPU();
  if (!smallest_tuned_shape()) GTEST_SKIP() << "nothing tuned for this device in the table";
  const int shapes[][3] = {
      {1, 1, 1}, {37, 53, 129}, {257, 131, 67}, {128, 128, 128}, {515, 260, 333}};
  int runs = 0;
  for (const bool ta : {false, true}) {
    for (const bool tb : {false, true}) {
      for (const auto& sh : shapes) {
        for (const int variant : {0, 1, 2}) {
          Case c{sh[0], sh[1], sh[2]};
          c.trans_a = ta;
          c.trans_b = tb;
          if (variant == 1) {
            c.alpha = 1.5f;
            c.beta = -0.75f;
            c.a_offset = 1;
          } else if (variant == 2) {
            c.lda = (ta ? c.M : c.K) + 5;
            c.ldb = (tb ? c.K : c.N) + 4;
            c.ldc = c.N + 3;
            c.beta = 1.0f;
          }
          const auto r = run_against_cublas(c);
          EXPECT_EQ(r.status, cudaSuccess);
          EXPECT_LT(r.rel_error, kTolerance) << layout_of(c) << " " << c.M << "x" << c.N << "x"
                                             << c.K << " variant " << variant << "\n"
                                             << r.explain;
          EXPECT_TRUE(contains(r.explain, "tuned kernel wt_")) << r.explain;
          EXPECT_TRUE(contains(r.explain, "sgemm " + layout_of(c))) << r.explain;
          ++runs;
        }
      }
    }
  }
  EXPECT_EQ(runs, 4 * 5 * 3);
}

TEST(DispatchGpu, DegenerateShapes) {
  SKIP_WITHOUT_GPU();
  // K = 0: C = beta * C (the kernel runs no k-slice), for every layout.
  for (const bool ta : {false, true}) {
    Case c{67, 45, 0};
    c.trans_a = ta;
    c.beta = 0.5f;
    const auto r = run_against_cublas(c);
    EXPECT_EQ(r.status, cudaSuccess);
    EXPECT_LT(r.rel_error, kTolerance) << r.explain;
  }
  // M = 0 or N = 0: nothing runs, nothing is written, success.
  float* d = nullptr;
  ASSERT_EQ(cudaMalloc(&d, 64 * sizeof(float)), cudaSuccess);
  ASSERT_EQ(cudaMemset(d, 0xFF, 64 * sizeof(float)), cudaSuccess);
  EXPECT_EQ(sgemm_tuned::sgemm(0, 8, 8, 1.0f, d, 8, d, 8, 0.0f, d, 8, nullptr), cudaSuccess);
  EXPECT_EQ(sgemm_tuned::sgemm(8, 0, 8, 1.0f, d, 8, d, 1, 0.0f, d, 1, nullptr), cudaSuccess);
  EXPECT_TRUE(contains(sgemm_tuned::explain(0, 8, 8, 8, 8, 8), "nothing to do"));
  std::vector<unsigned> host(64);
  cudaMemcpy(host.data(), d, 64 * sizeof(float), cudaMemcpyDeviceToHost);
  EXPECT_TRUE(std::all_of(host.begin(), host.end(), [](unsigned v) { return v == 0xFFFFFFFFu; }));
  cudaFree(d);
}

TEST(DispatchGpu, ConcurrentCallsOnOwnStreamsAllMatch) {
  SKIP_WITHOUT_GPU();
  const auto tuned = smallest_tuned_shape();
  std::vector<std::thread> threads;
  std::vector<Outcome> results(4);
  for (int i = 0; i < 4; ++i) {
    threads.emplace_back([&, i] {
      cudaStream_t s = nullptr;
      cudaStreamCreate(&s);
      // Alternate the kernel and cuBLAS paths, so the shared cuBLAS handle is contended.
      Case c = (i % 2 == 0 && tuned) ? Case{tuned->M, tuned->N, tuned->K} : Case{515, 517, 519};
      c.stream = s;
      results[i] = run_against_cublas(c);
      cudaStreamDestroy(s);
    });
  }
  for (auto& t : threads) t.join();
  for (const auto& r : results) {
    EXPECT_EQ(r.status, cudaSuccess);
    EXPECT_LT(r.rel_error, kTolerance) << r.explain;
  }
}

TEST(DispatchGpu, BadArgumentsReturnInvalidValueAndLeaveNoError) {
  SKIP_WITHOUT_GPU();
  float* d = nullptr;
  ASSERT_EQ(cudaMalloc(&d, 64 * 64 * sizeof(float)), cudaSuccess);
  EXPECT_EQ(sgemm_tuned::sgemm(64, 64, 64, 1.0f, d, 64, d, 63, 0.0f, d, 64, nullptr),
            cudaErrorInvalidValue);
  EXPECT_EQ(sgemm_tuned::sgemm(-1, 64, 64, 1.0f, d, 64, d, 64, 0.0f, d, 64, nullptr),
            cudaErrorInvalidValue);
  // Transposed A is stored K x M: lda must reach M.
  EXPECT_EQ(sgemm_tuned::sgemm(sgemm_tuned::Op::T, sgemm_tuned::Op::N, 64, 64, 32, 1.0f, d, 32, d,
                               64, 0.0f, d, 64, nullptr),
            cudaErrorInvalidValue);
  EXPECT_EQ(cudaGetLastError(), cudaSuccess);
  EXPECT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  cudaFree(d);
}

TEST(DispatchGpu, ExplainNamesTheDeviceAndTheTable) {
  SKIP_WITHOUT_GPU();
  const auto text = sgemm_tuned::explain(1000, 1000, 1000, 1000, 1000, 1000);
  EXPECT_TRUE(contains(text, "on " + device_name() + " (sm_")) << text;
  EXPECT_TRUE(
      contains(text, std::string("exported by sgemm-tune ") + sgt_tuned_table::kToolVersion))
      << text;
}

// The TMA = 1 winners' calls (tma_cases.hpp) as run_against_cublas takes them.
Case tma_case(const sgt::test::TmaCase& t) {
  Case c{t.M, t.N, t.K, t.lda, t.ldb, t.ldc, t.alpha, t.beta, t.a_offset};
  c.trans_a = t.trans_a;
  c.trans_b = t.trans_b;
  return c;
}

// Empty when the embedded TMA = 1 winner serves its tuned shape here; else why not, for a skip.
// Only a build without sm_90a, a device that is not sm_90 or a table without this device skips:
// any other reason a TMA winner is passed over is a failure.
std::string why_no_tma() {
  const std::string text =
      sgemm_tuned::explain(sgemm_tuned::Op::N, sgemm_tuned::Op::N, 300, 200, 100, 100, 200, 200);
  if (contains(text, "tuned kernel " + sgt::test::kConfigTma)) return {};
  for (const char* skip :
       {"add 90a to CMAKE_CUDA_ARCHITECTURES", "SGT_TUNED_SM90A is not defined", "needs CUDA 12.9",
        "runs only on compute capability 9.0", "is not in the embedded table"}) {
    if (contains(text, skip)) return text;
  }
  ADD_FAILURE() << "the TMA winner does not serve its own tuned shape: " << text;
  return text;
}

// Every layout; the tuned shape; one partial tile; K below one slice; edge tiles with a k tail;
// one whole tile; 1x1x1; K = 0; beta = 0 over NaN and beta != 0; C rows that refuse float4s; and in
// NN and TT the split-K winner on deep shapes. All against cuBLAS FP32, padding left untouched.
TEST(DispatchGpu, TmaWinnerMatchesCublasInEveryLayoutOnEdgeShapesAndSplitK) {
  SKIP_WITHOUT_GPU();
  if (const auto why = why_no_tma(); !why.empty()) GTEST_SKIP() << why;
  int runs = 0, split = 0;
  for (const auto& t : sgt::test::tma_cases()) {
    const auto r = run_against_cublas(tma_case(t));
    EXPECT_EQ(r.status, cudaSuccess) << t.what << ": " << cudaGetErrorString(r.status);
    EXPECT_LT(r.rel_error, kTolerance) << t.what << "\n" << r.explain;
    if (t.split) {
      EXPECT_TRUE(contains(r.explain, "tuned kernel " + sgt::test::kConfigTmaSplit + ","))
          << r.explain;
      ++split;
    } else if (t.K > 0) {
      EXPECT_TRUE(contains(r.explain, "tuned kernel " + sgt::test::kConfigTma + ",")) << r.explain;
    }
    EXPECT_TRUE(contains(r.explain, "A and B by TMA tensor copies")) << r.explain;
    ++runs;
  }
  EXPECT_EQ(runs, 4 * 8 + 2 * 3);
  EXPECT_EQ(split, 6);
  EXPECT_EQ(cudaGetLastError(), cudaSuccess);
}

// A misaligned A, or A's or B's rows not a multiple of 4 apart: the TMA winner is passed over, and
// the nearest warp-tiling winner computes the same product.
TEST(DispatchGpu, OperandsTheTmaCopiesCannotReadGoToAnotherWinner) {
  SKIP_WITHOUT_GPU();
  if (const auto why = why_no_tma(); !why.empty()) GTEST_SKIP() << why;
  for (const auto& t : sgt::test::tma_fallback_cases()) {
    const auto r = run_against_cublas(tma_case(t));
    EXPECT_EQ(r.status, cudaSuccess) << t.what;
    EXPECT_LT(r.rel_error, kTolerance) << t.what << "\n" << r.explain;
    EXPECT_TRUE(contains(r.explain, "its TMA tensor copies cannot read " + t.refused)) << r.explain;
    EXPECT_FALSE(contains(r.explain, "tuned kernel " + sgt::test::kConfigTma)) << r.explain;
    EXPECT_TRUE(contains(r.explain, "tuned kernel wt_")) << r.explain;
  }
}

// The packed TMA winner (4100x200x99 NT) on any operands: the pack writes panels, then the TMA
// kernel's TN instance copies them; against cuBLAS FP32 with odd and padded rows, a misaligned A,
// alpha and beta, beta = 0 over NaN and C rows that refuse float4 stores.
TEST(DispatchGpu, PackedTmaWinnerMatchesCublasOnAnyOperands) {
  SKIP_WITHOUT_GPU();
  if (const auto why = why_no_tma(); !why.empty()) GTEST_SKIP() << why;
  int runs = 0;
  for (const auto& t : sgt::test::tma_pack_cases()) {
    const auto r = run_against_cublas(tma_case(t));
    EXPECT_EQ(r.status, cudaSuccess) << t.what << ": " << cudaGetErrorString(r.status);
    EXPECT_LT(r.rel_error, kTolerance) << t.what << "\n" << r.explain;
    EXPECT_TRUE(contains(r.explain, "tuned kernel " + sgt::test::kConfigTmaPack + ","))
        << r.explain;
    EXPECT_TRUE(contains(r.explain, "operands packed into k-major panels, then A and B by TMA"))
        << r.explain;
    ++runs;
  }
  EXPECT_EQ(runs, 5);
  EXPECT_EQ(cudaGetLastError(), cudaSuccess);
}

// Streams of their own, TMA and warp-tiling winners interleaved: the tensor maps travel by value,
// so concurrent calls never share one.
TEST(DispatchGpu, ConcurrentTmaCallsOnOwnStreamsAllMatch) {
  SKIP_WITHOUT_GPU();
  if (const auto why = why_no_tma(); !why.empty()) GTEST_SKIP() << why;
  const auto cases = sgt::test::tma_cases();
  const auto fallbacks = sgt::test::tma_fallback_cases();
  std::vector<std::thread> threads;
  std::vector<Outcome> results(6);
  for (int i = 0; i < 6; ++i) {
    threads.emplace_back([&, i] {
      cudaStream_t s = nullptr;
      cudaStreamCreate(&s);
      Case c = tma_case(i % 2 == 0 ? cases[(i * 7) % cases.size()] : fallbacks[i]);
      c.stream = s;
      results[i] = run_against_cublas(c);
      cudaStreamDestroy(s);
    });
  }
  for (auto& t : threads) t.join();
  for (const auto& r : results) {
    EXPECT_EQ(r.status, cudaSuccess);
    EXPECT_LT(r.rel_error, kTolerance) << r.explain;
  }
}

#else

TEST(DispatchGpu, Skipped) {
  GTEST_SKIP() << "the sgemm_tuned library was not built (no CUDA compiler at configure time)";
}

#endif

}  // namespace
