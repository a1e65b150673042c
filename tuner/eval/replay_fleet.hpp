// A replay's stand-in for the GPUs of a tune: the devices --gpu lists, each answering from the
// recording of the problem it tunes.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "fleet.hpp"
#include "gpu_select.hpp"
#include "replay_evaluator.hpp"

namespace sgt::eval {

// The recording of `p` among `all`; InputError listing the recorded problems otherwise.
const Recording& recording_for(const std::vector<Recording>& all, const Problem& p);

class ReplayFleet final : public Fleet {
 public:
  // The devices `gpus` stands for (one for a single device or 'auto'); InputError for 'all' (a
  // replay has no devices to count) and for no recordings.
  ReplayFleet(std::vector<Recording> recordings, const GpuSet& gpus);
  // How many devices `gpus` stands for in a replay; InputError for 'all'.
  static size_t count(const GpuSet& gpus);

  size_t size() const override { return count_; }
  int device(size_t d) const override;
  const GpuFingerprint& fingerprint(size_t d) const override;
  const GpuFingerprint& gpu_of(const Problem& p) const override;
  // Every device: one replay evaluator per device, each its own clock, and one more for
  // compiling (one device compiles and measures on one clock, as a tune on one GPU does).
  // Device d alone: one evaluator on one clock, standing for that device.
  std::unique_ptr<LaneSet> lanes(const Problem& p, std::optional<size_t> d,
                                 unsigned compile_threads) override;
  bool recorded_clock() const override { return true; }
  // A replay's device never breaks; a failure is the shape's alone.
  bool renew(size_t, std::string&) override { return true; }

  const std::vector<Recording>& recordings() const { return recordings_; }

 private:
  std::vector<Recording> recordings_;
  GpuSet gpus_;
  size_t count_ = 1;
};

}  // namespace sgt::eval
