// The dispatch library: nvcc instantiates the kernels of kernel_templates/ for exactly the configs
// of the embedded table (as each config's family names them); sgemm() launches the one
// select.hpp chooses, else cuBLAS.
#include "sgemm_tuned/sgemm_tuned.hpp"

#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "launch_plan.h"
#include "select.hpp"
// The kernels of the launch ABIs: the warp-tiling family's (pointers; and the pack and split-K
// reduction kernels of every launch plan) and the TMA family's (tensor_maps; its TmaMap
// parameter). A split_maps family's kernel file (sgemm_tf32x3_wgmma.cuh, with its split prepass)
// comes in with the table's kernel files below.
#include "sgemm_warptile.cuh"
#include "sgemm_ws_tma.cuh"
#if SGT_TUNED_TABLE_FORMAT_VERSION >= 8
// The kernel files of the table's families, as the table names them (format 8).
static_assert(SGT_TUNED_KERNEL_FILE_COUNT <= 8,
              "this dispatch library includes the kernel files of at most 8 kernel families");
#ifdef SGT_TUNED_KERNEL_FILE_0
#include SGT_TUNED_KERNEL_FILE_0
#endif
#ifdef SGT_TUNED_KERNEL_FILE_1
#include SGT_TUNED_KERNEL_FILE_1
#endif
#ifdef SGT_TUNED_KERNEL_FILE_2
#include SGT_TUNED_KERNEL_FILE_2
#endif
#ifdef SGT_TUNED_KERNEL_FILE_3
#include SGT_TUNED_KERNEL_FILE_3
#endif
#ifdef SGT_TUNED_KERNEL_FILE_4
#include SGT_TUNED_KERNEL_FILE_4
#endif
#ifdef SGT_TUNED_KERNEL_FILE_5
#include SGT_TUNED_KERNEL_FILE_5
#endif
#ifdef SGT_TUNED_KERNEL_FILE_6
#include SGT_TUNED_KERNEL_FILE_6
#endif
#ifdef SGT_TUNED_KERNEL_FILE_7
#include SGT_TUNED_KERNEL_FILE_7
#endif
#endif

// TMA-fed kernels have a body only where nvcc defines __CUDA_ARCH_SPECIFIC__ (12.9 and later), and
// tma_maps.h encodes their tensor maps through the runtime's driver entry points (12.5 and later).
// Older toolkits build the library without them: such configs are unusable (probe_tma says why).
#if CUDART_VERSION >= 12090
#define SGT_TUNED_TMA_TOOLKIT 1
#include "tma_maps.h"
#else
#define SGT_TUNED_TMA_TOOLKIT 0
#endif

// Formats 8 and 9 name each config's kernel instances and launch (its family's), which this
// library instantiates and follows (9: its configs no longer carry the field TMA, kConfigFamilies
// names their family); formats 6 and 7 (two families, told apart by the TMA field) still build,
// their instances and launches derived from the fields as before.
static_assert(SGT_TUNED_TABLE_FORMAT_VERSION >= 6 && SGT_TUNED_TABLE_FORMAT_VERSION <= 11,
              "this dispatch library reads table formats 6 to 11: export the table with the "
              "sgemm-tune that ships this library");

// Format 10 states the table's precision class. A table of class fp32-accurate may hold kernels
// that are not FFMA (split TF32 on the tensor cores): a program gets them only when it asked for
// that class (sgemm_tune_add_library's PRECISION fp32-accurate), never silently.
#if SGT_TUNED_TABLE_FORMAT_VERSION >= 10 && !defined(SGT_TUNED_ACCEPT_FP32_ACCURATE)
static_assert(!::sgt_tuned_table::kPrecisionFp32Accurate,
              "this table was exported with --precision fp32-accurate (it may hold split-TF32 "
              "tensor-core kernels); build it with sgemm_tune_add_library(... PRECISION "
              "fp32-accurate) to accept that class, or export it with --precision fp32");
#endif

