// JSON forms and names of trials, fingerprints and problems.
#include "trial.hpp"

#include <chrono>
#include <algorithm>
#include <cmath>
#include <limits>

#include <fmt/chrono.h>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "error.hpp"

namespace sgt {

namespace {
constexpr std::pair<TrialStatus, std::string_view> kStatusNames[] = {
    {TrialStatus::ok, "ok"},
    {TrialStatus::compile_failed, "compile_failed"},
    {TrialStatus::spills, "spills"},
    {TrialStatus::resources, "resources"},
    {TrialStatus::incorrect, "incorrect"},
    {TrialStatus::crashed, "crashed"},
    {TrialStatus::timeout, "timeout"},
    {TrialStatus::inaccurate, "inaccurate"},
};
constexpr std::pair<TrialPhase, std::string_view> kPhaseNames[] = {
    {TrialPhase::screen, "screen"},
    {TrialPhase::look, "look"},
    {TrialPhase::final, "final"},
};
constexpr std::pair<TrialSource, std::string_view> kSourceNames[] = {
    {TrialSource::measured, "measured"},
    {TrialSource::replayed, "replayed"},
};

template <typename E, size_t N>
std::string_view name_of(const std::pair<E, std::string_view> (&names)[N], E v) {
  for (const auto& [e, n] : names) {
    if (e == v) return n;
  }
  return "unknown";
}

template <typename E, size_t N>
std::optional<E> value_of(const std::pair<E, std::string_view> (&names)[N], std::string_view s) {
  for (const auto& [e, n] : names) {
    if (n == s) return e;
  }
  return std::nullopt;
}

// How releases before the phase and source were fields wrote them into the strategy.
constexpr std::string_view kLegacyReplayPrefix = "replay/";
constexpr std::string_view kLegacyFinalSuffix = "/final";
constexpr std::string_view kLegacyLookSuffix = "/look";
}  // namespace

std::string_view to_string(TrialStatus s) {
  for (const auto& [v, n] : kStatusNames) {
    if (v == s) return n;
  }
  return "unknown";
}

std::optional<TrialStatus> status_from_string(std::string_view s) {
  for (const auto& [v, n] : kStatusNames) {
    if (n == s) return v;
  }
  return std::nullopt;
}

std::string_view to_string(TrialPhase p) {
  return name_of(kPhaseNames, p);
}

std::optional<TrialPhase> phase_from_string(std::string_view s) {
  return value_of(kPhaseNames, s);
}

std::string_view to_string(TrialSource s) {
  return name_of(kSourceNames, s);
}

std::optional<TrialSource> source_from_string(std::string_view s) {
  return value_of(kSourceNames, s);
}

void split_legacy_strategy(Trial& t) {
  std::string_view s = t.strategy;
  t.source = TrialSource::measured;
  if (s.starts_with(kLegacyReplayPrefix)) {
    t.source = TrialSource::replayed;
    s.remove_prefix(kLegacyReplayPrefix.size());
  }
  t.phase = TrialPhase::screen;
  if (s.ends_with(kLegacyFinalSuffix)) {
    t.phase = TrialPhase::final;
    s.remove_suffix(kLegacyFinalSuffix.size());
  } else if (s.ends_with(kLegacyLookSuffix)) {
    t.phase = TrialPhase::look;
    s.remove_suffix(kLegacyLookSuffix.size());
  }
  t.strategy = std::string(s);
}

std::string GpuFingerprint::arch() const {
  return fmt::format("sm_{}{}", cc_major, cc_minor);
}

std::string model_difference(const GpuFingerprint& a, const GpuFingerprint& b) {
  if (a.name != b.name) return fmt::format("model '{}' against '{}'", a.name, b.name);
  if (a.cc_major != b.cc_major || a.cc_minor != b.cc_minor)
    return fmt::format("compute capability {} against {}", a.arch(), b.arch());
  if (a.sm_count != b.sm_count) return fmt::format("{} SMs against {}", a.sm_count, b.sm_count);
  const double hi = std::max(a.sm_clock_khz, b.sm_clock_khz);
  if (hi > 0 && std::abs(a.sm_clock_khz - b.sm_clock_khz) > 0.02 * hi)
    return fmt::format("SM clock {} MHz against {} MHz", a.sm_clock_khz / 1000,
                       b.sm_clock_khz / 1000);
  if (a.driver_version / 1000 != b.driver_version / 1000)
    return fmt::format("driver {} against {}", a.driver_version / 1000, b.driver_version / 1000);
  return {};
}

std::string utc_timestamp() {
  const auto now = std::chrono::floor<std::chrono::seconds>(std::chrono::system_clock::now());
  return fmt::format("{:%Y-%m-%dT%H:%M:%SZ}", now);
}

void to_json(nlohmann::json& j, const GpuFingerprint& g) {
  j = {{"name", g.name},
       {"uuid", g.uuid},
       {"cc_major", g.cc_major},
       {"cc_minor", g.cc_minor},
       {"sm_count", g.sm_count},
       {"memory_bytes", g.memory_bytes},
       {"l2_bytes", g.l2_bytes},
       {"smem_optin_bytes", g.smem_optin_bytes},
       {"sm_clock_khz", g.sm_clock_khz},
       {"mem_clock_khz", g.mem_clock_khz},
       {"driver_version", g.driver_version},
       {"runtime_version", g.runtime_version},
       {"nvrtc_major", g.nvrtc_major},
       {"nvrtc_minor", g.nvrtc_minor}};
}

void from_json(const nlohmann::json& j, GpuFingerprint& g) {
  j.at("name").get_to(g.name);
  j.at("uuid").get_to(g.uuid);
  j.at("cc_major").get_to(g.cc_major);
  j.at("cc_minor").get_to(g.cc_minor);
  j.at("sm_count").get_to(g.sm_count);
  j.at("memory_bytes").get_to(g.memory_bytes);
  j.at("l2_bytes").get_to(g.l2_bytes);
  j.at("smem_optin_bytes").get_to(g.smem_optin_bytes);
  j.at("sm_clock_khz").get_to(g.sm_clock_khz);
  j.at("mem_clock_khz").get_to(g.mem_clock_khz);
  j.at("driver_version").get_to(g.driver_version);
  j.at("runtime_version").get_to(g.runtime_version);
  j.at("nvrtc_major").get_to(g.nvrtc_major);
  j.at("nvrtc_minor").get_to(g.nvrtc_minor);
}

void to_json(nlohmann::json& j, const TimeStats& t) {
  j = {{"median_ms", t.median_ms},
       {"min_ms", t.min_ms},
       {"max_ms", t.max_ms},
       {"spread", t.spread},
       {"repetitions", t.repetitions}};
}

void from_json(const nlohmann::json& j, TimeStats& t) {
  j.at("median_ms").get_to(t.median_ms);
  j.at("min_ms").get_to(t.min_ms);
  j.at("max_ms").get_to(t.max_ms);
  j.at("spread").get_to(t.spread);
  j.at("repetitions").get_to(t.repetitions);
}

void to_json(nlohmann::json& j, const Problem& p) {
  j = {{"M", p.M}, {"N", p.N}, {"K", p.K}, {"layout", p.layout}, {"dtype", p.dtype}};
}

void from_json(const nlohmann::json& j, Problem& p) {
  j.at("M").get_to(p.M);
  j.at("N").get_to(p.N);
  j.at("K").get_to(p.K);
  j.at("layout").get_to(p.layout);
  j.at("dtype").get_to(p.dtype);
}

namespace {

// JSON has no NaN: nlohmann writes it as null, which reads back as NaN here.
double real_or_nan(const nlohmann::json& j, const char* key) {
  const auto& v = j.at(key);
  if (v.is_null()) return std::numeric_limits<double>::quiet_NaN();
  return v.get<double>();
}

}  // namespace

void to_json(nlohmann::json& j, const EdgeCheck& e) {
  j = {{"label", e.label},   {"problem", e.problem}, {"lda", e.lda},      {"ldb", e.ldb},
       {"ldc", e.ldc},       {"offset", e.offset},   {"alpha", e.alpha},  {"beta", e.beta},
       {"passed", e.passed}, {"error", e.error},     {"reason", e.reason}};
}

void from_json(const nlohmann::json& j, EdgeCheck& e) {
  j.at("label").get_to(e.label);
  j.at("problem").get_to(e.problem);
  j.at("lda").get_to(e.lda);
  j.at("ldb").get_to(e.ldb);
  j.at("ldc").get_to(e.ldc);
  j.at("offset").get_to(e.offset);
  e.alpha = static_cast<float>(real_or_nan(j, "alpha"));
  e.beta = static_cast<float>(real_or_nan(j, "beta"));
  j.at("passed").get_to(e.passed);
  e.error = real_or_nan(j, "error");
  j.at("reason").get_to(e.reason);
}

int edge_checks_passed(const std::vector<EdgeCheck>& checks) {
  int n = 0;
  for (const auto& c : checks) n += c.passed ? 1 : 0;
  return n;
}

std::string edge_check_summary(const std::vector<EdgeCheck>& checks) {
  if (checks.empty()) return "not verified on edge cases";
  const int total = static_cast<int>(checks.size());
  const int passed = edge_checks_passed(checks);
  std::string out = fmt::format("verified on {} edge case{}: ", total, total == 1 ? "" : "s");
  if (passed == total) return out + (total == 1 ? "passed" : "all passed");
  out += fmt::format("{} failed:", total - passed);
  bool first = true;
  for (const auto& c : checks) {
    if (c.passed) continue;
    out +=
        fmt::format("{} {} {} {}", first ? "" : ";", c.label, c.problem.shape(), c.problem.layout);
    first = false;
    if (!c.reason.empty()) {
      out += fmt::format(" ({})", c.reason);
    } else if (c.error >= 0 || std::isnan(c.error)) {
      out += fmt::format(" (error {:.3g})", c.error);
    }
  }
  return out;
}

nlohmann::json edge_check_tally_json(const std::vector<EdgeCheck>& checks) {
  nlohmann::json failed = nlohmann::json::array();
  for (const auto& c : checks) {
    if (!c.passed) failed.push_back(c.label);
  }
  const int passed = edge_checks_passed(checks);
  return {{"total", checks.size()},
          {"passed", passed},
          {"all_passed", !checks.empty() && passed == static_cast<int>(checks.size())},
          {"failed", std::move(failed)}};
}

void to_json(nlohmann::json& j, const Trial& t) {
  j = {{"config", t.config},
       {"config_name", t.config_name},
       {"problem", t.problem},
       {"status", to_string(t.status)},
       {"reason", t.reason},
       {"time", t.time},
       {"cut_early", t.cut_early},
       {"gflops", t.gflops},
       {"verify_error", t.verify_error},
       {"registers", t.registers},
       {"spill_bytes", t.spill_bytes},
       {"stack_bytes", t.stack_bytes},
       {"shared_bytes", t.shared_bytes},
       {"cublas_median_ms", t.cublas_median_ms},
       {"compile_s", t.compile_s},
       {"measure_s", t.measure_s},
       {"kernel_template", t.kernel_template},
       {"kernel_hash", t.kernel_hash},
       {"tuner_version", t.tuner_version},
       {"strategy", t.strategy},
       {"phase", to_string(t.phase)},
       {"source", to_string(t.source)},
       {"seed", t.seed},
       {"timestamp", t.timestamp},
       {"edge_checks", t.edge_checks}};
  // Only where measured: a trial of a strict kernel has none, as trials recorded before had.
  if (t.error_ratio) j["error_ratio"] = *t.error_ratio;
  if (t.stress_ratio) {
    j["stress_ratio"] = *t.stress_ratio;
    j["stress_case"] = t.stress_case;
  }
}

void from_json(const nlohmann::json& j, Trial& t) {
  j.at("config").get_to(t.config);
  j.at("config_name").get_to(t.config_name);
  j.at("problem").get_to(t.problem);
  const auto status = j.at("status").get<std::string>();
  auto s = status_from_string(status);
  if (!s) throw InputError("unknown trial status '" + status + "'");
  t.status = *s;
  j.at("reason").get_to(t.reason);
  j.at("time").get_to(t.time);
  j.at("cut_early").get_to(t.cut_early);
  j.at("gflops").get_to(t.gflops);
  j.at("verify_error").get_to(t.verify_error);
  j.at("registers").get_to(t.registers);
  j.at("spill_bytes").get_to(t.spill_bytes);
  j.at("stack_bytes").get_to(t.stack_bytes);
  j.at("shared_bytes").get_to(t.shared_bytes);
  j.at("cublas_median_ms").get_to(t.cublas_median_ms);
  // Optional: written since the trial costs were recorded.
  t.compile_s = j.value("compile_s", 0.0);
  t.measure_s = j.value("measure_s", 0.0);
  j.at("kernel_template").get_to(t.kernel_template);
  j.at("kernel_hash").get_to(t.kernel_hash);
  j.at("tuner_version").get_to(t.tuner_version);
  j.at("strategy").get_to(t.strategy);
  // Optional: a trial written before they were keys of their own (export format 1, dataset
  // versions 1 and 2, older --results lines) has both in its strategy, as that release wrote them.
  const auto phase = j.find("phase");
  const auto source = j.find("source");
  if (phase == j.end() && source == j.end()) {
    split_legacy_strategy(t);
  } else {
    if (phase == j.end() || source == j.end())
      throw InputError("a trial with one of 'phase' and 'source' must have both");
    const auto p = phase_from_string(phase->get<std::string>());
    if (!p) throw InputError("unknown trial phase '" + phase->get<std::string>() + "'");
    const auto o = source_from_string(source->get<std::string>());
    if (!o) throw InputError("unknown trial source '" + source->get<std::string>() + "'");
    t.phase = *p;
    t.source = *o;
  }
  j.at("seed").get_to(t.seed);
  j.at("timestamp").get_to(t.timestamp);
  // Optional: written where the accuracy was measured (a null reads as not measured).
  const auto ratio = [&](const char* key) -> std::optional<double> {
    const auto it = j.find(key);
    if (it == j.end() || it->is_null()) return std::nullopt;
    if (!it->is_number()) throw InputError(fmt::format("trial field '{}' must be a number", key));
    return it->get<double>();
  };
  t.error_ratio = ratio("error_ratio");
  t.stress_ratio = ratio("stress_ratio");
  t.stress_case = t.stress_ratio ? j.value("stress_case", std::string()) : std::string();
  // Optional: JSON-lines files and exports written before edge checks existed have no such key.
  t.edge_checks.clear();
  if (const auto it = j.find("edge_checks"); it != j.end() && !it->is_null()) {
    if (!it->is_array()) throw InputError("trial field 'edge_checks' must be a list");
    it->get_to(t.edge_checks);
  }
}

}  // namespace sgt
