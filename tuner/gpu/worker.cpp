// The GPU worker process: owns one CUDA context, the problem's buffers and the cuBLAS reference,
// and answers the protocol of worker_protocol.hpp. Anything that poisons the context ends this
// process after it has answered; the parent records the candidate and starts a fresh worker.
#include "worker.hpp"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <memory>
#include <random>
#include <sstream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>
#include <spdlog/spdlog.h>

#include "bench.hpp"
#include "check.hpp"
#include "sha256.hpp"
#include "worker_protocol.hpp"

namespace sgt::gpu {

namespace {

using nlohmann::json;

// Compares a result with the reference: sum of squared differences, sum of squared reference
// values, and the count of non-finite results (NaN or Inf must fail however small the rest is).
constexpr const char* kCompareSource = R"(
extern "C" __global__ void sgt_compare(const float* c, const float* ref, long long n,
                                       double* sums, unsigned long long* bad) {
  double d = 0.0, r = 0.0;
  unsigned long long nb = 0;
  for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n;
       i += (long long)gridDim.x * blockDim.x) {
    const float x = c[i], y = ref[i];
    if (!(x - x == 0.0f)) ++nb;
    const double e = (double)x - (double)y;
    d += e * e;
    r += (double)y * (double)y;
  }
  for (int o = 16; o > 0; o >>= 1) {
    d += __shfl_down_sync(0xffffffffu, d, o);
    r += __shfl_down_sync(0xffffffffu, r, o);
    nb += __shfl_down_sync(0xffffffffu, nb, o);
  }
  if ((threadIdx.x & 31) == 0) {
    atomicAdd(&sums[0], d);
    atomicAdd(&sums[1], r);
    atomicAdd(bad, nb);
  }
}
)";

std::string uuid_string(const cudaUUID_t& u) {
  std::string s = "GPU-";
  for (int i = 0; i < 16; ++i) {
    if (i == 4 || i == 6 || i == 8 || i == 10) s += '-';
    s += fmt::format("{:02x}", static_cast<unsigned char>(u.bytes[i]));
  }
  return s;
}

GpuFingerprint fingerprint(int dev) {
  cudaDeviceProp p{};
  SGT_CUDA_CHECK(cudaGetDeviceProperties(&p, dev));
  GpuFingerprint f;
  f.name = p.name;
  f.uuid = uuid_string(p.uuid);
  f.cc_major = p.major;
  f.cc_minor = p.minor;
  f.sm_count = p.multiProcessorCount;
  f.memory_bytes = static_cast<long long>(p.totalGlobalMem);
  f.l2_bytes = p.l2CacheSize;
  f.smem_optin_bytes = static_cast<int>(p.sharedMemPerBlockOptin);
  SGT_CUDA_CHECK(cudaDeviceGetAttribute(&f.sm_clock_khz, cudaDevAttrClockRate, dev));
  SGT_CUDA_CHECK(cudaDeviceGetAttribute(&f.mem_clock_khz, cudaDevAttrMemoryClockRate, dev));
  SGT_CUDA_CHECK(cudaDriverGetVersion(&f.driver_version));
  SGT_CUDA_CHECK(cudaRuntimeGetVersion(&f.runtime_version));
  SGT_NVRTC_CHECK(nvrtcVersion(&f.nvrtc_major, &f.nvrtc_minor));
  return f;
}

template <class T>
struct DeviceBuffer {
  T* ptr = nullptr;
  size_t count = 0;
  explicit DeviceBuffer(size_t n) : count(n) {
    SGT_CUDA_CHECK(cudaMalloc(reinterpret_cast<void**>(&ptr), n * sizeof(T)));
  }
  ~DeviceBuffer() {
    if (ptr) cudaFree(ptr);
  }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
};