namespace sgemm_tuned {

namespace {

namespace table = ::sgt_tuned_table;
using detail::strf;

// A hand-edited table whose X-list disagrees with kConfigs would launch one config with another's
// grid and block; refuse to build it.
#define SGT_TUNED_CHECK_CONFIG(index, ...)                            \
  static_assert(table::kConfigs[index] == table::Config{__VA_ARGS__}, \
                "SGT_TUNED_CONFIGS disagrees with kConfigs: regenerate the table");
SGT_TUNED_CONFIGS(SGT_TUNED_CHECK_CONFIG)
#undef SGT_TUNED_CHECK_CONFIG

using Kernel = void (*)(int, int, int, float, const float*, int, const float*, int, float, float*,
                        int, int, float*);
using TmaKernel = void (*)(int, int, int, float, sgt_kernel::TmaMap, sgt_kernel::TmaMap, float,
                           float*, int, int, float*);
struct Instances {
  Kernel vec[4];     // float4 main-loop loads; NN, NT, TN, TT
  Kernel scalar[4];  // single-float main-loop loads, for what was tuned on such operands
  TmaKernel tma[4];  // tensor_maps launches (sgemm_ws_tma; vec, scalar empty); NN, NT, TN, TT
  // split_maps launches: one tile kernel for every layout, on the panels that its split prepass
  // (tf32x3_split_operand) writes; sgemm_tf32x3_wgmma's arguments, or for a SPLIT_K > 1 config
  // sgemm_tf32x3_wgmma_splitk's (two more: k_chunk, partial), which launch_split_maps passes by
  // the plan's split_entry. A config of the BF16 split (BK kB6BK: sgemm_bf16x6_wgmma's, the same
  // arguments) runs split_prepass_bf16 instead (bf16x6_split_operand), which only a table whose
  // kernel file is sgemm_bf16x6_wgmma.cuh holds (an earlier table's has no BF16 config).
  const void* split;
  const void* split_prepass;
  const void* split_prepass_bf16;
};
#if SGT_TUNED_TMA_TOOLKIT
// The split prepass of a split_maps config: its split's.
const void* split_prepass(const Instances& k, const table::Config& cfg) {
  return cfg.BK == sgt_kernel::kB6BK ? k.split_prepass_bf16 : k.split_prepass;
}
#endif

#if SGT_TUNED_TABLE_FORMAT_VERSION >= 8
// Taking each address the table names instantiates that kernel, and only the table's: its float4
// and single-float instances for calls in each layout, by the launch its family uses. Kernels
// launched with tensor maps need the toolkit that builds them (probe_tma refuses them otherwise).
#define SGT_TUNED_INSTANCE_pointers(NN, NT, TN, TT, sNN, sNT, sTN, sTT) \
  Instances{{&NN, &NT, &TN, &TT}, {&sNN, &sNT, &sTN, &sTT}, {}, nullptr, nullptr, nullptr},
#if SGT_TUNED_TMA_TOOLKIT
#define SGT_TUNED_INSTANCE_tensor_maps(NN, NT, TN, TT, sNN, sNT, sTN, sTT) \
  Instances{{}, {}, {&NN, &NT, &TN, &TT}, nullptr, nullptr, nullptr},
// The split prepasses are declared in the family's kernel file, which the table names (the BF16
// split's only in sgemm_bf16x6_wgmma.cuh, which defines SGT_BF16X6_WGMMA).
#ifdef SGT_BF16X6_WGMMA
#define SGT_TUNED_BF16_PREPASS \
  reinterpret_cast<const void*>(&bf16x6_split_operand<sgt_kernel::kB6Parts>)
#else
#define SGT_TUNED_BF16_PREPASS nullptr
#endif
#define SGT_TUNED_INSTANCE_split_maps(NN, NT, TN, TT, sNN, sNT, sTN, sTT) \
  Instances{{},                                                           \
            {},                                                           \
            {},                                                           \
            reinterpret_cast<const void*>(&NN),                           \
            reinterpret_cast<const void*>(&tf32x3_split_operand),         \
            SGT_TUNED_BF16_PREPASS},
#else
#define SGT_TUNED_INSTANCE_tensor_maps(...) Instances{},
#define SGT_TUNED_INSTANCE_split_maps(...) Instances{},
#endif
#define SGT_TUNED_INSTANCE(index, launch, ...) SGT_TUNED_INSTANCE_##launch(__VA_ARGS__)
// The trailing entry keeps the array non-empty for a table without configs.
const Instances kKernels[] = {SGT_TUNED_INSTANCES(SGT_TUNED_INSTANCE) Instances{}};
#undef SGT_TUNED_INSTANCE
#else
// Taking each address instantiates the kernel for that config (in the four layouts; the warp-tiling
// template with both loads, or for ws_tma sgemm_ws_tma), and only for the configs of the table.
// SPLIT_K is a launch parameter, not a template argument; STAGE_C is always 0 with TMA, and a TMA
// config with PACK runs its TN instance on the panels.
template <int BM, int BN, int BK, int WM, int WN, int WNITER, int TM, int TN, int NT, int MB,
          int STAGES, int PAD_A, int GROUP_M, int FMA_ORDER, int PAD_B, int PACK, int STAGE_C,
          int TMA>
constexpr Instances instances() {
  if constexpr (TMA == 1) {
#if SGT_TUNED_TMA_TOOLKIT
#define SGT_TUNED_TMA(TA, TB)                                                                  \
  &sgemm_ws_tma<BM, BN, BK, WM, WN, WNITER, TM, TN, NT, MB, STAGES, PAD_A, GROUP_M, FMA_ORDER, \
                PAD_B, TA, TB>
    return Instances{{},
                     {},
                     {SGT_TUNED_TMA(false, false), SGT_TUNED_TMA(false, true),
                      SGT_TUNED_TMA(true, false), SGT_TUNED_TMA(true, true)},
                     nullptr,
                     nullptr,
                     nullptr};
#undef SGT_TUNED_TMA
#else
    return Instances{};
#endif
  } else {
#define SGT_TUNED_WT(TA, TB, VEC)                                                                \
  &sgemm_warptile<BM, BN, BK, WM, WN, WNITER, TM, TN, NT, MB, STAGES, PAD_A, GROUP_M, FMA_ORDER, \
                  PAD_B, PACK, STAGE_C, TA, TB, VEC>
    return Instances{{SGT_TUNED_WT(false, false, true), SGT_TUNED_WT(false, true, true),
                      SGT_TUNED_WT(true, false, true), SGT_TUNED_WT(true, true, true)},
                     {SGT_TUNED_WT(false, false, false), SGT_TUNED_WT(false, true, false),
                      SGT_TUNED_WT(true, false, false), SGT_TUNED_WT(true, true, false)},
                     {},
                     nullptr,
                     nullptr,
                     nullptr};
#undef SGT_TUNED_WT
  }
}

#define SGT_TUNED_KERNEL(index, BM, BN, BK, WM, WN, WNITER, TM, TN, NT, MB, STAGES, PAD_A,        \
                         GROUP_M, SPLIT_K, FMA_ORDER, PAD_B, PACK, STAGE_C, TMA)                  \
  instances<BM, BN, BK, WM, WN, WNITER, TM, TN, NT, MB, STAGES, PAD_A, GROUP_M, FMA_ORDER, PAD_B, \
            PACK, STAGE_C, TMA>(),
// The trailing entry keeps the array non-empty for a table without configs.
const Instances kKernels[] = {SGT_TUNED_CONFIGS(SGT_TUNED_KERNEL) Instances{}};
#undef SGT_TUNED_KERNEL

#endif

using detail::layout_index;

struct DeviceState {
  detail::DeviceIdentity id;
  std::vector<std::string> unusable;  // per config: empty when this build can launch it here
  std::mutex cublas_mutex;            // guards the handle: its stream is shared state
  cublasHandle_t cublas = nullptr;
  cudaMemPool_t pool = nullptr;  // the tuned calls' workspace and panels (make_call_pool)
};

#if SGT_TUNED_TMA_TOOLKIT
sgt_kernel::Geometry geometry(const table::Config& c) {
  return sgt_kernel::make_geometry(c.BM, c.BN, c.BK, c.WM, c.WN, c.WNITER, c.TM, c.TN,
                                   c.NUM_THREADS, c.STAGES, c.PAD_A, c.PAD_B);
}

#endif

// Why this build cannot run TMA-fed kernels anywhere; nullptr when it can. SGT_TUNED_SM90A is
// defined by sgemm_tuned's CMake from the library's CUDA_ARCHITECTURES: 1 when they hold 90a.
const char* tma_build_refusal() {
#if !SGT_TUNED_TMA_TOOLKIT
  return "it is a TMA-fed kernel, which needs CUDA 12.9 or later to build";
#elif !defined(SGT_TUNED_SM90A)
  return "it is a TMA-fed kernel, and this build does not say that it holds an sm_90a image "
         "(SGT_TUNED_SM90A is not defined; sgemm_tuned's CMake defines it from "
         "CUDA_ARCHITECTURES)";
#elif !SGT_TUNED_SM90A
  return "it is a TMA-fed kernel, which has a body only in an sm_90a image, and this build holds "
         "none; add 90a to CMAKE_CUDA_ARCHITECTURES";
#else
  return nullptr;
#endif
}

// Empty when this build can launch TMA-fed config i on the device, else why not. Sets each
// layout's dynamic shared-memory limit, which a launch above 48 KB needs first.
std::string probe_tma(const cudaDeviceProp& p, int i) {
  const auto f = detail::launch_facts(i);
  if (const char* why = tma_build_refusal()) return why;
#if SGT_TUNED_TMA_TOOLKIT
  if (f.arch_only != 0 && p.major * 10 + p.minor != f.arch_only) {
    return strf(
        "it is a TMA-fed kernel, which runs only on compute capability %d.%d (sm_%da), not "
        "on sm_%d%d",
        f.arch_only / 10, f.arch_only % 10, f.arch_only, p.major, p.minor);
  }
  if (!sgt_kernel::tma_encoder()) {
    return "it is a TMA-fed kernel, and the driver offers no cuTensorMapEncodeTiled for its "
           "tensor maps";
  }
  const auto& cfg = table::kConfigs[i];
  int layouts = 0;
  for (int layout = 0; layout < 4; ++layout) {
    // Only the layouts it can run in: TN alone with PACK (the panels), and those whose staging
    // boxes fit (misfit() keeps calls of the others away).
    const bool ta = layout >= 2, tb = layout % 2 == 1;
    if (cfg.PACK && !(ta && !tb)) continue;
    if (f.block_bytes[layout] > detail::kTmaSharedLimit) continue;
    ++layouts;
    const auto kernel =
        f.split_maps ? kKernels[i].split : reinterpret_cast<const void*>(kKernels[i].tma[layout]);
    if (f.split_maps && !split_prepass(kKernels[i], cfg))
      return cfg.BK == sgt_kernel::kB6BK
                 ? "this build holds no split prepass for it (bf16x6_split_operand)"
                 : "this build holds no split prepass for it (tf32x3_split_operand)";
    cudaFuncAttributes a{};
    if (const cudaError_t e = cudaFuncGetAttributes(&a, kernel); e != cudaSuccess) {
      (void)cudaGetLastError();  // an answer, not the caller's error (as in probe)
      return strf(
          "this build holds no kernel image of it for sm_%d%d (%s); add 90a to "
          "CMAKE_CUDA_ARCHITECTURES",
          p.major, p.minor, cudaGetErrorString(e));
    }
    // The kernel keeps its mbarriers in static shared memory; the body it compiles to outside
    // sm_90a only traps and has none. So this tells which image the device has loaded.
    if (a.sharedSizeBytes == 0) {
      return "it is a TMA-fed kernel, and the device loaded an image of it without its sm_90a "
             "body (one that only traps)";
    }
    const int smem_bytes = f.dynamic_smem[layout];
    if (a.maxThreadsPerBlock < f.threads) {
      return strf(
          "it needs %d threads per block (NUM_THREADS and the producer warpgroup), and "
          "sm_%d%d fits only %d at %d registers",
          f.threads, p.major, p.minor, a.maxThreadsPerBlock, a.numRegs);
    }
    const size_t smem = static_cast<size_t>(smem_bytes) + a.sharedSizeBytes;
    if (smem > p.sharedMemPerBlockOptin) {
      return strf("it needs %zu bytes of shared memory per block, and sm_%d%d allows %zu", smem,
                  p.major, p.minor, static_cast<size_t>(p.sharedMemPerBlockOptin));
    }
    if (const cudaError_t e =
            cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, smem_bytes);
        e != cudaSuccess) {
      (void)cudaGetLastError();
      return strf("its %d bytes of dynamic shared memory were refused (%s)", smem_bytes,
                  cudaGetErrorString(e));
    }
  }
  if (layouts == 0) return "it is a TMA-fed kernel whose stages fit no layout's shared memory";
  return {};
#else
  (void)p;
  (void)i;
  (void)f;
  return {};
#endif
}

