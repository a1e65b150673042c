// Shards: one suite (of shapes, or of configs to compile) split over processes or machines that
// never talk to each other. Every shard computes the same split from the same inputs, so shard I
// of N knows its share without coordination, and the shards together do each item exactly once.
#pragma once

#include <cstddef>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace sgt {

struct Shard {
  unsigned index = 0;  // 0-based
  unsigned count = 1;
  // Where index and count came from, for logs: "--shard 1/4", "SLURM_ARRAY_TASK_ID=5 of
  // array 3-9:2", "JOB_COMPLETION_INDEX=2, SGT_SHARD_COUNT=4".
  std::string source;
};

// Reads one environment variable; std::nullopt when it is unset. Tests pass their own.
using EnvLookup = std::function<std::optional<std::string>(const char* name)>;

// The process's environment (getenv).
EnvLookup process_env();

// The environment variables `--shard auto` reads, for help texts and errors.
inline constexpr const char* kShardEnvHelp =
    "SLURM_ARRAY_TASK_ID with SLURM_ARRAY_TASK_MIN, _MAX, _STEP and _COUNT (a Slurm array "
    "job: the index is the task's position in the array, which need not start at 0), "
    "JOB_COMPLETION_INDEX (a Kubernetes Indexed Job) with the count from SGT_SHARD_COUNT or "
    "auto/N, or SGT_SHARD_INDEX with SGT_SHARD_COUNT (any other launcher)";

// `--shard` text to a shard:
//   "I/N"     shard I (0-based) of N;
//   "auto"    index and count from the environment (kShardEnvHelp);
//   "auto/N"  the index from the environment, the count N (it must agree with any count the
//             environment gives).
// InputError naming the text and the variables for: a malformed text, N = 0, I >= N, `auto` in
// no environment that gives a shard, a Slurm array that is not an arithmetic range (a list such
// as --array=1,3,8: its indices have no positions), variables that are not numbers, and
// environments that disagree with each other or with N.
Shard parse_shard(const std::string& text, const EnvLookup& env);

// Deals items of these estimated costs to `count` shards, each to be done by one shard: the
// largest first, each to the shard with the least cost so far (longest processing time first,
// within 4/3 of the best possible makespan). Ties go to the earlier item and the lower shard, so
// equal costs deal round-robin in item order. Returns each item's shard; the same inputs give
// the same deal on every machine. Costs must be finite and not negative (std::invalid_argument).
std::vector<unsigned> deal_by_cost(const std::vector<double>& costs, unsigned count);

// The positions (in their original order) of the items that `deal_by_cost` gives shard `index`.
std::vector<size_t> items_of_shard(const std::vector<unsigned>& deal, unsigned index);

// The largest shard's cost over the mean shard's: 1 is a perfect balance. 1 for no items.
double imbalance(const std::vector<double>& costs, const std::vector<unsigned>& deal,
                 unsigned count);

// What tuning one problem costs, to deal shapes by: each measured candidate takes
// per_candidate_s plus per_flop_s for every flop of the problem (its repetitions, verification and
// overhead together). The defaults are the fit (fit_tune_cost) of the recordings in datasets/h200
// of a space of thousands of candidates (a suite's tune; the eight-config tf32x3_wg files, whose
// every trial also pays the accuracy checks, are left out), fixed here rather than read at run time so that every shard deals alike whatever is installed
// beside it; a test fits them again. Compilation is left out: the kernel cache is shared by every
// problem whose configs share an instance, and a compile-only job can warm it before the shards.
struct TuneCostModel {
  double per_candidate_s = 0.0023;
  double per_flop_s = 1.4e-13;
  std::string basis = "fitted to the H200 recordings (datasets/h200)";
};

// Mean seconds per measured candidate of recorded problems, to fit the model on.
struct RecordedCost {
  double flops = 0;
  double mean_measure_s = 0;
};

// The least-squares line through the recordings (seconds against flops), with both terms kept
// non-negative; the assumed model when there are none. Only + - * /: the same fit on every machine.
TuneCostModel fit_tune_cost(const std::vector<RecordedCost>& recordings);

// Estimated seconds of one problem's tune: min(candidates, max_evals if set) measured at the
// model's cost, capped at budget_s when one is set (a budget bounds each shape's search).
double estimate_tune_s(size_t candidates, double flops, const TuneCostModel& model,
                       double budget_s = 0, size_t max_evals = 0);

}  // namespace sgt
