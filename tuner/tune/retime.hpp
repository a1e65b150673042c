// Re-timing a tuned config beside cuBLAS FP32, cuBLASLt FP32 and (on request) cuBLAS 1xTF32 in one
// worker phase (the same problem, the same random inputs, interleaved), with the L2 flushed and/or
// cold by rotation, and the benchmark report built from those measurements: one row per shape,
// the summary over the suite (geometric mean, minimum, shapes below a threshold) and the CSV that
// `tools/plot_bench.py` draws.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "compiled.hpp"
#include "trial.hpp"
#include "worker_client.hpp"

namespace sgt::tune {

using eval::Compiled;
using eval::kRotationL2Factor;
using eval::L2Mode;
using eval::LtAlgo;
using eval::LtSearch;
using eval::LtSearchOptions;
using eval::RotationInfo;
using eval::Tf32Request;
using eval::TrialRequest;
using eval::WorkerClient;
using eval::WorkerInfo;

// The statuses of a benchmark row besides the trial statuses (ok, incorrect, crashed, timeout,
// compile_failed, ...) of the re-timed winner.
inline constexpr const char* kBenchUntuned = "untuned";     // --no-tune and no stored winner
inline constexpr const char* kBenchNoConfig = "no_config";  // the space has no config for it
inline constexpr const char* kBenchNoWinner = "no_winner";  // tuned, but no candidate passed
inline constexpr const char* kBenchError = "error";         // the worker failed on this shape

// One suite entry's outcome.
struct BenchRow {
  Problem problem;
  std::string config;  // the winner's canonical name; empty when there is none
  std::string status;  // "ok" when both sides were measured; see above otherwise
  std::string reason;  // why, when not ok
  std::string source;  // "db": the winner was already stored; "tuned": tuned in this run
  std::string space;   // the search space tuned (or found empty) in this run; empty otherwise
  std::string loads;   // the kernel instance re-timed: "float4", "scalar" or "packed" (PACK: TN
                       // float4 on panels); empty when none ran
  double tuned_ms = 0, cublas_ms = 0;  // medians, same phase, L2 flushed before each repetition
  double tuned_spread = 0, cublas_spread = 0;
  int repetitions = 0;  // per side and round
  // cuBLASLt FP32 (its fastest verified heuristic algorithm), timed as cuBLAS is.
  bool lt_searched = false;  // --baseline named cublaslt
  double cublaslt_ms = 0, cublaslt_spread = 0;
  int lt_algos = 0;       // algorithms its heuristic returned, each verified and timed
  int lt_failed = 0;      // of them, those that failed to run or gave a wrong result
  std::string lt_algo;    // the one kept (its configuration); empty when none
  std::string lt_reason;  // searched but no cuBLASLt time: why
  // cuBLAS 1xTF32 (CUBLAS_COMPUTE_32F_FAST_TF32, TF32 tensor cores), timed as cuBLAS is. NOT
  // FP32-accurate: tf32_error_ratio is its relative L2 error against FP64 over cuBLAS FP32's (the
  // worst of the rounds; 0 when not measured), where an fp32-accurate kernel stays at most
  // kAccurateErrorRatioMax.
  bool tf32_timed = false;  // --baseline named cublas-tf32
  double cublas_tf32_ms = 0, cublas_tf32_spread = 0, cublas_tf32_cold_ms = 0;
  double tf32_error_ratio = 0;
  std::string tf32_reason;  // asked for but no time: why
  // The same sides with a cold L2: each repetition on the next of `rotate_copies` copies of the
  // operands (--l2 rotate or both); 0 when not timed so.
  double tuned_cold_ms = 0, cublas_cold_ms = 0, cublaslt_cold_ms = 0;
  int rotate_copies = 0;
  std::uint64_t seed = 0;
  std::string gpu;   // GPU name
  std::string date;  // ISO 8601 UTC of the measurement
  int device = -1;   // the CUDA device that took the shape (tuned and re-timed it); -1: none did

