// The worker's own kernels, compiled by NVRTC for the device when cuBLAS is first needed:
// sgt_compare and sgt_compare64 (a result against the FP32 or FP64 reference), sgt_widen (the
// double copies the FP64 reference is computed from), sgt_fill (a rotation's copies) and sgt_spin
// (the pre-roll of a rotated repetition).
#include <string>

#include "worker_impl.hpp"

namespace sgt::gpu::worker_impl {

namespace {

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

}  // namespace

void Worker::build_helper_kernels() {
  nvrtcProgram prog;
  SGT_NVRTC_CHECK(nvrtcCreateProgram(&prog, kHelperSource, "sgt_helpers.cu", 0, nullptr, nullptr));
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

}  // namespace sgt::gpu::worker_impl
