// The seam between a tune session and whatever answers it: an Evaluator builds a candidate's
// binary and runs it (verify, then time) against the problem's baseline. The worker evaluator does
// that with NVRTC and an isolated GPU worker process; the replay evaluator answers from recorded
// trials, with no compiler and no GPU. The session never knows which one it talks to.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include "compiled.hpp"
#include "trial.hpp"
#include "worker_client.hpp"
#include "worker_protocol.hpp"

namespace sgt::eval {

// What the session asks of an evaluator instead of its name.
struct EvaluatorTraits {
  std::string name;  // "worker", "replay": for reports only
  // Its answers are recorded trials replayed, not measurements made now: the session stores its
  // trials as replayed (source replayed).
  bool replayed = false;
  // Its elapsed_s() is a clock of recorded seconds, not the wall clock: lanes that all have one
  // take turns in the order of their clocks (a deterministic replay on several devices); lanes on
  // the wall clock measure at once, a thread each.
  bool recorded_clock = false;
};

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
  // What the session must know of it (traits, never its name).
  virtual EvaluatorTraits traits() const = 0;
  // The kernel hash the trials of this config are stored under when this evaluator measures it:
  // empty for the sources compiled now; a replay's, the hash it was recorded with (a replayed
  // measurement of older sources stays stale, and a resumed replay finds it under that hash).
  virtual std::string recorded_kernel_hash(const std::string& config_name) const {
    (void)config_name;
    return {};
  }
};

// The GPUs one tune measures on. Each lane is one GPU's evaluator (its own worker process, cuBLAS
// baseline and cut threshold); the first that is still there at the end re-times the finalists
// beside its cuBLAS and verifies them, so the winner's figure is a same-GPU comparison. `builder`
// compiles for all of them (NVRTC needs no GPU and the binaries are files every worker loads);
// nullptr: the first lane. The lanes must be one GPU model (model_difference), or the tune refuses.
struct Devices {
  std::vector<Evaluator*> lanes;
  Evaluator* builder = nullptr;
};

}  // namespace sgt::eval
