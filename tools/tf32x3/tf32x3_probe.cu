// Probe of the split-TF32 kernel (kernel_templates/sgemm_tf32x3.cuh) on a GPU: for each shape,
// layout, input kind and config it runs the kernel, measures its error against an FP64 reference
// (cuBLAS DGEMM on the same inputs) beside cuBLAS FP32 (pedantic) and cuBLAS 1xTF32, and times
// all three (cudaEvents, median of --reps, L2 flushed before every rep). One CSV line per run.
//
// Build (CUDA 13; sm_90a for the H200, whose wgmma kernel needs it; on sm_80 the mma.sync kernels
// run and --wgmma must stay off):
//   nvcc -std=c++17 -O3 -arch=sm_90a -I kernel_templates tools/tf32x3/tf32x3_probe.cu -lcublas
//        -o tf32x3_probe
// or the CMakeLists.txt beside this file.
//
// The error of a result c against the FP64 reference r: fro = ||c - r||_F / ||r||_F and max =
// max|c - r| / max|r|; ratio_* = the kernel's / cuBLAS FP32's. status: wrong (a non-finite
// value, a write outside C's rows, or an error no rounding explains), inaccurate (ratio_fro above
// 1), ok.
#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "sgemm_tf32x3.cuh"
#include "sgemm_bf16x6_wgmma.cuh"
#include "sgemm_tf32x3_wgmma.cuh"
#include "sgemm_warptile.cuh"  // sgemm_splitk_reduce
#include "tma_maps.h"

#define CHECK_CUDA(x)                                                                          \
  do {                                                                                         \
    cudaError_t e_ = (x);                                                                      \
    if (e_ != cudaSuccess) {                                                                   \
      std::fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(e_)); \
      std::exit(2);                                                                            \
    }                                                                                          \
  } while (0)
