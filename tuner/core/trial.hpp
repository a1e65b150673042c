// What a tune produces: one Trial per (GPU, problem, config), whatever happened to the candidate,
// plus the GPU fingerprint it ran on and the interface through which trials are stored.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "config.hpp"
#include "problem.hpp"

namespace sgt {

// Stored as text; never renumber or rename a value once released. inaccurate: verified against
// cuBLAS, but a kernel of a non-strict precision class (precision.hpp) whose error against an FP64
// reference exceeds cuBLAS FP32's by more than kAccurateErrorRatioMax, on its problem or on a
// stress case; like incorrect, never served.
enum class TrialStatus {
  ok,
  compile_failed,
  spills,
  resources,
  incorrect,
  crashed,
  timeout,
  inaccurate
};

std::string_view to_string(TrialStatus s);
std::optional<TrialStatus> status_from_string(std::string_view s);

// Which step of a tune measured a trial. Stored as text, like the status; never renumber or rename
// a value once released. screen: the search's measurement of a candidate; look: a screening
// measurement of the last look around the best once the search converged (it neither counts
// towards patience nor resets it); final: a finalist's re-timing beside cuBLAS, with more
// repetitions and no cut. A finalist's edge-case verification is no trial of its own: its checks
// are stored with the final trial.
enum class TrialPhase { screen, look, final };
// Where a trial's outcome came from: measured on a GPU now, or replayed from a recording (a
// replay evaluator answered it). Stored as text.
enum class TrialSource { measured, replayed };

std::string_view to_string(TrialPhase p);
std::optional<TrialPhase> phase_from_string(std::string_view s);
std::string_view to_string(TrialSource s);
std::optional<TrialSource> source_from_string(std::string_view s);

// Identifies the GPU and the software stack a trial was measured with.
struct GpuFingerprint {
  std::string name;
  std::string uuid;
  int cc_major = 0, cc_minor = 0;
  int sm_count = 0;
  long long memory_bytes = 0;
  int l2_bytes = 0;
  int smem_optin_bytes = 0;
  int sm_clock_khz = 0;
  int mem_clock_khz = 0;
  int driver_version = 0;   // cudaDriverGetVersion, e.g. 13000
  int runtime_version = 0;  // cudaRuntimeGetVersion
  int nvrtc_major = 0, nvrtc_minor = 0;