cudaError_t probe(int dev, DeviceState& s) {
  cudaDeviceProp p{};
  if (const cudaError_t e = cudaGetDeviceProperties(&p, dev); e != cudaSuccess) return e;
  s.id = {p.name, p.major, p.minor, p.multiProcessorCount};
  if (const cudaError_t e = sgt_kernel::make_call_pool(dev, &s.pool); e != cudaSuccess) return e;
  s.unusable.assign(table::kConfigCount, std::string());
  for (int i = 0; i < table::kConfigCount; ++i) {
    const auto facts = detail::launch_facts(i);
    if (facts.tensor_maps || facts.split_maps) {  // both TMA-fed, sm_90a only
      s.unusable[i] = probe_tma(p, i);
      continue;
    }
    if (facts.arch_only != 0 && p.major * 10 + p.minor != facts.arch_only) {
      s.unusable[i] = strf("its kernel family has a body only for sm_%d, not sm_%d%d",
                           facts.arch_only, p.major, p.minor);
      continue;
    }
    cudaFuncAttributes a{};
    const cudaError_t e =
        cudaFuncGetAttributes(&a, reinterpret_cast<const void*>(kKernels[i].vec[0]));
    if (e != cudaSuccess) {
      // The probe's failure is an answer; left in place, the caller's next cudaGetLastError() would
      // report it as theirs.
      (void)cudaGetLastError();
      s.unusable[i] = strf(
          "this build holds no kernel image of it for sm_%d%d (%s); add %d%d to "
          "CMAKE_CUDA_ARCHITECTURES",
          p.major, p.minor, cudaGetErrorString(e), p.major, p.minor);
    } else if (a.maxThreadsPerBlock < facts.threads) {
      s.unusable[i] =
          strf("it needs %d threads per block, and sm_%d%d fits only %d at %d registers",
               facts.threads, p.major, p.minor, a.maxThreadsPerBlock, a.numRegs);
    }
  }
  return cudaSuccess;
}