#define CHECK_CUBLAS(x)                                                                       \
  do {                                                                                        \
    cublasStatus_t s_ = (x);                                                                  \
    if (s_ != CUBLAS_STATUS_SUCCESS) {                                                        \
      std::fprintf(stderr, "%s:%d: %s: cuBLAS status %d\n", __FILE__, __LINE__, #x, (int)s_); \
      std::exit(2);                                                                           \
    }                                                                                         \
  } while (0)

namespace {

using KernelFn = void (*)(int, int, int, float, const float*, int, const float*, int, float, float*,
                          int, int, float*);

using WgmmaFn = void (*)(int, int, int, float, sgt_kernel::TmaMap, sgt_kernel::TmaMap,
                         sgt_kernel::TmaMap, sgt_kernel::TmaMap, float, float*, int);

struct Instance {
  std::string config;  // e.g. 128x128x32_w64x64_s3
  int acc;
  bool trans_a, trans_b, vec;
  KernelFn fn;
  int bm, bn, bk, threads, smem;
  // The wgmma kernel (sgemm_tf32x3_wgmma.cuh), any layout: the prepass splits op(A) and op(B)
  // into a workspace, then wg runs. prepass_timed false: only the GEMM is timed (the prepass
  // runs once, for the check).
  WgmmaFn wg = nullptr;
  bool prepass_timed = true;
  // The split-BF16 kernel (sgemm_bf16x6_wgmma.cuh), run as wg is (with --wgmma) on the same four
  // maps, over the three BF16 panels of each operand its prepass writes.
  WgmmaFn b6 = nullptr;
  bool wgmma() const { return wg != nullptr || b6 != nullptr; }
};

std::vector<Instance>& registry() {
  static std::vector<Instance> r;
  return r;
}

template <int BM, int BN, int BK, int WM, int WN, int S, int ACC, bool TA, bool TB, bool VEC>
void add_one() {
  constexpr auto g = sgt_kernel::make_tf32x3_geometry(BM, BN, BK, WM, WN, S, TA, TB);
  char name[64];
  std::snprintf(name, sizeof name, "%dx%dx%d_w%dx%d_s%d", BM, BN, BK, WM, WN, S);
  registry().push_back({name, ACC, TA, TB, VEC,
                        &sgemm_tf32x3<BM, BN, BK, WM, WN, S, 8, ACC, TA, TB, VEC>, BM, BN, BK,
                        g.NUM_THREADS, g.SMEM_BYTES});
}
template <int BM, int BN, int BK, int WM, int WN, int S, int ACC, bool VEC>
void add_layouts() {
  add_one<BM, BN, BK, WM, WN, S, ACC, false, false, VEC>();
  add_one<BM, BN, BK, WM, WN, S, ACC, false, true, VEC>();
  add_one<BM, BN, BK, WM, WN, S, ACC, true, false, VEC>();
  add_one<BM, BN, BK, WM, WN, S, ACC, true, true, VEC>();
}
template <int BM, int BN, int BK, int WM, int WN, int S>
void add_config() {
  add_layouts<BM, BN, BK, WM, WN, S, 1, true>();
  add_layouts<BM, BN, BK, WM, WN, S, 1, false>();
}

// The wgmma kernel (family tf32x3_wg) with STAGES stages and GROUP_M 8, as
// wgmma_128x128x32_s<STAGES>[_gemm].
template <int ACC, int STAGES>
void add_wgmma() {
  using sgt_kernel::kWgThreads;
  for (bool timed : {true, false}) {
    const std::string name = "wgmma_128x128x32_s" + std::to_string(STAGES) + (timed ? "" : "_gemm");
    registry().push_back({name, ACC, false, false, true, nullptr, 128, 128, 32, kWgThreads,
                          sgt_kernel::tf32x3_wg_smem_bytes(STAGES),
                          &sgemm_tf32x3_wgmma<ACC, STAGES, 8>, timed});
  }
}

// The split-BF16 kernel with STAGES stages and GROUP_M 8, as bf16x6_128x128x64_s<STAGES>[_gemm]
// (ACC 7's order and windows: acc 7).
template <int STAGES>
void add_bf16x6() {
  using sgt_kernel::kWgThreads;
  for (bool timed : {true, false}) {
    const std::string name =
        "bf16x6_128x128x64_s" + std::to_string(STAGES) + (timed ? "" : "_gemm");
    Instance in{name,
                7,
                false,
                false,
                true,
                nullptr,
                128,
                128,
                sgt_kernel::kB6BK,
                kWgThreads,
                sgt_kernel::bf16x6_smem_bytes(STAGES)};
    in.prepass_timed = timed;
    in.b6 = &sgemm_bf16x6_wgmma<STAGES, 8>;
    registry().push_back(in);
  }
}

void register_all() {
  add_bf16x6<2>();
  add_wgmma<0, 3>();
  add_wgmma<1, 3>();
  add_wgmma<2, 3>();
  add_wgmma<3, 3>();
  add_wgmma<4, 3>();
  add_wgmma<5, 3>();
  add_wgmma<6, 3>();
  add_wgmma<7, 3>();
  add_wgmma<3, 2>();
  add_config<128, 128, 32, 64, 64, 3>();
  add_config<128, 256, 32, 64, 64, 3>();
  add_config<64, 128, 32, 32, 64, 4>();
  add_config<256, 128, 16, 64, 64, 3>();
  add_config<128, 128, 32, 64, 32, 3>();
  // The running sum in the tensor core (ACC = 0), to measure what the FP32 adds cost and buy.
  add_layouts<128, 128, 32, 64, 64, 3, 0, true>();
}

struct Options {
  std::vector<std::array<int, 3>> shapes;
  std::vector<std::string> layouts = {"NN", "NT", "TN", "TT"};
  std::vector<std::string> configs;  // empty: all
  std::vector<std::string> inputs = {"uniform"};
  bool acc0 = false;
  bool wgmma = false;
  int reps = 20;
  int ld_pad = 0;
  int offset = 0;
  bool force_scalar = false;
  int split_k = 1;
  float alpha = 1.0f, beta = 0.0f;
  unsigned seed = 1;
};

std::vector<std::string> split_list(const std::string& s) {
  std::vector<std::string> out;
  size_t start = 0;
  while (start <= s.size()) {
    size_t end = s.find(',', start);
    if (end == std::string::npos) end = s.size();
    if (end > start) out.push_back(s.substr(start, end - start));
    start = end + 1;
  }
  return out;
}

[[noreturn]] void usage() {
  std::fprintf(stderr,
               "usage: tf32x3_probe --shapes MxNxK[,...] [--layouts NN,NT,TN,TT] [--configs "
               "NAME,...] [--acc0] [--wgmma]\n"
               "  [--inputs uniform,positive,wide,tiny,cancel] [--reps N (0: no timing)] "
               "[--ld-pad P] [--offset O]\n"
               "  [--scalar] [--split-k S] [--alpha A] [--beta B] [--seed S] [--list]\n");
  std::exit(1);
}

Options parse(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto next = [&]() -> std::string {
      if (i + 1 >= argc) usage();
      return argv[++i];
    };
    if (a == "--shapes") {
      for (const auto& s : split_list(next())) {
        std::array<int, 3> d{};
        if (std::sscanf(s.c_str(), "%dx%dx%d", &d[0], &d[1], &d[2]) != 3) usage();
        o.shapes.push_back(d);
      }
    } else if (a == "--layouts") {
      o.layouts = split_list(next());
    } else if (a == "--configs") {
      o.configs = split_list(next());
    } else if (a == "--inputs") {
      o.inputs = split_list(next());
    } else if (a == "--acc0") {
      o.acc0 = true;
    } else if (a == "--wgmma") {
      o.wgmma = true;
    } else if (a == "--reps") {
      o.reps = std::atoi(next().c_str());
    } else if (a == "--ld-pad") {
      o.ld_pad = std::atoi(next().c_str());
    } else if (a == "--offset") {
      o.offset = std::atoi(next().c_str());
    } else if (a == "--scalar") {
      o.force_scalar = true;
    } else if (a == "--split-k") {
      o.split_k = std::atoi(next().c_str());
    } else if (a == "--alpha") {
      o.alpha = std::strtof(next().c_str(), nullptr);
    } else if (a == "--beta") {
      o.beta = std::strtof(next().c_str(), nullptr);
    } else if (a == "--seed") {
      o.seed = static_cast<unsigned>(std::atoi(next().c_str()));
    } else if (a == "--list") {
      for (const auto& in : registry())
        std::printf("%s acc%d %c%c %s\n", in.config.c_str(), in.acc, in.trans_a ? 'T' : 'N',
                    in.trans_b ? 'T' : 'N', in.vec ? "vec" : "scalar");
      std::exit(0);
    } else {
      usage();
    }
  }
  if (o.shapes.empty()) usage();
  return o;
}

float nan_bits() {
  return std::nanf("");
}

// A stored rows x cols matrix (row-major, leading dimension ld) of the input kind, pad elements NaN
// (a kernel reading them would show it). uniform: U(-1, 1), zero excluded; positive: U(0.5, 1);
// wide: random sign, 2^U(-20, 20) * U(1, 2); tiny: random sign, U(1, 2) * 2^-63 (A) or 2^-62 (B),
// so that products lie near FP32's underflow (2^-126); cancel: built by cancel_pairs below.
std::vector<float> make_matrix(int rows, int cols, int ld, const std::string& kind, bool is_a,
                               std::mt19937_64& rng) {
  std::vector<float> m(static_cast<size_t>(rows) * ld + 1, nan_bits());
  std::uniform_real_distribution<double> u(-1.0, 1.0), unit(0.0, 1.0);
  for (int r = 0; r < rows; ++r)
    for (int c = 0; c < cols; ++c) {
      double v;
      if (kind == "positive") {
        v = 0.5 + 0.5 * unit(rng);
      } else if (kind == "wide" || kind == "tiny") {
        const double sign = unit(rng) < 0.5 ? -1.0 : 1.0;
        const double mant = 1.0 + unit(rng);
        v = kind == "wide" ? sign * mant * std::exp2(40.0 * unit(rng) - 20.0)
                           : sign * mant * std::exp2(is_a ? -63.0 : -62.0);
      } else {
        do v = u(rng);
        while (v == 0.0);
      }
      m[static_cast<size_t>(r) * ld + c] = static_cast<float>(v);
    }
  return m;
}

// Cancellation: for k >= K/2, op(A)(i, k) = op(A)(i, k - K/2) and op(B)(k, j) = -op(B)(k - K/2,
// j) * (1 + 2^-10 u): each dot product cancels to about 2^-10 of its terms' sum.
void cancel_pairs(std::vector<float>& a, std::vector<float>& b, int M, int N, int K, bool ta,
                  bool tb, int lda, int ldb, std::mt19937_64& rng) {
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  auto ai = [&](int i, int k) -> float& {
    return ta ? a[static_cast<size_t>(k) * lda + i] : a[static_cast<size_t>(i) * lda + k];
  };
  auto bi = [&](int k, int j) -> float& {
    return tb ? b[static_cast<size_t>(j) * ldb + k] : b[static_cast<size_t>(k) * ldb + j];
  };
  const int h = K / 2;
  for (int k = h; k < 2 * h; ++k) {
    for (int i = 0; i < M; ++i) ai(i, k) = ai(i, k - h);
    for (int j = 0; j < N; ++j)
      bi(k, j) = static_cast<float>(-bi(k - h, j) * (1.0 + std::ldexp(u(rng), -10)));
  }
}

struct Err {
  double fro = 0, max = 0;
  bool finite = true;
};

// c and r: M x N at leading dimension ld (r in double).
Err error_of(const std::vector<float>& c, const std::vector<double>& r, int M, int N, int ld) {
  Err e;
  double num = 0, den = 0, emax = 0, rmax = 0;
  for (int i = 0; i < M; ++i)
    for (int j = 0; j < N; ++j) {
      const size_t x = static_cast<size_t>(i) * ld + j;
      if (!std::isfinite(c[x])) e.finite = false;
      const double d = static_cast<double>(c[x]) - r[x];
      num += d * d;
      den += r[x] * r[x];
      emax = std::max(emax, std::fabs(d));
      rmax = std::max(rmax, std::fabs(r[x]));
    }
  e.fro = den > 0 ? std::sqrt(num / den) : std::sqrt(num);
  e.max = rmax > 0 ? emax / rmax : emax;
  if (!e.finite) e.fro = e.max = INFINITY;
  return e;
}

// Whether the elements of C's rows beyond N (its ld padding) kept their sentinel bits.
bool padding_intact(const std::vector<float>& c, const std::vector<float>& init, int M, int N,
                    int ld) {
  for (int i = 0; i < M; ++i)
    for (int j = N; j < ld; ++j) {
      const size_t x = static_cast<size_t>(i) * ld + j;
      if (std::memcmp(&c[x], &init[x], sizeof(float)) != 0) return false;
    }
  return true;
}

struct Timer {
  cudaEvent_t a, b;
  void* flush = nullptr;
  size_t flush_bytes = 0;
  Timer() {
    CHECK_CUDA(cudaEventCreate(&a));
    CHECK_CUDA(cudaEventCreate(&b));
    int l2 = 0, dev = 0;
    CHECK_CUDA(cudaGetDevice(&dev));
    CHECK_CUDA(cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, dev));
    flush_bytes = std::max<size_t>(static_cast<size_t>(l2) * 4, 64u << 20);
    CHECK_CUDA(cudaMalloc(&flush, flush_bytes));
  }
  // Median milliseconds of reps runs of f, each after a write of 4x the L2 size.
  double median_ms(int reps, const std::function<void()>& f) {
    std::vector<float> t;
    for (int i = 0; i < reps; ++i) {
      CHECK_CUDA(cudaMemsetAsync(flush, i & 0xff, flush_bytes));
      CHECK_CUDA(cudaEventRecord(a));
      f();
      CHECK_CUDA(cudaEventRecord(b));
      CHECK_CUDA(cudaEventSynchronize(b));
      float ms = 0;
      CHECK_CUDA(cudaEventElapsedTime(&ms, a, b));
      t.push_back(ms);
    }
    std::sort(t.begin(), t.end());
    return t.empty() ? 0.0 : (t[(t.size() - 1) / 2] + t[t.size() / 2]) / 2;
  }
};

}  // namespace

