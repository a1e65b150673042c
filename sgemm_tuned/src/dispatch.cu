// The dispatch library: nvcc instantiates the kernels of kernel_templates/ for exactly the configs
// of the embedded table (sgemm_warptile, or sgemm_ws_tma for TMA = 1); sgemm() launches the one
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

#include "dependent_launch.h"
#include "select.hpp"
#include "sgemm_warptile.cuh"
#include "sgemm_ws_tma.cuh"

// TMA = 1 kernels have a body only where nvcc defines __CUDA_ARCH_SPECIFIC__ (12.9 and later), and
// tma_maps.h encodes their tensor maps through the runtime's driver entry points (12.5 and later).
// Older toolkits build the library without them: such configs are unusable (probe_tma says why).
#if CUDART_VERSION >= 12090
#define SGT_TUNED_TMA_TOOLKIT 1
#include "tma_maps.h"
#else
#define SGT_TUNED_TMA_TOOLKIT 0
#endif

static_assert(SGT_TUNED_TABLE_FORMAT_VERSION == 6,
              "this dispatch library reads table format 6: export the table with the sgemm-tune "
              "that ships this library");

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
  TmaKernel tma[4];  // TMA = 1: sgemm_ws_tma (and vec, scalar empty); NN, NT, TN, TT
};

// Taking each address instantiates the kernel for that config (in the four layouts; the warp-tiling
// template with both loads, or for TMA = 1 sgemm_ws_tma), and only for the configs of the table.
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
                      SGT_TUNED_TMA(true, false), SGT_TUNED_TMA(true, true)}};
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
                     {}};
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

int layout_index(bool trans_a, bool trans_b) {
  return (trans_a ? 2 : 0) + (trans_b ? 1 : 0);
}
int layout_index(const detail::Call& c) {
  return layout_index(c.trans_a, c.trans_b);
}

// PACK configs: copies the operands that need it into k-major panels in stream-ordered memory
// (*panels, for the caller to free after the tile kernel) with one sgemm_pack launch, and points
// A, lda, B, ldb at what the TN float4 instance reads.
cudaError_t pack(const detail::Call& call, const float*& A, int& lda, const float*& B, int& ldb,
                 float** panels, cudaStream_t stream) {
  auto plan = sgt_kernel::plan_pack(call.trans_a, call.trans_b, call.M, call.N, call.K, A,
                                    call.A % 16 == 0, lda, B, call.B % 16 == 0, ldb);
  if (plan.floats == 0) return cudaSuccess;
  if (const cudaError_t e =
          cudaMallocAsync(reinterpret_cast<void**>(panels),
                          static_cast<size_t>(plan.floats) * sizeof(float), stream);
      e != cudaSuccess)
    return e;
  sgt_kernel::bind_pack(plan, *panels, A, lda, B, ldb);
  int K = call.K;
  void* args[] = {&K, &plan.a, &plan.b};
  return cudaLaunchKernel(reinterpret_cast<const void*>(&sgemm_pack<0>),
                          dim3(static_cast<unsigned>(plan.grid_x), plan.grid_y, 2),
                          dim3(sgt_kernel::kPackThreads), args, 0, stream);
}

struct DeviceState {
  detail::DeviceIdentity id;
  std::vector<std::string> unusable;  // per config: empty when this build can launch it here
  std::mutex cublas_mutex;            // guards the handle: its stream is shared state
  cublasHandle_t cublas = nullptr;
};

#if SGT_TUNED_TMA_TOOLKIT
sgt_kernel::Geometry geometry(const table::Config& c) {
  return sgt_kernel::make_geometry(c.BM, c.BN, c.BK, c.WM, c.WN, c.WNITER, c.TM, c.TN,
                                   c.NUM_THREADS, c.STAGES, c.PAD_A, c.PAD_B);
}

// The TMA = 1 kernel's block and shared memory in one layout (layout_index order).
sgt_kernel::TmaLayout tma_layout(const table::Config& c, int layout) {
  return sgt_kernel::make_tma_layout(geometry(c), layout >= 2, layout % 2 == 1, c.MIN_BLOCKS);
}
#endif

