// The tune session: a search strategy asks for candidates; the session builds them on a pool
// (ahead of the evaluator, so it never waits on the compiler), has the evaluator verify and time
// them against cuBLAS, stores every trial as it finishes, then re-times the top finalists beside
// cuBLAS and verifies them on the edge-shape suite. The evaluator is the GPU worker or a replay.
#pragma once

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "compiled.hpp"
#include "strategy.hpp"
#include "trial.hpp"
#include "evaluator.hpp"
#include "worker_client.hpp"

namespace sgt::tune {

using eval::Compiled;
using eval::Devices;
using eval::Evaluator;
using eval::LaunchTile;
using eval::ProblemSetup;
using eval::TrialRequest;
using eval::TrialResponse;
using eval::WorkerClient;
using eval::WorkerInfo;

// The default tune's limits are the strategy's traits (strategy.hpp).
using sgt::kDefaultBudgetS;
using sgt::kDefaultPatience;
inline size_t default_patience(std::string_view strategy) {
  return strategy_traits(strategy).default_patience;
}

struct TuneOptions {
  Problem problem;
  std::vector<WarpTileConfig> candidates;  // survivors of the space for this problem
  std::string strategy = "exhaustive";     // a make_strategy() name
  size_t max_evals = 0;                    // candidates measured by this session at most; 0: all
  // Seconds of the evaluator's clock (a replay's: recorded seconds) the screening may take, from
  // its start, compiling included; 0: no limit. Finalists and edge checks follow it.
  double budget_s = 0;
  // Convergence: stop once this many measurements in a row brought no new best that is at least
  // min_gain faster than the best at the last improvement; 0: never (measure until the strategy,
  // the budget or max_evals ends it).
  size_t patience = 0;
  double min_gain = 0.005;
  // The last look: before a search that converged stops, measure the one-knob neighbours and the
  // block-tile moves (among the candidates) of its look_best fastest that it never measured, and
  // once more around the new best if that changed it. A model can rank one knob wrongly within a
  // near-best tile, or settle on one tile size and never try the next with the same knobs, and a
  // walk can leave before it tries it; this costs tens of measurements, not another patience.
  // nullopt: on where the strategy converges by default (its traits' default_patience > 0).
  std::optional<bool> local_look;
  size_t look_best = 3;
  // Trials of other problems on this GPU model, for strategies that learn (model).
  std::vector<Trial> history;
  int top_k = 5;
  int repetitions = 5;         // screening repetitions per candidate
  int final_repetitions = 20;  // finalists and cuBLAS, same phase
  int cut_after = 2;
  double cut_ratio = 1.25;
  double tolerance = 1e-4;
  std::uint64_t seed = 0;
  unsigned compile_threads = 0;  // 0: all cores
  unsigned model_threads = 0;    // the cost model's fitting threads (StrategyContext); 0: all cores
  // Extra NVRTC options the evaluator compiles with, e.g. -DSGT_K_UNROLL=4: part of each trial's
  // kernel hash, so such trials are never served as the default build's winners.
  std::vector<std::string> nvrtc_options;
  bool retune = false;  // ignore finished trials in the store
  // A search of this problem that ended earlier by convergence or exhaustion (its trials in the
  // store say so) is done: it is reported from the store and nothing is measured, unless this is
  // set (search on, patience counted afresh) or retune is.
  bool continue_search = false;
};

// Whether a search of these options that converges takes the last look first (local_look, else
// the strategy's traits; never without patience).
bool local_look_on(const TuneOptions& o);

struct TuneProgress {
  size_t done = 0, total = 0;
  double elapsed_s = 0, eta_s = 0;
  double best_ms = 0;
  std::string best_name;
};

struct Finalist {
  Trial trial;
  double ratio = 0;  // cuBLAS median / this median, same phase (above 1: faster)
};

// One GPU's part of a tune on several.
struct DeviceReport {
  WorkerInfo info;
  TimeStats cublas_screen;  // this GPU's own baseline: its trials' ratio and cut are against it
  int measured = 0;         // screening trials it measured
  int restarts = 0;         // its worker processes replaced
  std::string lost;         // why it left the tune (it could not go on); empty when it stayed
};

struct TuneReport {
  WorkerInfo worker;          // the GPU that re-timed and verified the finalists
  TimeStats cublas_screen;    // cuBLAS timed when the problem was set up
  TimeStats cublas_final;     // cuBLAS re-timed beside the finalists
  std::vector<Trial> trials;  // one per candidate (screening), resumed ones included
  std::vector<Finalist> finalists;
  std::map<std::string, int> status_counts;
  int resumed = 0, cut_early = 0, worker_restarts = 0;
  int measured = 0;         // candidates this session measured (screening)
  bool budget_hit = false;  // stopped by max_evals or budget_s before the strategy ran out
  // Why the screening ended: "exhausted" (the strategy had nothing left), "budget", "max_evals"
  // or "converged" (patience measurements without a gain).
  std::string stopped = "exhausted";
  // The search had already ended in an earlier run (stopped says how): nothing was measured, and
  // the finalists are that run's, as stored.
  bool done_before = false;
  int since_gain = 0;  // measurements since the last gain, when the screening ended
  // The last look (TuneOptions::local_look): the candidates it measured, and whether one of them
  // is faster than every other screened trial.
  int look_measured = 0;
  bool look_new_best = false;
  std::string evaluator;   // "worker" or "replay"
  double evaluator_s = 0;  // the evaluator's own clock (a replay: recorded seconds)
  size_t compiled = 0, cache_hits = 0;
  double compile_wall_s = 0, wall_s = 0;
  std::vector<DeviceReport> devices;  // every GPU that screened, in --gpu order
};

// The worker request that runs a compiled config (the worker derives the grid from its tile and
// the problem it holds). accuracy is set for a family of a non-strict precision class; its stress
// cases (accuracy_stress_cases() in the problem's layout) are the caller's to add.
TrialRequest make_trial_request(const Compiled& comp, const WarpTileConfig& c);

// Verifies a compiled config on the edge-shape suite of edge_cases() in the problem's layout.
std::vector<EdgeCheck> verify_edge_cases(const Compiled& comp, const WarpTileConfig& c,
                                         const Problem& p, WorkerClient& worker, std::uint64_t seed,
                                         double tolerance);
std::vector<EdgeCheck> verify_edge_cases(const Compiled& comp, const WarpTileConfig& c,
                                         const Problem& p, Evaluator& ev, std::uint64_t seed,
                                         double tolerance);

// Tunes one problem on the evaluator's GPU. Trials are recorded in `store` as they finish, so a
// killed tune loses nothing it finished, and a resumed one measures nothing twice.
TuneReport run_tune(const TuneOptions& opts, Evaluator& ev, TrialStore& store,
                    const std::function<void(const TuneProgress&)>& progress = {});
// The same on several GPUs: each idle GPU measures the next candidate the strategy asked for, so
// every candidate is measured once, on one of them. GPUs that are all replays take turns in the
// order of their clocks (the recorded seconds), so a replay on several is deterministic; real GPUs
// run at once, one thread each. A GPU whose worker cannot go on leaves the tune (its candidate
// goes to another); the tune fails only when none is left.
TuneReport run_tune(const TuneOptions& opts, const Devices& devices, TrialStore& store,
                    const std::function<void(const TuneProgress&)>& progress = {});

}  // namespace sgt::tune