// The current device's state, probed once. A failed probe is not kept, so a later call retries.
cudaError_t current_device(DeviceState** out) {
  int dev = 0;
  if (const cudaError_t e = cudaGetDevice(&dev); e != cudaSuccess) return e;
  // Never destroyed: another thread or an atexit handler may still call sgemm() while statics are
  // torn down, and cuBLAS handles must not be destroyed after the CUDA runtime has unloaded.
  static auto* mutex = new std::mutex;
  static auto* states = new std::map<int, std::unique_ptr<DeviceState>>;
  std::lock_guard<std::mutex> lock(*mutex);
  auto& s = (*states)[dev];
  if (!s) {
    auto fresh = std::make_unique<DeviceState>();
    if (const cudaError_t e = probe(dev, *fresh); e != cudaSuccess) return e;
    s = std::move(fresh);
  }
  *out = s.get();
  return cudaSuccess;
}

cudaError_t to_cuda_error(cublasStatus_t st) {
  switch (st) {
    case CUBLAS_STATUS_SUCCESS:
      return cudaSuccess;
    case CUBLAS_STATUS_ALLOC_FAILED:
      return cudaErrorMemoryAllocation;
    case CUBLAS_STATUS_INVALID_VALUE:
      return cudaErrorInvalidValue;
    case CUBLAS_STATUS_ARCH_MISMATCH:
      return cudaErrorNoKernelImageForDevice;
    case CUBLAS_STATUS_NOT_SUPPORTED:
      return cudaErrorNotSupported;
    case CUBLAS_STATUS_EXECUTION_FAILED:
      return cudaErrorLaunchFailure;
    case CUBLAS_STATUS_NOT_INITIALIZED:
      return cudaErrorInitializationError;
    default:
      return cudaErrorUnknown;
  }
}

