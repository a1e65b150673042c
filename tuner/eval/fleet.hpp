// The devices a suite of tunes runs on, as the suite runner (tune/suite.hpp) sees them: the GPUs
// of this host, each with its worker (gpu/worker_fleet.hpp), or a replay standing for them
// (replay_fleet.hpp). The runner never asks which.
#pragma once

#include <cstddef>
#include <memory>
#include <optional>
#include <string>

#include "evaluator.hpp"

namespace sgt::eval {

// The lanes that tune one problem, and whatever they need kept alive while they do.
class LaneSet {
 public:
  virtual ~LaneSet() = default;
  virtual Devices devices() = 0;
};

class Fleet {
 public:
  virtual ~Fleet() = default;
  // How many devices.
  virtual size_t size() const = 0;
  // The GPU number device d stands for, as --gpu names it.
  virtual int device(size_t d) const = 0;
  // The GPU of device d (a replay: of its first recording).
  virtual const GpuFingerprint& fingerprint(size_t d) const = 0;
  // The GPU whose trials a tune of `p` measures (a replay: the one its recording was made on);
  // the history a learning strategy starts from is this GPU's.
  virtual const GpuFingerprint& gpu_of(const Problem& p) const = 0;
  // Lanes that tune `p`: on every device (nullopt), or on device d alone; compiling (a replay's
  // clock of it) on `compile_threads`.
  virtual std::unique_ptr<LaneSet> lanes(const Problem& p, std::optional<size_t> d,
                                         unsigned compile_threads) = 0;
  // The devices keep clocks of recorded seconds (a replay): a suite spread over them is dealt by
  // those clocks, so it runs the same every time.
  virtual bool recorded_clock() const = 0;
  // Device d failed on a shape: a fresh start for it (a new worker process). False, with `why`,
  // when it cannot have one: it then leaves the suite.
  virtual bool renew(size_t d, std::string& why) = 0;
};

}  // namespace sgt::eval
