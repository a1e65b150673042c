// Re-timing a tuned config beside cuBLAS FP32 in one worker phase (the same problem, the same
// random inputs, interleaved), and the benchmark report built from those measurements: one row
// per shape, the summary over the suite (geometric mean, minimum, shapes below a threshold) and
// the CSV that `tools/plot_bench.py` draws.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "nvrtc_compiler.hpp"
#include "trial.hpp"
#include "worker_client.hpp"

namespace sgt::gpu {

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
  double tuned_ms = 0, cublas_ms = 0;  // medians, same phase
  double tuned_spread = 0, cublas_spread = 0;
  int repetitions = 0;  // per side and round
  std::uint64_t seed = 0;
  std::string gpu;   // GPU name
  std::string date;  // ISO 8601 UTC of the measurement
  int device = -1;   // the CUDA device that took the shape (tuned and re-timed it); -1: none did

  bool measured() const { return status == "ok" && tuned_ms > 0 && cublas_ms > 0; }
  // cuBLAS median / tuned median: the tuned kernel's speed relative to cuBLAS (above 1: faster);
  // 0 unless measured.
  double ratio() const { return measured() ? cublas_ms / tuned_ms : 0; }
  double tuned_gflops() const { return tuned_ms > 0 ? problem.flops() / (tuned_ms * 1e6) : 0; }
  double cublas_gflops() const { return cublas_ms > 0 ? problem.flops() / (cublas_ms * 1e6) : 0; }
};

// "MxNxK LAYOUT", the label of a row in tables, summaries and the plot.
std::string bench_label(const Problem& p);

struct BenchSummary {
  int total = 0;       // rows
  int measured = 0;    // rows with a ratio
  double geomean = 0;  // geometric mean of the measured ratios; 0 when none
  double min_ratio = 0, max_ratio = 0;
  std::string min_label;  // bench_label() of the minimum
  double threshold = 0.90;
  int below = 0;  // measured rows whose ratio is below the threshold
};

BenchSummary summarize_bench(const std::vector<BenchRow>& rows, double threshold = 0.90);

// The CSV: a header, then one line per row. Columns: shape,M,N,K,layout,config,tuned_ms,cublas_ms,
// ratio,tuned_gflops,cublas_gflops,status,gpu,date,source,space,loads,reps,tuned_spread,
// cublas_spread,seed,reason,device (appended last, so readers by header or position keep
// working). Times and ratios are empty for rows that were not measured, device for a row no
// device took. Text fields are quoted as RFC 4180 requires.
std::string bench_csv(const std::vector<BenchRow>& rows);

void to_json(nlohmann::json& j, const BenchRow& r);
void to_json(nlohmann::json& j, const BenchSummary& s);

struct RetimeOptions {
  int repetitions = 20;  // per side and round (the CLI enforces at least 20)
  int rounds = 2;        // cuBLAS, tuned, cuBLAS, tuned, ...
  std::uint64_t seed = 0;
  double tolerance = 1e-4;  // relative L2 error against cuBLAS, checked every round
};

struct Retimed {
  TrialStatus status = TrialStatus::ok;  // of the tuned kernel; ok when every round passed
  std::string reason;
  double verify_error = -1;  // the largest of the rounds
  TimeStats tuned, cublas;   // each side's best round (lowest median)
};

// Sets the problem up once in the worker (random inputs from the seed), then alternates cuBLAS and
// the compiled config, `rounds` times each with `repetitions` repetitions, cuBLAS first; each side
// is reported by its round with the lowest median, so both sides are treated alike. The config is
// verified against cuBLAS in every round; the first failure stops and is returned. Throws
// sgt::Error when the worker cannot set the problem up or time cuBLAS.
Retimed retime(WorkerClient& worker, const Compiled& compiled, const WarpTileConfig& config,
               const Problem& problem, const RetimeOptions& opts);

}  // namespace sgt::gpu
