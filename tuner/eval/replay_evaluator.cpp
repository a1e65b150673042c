// Replaying recorded trials through the evaluator seam (see replay_evaluator.hpp).
#include "replay_evaluator.hpp"

#include <algorithm>
#include <thread>

#include <fmt/format.h>

#include "error.hpp"
#include "instance.hpp"

namespace sgt::eval {

namespace {

bool is_final(const Trial& t) {
  return t.phase == TrialPhase::final;
}

TimeStats stats_of(double median_ms, int repetitions) {
  TimeStats s;
  s.median_ms = s.min_ms = s.max_ms = median_ms;
  s.repetitions = repetitions;
  return s;
}

}  // namespace

ReplayEvaluator::ReplayEvaluator(Recording rec, unsigned compile_threads)
    : rec_(std::move(rec)),
      threads_(compile_threads ? compile_threads
                               : std::max(1u, std::thread::hardware_concurrency())) {
  info_.fingerprint = rec_.gpu;
  info_.device = 0;
  info_.why = fmt::format("replay of {}", rec_.origin);
  for (const auto& t : rec_.trials) {
    if (!(t.problem == rec_.problem)) {
      throw InputError(fmt::format("recording '{}' mixes problems: {} {} and {} {}", rec_.origin,
                                   rec_.problem.shape(), rec_.problem.layout, t.problem.shape(),
                                   t.problem.layout));
    }
    // The latest trial of a config wins, as a resumed tune would see it.
    (is_final(t) ? final_ : screen_)[t.config_name] = &t;
    if (!t.edge_checks.empty()) edges_[t.config_name] = &t.edge_checks;
    if (t.cublas_median_ms > 0) {
      (is_final(t) ? cublas_final_ms_ : cublas_screen_ms_) = t.cublas_median_ms;
    }
  }
  if (screen_.empty()) {
    throw InputError(fmt::format("recording '{}' has no screening trial of {} {}", rec_.origin,
                                 rec_.problem.shape(), rec_.problem.layout));
  }
  if (cublas_final_ms_ == 0) cublas_final_ms_ = cublas_screen_ms_;
}

const Trial& ReplayEvaluator::screened(const std::string& name) const {
  const auto it = screen_.find(name);
  if (it == screen_.end()) {
    throw InputError(fmt::format(
        "candidate {} is not in the recording '{}' ({} {}, {} candidates recorded): a replay "
        "answers only what was measured; narrow --space to the recorded set or record it",
        name, rec_.origin, rec_.problem.shape(), rec_.problem.layout, screen_.size()));
  }
  return *it->second;
}

Compiled ReplayEvaluator::build(const WarpTileConfig& c, const Problem& problem) {
  if (!(problem == rec_.problem)) {
    throw InputError(fmt::format("recording '{}' is of {} {}, not {} {}", rec_.origin,
                                 rec_.problem.shape(), rec_.problem.layout, problem.shape(),
                                 problem.layout));
  }
  const auto name = to_name(c);
  const Trial& t = screened(name);
  Compiled out;
  out.config_name = name;
  out.layout = problem.layout;
  out.vec_loads = kernel_vec_loads(problem);
  out.registers = t.registers;
  out.spill_store_bytes = t.spill_bytes;
  out.stack_bytes = t.stack_bytes;
  out.shared_bytes = t.shared_bytes;
  out.compile_seconds = t.compile_s;
  out.recorded_kernel_hash = t.kernel_hash;
  if (t.status == TrialStatus::compile_failed || t.status == TrialStatus::spills ||
      t.status == TrialStatus::resources) {
    out.status = t.status;
    out.reason = t.reason;
  } else {
    out.lowered_name = "replay";
  }
  const auto binary = resolve(c, problem.layout, out.vec_loads).name_expression;
  std::lock_guard lock(mu_);
  out.from_cache = !built_.insert(binary).second;
  if (!out.from_cache) compile_s_ += t.compile_s;
  return out;
}

std::string ReplayEvaluator::recorded_kernel_hash(const std::string& config_name) const {
  const auto it = screen_.find(config_name);
  return it == screen_.end() ? std::string() : it->second->kernel_hash;
}

TimeStats ReplayEvaluator::set_problem(const ProblemSetup& setup) {
  if (!(setup.problem == rec_.problem)) {
    throw InputError(fmt::format("recording '{}' is of {} {}, not {} {}", rec_.origin,
                                 rec_.problem.shape(), rec_.problem.layout, setup.problem.shape(),
                                 setup.problem.layout));
  }
  return stats_of(cublas_screen_ms_, setup.cublas_repetitions);
}

TimeStats ReplayEvaluator::baseline(int repetitions) {
  return stats_of(cublas_final_ms_, repetitions);
}

TrialResponse ReplayEvaluator::run_trial(const TrialRequest& req, std::chrono::milliseconds) {
  const Trial* t = &screened(req.name);
  if (req.cut_after == 0) {
    if (const auto it = final_.find(req.name); it != final_.end()) t = it->second;
  }
  // A kernel whose accuracy the request asks for was recorded with it (its status depends on it),
  // unless it failed before that was measured: a recording without it is refused, never guessed.
  if (req.accuracy && t->status == TrialStatus::ok && !t->error_ratio) {
    throw InputError(fmt::format(
        "candidate {} of kernel family {} is recorded in '{}' without its error against FP64, "
        "which a tune of it measures (a recording of a build before the family's precision "
        "class); record it again",
        req.name, req.family, rec_.origin));
  }
  TrialResponse r;
  r.status = t->status;
  r.reason = t->reason;
  r.verify_error = t->verify_error;
  r.time = t->time;
  r.cut = t->cut_early;
  r.error_ratio = t->error_ratio.value_or(-1);
  r.stress_ratio = t->stress_ratio.value_or(-1);
  r.stress_case = t->stress_case;
  if (!r.cut && t->status == TrialStatus::ok && req.best_ms > 0 && req.cut_after > 0 &&
      req.cut_after < t->time.repetitions && t->time.min_ms > req.cut_ratio * req.best_ms) {
    r.cut = true;
    r.time.repetitions = req.cut_after;
  }
  std::lock_guard lock(mu_);
  measure_s_ += t->measure_s;
  ++evaluations_;
  return r;
}

std::vector<EdgeCheck> ReplayEvaluator::verify_cases(const TrialRequest& req,
                                                     const std::vector<EdgeCheck>&, std::uint64_t,
                                                     std::chrono::milliseconds) {
  const auto it = edges_.find(req.name);
  if (it == edges_.end()) return {};
  return *it->second;
}

double ReplayEvaluator::elapsed_s() const {
  std::lock_guard lock(mu_);
  return compile_s_ / threads_ + measure_s_;
}

int ReplayEvaluator::evaluations() const {
  std::lock_guard lock(mu_);
  return evaluations_;
}

}  // namespace sgt::eval
