// The GPU worker process: owns one CUDA context, the problem's buffers, the cuBLAS reference and
// the cuBLASLt peer, and answers the protocol of worker_protocol.hpp. Anything that poisons the
// context ends this process after it has answered; the parent records the candidate and starts a
// fresh worker.
#include "worker.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <cstdio>
#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <map>
#include <memory>
#include <optional>
#include <random>
#include <sstream>
#include <tuple>

#include <cublasLt.h>
#include <fmt/format.h>
#include <nlohmann/json.hpp>
#include <spdlog/spdlog.h>

#include "bench.hpp"
#include "check.hpp"
#include "edge_cases.hpp"
#include "family.hpp"
#include "gpu_select.hpp"
#include "launch_plan.h"
#include "tma_maps.h"
#include "sha256.hpp"
#include "warptile_geometry.h"
#include "worker_protocol.hpp"

namespace sgt::gpu {

using namespace sgt::eval;

namespace {

using nlohmann::json;

// The worker's own kernels. sgt_compare compares a result with the reference: sum of squared
// differences, sum of squared reference values, and the count of non-finite results (NaN or Inf
// must fail however small the rest is). sgt_fill fills the rotation's copies on the device (a
// host fill of twice the L2 per problem would cost more than the timing), in [-1, 1) and never 0:
// timing on zeros flatters the hardware. sgt_spin keeps the GPU busy, touching no memory, while
// the host enqueues a repetition that no flush precedes.
constexpr const char* kHelperSource = R"(
// A warp's sums of squared differences, squared reference values and non-finite values, added
// to the totals (in no fixed order: equal to rounding from run to run).
__device__ void sgt_add_sums(double d, double r, unsigned long long nb, double* sums,
                             unsigned long long* bad) {
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
  sgt_add_sums(d, r, nb, sums, bad);
}

// The accuracy of a result (precision.hpp): like sgt_compare, against an FP64 reference, over the
// rows x cols values of a matrix with leading dimension ld (its padding is not part of the error).
extern "C" __global__ void sgt_compare64(const float* c, const double* ref, long long rows,
                                         long long cols, long long ld, double* sums,
                                         unsigned long long* bad) {
  double d = 0.0, r = 0.0;
  unsigned long long nb = 0;
  const long long n = rows * cols;
  for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n;
       i += (long long)gridDim.x * blockDim.x) {
    const long long at = (i / cols) * ld + i % cols;
    const float x = c[at];
    const double y = ref[at];
    if (!(x - x == 0.0f)) ++nb;
    const double e = (double)x - y;
    d += e * e;
    r += y * y;
  }
  sgt_add_sums(d, r, nb, sums, bad);
}

// The double copy of an operand that the FP64 reference is computed from (every float is exact).
extern "C" __global__ void sgt_widen(const float* x, double* y, long long n) {
  for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n;
       i += (long long)gridDim.x * blockDim.x)
    y[i] = (double)x[i];
}

extern "C" __global__ void sgt_fill(float* x, long long n, unsigned long long seed) {
  for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n;
       i += (long long)gridDim.x * blockDim.x) {
    unsigned long long z = seed + (unsigned long long)i * 0x9E3779B97F4A7C15ull;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    z ^= z >> 31;
    const float v = (float)(z >> 40) * (2.0f / 16777216.0f) - 1.0f;
    x[i] = v != 0.0f ? v : 0.5f;
  }
}

extern "C" __global__ void sgt_spin(unsigned long long ns) {
  unsigned long long t0, t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0));
  do {
#if __CUDA_ARCH__ >= 700
    __nanosleep(1000);
#endif
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  } while (t - t0 < ns);
}
)";

// How long the pre-roll of a rotated repetition keeps the GPU busy: longer than the host takes to
// record the start event and enqueue any side (the launch plan's pool, cuBLAS's heuristics).
constexpr unsigned long long kPreRollNs = 250'000;

// cuBLASLt's workspace when a request names none.
constexpr size_t kDefaultLtWorkspace = size_t{32} << 20;

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
    SGT_CUDA_CHECK(cudaMalloc(reinterpret_cast<void**>(&ptr), std::max<size_t>(n, 1) * sizeof(T)));
  }
  ~DeviceBuffer() {
    if (ptr) cudaFree(ptr);
  }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
};

// The value C's padding (columns ldc - N beyond each row) holds in both the reference and the
// kernel's result: a kernel that writes there differs from the reference and fails.
constexpr float kPaddingSentinel = 12345.0f;

// One GEMM instance on the device: operands as stored for its layout, with leading dimensions and
// an offset from the allocation, the initial C, and cuBLAS's FP32 result from that C. A copy of a
// rotation points into the rotation's memory and owns nothing; only the copy it verifies on has
// C0 and a reference.
struct Instance {
  Problem p;
  long long lda = 0, ldb = 0, ldc = 0;
  int offset = 0;
  float alpha = 1, beta = 0;
  // Each operand's allocation: the operand itself starts `offset` elements in.
  float* a_mem = nullptr;
  float* b_mem = nullptr;
  float* c_mem = nullptr;
  const float* c0_mem = nullptr;  // null: this instance is not verified
  float* ref_mem = nullptr;
  std::vector<std::unique_ptr<DeviceBuffer<float>>> owned;
  // TMA configs: the operands' tensor maps, and what they were encoded for.
  std::unique_ptr<sgt_kernel::TmaMaps> maps;
  std::tuple<const float*, const float*, int, int, long long, long long, long long, int, int, int,
             int, int, bool, bool>
      maps_key{};

  bool trans_a() const { return p.layout[0] == 'T'; }
  bool trans_b() const { return p.layout[1] == 'T'; }
  long long a_rows() const { return trans_a() ? p.K : p.M; }
  long long b_rows() const { return trans_b() ? p.N : p.K; }
  size_t a_elems() const { return static_cast<size_t>(a_rows() * lda + offset); }
  size_t b_elems() const { return static_cast<size_t>(b_rows() * ldb + offset); }
  size_t c_elems() const { return static_cast<size_t>(p.M * ldc + offset); }
  const float* A() const { return a_mem + offset; }
  const float* B() const { return b_mem + offset; }
  float* C() const { return c_mem + offset; }
};

// The operands of a stress case of a trial's accuracy (accuracy_stress_cases(), edge_cases.hpp),
// named by its label.
enum class StressInputs { uniform, exponents, underflow, cancellation };

std::optional<StressInputs> stress_inputs(std::string_view label) {
  if (label == "exponents") return StressInputs::exponents;
  if (label == "underflow") return StressInputs::underflow;
  if (label == "cancellation") return StressInputs::cancellation;
  if (label == "long-K") return StressInputs::uniform;  // its depth is the stress
  return std::nullopt;
}