// Why this build cannot run TMA = 1 kernels anywhere; nullptr when it can. SGT_TUNED_SM90A is
// defined by sgemm_tuned's CMake from the library's CUDA_ARCHITECTURES: 1 when they hold 90a.
const char* tma_build_refusal() {
#if !SGT_TUNED_TMA_TOOLKIT
  return "it is a TMA = 1 kernel, which needs CUDA 12.9 or later to build";
#elif !defined(SGT_TUNED_SM90A)
  return "it is a TMA = 1 kernel, and this build does not say that it holds an sm_90a image "
         "(SGT_TUNED_SM90A is not defined; sgemm_tuned's CMake defines it from "
         "CUDA_ARCHITECTURES)";
#elif !SGT_TUNED_SM90A
  return "it is a TMA = 1 kernel, which has a body only in an sm_90a image, and this build holds "
         "none; add 90a to CMAKE_CUDA_ARCHITECTURES";
#else
  return nullptr;
#endif
}

// Empty when this build can launch TMA = 1 config i on the device, else why not. Sets each
// layout's dynamic shared-memory limit, which a launch above 48 KB needs first.
std::string probe_tma(const cudaDeviceProp& p, int i) {
  if (const char* why = tma_build_refusal()) return why;
#if SGT_TUNED_TMA_TOOLKIT
  if (p.major != 9 || p.minor != 0) {
    return strf(
        "it is a TMA = 1 kernel, which runs only on compute capability 9.0 (sm_90a), not "
        "on sm_%d%d",
        p.major, p.minor);
  }
  if (!sgt_kernel::tma_encoder()) {
    return "it is a TMA = 1 kernel, and the driver offers no cuTensorMapEncodeTiled for its "
           "tensor maps";
  }
  const auto& cfg = table::kConfigs[i];
  int layouts = 0;
  for (int layout = 0; layout < 4; ++layout) {
    // Only the layouts it can run in: TN alone with PACK (the panels), and those whose staging
    // boxes fit (misfit() keeps calls of the others away).
    const bool ta = layout >= 2, tb = layout % 2 == 1;
    if (cfg.PACK && !(ta && !tb)) continue;
    if (detail::tma_block_bytes(cfg, ta, tb) > detail::kTmaSharedLimit) continue;
    ++layouts;
    const auto kernel = reinterpret_cast<const void*>(kKernels[i].tma[layout]);
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
      return "it is a TMA = 1 kernel, and the device loaded an image of it without its sm_90a "
             "body (one that only traps)";
    }
    const auto t = tma_layout(cfg, layout);
    if (a.maxThreadsPerBlock < t.THREADS) {
      return strf(
          "it needs %d threads per block (NUM_THREADS and the producer warpgroup), and "
          "sm_%d%d fits only %d at %d registers",
          t.THREADS, p.major, p.minor, a.maxThreadsPerBlock, a.numRegs);
    }
    const size_t smem = static_cast<size_t>(t.SMEM_BYTES) + a.sharedSizeBytes;
    if (smem > p.sharedMemPerBlockOptin) {
      return strf("it needs %zu bytes of shared memory per block, and sm_%d%d allows %zu", smem,
                  p.major, p.minor, static_cast<size_t>(p.sharedMemPerBlockOptin));
    }
    if (const cudaError_t e =
            cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, t.SMEM_BYTES);
        e != cudaSuccess) {
      (void)cudaGetLastError();
      return strf("its %d bytes of dynamic shared memory were refused (%s)", t.SMEM_BYTES,
                  cudaGetErrorString(e));
    }
  }
  if (layouts == 0) return "it is a TMA = 1 kernel whose stages fit no layout's shared memory";
  return {};
#else
  (void)p;
  (void)i;
  return {};
#endif
}