cudaError_t run_cublas(DeviceState& s, bool trans_a, bool trans_b, int M, int N, int K, float alpha,
                       const float* A, int lda, const float* B, int ldb, float beta, float* C,
                       int ldc, cudaStream_t stream) {
  std::lock_guard<std::mutex> lock(s.cublas_mutex);
  if (!s.cublas) {
    // Created on the device that is current now, which is the one `s` describes.
    cublasHandle_t h = nullptr;
    cublasStatus_t st = cublasCreate(&h);
    // Pedantic: FP32 throughout, never TF32, so the fallback computes what the kernels compute.
    if (st == CUBLAS_STATUS_SUCCESS) st = cublasSetMathMode(h, CUBLAS_PEDANTIC_MATH);
    if (st != CUBLAS_STATUS_SUCCESS) {
      if (h) cublasDestroy(h);
      return to_cuda_error(st);
    }
    s.cublas = h;
  }
  cublasStatus_t st = cublasSetStream(s.cublas, stream);
  // Row-major C = op(A) op(B) is column-major C^T = op(B)^T op(A)^T, and a row-major stored matrix
  // is its own transpose in column-major terms: swap the operands, keep each one's op and stride.
  if (st == CUBLAS_STATUS_SUCCESS) {
    st = cublasSgemm(s.cublas, trans_b ? CUBLAS_OP_T : CUBLAS_OP_N,
                     trans_a ? CUBLAS_OP_T : CUBLAS_OP_N, N, M, K, &alpha, B, ldb, A, lda, &beta, C,
                     ldc);
  }
  return to_cuda_error(st);
}

// Whether a config runs the wave-aware tail (format 11's TAIL).
bool has_tail(const table::Config& cfg) {
#if SGT_TUNED_TABLE_FORMAT_VERSION >= 11
  return cfg.TAIL != 0;
#else
  (void)cfg;
  return false;
#endif
}

