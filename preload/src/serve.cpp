// libsgemm_tune_serve.so: loads the tuned kernels of a serve plan and launches them, for
// libsgemm_tune_preload.so in serve mode (serve_abi.h). The preload decides what is served; this
// library only runs it, through launch_plan.h (plan_call, run_call), the sequence the tuner's
// worker timed and the sgemm_tuned dispatch library runs. It links the CUDA runtime (shared, so
// an application's own runtime is the one used) and never cuBLAS.
//
// Binaries come from the tuner's kernel cache, named by the plan with their SHA-256: each is read
// and checked against it before it is loaded, once per process; a binary that fails the check is
// never loaded and its calls go to cuBLAS.
#include <cuda.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdarg>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iterator>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "launch_plan.h"
#include "serve_abi.h"
#include "sha256.hpp"
#include "tma_maps.h"

namespace {

void say(char* message, int size, const char* format, ...) {
  if (!message || size <= 0) return;
  va_list ap;
  va_start(ap, format);
  std::vsnprintf(message, static_cast<size_t>(size), format, ap);
  va_end(ap);
}

struct Device {
  cudaDeviceProp props{};
  cudaMemPool_t pool = nullptr;  // split-K workspaces and PACK panels (make_call_pool)
};

// A kernel's binary, loaded once (context-independent: cudaLibrary), with the dynamic shared
// memory limit set per device.
struct Loaded {
  bool tried = false;
  std::string error;  // why it is unusable; empty when loaded
  cudaLibrary_t lib = nullptr;
  cudaKernel_t kernel = nullptr, reduce = nullptr, pack = nullptr;
  std::vector<int> smem_set;  // devices whose limit is set
};

struct State {
  std::mutex mutex;
  std::map<int, std::unique_ptr<Device>> devices;
  std::map<int, std::unique_ptr<Loaded>> kernels;  // by sgt_serve_kernel::id
};

// Never destroyed: the application's last calls and its atexit handlers may come after static
// destructors; CUDA objects are left to the process's end.
State& state() {
  static State* s = new State;
  return *s;
}

std::string read_all(const char* path, std::string& error) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    error = std::string("cannot open ") + path;
    return {};
  }
  std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (in.bad()) error = std::string("cannot read ") + path;
  return bytes;
}

Device* device(int dev, std::string& error) {
  State& s = state();
  std::lock_guard lock(s.mutex);
  auto& d = s.devices[dev];
  if (!d) {
    auto fresh = std::make_unique<Device>();
    cudaError_t e = cudaGetDeviceProperties(&fresh->props, dev);
    if (e == cudaSuccess) e = sgt_kernel::make_call_pool(dev, &fresh->pool);
    if (e != cudaSuccess) {
      (void)cudaGetLastError();
      error = std::string("device ") + std::to_string(dev) + ": " + cudaGetErrorString(e);
      s.devices.erase(dev);
      return nullptr;
    }
    d = std::move(fresh);
  }
  return d.get();
}

// The kernel's binary, checked and loaded on its first call (never again after a failure).
Loaded* load(const sgt_serve_kernel& k, int dev) {
  State& s = state();
  std::lock_guard lock(s.mutex);
  auto& slot = s.kernels[k.id];
  if (!slot) slot = std::make_unique<Loaded>();
  Loaded& l = *slot;
  if (!l.tried) {
    l.tried = true;
    std::string error;
    const std::string cubin = read_all(k.cubin, error);
    if (error.empty() && cubin.empty()) error = std::string(k.cubin) + " is empty";
    if (error.empty()) {
      const std::string got = sgt::preload::sha256_hex(cubin);
      if (got != k.sha256)
        error = std::string(k.cubin) + " has SHA-256 " + got + ", the plan expects " + k.sha256;
    }
    cudaError_t e = cudaSuccess;
    if (error.empty())
      e = cudaLibraryLoadData(&l.lib, cubin.data(), nullptr, nullptr, 0, nullptr, nullptr, 0);
    if (error.empty() && e == cudaSuccess) e = cudaLibraryGetKernel(&l.kernel, l.lib, k.kernel);
    if (error.empty() && e == cudaSuccess && k.reduce[0])
      e = cudaLibraryGetKernel(&l.reduce, l.lib, k.reduce);
    if (error.empty() && e == cudaSuccess && k.pack[0])
      e = cudaLibraryGetKernel(&l.pack, l.lib, k.pack);
    if (error.empty() && e != cudaSuccess) {
      (void)cudaGetLastError();
      error = std::string("loading ") + k.cubin + ": " + cudaGetErrorString(e);
    }
    l.error = error;
  }
  if (!l.error.empty()) return &l;
  if (k.tensor_maps && k.smem > 0 &&
      std::find(l.smem_set.begin(), l.smem_set.end(), dev) == l.smem_set.end()) {
    // A launch above 48 KB of dynamic shared memory needs the limit raised first.
    const cudaError_t e = cudaFuncSetAttribute(reinterpret_cast<const void*>(l.kernel),
                                               cudaFuncAttributeMaxDynamicSharedMemorySize, k.smem);
    if (e != cudaSuccess) {
      (void)cudaGetLastError();
      l.error = std::string("dynamic shared memory of ") + std::to_string(k.smem) +
                " bytes refused: " + cudaGetErrorString(e);
      return &l;
    }
    l.smem_set.push_back(dev);
  }
  return &l;
}

