// The evaluator of a real tune: NVRTC through the kernel cache, and the isolated GPU worker.
#pragma once

#include <chrono>
#include <filesystem>
#include <string>
#include <vector>

#include "evaluator.hpp"
#include "nvrtc_compiler.hpp"

namespace sgt::gpu {

using eval::Evaluator;
using eval::ProblemSetup;
using eval::TrialRequest;
using eval::TrialResponse;
using eval::WorkerClient;
using eval::WorkerInfo;

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
  eval::EvaluatorTraits traits() const override { return {"worker", false, false}; }

 private:
  WorkerClient& worker_;
  KernelCompiler compiler_;
  std::chrono::steady_clock::time_point start_ = std::chrono::steady_clock::now();
};

}  // namespace sgt::gpu