// Overwrites op(A) (M x K; a) or op(B) (K x N) of an instance, in `host` as the instance stores it,
// with a stress case's values. They load an operand split (a float as the sum of two or three of
// lower precision) where it is weakest:
//  exponents:    +-m 2^e, m in [1, 2) with every mantissa bit random and e in -30..30, so that
//                products of very different magnitudes meet in one sum;
//  underflow:    +-m 2^-60, so that every product lies in [2^-120, 2^-118), a few binades above
//                FP32's smallest normal 2^-126, where the low parts of a split underflow;
//  cancellation: the second half of k repeats the first, negated in A and changed there by up to
//                2^-12, so that every product has its opposite but for that change and each sum
//                nearly cancels (an error in a product is not cancelled with it).
void stress_operand(const Instance& in, bool a, StressInputs inputs, std::mt19937_64& rng,
                    std::vector<float>& host) {
  if (inputs == StressInputs::uniform) return;
  const long long rows = a ? in.p.M : in.p.K, cols = a ? in.p.K : in.p.N;
  const bool trans = a ? in.trans_a() : in.trans_b();
  const long long ld = a ? in.lda : in.ldb;
  // op(X)[r][c] as stored: X row-major, or X^T for a transposed operand.
  const auto at = [&](long long r, long long c) -> float& {
    return host[static_cast<size_t>(in.offset + (trans ? c * ld + r : r * ld + c))];
  };
  std::uniform_real_distribution<float> unit(-1.0f, 1.0f);
  std::uniform_int_distribution<int> exponent(-30, 30);
  std::uniform_int_distribution<std::uint32_t> mantissa(0, (1u << 23) - 1);
  std::bernoulli_distribution negative(0.5);
  const auto signed_mantissa = [&] {
    const float m = 1.0f + static_cast<float>(mantissa(rng)) * 0x1p-23f;
    return negative(rng) ? -m : m;
  };
  switch (inputs) {
    case StressInputs::exponents:
    case StressInputs::underflow:
      for (long long r = 0; r < rows; ++r) {
        for (long long c = 0; c < cols; ++c) {
          const int e = inputs == StressInputs::exponents ? exponent(rng) : -60;
          at(r, c) = std::ldexp(signed_mantissa(), e);
        }
      }
      break;
    case StressInputs::cancellation: {
      // k runs along A's columns and B's rows; with K odd the last k keeps its random values.
      const long long half = (a ? cols : rows) / 2;
      for (long long r = 0; r < (a ? rows : half); ++r) {
        for (long long c = 0; c < (a ? half : cols); ++c) {
          const float v = at(r, c);
          if (a) {
            at(r, c + half) = -v + 0x1p-12f * unit(rng);
          } else {
            at(r + half, c) = v;
          }
        }
      }
      break;
    }
    case StressInputs::uniform:
      break;
  }
}

// The floor of cuBLAS FP32's error in an error ratio: FP32's unit roundoff, an error that no FP32
// result avoids (and a ratio that is defined when cuBLAS happens to be exact).
constexpr double kFp32UnitRoundoff = 0x1p-24;

// A kernel's error against FP64 over cuBLAS FP32's; infinite when the kernel's result holds NaN
// or Inf.
double error_ratio(double kernel_error, double cublas_error) {
  if (!std::isfinite(kernel_error)) return INFINITY;
  return kernel_error / std::max(cublas_error, kFp32UnitRoundoff);
}

std::string error_text(double e) {
  return std::isfinite(e) ? fmt::format("{:.3g}", e) : "inf (the result holds NaN or Inf)";
}

// Stress problems a worker keeps at most (each is a few MB; a session of one tile family needs
// a handful).
constexpr size_t kMaxStressProblems = 64;
// The stress cases' inputs are the same in every session, so a binary's outcome is reproducible.
constexpr std::uint64_t kStressSeed = 0x5354524553530001ull;

// The largest power of two, up to 256, that divides a pointer: what cuBLASLt may assume of it.
std::uint32_t alignment_of(const void* p) {
  const auto a = reinterpret_cast<std::uintptr_t>(p);
  std::uint32_t al = 256;
  while (al > 1 && a % al != 0) al /= 2;
  return al;
}

// The float count a copy's operand takes in the rotation: rounded up to 256 bytes, so that every
// copy is aligned as a cudaMalloc of its own would be, and picks the same kernel instance.
size_t rotation_stride(size_t elems) {
  return (std::max<size_t>(elems, 1) + 63) / 64 * 64;
}

std::string describe_lt_algo(const cublasLtMatmulAlgo_t& algo) {
  auto get = [&](cublasLtMatmulAlgoConfigAttributes_t attr, auto zero) {
    auto v = zero;
    size_t written = 0;
    if (cublasLtMatmulAlgoConfigGetAttribute(&algo, attr, &v, sizeof(v), &written) !=
        CUBLAS_STATUS_SUCCESS)
      return static_cast<long long>(-1);
    return static_cast<long long>(v);
  };
  return fmt::format(
      "id={} tile={} stages={} splitk={} reduction={} swizzle={} custom={} inner={} cluster={}",
      get(CUBLASLT_ALGO_CONFIG_ID, std::int32_t{}),
      get(CUBLASLT_ALGO_CONFIG_TILE_ID, std::uint32_t{}),
      get(CUBLASLT_ALGO_CONFIG_STAGES_ID, std::uint32_t{}),
      get(CUBLASLT_ALGO_CONFIG_SPLITK_NUM, std::int32_t{}),
      get(CUBLASLT_ALGO_CONFIG_REDUCTION_SCHEME, std::uint32_t{}),
      get(CUBLASLT_ALGO_CONFIG_CTA_SWIZZLING, std::uint32_t{}),
      get(CUBLASLT_ALGO_CONFIG_CUSTOM_OPTION, std::uint32_t{}),
      get(CUBLASLT_ALGO_CONFIG_INNER_SHAPE_ID, std::uint16_t{}),
      get(CUBLASLT_ALGO_CONFIG_CLUSTER_SHAPE_ID, std::uint16_t{}));
}

L2Mode l2_of(const nlohmann::json& req) {
  const std::string s = req.value("l2", std::string("flush"));
  const auto m = parse_l2_mode(s);
  if (!m) throw Error(fmt::format("unknown l2 mode '{}' (flush or rotate)", s));
  return *m;
}

// Why there is no device to tune on, and what to run instead. The runtime reports a machine with
// no NVIDIA driver at all (libcuda absent) as "driver version is insufficient", which reads as an
// upgrade to make; the driver version (0: none installed) tells that case from a real old driver.
std::string no_device_message(cudaError_t e) {
  const std::string cuda =
      e != cudaSuccess ? cudaGetErrorString(e) : "the driver reports 0 devices";
  int driver = 0;
  if (cudaDriverGetVersion(&driver) != cudaSuccess) driver = 0;
  if (e == cudaErrorInsufficientDriver && driver > 0) {
    int runtime = 0;
    cudaRuntimeGetVersion(&runtime);
    return fmt::format(
        "no usable CUDA device: the NVIDIA driver supports CUDA {}.{}, older than the CUDA {}.{} "
        "runtime sgemm-tune was built with (CUDA: {}); install a newer driver",
        driver / 1000, driver % 1000 / 10, runtime / 1000, runtime % 1000 / 10, cuda);
  }
  if (e == cudaSuccess || e == cudaErrorInsufficientDriver || e == cudaErrorNoDevice) {
    return fmt::format(
        "no usable CUDA device: no NVIDIA GPU or driver on this machine (CUDA: {}). Tuning "
        "measures on a GPU. Without one, `sgemm-tune tune --dry-run --arch sm_90 --shape "
        "4096x4096x4096` prints what would be tuned, and `sgemm-tune tune --replay "
        "datasets/h200/1024x1024x1024-NN.json.gz --shape 1024x1024x1024 --space auto --strategy "
        "random --max-evals 500 --db replay.db` runs a whole tune from a recorded H200 dataset "
        "(README, \"Tuning without a GPU\")",
        cuda);
  }
  return fmt::format(
      "no usable CUDA device: {} (is an NVIDIA driver installed and a GPU visible to this "
      "process?)",
      cuda);
}

class Worker {
 public:
  json handle(const json& req) {
    const auto op = req.at("op").get<std::string>();
    if (op == "hello") return hello(req);
    if (op == "problem") return problem(req);
    if (op == "trial") return trial(req);
    if (op == "verify") return verify_cases(req);
    if (op == "cublas")
      return {{"ok", true}, {"cublas", time_cublas(req.at("reps").get<int>(), l2_of(req))}};
    if (op == "rotation") return rotation_info();
    if (op == "cublaslt_search") return cublaslt_search(req);
    if (op == "cublaslt") return time_cublaslt(req);
    throw Error("unknown op '" + op + "'");
  }

  bool context_poisoned() const { return poisoned_; }

  ~Worker() {
    lt_.reset();
    if (lt_handle_) cublasLtDestroy(lt_handle_);
    if (compare_lib_) cudaLibraryUnload(compare_lib_);
    if (cublas_) cublasDestroy(cublas_);
    if (stream_) cudaStreamDestroy(stream_);
  }