// plan()'s `resident` for a call of `cfg` on `kernel`: 1 without a tail, else the blocks of the
// kernel an SM holds (resident_blocks, as the worker asks it); an error is the call's.
cudaError_t tail_wave(const table::Config& cfg, const void* kernel, int threads, int smem,
                      int* resident) {
  *resident = 1;
  if (!has_tail(cfg)) return cudaSuccess;
  return sgt_kernel::resident_blocks(kernel, threads, static_cast<size_t>(smem), resident);
}

// The call's launches (launch_plan.h, which the tuner's worker runs too): its config's tile,
// packing, split-K and wave-aware tail (`resident`: resident_blocks of its tile kernel), on this
// device.
sgt_kernel::CallPlan plan(int config, const detail::Call& call, const detail::DeviceIdentity& dev,
                          int resident = 1) {
  const auto& cfg = table::kConfigs[config];
  return sgt_kernel::plan_call(
      {cfg.BM, cfg.BN, cfg.BK, cfg.SPLIT_K, cfg.PACK != 0, detail::launch_facts(config).tensor_maps,
       has_tail(cfg), cfg.GROUP_M},
      call.M, call.N, call.K, call.trans_a, call.trans_b, reinterpret_cast<const float*>(call.A),
      call.A % 16 == 0, call.lda, reinterpret_cast<const float*>(call.B), call.B % 16 == 0,
      call.ldb, dev.sm_count, dev.cc_major >= 9, resident);
}

// The instance layout plan() gives a call of `config` (the call's, or TN on PACK's panels): a
// tail's occupancy is asked of that instance before the plan is made.
int instance_layout(const table::Config& cfg, const detail::Call& call) {
  return cfg.PACK != 0 ? layout_index(true, false) : layout_index(call.trans_a, call.trans_b);
}

#if SGT_TUNED_TMA_TOOLKIT
static_assert(sizeof(CUtensorMap) == sizeof(sgt_kernel::TmaMap) &&
                  alignof(CUtensorMap) >= alignof(sgt_kernel::TmaMap),
              "the kernel's TmaMap parameter must take a CUtensorMap as is");

cudaError_t to_cuda_error(CUresult r) {
  switch (r) {
    case CUDA_SUCCESS:
      return cudaSuccess;
    case CUDA_ERROR_INVALID_VALUE:
      return cudaErrorInvalidValue;
    case CUDA_ERROR_NOT_SUPPORTED:
      return cudaErrorNotSupported;
    default:
      return cudaErrorUnknown;
  }
}
#endif

// A TMA-fed config: tensor maps of A and B for its geometry, then sgemm_ws_tma with the producer
// warpgroup and its dynamic shared memory (limits set by probe_tma). choose() only picks it where
// probe_tma and misfit found nothing against it.
cudaError_t launch_tma(const detail::Choice& choice, const detail::Call& call,
                       const DeviceState& dev, float alpha, const float* A, const float* B,
                       float beta, float* C, cudaStream_t stream) {
#if SGT_TUNED_TMA_TOOLKIT
  const auto& cfg = table::kConfigs[choice.config];
  const auto f = detail::launch_facts(choice.config);
  const int layout = instance_layout(cfg, call);
  const void* kernel = reinterpret_cast<const void*>(kKernels[choice.config].tma[layout]);
  int resident = 1;
  if (const cudaError_t e = tail_wave(cfg, kernel, f.threads, f.dynamic_smem[layout], &resident);
      e != cudaSuccess)
    return e;
  const auto p = plan(choice.config, call, dev.id, resident);
  auto tile = [&](const float* a, int lda, const float* b, int ldb, float* work, bool tail) {
    // With K = 0 the kernel copies nothing: its maps stay zero, and the operands need nothing.
    sgt_kernel::TmaMaps maps{};
    if (call.K > 0) {
      // misfit() refuses such operands first; the maps must never be encoded from them.
      if (!sgt_kernel::tma_operand(a, lda) || !sgt_kernel::tma_operand(b, ldb))
        return cudaErrorInvalidValue;
      // A tail's maps cover its sub-problem (a and b: tail_a, tail_b).
      if (const CUresult r = sgt_kernel::tma_encode_maps(
              maps, geometry(cfg), p.trans_a, p.trans_b, tail ? p.tail.M : call.M,
              tail ? p.tail.N : call.N, call.K, a, lda, b, ldb);
          r != CUDA_SUCCESS)
        return to_cuda_error(r);
    }
    return sgt_kernel::launch_ws_tma(
        kernel, p, static_cast<unsigned>(f.threads), static_cast<size_t>(f.dynamic_smem[layout]),
        maps.a, maps.b, call.M, call.N, call.K, alpha, beta, C, call.ldc, work, stream, tail);
  };
  return sgt_kernel::run_call(p, reinterpret_cast<const void*>(&sgemm_pack<0>),
                              reinterpret_cast<const void*>(&sgemm_splitk_reduce<0>), call.M,
                              call.N, call.K, alpha, A, call.lda, B, call.ldb, beta, C, call.ldc,
                              dev.pool, stream, tile);
#else
  (void)choice, (void)call, (void)dev, (void)alpha, (void)A, (void)B, (void)beta, (void)C,
      (void)stream;
  return cudaErrorNotSupported;  // never chosen: probe_tma refuses every TMA-fed config
#endif
}

