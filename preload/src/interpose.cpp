// The cuBLAS and cuBLASLt FP32 GEMM entry points of libsgemm_tune_preload: each records its call
// (capture.hpp) and forwards it, arguments untouched, to the next definition of the same symbol,
// the real cuBLAS (dlsym RTLD_NEXT). Nothing here may change a result or fail a call: a recording
// error is swallowed and counted, and SGT_PRELOAD=off leaves only the forwarding.
//
// The definitions follow the declarations of the CUDA headers included below, so the compiler
// checks each signature (a mismatch with an extern "C" declaration is an error).
#pragma GCC visibility push(default)
#include <cublasLt.h>
#include <cublas_api.h>
#pragma GCC visibility pop

#include <dlfcn.h>
#include <pthread.h>
#include <unistd.h>

#include <atomic>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <fstream>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <sstream>
#include <string_view>
#include <tuple>
#include <vector>

#include "capture.hpp"
#include "cuda_driver.hpp"
#include "serve_abi.h"
#include "serve_plan.hpp"
#include "sgemm_tune/preload/row_major.hpp"

namespace {

using sgt::preload::CallFacts;
using sgt::preload::classify;
using sgt::preload::DeviceIdentity;
using sgt::preload::Driver;
using sgt::preload::FallThrough;
using sgt::preload::LogLevel;
using sgt::preload::NotRecorded;
using sgt::preload::Order;
using sgt::preload::ProcessInfo;
using sgt::preload::Recorder;
using sgt::preload::ScalarClass;
using sgt::preload::ServePlan;
using sgt::preload::ServeStats;
using sgt::preload::Settings;
using sgt::preload::Stats;

// ---------------------------------------------------------------------------------------------
// The real functions.

// The next definition of `name` after this library in the lookup order: the real cuBLAS when this
// library is preloaded or linked before it. When the lookup finds none (cuBLAS loaded with
// RTLD_LOCAL after us), the global one, unless that is this very function.
void* find_next(const char* name, void* self) {
  if (void* f = dlsym(RTLD_NEXT, name)) return f;
  void* g = dlsym(RTLD_DEFAULT, name);
  return g != self ? g : nullptr;
}

// The real function of one name, looked up at its first use. Constant-initialised, so it works
// even when called before this library's static constructors have run.
template <typename Fn>
class Next {
 public:
  constexpr Next(const char* name, Fn self) : name_(name), self_(self) {}
  const char* name() const { return name_; }
  Fn get() {
    void* f = fn_.load(std::memory_order_acquire);
    if (!f) {
      f = find_next(name_, reinterpret_cast<void*>(self_));
      fn_.store(f, std::memory_order_release);
    }
    return reinterpret_cast<Fn>(f);
  }

 private:
  const char* name_;
  Fn self_;
  std::atomic<void*> fn_{nullptr};
};

// No real function to forward to: the call cannot run. Said once per process.
cublasStatus_t no_real_function(const char* name) {
  static std::atomic<bool> said{false};
  if (!said.exchange(true)) {
    std::fprintf(stderr,
                 "sgemm-tune preload: %s: no cuBLAS found after this library; is cuBLAS "
                 "loaded?\n",
                 name);
  }
  return CUBLAS_STATUS_NOT_INITIALIZED;
}

template <typename Fn, typename... Args>
cublasStatus_t call_next(Next<Fn>& next, Args... args) {
  const Fn fn = next.get();
  return fn ? fn(args...) : no_real_function(next.name());
}

// Handle and descriptor queries, never interposed: straight to cuBLAS.
Next<decltype(&cublasGetMathMode)> g_get_math_mode{"cublasGetMathMode", nullptr};
Next<decltype(&cublasGetPointerMode_v2)> g_get_pointer_mode{"cublasGetPointerMode_v2", nullptr};
Next<decltype(&cublasGetStream_v2)> g_get_stream{"cublasGetStream_v2", nullptr};
Next<decltype(&cublasLtMatmulDescGetAttribute)> g_desc_attr{"cublasLtMatmulDescGetAttribute",
                                                            nullptr};
Next<decltype(&cublasLtMatrixLayoutGetAttribute)> g_layout_attr{"cublasLtMatrixLayoutGetAttribute",
                                                                nullptr};

// ---------------------------------------------------------------------------------------------
// The process's capture.

struct Pending {
  Stats* stats;
  Driver::Mark mark;
};

// Serve mode: the plan, the serve library's entry points, the devices seen and the counts.
struct Server {
  bool on = false;       // SGT_SERVE is set (and the kill switch is not)
  bool ready = false;    // the plan is loaded (and, unless a dry run, the serve library)
  bool dry_run = false;  // decide and count, but let cuBLAS run every call
  bool verify = false;
  std::atomic<bool> forked{false};  // a forked child: CUDA is not ours to use there
  std::string problem;              // why not ready, for the log
  ServePlan plan;
  std::vector<sgt_serve_kernel> kernels;  // the plan's kernels in the serve library's terms
  std::optional<DeviceIdentity> assumed;  // a dry run's device (SGT_SERVE_DEVICE)
  ServeStats stats;

