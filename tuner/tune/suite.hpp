// A suite of shapes on a fleet of devices (eval/fleet.hpp): what `tune --shapes` and `bench` both
// run. One after another, each shape over every device; or spread, each shape whole on one device
// and the next shape to the next idle one (shape_spread.hpp). A device that fails on a shape is
// given a fresh start (Fleet::renew) and the next shape; one that cannot have one leaves the suite
// and its shape goes to another device. Bad input stops the suite and is rethrown.
#pragma once

#include <cstddef>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "fleet.hpp"
#include "shape_spread.hpp"
#include "shared_store.hpp"
#include "tune.hpp"

namespace sgt::tune {

struct SuiteHooks {
  // Runs shape i: over every device (nullopt) or on device d alone. A failure throws.
  std::function<void(size_t i, std::optional<size_t> device)> run;
  // Shape i ended: `failed` is empty when it ran to its end, else why it failed (a run failure:
  // the worker, the store; bad input is rethrown instead). Spread: called as each shape ends, one
  // call at a time, with the GPU number of the device that ran it; in turn: in suite order, -1.
  std::function<void(size_t i, const std::string& failed, int device)> ended;
  // Spread over a fleet with recorded clocks: the recorded seconds shape i took, read after it
  // ended, so that the next shape goes to the device whose clock is least.
  std::function<double(size_t i)> recorded_s;
  // What the suite is, in messages: "GPU 1 leaves the tune (...)".
  std::string what = "tune";
};

struct SuiteRun {
  bool spread = false;
  // Spread: by shape, what became of it; shapes no device ran (every device was lost) are
  // not_run, with no call of `ended`.
  std::optional<SpreadReport> report;
  // The shapes no device ran.
  std::vector<size_t> not_run() const;
};

// Runs n shapes on `fleet`: spread when `spread` and the fleet has several devices or `spread` is
// forced by the caller (bench spreads always, so that a failed shape is its row's), else in turn,
// where a failure is rethrown. Returns what each shape became.
SuiteRun run_suite(size_t n, eval::Fleet& fleet, bool spread, const SuiteHooks& hooks);

// Tunes one shape with `t` on `fleet`: over every device, or on device d alone, writing through a
// view of `shared`.
TuneReport tune_on(const TuneOptions& t, eval::Fleet& fleet, std::optional<size_t> device,
                   SharedStore& shared,
                   const std::function<void(const TuneProgress&)>& progress = {});

// The devices of a spread suite as JSON: GPU number, name, UUID, shapes taken, why one was lost.
nlohmann::json suite_devices_json(const SuiteRun& run, const eval::Fleet& fleet);

}  // namespace sgt::tune
