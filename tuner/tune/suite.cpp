// A suite of shapes on a fleet of devices (see suite.hpp).
#include "suite.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>
#include <spdlog/spdlog.h>

#include "log_tag.hpp"

namespace sgt::tune {

std::vector<size_t> SuiteRun::not_run() const {
  std::vector<size_t> out;
  if (!report) return out;
  for (size_t i = 0; i < report->items.size(); ++i) {
    if (report->items[i].state == SpreadItem::State::not_run) out.push_back(i);
  }
  return out;
}

SuiteRun run_suite(size_t n, eval::Fleet& fleet, bool spread, const SuiteHooks& hooks) {
  SuiteRun out;
  out.spread = spread;
  if (!spread) {
    for (size_t i = 0; i < n; ++i) {
      hooks.run(i, std::nullopt);
      if (hooks.ended) hooks.ended(i, {}, -1);
    }
    return out;
  }
  const size_t devices = fleet.size();
  std::vector<double> clocks(devices, 0);  // a replay's: the recorded seconds of its shapes
  SpreadOptions so;
  if (fleet.recorded_clock()) so.clock = [&](size_t d) { return clocks[d]; };
  so.classify = [&](const std::exception_ptr& e, size_t d) {
    // Bad input (a candidate a recording lacks) stops the suite, as in turn.
    if (!is_run_failure(e)) return SpreadFault::all;
    if (devices == 1) return SpreadFault::item;
    // The device failed on this shape: a fresh start, and the next shape. A device that cannot
    // have one is lost; its shape goes to another device, which resumes what was stored.
    const ScopedLogTag tag(fmt::format("GPU {}", fleet.device(d)));
    std::string why;
    if (fleet.renew(d, why)) return SpreadFault::item;
    spdlog::warn("GPU {} leaves the {} ({}; no new worker: {}); its shape goes to another GPU",
                 fleet.device(d), hooks.what, exception_text(e), why);
    return SpreadFault::device;
  };
  so.done = [&](size_t i, const SpreadItem& how) {
    const bool failed = how.state == SpreadItem::State::failed;
    if (failed && !is_run_failure(how.error)) return;  // rethrown below
    const int dev = fleet.device(static_cast<size_t>(how.device));
    const ScopedLogTag tag(devices > 1 ? fmt::format("GPU {}", dev) : std::string());
    if (!failed && hooks.recorded_s) clocks[how.device] += hooks.recorded_s(i);
    if (hooks.ended) hooks.ended(i, failed ? exception_text(how.error) : std::string(), dev);
  };
  out.report = spread_items(
      n, devices,
      [&](size_t i, size_t d) {
        const ScopedLogTag tag(devices > 1 ? fmt::format("GPU {}", fleet.device(d))
                                           : std::string());
        hooks.run(i, d);
      },
      so);
  for (const auto& how : out.report->items) {
    if (how.state == SpreadItem::State::failed && !is_run_failure(how.error))
      std::rethrow_exception(how.error);
  }
  return out;
}

TuneReport tune_on(const TuneOptions& t, eval::Fleet& fleet, std::optional<size_t> device,
                   SharedStore& shared, const std::function<void(const TuneProgress&)>& progress) {
  const auto lanes = fleet.lanes(t.problem, device, t.compile_threads);
  SharedStore::View into(shared);
  return run_tune(t, lanes->devices(), into, progress);
}

nlohmann::json suite_devices_json(const SuiteRun& run, const eval::Fleet& fleet) {
  nlohmann::json out = nlohmann::json::array();
  if (!run.report) return out;
  for (size_t d = 0; d < fleet.size(); ++d) {
    const GpuFingerprint& fp = fleet.fingerprint(d);
    out.push_back({{"device", fleet.device(d)},
                   {"name", fp.name},
                   {"uuid", fp.uuid},
                   {"shapes", run.report->taken[d]},
                   {"lost", run.report->lost[d]}});
  }
  return out;
}

}  // namespace sgt::tune
