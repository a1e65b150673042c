// Serve mode's decisions, in plain values (no CUDA): the serve plan that `sgemm-tune serve` writes
// (per GPU, the tuned problems and the compiled kernel of each winner), the rules that send a
// call to cuBLAS, and the counts the summary at exit reports (docs/preload.md). The interposer
// asks these; libsgemm_tune_serve.so only loads and launches what they chose; the tests drive
// them directly.
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "capture.hpp"
#include "sgemm_tune/preload/row_major.hpp"

namespace sgt::preload {

inline constexpr std::string_view kPlanFormat = "sgemm-tune-serve-plan";
// 2: a kernel's tile may carry the wave-aware tail ("tail", "group_m"); a plan without one is
// written as version 1, which this library reads too.
inline constexpr int kPlanFormatVersion = 2;

// One compiled kernel instance of a winner: its verified binary in the kernel cache and how
// launch_plan.h launches it (the tuner's TrialRequest, which its worker times).
struct PlanKernel {
  std::string config_name;
  std::string family;
  bool tensor_maps = false;          // the launch ABI: tensor maps (TMA), else pointers
  std::string arch;                  // the NVRTC target, "sm_90" or "sm_90a"
  std::string instance;              // the layout the kernel was instantiated as ("TN" for PACK)
  bool vec = true;                   // float4 main-loop loads
  std::string cubin;                 // absolute path of the binary
  std::string sha256;                // its expected SHA-256, checked before every load
  std::string kernel, reduce, pack;  // lowered names; reduce and pack empty when absent
  int BM = 0, BN = 0, BK = 0, split_k = 1, pad_a = 0, pad_b = 0;
  int smem = 0;       // dynamic shared memory of one launch
  int block = 0;      // threads per block
  bool tail = false;  // TAIL 1: launch_plan.h's wave-aware tail, in the block order of group_m
  int group_m = 1;
};

// The alignment of a call's operands in sgemm-tune's row-major terms: whether each matrix's rows
// start on 16-byte boundaries (pointer 16-byte aligned and leading dimension a multiple of 4),
// which decides the tuned kernel's 128-bit accesses.
struct AlignClass {
  bool a = true, b = true, c = true;
  friend bool operator==(const AlignClass&, const AlignClass&) = default;
  std::string text() const;  // "A16 B4 C16": 16-byte rows, or 4 (single floats)
};

// The class a tuned problem's winner was timed and verified with: the tuner's operands are
// allocated aligned, at their row lengths.
AlignClass tuned_align(long long M, long long N, long long K, std::string_view layout);
// The class of a call's operands.
AlignClass call_align(const RowMajorGemm& g, std::uintptr_t A, std::uintptr_t B, std::uintptr_t C);

struct PlanProblem {
  long long M = 0, N = 0, K = 0;
  std::string layout;  // NN, NT, TN, TT
  AlignClass align;    // what the winner was verified for
  std::string config_name;
  int kernel = -1;      // into ServePlan::kernels; -1: no kernel (why says why)
  std::string refused;  // why the winner has no kernel (compilation refused it)
  double median_ms = 0, ratio = 0;
};

struct PlanGpu {
  std::string name;
  int cc_major = 0, cc_minor = 0, sm_count = 0;
  std::vector<PlanProblem> problems;
};

// The identity of a device as the plan keys GPUs (as the tuning database and export do).
struct DeviceIdentity {
  std::string name;
  int cc_major = 0, cc_minor = 0, sm_count = 0;
  friend bool operator==(const DeviceIdentity&, const DeviceIdentity&) = default;
};

// "NAME@sm_XY/SMS" (the key `sgemm-tune list` shows): SGT_SERVE_DEVICE, a dry run's device.
std::optional<DeviceIdentity> parse_device(std::string_view text);

struct ServePlan {
  std::string writer;  // "sgemm-tune 0.x"
  std::string source;  // the table or database it was prepared from
  // A winner whose time against cuBLAS when it was tuned (its ratio, same run) is below this is
  // not served: cuBLAS answers (FallThrough::Slower). 0 serves every winner.
  double min_ratio = 1.0;
  std::vector<PlanKernel> kernels;
  std::vector<PlanGpu> gpus;

  // Parses and checks a plan (format, version, every field's type and range, kernel indices).
  // Throws std::runtime_error saying what is wrong (the text may quote the file: print it with
  // printable()).
  static ServePlan parse(std::string_view text);
  std::string render() const;