  decltype(&sgt_serve_current_device) current_device = nullptr;
  decltype(&sgt_serve_describe) describe = nullptr;
  decltype(&sgt_serve_launch) launch = nullptr;

  std::mutex mutex;  // guards devices and said
  std::map<int, std::optional<DeviceIdentity>> devices;
  std::set<std::string> said;  // log lines printed once
};

struct Runtime {
  Runtime(Settings s, ProcessInfo p) : recorder(std::move(s), std::move(p)) {}
  Recorder recorder;
  std::mutex timing_mutex;
  std::deque<Pending> pending;  // calls whose events the GPU has not passed yet
  Server server;
};

// Calls made while an intercepted call runs on this thread (cuBLAS calling its own exported
// entry points, cuBLAS calling cuBLASLt) only pass through: the application made one call.
thread_local int t_depth = 0;

Runtime* runtime();

void before_fork() {
  Runtime* rt = runtime();
  rt->recorder.lock_for_fork();
  rt->timing_mutex.lock();
}

void after_fork_parent() {
  Runtime* rt = runtime();
  rt->timing_mutex.unlock();
  rt->recorder.unlock_after_fork();
}

void after_fork_child() {
  Runtime* rt = runtime();
  rt->server.forked = true;
  // CUDA does not live on in a forked child: its events are not ours to query.
  rt->pending.clear();
  Driver::get().disable();
  rt->timing_mutex.unlock();
  rt->recorder.unlock_after_fork();
  rt->recorder.reset_after_fork(static_cast<long>(getpid()));
}

void poll_timing(Runtime& rt, size_t max_checks) {
  std::lock_guard lock(rt.timing_mutex);
  Driver& driver = Driver::get();
  size_t checked = 0;
  for (auto it = rt.pending.begin(); it != rt.pending.end() && checked < max_checks; ++checked) {
    float ms = 0;
    switch (driver.poll(it->mark, &ms)) {
      case Driver::Poll::Done:
        rt.recorder.add_time(it->stats, ms);
        driver.release(it->mark);
        it = rt.pending.erase(it);
        break;
      case Driver::Poll::NotReady:
        ++it;
        break;
      case Driver::Poll::Failed:  // dropped with its events: they may belong to a dead context
        it = rt.pending.erase(it);
        break;
    }
  }
}

void at_exit() {
  Runtime* rt = runtime();
  Recorder& rec = rt->recorder;
  if (!rec.settings().enabled) return;
  try {
    if (rec.settings().timing) poll_timing(*rt, static_cast<size_t>(-1));
    rec.write(true);
    if (rec.settings().log >= LogLevel::Summary && rec.calls_seen() > 0) {
      const Server& sv = rt->server;
      if (sv.on) {
        std::fprintf(stderr, "%s\n", sv.stats.summary(rec.calls_seen(), sv.dry_run).c_str());
      }
      if (!sv.on || rec.recording()) std::fprintf(stderr, "%s\n", rec.summary().c_str());
    }
  } catch (...) {
    // Nothing may escape into the application's exit.
  }
}

// ---------------------------------------------------------------------------------------------
// Serve mode's set-up: the plan, and (unless a dry run) libsgemm_tune_serve.so.

// Said once per process at the log level given (warnings at `summary`).
void say_once(Server& sv, LogLevel level, LogLevel at, const std::string& line) {
  if (level < at) return;
  {
    std::lock_guard lock(sv.mutex);
    if (!sv.said.insert(line).second) return;
  }
  std::fprintf(stderr, "sgemm-tune preload: %s\n", sgt::preload::printable(line).c_str());
}

// The directory this library was loaded from, for the serve library beside it.
std::string own_directory() {
  Dl_info info{};
  if (dladdr(reinterpret_cast<void*>(&own_directory), &info) == 0 || !info.dli_fname) return {};
  std::string path = info.dli_fname;
  const size_t slash = path.rfind('/');
  return slash == std::string::npos ? std::string(".") : path.substr(0, slash);
}

void start_server(Server& sv, const Settings& s) {
  sv.on = true;
  sv.dry_run = s.serve_dry_run;
  sv.verify = s.serve_verify && !s.serve_dry_run;
  std::ifstream in(s.serve_plan, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  if (!in) {
    sv.problem = "cannot read the serve plan '" + s.serve_plan + "'";
    return;
  }
  try {
    sv.plan = ServePlan::parse(text.str());
  } catch (const std::exception& e) {
    sv.problem = "serve plan '" + s.serve_plan + "': " + e.what();
    return;
  }
  for (size_t i = 0; i < sv.plan.kernels.size(); ++i) {
    const auto& k = sv.plan.kernels[i];
    sv.kernels.push_back({static_cast<int>(i), k.cubin.c_str(), k.sha256.c_str(), k.kernel.c_str(),
                          k.reduce.c_str(), k.pack.c_str(), k.tensor_maps ? 1 : 0, k.BM, k.BN, k.BK,
                          k.split_k, k.pad_a, k.pad_b, k.smem, k.block});
  }
  if (sv.dry_run) {
    if (!s.serve_device.empty()) {
      sv.assumed = sgt::preload::parse_device(s.serve_device);
      if (!sv.assumed) {
        sv.problem = "SGT_SERVE_DEVICE='" + s.serve_device + "' is not NAME@sm_XY/SMS";
        return;
      }
    }
  }
  if (sv.assumed) {
    sv.ready = true;
    return;
  }
  const std::string lib =
      !s.serve_lib.empty() ? s.serve_lib : own_directory() + "/libsgemm_tune_serve.so";
  void* h = dlopen(lib.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!h) {
    const char* e = dlerror();
    sv.problem = "cannot load the serve library: " + std::string(e ? e : lib.c_str());
    return;
  }
  auto version =
      reinterpret_cast<decltype(&sgt_serve_abi_version)>(dlsym(h, "sgt_serve_abi_version"));
  sv.current_device =
      reinterpret_cast<decltype(&sgt_serve_current_device)>(dlsym(h, "sgt_serve_current_device"));
  sv.describe = reinterpret_cast<decltype(&sgt_serve_describe)>(dlsym(h, "sgt_serve_describe"));
  sv.launch = reinterpret_cast<decltype(&sgt_serve_launch)>(dlsym(h, "sgt_serve_launch"));
  if (!version || !sv.current_device || !sv.describe || !sv.launch ||
      version() != SGT_SERVE_ABI_VERSION) {
    sv.problem = "'" + lib + "' is not a serve library of this version";
    return;
  }
  sv.ready = true;
}

Runtime* runtime() {
  static Runtime* rt = [] {
    // Leaked on purpose: at_exit and late threads use it after static destructors.
    auto* r = new Runtime(Settings::from_env([](const char* name) { return std::getenv(name); },
                                             static_cast<long>(getpid())),
                          ProcessInfo::current());
    const Settings& s = r->recorder.settings();
    if (s.enabled) {
      if (s.log >= LogLevel::Summary) {
        for (const auto& w : s.warnings)
          std::fprintf(stderr, "sgemm-tune preload: %s\n", w.c_str());
      }
      if (s.serving()) {
        start_server(r->server, s);
        Server& sv = r->server;
        if (!sv.ready) {
          say_once(sv, s.log, LogLevel::Summary, sv.problem + "; every call goes to cuBLAS");
        } else if (s.log >= LogLevel::Info) {
          size_t problems = 0;
          for (const auto& g : sv.plan.gpus) problems += g.problems.size();
          say_once(sv, s.log, LogLevel::Info,
                   "serving from '" + s.serve_plan + "': " + std::to_string(sv.plan.gpus.size()) +
                       " GPU(s), " + std::to_string(problems) + " tuned problem(s), " +
                       std::to_string(sv.plan.kernels.size()) + " kernel(s)" +
                       (sv.dry_run ? " (dry run: cuBLAS runs every call)" : ""));
        }
      }
      std::atexit(at_exit);
      pthread_atfork(before_fork, after_fork_parent, after_fork_child);
    }
    return r;
  }();
  return rt;
}

// ---------------------------------------------------------------------------------------------
// Describing a call.

// What an intercepted call is, decided before it runs (the handle's modes cannot change during
// it); `why` set when it is not to be recorded.
struct Prepared {
  CallFacts facts;
  std::optional<NotRecorded> why;
  cudaStream_t stream = nullptr;
  // For serving: the operands as the call gives them (cuBLAS's A and B, the output C or D) and
  // its host alpha and beta.
  const void* a = nullptr;
  const void* b = nullptr;
  void* c = nullptr;
  const void* alpha = nullptr;
  const void* beta = nullptr;
};

enum class Scalar { F16, F32, F64, I32, Unknown };

// alpha or beta read from host memory; a null pointer (which cuBLAS refuses) is never read.
ScalarClass read_scalar(const void* p, Scalar type) {
  if (!p) return ScalarClass::Unknown;
  switch (type) {
    case Scalar::F32: {
      float v;
      std::memcpy(&v, p, sizeof v);
      return classify(v);
    }
    case Scalar::F64: {
      double v;
      std::memcpy(&v, p, sizeof v);
      return classify(v);
    }
    case Scalar::I32: {
      std::int32_t v;
      std::memcpy(&v, p, sizeof v);
      return classify(static_cast<double>(v));
    }
    case Scalar::F16: {
      std::uint16_t bits;
      std::memcpy(&bits, p, sizeof bits);
      if ((bits & 0x7fff) == 0) return ScalarClass::Zero;
      return bits == 0x3c00 ? ScalarClass::One : ScalarClass::Other;
    }
    case Scalar::Unknown:
      break;
  }
  return ScalarClass::Unknown;
}

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

Scalar scalar_of(cudaDataType t) {
  switch (t) {
    case CUDA_R_16F:
      return Scalar::F16;
    case CUDA_R_32F:
      return Scalar::F32;
    case CUDA_R_64F:
      return Scalar::F64;
    case CUDA_R_32I:
      return Scalar::I32;
    default:
      return Scalar::Unknown;
  }
}

std::string_view type_name(int t) {
  switch (t) {
    case CUDA_R_32F:
      return "f32";
    case CUDA_R_16F:
      return "f16";
    case CUDA_R_16BF:
      return "bf16";
    case CUDA_R_64F:
      return "f64";
    case CUDA_C_32F:
      return "c32";
    case CUDA_C_64F:
      return "c64";
    case CUDA_C_16F:
      return "c16";
    case CUDA_R_8I:
      return "i8";
    case CUDA_R_8U:
      return "u8";
    case CUDA_R_32I:
      return "i32";
    case 28:  // CUDA_R_8F_E4M3
      return "f8_e4m3";
    case 29:  // CUDA_R_8F_E5M2
      return "f8_e5m2";
    default:
      return "other";
  }
}

// Numbers rather than enumerators where an enumerator is newer than CUDA 12.0.
std::string_view compute_name(int c) {
  switch (c) {
    case CUBLAS_COMPUTE_16F:
      return "16F";
    case CUBLAS_COMPUTE_16F_PEDANTIC:
      return "16F_PEDANTIC";
    case CUBLAS_COMPUTE_32F:
      return "32F";
    case CUBLAS_COMPUTE_32F_PEDANTIC:
      return "32F_PEDANTIC";
    case CUBLAS_COMPUTE_32F_FAST_16F:
      return "32F_FAST_16F";
    case CUBLAS_COMPUTE_32F_FAST_16BF:
      return "32F_FAST_16BF";
    case CUBLAS_COMPUTE_32F_FAST_TF32:
      return "32F_FAST_TF32";
    case 78:  // CUBLAS_COMPUTE_32F_EMULATED_16BFX9
      return "32F_EMULATED_16BFX9";
    case CUBLAS_COMPUTE_64F:
      return "64F";
    case CUBLAS_COMPUTE_64F_PEDANTIC:
      return "64F_PEDANTIC";
    case 79:  // CUBLAS_COMPUTE_64F_EMULATED_FIXEDPOINT
      return "64F_EMULATED_FIXEDPOINT";
    case CUBLAS_COMPUTE_32I:
      return "32I";
    case CUBLAS_COMPUTE_32I_PEDANTIC:
      return "32I_PEDANTIC";
    default:
      return "other";
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

std::string_view epilogue_name(std::uint32_t e) {
  switch (e) {
    case CUBLASLT_EPILOGUE_DEFAULT:
      return "default";
    case CUBLASLT_EPILOGUE_RELU:
      return "relu";
    case CUBLASLT_EPILOGUE_BIAS:
      return "bias";
    case CUBLASLT_EPILOGUE_RELU_BIAS:
      return "relu_bias";
    case CUBLASLT_EPILOGUE_GELU:
      return "gelu";
    case CUBLASLT_EPILOGUE_GELU_BIAS:
      return "gelu_bias";
    default:
      return "other";
  }
}

// The calling thread's device, described once per process.
void note_device(Runtime& rt, CallFacts& f) {
  const Driver& driver = Driver::get();
  const auto dev = driver.current_device();
  if (!dev) return;
  f.device = *dev;
  if (!rt.recorder.knows_device(*dev)) rt.recorder.add_device(driver.describe(*dev));
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

void set_batch(Prepared& p, std::int64_t count, std::string_view kind) {
  p.facts.batch = count;
  p.facts.batch_kind = kind;
  if (count == 0 && !p.why) p.why = NotRecorded::Empty;
}

void set_strides(Prepared& p, long long a, long long b, long long c) {
  p.facts.stride_a = a;
  p.facts.stride_b = b;
  p.facts.stride_c = c;
}

// ---------------------------------------------------------------------------------------------
// The one path of every intercepted call.

// The calling thread's device, described once per device (nullptr: none). A dry run with
// SGT_SERVE_DEVICE assumes that one.
const DeviceIdentity* current_device(Server& sv, int& index) {
  if (sv.assumed) {
    index = 0;
    return &*sv.assumed;
  }
  if (!sv.current_device || sv.current_device(&index) != 0) return nullptr;
  thread_local int t_index = -1;
  thread_local const DeviceIdentity* t_identity = nullptr;
  thread_local const Server* t_server = nullptr;
  if (t_server == &sv && t_index == index) return t_identity;
  std::lock_guard lock(sv.mutex);
  auto it = sv.devices.find(index);
  if (it == sv.devices.end()) {
    char name[256] = {};
    DeviceIdentity d;
    std::optional<DeviceIdentity> known;
    if (sv.describe(index, name, sizeof name, &d.cc_major, &d.cc_minor, &d.sm_count) == 0) {
      d.name = name;
      known = d;
    }
    it = sv.devices.emplace(index, known).first;  // map nodes stay put: the pointer is stable
  }
  t_server = &sv;
  t_index = index;
  t_identity = it->second ? &*it->second : nullptr;
  return t_identity;
}

std::string problem_text(const sgt::preload::RowMajorGemm& g) {
  return std::to_string(g.M) + "x" + std::to_string(g.N) + "x" + std::to_string(g.K) + " " +
         g.layout();
}

template <typename Redirect>
int reference_trampoline(void* context, float* out) {
  return (*static_cast<Redirect*>(context))(out) == CUBLAS_STATUS_SUCCESS ? 0 : 1;
}

// Serve mode: runs the call on its tuned kernel and returns its status, or returns nothing, the
// reason counted, for cuBLAS to run it. Never throws.
template <typename Redirect>
std::optional<cublasStatus_t> try_serve(Runtime& rt, const Prepared& p, Redirect& redirect) {
  Server& sv = rt.server;
  const LogLevel log = rt.recorder.settings().log;
  const auto fall = [&](FallThrough why, const std::string& what) -> std::optional<cublasStatus_t> {
    sv.stats.fell_through(why);
    if (log >= LogLevel::Debug) {
      say_once(sv, log, LogLevel::Debug,
               "to cuBLAS: " + std::string(p.facts.entry) + " " + what + ": " +
                   sgt::preload::describe(why));
    }
    return std::nullopt;
  };
  try {
    const auto gemm = sgt::preload::to_row_major(p.facts.call);
    if (!sv.ready || sv.forked) return fall(FallThrough::ServerUnavailable, problem_text(gemm));
    int index = -1;
    const DeviceIdentity* dev = nullptr;
    // The call's own rules first: a TF32 call never asks the device anything.
    if (!sgt::preload::precheck(p.facts, p.why)) dev = current_device(sv, index);
    const auto d = sgt::preload::decide(
        sv.plan, dev, p.facts, p.why, reinterpret_cast<std::uintptr_t>(p.a),
        reinterpret_cast<std::uintptr_t>(p.b), reinterpret_cast<std::uintptr_t>(p.c));
    if (d.why) return fall(*d.why, problem_text(d.gemm));
    const std::string what = problem_text(d.gemm) + " with " + d.kernel->config_name;
    if (sv.dry_run) {
      sv.stats.served(d.problem);
      say_once(
          sv, log, LogLevel::Debug,
          "would serve " + std::string(p.facts.entry) + " " + what + " (dry run: cuBLAS runs it)");
      return std::nullopt;
    }
    sgt_serve_call c{};
    c.kernel = &sv.kernels[static_cast<size_t>(d.kernel_index)];
    c.device = index;
    c.M = static_cast<int>(d.gemm.M);
    c.N = static_cast<int>(d.gemm.N);
    c.K = static_cast<int>(d.gemm.K);
    c.trans_a = d.gemm.trans_a == 'T';
    c.trans_b = d.gemm.trans_b == 'T';
    std::memcpy(&c.alpha, p.alpha, sizeof c.alpha);
    std::memcpy(&c.beta, p.beta, sizeof c.beta);
    c.A = static_cast<const float*>(d.gemm.swapped ? p.b : p.a);
    c.B = static_cast<const float*>(d.gemm.swapped ? p.a : p.b);
    c.lda = static_cast<int>(d.gemm.lda);
    c.ldb = static_cast<int>(d.gemm.ldb);
    c.C = static_cast<float*>(p.c);
    c.ldc = static_cast<int>(d.gemm.ldc);
    c.stream = p.stream;
    if (sv.verify) {
      c.reference = &reference_trampoline<Redirect>;
      c.reference_context = &redirect;
    }
    char message[512] = {};
    switch (sv.launch(&c, message, sizeof message)) {
      case SGT_SERVE_OK:
        sv.stats.served(d.problem);
        say_once(sv, log, LogLevel::Debug, "serving " + std::string(p.facts.entry) + " " + what);
        if (c.verified != 0) {
          sv.stats.verified(c.verified > 0, c.max_error);
          if (c.verified < 0) {
            char err[32];
            std::snprintf(err, sizeof err, "%.3g", c.max_error);
            say_once(sv, log, LogLevel::Summary,
                     "verify: " + what + " differs from cuBLAS (relative error " + err + ")");
          }
        }
        return CUBLAS_STATUS_SUCCESS;
      case SGT_SERVE_CAPTURING:
        return fall(FallThrough::GraphCapture, problem_text(d.gemm));
      case SGT_SERVE_LOAD_FAILED:
        say_once(sv, log, LogLevel::Summary,
                 "kernel of " + d.kernel->config_name +
                     " not loaded (its calls go to cuBLAS): " + message);
        return fall(FallThrough::LoadFailed, what);
      case SGT_SERVE_FAILED_LATE:
        sv.stats.failed_late();
        say_once(sv, log, LogLevel::Summary, "served " + what + " failed: " + message);
        return CUBLAS_STATUS_EXECUTION_FAILED;
      default:
        say_once(sv, log, LogLevel::Summary,
                 "launch of " + what + " refused (cuBLAS runs it): " + message);
        return fall(FallThrough::LaunchFailed, what);
    }
  } catch (...) {
    sv.stats.fell_through(FallThrough::Internal);
    return std::nullopt;
  }
}

// Forwards the call (or in serve mode, serves it) and, when capturing, describes it first
// (`prepare`) and records it if it succeeded. A forwarded call reaches cuBLAS exactly as given,
// whatever happens here. `redirect(out)` runs the real call with its output at `out` instead
// (SGT_SERVE_VERIFY's reference).
template <typename Forward, typename Prepare, typename Redirect>
cublasStatus_t intercept(Forward&& forward, Prepare&& prepare, Redirect&& redirect) {
  const bool outer = t_depth == 0;
  struct Depth {
    Depth() { ++t_depth; }
    ~Depth() { --t_depth; }
  } depth;
  Runtime* rt = nullptr;
  if (outer) {
    try {
      rt = runtime();
    } catch (...) {
      rt = nullptr;  // could not even start: pass through
    }
  }
  if (!rt || !rt->recorder.settings().enabled) return forward();
  Recorder& rec = rt->recorder;
  rec.seen();
  const bool serving = rt->server.on;
  if (!rec.recording() && !serving) return forward();

  Prepared p;
  try {
    prepare(*rt, p);
  } catch (...) {
    p.why = NotRecorded::Internal;
  }
  std::optional<Driver::Mark> mark;
  if (rec.recording() && rec.settings().timing && !p.why) {
    try {
      std::lock_guard lock(rt->timing_mutex);
      // A GPU far behind the host: no more events until it catches up.
      if (rt->pending.size() < 4096) mark = Driver::get().start(p.stream);
    } catch (...) {
      mark.reset();
    }
  }

  std::optional<cublasStatus_t> served;
  if (serving) served = try_serve(*rt, p, redirect);
  const cublasStatus_t status = served ? *served : forward();
  if (!rec.recording()) return status;

  try {
    if (status != CUBLAS_STATUS_SUCCESS) {
      rec.skip(NotRecorded::Failed);
    } else if (p.why) {
      rec.skip(*p.why);
    } else {
      bool first = false;
      Stats* stats = rec.record(p.facts, &first);
      // A problem's first call is not timed: it carries one-time costs (cuBLAS loading its
      // kernels, choosing an algorithm) that would outweigh many calls of a small GEMM.
      if (stats && !first && mark && Driver::get().stop(*mark, p.stream)) {
        std::lock_guard lock(rt->timing_mutex);
        rt->pending.push_back({stats, *mark});
        mark.reset();
      }
      if (stats && first && rec.settings().log >= LogLevel::Debug) {
        const auto rm = sgt::preload::to_row_major(p.facts.call);
        std::fprintf(stderr, "sgemm-tune preload: new problem: %.*s %lldx%lldx%lld %s (%.*s)\n",
                     static_cast<int>(p.facts.entry.size()), p.facts.entry.data(),
                     static_cast<long long>(rm.M), static_cast<long long>(rm.N),
                     static_cast<long long>(rm.K), rm.layout().c_str(),
                     static_cast<int>(precision(p.facts).size()), precision(p.facts).data());
      }
    }
    if (mark) Driver::get().release(*mark);
    if (rec.settings().timing) poll_timing(*rt, 16);
    if (rec.write_due()) rec.write(false);
  } catch (...) {
    rec.skip(NotRecorded::Internal);
  }
  return status;
}

// ---------------------------------------------------------------------------------------------
// cuBLASLt.

struct LayoutInfo {
  std::uint32_t type = 0;
  std::int32_t order = CUBLASLT_ORDER_COL;
  std::uint64_t rows = 0, cols = 0;
  std::int64_t ld = 0;
  std::int32_t batch = 1;
  std::int64_t stride = 0;
  std::uint32_t batch_mode = 0;  // CUBLASLT_MATRIX_LAYOUT_BATCH_MODE (CUDA 13): 0 strided
};

template <typename T>
bool layout_attr(cublasLtMatrixLayout_t l, cublasLtMatrixLayoutAttribute_t attr, T& value) {
  size_t written = 0;
  return call_next(g_layout_attr, l, attr, static_cast<void*>(&value), sizeof value, &written) ==
             CUBLAS_STATUS_SUCCESS &&
         written == sizeof value;
}

template <typename T>
bool desc_attr(cublasLtMatmulDesc_t d, cublasLtMatmulDescAttributes_t attr, T& value) {
  size_t written = 0;
  return call_next(g_desc_attr, d, attr, static_cast<void*>(&value), sizeof value, &written) ==
             CUBLAS_STATUS_SUCCESS &&
         written == sizeof value;
}

// The attributes a layout must have answered for; the others keep their documented defaults when
// this cuBLASLt does not know them.
bool read_layout(cublasLtMatrixLayout_t l, LayoutInfo& out) {
  if (!l) return false;
  const bool ok = layout_attr(l, CUBLASLT_MATRIX_LAYOUT_TYPE, out.type) &&
                  layout_attr(l, CUBLASLT_MATRIX_LAYOUT_ROWS, out.rows) &&
                  layout_attr(l, CUBLASLT_MATRIX_LAYOUT_COLS, out.cols) &&
                  layout_attr(l, CUBLASLT_MATRIX_LAYOUT_LD, out.ld);
  layout_attr(l, CUBLASLT_MATRIX_LAYOUT_ORDER, out.order);
  layout_attr(l, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, out.batch);
  layout_attr(l, CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET, out.stride);
  layout_attr(l, static_cast<cublasLtMatrixLayoutAttribute_t>(8), out.batch_mode);
  return ok;
}

void prepare_lt(Runtime& rt, Prepared& p, cublasLtMatmulDesc_t desc, const void* alpha,
                const void* a_ptr, cublasLtMatrixLayout_t adesc, const void* b_ptr,
                cublasLtMatrixLayout_t bdesc, const void* beta, const void* c,
                cublasLtMatrixLayout_t cdesc, const void* d, cublasLtMatrixLayout_t ddesc,
                cudaStream_t stream) {
  CallFacts& f = p.facts;
  f.entry = "cublasLtMatmul";
  f.lt = true;
  p.a = a_ptr;
  p.b = b_ptr;
  p.c = const_cast<void*>(d);
  p.alpha = alpha;
  p.beta = beta;
  f.math_mode = "";
  p.stream = stream;
  std::int32_t compute = 0, scale = CUDA_R_32F, pointer_mode = CUBLASLT_POINTER_MODE_HOST;
  std::int32_t transa = CUBLAS_OP_N, transb = CUBLAS_OP_N;
  std::uint32_t epilogue = CUBLASLT_EPILOGUE_DEFAULT;
  LayoutInfo a, b, cl, dl;
  if (!desc || !desc_attr(desc, CUBLASLT_MATMUL_DESC_COMPUTE_TYPE, compute) ||
      !desc_attr(desc, CUBLASLT_MATMUL_DESC_SCALE_TYPE, scale) || !read_layout(adesc, a) ||
      !read_layout(bdesc, b) || !read_layout(cdesc, cl) || !read_layout(ddesc, dl)) {
    p.why = NotRecorded::LtDescriptor;
    return;
  }
  desc_attr(desc, CUBLASLT_MATMUL_DESC_POINTER_MODE, pointer_mode);
  desc_attr(desc, CUBLASLT_MATMUL_DESC_TRANSA, transa);
  desc_attr(desc, CUBLASLT_MATMUL_DESC_TRANSB, transb);
  desc_attr(desc, CUBLASLT_MATMUL_DESC_EPILOGUE, epilogue);

  const auto ta = sgt::preload::real_op(transa), tb = sgt::preload::real_op(transb);
  if (!ta || !tb) {
    p.why = NotRecorded::UnsupportedOp;
    return;
  }
  auto order = [](std::int32_t o) -> std::optional<Order> {
    if (o == CUBLASLT_ORDER_COL) return Order::Col;
    if (o == CUBLASLT_ORDER_ROW) return Order::Row;
    return std::nullopt;
  };
  const auto oa = order(a.order), ob = order(b.order), od = order(dl.order);
  if (!oa || !ob || !od || !order(cl.order)) {
    p.why = NotRecorded::LtOrder;
    return;
  }
  // D (m x n) = op(A) (m x k) * op(B) (k x n); rows and columns are the matrices' as stored,
  // before op, whatever their order.
  f.call.transa = *ta;
  f.call.transb = *tb;
  f.call.m = static_cast<std::int64_t>(dl.rows);
  f.call.n = static_cast<std::int64_t>(dl.cols);
  f.call.k = static_cast<std::int64_t>(*ta == 'N' ? a.cols : a.rows);
  f.call.lda = a.ld;
  f.call.ldb = b.ld;
  f.call.ldc = dl.ld;
  f.call.order_a = *oa;
  f.call.order_b = *ob;
  f.call.order_c = *od;
  if (f.call.m == 0 || f.call.n == 0 || f.call.k == 0) p.why = NotRecorded::Empty;
  f.a_type = type_name(static_cast<int>(a.type));
  f.b_type = type_name(static_cast<int>(b.type));
  f.c_type = type_name(static_cast<int>(dl.type));
  f.compute = compute_name(compute);
  f.epilogue = epilogue_name(epilogue);
  f.c_matches_d = cl.type == dl.type && cl.order == dl.order && cl.ld == dl.ld &&
                  cl.rows == dl.rows && cl.cols == dl.cols;
  f.in_place = c == d;
  const Scalar s = scalar_of(static_cast<cudaDataType>(scale));
  switch (pointer_mode) {
    case CUBLASLT_POINTER_MODE_HOST:
      f.pointer_mode = "host";
      f.alpha = read_scalar(alpha, s);
      f.beta = read_scalar(beta, s);
      break;
    case CUBLASLT_POINTER_MODE_DEVICE:
      f.pointer_mode = "device";
      break;
    case CUBLASLT_POINTER_MODE_DEVICE_VECTOR:
      f.pointer_mode = "device_vector";
      f.alpha = f.beta = ScalarClass::Vector;
      break;
    case CUBLASLT_POINTER_MODE_ALPHA_DEVICE_VECTOR_BETA_ZERO:
      f.pointer_mode = "alpha_device_vector_beta_zero";
      f.alpha = ScalarClass::Vector;
      f.beta = ScalarClass::Zero;
      break;
    case CUBLASLT_POINTER_MODE_ALPHA_DEVICE_VECTOR_BETA_HOST:
      f.pointer_mode = "alpha_device_vector_beta_host";
      f.alpha = ScalarClass::Vector;
      f.beta = read_scalar(beta, s);
      break;
    default:
      f.pointer_mode = "unknown";
  }
  if (dl.batch != 1) {
    set_batch(p, dl.batch, dl.batch_mode == 0 ? "strided" : "pointer_array");
    set_strides(p, a.stride, b.stride, dl.stride);
  }
  note_device(rt, f);
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
Next<decltype(&cublasLtMatmul)> g_lt_matmul{"cublasLtMatmul", &cublasLtMatmul};

}  // namespace

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

cublasStatus_t CUBLASWINAPI cublasLtMatmul(
    cublasLtHandle_t lightHandle, cublasLtMatmulDesc_t computeDesc, const void* alpha,
    const void* A, cublasLtMatrixLayout_t Adesc, const void* B, cublasLtMatrixLayout_t Bdesc,
    const void* beta, const void* C, cublasLtMatrixLayout_t Cdesc, void* D,
    cublasLtMatrixLayout_t Ddesc, const cublasLtMatmulAlgo_t* algo, void* workspace,
    size_t workspaceSizeInBytes, cudaStream_t stream) {
  return intercept(
      [&] {
        return call_next(g_lt_matmul, lightHandle, computeDesc, alpha, A, Adesc, B, Bdesc, beta, C,
                         Cdesc, D, Ddesc, algo, workspace, workspaceSizeInBytes, stream);
      },
      [&](Runtime& rt, Prepared& p) {
        prepare_lt(rt, p, computeDesc, alpha, A, Adesc, B, Bdesc, beta, C, Cdesc, D, Ddesc, stream);
      },
      [&](float* out) {
        return call_next(g_lt_matmul, lightHandle, computeDesc, alpha, A, Adesc, B, Bdesc, beta,
                         C == D ? out : C, Cdesc, out, Ddesc, algo, workspace, workspaceSizeInBytes,
                         stream);
      });
}

}  // extern "C"