  bool measured() const { return status == "ok" && tuned_ms > 0 && cublas_ms > 0; }
  // cuBLAS median / tuned median: the tuned kernel's speed relative to cuBLAS (above 1: faster);
  // 0 unless measured.
  double ratio() const { return measured() ? cublas_ms / tuned_ms : 0; }
  // The same convention for the other baseline and the cold L2: baseline time / tuned time, 0
  // unless both sides of it were measured and the row is ok.
  double ratio_lt() const { return of(cublaslt_ms, tuned_ms); }
  double ratio_cold() const { return of(cublas_cold_ms, tuned_cold_ms); }
  double ratio_lt_cold() const { return of(cublaslt_cold_ms, tuned_cold_ms); }
  double ratio_tf32() const { return of(cublas_tf32_ms, tuned_ms); }
  double ratio_tf32_cold() const { return of(cublas_tf32_cold_ms, tuned_cold_ms); }
  // Whether any ratio was measured (--l2 rotate alone has no flushed ones).
  bool measured_any() const { return ratio() > 0 || ratio_cold() > 0; }
  double tuned_gflops() const { return tuned_ms > 0 ? problem.flops() / (tuned_ms * 1e6) : 0; }
  double cublas_gflops() const { return cublas_ms > 0 ? problem.flops() / (cublas_ms * 1e6) : 0; }