  const PlanGpu* gpu(const DeviceIdentity& d) const;
};

// Why a call went to cuBLAS rather than a tuned kernel. Each is counted.
enum class FallThrough {
  Tf32,               // TF32 allowed by the math mode or compute type
  Reduced,            // FP16/BF16 reduced precision allowed
  Emulated,           // emulated FP32 (BF16x9)
  NotFp32,            // data or compute not FP32
  Batched,            // a batch above 1, or a pointer-array batch
  Epilogue,           // a cuBLASLt epilogue
  DevicePointers,     // alpha and beta in device memory (reading them would synchronise)
  AlphaVector,        // cuBLASLt's per-row alpha
  AlphaZero,          // alpha = 0: cuBLAS reads neither A nor B
  CNotD,              // cuBLASLt: D is not C (and beta is not 0), or their layouts differ
  UnsupportedOp,      // CUBLAS_OP_CONJG or an unknown op
  LtDescriptor,       // a cuBLASLt descriptor that could not be read
  LtOrder,            // a cuBLASLt order other than column or row
  Empty,              // m, n or k is 0
  Invalid,            // arguments cuBLAS refuses (it reports them)
  TooLarge,           // a size or leading dimension beyond 32 bits
  NoDevice,           // no current CUDA device
  GpuNotInPlan,       // no winners for this GPU
  NotTuned,           // the problem (shape and layout) has no winner
  Alignment,          // the operands' alignment is not the one the winner was verified for
  Slower,             // the winner was slower than cuBLAS when tuned (ratio below min_ratio)
  KernelUnavailable,  // the winner has no kernel (its compilation was refused)
  GraphCapture,       // the stream is being captured into a CUDA graph
  ServerUnavailable,  // libsgemm_tune_serve.so could not be loaded
  LoadFailed,         // the kernel's binary failed its check or its load
  LaunchFailed,       // a launch was refused before anything was written
  Internal,           // anything unexpected
  kCount
};
const char* describe(FallThrough why);  // "TF32 allowed", ...
const char* key(FallThrough why);       // "tf32", ... (the log's names)

// The rules that depend on the call alone (not on the plan or device), in order. `described`:
// why describing the call for a capture failed, if it did (the call is then not served either).
std::optional<FallThrough> precheck(const CallFacts& f,
                                    std::optional<NotRecorded> described = std::nullopt);

// What the plan says for one call on one device.
struct Decision {
  std::optional<FallThrough> why;  // set: to cuBLAS
  const PlanProblem* problem = nullptr;
  const PlanKernel* kernel = nullptr;
  int kernel_index = -1;
  RowMajorGemm gemm;  // the call as sgemm-tune's problem
};
// A, B: the call's operands in cuBLAS's terms (decide swaps them where the mapping does); C: the
// output (cuBLASLt's D). `device`: nullptr when the calling thread has no current device.
Decision decide(const ServePlan& plan, const DeviceIdentity* device, const CallFacts& f,
                std::optional<NotRecorded> described, std::uintptr_t A, std::uintptr_t B,
                std::uintptr_t C);

// The counts the summary reports: calls served (per plan problem) and fallen through (per reason).
class ServeStats {
 public:
  explicit ServeStats(std::size_t problems = 0);
  void served(const PlanProblem* p);
  void fell_through(FallThrough why) {
    through_[static_cast<int>(why)].fetch_add(1, std::memory_order_relaxed);
  }
  long long served_calls() const { return served_.load(); }
  long long through(FallThrough why) const { return through_[static_cast<int>(why)].load(); }
  long long through_calls() const;
  std::size_t problems_served() const;
  // SGT_SERVE_VERIFY: one served call compared with cuBLAS (`ok`: within tolerance).
  void verified(bool ok, double error);
  // A served call that failed after its kernels may have written C: reported to the caller.
  void failed_late() { failed_late_.fetch_add(1, std::memory_order_relaxed); }
  // "sgemm-tune preload: serve: 26 GEMM calls, 10 served by tuned kernels (3 problems), 16
  // passed to cuBLAS: 5 TF32 allowed, ..." (`dry_run`: "would be served").
  std::string summary(long long seen, bool dry_run) const;

 private:
  std::atomic<long long> served_{0};
  std::array<std::atomic<long long>, static_cast<int>(FallThrough::kCount)> through_{};
  mutable std::mutex mutex_;
  std::map<const PlanProblem*, long long> per_problem_;
  std::atomic<long long> verified_{0}, mismatches_{0}, failed_late_{0};
  double max_error_ = 0;  // guarded by mutex_
};

}  // namespace sgt::preload
