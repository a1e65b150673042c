// Starting the GPUs of a tune (see fleet.hpp).
#include "fleet.hpp"

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

ReplayFleet::ReplayFleet(const Recording& rec, int index, unsigned compile_threads) {
  lanes_.push_back(std::make_unique<ReplayEvaluator>(rec, compile_threads));
  lanes_.back()->set_device(index);
}

size_t ReplayFleet::count(const GpuSet& gpus) {
  if (gpus.kind == GpuSet::Kind::all) {
    throw InputError(
        "--gpu all with --replay: a replay has no devices to count; list the devices it stands "
        "for, e.g. --gpu 0,1,2,3");
  }
  return gpus.kind == GpuSet::Kind::list ? gpus.indices.size() : 1;
}

ReplayFleet::ReplayFleet(const Recording& rec, const GpuSet& gpus, unsigned compile_threads) {
  const size_t n = count(gpus);
  if (n == 1) {
    // One device compiles and measures on one clock, as a tune on one GPU does.
    lanes_.push_back(std::make_unique<ReplayEvaluator>(rec, compile_threads));
    return;
  }
  builder_ = std::make_unique<ReplayEvaluator>(rec, compile_threads);
  for (size_t i = 0; i < n; ++i) {
    lanes_.push_back(std::make_unique<ReplayEvaluator>(rec, compile_threads));
    lanes_.back()->set_device(gpus.indices[i]);
  }
}

Devices ReplayFleet::devices() {
  Devices d;
  for (auto& e : lanes_) d.lanes.push_back(e.get());
  d.builder = builder_ ? builder_.get() : d.lanes.front();
  return d;
}

}  // namespace sgt::gpu