  std::string arch() const;  // "sm_90"
};

// Why two GPUs cannot share one tune (their trials would not be comparable): a different model,
// compute capability, SM count, clocks class (SM clocks more than 2 % apart) or driver major;
// empty when they can. Memory size, UUID and minor versions may differ.
std::string model_difference(const GpuFingerprint& a, const GpuFingerprint& b);

struct TimeStats {
  double median_ms = 0, min_ms = 0, max_ms = 0;
  double spread = 0;  // (max - min) / median
  int repetitions = 0;
};

// One verification of a config on a problem other than the tuned one: edge tiles (shapes that are
// not multiples of the tile), other layouts' leading dimensions, offset (unaligned) pointers,
// other alpha/beta. A tune runs a suite of them on its winner and stores them with its trial.
struct EdgeCheck {
  std::string label;  // what the case exercises, e.g. "tile-3", "prime", "K%BK", "offset"
  Problem problem;    // M, N, K (K may be 0; M or N 0 is a no-op case) and layout
  long long lda = 0, ldb = 0, ldc = 0;  // as launched (>= the stored row length)
  int offset = 0;  // elements by which A, B and C start past a 256-byte aligned allocation
  float alpha = 1, beta = 0;
  bool passed = false;
  double error = -1;   // relative L2 error against cuBLAS FP32; -1 when not measured
  std::string reason;  // why it failed; empty when passed
};

struct Trial {
  WarpTileConfig config;
  std::string config_name;
  Problem problem;
  TrialStatus status = TrialStatus::ok;
  std::string reason;  // empty when ok
  TimeStats time;
  bool cut_early = false;  // abandoned after its first repetitions were clearly slower
  double gflops = 0;
  double verify_error = -1;  // relative L2 error against cuBLAS; -1 when not verified
  // A kernel of a non-strict precision class (precision.hpp) has its accuracy measured: its
  // relative L2 error against an FP64 reference of the same inputs over cuBLAS FP32's, on the
  // trial's problem (error_ratio) and, worst of the stress cases that load an operand split, on
  // inputs built to break one (stress_ratio, and stress_case, the case it was). nullopt: not
  // measured (a strict kernel, a trial that failed first, a trial recorded before).
  std::optional<double> error_ratio;
  std::optional<double> stress_ratio;
  std::string stress_case;
  int registers = 0, spill_bytes = 0, stack_bytes = 0, shared_bytes = 0;
  double cublas_median_ms = 0;  // cuBLAS FP32 timed by the same function in the same run
  // What the trial cost: the NVRTC compilation of its binary (the first compile, when the binary
  // came from the cache) and the worker's verify-and-time call, in wall seconds. A replay of the
  // recording charges these as its simulated time. 0: not recorded (older trials).
  double compile_s = 0, measure_s = 0;
  std::string kernel_template;  // template name
  std::string kernel_hash;      // hash of the kernel sources the config was compiled from
  std::string tuner_version;
  std::string strategy;  // the search strategy's name alone ("model", "exhaustive", ...)
  TrialPhase phase = TrialPhase::screen;
  TrialSource source = TrialSource::measured;
  std::uint64_t seed = 0;
  std::string timestamp;               // ISO 8601 UTC
  std::vector<EdgeCheck> edge_checks;  // the winner's edge-shape verification; empty otherwise
};

// Releases before the phase and source were fields wrote both into the strategy:
// "replay/<strategy>" for a replayed trial, "<strategy>/final" for a finalist's re-timing,
// "<strategy>/look" for the last look's (combined: "replay/<strategy>/final"). Sets t.phase and
// t.source from t.strategy written so, and leaves t.strategy the strategy's name. Only readers of
// files written before (database schema 6 and older, trial JSON without "phase" and "source") call
// it.
void split_legacy_strategy(Trial& t);

// How many of `checks` passed.
int edge_checks_passed(const std::vector<EdgeCheck>& checks);
// One line for reports: "verified on 23 edge cases: all passed", or "verified on 23 edge cases:
// 2 failed: tile+1 129x65x17 TN (error 0.31); prime 127x131x137 NN (crashed: ...)"; "not verified
// on edge cases" when `checks` is empty (trials recorded before edge checks existed, losers).
std::string edge_check_summary(const std::vector<EdgeCheck>& checks);
// {"total": n, "passed": p, "all_passed": bool, "failed": [label, ...]}
nlohmann::json edge_check_tally_json(const std::vector<EdgeCheck>& checks);

void to_json(nlohmann::json& j, const GpuFingerprint& g);
void from_json(const nlohmann::json& j, GpuFingerprint& g);
void to_json(nlohmann::json& j, const TimeStats& t);
void from_json(const nlohmann::json& j, TimeStats& t);
void to_json(nlohmann::json& j, const EdgeCheck& e);
void from_json(const nlohmann::json& j, EdgeCheck& e);
void to_json(nlohmann::json& j, const Trial& t);
void from_json(const nlohmann::json& j, Trial& t);
void to_json(nlohmann::json& j, const Problem& p);
void from_json(const nlohmann::json& j, Problem& p);

std::string utc_timestamp();

// Where a tune writes its trials. The SQLite store implements it; tests use fakes.
class TrialStore {
 public:
  virtual ~TrialStore() = default;
  // Called once before any trial of a run.
  virtual void begin(const GpuFingerprint& gpu, const Problem& problem) = 0;
  // A trial already finished for this config (same GPU, problem, kernel hash), if any: a resumed
  // tune skips it.
  virtual std::optional<Trial> finished(const std::string& config_name,
                                        const std::string& kernel_hash) = 0;
  // Stores one finished trial durably before returning, with its edge_checks (in the same
  // transaction). Recording a trial that is already stored (same GPU, problem, config, kernel,
  // timestamp, seed, strategy, phase, source) adds nothing, except that edge checks it carries are
  // attached to the stored trial if that has none yet: a trial recorded before its edge checks ran
  // may be recorded again with them.
  virtual void record(const Trial& trial) = 0;
  // The screening trials of the begun GPU and problem (phase screen or look, never final) that
  // finished() could serve, in the order they were recorded: a resumed search tells from them
  // whether it had already converged. Empty where a store cannot tell the order.
  virtual std::vector<Trial> screening_order() { return {}; }
};

}  // namespace sgt
