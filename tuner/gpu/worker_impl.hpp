// The GPU worker process's internals, shared by its files (nothing outside the worker includes
// this): the device buffers and instances it measures on, and the Worker, which owns one CUDA
// context, the problem's buffers, the cuBLAS reference and its peers, and answers the protocol of
// worker_protocol.hpp. Its members are defined by subject:
//   worker.cpp            the request loop, the dispatch, hello (the device) and problem;
//   worker_kernels.cpp    the worker's own kernels (compare, widen, fill, spin), compiled by NVRTC;
//   worker_timing.cpp     the timing helpers: the cold-L2 rotation and the operands of a launch;
//   worker_verify.cpp     instances, verification against cuBLAS, accuracy against FP64 and the
//                         stress inputs;
//   worker_candidate.cpp  a candidate's binary loaded, launched, verified and timed (`trial`), or
//                         verified on edge cases (`verify`);
//   worker_cublas.cpp     cuBLAS FP32 (the reference of every verification) and cuBLAS 1xTF32;
//   worker_cublaslt.cpp   cuBLASLt FP32: its heuristic's algorithms searched, one timed again.
// Anything that poisons the context ends the process after it has answered; the parent records
// the candidate and starts a fresh worker.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <string_view>
#include <tuple>
#include <vector>

#include <cublasLt.h>
#include <nlohmann/json.hpp>

#include "bench.hpp"
#include "check.hpp"
#include "tma_maps.h"
#include "trial.hpp"
#include "worker_protocol.hpp"

namespace sgt::gpu::worker_impl {

using namespace sgt::eval;
using nlohmann::json;

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
  // TMA configs: the operands' tensor maps, and what they were encoded for; [1]: a tail
  // launch's, over its sub-problem.
  using MapsKey = std::tuple<const float*, const float*, int, int, long long, long long, long long,
                             int, int, int, int, int, bool, bool>;
  std::unique_ptr<sgt_kernel::TmaMaps> maps[2];
  MapsKey maps_key[2]{};

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
// named by its label (worker_verify.cpp).
enum class StressInputs { uniform, exponents, underflow, cancellation };

// A kernel's error against FP64 over cuBLAS FP32's; infinite when the kernel's result holds NaN
// or Inf.
double error_ratio(double kernel_error, double cublas_error);

// The l2 of a request: flush (the default) or rotate; anything else throws Error.
L2Mode l2_of(const json& req);

// The copies a rotated timing cycles through, made on first use for the current problem: each
// with the instance's leading dimensions, offset and alignment, random operands of its own, and
// one (the last) verified against a cuBLAS reference of its own.
struct Rotation {
  std::unique_ptr<DeviceBuffer<float>> memory, ref;
  std::vector<Instance> copies;
  long long set_bytes = 0;
  int verified = 0;
};

// A loaded candidate: the library stays loaded while the object lives (unless the context is
// lost, when unloading is pointless).
struct Loaded {
  cudaLibrary_t lib = nullptr;
  cudaKernel_t kernel = nullptr, reduce = nullptr, pack = nullptr;
  // A tail config's wave: blocks of `kernel` an SM holds at once (set_resident); 1 otherwise.
  int resident = 1;
  bool* poisoned = nullptr;
  ~Loaded() {
    if (lib && !*poisoned) cudaLibraryUnload(lib);
  }
};

// One stress case's problem: its instance (inputs by its label, cuBLAS's FP32 result), its FP64
// reference and cuBLAS's error against it. Made once per worker and shared by every candidate.
struct StressProblem {
  std::unique_ptr<Instance> inst;
  std::unique_ptr<DeviceBuffer<double>> ref64;
  double cublas_error = 0;
};

// A binary's worst error ratio over the stress cases, and that case.
struct StressOutcome {
  double ratio = -1;
  double error = 0, cublas_error = 0;
  std::string label;  // "underflow 128x128x1024 NN"
};

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

class Worker {
 public:
  // Answers one request (worker.cpp); a request that cannot be served throws.
  json handle(const json& req);

  bool context_poisoned() const { return poisoned_; }

  ~Worker();

 private:
  // ---- The device and the problem (worker.cpp) ----
  json hello(const json& req);
  json problem(const json& req);
  void ensure_scratch();
  // A failure while running a candidate or a library's kernel: a refused launch leaves the
  // context usable, a fault does not (then the worker exits after answering).
  void classify_failure(const Error& e, TrialStatus& status, std::string& reason);

