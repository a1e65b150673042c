// Replay evaluators standing for the devices of a tune (see replay_fleet.hpp).
#include "replay_fleet.hpp"

#include <fmt/format.h>

#include "error.hpp"

namespace sgt::eval {

const Recording& recording_for(const std::vector<Recording>& all, const Problem& p) {
  for (const auto& r : all) {
    if (r.problem == p) return r;
  }
  std::string known;
  for (const auto& r : all)
    known += fmt::format("\n  {} {} ({})", r.problem.shape(), r.problem.layout, r.origin);
  throw InputError(
      fmt::format("no recording of {} {} among the --replay files:{}", p.shape(), p.layout, known));
}

namespace {

// The evaluators of one problem's lanes; `builder` compiles for every lane when there are several.
class ReplayLanes final : public LaneSet {
 public:
  Devices devices() override {
    Devices d;
    for (auto& e : lanes) d.lanes.push_back(e.get());
    d.builder = builder ? builder.get() : d.lanes.front();
    return d;
  }
  std::unique_ptr<ReplayEvaluator> builder;
  std::vector<std::unique_ptr<ReplayEvaluator>> lanes;
};

}  // namespace

size_t ReplayFleet::count(const GpuSet& gpus) {
  if (gpus.kind == GpuSet::Kind::all) {
    throw InputError(
        "--gpu all with --replay: a replay has no devices to count; list the devices it stands "
        "for, e.g. --gpu 0,1,2,3");
  }
  return gpus.kind == GpuSet::Kind::list ? gpus.indices.size() : 1;
}

ReplayFleet::ReplayFleet(std::vector<Recording> recordings, const GpuSet& gpus)
    : recordings_(std::move(recordings)), gpus_(gpus), count_(count(gpus)) {
  if (recordings_.empty()) throw InputError("a replay needs at least one recording");
}

int ReplayFleet::device(size_t d) const {
  return gpus_.kind == GpuSet::Kind::list ? gpus_.indices.at(d) : 0;
}

const GpuFingerprint& ReplayFleet::fingerprint(size_t) const {
  return recordings_.front().gpu;
}

const GpuFingerprint& ReplayFleet::gpu_of(const Problem& p) const {
  return recording_for(recordings_, p).gpu;
}

std::unique_ptr<LaneSet> ReplayFleet::lanes(const Problem& p, std::optional<size_t> d,
                                            unsigned compile_threads) {
  const Recording& rec = recording_for(recordings_, p);
  auto out = std::make_unique<ReplayLanes>();
  if (d) {
    out->lanes.push_back(std::make_unique<ReplayEvaluator>(rec, compile_threads));
    out->lanes.back()->set_device(device(*d));
  } else if (count_ == 1) {
    out->lanes.push_back(std::make_unique<ReplayEvaluator>(rec, compile_threads));
  } else {
    out->builder = std::make_unique<ReplayEvaluator>(rec, compile_threads);
    for (size_t i = 0; i < count_; ++i) {
      out->lanes.push_back(std::make_unique<ReplayEvaluator>(rec, compile_threads));
      out->lanes.back()->set_device(device(i));
    }
  }
  return out;
}

}  // namespace sgt::eval
