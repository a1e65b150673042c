// The GPUs of a tune as --gpu names them: one worker process and evaluator per device
// (replay_fleet.hpp stands in for them in a replay).
#pragma once

#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "fleet.hpp"
#include "gpu_select.hpp"
#include "worker_client.hpp"
#include "worker_evaluator.hpp"

namespace sgt::gpu {

using eval::Devices;

class WorkerFleet final : public eval::Fleet {
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
  // The i-th GPU in --gpu order, alone: its worker, and a tune on it only (shapes spread whole).
  WorkerClient& worker(size_t i) { return *workers_.at(i); }
  const WorkerInfo& info(size_t i) const { return workers_.at(i)->info(); }
  Devices devices(size_t i);

  // eval::Fleet: the same GPUs for a suite.
  size_t size() const override { return workers_.size(); }
  int device(size_t d) const override { return info(d).device; }
  const GpuFingerprint& fingerprint(size_t d) const override { return info(d).fingerprint; }
  const GpuFingerprint& gpu_of(const Problem&) const override { return first().fingerprint; }
  std::unique_ptr<eval::LaneSet> lanes(const Problem& p, std::optional<size_t> d,
                                       unsigned compile_threads) override;
  bool recorded_clock() const override { return false; }
  // A new worker on device d (WorkerClient::reset).
  bool renew(size_t d, std::string& why) override;

 private:
  std::vector<std::unique_ptr<WorkerClient>> workers_;
  std::vector<std::unique_ptr<WorkerEvaluator>> evaluators_;
};

}  // namespace sgt::gpu