// A split_maps config (the split-TF32 wgmma kernel): the launch plan's split-K workspace (a
// SPLIT_K > 1 config), panel workspace and split prepass on each operand, tensor maps of the four
// panels, the tile kernel with its dynamic shared memory (limits set by probe_tma), then the
// split-K reduction. Any operands; choose() only picks it where probe_tma and misfit found
// nothing against it.
cudaError_t launch_split(const detail::Choice& choice, const detail::Call& call,
                         const DeviceState& dev, float alpha, const float* A, const float* B,
                         float beta, float* C, cudaStream_t stream) {
#if SGT_TUNED_TMA_TOOLKIT
  const auto& cfg = table::kConfigs[choice.config];
  const auto& k = kKernels[choice.config];
  const auto f = detail::launch_facts(choice.config);
#if SGT_TUNED_TABLE_FORMAT_VERSION >= 11
  const bool tail = cfg.TAIL != 0;  // format 11: the wave-aware tail
#else
  const bool tail = false;
#endif
  const auto p = sgt_kernel::plan_split_call(cfg.BM, cfg.BN, cfg.SPLIT_K, call.M, call.N, call.K,
                                             call.trans_a, call.trans_b, dev.id.sm_count,
                                             dev.id.cc_major >= 9, cfg.BK, tail, cfg.GROUP_M);
  const int smem = f.dynamic_smem[layout_index(call.trans_a, call.trans_b)];
  auto tile = [&](const float* work, float* partial, bool tail_launch) {
    // With K = 0 the kernel copies nothing: its maps stay zero. The tail's cover its panel rows.
    sgt_kernel::SplitMaps maps{};
    if (work) {
      if (const CUresult r = sgt_kernel::tma_encode_split_maps(
              maps, work, call.M, call.N, call.K, p.bf16, tail_launch ? p.tail.row0 : 0,
              tail_launch ? p.tail.col0 : 0);
          r != CUDA_SUCCESS)
        return to_cuda_error(r);
    }
    return sgt_kernel::launch_split_maps(k.split, p, static_cast<unsigned>(f.threads),
                                         static_cast<size_t>(smem), maps.a_big, maps.a_small,
                                         maps.b_big, maps.b_small, call.M, call.N, call.K, alpha,
                                         beta, C, call.ldc, partial, stream, tail_launch);
  };
  return sgt_kernel::run_split_call(
      p, split_prepass(k, cfg), reinterpret_cast<const void*>(&sgemm_splitk_reduce<0>), call.M,
      call.N, call.K, alpha, A, call.lda, B, call.ldb, beta, C, call.ldc, dev.pool, stream, tile);
#else
  (void)choice, (void)call, (void)dev, (void)alpha, (void)A, (void)B, (void)beta, (void)C,
      (void)stream;
  return cudaErrorNotSupported;  // never chosen: probe_tma refuses every TMA-fed config
#endif
}