 private:
  json hello(const json& req) {
    if (req.at("protocol").get<int>() != kWorkerProtocol) {
      throw Error(fmt::format(
          "protocol mismatch: the worker speaks protocol {}, its parent {} (a parent runs its own "
          "binary as the worker: was sgemm-tune replaced while it ran?)",
          kWorkerProtocol, req.at("protocol").get<int>()));
    }
    int count = 0;
    const cudaError_t e = cudaGetDeviceCount(&count);
    if (e != cudaSuccess || count == 0) {
      return {{"ok", false}, {"error", no_device_message(e)}};
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
    const std::string want_name = req.value("gpu_name", std::string());
    std::string why;
    if (!want_name.empty()) {
      std::vector<std::string> names;
      std::string listing;
      for (const auto& d : devices) {
        names.push_back(d.at("name").get<std::string>());
        listing += fmt::format("\n  {}: {}", d.at("index").get<int>(), names.back());
      }
      const auto found = match_gpu_names(names, {}, want_name);
      if (found.size() != 1) {
        return {{"ok", false},
                {"error", fmt::format("--gpu '{}' {} of the {} CUDA device(s) here{}{}", want_name,
                                      found.empty() ? "names none" : "names several", count,
                                      found.empty() ? "" : " (give a device index)", listing)}};
      }
      dev_ = static_cast<int>(found.front());
      why = fmt::format("named by --gpu '{}'", want_name);
    } else if (want >= 0) {
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

  void build_helper_kernels() {
    nvrtcProgram prog;
    SGT_NVRTC_CHECK(
        nvrtcCreateProgram(&prog, kHelperSource, "sgt_helpers.cu", 0, nullptr, nullptr));
    const std::string arch = "-arch=" + fp_.arch();
    const char* opts[] = {arch.c_str()};
    const nvrtcResult r = nvrtcCompileProgram(prog, 1, opts);
    if (r != NVRTC_SUCCESS) {
      size_t n = 0;
      nvrtcGetProgramLogSize(prog, &n);
      std::string log(n, '\0');
      nvrtcGetProgramLog(prog, log.data());
      nvrtcDestroyProgram(&prog);
      throw Error("cannot compile the worker's verification kernels: " + log);
    }
    size_t n = 0;
    SGT_NVRTC_CHECK(nvrtcGetCUBINSize(prog, &n));
    std::string cubin(n, '\0');
    SGT_NVRTC_CHECK(nvrtcGetCUBIN(prog, cubin.data()));
    SGT_NVRTC_CHECK(nvrtcDestroyProgram(&prog));
    SGT_CUDA_CHECK(
        cudaLibraryLoadData(&compare_lib_, cubin.data(), nullptr, nullptr, 0, nullptr, nullptr, 0));
    SGT_CUDA_CHECK(cudaLibraryGetKernel(&compare_, compare_lib_, "sgt_compare"));
    SGT_CUDA_CHECK(cudaLibraryGetKernel(&fill_, compare_lib_, "sgt_fill"));
    SGT_CUDA_CHECK(cudaLibraryGetKernel(&spin_, compare_lib_, "sgt_spin"));
    SGT_CUDA_CHECK(cudaLibraryGetKernel(&compare64_, compare_lib_, "sgt_compare64"));
    SGT_CUDA_CHECK(cudaLibraryGetKernel(&widen_, compare_lib_, "sgt_widen"));
  }

  void ensure_cublas() {
    if (cublas_) return;
    SGT_CUBLAS_CHECK(cublasCreate(&cublas_));
    SGT_CUBLAS_CHECK(cublasSetStream(cublas_, stream_));
    // Plain FP32: no TF32 tensor-op shortcut in the baseline.
    SGT_CUBLAS_CHECK(cublasSetMathMode(cublas_, CUBLAS_PEDANTIC_MATH));
    build_helper_kernels();
  }

  // Allocates and fills an instance: random operands (never zeros: timing on zeros flatters the
  // hardware), C0 random when beta != 0 and NaN when beta == 0 (a kernel that reads C then cannot
  // hide it), C's padding a finite sentinel, and the cuBLAS reference computed from C0. A stress
  // case's operands are built as `inputs` says (StressInputs).
  std::unique_ptr<Instance> make_instance(const Problem& p, long long lda, long long ldb,
                                          long long ldc, int offset, float alpha, float beta,
                                          std::uint64_t seed,
                                          StressInputs inputs = StressInputs::uniform) {
    ensure_cublas();
    auto in = std::make_unique<Instance>();
    in->p = p;
    in->lda = lda;
    in->ldb = ldb;
    in->ldc = ldc;
    in->offset = offset;
    in->alpha = alpha;
    in->beta = beta;
    auto alloc = [&](size_t n) {
      in->owned.push_back(std::make_unique<DeviceBuffer<float>>(n));
      return in->owned.back()->ptr;
    };
    in->a_mem = alloc(in->a_elems());
    in->b_mem = alloc(in->b_elems());
    in->c_mem = alloc(in->c_elems());
    float* c0 = alloc(in->c_elems());
    in->c0_mem = c0;
    in->ref_mem = alloc(in->c_elems());
    std::mt19937_64 rng(seed);
    std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
    std::vector<float> host(std::max({in->a_elems(), in->b_elems(), in->c_elems()}));
    auto upload = [&](float* dst, size_t n) {
      SGT_CUDA_CHECK(cudaMemcpy(dst, host.data(), n * sizeof(float), cudaMemcpyHostToDevice));
    };
    for (size_t i = 0; i < in->a_elems(); ++i) host[i] = dist(rng);
    stress_operand(*in, true, inputs, rng, host);
    upload(in->a_mem, in->a_elems());
    for (size_t i = 0; i < in->b_elems(); ++i) host[i] = dist(rng);
    stress_operand(*in, false, inputs, rng, host);
    upload(in->b_mem, in->b_elems());
    const float nan = std::numeric_limits<float>::quiet_NaN();
    for (size_t i = 0; i < in->c_elems(); ++i) {
      const long long e = static_cast<long long>(i) - offset;
      const bool inside = e >= 0 && e % ldc < p.N;
      host[i] = !inside ? kPaddingSentinel : (beta != 0.0f ? dist(rng) : nan);
    }
    upload(c0, in->c_elems());
    SGT_CUDA_CHECK(
        cudaMemcpy(in->ref_mem, c0, in->c_elems() * sizeof(float), cudaMemcpyDeviceToDevice));
    cublas_gemm(*in, in->ref_mem + offset);
    SGT_CUDA_CHECK(cudaStreamSynchronize(stream_));
    return in;
  }

  json problem(const json& req) {
    if (!stream_) throw Error("problem before hello");
    const Problem p = req.at("problem").get<Problem>();
    const long long pad = req.value("pad", 0LL);
    const int offset = req.value("offset", 0);
    const bool ta = p.layout[0] == 'T', tb = p.layout[1] == 'T';
    // The rotation's copies and cuBLASLt's layouts belong to the old problem.
    rot_.reset();
    lt_.reset();
    inst_.reset();
    ref64_.reset();
    cublas_error64_ = -1;
    seed_ = req.at("seed").get<std::uint64_t>();
    inst_ = make_instance(p, (ta ? p.M : p.K) + pad, (tb ? p.K : p.N) + pad, p.N + pad, offset,
                          req.at("alpha").get<float>(), req.at("beta").get<float>(), seed_);
    // Overwriting twice the L2 before each repetition keeps every timing cold-cache.
    bench_ = std::make_unique<Bench>(stream_, 2 * static_cast<size_t>(fp_.l2_bytes));
    return {{"ok", true}, {"cublas", time_cublas(req.at("reps").get<int>(), L2Mode::flush)}};
  }

  // The copies a rotated timing cycles through, made on first use for the current problem: each
  // with the instance's leading dimensions, offset and alignment, random operands of its own, and
  // one (the last) verified against a cuBLAS reference of its own.
  struct Rotation {
    std::unique_ptr<DeviceBuffer<float>> memory, ref;
    std::vector<Instance> copies;
    long long set_bytes = 0;
    int verified = 0;
  };

  Rotation& rotation() {
    if (!bench_ || !inst_) throw Error("rotation before problem");
    if (rot_) return *rot_;
    const Instance& in = *inst_;
    const size_t sa = rotation_stride(in.a_elems()), sb = rotation_stride(in.b_elems()),
                 sc = rotation_stride(in.c_elems());
    const size_t set = sa + sb + sc;
    auto r = std::make_unique<Rotation>();
    r->set_bytes = static_cast<long long>(set * sizeof(float));
    const int copies = rotation_copies(fp_.l2_bytes, r->set_bytes);
    const size_t bytes = static_cast<size_t>(copies) * set * sizeof(float);
    size_t free_bytes = 0, total_bytes = 0;
    SGT_CUDA_CHECK(cudaMemGetInfo(&free_bytes, &total_bytes));
    // Leave room for the launch plan's workspace and cuBLAS's.
    if (bytes + in.c_elems() * sizeof(float) > free_bytes / 10 * 9) {
      throw Error(fmt::format(
          "the cold-L2 rotation of {} needs {} copies of {:.1f} MiB ({:.2f} GiB), and the GPU has "
          "{:.2f} GiB free",
          in.p.shape(), copies, r->set_bytes / 1048576.0, bytes / 1073741824.0,
          free_bytes / 1073741824.0));
    }
    r->memory = std::make_unique<DeviceBuffer<float>>(static_cast<size_t>(copies) * set);
    {
      float* x = r->memory->ptr;
      long long n = static_cast<long long>(static_cast<size_t>(copies) * set);
      unsigned long long seed = seed_ ^ 0x726f74617465ull;  // not the instance's own numbers
      void* args[] = {&x, &n, &seed};
      SGT_CUDA_CHECK(cudaLaunchKernel(reinterpret_cast<const void*>(fill_), dim3(fp_.sm_count * 4),
                                      dim3(256), args, 0, stream_));
    }
    r->ref = std::make_unique<DeviceBuffer<float>>(in.c_elems());
    r->copies.resize(static_cast<size_t>(copies));
    for (int i = 0; i < copies; ++i) {
      Instance& c = r->copies[static_cast<size_t>(i)];
      c.p = in.p;
      c.lda = in.lda;
      c.ldb = in.ldb;
      c.ldc = in.ldc;
      c.offset = in.offset;
      c.alpha = in.alpha;
      c.beta = in.beta;
      c.a_mem = r->memory->ptr + static_cast<size_t>(i) * set;
      c.b_mem = c.a_mem + sa;
      c.c_mem = c.b_mem + sb;
    }
    r->verified = copies - 1;
    Instance& v = r->copies.back();
    // The instance's C0 fits: the same shape, leading dimension and offset (padding sentinel and
    // NaN when beta == 0 included).
    v.c0_mem = in.c0_mem;
    v.ref_mem = r->ref->ptr;
    SGT_CUDA_CHECK(cudaMemcpyAsync(v.ref_mem, v.c0_mem, in.c_elems() * sizeof(float),
                                   cudaMemcpyDeviceToDevice, stream_));
    cublas_gemm(v, v.ref_mem + v.offset);
    SGT_CUDA_CHECK(cudaStreamSynchronize(stream_));
    bench_->set_rotation(copies, [this](cudaStream_t st) {
      unsigned long long ns = kPreRollNs;
      void* args[] = {&ns};
      SGT_CUDA_CHECK(
          cudaLaunchKernel(reinterpret_cast<const void*>(spin_), dim3(1), dim3(1), args, 0, st));
    });
    bench_->used(r->verified);
    rot_ = std::move(r);
    return *rot_;
  }

  json rotation_info() {
    const Rotation& r = rotation();
    return {{"ok", true},
            {"copies", r.copies.size()},
            {"set_bytes", r.set_bytes},
            {"l2_bytes", fp_.l2_bytes}};
  }

  // The operands a launch of a timing takes: the instance, or a rotation's copy.
  Instance& operands(L2Mode l2, int copy) {
    return l2 == L2Mode::rotate ? rot_->copies.at(static_cast<size_t>(copy)) : *inst_;
  }

  // Row-major C = op(A) op(B) is column-major C^T = op(B)^T op(A)^T, and a row-major stored
  // matrix is its own transpose in column-major terms: swap the operands, keep each one's op.
  void cublas_gemm(const Instance& in, float* c) {
    const int M = static_cast<int>(in.p.M), N = static_cast<int>(in.p.N),
              K = static_cast<int>(in.p.K);
    if (M == 0 || N == 0) return;
    SGT_CUBLAS_CHECK(cublasSgemm(cublas_, in.trans_b() ? CUBLAS_OP_T : CUBLAS_OP_N,
                                 in.trans_a() ? CUBLAS_OP_T : CUBLAS_OP_N, N, M, K, &in.alpha,
                                 in.B(), static_cast<int>(in.ldb), in.A(), static_cast<int>(in.lda),
                                 &in.beta, c, static_cast<int>(in.ldc)));
  }

  TimeStats time_cublas(int reps, L2Mode l2) {
    if (!bench_ || !inst_) throw Error("cublas before problem");
    if (l2 == L2Mode::rotate) rotation();
    BenchSettings s;
    s.repetitions = reps;
    s.warmup = 2;
    s.l2 = l2;
    return bench_
        ->run(
            [&](cudaStream_t, int copy) {
              Instance& in = operands(l2, copy);
              cublas_gemm(in, in.C());
            },
            s)
        .stats;
  }

  // Relative L2 error of the instance's C (the whole allocation: padding included) against the
  // reference; +inf when any value is NaN or Inf.
  double verify(const Instance& in) {
    if (!in.ref_mem) throw Error("verification of an instance without a reference");
    SGT_CUDA_CHECK(cudaMemsetAsync(sums_->ptr, 0, 2 * sizeof(double), stream_));
    SGT_CUDA_CHECK(cudaMemsetAsync(bad_->ptr, 0, sizeof(unsigned long long), stream_));
    long long n = static_cast<long long>(in.c_elems());
    const float* c = in.c_mem;
    const float* r = in.ref_mem;
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

  // A loaded candidate: the library stays loaded while the object lives (unless the context is
  // lost, when unloading is pointless).
  struct Loaded {
    cudaLibrary_t lib = nullptr;
    cudaKernel_t kernel = nullptr, reduce = nullptr, pack = nullptr;
    bool* poisoned = nullptr;
    ~Loaded() {
      if (lib && !*poisoned) cudaLibraryUnload(lib);
    }
  };

  // Never load a binary that is not the one the compiler produced: nullopt-like empty string
  // when the file is missing or its hash differs.
  static std::string read_checked(const std::string& path, const std::string& sha) {
    std::ifstream in(path, std::ios::binary);
    std::stringstream ss;
    ss << in.rdbuf();
    std::string cubin = ss.str();
    if (!in || cubin.empty() || sha256_hex(cubin) != sha) return {};
    return cubin;
  }

  void load(Loaded& l, const std::string& cubin, const std::string& kernel,
            const std::string& reduce, const std::string& pack) {
    l.poisoned = &poisoned_;
    SGT_CUDA_CHECK(
        cudaLibraryLoadData(&l.lib, cubin.data(), nullptr, nullptr, 0, nullptr, nullptr, 0));
    SGT_CUDA_CHECK(cudaLibraryGetKernel(&l.kernel, l.lib, kernel.c_str()));
    if (!reduce.empty()) SGT_CUDA_CHECK(cudaLibraryGetKernel(&l.reduce, l.lib, reduce.c_str()));
    if (!pack.empty()) SGT_CUDA_CHECK(cudaLibraryGetKernel(&l.pack, l.lib, pack.c_str()));
  }
  // A kernel's dynamic shared memory (a TMA kernel's, a split-TF32 kernel's stages) may be above
  // the 48 KB a launch gets without asking.
  static void allow_dynamic_smem(const Loaded& l, const LaunchTile& tile) {
    if (tile.smem_bytes > 0)
      SGT_CUDA_CHECK(cudaFuncSetAttribute(reinterpret_cast<const void*>(l.kernel),
                                          cudaFuncAttributeMaxDynamicSharedMemorySize,
                                          tile.smem_bytes));
  }

  // TMA configs: the tensor maps of an instance's operands, encoded once per instance and tile.
  // Operands a tensor copy cannot read are a failed launch, never a silent fallback: the tuner
  // only gives a TMA config problems and edge cases its kernel takes.
  // trans_a, trans_b: the kernel instance's layout (TN on PACK's panels).
  const sgt_kernel::TmaMaps& tma_maps(const LaunchTile& tile, Instance& in, bool trans_a,
                                      bool trans_b, const float* A, int lda, const float* B,
                                      int ldb) {
    if (!sgt_kernel::tma_operand(A, lda) || !sgt_kernel::tma_operand(B, ldb))
      throw Error(fmt::format(
          "TMA = 1 needs 16-byte aligned operands with leading dimensions that are multiples of "
          "4 (lda {}, ldb {}, offset {} floats)",
          lda, ldb, in.offset));
    const auto key = std::make_tuple(A, B, lda, ldb, in.p.M, in.p.N, in.p.K, tile.BM, tile.BN,
                                     tile.BK, tile.pad_a, tile.pad_b, trans_a, trans_b);
    if (!in.maps || in.maps_key != key) {
      const auto g = sgt_kernel::make_geometry(tile.BM, tile.BN, tile.BK, 1, 1, 1, 1, 1, 1, 1,
                                               tile.pad_a, tile.pad_b);  // the boxes need no more
      auto maps = std::make_unique<sgt_kernel::TmaMaps>();
      const CUresult r = sgt_kernel::tma_encode_maps(*maps, g, trans_a, trans_b, in.p.M, in.p.N,
                                                     in.p.K, A, lda, B, ldb);
      if (r != CUDA_SUCCESS)
        throw Error(fmt::format("cuTensorMapEncodeTiled failed ({})", static_cast<int>(r)));
      in.maps = std::move(maps);
      in.maps_key = key;
    }
    return *in.maps;
  }

  // Launches the candidate on an instance (from whatever C holds): the launch plan that
  // sgemm_tuned runs too (launch_plan.h), with the pack, reduction and tile kernels of its cubin.
  void launch(const Loaded& l, const LaunchTile& tile, unsigned block, Instance& in,
              cudaStream_t st) {
    const auto aligned = [](const float* p) { return reinterpret_cast<uintptr_t>(p) % 16 == 0; };
    int M = static_cast<int>(in.p.M), N = static_cast<int>(in.p.N), K = static_cast<int>(in.p.K);
    const int lda = static_cast<int>(in.lda), ldb = static_cast<int>(in.ldb),
              ldc = static_cast<int>(in.ldc);
    const float* A = in.A();
    const float* B = in.B();
    float* C = in.C();
    const auto plan = sgt_kernel::plan_call(
        {tile.BM, tile.BN, tile.BK, tile.split_k, l.pack != nullptr, tile.tma != 0}, M, N, K,
        in.trans_a(), in.trans_b(), A, aligned(A), lda, B, aligned(B), ldb, fp_.sm_count,
        fp_.cc_major >= 9);
    if (plan.too_large) throw Error("grid too large for this problem");
    if (plan.reduce_blocks > 0 && !l.reduce)
      throw Error("split-K launch without a reduction kernel");
    const void* kernel = reinterpret_cast<const void*>(l.kernel);
    std::string refused;  // why the tile step launched nothing (run_call still frees)
    const auto tile_step = [&](const float* a, int la, const float* b, int lb, float* work) {
      if (!tile.tma)
        return sgt_kernel::launch_warptile(kernel, plan, block, M, N, K, in.alpha, a, la, b, lb,
                                           in.beta, C, ldc, work, st,
                                           static_cast<size_t>(tile.smem_bytes));
      // With K = 0 the kernel copies nothing: zero maps, and the operands need nothing.
      static const sgt_kernel::TmaMaps kNoCopies{};
      const sgt_kernel::TmaMaps* maps = &kNoCopies;
      if (K > 0) {
        try {
          maps = &tma_maps(tile, in, plan.trans_a, plan.trans_b, a, la, b, lb);
        } catch (const Error& e) {
          refused = e.what();
          return cudaErrorInvalidValue;
        }
      }
      return sgt_kernel::launch_ws_tma(kernel, plan, block, static_cast<size_t>(tile.smem_bytes),
                                       maps->a, maps->b, M, N, K, in.alpha, in.beta, C, ldc, work,
                                       st);
    };
    const cudaError_t e = sgt_kernel::run_call(
        plan, reinterpret_cast<const void*>(l.pack), reinterpret_cast<const void*>(l.reduce), M, N,
        K, in.alpha, A, lda, B, ldb, in.beta, C, ldc, call_pool(), st, tile_step);
    if (!refused.empty()) throw Error(refused);
    SGT_CUDA_CHECK(e);
  }

  // Runs the candidate once from C0 and waits for it.
  void run_from_c0(const Loaded& l, const LaunchTile& tile, unsigned block, Instance& in) {
    if (!in.c0_mem) throw Error("verification of an instance without C0");
    SGT_CUDA_CHECK(cudaMemcpyAsync(in.c_mem, in.c0_mem, in.c_elems() * sizeof(float),
                                   cudaMemcpyDeviceToDevice, stream_));
    launch(l, tile, block, in, stream_);
    SGT_CUDA_CHECK(cudaStreamSynchronize(stream_));
  }

  // Runs one verification from C0; the relative error.
  double run_and_verify(const Loaded& l, const LaunchTile& tile, unsigned block, Instance& in) {
    run_from_c0(l, tile, block, in);
    return verify(in);
  }

  // ---- Accuracy against FP64 (precision.hpp; the trial request's accuracy and stress) ----

  void widen(const float* x, double* y, size_t count) {
    long long n = static_cast<long long>(count);
    void* args[] = {&x, &y, &n};
    SGT_CUDA_CHECK(cudaLaunchKernel(reinterpret_cast<const void*>(widen_), dim3(fp_.sm_count * 4),
                                    dim3(256), args, 0, stream_));
  }

  // The FP64 reference of an instance: cublasDgemm on double copies of its A, B and C0 with its
  // alpha and beta (beta = 0 reads no C, as cublasSgemm's reference does not), laid out as C.
  std::unique_ptr<DeviceBuffer<double>> reference64(const Instance& in) {
    ensure_cublas();
    auto c64 = std::make_unique<DeviceBuffer<double>>(in.c_elems());
    widen(in.c0_mem, c64->ptr, in.c_elems());
    if (in.p.M > 0 && in.p.N > 0) {
      DeviceBuffer<double> a64(in.a_elems()), b64(in.b_elems());
      widen(in.a_mem, a64.ptr, in.a_elems());
      widen(in.b_mem, b64.ptr, in.b_elems());
      const double alpha = in.alpha, beta = in.beta;
      // As cublas_gemm: the operands swapped, each keeping its op.
      SGT_CUBLAS_CHECK(cublasDgemm(
          cublas_, in.trans_b() ? CUBLAS_OP_T : CUBLAS_OP_N,
          in.trans_a() ? CUBLAS_OP_T : CUBLAS_OP_N, static_cast<int>(in.p.N),
          static_cast<int>(in.p.M), static_cast<int>(in.p.K), &alpha, b64.ptr + in.offset,
          static_cast<int>(in.ldb), a64.ptr + in.offset, static_cast<int>(in.lda), &beta,
          c64->ptr + in.offset, static_cast<int>(in.ldc)));
      SGT_CUDA_CHECK(cudaStreamSynchronize(stream_));  // before the copies are freed
    }
    SGT_CUDA_CHECK(cudaStreamSynchronize(stream_));
    return c64;
  }

  // Relative L2 error of an M x N result (`c`: its first value, rows ldc apart) against an FP64
  // reference laid out alike; +inf when a value is NaN or Inf.
  double error64(const Instance& in, const float* c, const double* ref) {
    if (in.p.M == 0 || in.p.N == 0) return 0;
    ensure_scratch();
    SGT_CUDA_CHECK(cudaMemsetAsync(sums_->ptr, 0, 2 * sizeof(double), stream_));
    SGT_CUDA_CHECK(cudaMemsetAsync(bad_->ptr, 0, sizeof(unsigned long long), stream_));
    long long rows = in.p.M, cols = in.p.N, ld = in.ldc;
    double* sums = sums_->ptr;
    unsigned long long* bad = bad_->ptr;
    void* args[] = {&c, &ref, &rows, &cols, &ld, &sums, &bad};
    SGT_CUDA_CHECK(cudaLaunchKernel(reinterpret_cast<const void*>(compare64_),
                                    dim3(fp_.sm_count * 4), dim3(256), args, 0, stream_));
    double h[2];
    unsigned long long hb = 0;
    SGT_CUDA_CHECK(cudaMemcpyAsync(h, sums, sizeof(h), cudaMemcpyDeviceToHost, stream_));
    SGT_CUDA_CHECK(cudaMemcpyAsync(&hb, bad, sizeof(hb), cudaMemcpyDeviceToHost, stream_));
    SGT_CUDA_CHECK(cudaStreamSynchronize(stream_));
    if (hb > 0) return INFINITY;
    if (!std::isfinite(h[0]) || !std::isfinite(h[1]))
      throw Error(
          fmt::format("the FP64 reference of {} {} holds NaN or Inf", in.p.shape(), in.p.layout));
    return h[1] > 0 ? std::sqrt(h[0] / h[1]) : std::sqrt(h[0]);
  }

  // The current problem's FP64 reference and cuBLAS FP32's error against it: once per problem.
  void ensure_accuracy_reference() {
    if (ref64_) return;
    auto ref = reference64(*inst_);
    cublas_error64_ = error64(*inst_, inst_->ref_mem + inst_->offset, ref->ptr + inst_->offset);
    ref64_ = std::move(ref);
  }

  // One stress case's problem: its instance (inputs by its label, cuBLAS's FP32 result), its FP64
  // reference and cuBLAS's error against it. Made once per worker and shared by every candidate.
  struct StressProblem {
    std::unique_ptr<Instance> inst;
    std::unique_ptr<DeviceBuffer<double>> ref64;
    double cublas_error = 0;
  };

  StressProblem& stress_problem(const EdgeCheck& c) {
    const std::string key = json(c).dump();
    if (const auto it = stress_problems_.find(key); it != stress_problems_.end())
      return *it->second;
    const auto inputs = stress_inputs(c.label);
    if (!inputs)
      throw Error(fmt::format(
          "unknown stress case '{}' (exponents, underflow, cancellation or long-K)", c.label));
    if (!is_layout(c.problem.layout) || c.problem.M < 1 || c.problem.N < 1 || c.problem.K < 1)
      throw Error(fmt::format("bad stress case {}", describe(c)));
    auto sp = std::make_unique<StressProblem>();
    sp->inst = make_instance(c.problem, c.lda, c.ldb, c.ldc, c.offset, c.alpha, c.beta, kStressSeed,
                             *inputs);
    sp->ref64 = reference64(*sp->inst);
    const Instance& in = *sp->inst;
    sp->cublas_error = error64(in, in.ref_mem + in.offset, sp->ref64->ptr + in.offset);
    return *stress_problems_.emplace(key, std::move(sp)).first->second;
  }

  // A binary's worst error ratio over the stress cases, and that case.
  struct StressOutcome {
    double ratio = -1;
    double error = 0, cublas_error = 0;
    std::string label;  // "underflow 128x128x1024 NN"
  };

  // The candidate on every stress case, each from its C0; kept per binary and cases.
  StressOutcome stress_outcome(const Loaded& l, const TrialRequest& t, const std::string& key) {
    if (const auto it = stress_done_.find(key); it != stress_done_.end()) return it->second;
    StressOutcome worst;
    for (const auto& c : t.stress) {
      StressProblem& sp = stress_problem(c);
      Instance& in = *sp.inst;
      run_from_c0(l, t.tile, t.block, in);
      const double e = error64(in, in.C(), sp.ref64->ptr + in.offset);
      const double r = error_ratio(e, sp.cublas_error);
      if (worst.ratio < 0 || !(r <= worst.ratio)) {
        worst.ratio = r;
        worst.error = e;
        worst.cublas_error = sp.cublas_error;
        worst.label = fmt::format("{} {}", c.label, describe(c));
      }
    }
    stress_done_.emplace(key, worst);
    return worst;
  }

  // The accuracy of a verified candidate (its error against FP64 on the problem is `error`): the
  // ratios in the response, and status inaccurate with the numbers when one exceeds the bound.
  void judge_accuracy(const Loaded& l, const TrialRequest& t, const std::string& stress_key,
                      double error, TrialResponse& out) {
    out.error_ratio = error_ratio(error, cublas_error64_);
    std::string why;
    if (!(out.error_ratio <= kAccurateErrorRatioMax)) {
      why = fmt::format(
          "error ratio {:.3g} on the problem exceeds {:g}: relative L2 error {} against an FP64 "
          "reference, cuBLAS FP32's {:.3g}",
          out.error_ratio, kAccurateErrorRatioMax, error_text(error), cublas_error64_);
    }
    if (!t.stress.empty()) {
      const StressOutcome s = stress_outcome(l, t, stress_key);
      out.stress_ratio = s.ratio;
      out.stress_case = s.label;
      if (!(s.ratio <= kAccurateErrorRatioMax)) {
        why += fmt::format(
            "{}error ratio {:.3g} on stress case {} exceeds {:g}: relative L2 error {} against "
            "FP64, cuBLAS FP32's {:.3g}",
            why.empty() ? "" : "; ", s.ratio, s.label, kAccurateErrorRatioMax, error_text(s.error),
            s.cublas_error);
      }
    }
    if (!why.empty()) {
      out.status = TrialStatus::inaccurate;
      out.reason = why;
    }
  }

  // A failure while running a candidate: a refused launch leaves the context usable, a fault
  // does not (then the worker exits after answering).
  void classify_failure(const Error& e, TrialStatus& status, std::string& reason) {
    const cudaError_t sticky = cudaDeviceSynchronize();
    if (sticky != cudaSuccess) {
      poisoned_ = true;
      status = TrialStatus::crashed;
      reason = fmt::format("{} (context lost: {})", e.what(), cudaGetErrorString(sticky));
    } else {
      cudaGetLastError();
      status = TrialStatus::resources;
      reason = e.what();
    }
  }

  void ensure_scratch() {
    if (!sums_) sums_ = std::make_unique<DeviceBuffer<double>>(2);
    if (!bad_) bad_ = std::make_unique<DeviceBuffer<unsigned long long>>(1);
  }

  json trial(const json& req) {
    if (!bench_ || !inst_) throw Error("trial before problem");
    ensure_scratch();
    const TrialRequest t = trial_request_from_json(req);
    // Made before the candidate runs: a rotation that does not fit fails the request, never the
    // candidate.
    if (t.l2 == L2Mode::rotate) rotation();
    // So are the references its accuracy is measured against (once per problem, and per stress
    // case): a failure there is the worker's, not the candidate's.
    std::string stress_key;
    if (t.accuracy) {
      ensure_accuracy_reference();
      if (!t.stress.empty()) {
        stress_key = t.cubin_sha256 + json(t.stress).dump();
        if (!stress_done_.count(stress_key)) {
          if (stress_problems_.size() + t.stress.size() > kMaxStressProblems)
            stress_problems_.clear();
          for (const auto& c : t.stress) stress_problem(c);
        }
      }
    }
    TrialResponse out;
    const std::string cubin = read_checked(t.cubin_path, t.cubin_sha256);
    if (cubin.empty()) {
      out.status = TrialStatus::compile_failed;
      out.reason = "cached binary missing or its SHA-256 does not match; not loaded";
      return trial_response_json(out);
    }
    {
      Loaded l;
      try {
        load(l, cubin, t.kernel, t.reduce_kernel, t.pack_kernel);
        allow_dynamic_smem(l, t.tile);
        // Verify before timing, from C0 (NaN when beta = 0: then the kernel must not read C).
        out.verify_error = run_and_verify(l, t.tile, t.block, *inst_);
        // Its error against FP64 while C holds the result (timing overwrites it).
        double error = -1;
        if (t.accuracy && out.verify_error <= t.tolerance)
          error = error64(*inst_, inst_->C(), ref64_->ptr + inst_->offset);
        if (t.checksum) {
          std::string host(inst_->c_elems() * sizeof(float), '\0');
          SGT_CUDA_CHECK(
              cudaMemcpy(host.data(), inst_->c_mem, host.size(), cudaMemcpyDeviceToHost));
          out.checksum = sha256_hex(host);
        }
        if (t.l2 == L2Mode::rotate && out.verify_error <= t.tolerance) {
          // The rotated launches take other pointers: one of their copies is checked too.
          Instance& v = rot_->copies[static_cast<size_t>(rot_->verified)];
          out.verify_error = std::max(out.verify_error, run_and_verify(l, t.tile, t.block, v));
          bench_->used(rot_->verified);
        }
        if (!(out.verify_error <= t.tolerance)) {
          out.status = TrialStatus::incorrect;
          out.reason = std::isfinite(out.verify_error)
                           ? fmt::format("relative L2 error {:.3g} exceeds tolerance {:.1g}",
                                         out.verify_error, t.tolerance)
                           : "result holds NaN or Inf";
        } else {
          // Right against cuBLAS; as accurate as cuBLAS against FP64? An inaccurate candidate
          // is not timed.
          if (t.accuracy) judge_accuracy(l, t, stress_key, error, out);
          if (out.status == TrialStatus::ok) {
            BenchSettings s;
            s.warmup = t.warmup;
            s.repetitions = t.repetitions;
            s.cut_after = t.cut_after;
            s.cut_ratio = t.cut_ratio;
            s.best_ms = t.best_ms;
            s.l2 = t.l2;
            const auto b =
                bench_->run([&](cudaStream_t st,
                                int copy) { launch(l, t.tile, t.block, operands(t.l2, copy), st); },
                            s);
            out.time = b.stats;
            out.cut = b.cut;
          }
        }
      } catch (const Error& e) {
        classify_failure(e, out.status, out.reason);
      }
    }
    return trial_response_json(out);
  }

  // cuBLASLt FP32 as a peer of cublasSgemm: the same row-major trick (the operands swapped, each
  // keeping its op), CUBLAS_COMPUTE_32F (no TF32), on the same operands, verified against the
  // same reference. The descriptors depend only on the problem; the algorithm comes with each
  // request, so a replaced worker times the one the search kept.
  struct LtSetup {
    cublasLtMatmulDesc_t desc = nullptr;
    cublasLtMatrixLayout_t a = nullptr, b = nullptr, c = nullptr;
    cublasLtMatmulPreference_t pref = nullptr;
    std::unique_ptr<DeviceBuffer<char>> workspace;
    size_t workspace_bytes = 0;
    ~LtSetup() {
      if (pref) cublasLtMatmulPreferenceDestroy(pref);
      if (c) cublasLtMatrixLayoutDestroy(c);
      if (b) cublasLtMatrixLayoutDestroy(b);
      if (a) cublasLtMatrixLayoutDestroy(a);
      if (desc) cublasLtMatmulDescDestroy(desc);
    }
  };

  LtSetup& lt(size_t workspace_bytes) {
    if (!bench_ || !inst_) throw Error("cuBLASLt before problem");
    ensure_scratch();
    if (!lt_handle_) SGT_CUBLAS_CHECK(cublasLtCreate(&lt_handle_));
    if (lt_ && lt_->workspace_bytes == workspace_bytes) return *lt_;
    lt_.reset();
    const Instance& in = *inst_;
    const std::uint64_t M = in.p.M, N = in.p.N, K = in.p.K;
    auto s = std::make_unique<LtSetup>();
    SGT_CUBLAS_CHECK(cublasLtMatmulDescCreate(&s->desc, CUBLAS_COMPUTE_32F, CUDA_R_32F));
    // cuBLASLt's A is our B, its B our A: as cublas_gemm passes them.
    const cublasOperation_t op_a = in.trans_b() ? CUBLAS_OP_T : CUBLAS_OP_N;
    const cublasOperation_t op_b = in.trans_a() ? CUBLAS_OP_T : CUBLAS_OP_N;
    SGT_CUBLAS_CHECK(
        cublasLtMatmulDescSetAttribute(s->desc, CUBLASLT_MATMUL_DESC_TRANSA, &op_a, sizeof(op_a)));
    SGT_CUBLAS_CHECK(
        cublasLtMatmulDescSetAttribute(s->desc, CUBLASLT_MATMUL_DESC_TRANSB, &op_b, sizeof(op_b)));
    // Column-major views of the row-major operands: as stored, before their op.
    SGT_CUBLAS_CHECK(cublasLtMatrixLayoutCreate(&s->a, CUDA_R_32F, in.trans_b() ? K : N,
                                                in.trans_b() ? N : K, in.ldb));
    SGT_CUBLAS_CHECK(cublasLtMatrixLayoutCreate(&s->b, CUDA_R_32F, in.trans_a() ? M : K,
                                                in.trans_a() ? K : M, in.lda));
    SGT_CUBLAS_CHECK(cublasLtMatrixLayoutCreate(&s->c, CUDA_R_32F, N, M, in.ldc));
    SGT_CUBLAS_CHECK(cublasLtMatmulPreferenceCreate(&s->pref));
    const std::uint64_t ws = workspace_bytes;
    SGT_CUBLAS_CHECK(cublasLtMatmulPreferenceSetAttribute(
        s->pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &ws, sizeof(ws)));
    // cuBLASLt assumes 256-byte aligned operands unless told: an offset problem must exclude the
    // algorithms that need it. A rotation's copies are aligned as the instance is.
    const std::uint32_t al_a = alignment_of(in.B()), al_b = alignment_of(in.A()),
                        al_c = alignment_of(in.C());
    SGT_CUBLAS_CHECK(cublasLtMatmulPreferenceSetAttribute(
        s->pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES, &al_a, sizeof(al_a)));
    SGT_CUBLAS_CHECK(cublasLtMatmulPreferenceSetAttribute(
        s->pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES, &al_b, sizeof(al_b)));
    SGT_CUBLAS_CHECK(cublasLtMatmulPreferenceSetAttribute(
        s->pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES, &al_c, sizeof(al_c)));
    SGT_CUBLAS_CHECK(cublasLtMatmulPreferenceSetAttribute(
        s->pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES, &al_c, sizeof(al_c)));
    s->workspace = std::make_unique<DeviceBuffer<char>>(workspace_bytes);
    s->workspace_bytes = workspace_bytes;
    lt_ = std::move(s);
    return *lt_;
  }

  void lt_matmul(const LtSetup& s, const cublasLtMatmulAlgo_t& algo, const Instance& in,
                 cudaStream_t st) {
    if (in.p.M == 0 || in.p.N == 0) return;
    SGT_CUBLAS_CHECK(cublasLtMatmul(lt_handle_, s.desc, &in.alpha, in.B(), s.a, in.A(), s.b,
                                    &in.beta, in.C(), s.c, in.C(), s.c, &algo, s.workspace->ptr,
                                    s.workspace_bytes, st));
  }

  // Runs an algorithm on an instance from its C0 and compares with the reference.
  double lt_verify(const LtSetup& s, const cublasLtMatmulAlgo_t& algo, Instance& in) {
    SGT_CUDA_CHECK(cudaMemcpyAsync(in.c_mem, in.c0_mem, in.c_elems() * sizeof(float),
                                   cudaMemcpyDeviceToDevice, stream_));
    lt_matmul(s, algo, in, stream_);
    SGT_CUDA_CHECK(cudaStreamSynchronize(stream_));
    return verify(in);
  }

  static cublasLtMatmulAlgo_t algo_from(const json& j) {
    const auto data = j.get<std::vector<std::uint64_t>>();
    cublasLtMatmulAlgo_t a{};
    if (data.size() != std::size(a.data)) throw Error("a cuBLASLt algorithm is 8 numbers");
    std::copy(data.begin(), data.end(), a.data);
    return a;
  }

  // Verifies an algorithm (on the instance, and on the verified copy when timing rotated), then
  // times it; a failed or wrong algorithm answers its status and no time.
  json lt_measure(LtSetup& s, const cublasLtMatmulAlgo_t& algo, const BenchSettings& bs,
                  double tolerance) {
    TrialStatus status = TrialStatus::ok;
    std::string reason;
    double error = -1;
    BenchOutcome b;
    try {
      error = lt_verify(s, algo, *inst_);
      if (bs.l2 == L2Mode::rotate && error <= tolerance) {
        error =
            std::max(error, lt_verify(s, algo, rot_->copies[static_cast<size_t>(rot_->verified)]));
        bench_->used(rot_->verified);
      }
      if (!(error <= tolerance)) {
        status = TrialStatus::incorrect;
        reason =
            std::isfinite(error)
                ? fmt::format("relative L2 error {:.3g} exceeds tolerance {:.1g}", error, tolerance)
                : "result holds NaN or Inf";
      } else {
        b = bench_->run(
            [&](cudaStream_t st, int copy) { lt_matmul(s, algo, operands(bs.l2, copy), st); }, bs);
      }
    } catch (const Error& e) {
      classify_failure(e, status, reason);
    }
    return {{"status", to_string(status)},
            {"reason", reason},
            {"verify_error", std::isfinite(error) ? error : 1e300},
            {"time", b.stats},
            {"cut", b.cut}};
  }

  static BenchSettings lt_settings(const json& req) {
    BenchSettings bs;
    bs.warmup = req.value("warmup", 1);
    bs.repetitions = req.at("reps").get<int>();
    bs.cut_after = req.value("cut_after", 0);
    bs.cut_ratio = req.value("cut_ratio", 1.25);
    bs.l2 = l2_of(req);
    return bs;
  }

  // What cuBLASLt's heuristic offers for the problem (up to max_algos), each verified and timed
  // as a candidate is, the slower ones cut early against the fastest so far; the fastest kept.
  json cublaslt_search(const json& req) {
    LtSetup& s = lt(req.value("workspace", kDefaultLtWorkspace));
    const int requested = req.at("max_algos").get<int>();
    if (requested < 1 || requested > 1024) throw Error("max_algos must be 1 to 1024");
    const double tolerance = req.at("tolerance").get<double>();
    BenchSettings bs = lt_settings(req);
    if (bs.l2 == L2Mode::rotate) rotation();
    json algos = json::array();
    int best = -1;
    double best_ms = 0;
    const Problem& p = inst_->p;
    if (p.M > 0 && p.N > 0 && p.K > 0) {
      std::vector<cublasLtMatmulHeuristicResult_t> results(static_cast<size_t>(requested));
      int returned = 0;
      const cublasStatus_t h = cublasLtMatmulAlgoGetHeuristic(
          lt_handle_, s.desc, s.a, s.b, s.c, s.c, s.pref, requested, results.data(), &returned);
      // NOT_SUPPORTED: no algorithm for this problem, an empty answer rather than a failure.
      if (h != CUBLAS_STATUS_NOT_SUPPORTED) SGT_CUBLAS_CHECK(h);
      for (int i = 0; i < returned && !poisoned_; ++i) {
        const auto& r = results[static_cast<size_t>(i)];
        json a;
        if (r.state != CUBLAS_STATUS_SUCCESS || r.workspaceSize > s.workspace_bytes) {
          a = {{"status", to_string(TrialStatus::resources)},
               {"reason", r.state != CUBLAS_STATUS_SUCCESS
                              ? fmt::format("heuristic state {}", cublasGetStatusString(r.state))
                              : fmt::format("needs {} bytes of workspace", r.workspaceSize)},
               {"verify_error", -1.0},
               {"time", TimeStats{}},
               {"cut", false}};
        } else {
          bs.best_ms = best_ms;
          a = lt_measure(s, r.algo, bs, tolerance);
          const auto t = a.at("time").get<TimeStats>();
          if (a.at("status") == "ok" && !a.at("cut").get<bool>() &&
              (best < 0 || t.median_ms < best_ms)) {
            best = static_cast<int>(algos.size());
            best_ms = t.median_ms;
          }
        }
        a["algo"] = std::vector<std::uint64_t>(std::begin(r.algo.data), std::end(r.algo.data));
        a["desc"] = describe_lt_algo(r.algo);
        a["workspace"] = r.workspaceSize;
        a["waves"] = r.wavesCount;
        algos.push_back(std::move(a));
      }
    }
    return {{"ok", true}, {"requested", requested}, {"algos", algos}, {"best", best}};
  }

  json time_cublaslt(const json& req) {
    LtSetup& s = lt(req.value("workspace", kDefaultLtWorkspace));
    const BenchSettings bs = lt_settings(req);
    if (bs.l2 == L2Mode::rotate) rotation();
    json out = lt_measure(s, algo_from(req.at("algo")), bs, req.at("tolerance").get<double>());
    out["ok"] = true;
    return out;
  }

  // Verifies one candidate on a list of cases, each on its own small instance.
  json verify_cases(const json& req) {
    if (!stream_) throw Error("verify before hello");
    ensure_scratch();
    const std::string cubin = read_checked(req.at("cubin"), req.at("sha256"));
    if (cubin.empty()) {
      return {{"ok", false},
              {"error", "cached binary missing or its SHA-256 does not match; not loaded"}};
    }
    const LaunchTile tile = launch_tile_from_json(req);
    const unsigned block = req.at("block");
    const double tol = req.at("tolerance");
    const auto seed = req.at("seed").get<std::uint64_t>();
    auto cases = req.at("cases").get<std::vector<EdgeCheck>>();
    Loaded l;
    load(l, cubin, req.at("kernel"), req.value("reduce_kernel", ""), req.value("pack_kernel", ""));
    allow_dynamic_smem(l, tile);
    for (size_t i = 0; i < cases.size(); ++i) {
      auto& c = cases[i];
      try {
        auto in =
            make_instance(c.problem, c.lda, c.ldb, c.ldc, c.offset, c.alpha, c.beta, seed + i);
        c.error = run_and_verify(l, tile, block, *in);
        c.passed = c.error <= tol;
        c.reason =
            c.passed ? ""
            : std::isfinite(c.error)
                ? fmt::format("relative L2 error {:.3g} exceeds tolerance {:.1g}", c.error, tol)
                : "result holds NaN or Inf, or wrote outside C";
        if (!std::isfinite(c.error)) c.error = 1e300;
      } catch (const Error& e) {
        TrialStatus st;
        classify_failure(e, st, c.reason);
        c.passed = false;
        if (poisoned_) break;
      }
    }
    return {{"ok", true}, {"cases", cases}};
  }

  // The pool of the launch plan's workspace and panels, as sgemm_tuned keeps one per device.
  cudaMemPool_t call_pool() {
    if (!pool_) SGT_CUDA_CHECK(sgt_kernel::make_call_pool(dev_, &pool_));
    return pool_;
  }

  int dev_ = 0;
  GpuFingerprint fp_;
  cudaMemPool_t pool_ = nullptr;  // never destroyed: the process ends with it
  cudaStream_t stream_ = nullptr;
  cublasHandle_t cublas_ = nullptr;
  cudaLibrary_t compare_lib_ = nullptr;
  cudaKernel_t compare_ = nullptr;
  std::unique_ptr<Instance> inst_;
  std::uint64_t seed_ = 0;  // the problem's input seed
  std::unique_ptr<Rotation> rot_;
  cublasLtHandle_t lt_handle_ = nullptr;
  std::unique_ptr<LtSetup> lt_;
  cudaKernel_t fill_ = nullptr, spin_ = nullptr;
  cudaKernel_t compare64_ = nullptr, widen_ = nullptr;
  // Accuracy: the current problem's FP64 reference and cuBLAS FP32's error against it (-1: not
  // made yet); the stress cases' problems by case, and each binary's outcome on its cases.
  std::unique_ptr<DeviceBuffer<double>> ref64_;
  double cublas_error64_ = -1;
  std::map<std::string, std::unique_ptr<StressProblem>> stress_problems_;
  std::map<std::string, StressOutcome> stress_done_;
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