cudaError_t probe(int dev, DeviceState& s) {
  cudaDeviceProp p{};
  if (const cudaError_t e = cudaGetDeviceProperties(&p, dev); e != cudaSuccess) return e;
  s.id = {p.name, p.major, p.minor, p.multiProcessorCount};
  s.unusable.assign(table::kConfigCount, std::string());
  for (int i = 0; i < table::kConfigCount; ++i) {
    if (table::kConfigs[i].TMA == 1) {
      s.unusable[i] = probe_tma(p, i);
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
    } else if (a.maxThreadsPerBlock < table::kConfigs[i].NUM_THREADS) {
      s.unusable[i] =
          strf("it needs %d threads per block, and sm_%d%d fits only %d at %d registers",
               table::kConfigs[i].NUM_THREADS, p.major, p.minor, a.maxThreadsPerBlock, a.numRegs);
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

// Split-K: C = alpha * (the sum of the splits' partial products in `work`) + beta * C, by the
// reduction kernel, launched dependent on the tile kernel just before it.
cudaError_t reduce_splits(int splits, int M, int N, float alpha, const float* work, float beta,
                          float* C, int ldc, bool overlap, cudaStream_t stream) {
  const float* partial = work;
  void* rargs[] = {&M, &N, &splits, &alpha, &partial, &beta, &C, &ldc};
  const long long total = static_cast<long long>(M) * N;
  const unsigned blocks = static_cast<unsigned>(std::min<long long>((total + 255) / 256, 4096));
  return sgt_kernel::launch_dependent(overlap,
                                      reinterpret_cast<const void*>(&sgemm_splitk_reduce<0>),
                                      dim3(blocks), dim3(256), rargs, stream);
}

// What every tuned call runs around its tile kernel, in stream order. The split-K workspace comes
// first, in stream-ordered memory (no state shared between streams), so that the pack, tile and
// reduction kernels follow each other directly, as programmatic dependent launch needs. Then the
// panels of a PACK config (A, lda, B, ldb then name them), the tile kernel
// `tile(A, lda, B, ldb, work, packed)`, the split-K reduction, and the frees.
template <class Tile>
cudaError_t run_tiles(const table::Config& cfg, const detail::Call& call,
                      const sgt_kernel::LaunchDims& d, float alpha, const float* A, const float* B,
                      float beta, float* C, bool overlap, cudaStream_t stream, Tile&& tile) {
  int lda = call.lda, ldb = call.ldb;
  float* work = nullptr;
  float* panels = nullptr;
  cudaError_t e = cudaSuccess;
  if (d.workspace_floats > 0) {
    e = cudaMallocAsync(reinterpret_cast<void**>(&work),
                        static_cast<size_t>(d.workspace_floats) * sizeof(float), stream);
  }
  if (e == cudaSuccess && cfg.PACK && call.K > 0) e = pack(call, A, lda, B, ldb, &panels, stream);
  if (e == cudaSuccess) e = tile(A, lda, B, ldb, work, panels != nullptr);
  if (work && e == cudaSuccess)
    e = reduce_splits(d.grid_z, call.M, call.N, alpha, work, beta, C, call.ldc, overlap, stream);
  for (float* p : {panels, work}) {
    if (!p) continue;
    const cudaError_t f = cudaFreeAsync(p, stream);
    if (e == cudaSuccess) e = f;
  }
  return e;
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

// A TMA = 1 config: tensor maps of A and B for its geometry, then sgemm_ws_tma with the producer
// warpgroup and its dynamic shared memory (limits set by probe_tma), split-K as for the other
// kernel. choose() only picks it where probe_tma and misfit found nothing against it.
cudaError_t launch_tma(const detail::Choice& choice, const detail::Call& call, float alpha,
                       const float* A, const float* B, float beta, float* C, bool overlap,
                       cudaStream_t stream) {
#if SGT_TUNED_TMA_TOOLKIT
  const auto& cfg = table::kConfigs[choice.config];
  // With PACK the kernel is the TN instance on the panels (see pack above).
  const bool ta = detail::tma_runs_trans_a(cfg, call), tb = detail::tma_runs_trans_b(cfg, call);
  const int layout = layout_index(ta, tb);
  const auto t = tma_layout(cfg, layout);
  const auto d =
      sgt_kernel::launch_dims(call.M, call.N, call.K, cfg.BM, cfg.BN, cfg.BK, cfg.SPLIT_K);
  // With PACK the panels come first; the tile kernel follows in the stream (a plain launch).
  auto tile = [&](const float* a, int lda, const float* b, int ldb, float* work, bool) {
    int M = call.M, N = call.N, K = call.K, ldc = call.ldc, k_chunk = d.k_chunk;
    // With K = 0 the kernel copies nothing: its maps stay zero, and the operands need nothing.
    sgt_kernel::TmaMaps maps{};
    if (K > 0) {
      // misfit() refuses such operands first; the maps must never be encoded from them.
      if (!sgt_kernel::tma_operand(a, lda) || !sgt_kernel::tma_operand(b, ldb))
        return cudaErrorInvalidValue;
      if (const CUresult r =
              sgt_kernel::tma_encode_maps(maps, geometry(cfg), ta, tb, M, N, K, a, lda, b, ldb);
          r != CUDA_SUCCESS)
        return to_cuda_error(r);
    }
    void* args[] = {&M, &N, &K, &alpha, &maps.a, &maps.b, &beta, &C, &ldc, &k_chunk, &work};
    // A plain launch: nothing of this call runs before it. (No dependent launch here: that helper
    // takes no dynamic shared memory.)
    const dim3 grid(static_cast<unsigned>(d.grid_x), 1, static_cast<unsigned>(d.grid_z));
    return cudaLaunchKernel(reinterpret_cast<const void*>(kKernels[choice.config].tma[layout]),
                            grid, dim3(static_cast<unsigned>(t.THREADS)), args,
                            static_cast<size_t>(t.SMEM_BYTES), stream);
  };
  return run_tiles(cfg, call, d, alpha, A, B, beta, C, overlap, stream, tile);
#else
  (void)choice, (void)call, (void)alpha, (void)A, (void)B, (void)beta, (void)C, (void)overlap,
      (void)stream;
  return cudaErrorNotSupported;  // never chosen: probe_tma refuses every TMA = 1 config
#endif
}

// overlap: the device takes programmatic dependent launches (sm_90+, see launch_dependent).
cudaError_t launch(const detail::Choice& choice, const detail::Call& call, float alpha,
                   const float* A, const float* B, float beta, float* C, bool overlap,
                   cudaStream_t stream) {
  const auto& cfg = table::kConfigs[choice.config];
  if (cfg.TMA == 1) return launch_tma(choice, call, alpha, A, B, beta, C, overlap, stream);
  // A PACK config runs its TN float4 instance on panels (see pack below).
  const bool packed = cfg.PACK != 0;
  const auto& instances =
      choice.vec || packed ? kKernels[choice.config].vec : kKernels[choice.config].scalar;
  const Kernel kernel = instances[packed ? layout_index(true, false) : layout_index(call)];
  const auto d =
      sgt_kernel::launch_dims(call.M, call.N, call.K, cfg.BM, cfg.BN, cfg.BK, cfg.SPLIT_K);
  auto tile = [&](const float* a, int lda, const float* b, int ldb, float* work, bool panels) {
    int M = call.M, N = call.N, K = call.K, ldc = call.ldc, k_chunk = d.k_chunk;
    void* args[] = {&M, &N, &K, &alpha, &a, &lda, &b, &ldb, &beta, &C, &ldc, &k_chunk, &work};
    // After a pack a dependent launch (sm_90+). A launch call returns this launch's own error,
    // where <<<>>> would leave it to a later cudaGetLastError() that may return an earlier,
    // unrelated one instead.
    const dim3 grid(static_cast<unsigned>(d.grid_x), 1, static_cast<unsigned>(d.grid_z));
    const dim3 block(static_cast<unsigned>(cfg.NUM_THREADS));
    return sgt_kernel::launch_dependent(panels && overlap, reinterpret_cast<const void*>(kernel),
                                        grid, block, args, stream);
  };
  return run_tiles(cfg, call, d, alpha, A, B, beta, C, overlap, stream, tile);
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
      return launch(c, call, alpha, A, B, beta, C, s->id.cc_major >= 9, stream);
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
