// The dispatch library: nvcc instantiates sgemm_warptile from kernel_templates/ for exactly the
// configs of the embedded table; sgemm() launches the one select.hpp chooses, else cuBLAS.
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

static_assert(SGT_TUNED_TABLE_FORMAT_VERSION == 5,
              "this dispatch library reads table format 5: export the table with the sgemm-tune "
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
struct Instances {
  Kernel vec[4];     // float4 main-loop loads; NN, NT, TN, TT
  Kernel scalar[4];  // single-float main-loop loads, for what was tuned on such operands
};

// Taking each address instantiates the template for that config (in the four layouts, both
// instances), and only for the configs of the table. SPLIT_K is a launch parameter, not a template
// argument.
#define SGT_TUNED_INSTANCE(TA, TB, VEC, BM, BN, BK, WM, WN, WNITER, TM, TN, NT, MB, STAGES, PAD_A, \
                           GROUP_M, FMA_ORDER, PAD_B, PACK, STAGE_C)                               \
  &sgemm_warptile<BM, BN, BK, WM, WN, WNITER, TM, TN, NT, MB, STAGES, PAD_A, GROUP_M, FMA_ORDER,   \
                  PAD_B, PACK, STAGE_C, TA, TB, VEC>
#define SGT_TUNED_LAYOUTS(VEC, ...)                        \
  {                                                        \
    SGT_TUNED_INSTANCE(false, false, VEC, __VA_ARGS__),    \
        SGT_TUNED_INSTANCE(false, true, VEC, __VA_ARGS__), \
        SGT_TUNED_INSTANCE(true, false, VEC, __VA_ARGS__), \
        SGT_TUNED_INSTANCE(true, true, VEC, __VA_ARGS__)   \
  }
#define SGT_TUNED_KERNEL(index, BM, BN, BK, WM, WN, WNITER, TM, TN, NT, MB, STAGES, PAD_A,      \
                         GROUP_M, SPLIT_K, FMA_ORDER, PAD_B, PACK, STAGE_C)                     \
  Instances{SGT_TUNED_LAYOUTS(true, BM, BN, BK, WM, WN, WNITER, TM, TN, NT, MB, STAGES, PAD_A,  \
                              GROUP_M, FMA_ORDER, PAD_B, PACK, STAGE_C),                        \
            SGT_TUNED_LAYOUTS(false, BM, BN, BK, WM, WN, WNITER, TM, TN, NT, MB, STAGES, PAD_A, \
                              GROUP_M, FMA_ORDER, PAD_B, PACK, STAGE_C)},
// The trailing entry keeps the array non-empty for a table without configs.
const Instances kKernels[] = {SGT_TUNED_CONFIGS(SGT_TUNED_KERNEL) Instances{}};
#undef SGT_TUNED_KERNEL
#undef SGT_TUNED_LAYOUTS
#undef SGT_TUNED_INSTANCE

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

cudaError_t probe(int dev, DeviceState& s) {
  cudaDeviceProp p{};
  if (const cudaError_t e = cudaGetDeviceProperties(&p, dev); e != cudaSuccess) return e;
  s.id = {p.name, p.major, p.minor, p.multiProcessorCount};
  s.unusable.assign(table::kConfigCount, std::string());
  for (int i = 0; i < table::kConfigCount; ++i) {
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

// overlap: the device takes programmatic dependent launches (sm_90+, see launch_dependent).
cudaError_t launch(const detail::Choice& choice, const detail::Call& call, float alpha,
                   const float* A, const float* B, float beta, float* C, bool overlap,
                   cudaStream_t stream) {
  const auto& cfg = table::kConfigs[choice.config];
  // A PACK config runs its TN float4 instance on panels (see pack below).
  const bool packed = cfg.PACK != 0;
  const auto& instances =
      choice.vec || packed ? kKernels[choice.config].vec : kKernels[choice.config].scalar;
  const Kernel kernel = instances[packed ? layout_index(true, false) : layout_index(call)];
  const auto d =
      sgt_kernel::launch_dims(call.M, call.N, call.K, cfg.BM, cfg.BN, cfg.BK, cfg.SPLIT_K);
  int M = call.M, N = call.N, K = call.K, lda = call.lda, ldb = call.ldb, ldc = call.ldc;
  int k_chunk = d.k_chunk;
  float* work = nullptr;
  float* panels = nullptr;
  cudaError_t e = cudaSuccess;
  // Split-K partial products live in stream-ordered memory: no state shared between streams.
  // Allocated first, so that the pack, tile and reduction kernels follow each other directly in
  // the stream, as programmatic dependent launch needs.
  if (d.workspace_floats > 0) {
    e = cudaMallocAsync(reinterpret_cast<void**>(&work),
                        static_cast<size_t>(d.workspace_floats) * sizeof(float), stream);
  }
  if (e == cudaSuccess && packed && K > 0) e = pack(call, A, lda, B, ldb, &panels, stream);
  void* args[] = {&M, &N, &K, &alpha, &A, &lda, &B, &ldb, &beta, &C, &ldc, &k_chunk, &work};
  // After a pack, and for the reduction after the tile kernel, a dependent launch (sm_90+).
  // A launch call returns this launch's own error, where <<<>>> would leave it to a later
  // cudaGetLastError() that may return an earlier, unrelated one instead.
  if (e == cudaSuccess) {
    const dim3 grid(static_cast<unsigned>(d.grid_x), 1, static_cast<unsigned>(d.grid_z));
    const dim3 block(static_cast<unsigned>(cfg.NUM_THREADS));
    e = sgt_kernel::launch_dependent(panels && overlap, reinterpret_cast<const void*>(kernel), grid,
                                     block, args, stream);
  }
  if (work && e == cudaSuccess) {
    int splits = d.grid_z;
    const float* partial = work;
    void* rargs[] = {&M, &N, &splits, &alpha, &partial, &beta, &C, &ldc};
    const long long total = static_cast<long long>(M) * N;
    const unsigned blocks = static_cast<unsigned>(std::min<long long>((total + 255) / 256, 4096));
    e = sgt_kernel::launch_dependent(overlap,
                                     reinterpret_cast<const void*>(&sgemm_splitk_reduce<0>),
                                     dim3(blocks), dim3(256), rargs, stream);
  }
  for (float* p : {panels, work}) {
    if (!p) continue;
    const cudaError_t f = cudaFreeAsync(p, stream);
    if (e == cudaSuccess) e = f;
  }
  return e;
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
