// The GPUs of a tune as --gpu names them: one worker process and evaluator per device, or, in a
// replay, one replay evaluator per device listed, answering from the same recording.
#pragma once

#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "evaluator.hpp"
#include "gpu_select.hpp"
#include "replay_evaluator.hpp"
#include "tune.hpp"
#include "worker_client.hpp"

namespace sgt::gpu {

class WorkerFleet {
 public:
  // Starts a worker on each GPU `gpus` names ('all': every device of this host). Throws Error when
  // a device cannot be used, and when the devices are not one GPU model (model_difference).
  WorkerFleet(const std::filesystem::path& exe, const GpuSet& gpus,
              const std::filesystem::path& cache_dir,
              const std::vector<std::string>& nvrtc_options);
  WorkerFleet(const WorkerFleet&) = delete;
  WorkerFleet& operator=(const WorkerFleet&) = delete;

  const WorkerInfo& first() const { return workers_.front()->info(); }
  // Every GPU as a lane of one tune.
  Devices devices();
  size_t size() const { return workers_.size(); }
  // The i-th GPU in --gpu order, alone: its worker, and a tune on it only (shapes spread whole).
  WorkerClient& worker(size_t i) { return *workers_.at(i); }
  const WorkerInfo& info(size_t i) const { return workers_.at(i)->info(); }
  Devices devices(size_t i);

 private:
  std::vector<std::unique_ptr<WorkerClient>> workers_;
  std::vector<std::unique_ptr<WorkerEvaluator>> evaluators_;
};

// A replay standing for the devices `gpus` lists: each its own clock, one more for compiling.
// InputError for 'all' (a replay has no devices to count).
class ReplayFleet {
 public:
  ReplayFleet(const Recording& rec, const GpuSet& gpus, unsigned compile_threads);
  // One device standing for device `index` (a shape of a suite spread over the devices listed),
  // compiling and measuring on one clock as a tune on one GPU does.
  ReplayFleet(const Recording& rec, int index, unsigned compile_threads);
  // How many devices `gpus` stands for in a replay; InputError for 'all'.
  static size_t count(const GpuSet& gpus);
  Devices devices();

 private:
  std::unique_ptr<ReplayEvaluator> builder_;
  std::vector<std::unique_ptr<ReplayEvaluator>> lanes_;
};

}  // namespace sgt::gpu