cudaError_t launch(const detail::Choice& choice, const detail::Call& call, const DeviceState& dev,
                   float alpha, const float* A, const float* B, float beta, float* C,
                   cudaStream_t stream) {
  const auto& cfg = table::kConfigs[choice.config];
  const auto f = detail::launch_facts(choice.config);
  if (f.split_maps) return launch_split(choice, call, dev, alpha, A, B, beta, C, stream);
  if (f.tensor_maps) return launch_tma(choice, call, dev, alpha, A, B, beta, C, stream);
  // A PACK config runs its TN float4 instance (on panels where the operands need them).
  const auto& instances =
      choice.vec || cfg.PACK ? kKernels[choice.config].vec : kKernels[choice.config].scalar;
  const int layout = instance_layout(cfg, call);
  const void* kernel = reinterpret_cast<const void*>(instances[layout]);
  // A kernel with dynamic shared memory (sgemm_tf32x3's stages) may need more than the 48 KB a
  // launch gets without asking.
  const int smem = f.dynamic_smem[layout];
  if (smem > 0) {
    if (const cudaError_t e =
            cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, smem);
        e != cudaSuccess)
      return e;
  }
  int resident = 1;
  if (const cudaError_t e = tail_wave(cfg, kernel, f.threads, smem, &resident); e != cudaSuccess)
    return e;
  const auto p = plan(choice.config, call, dev.id, resident);
  auto tile = [&](const float* a, int lda, const float* b, int ldb, float* work, bool tail) {
    return sgt_kernel::launch_warptile(kernel, p, static_cast<unsigned>(f.threads), call.M, call.N,
                                       call.K, alpha, a, lda, b, ldb, beta, C, call.ldc, work,
                                       stream, static_cast<size_t>(smem), tail);
  };
  return sgt_kernel::run_call(p, reinterpret_cast<const void*>(&sgemm_pack<0>),
                              reinterpret_cast<const void*>(&sgemm_splitk_reduce<0>), call.M,
                              call.N, call.K, alpha, A, call.lda, B, call.ldb, beta, C, call.ldc,
                              dev.pool, stream, tile);
}

detail::Call make_call(Op op_a, Op op_b, int M, int N, int K, int lda, int ldb, int ldc,
                       const void* A, const void* B, const void* C) {
  detail::Call c;
  c.M = M;
  c.N = N;
  c.K = K;
  c.lda = lda;
  c.ldb = ldb;
  c.ldc = ldc;
  c.A = reinterpret_cast<std::uintptr_t>(A);
  c.B = reinterpret_cast<std::uintptr_t>(B);
  c.C = reinterpret_cast<std::uintptr_t>(C);
  c.trans_a = op_a == Op::T;
  c.trans_b = op_b == Op::T;
  return c;
}

}  // namespace

cudaError_t sgemm(Op op_a, Op op_b, int M, int N, int K, float alpha, const float* A, int lda,
                  const float* B, int ldb, float beta, float* C, int ldc, cudaStream_t stream) {
  DeviceState* s = nullptr;
  if (const cudaError_t e = current_device(&s); e != cudaSuccess) return e;
  const auto call = make_call(op_a, op_b, M, N, K, lda, ldb, ldc, A, B, C);
  const auto c = detail::choose(s->id, call, [s](int i) { return s->unusable[i]; });
  switch (c.path) {
    case detail::Path::kernel:
      return launch(c, call, *s, alpha, A, B, beta, C, stream);
    case detail::Path::cublas:
      return run_cublas(*s, call.trans_a, call.trans_b, M, N, K, alpha, A, lda, B, ldb, beta, C,
                        ldc, stream);
    case detail::Path::noop:
      return cudaSuccess;
    case detail::Path::invalid:
      break;
  }
  return cudaErrorInvalidValue;
}

cudaError_t sgemm(int M, int N, int K, float alpha, const float* A, int lda, const float* B,
                  int ldb, float beta, float* C, int ldc, cudaStream_t stream) {
  return sgemm(Op::N, Op::N, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc, stream);
}

cudaError_t release_memory() {
  DeviceState* s = nullptr;
  if (const cudaError_t e = current_device(&s); e != cudaSuccess) return e;
  return cudaMemPoolTrimTo(s->pool, 0);
}

std::string explain(Op op_a, Op op_b, int M, int N, int K, int lda, int ldb, int ldc, const void* A,
                    const void* B, const void* C) {
  DeviceState* s = nullptr;
  if (const cudaError_t e = current_device(&s); e != cudaSuccess) {
    (void)cudaGetLastError();  // explain() only asks; it leaves no error behind
    return strf("sgemm %dx%dx%d: no usable CUDA device (%s: %s), so sgemm() returns that error. ",
                M, N, K, cudaGetErrorName(e), cudaGetErrorString(e)) +
           detail::table_text();
  }
  const auto call = make_call(op_a, op_b, M, N, K, lda, ldb, ldc, A, B, C);
  return detail::describe(s->id, call,
                          detail::choose(s->id, call, [s](int i) { return s->unusable[i]; }));
}

std::string explain(int M, int N, int K, int lda, int ldb, int ldc, const void* A, const void* B,
                    const void* C) {
  return explain(Op::N, Op::N, M, N, K, lda, ldb, ldc, A, B, C);
}

}  // namespace sgemm_tuned