  // ---- The worker's own kernels (worker_kernels.cpp) ----
  void build_helper_kernels();

  // ---- Timing helpers (worker_timing.cpp) ----
  Rotation& rotation();
  json rotation_info();
  // The operands a launch of a timing takes: the instance, or a rotation's copy.
  Instance& operands(L2Mode l2, int copy);

  // ---- Instances, verification and accuracy (worker_verify.cpp) ----
  std::unique_ptr<Instance> make_instance(const Problem& p, long long lda, long long ldb,
                                          long long ldc, int offset, float alpha, float beta,
                                          std::uint64_t seed,
                                          StressInputs inputs = StressInputs::uniform);
  double verify(const Instance& in);
  void widen(const float* x, double* y, size_t count);
  std::unique_ptr<DeviceBuffer<double>> reference64(const Instance& in);
  double error64(const Instance& in, const float* c, const double* ref);
  void ensure_accuracy_reference();
  StressProblem& stress_problem(const EdgeCheck& c);
  // Makes the stress problems of a trial's cases (before the candidate runs); the key its
  // outcome is kept under.
  std::string prepare_stress(const TrialRequest& t);
  StressOutcome stress_outcome(const Loaded& l, const TrialRequest& t, const std::string& key);
  void judge_accuracy(const Loaded& l, const TrialRequest& t, const std::string& stress_key,
                      double error, TrialResponse& out);

  // ---- A candidate: the `trial` and `verify` requests (worker_candidate.cpp) ----
  json trial(const json& req);
  json verify_cases(const json& req);
  void measure_candidate(const Loaded& l, const TrialRequest& t, const std::string& stress_key,
                         TrialResponse& out);
  void load(Loaded& l, const std::string& cubin, const std::string& kernel,
            const std::string& reduce, const std::string& pack);
  const sgt_kernel::TmaMaps& tma_maps(const LaunchTile& tile, Instance& in, bool trans_a,
                                      bool trans_b, const float* A, int lda, const float* B,
                                      int ldb, bool tail, long long M, long long N);
  void launch(const Loaded& l, const LaunchTile& tile, unsigned block, Instance& in,
              cudaStream_t st);
  void run_from_c0(const Loaded& l, const LaunchTile& tile, unsigned block, Instance& in);
  double run_and_verify(const Loaded& l, const LaunchTile& tile, unsigned block, Instance& in);
  cudaMemPool_t call_pool();

  // ---- cuBLAS FP32 and cuBLAS 1xTF32 (worker_cublas.cpp) ----
  void ensure_cublas();
  void cublas_gemm(const Instance& in, float* c);
  TimeStats time_cublas(int reps, L2Mode l2);
  void ensure_cublas_tf32();
  void cublas_tf32_gemm(const Instance& in, float* c);
  void cublas_tf32_from_c0(Instance& in);
  json time_cublas_tf32(const json& req);
  void measure_cublas_tf32(const BenchSettings& bs, double tolerance, TrialResponse& out);

  // ---- cuBLASLt FP32 (worker_cublaslt.cpp) ----
  LtSetup& lt(size_t workspace_bytes);
  void lt_matmul(const LtSetup& s, const cublasLtMatmulAlgo_t& algo, const Instance& in,
                 cudaStream_t st);
  double lt_verify(const LtSetup& s, const cublasLtMatmulAlgo_t& algo, Instance& in);
  json lt_measure(LtSetup& s, const cublasLtMatmulAlgo_t& algo, const BenchSettings& bs,
                  double tolerance);
  json cublaslt_search(const json& req);
  json time_cublaslt(const json& req);

  int dev_ = 0;
  GpuFingerprint fp_;
  cudaMemPool_t pool_ = nullptr;  // never destroyed: the process ends with it
  cudaStream_t stream_ = nullptr;
  cublasHandle_t cublas_ = nullptr;
  // cuBLAS 1xTF32: a handle of its own, its math mode allowing TF32 tensor cores (made on first
  // use; the reference's handle stays pedantic).
  cublasHandle_t cublas_tf32_ = nullptr;
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

}  // namespace sgt::gpu::worker_impl
