// The tune pipeline: survivors -> NVRTC (thread pool, disk cache) -> GPU worker (verify, time
// against cuBLAS) -> TrialStore, then the top finalists re-timed with cuBLAS in the same phase.
#pragma once

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "nvrtc_compiler.hpp"
#include "trial.hpp"
#include "worker_client.hpp"

namespace sgt::gpu {

struct TuneOptions {
  Problem problem;
  std::vector<WarpTileConfig> candidates;  // survivors of the space for this problem
  std::string strategy = "exhaustive";
  int top_k = 5;
  int repetitions = 5;         // screening repetitions per candidate
  int final_repetitions = 20;  // finalists and cuBLAS, same phase
  int cut_after = 2;
  double cut_ratio = 1.25;
  double tolerance = 1e-4;
  std::uint64_t seed = 0;
  unsigned compile_threads = 0;  // 0: all cores
  std::filesystem::path cache_dir;
  std::vector<std::string> nvrtc_options;  // extra options, e.g. -DSGT_K_UNROLL=4
  bool retune = false;                     // ignore finished trials in the store
};

struct TuneProgress {
  size_t done = 0, total = 0;
  double elapsed_s = 0, eta_s = 0;
  double best_ms = 0;
  std::string best_name;
};

struct Finalist {
  Trial trial;
  double ratio_to_cublas = 0;  // cuBLAS median / this median, same phase
};

struct TuneReport {
  WorkerInfo worker;
  TimeStats cublas_screen;    // cuBLAS timed when the problem was set up
  TimeStats cublas_final;     // cuBLAS re-timed beside the finalists
  std::vector<Trial> trials;  // one per candidate (screening), resumed ones included
  std::vector<Finalist> finalists;
  std::map<std::string, int> status_counts;
  int resumed = 0, cut_early = 0, worker_restarts = 0;
  size_t compiled = 0, cache_hits = 0;
  double compile_wall_s = 0, wall_s = 0;
};

// The worker request that runs a compiled config (the worker derives the grid from its tile and
// the problem it holds).
TrialRequest make_trial_request(const Compiled& comp, const WarpTileConfig& c);

// Verifies a compiled config on the edge-shape suite of edge_cases() in the problem's layout.
std::vector<EdgeCheck> verify_edge_cases(const Compiled& comp, const WarpTileConfig& c,
                                         const Problem& p, WorkerClient& worker, std::uint64_t seed,
                                         double tolerance);

// Tunes one problem on the worker's GPU (opts.gpu is the worker's business, not this function's).
// Trials are recorded in `store` as they finish, so a killed tune loses nothing it finished.
TuneReport run_tune(const TuneOptions& opts, WorkerClient& worker, TrialStore& store,
                    const std::function<void(const TuneProgress&)>& progress = {});

}  // namespace sgt::gpu