 private:
  double of(double baseline_ms, double ours_ms) const {
    return status == "ok" && baseline_ms > 0 && ours_ms > 0 ? baseline_ms / ours_ms : 0;
  }
};

// "MxNxK LAYOUT", the label of a row in tables, summaries and the plot.
std::string bench_label(const Problem& p);

// The summary of one ratio column over the suite.
struct RatioSummary {
  int measured = 0;    // rows with this ratio
  double geomean = 0;  // geometric mean of the measured ratios; 0 when none
  double min_ratio = 0, max_ratio = 0;
  std::string min_label;  // bench_label() of the minimum
  int below = 0;          // measured rows whose ratio is below the threshold
};

struct BenchSummary {
  int total = 0;       // rows
  int measured = 0;    // rows with a ratio
  double geomean = 0;  // geometric mean of the measured ratios; 0 when none
  double min_ratio = 0, max_ratio = 0;
  std::string min_label;  // bench_label() of the minimum
  double threshold = 0.90;
  int below = 0;  // measured rows whose ratio is below the threshold
  // The other ratio columns, summarised alike: ratio_lt, ratio_cold, ratio_lt_cold, ratio_tf32,
  // ratio_tf32_cold.
  RatioSummary lt, cold, lt_cold, tf32, tf32_cold;
};

BenchSummary summarize_bench(const std::vector<BenchRow>& rows, double threshold = 0.90);

// The CSV: a header, then one line per row. Columns: shape,M,N,K,layout,config,tuned_ms,cublas_ms,
// ratio,tuned_gflops,cublas_gflops,status,gpu,date,source,space,loads,reps,tuned_spread,
// cublas_spread,seed,reason,device, then cublaslt_ms,ratio_lt,cublaslt_spread,lt_algos,lt_failed,
// lt_algo,lt_reason,tuned_cold_ms,cublas_cold_ms,cublaslt_cold_ms,ratio_cold,ratio_lt_cold,
// rotate_copies, then cublas_tf32_ms,ratio_tf32,cublas_tf32_spread,tf32_error_ratio,
// cublas_tf32_cold_ms,ratio_tf32_cold,tf32_reason (each group appended last, so readers by header
// or position keep working). Times and ratios are empty for rows that were not measured (or not
// timed that way), device for a row no device took, lt_algos and lt_failed when cuBLASLt was not
// searched, rotate_copies when nothing was rotated, tf32_error_ratio when cuBLAS 1xTF32 was not
// measured. Text fields are quoted as RFC 4180 requires.
std::string bench_csv(const std::vector<BenchRow>& rows);

// The table `bench` prints: what was timed, a line per row (the flushed times and every ratio
// asked for; the cold times when only those were taken), why a row has no cuBLASLt time, and the
// summary of each ratio with the suite's figure each way it was timed. cuBLAS 1xTF32's columns
// (cublas_tf32) say that it is not FP32-accurate, and give its error ratio.
struct BenchTableOptions {
  std::string gpu_name;
  int reps = 20, rounds = 2;
  size_t gpus = 1;  // several: a last column names each row's GPU
  bool cublaslt = false, flush = true, rotate = false;
  bool cublas_tf32 = false;
};
std::string bench_table(const std::vector<BenchRow>& rows, const BenchSummary& s,
                        const BenchTableOptions& o);

void to_json(nlohmann::json& j, const BenchRow& r);
void to_json(nlohmann::json& j, const RatioSummary& s);
void to_json(nlohmann::json& j, const BenchSummary& s);

struct RetimeOptions {
  int repetitions = 20;  // per side and round (the CLI enforces at least 20)
  int rounds = 2;        // cuBLAS, tuned, cuBLAS, tuned, ...
  std::uint64_t seed = 0;
  double tolerance = 1e-4;   // relative L2 error against cuBLAS, checked every round
  bool cublaslt = false;     // also cuBLASLt's fastest heuristic algorithm (searched once)
  bool cublas_tf32 = false;  // also cuBLAS 1xTF32, verified with tf32_tolerance
  double tf32_tolerance = eval::kTf32Tolerance;
  // The timings: with the L2 flushed before each repetition, and with a cold L2 by rotation.
  bool flush = true, rotate = false;
  LtSearchOptions lt;  // the search; its l2 and tolerance are set from the above
};

struct Retimed {
  TrialStatus status = TrialStatus::ok;  // of the tuned kernel; ok when every round passed
  std::string reason;
  double verify_error = -1;  // the largest of the rounds
  // Each side's best round (lowest median): L2 flushed, and cold by rotation.
  TimeStats tuned, cublas, cublaslt;
  TimeStats tuned_cold, cublas_cold, cublaslt_cold;
  int rotate_copies = 0;
  bool lt_searched = false;
  int lt_algos = 0, lt_failed = 0;
  std::string lt_algo;    // the kept algorithm's configuration
  std::string lt_reason;  // searched, but no cuBLASLt time: why
  // cuBLAS 1xTF32: its best rounds, its worst error ratio against FP64 over cuBLAS FP32's (-1 when
  // not measured), and why it has no time when it failed.
  TimeStats cublas_tf32, cublas_tf32_cold;
  bool tf32_timed = false;
  double tf32_error_ratio = -1;
  std::string tf32_reason;
};

// Why a cuBLASLt search kept no algorithm, from what became of each ("" when one was kept).
std::string lt_search_reason(const LtSearch& s);

// Sets the problem up once in the worker (random inputs from the seed), searches cuBLASLt's
// algorithms once when asked (in the first timing asked for), then alternates cuBLAS, cuBLASLt's
// kept algorithm, cuBLAS 1xTF32 (when asked) and the compiled config, `rounds` times, each with
// `repetitions` repetitions, cuBLAS first, in each timing asked for (flushed, then rotated); each
// side is reported by its round with the lowest median, so all sides are treated alike. The
// config, cuBLASLt and cuBLAS 1xTF32 are verified against cuBLAS in every round; the config's
// first failure stops and is returned, a cuBLASLt or 1xTF32 failure leaves the row without that
// side and says why. Throws sgt::Error when the worker cannot set the problem up, rotate its
// operands, time cuBLAS or make the FP64 reference 1xTF32 is measured against.
Retimed retime(WorkerClient& worker, const Compiled& compiled, const WarpTileConfig& config,
               const Problem& problem, const RetimeOptions& opts);

}  // namespace sgt::tune
