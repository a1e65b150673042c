// The seam between a tune session and whatever answers it: an Evaluator builds a candidate's
// binary and runs it (verify, then time) against the problem's baseline. The worker evaluator does
// that with NVRTC and an isolated GPU worker process; the replay evaluator answers from recorded
// trials, with no compiler and no GPU. The session never knows which one it talks to.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include "nvrtc_compiler.hpp"
#include "trial.hpp"
#include "worker_client.hpp"
#include "worker_protocol.hpp"

namespace sgt::gpu {

class Evaluator {
 public:
  virtual ~Evaluator() = default;

  // The GPU the trials are measured on (for a replay: the recording's).
  virtual const WorkerInfo& info() const = 0;
  // The binary of one candidate for `problem` (its layout and load instance). Thread-safe: the
  // session builds on several threads at once. A bad config is a Compiled with a failed status;
  // throws only when building itself is impossible (a replay: the candidate was never recorded).
  virtual Compiled build(const WarpTileConfig& c, const Problem& problem) = 0;
  // Sets the problem up and times the baseline (cuBLAS FP32) on it.
  virtual TimeStats set_problem(const ProblemSetup& setup) = 0;
  // The baseline again, beside the finalists.
  virtual TimeStats baseline(int repetitions) = 0;
  // Verifies and times one built candidate. A candidate's own failure is a response, not an
  // exception.
  virtual TrialResponse run_trial(const TrialRequest& req, std::chrono::milliseconds timeout) = 0;
  // The candidate on each edge case. Returns the cases with passed/error/reason filled, or an
  // empty list when this evaluator cannot verify it (a replay of a config never verified).
  virtual std::vector<EdgeCheck> verify_cases(const TrialRequest& req,
                                              const std::vector<EdgeCheck>& cases,
                                              std::uint64_t seed,
                                              std::chrono::milliseconds timeout) = 0;
  // Worker processes replaced so far (crashes, hangs).
  virtual int restarts() const = 0;
  // Seconds this evaluator has spent (a replay: the recorded compile and measure seconds of what
  // it answered, compiling counted once per binary and spread over `compile_threads`).
  virtual double elapsed_s() const = 0;
  // "worker" or "replay", for reports.
  virtual std::string kind() const = 0;
  // The kernel hash the trials of this config are stored under when this evaluator measures it:
  // empty for the sources compiled now; a replay's, the hash it was recorded with (a replayed
  // measurement of older sources stays stale, and a resumed replay finds it under that hash).
  virtual std::string recorded_kernel_hash(const std::string& config_name) const {
    (void)config_name;
    return {};
  }
};

// NVRTC with the on-disk kernel cache, and the GPU worker process.
class WorkerEvaluator final : public Evaluator {
 public:
  WorkerEvaluator(WorkerClient& worker, const std::filesystem::path& cache_dir,
                  std::vector<std::string> nvrtc_options = {});

  const WorkerInfo& info() const override { return worker_.info(); }
  Compiled build(const WarpTileConfig& c, const Problem& problem) override;
  TimeStats set_problem(const ProblemSetup& setup) override { return worker_.set_problem(setup); }
  TimeStats baseline(int repetitions) override { return worker_.time_cublas(repetitions); }
  TrialResponse run_trial(const TrialRequest& req, std::chrono::milliseconds timeout) override {
    return worker_.run_trial(req, timeout);
  }
  std::vector<EdgeCheck> verify_cases(const TrialRequest& req, const std::vector<EdgeCheck>& cases,
                                      std::uint64_t seed,
                                      std::chrono::milliseconds timeout) override {
    return worker_.verify_cases(req, cases, seed, timeout);
  }
  int restarts() const override { return worker_.restarts(); }
  double elapsed_s() const override;
  std::string kind() const override { return "worker"; }

 private:
  WorkerClient& worker_;
  KernelCompiler compiler_;
  std::chrono::steady_clock::time_point start_ = std::chrono::steady_clock::now();
};

}  // namespace sgt::gpu