int main(int argc, char** argv) {
  register_all();
  const Options o = parse(argc, argv);
  cublasHandle_t h;
  CHECK_CUBLAS(cublasCreate(&h));
  Timer timer;
  cudaDeviceProp prop{};
  CHECK_CUDA(cudaGetDeviceProperties(&prop, 0));
  std::fprintf(stderr, "device: %s, sm_%d%d, %d SMs\n", prop.name, prop.major, prop.minor,
               prop.multiProcessorCount);
  std::printf(
      "M,N,K,layout,input,lda,ldb,ldc,offset,split_k,alpha,beta,config,acc,instance,status,"
      "err_fro,err_max,fp32_err_fro,fp32_err_max,tf32_err_fro,ratio_fro,ratio_max,tf32_ratio_fro,"
      "ms,tflops,fp32_ms,fp32_tflops,tf32_ms,tf32_tflops,speedup_vs_fp32\n");
  std::fflush(stdout);
  int worst = 0;  // 0 ok, 1 inaccurate, 2 wrong
  std::mt19937_64 rng(o.seed);

  for (const auto& shape : o.shapes) {
    const int M = shape[0], N = shape[1], K = shape[2];
    for (const auto& layout : o.layouts) {
      const bool ta = layout[0] == 'T', tb = layout[1] == 'T';
      const int a_rows = ta ? K : M, a_cols = ta ? M : K;
      const int b_rows = tb ? N : K, b_cols = tb ? K : N;
      const int lda = std::max(a_cols, 1) + o.ld_pad, ldb = std::max(b_cols, 1) + o.ld_pad;
      const int ldc = std::max(N, 1) + o.ld_pad;
      for (const auto& input : o.inputs) {
        auto a = make_matrix(a_rows, a_cols, lda, input, true, rng);
        auto b = make_matrix(b_rows, b_cols, ldb, input, false, rng);
        if (input == "cancel") cancel_pairs(a, b, M, N, K, ta, tb, lda, ldb, rng);
        // C: random where beta reads it, NaN where beta == 0 (never read); padding a sentinel.
        std::vector<float> c0(static_cast<size_t>(M) * ldc + 1, -1234.5f);
        {
          std::uniform_real_distribution<float> u(-1.0f, 1.0f);
          for (int i = 0; i < M; ++i)
            for (int j = 0; j < N; ++j)
              c0[static_cast<size_t>(i) * ldc + j] = o.beta != 0.0f ? u(rng) : nan_bits();
        }
        // Device copies at a float offset (o.offset) from a 256-byte aligned allocation.
        const size_t off = static_cast<size_t>(o.offset);
        float *dA, *dB, *dC, *dW = nullptr;
        double *dAd, *dBd, *dCd;
        CHECK_CUDA(cudaMalloc(&dA, (a.size() + off) * 4));
        CHECK_CUDA(cudaMalloc(&dB, (b.size() + off) * 4));
        CHECK_CUDA(cudaMalloc(&dC, (c0.size() + off) * 4));
        CHECK_CUDA(cudaMalloc(&dAd, a.size() * 8));
        CHECK_CUDA(cudaMalloc(&dBd, b.size() * 8));
        CHECK_CUDA(cudaMalloc(&dCd, c0.size() * 8));
        float *pA = dA + off, *pB = dB + off, *pC = dC + off;
        CHECK_CUDA(cudaMemcpy(pA, a.data(), a.size() * 4, cudaMemcpyHostToDevice));
        CHECK_CUDA(cudaMemcpy(pB, b.data(), b.size() * 4, cudaMemcpyHostToDevice));
        auto reset_c = [&] {
          CHECK_CUDA(cudaMemcpy(pC, c0.data(), c0.size() * 4, cudaMemcpyHostToDevice));
        };
        auto read_c = [&] {
          std::vector<float> c(c0.size());
          CHECK_CUDA(cudaDeviceSynchronize());
          CHECK_CUDA(cudaMemcpy(c.data(), pC, c.size() * 4, cudaMemcpyDeviceToHost));
          return c;
        };
        {
          auto to_d = [](const std::vector<float>& f) {
            std::vector<double> d(f.size());
            for (size_t i = 0; i < f.size(); ++i) d[i] = std::isnan(f[i]) ? 0.0 : f[i];
            return d;
          };
          const auto ad = to_d(a), bd = to_d(b), cd = to_d(c0);
          CHECK_CUDA(cudaMemcpy(dAd, ad.data(), ad.size() * 8, cudaMemcpyHostToDevice));
          CHECK_CUDA(cudaMemcpy(dBd, bd.data(), bd.size() * 8, cudaMemcpyHostToDevice));
          CHECK_CUDA(cudaMemcpy(dCd, cd.data(), cd.size() * 8, cudaMemcpyHostToDevice));
        }
        // Row-major C = op(A) op(B) is column-major C^T = op(B)^T op(A)^T: B first.
        const cublasOperation_t opA = ta ? CUBLAS_OP_T : CUBLAS_OP_N;
        const cublasOperation_t opB = tb ? CUBLAS_OP_T : CUBLAS_OP_N;
        std::vector<double> ref(c0.size());
        {
          const double al = o.alpha, be = o.beta;
          CHECK_CUBLAS(cublasSetMathMode(h, CUBLAS_PEDANTIC_MATH));
          CHECK_CUBLAS(cublasDgemm(h, opB, opA, N, M, K, &al, dBd, ldb, dAd, lda, &be, dCd, ldc));
          CHECK_CUDA(cudaDeviceSynchronize());
          CHECK_CUDA(cudaMemcpy(ref.data(), dCd, ref.size() * 8, cudaMemcpyDeviceToHost));
        }
        auto fp32 = [&] {
          CHECK_CUBLAS(cublasSetMathMode(h, CUBLAS_PEDANTIC_MATH));
          CHECK_CUBLAS(
              cublasSgemm(h, opB, opA, N, M, K, &o.alpha, pB, ldb, pA, lda, &o.beta, pC, ldc));
        };
        auto tf32 = [&] {
          CHECK_CUBLAS(cublasSetMathMode(h, CUBLAS_DEFAULT_MATH));
          CHECK_CUBLAS(cublasGemmEx(h, opB, opA, N, M, K, &o.alpha, pB, CUDA_R_32F, ldb, pA,
                                    CUDA_R_32F, lda, &o.beta, pC, CUDA_R_32F, ldc,
                                    CUBLAS_COMPUTE_32F_FAST_TF32, CUBLAS_GEMM_DEFAULT));
        };
        reset_c();
        fp32();
        const Err e32 = error_of(read_c(), ref, M, N, ldc);
        reset_c();
        tf32();
        const Err etf = error_of(read_c(), ref, M, N, ldc);
        double ms32 = 0, mstf = 0;
        if (o.reps > 0) {
          ms32 = timer.median_ms(o.reps, fp32);
          mstf = timer.median_ms(o.reps, tf32);
        }
        const double flops = 2.0 * M * N * K;
        auto tflops = [&](double ms) { return ms > 0 ? flops / (ms * 1e9) : 0.0; };

        const bool vec =
            !o.force_scalar && sgt_kernel::tf32x3_vec_ok(reinterpret_cast<uintptr_t>(pA), lda,
                                                         reinterpret_cast<uintptr_t>(pB), ldb);
        for (const auto& in : registry()) {
          if (in.wgmma() ? !o.wgmma : (in.trans_a != ta || in.trans_b != tb || in.vec != vec))
            continue;
          if (in.acc == 0 && !o.acc0) continue;
          if (!o.configs.empty() &&
              std::find(o.configs.begin(), o.configs.end(), in.config) == o.configs.end())
            continue;
          if (in.b6)
            CHECK_CUDA(
                cudaFuncSetAttribute(in.b6, cudaFuncAttributeMaxDynamicSharedMemorySize, in.smem));
          else if (in.wg)
            CHECK_CUDA(
                cudaFuncSetAttribute(in.wg, cudaFuncAttributeMaxDynamicSharedMemorySize, in.smem));
          else
            CHECK_CUDA(
                cudaFuncSetAttribute(in.fn, cudaFuncAttributeMaxDynamicSharedMemorySize, in.smem));
          auto d =
              sgt_kernel::launch_dims(M, N, K, in.bm, in.bn, in.bk, in.wgmma() ? 1 : o.split_k);
          // The wgmma kernel's workspace: op(A) and op(B)^T as big and small parts, Kp apart.
          const int Kp = (K + 3) / 4 * 4;
          if (in.wg) d.workspace_floats = 2ull * (static_cast<size_t>(M) + N) * std::max(Kp, 4);
          // The split-BF16 kernel's: three BF16 panels of each operand, rows of Kp8 values.
          const long long Kp8 = sgt_kernel::bf16x6_kp(K);
          if (in.b6)
            d.workspace_floats =
                (static_cast<size_t>(sgt_kernel::bf16x6_workspace_values(M, N, std::max(K, 8))) +
                 1) /
                2;
          if (d.workspace_floats > 0) CHECK_CUDA(cudaMalloc(&dW, d.workspace_floats * 4));
          sgt_kernel::TmaMap maps[4]{};
          float* const a_big = dW;
          float* const a_small = in.wg ? a_big + static_cast<size_t>(M) * Kp : nullptr;
          float* const b_big = in.wg ? a_small + static_cast<size_t>(M) * Kp : nullptr;
          float* const b_small = in.wg ? b_big + static_cast<size_t>(N) * Kp : nullptr;
          // The BF16 panels (tf32x3_wg_geometry.h): big = part 0, small = part 1 (part 2 after it).
          const auto b6_panel = [&](bool b, int part) {
            return reinterpret_cast<float*>(
                reinterpret_cast<char*>(dW) +
                sgt_kernel::wg_panel_byte_offset(2 * b + part, M, N, K, true));
          };
          sgt_kernel::SplitMaps b6_maps{};
          if (in.b6 && M > 0 && N > 0 && K > 0) {
            const CUresult r = sgt_kernel::tma_encode_split_maps(b6_maps, dW, M, N, K, true);
            if (r != CUDA_SUCCESS) {
              std::fprintf(stderr, "cuTensorMapEncodeTiled (BF16 panels): error %d\n",
                           static_cast<int>(r));
              std::exit(2);
            }
          }
          if (in.wg && M > 0 && N > 0 && K > 0) {
            const float* parts[4] = {a_big, a_small, b_big, b_small};
            for (int i = 0; i < 4; ++i) {
              const long long rows = i < 2 ? M : N;
              const auto encode = sgt_kernel::tma_encoder();
              if (!encode) {
                std::fprintf(stderr, "no cuTensorMapEncodeTiled in this driver\n");
                std::exit(2);
              }
              const cuuint64_t dims[2] = {static_cast<cuuint64_t>(Kp),
                                          static_cast<cuuint64_t>(rows)};
              const cuuint64_t strides[1] = {static_cast<cuuint64_t>(Kp) * sizeof(float)};
              const cuuint32_t box[2] = {32, 128}, elem[2] = {1, 1};
              const CUresult r =
                  encode(reinterpret_cast<CUtensorMap*>(&maps[i]), CU_TENSOR_MAP_DATA_TYPE_FLOAT32,
                         2, const_cast<float*>(parts[i]), dims, strides, box, elem,
                         CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_128B,
                         CU_TENSOR_MAP_L2_PROMOTION_L2_256B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
              if (r != CUDA_SUCCESS) {
                std::fprintf(stderr, "cuTensorMapEncodeTiled: error %d\n", static_cast<int>(r));
                std::exit(2);
              }
            }
          }
          bool prepared = false;
          auto run = [&] {
            if (M == 0 || N == 0) return;
            if (in.b6) {
              if (K > 0 && (in.prepass_timed || !prepared)) {
                const dim3 blk(32, 8);
                const unsigned gx = static_cast<unsigned>((Kp8 + 31) / 32);
                const int kp = static_cast<int>(Kp8);
                bf16x6_split_operand<sgt_kernel::kB6Parts><<<dim3(gx, (M + 31) / 32), blk>>>(
                    M, K, kp, pA, lda, ta ? 0 : 1, b6_panel(false, 0), b6_panel(false, 1));
                CHECK_CUDA(cudaGetLastError());
                bf16x6_split_operand<sgt_kernel::kB6Parts><<<dim3(gx, (N + 31) / 32), blk>>>(
                    N, K, kp, pB, ldb, tb ? 1 : 0, b6_panel(true, 0), b6_panel(true, 1));
                CHECK_CUDA(cudaGetLastError());
                prepared = true;
              }
              const unsigned blocks = static_cast<unsigned>(((M + 127) / 128) * ((N + 127) / 128));
              const auto& m = b6_maps;
              in.b6<<<blocks, in.threads, in.smem>>>(
                  M, N, K, o.alpha, *reinterpret_cast<const sgt_kernel::TmaMap*>(&m.a_big),
                  *reinterpret_cast<const sgt_kernel::TmaMap*>(&m.a_small),
                  *reinterpret_cast<const sgt_kernel::TmaMap*>(&m.b_big),
                  *reinterpret_cast<const sgt_kernel::TmaMap*>(&m.b_small), o.beta, pC, ldc);
              CHECK_CUDA(cudaGetLastError());
              return;
            }
            if (in.wg) {
              if (K > 0 && (in.prepass_timed || !prepared)) {
                const dim3 blk(32, 8);
                tf32x3_split_operand<<<dim3((Kp + 31) / 32, (M + 31) / 32), blk>>>(
                    M, K, Kp, pA, lda, ta ? 0 : 1, a_big, a_small);
                CHECK_CUDA(cudaGetLastError());
                tf32x3_split_operand<<<dim3((Kp + 31) / 32, (N + 31) / 32), blk>>>(
                    N, K, Kp, pB, ldb, tb ? 1 : 0, b_big, b_small);
                CHECK_CUDA(cudaGetLastError());
                prepared = true;
              }
              const unsigned blocks = static_cast<unsigned>(((M + 127) / 128) * ((N + 127) / 128));
              in.wg<<<blocks, in.threads, in.smem>>>(M, N, K, o.alpha, maps[0], maps[1], maps[2],
                                                     maps[3], o.beta, pC, ldc);
              CHECK_CUDA(cudaGetLastError());
              return;
            }
            in.fn<<<dim3(static_cast<unsigned>(d.grid_x), 1, d.grid_z), in.threads, in.smem>>>(
                M, N, K, o.alpha, pA, lda, pB, ldb, o.beta, pC, ldc, d.k_chunk, dW);
            CHECK_CUDA(cudaGetLastError());
            if (d.grid_z > 1) {
              sgemm_splitk_reduce<0><<<prop.multiProcessorCount * 4, 256>>>(M, N, d.grid_z, o.alpha,
                                                                            dW, o.beta, pC, ldc);
              CHECK_CUDA(cudaGetLastError());
            }
          };
          reset_c();
          run();
          const auto c = read_c();
          const Err e = error_of(c, ref, M, N, ldc);
          const bool pad_ok = padding_intact(c, c0, M, N, ldc);
          const double ms = o.reps > 0 ? timer.median_ms(o.reps, run) : 0.0;
          if (dW) CHECK_CUDA(cudaFree(dW));
          dW = nullptr;
          auto ratio = [](double x, double y) { return y > 0 ? x / y : (x > 0 ? INFINITY : 0.0); };
          const double rf = ratio(e.fro, e32.fro), rm = ratio(e.max, e32.max);
          std::string status = "ok";
          int level = 0;
          if (!e.finite || !pad_ok || e.fro > std::max(1e-4, 64 * e32.fro)) {
            status = !e.finite ? "wrong_nonfinite" : (!pad_ok ? "wrong_padding" : "wrong");
            level = 2;
          } else if (rf > 1.0) {
            status = "inaccurate";
            level = 1;
          }
          worst = std::max(worst, level);
          std::printf(
              "%d,%d,%d,%s,%s,%d,%d,%d,%d,%d,%g,%g,%s,%d,%s,%s,%.3e,%.3e,%.3e,%.3e,%.3e,%.3f,%.3f,"
              "%.1f,%.4f,%.2f,%.4f,%.2f,%.4f,%.2f,%.3f\n",
              M, N, K, layout.c_str(), input.c_str(), lda, ldb, ldc, o.offset, d.grid_z, o.alpha,
              o.beta, in.config.c_str(), in.acc, vec ? "vec" : "scalar", status.c_str(), e.fro,
              e.max, e32.fro, e32.max, etf.fro, rf, rm, ratio(etf.fro, e32.fro), ms, tflops(ms),
              ms32, tflops(ms32), mstf, tflops(mstf), ms > 0 ? ms32 / ms : 0.0);
          std::fflush(stdout);
        }
        cudaFree(dA);
        cudaFree(dB);
        cudaFree(dC);
        cudaFree(dAd);
        cudaFree(dBd);
        cudaFree(dCd);
      }
    }
  }
  cublasDestroy(h);
  return worst == 2 ? 3 : 0;
}