// The served call's launches: its config's plan (pack, tile, split-K reduction) on this device,
// exactly as sgemm_tuned's launch() and the tuner's worker run them. `wrote`: whether C may have
// been written: the tile kernel was launched (with split-K the reduction after it writes C, and a
// failure after the tile launch cannot tell whether it did: taken as written, never retried).
cudaError_t run(const sgt_serve_call& c, const Loaded& l, Device& d, bool& wrote,
                std::string& refused) {
  const sgt_serve_kernel& k = *c.kernel;
  const auto aligned = [](const float* p) { return reinterpret_cast<uintptr_t>(p) % 16 == 0; };
  // A tail's wave: the blocks of the loaded kernel an SM holds, as the tuner's worker asks it.
  int resident = 1;
  if (k.tail) {
    if (const cudaError_t e =
            sgt_kernel::resident_blocks(reinterpret_cast<const void*>(l.kernel), k.block,
                                        static_cast<size_t>(k.smem), &resident);
        e != cudaSuccess) {
      (void)cudaGetLastError();
      refused = std::string("occupancy of the tail's kernel: ") + cudaGetErrorString(e);
      return e;
    }
  }
  const auto plan = sgt_kernel::plan_call(
      {k.BM, k.BN, k.BK, k.split_k, l.pack != nullptr, k.tensor_maps != 0, k.tail != 0, k.group_m},
      c.M, c.N, c.K, c.trans_a != 0, c.trans_b != 0, c.A, aligned(c.A), c.lda, c.B, aligned(c.B),
      c.ldb, d.props.multiProcessorCount, d.props.major >= 9, resident);
  if (plan.too_large) {
    refused = "grid too large";
    return cudaErrorInvalidConfiguration;
  }
  if ((plan.reduce_blocks > 0 || plan.tail.reduce_blocks > 0) && !l.reduce) {
    refused = "split-K without a reduction kernel";
    return cudaErrorInvalidConfiguration;
  }
  const void* kernel = reinterpret_cast<const void*>(l.kernel);
  int M = c.M, N = c.N, K = c.K, ldc = c.ldc;
  float alpha = c.alpha, beta = c.beta;
  float* C = c.C;
  const auto tile = [&](const float* a, int lda, const float* b, int ldb, float* work, bool tail) {
    cudaError_t e;
    if (!k.tensor_maps) {
      e = sgt_kernel::launch_warptile(kernel, plan, static_cast<unsigned>(k.block), M, N, K, alpha,
                                      a, lda, b, ldb, beta, C, ldc, work,
                                      static_cast<cudaStream_t>(c.stream), 0, tail);
    } else {
      sgt_kernel::TmaMaps maps{};
      if (K > 0) {
        if (!sgt_kernel::tma_operand(a, lda) || !sgt_kernel::tma_operand(b, ldb)) {
          refused = "operands a tensor copy cannot read";
          return cudaErrorInvalidValue;
        }
        // The boxes need the tile and its padding only.
        const auto g =
            sgt_kernel::make_geometry(k.BM, k.BN, k.BK, 1, 1, 1, 1, 1, 1, 1, k.pad_a, k.pad_b);
        // A tail's maps cover its sub-problem (a and b: tail_a, tail_b).
        if (const CUresult r = sgt_kernel::tma_encode_maps(
                maps, g, plan.trans_a, plan.trans_b, tail ? plan.tail.M : M, tail ? plan.tail.N : N,
                K, a, lda, b, ldb);
            r != CUDA_SUCCESS) {
          refused = "cuTensorMapEncodeTiled failed (" + std::to_string(static_cast<int>(r)) + ")";
          return cudaErrorInvalidValue;
        }
      }
      e = sgt_kernel::launch_ws_tma(kernel, plan, static_cast<unsigned>(k.block),
                                    static_cast<size_t>(k.smem), maps.a, maps.b, M, N, K, alpha,
                                    beta, C, ldc, work, static_cast<cudaStream_t>(c.stream), tail);
    }
    if (e == cudaSuccess) wrote = true;
    return e;
  };
  const cudaError_t e =
      sgt_kernel::run_call(plan, reinterpret_cast<const void*>(l.pack),
                           reinterpret_cast<const void*>(l.reduce), M, N, K, alpha, c.A, c.lda, c.B,
                           c.ldb, beta, C, ldc, d.pool, static_cast<cudaStream_t>(c.stream), tile);
  return e;
}

// SGT_SERVE_VERIFY: C's rows as they were, the served result, and cuBLAS's on the copy, compared
// on the host after the stream has finished. Slow (it synchronises): a test mode.
struct Verify {
  float* copy = nullptr;
  size_t floats = 0;
};

