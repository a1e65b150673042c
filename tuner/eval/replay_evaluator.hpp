// An evaluator that answers from recorded trials (a dataset file or a tuning database): the whole
// tune session runs on a machine with no GPU and no compiler, charging each candidate the compile
// and measure seconds it cost when it was recorded. A candidate the recording lacks is an error,
// never a guess.
#pragma once

#include <map>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include "evaluator.hpp"
#include "precision.hpp"

namespace sgt::eval {

// What a replay answers from: every trial of one problem on one GPU.
struct Recording {
  std::string origin;  // the file, for messages
  GpuFingerprint gpu;
  Problem problem;
  std::vector<Trial> trials;  // screening trials and finalists' re-timings (phase final)
  // The candidate set it recorded, as `--space` named it (a dataset's header); empty for a
  // database. A replay without --space tunes this set, so a built-in space added later does not
  // ask a recording for candidates it never had.
  std::string space = {};
  // The precision class it was enumerated under (a dataset's header; fp32 for a database).
  Precision precision = Precision::fp32;
};

class ReplayEvaluator final : public Evaluator {
 public:
  // compile_threads: how many compilations the simulated clock runs at once (0: all cores).
  explicit ReplayEvaluator(Recording rec, unsigned compile_threads = 0);

  const WorkerInfo& info() const override { return info_; }
  // The recorded ptxas report and status. Throws InputError for a candidate never recorded, or a
  // problem other than the recording's.
  Compiled build(const WarpTileConfig& c, const Problem& problem) override;
  TimeStats set_problem(const ProblemSetup& setup) override;
  TimeStats baseline(int repetitions) override;
  // The recorded outcome. A trial recorded as cut stays cut (censored: its time is only a bound);
  // one recorded whole is cut when its fastest repetition is over cut_ratio x best_ms, as the
  // worker would cut it. Without a cut (finalists), a recorded finalist's re-timing is preferred.
  TrialResponse run_trial(const TrialRequest& req, std::chrono::milliseconds timeout) override;
  // The recorded edge checks of that config, or an empty list when it was never verified.
  std::vector<EdgeCheck> verify_cases(const TrialRequest& req, const std::vector<EdgeCheck>& cases,
                                      std::uint64_t seed,
                                      std::chrono::milliseconds timeout) override;
  int restarts() const override { return 0; }
  double elapsed_s() const override;
  std::string recorded_kernel_hash(const std::string& config_name) const override;
  EvaluatorTraits traits() const override { return {"replay", true, true}; }

  const Recording& recording() const { return rec_; }
  // The device index it stands for in a replay on several (reports and messages).
  void set_device(int index) { info_.device = index; }
  // Candidates answered by run_trial so far (screening and final).
  int evaluations() const;

 private:
  const Trial& screened(const std::string& name) const;

  Recording rec_;
  WorkerInfo info_;
  unsigned threads_;
  std::map<std::string, const Trial*> screen_, final_;
  std::map<std::string, const std::vector<EdgeCheck>*> edges_;
  double cublas_screen_ms_ = 0, cublas_final_ms_ = 0;
  mutable std::mutex mu_;
  std::set<std::string> built_;  // binaries charged already (split-K variants share one)
  double compile_s_ = 0, measure_s_ = 0;
  int evaluations_ = 0;
};

}  // namespace sgt::eval
