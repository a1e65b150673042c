// The internals libsgemm_tune_preload's entry points share (nothing outside the library includes
// this): the real functions each forwards to (dlsym RTLD_NEXT), the process's capture and serve
// mode, what describes a call, and the one path every intercepted call takes (intercept()). The
// entry points themselves are in interpose_cublas.cpp (the classic cuBLAS GEMMs) and
// interpose_cublaslt.cpp (cublasLtMatmul); the shared definitions in interpose.cpp.
//
// The entry points follow the declarations of the CUDA headers included below, so the compiler
// checks each signature (a mismatch with an extern "C" declaration is an error).
#pragma once

#pragma GCC visibility push(default)
#include <cublasLt.h>
#include <cublas_api.h>
#pragma GCC visibility pop

#include <atomic>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <deque>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "capture.hpp"
#include "cuda_driver.hpp"
#include "serve_abi.h"
#include "serve_plan.hpp"
#include "sgemm_tune/preload/row_major.hpp"

namespace sgt::interpose {

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
void* find_next(const char* name, void* self);

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
cublasStatus_t no_real_function(const char* name);

template <typename Fn, typename... Args>
cublasStatus_t call_next(Next<Fn>& next, Args... args) {
  const Fn fn = next.get();
  return fn ? fn(args...) : no_real_function(next.name());
}

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
inline thread_local int t_depth = 0;

// The process's capture and serve mode, made at the first intercepted call.
Runtime* runtime();

// Collects the times of recorded calls whose events the GPU has passed (at most max_checks).
void poll_timing(Runtime& rt, size_t max_checks);

// Said once per process at the log level given (warnings at `summary`).
void say_once(Server& sv, LogLevel level, LogLevel at, const std::string& line);

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
ScalarClass read_scalar(const void* p, Scalar type);

// The names a capture gives a data type and a compute type; numbers rather than enumerators where
// an enumerator is newer than CUDA 12.0.
std::string_view type_name(int t);
std::string_view compute_name(int c);

// The calling thread's device, described once per process.
void note_device(Runtime& rt, CallFacts& f);

// A batched call's count and kind; its operands' strides.
void set_batch(Prepared& p, std::int64_t count, std::string_view kind);
void set_strides(Prepared& p, long long a, long long b, long long c);

// ---------------------------------------------------------------------------------------------
// The one path of every intercepted call.

// The calling thread's device, described once per device (nullptr: none). A dry run with
// SGT_SERVE_DEVICE assumes that one.
const DeviceIdentity* current_device(Server& sv, int& index);

std::string problem_text(const sgt::preload::RowMajorGemm& g);

// The serve library's call for a decided one: its kernel, on device `index`, the row-major
// problem and its operands (swapped where decide swapped them), alpha and beta, the stream.
sgt_serve_call serve_call(Server& sv, const Prepared& p, const sgt::preload::Decision& d,
                          int index);

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
    sgt_serve_call c = serve_call(sv, p, d, index);
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

}  // namespace sgt::interpose