bool verify_begin(const sgt_serve_call& c, Verify& v, cudaStream_t st) {
  // C as stored: M rows of ldc floats, the last one N long.
  v.floats = static_cast<size_t>(c.M - 1) * static_cast<size_t>(c.ldc) + static_cast<size_t>(c.N);
  if (cudaMallocAsync(reinterpret_cast<void**>(&v.copy), v.floats * sizeof(float), st) !=
          cudaSuccess ||
      cudaMemcpyAsync(v.copy, c.C, v.floats * sizeof(float), cudaMemcpyDeviceToDevice, st) !=
          cudaSuccess) {
    (void)cudaGetLastError();
    if (v.copy) cudaFreeAsync(v.copy, st);
    v.copy = nullptr;
    return false;
  }
  return true;
}

void verify_end(sgt_serve_call& c, Verify& v, cudaStream_t st) {
  if (!v.copy) return;
  bool ok = c.reference(c.reference_context, v.copy) == 0;
  std::vector<float> got(v.floats), want(v.floats);
  ok = ok &&
       cudaMemcpyAsync(got.data(), c.C, v.floats * sizeof(float), cudaMemcpyDeviceToHost, st) ==
           cudaSuccess &&
       cudaMemcpyAsync(want.data(), v.copy, v.floats * sizeof(float), cudaMemcpyDeviceToHost, st) ==
           cudaSuccess &&
       cudaStreamSynchronize(st) == cudaSuccess;
  cudaFreeAsync(v.copy, st);
  if (!ok) {
    (void)cudaGetLastError();
    return;
  }
  double err = 0, scale = 1;
  for (int i = 0; i < c.M; ++i) {
    for (int j = 0; j < c.N; ++j) {
      const size_t at =
          static_cast<size_t>(i) * static_cast<size_t>(c.ldc) + static_cast<size_t>(j);
      const double d = std::fabs(static_cast<double>(got[at]) - want[at]);
      err = std::max(err, std::isnan(d) ? INFINITY : d);
      scale = std::max(scale, std::fabs(static_cast<double>(want[at])));
    }
  }
  c.max_error = err / scale;
  // FP32 accumulation in another order: an error growing with sqrt(K), relative to the largest
  // entry (the tuner's own check; cuBLAS's result is not exact either).
  const double tolerance = 1e-5 * std::sqrt(static_cast<double>(std::max(c.K, 1))) + 1e-6;
  c.verified = c.max_error <= tolerance ? 1 : -1;
}

}  // namespace

extern "C" {

__attribute__((visibility("default"))) int sgt_serve_abi_version(void) {
  return SGT_SERVE_ABI_VERSION;
}

__attribute__((visibility("default"))) int sgt_serve_current_device(int* dev) {
  const cudaError_t e = cudaGetDevice(dev);
  if (e != cudaSuccess) (void)cudaGetLastError();
  return e == cudaSuccess ? 0 : static_cast<int>(e);
}

__attribute__((visibility("default"))) int sgt_serve_describe(int dev, char* name, int name_size,
                                                              int* cc_major, int* cc_minor,
                                                              int* sm_count) {
  std::string error;
  Device* d = device(dev, error);
  if (!d) return 1;
  say(name, name_size, "%s", d->props.name);
  *cc_major = d->props.major;
  *cc_minor = d->props.minor;
  *sm_count = d->props.multiProcessorCount;
  return 0;
}

__attribute__((visibility("default"))) int sgt_serve_launch(sgt_serve_call* c, char* message,
                                                            int message_size) {
  try {
    const auto st = static_cast<cudaStream_t>(c->stream);
    cudaStreamCaptureStatus capture = cudaStreamCaptureStatusNone;
    if (cudaStreamIsCapturing(st, &capture) != cudaSuccess ||
        capture != cudaStreamCaptureStatusNone) {
      (void)cudaGetLastError();
      say(message, message_size, "the stream is capturing a CUDA graph");
      return SGT_SERVE_CAPTURING;
    }
    std::string error;
    Device* d = device(c->device, error);
    if (!d) {
      say(message, message_size, "%s", error.c_str());
      return SGT_SERVE_LAUNCH_FAILED;
    }
    Loaded* l = load(*c->kernel, c->device);
    if (!l->error.empty()) {
      say(message, message_size, "%s", l->error.c_str());
      return SGT_SERVE_LOAD_FAILED;
    }
    Verify v;
    if (c->reference) verify_begin(*c, v, st);
    bool wrote = false;
    std::string refused;
    const cudaError_t e = run(*c, *l, *d, wrote, refused);
    if (e != cudaSuccess) {
      // A launch error is the launch's; left in place, the application's next cudaGetLastError
      // would take it for its own.
      (void)cudaGetLastError();
      if (v.copy) cudaFreeAsync(v.copy, st);
      say(message, message_size, "%s%s%s", cudaGetErrorString(e), refused.empty() ? "" : ": ",
          refused.c_str());
      return wrote ? SGT_SERVE_FAILED_LATE : SGT_SERVE_LAUNCH_FAILED;
    }
    if (c->reference) verify_end(*c, v, st);
    return SGT_SERVE_OK;
  } catch (...) {
    say(message, message_size, "internal error");
    return SGT_SERVE_LAUNCH_FAILED;
  }
}

}  // extern "C"
