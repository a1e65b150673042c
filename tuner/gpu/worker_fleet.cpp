// Starting the GPUs of a tune (see worker_fleet.hpp).
#include "worker_fleet.hpp"

#include <fmt/format.h>

#include "error.hpp"

namespace sgt::gpu {

WorkerFleet::WorkerFleet(const std::filesystem::path& exe, const GpuSet& gpus,
                         const std::filesystem::path& cache_dir,
                         const std::vector<std::string>& nvrtc_options) {
  auto add = [&](const GpuSelector& sel) {
    workers_.push_back(std::make_unique<WorkerClient>(exe, sel));
    const auto& info = workers_.back()->info();
    const auto& home = workers_.front()->info();
    if (const auto diff = model_difference(home.fingerprint, info.fingerprint); !diff.empty()) {
      throw Error(fmt::format(
          "GPU {} ({}) cannot share a tune with GPU {} ({}): {}; tune each model on its own "
          "(--gpu {})",
          info.device, info.fingerprint.name, home.device, home.fingerprint.name, diff,
          info.device));
    }
    evaluators_.push_back(
        std::make_unique<WorkerEvaluator>(*workers_.back(), cache_dir, nvrtc_options));
  };
  auto index = [](int i) {
    GpuSelector s;
    s.kind = GpuSelector::Kind::index;
    s.index = i;
    return s;
  };
  switch (gpus.kind) {
    case GpuSet::Kind::one:
      add(gpus.one);
      break;
    case GpuSet::Kind::list:
      for (int i : gpus.indices) add(index(i));
      break;
    case GpuSet::Kind::all: {
      add(index(0));
      const auto n = static_cast<int>(workers_.front()->info().devices.size());
      for (int i = 1; i < n; ++i) add(index(i));
      break;
    }
  }
}

Devices WorkerFleet::devices() {
  Devices d;
  for (auto& e : evaluators_) d.lanes.push_back(e.get());
  d.builder = d.lanes.front();
  return d;
}

Devices WorkerFleet::devices(size_t i) {
  Evaluator* ev = evaluators_.at(i).get();
  return Devices{{ev}, ev};
}

namespace {

// The lanes of a fleet's workers: they live as long as the fleet.
class WorkerLanes final : public eval::LaneSet {
 public:
  explicit WorkerLanes(Devices d) : d_(std::move(d)) {}
  Devices devices() override { return d_; }

 private:
  Devices d_;
};

}  // namespace

std::unique_ptr<eval::LaneSet> WorkerFleet::lanes(const Problem&, std::optional<size_t> d,
                                                  unsigned) {
  return std::make_unique<WorkerLanes>(d ? devices(*d) : devices());
}

bool WorkerFleet::renew(size_t d, std::string& why) {
  try {
    worker(d).reset();
    return true;
  } catch (const Error& e) {
    why = e.what();
    return false;
  }
}

}  // namespace sgt::gpu
