// What libsgemm_tune_preload's entry points share (interpose.hpp): the real functions' lookup, the
// process's capture and serve mode (its plan, libsgemm_tune_serve.so, fork and exit), and the
// parts of a call's description that cuBLAS and cuBLASLt have in common. Nothing here may change a
// result or fail a call: a recording error is swallowed and counted, and SGT_PRELOAD=off leaves
// only the forwarding.
#include "interpose.hpp"

#include <dlfcn.h>
#include <pthread.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>

namespace sgt::interpose {

void* find_next(const char* name, void* self) {
  if (void* f = dlsym(RTLD_NEXT, name)) return f;
  void* g = dlsym(RTLD_DEFAULT, name);
  return g != self ? g : nullptr;
}

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

namespace {

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

}  // namespace

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

namespace {

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

}  // namespace

// ---------------------------------------------------------------------------------------------
// Serve mode's set-up: the plan, and (unless a dry run) libsgemm_tune_serve.so.

void say_once(Server& sv, LogLevel level, LogLevel at, const std::string& line) {
  if (level < at) return;
  {
    std::lock_guard lock(sv.mutex);
    if (!sv.said.insert(line).second) return;
  }
  std::fprintf(stderr, "sgemm-tune preload: %s\n", sgt::preload::printable(line).c_str());
}

namespace {

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
                          k.split_k, k.pad_a, k.pad_b, k.smem, k.block, k.tail ? 1 : 0, k.group_m});
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

}  // namespace

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

void note_device(Runtime& rt, CallFacts& f) {
  const Driver& driver = Driver::get();
  const auto dev = driver.current_device();
  if (!dev) return;
  f.device = *dev;
  if (!rt.recorder.knows_device(*dev)) rt.recorder.add_device(driver.describe(*dev));
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

sgt_serve_call serve_call(Server& sv, const Prepared& p, const sgt::preload::Decision& d,
                          int index) {
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
  return c;
}

}  // namespace sgt::interpose