class Worker {
 public:
  json handle(const json& req) {
    const auto op = req.at("op").get<std::string>();
    if (op == "hello") return hello(req);
    if (op == "problem") return problem(req);
    if (op == "trial") return trial(req);
    if (op == "cublas") return {{"ok", true}, {"cublas", time_cublas(req.at("reps").get<int>())}};
    throw Error("unknown op '" + op + "'");
  }
  bool context_poisoned() const { return poisoned_; }

  ~Worker() {
    if (compare_lib_) cudaLibraryUnload(compare_lib_);
    if (cublas_) cublasDestroy(cublas_);
    if (stream_) cudaStreamDestroy(stream_);
  }

 private:
  json hello(const json& req) {
    if (req.at("protocol").get<int>() != kWorkerProtocol) {
      throw Error(fmt::format("protocol mismatch: worker speaks {}, parent {}", kWorkerProtocol,
                              req.at("protocol").get<int>()));
    }
    int count = 0;
    const cudaError_t e = cudaGetDeviceCount(&count);
    if (e != cudaSuccess || count == 0) {
      return {{"ok", false},
              {"error", fmt::format("no usable CUDA device: {} (is an NVIDIA driver installed and "
                                    "a GPU visible to this process?)",
                                    e != cudaSuccess ? cudaGetErrorString(e)
                                                     : "the driver reports 0 devices")}};
    }
    json devices = json::array();
    int best = 0;
    long long best_score = -1;
    for (int d = 0; d < count; ++d) {
      const auto f = fingerprint(d);
      devices.push_back({{"index", d}, {"name", f.name}, {"sm_count", f.sm_count}});
      const long long score = static_cast<long long>(f.sm_count) * f.sm_clock_khz;
      if (score > best_score) best = d, best_score = score;
    }
    const int want = req.at("gpu").get<int>();
    std::string why;
    if (want >= 0) {
      if (want >= count) {
        return {{"ok", false},
                {"error", fmt::format("--gpu {} does not exist: {} device(s) present (0..{})", want,
                                      count, count - 1)}};
      }
      dev_ = want;
      why = "requested with --gpu";
    } else {
      dev_ = best;
      why = count == 1 ? "the only CUDA device"
                       : fmt::format("most SMs x clock of {} devices", count);
    }
    SGT_CUDA_CHECK(cudaSetDevice(dev_));
    fp_ = fingerprint(dev_);
    SGT_CUDA_CHECK(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking));
    return {{"ok", true}, {"protocol", kWorkerProtocol}, {"device", dev_},
            {"why", why}, {"devices", devices},          {"fingerprint", fp_}};
  }

  void build_compare_kernel() {
    nvrtcProgram prog;
    SGT_NVRTC_CHECK(
        nvrtcCreateProgram(&prog, kCompareSource, "sgt_compare.cu", 0, nullptr, nullptr));
    const std::string arch = "-arch=" + fp_.arch();
    const char* opts[] = {arch.c_str()};
    const nvrtcResult r = nvrtcCompileProgram(prog, 1, opts);
    if (r != NVRTC_SUCCESS) {
      size_t n = 0;
      nvrtcGetProgramLogSize(prog, &n);
      std::string log(n, '\0');
      nvrtcGetProgramLog(prog, log.data());
      nvrtcDestroyProgram(&prog);
      throw Error("cannot compile the verification kernel: " + log);
    }
    size_t n = 0;
    SGT_NVRTC_CHECK(nvrtcGetCUBINSize(prog, &n));
    std::string cubin(n, '\0');
    SGT_NVRTC_CHECK(nvrtcGetCUBIN(prog, cubin.data()));
    SGT_NVRTC_CHECK(nvrtcDestroyProgram(&prog));
    SGT_CUDA_CHECK(
        cudaLibraryLoadData(&compare_lib_, cubin.data(), nullptr, nullptr, 0, nullptr, nullptr, 0));
    SGT_CUDA_CHECK(cudaLibraryGetKernel(&compare_, compare_lib_, "sgt_compare"));
  }

  json problem(const json& req) {
    if (!stream_) throw Error("problem before hello");
    // cuBLAS and the comparison kernel only once there is work: a bare hello (a device probe)
    // stays cheap.
    if (!cublas_) {
      SGT_CUBLAS_CHECK(cublasCreate(&cublas_));
      SGT_CUBLAS_CHECK(cublasSetStream(cublas_, stream_));
      // Plain FP32: no TF32 tensor-op shortcut in the baseline.
      SGT_CUBLAS_CHECK(cublasSetMathMode(cublas_, CUBLAS_PEDANTIC_MATH));
      build_compare_kernel();
    }
    problem_ = req.at("problem").get<Problem>();
    alpha_ = req.at("alpha").get<float>();
    beta_ = req.at("beta").get<float>();
    const auto seed = req.at("seed").get<std::uint64_t>();
    const size_t M = problem_.M, N = problem_.N, K = problem_.K;
    a_.reset();
    b_.reset();
    c_.reset();
    c0_.reset();
    ref_.reset();
    a_ = std::make_unique<DeviceBuffer<float>>(M * K);
    b_ = std::make_unique<DeviceBuffer<float>>(K * N);
    c_ = std::make_unique<DeviceBuffer<float>>(M * N);
    ref_ = std::make_unique<DeviceBuffer<float>>(M * N);
    sums_ = std::make_unique<DeviceBuffer<double>>(2);
    bad_ = std::make_unique<DeviceBuffer<unsigned long long>>(1);

    // Random inputs, never zeros: timing on zeros flatters the hardware.
    std::mt19937_64 rng(seed);
    std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
    std::vector<float> host(std::max(M * K, K * N));
    for (size_t i = 0; i < M * K; ++i) host[i] = dist(rng);
    SGT_CUDA_CHECK(cudaMemcpy(a_->ptr, host.data(), M * K * sizeof(float), cudaMemcpyHostToDevice));
    for (size_t i = 0; i < K * N; ++i) host[i] = dist(rng);
    SGT_CUDA_CHECK(cudaMemcpy(b_->ptr, host.data(), K * N * sizeof(float), cudaMemcpyHostToDevice));

    // With beta != 0 the kernel reads C: both it and the reference start from the same random C0.
    // With beta == 0 C starts as NaN, which a kernel that reads C cannot hide.
    c0_ = std::make_unique<DeviceBuffer<float>>(M * N);
    if (beta_ != 0.0f) {
      host.resize(std::max(host.size(), M * N));
      for (size_t i = 0; i < M * N; ++i) host[i] = dist(rng);
      SGT_CUDA_CHECK(
          cudaMemcpy(c0_->ptr, host.data(), M * N * sizeof(float), cudaMemcpyHostToDevice));
    } else {
      SGT_CUDA_CHECK(cudaMemset(c0_->ptr, 0xFF, M * N * sizeof(float)));
    }

    // Overwriting twice the L2 before each repetition keeps every timing cold-cache.
    bench_ = std::make_unique<Bench>(stream_, 2 * static_cast<size_t>(fp_.l2_bytes));

    SGT_CUDA_CHECK(
        cudaMemcpy(ref_->ptr, c0_->ptr, M * N * sizeof(float), cudaMemcpyDeviceToDevice));
    cublas_gemm(ref_->ptr, stream_);
    SGT_CUDA_CHECK(cudaStreamSynchronize(stream_));
    return {{"ok", true}, {"cublas", time_cublas(req.at("reps").get<int>())}};
  }

  // Row-major C = A*B is column-major C^T = B^T * A^T: swap the operands.
  void cublas_gemm(float* c, cudaStream_t) {
    const int M = static_cast<int>(problem_.M), N = static_cast<int>(problem_.N),
              K = static_cast<int>(problem_.K);
    SGT_CUBLAS_CHECK(cublasSgemm(cublas_, CUBLAS_OP_N, CUBLAS_OP_N, N, M, K, &alpha_, b_->ptr, N,
                                 a_->ptr, K, &beta_, c, N));
  }

  TimeStats time_cublas(int reps) {
    if (!bench_) throw Error("cublas before problem");
    BenchSettings s;
    s.repetitions = reps;
    s.warmup = 2;
    return bench_->run([&](cudaStream_t st) { cublas_gemm(c_->ptr, st); }, s).stats;
  }

  // Relative L2 error of c_ against the reference; +inf when any value is NaN or Inf.
  double verify() {
    SGT_CUDA_CHECK(cudaMemsetAsync(sums_->ptr, 0, 2 * sizeof(double), stream_));
    SGT_CUDA_CHECK(cudaMemsetAsync(bad_->ptr, 0, sizeof(unsigned long long), stream_));
    long long n = problem_.M * problem_.N;
    const float* c = c_->ptr;
    const float* r = ref_->ptr;
    double* sums = sums_->ptr;
    unsigned long long* bad = bad_->ptr;
    void* args[] = {&c, &r, &n, &sums, &bad};
    SGT_CUDA_CHECK(cudaLaunchKernel(reinterpret_cast<const void*>(compare_), dim3(fp_.sm_count * 4),
                                    dim3(256), args, 0, stream_));
    double h[2];
    unsigned long long hb = 0;
    SGT_CUDA_CHECK(cudaMemcpyAsync(h, sums, sizeof(h), cudaMemcpyDeviceToHost, stream_));
    SGT_CUDA_CHECK(cudaMemcpyAsync(&hb, bad, sizeof(hb), cudaMemcpyDeviceToHost, stream_));
    SGT_CUDA_CHECK(cudaStreamSynchronize(stream_));
    if (hb > 0) return INFINITY;
    return h[1] > 0 ? std::sqrt(h[0] / h[1]) : std::sqrt(h[0]);
  }

  json trial(const json& req) {
    if (!bench_) throw Error("trial before problem");
    TrialRequest t;
    t.name = req.at("name");
    t.cubin_path = req.at("cubin");
    t.cubin_sha256 = req.at("sha256");
    t.kernel = req.at("kernel");
    t.grid = req.at("grid");
    t.block = req.at("block");
    t.warmup = req.at("warmup");
    t.repetitions = req.at("reps");
    t.cut_after = req.at("cut_after");
    t.cut_ratio = req.at("cut_ratio");
    t.best_ms = req.at("best_ms");
    t.tolerance = req.at("tolerance");

    // Never load a binary that is not the one the compiler produced.
    std::ifstream in(t.cubin_path, std::ios::binary);
    std::stringstream ss;
    ss << in.rdbuf();
    const std::string cubin = ss.str();
    if (!in || cubin.empty() || sha256_hex(cubin) != t.cubin_sha256) {
      return {{"ok", true},
              {"status", "compile_failed"},
              {"reason", "cached binary missing or its SHA-256 does not match; not loaded"}};
    }

    cudaLibrary_t lib = nullptr;
    TrialResponse out;
    std::string checksum;
    try {
      SGT_CUDA_CHECK(
          cudaLibraryLoadData(&lib, cubin.data(), nullptr, nullptr, 0, nullptr, nullptr, 0));
      cudaKernel_t kernel;
      SGT_CUDA_CHECK(cudaLibraryGetKernel(&kernel, lib, t.kernel.c_str()));
      int M = static_cast<int>(problem_.M), N = static_cast<int>(problem_.N),
          K = static_cast<int>(problem_.K);
      float alpha = alpha_, beta = beta_;
      const float* A = a_->ptr;
      const float* B = b_->ptr;
      float* C = c_->ptr;
      void* args[] = {&M, &N, &K, &alpha, &A, &B, &beta, &C};
      const dim3 grid(t.grid[0], t.grid[1]), block(t.block);
      auto launch = [&](cudaStream_t st) {
        SGT_CUDA_CHECK(
            cudaLaunchKernel(reinterpret_cast<const void*>(kernel), grid, block, args, 0, st));
      };

      // Verify before timing, from C0 (NaN when beta = 0: then the kernel must not read C).
      SGT_CUDA_CHECK(cudaMemcpyAsync(C, c0_->ptr, problem_.M * problem_.N * sizeof(float),
                                     cudaMemcpyDeviceToDevice, stream_));
      launch(stream_);
      SGT_CUDA_CHECK(cudaStreamSynchronize(stream_));
      out.verify_error = verify();
      if (req.value("checksum", false)) {
        std::string host(problem_.M * problem_.N * sizeof(float), '\0');
        SGT_CUDA_CHECK(cudaMemcpy(host.data(), C, host.size(), cudaMemcpyDeviceToHost));
        checksum = sha256_hex(host);
      }
      if (!(out.verify_error <= t.tolerance)) {
        out.status = TrialStatus::incorrect;
        out.reason = std::isfinite(out.verify_error)
                         ? fmt::format("relative L2 error {:.3g} exceeds tolerance {:.1g}",
                                       out.verify_error, t.tolerance)
                         : "result holds NaN or Inf";
      } else {
        BenchSettings s;
        s.warmup = t.warmup;
        s.repetitions = t.repetitions;
        s.cut_after = t.cut_after;
        s.cut_ratio = t.cut_ratio;
        s.best_ms = t.best_ms;
        const auto b = bench_->run(launch, s);
        out.time = b.stats;
        out.cut = b.cut;
      }
    } catch (const Error& e) {
      // A launch refused for its configuration leaves the context usable; a fault does not.
      const cudaError_t sticky = cudaDeviceSynchronize();
      if (sticky != cudaSuccess) {
        poisoned_ = true;
        out.status = TrialStatus::crashed;
        out.reason = fmt::format("{} (context lost: {})", e.what(), cudaGetErrorString(sticky));
      } else {
        cudaGetLastError();
        out.status = TrialStatus::resources;
        out.reason = e.what();
      }
    }
    if (lib && !poisoned_) cudaLibraryUnload(lib);
    json j = {{"ok", true},
              {"status", to_string(out.status)},
              {"reason", out.reason},
              {"verify_error", std::isfinite(out.verify_error) ? out.verify_error : 1e300},
              {"time", out.time},
              {"cut", out.cut}};
    if (!checksum.empty()) j["checksum"] = checksum;
    return j;
  }

  int dev_ = 0;
  GpuFingerprint fp_;
  cudaStream_t stream_ = nullptr;
  cublasHandle_t cublas_ = nullptr;
  cudaLibrary_t compare_lib_ = nullptr;
  cudaKernel_t compare_ = nullptr;
  Problem problem_;
  float alpha_ = 1, beta_ = 0;
  std::unique_ptr<DeviceBuffer<float>> a_, b_, c_, c0_, ref_;
  std::unique_ptr<DeviceBuffer<double>> sums_;
  std::unique_ptr<DeviceBuffer<unsigned long long>> bad_;
  std::unique_ptr<Bench> bench_;
  bool poisoned_ = false;
};

}  // namespace

int run_worker() {
  // stdout is the protocol channel: nothing else may write to it.
  std::ios::sync_with_stdio(false);
  Worker w;
  std::string line;
  while (std::getline(std::cin, line)) {
    if (line.empty()) continue;
    json resp;
    bool bye = false;
    try {
      const json req = json::parse(line);
      bye = req.value("op", "") == "bye";
      if (!bye) resp = w.handle(req);
    } catch (const std::exception& e) {
      resp = {{"ok", false}, {"error", e.what()}};
    }
    if (bye) break;
    std::cout << resp.dump() << '\n' << std::flush;
    if (w.context_poisoned()) {
      // The CUDA context is unusable; the parent replaces this process.
      std::_Exit(3);
    }
  }
  return 0;
}

}  // namespace sgt::gpu
