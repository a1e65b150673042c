// Shard specs from the command line or a scheduler's environment, and the cost-balanced deal.
#include "shard_deal.hpp"

#include <algorithm>
#include <climits>
#include <cmath>
#include <cstdlib>
#include <numeric>
#include <stdexcept>

#include <fmt/format.h>

#include "error.hpp"

namespace sgt {

namespace {

// A non-negative decimal integer that fits an unsigned, else nullopt (no sign, no spaces).
std::optional<unsigned> parse_count(const std::string& s) {
  if (s.empty() || s.size() > 10) return std::nullopt;
  unsigned long long v = 0;
  for (char c : s) {
    if (c < '0' || c > '9') return std::nullopt;
    v = v * 10 + static_cast<unsigned>(c - '0');
  }
  if (v > UINT_MAX) return std::nullopt;
  return static_cast<unsigned>(v);
}

// An environment variable that must be a count when it is set.
std::optional<unsigned> env_count(const EnvLookup& env, const char* name) {
  const auto v = env(name);
  if (!v) return std::nullopt;
  const auto n = parse_count(*v);
  if (!n) {
    throw InputError(fmt::format("--shard auto: {}='{}' is not a non-negative integer", name, *v));
  }
  return n;
}

// What one environment says; count is empty when it gives none.
struct Found {
  unsigned index = 0;
  std::optional<unsigned> count;
  std::string source;
};

std::optional<Found> from_slurm(const EnvLookup& env) {
  const auto id = env_count(env, "SLURM_ARRAY_TASK_ID");
  if (!id) return std::nullopt;
  const auto count = env_count(env, "SLURM_ARRAY_TASK_COUNT");
  const auto min = env_count(env, "SLURM_ARRAY_TASK_MIN");
  if (!count || !min) {
    throw InputError(fmt::format(
        "--shard auto: SLURM_ARRAY_TASK_ID={} is set but SLURM_ARRAY_TASK_{} is not (Slurm sets "
        "both for every array task; pass --shard I/N to say it yourself)",
        *id, count ? "MIN" : "COUNT"));
  }
  const unsigned step = env_count(env, "SLURM_ARRAY_TASK_STEP").value_or(1);
  const auto max = env_count(env, "SLURM_ARRAY_TASK_MAX");
  if (step == 0) throw InputError("--shard auto: SLURM_ARRAY_TASK_STEP=0");
  if (*id < *min || (*id - *min) % step != 0) {
    throw InputError(
        fmt::format("--shard auto: SLURM_ARRAY_TASK_ID={} is not in the array {}-{}:{}", *id, *min,
                    max ? std::to_string(*max) : std::string("?"), step));
  }
  const std::string range = fmt::format("{}-{}{}", *min, max ? std::to_string(*max) : "?",
                                        step == 1 ? std::string() : fmt::format(":{}", step));
  if (max && (*max < *min || (*max - *min) / step + 1 != *count)) {
    throw InputError(fmt::format(
        "--shard auto: the Slurm array {} has {} tasks, not a range of {} (an index list such as "
        "--array=1,3,8 gives its tasks no positions): submit a range, --array=0-{}, or pass "
        "--shard I/N",
        range, *count, max && *max >= *min ? (*max - *min) / step + 1 : 0, *count - 1));
  }
  return Found{(*id - *min) / step, *count,
               fmt::format("SLURM_ARRAY_TASK_ID={} of array {} ({} tasks)", *id, range, *count)};
}

std::optional<Found> from_index_var(const EnvLookup& env, const char* name) {
  const auto index = env_count(env, name);
  if (!index) return std::nullopt;
  return Found{*index, std::nullopt, fmt::format("{}={}", name, *index)};
}

}  // namespace

EnvLookup process_env() {
  return [](const char* name) -> std::optional<std::string> {
    const char* v = std::getenv(name);
    if (!v) return std::nullopt;
    return std::string(v);
  };
}

Shard parse_shard(const std::string& text, const EnvLookup& env) {
  const auto bad = [&](const std::string& why) {
    return InputError(fmt::format(
        "bad --shard '{}': {} (expected I/N with 0 <= I < N, auto, or auto/N)", text, why));
  };
  const auto slash = text.find('/');
  const std::string head = text.substr(0, slash);
  std::optional<unsigned> n;
  if (slash != std::string::npos) {
    n = parse_count(text.substr(slash + 1));
    if (!n) throw bad("N is not a count");
    if (*n == 0) throw bad("N must be at least 1");
  }
  if (head != "auto") {
    const auto i = parse_count(head);
    if (!i || !n) throw bad(slash == std::string::npos ? "no /N" : "I is not an index");
    if (*i >= *n) throw bad(fmt::format("shard {} does not exist among {}", *i, *n));
    return {*i, *n, fmt::format("--shard {}/{}", *i, *n)};
  }

  // auto: every environment that names a shard must name the same one.
  std::vector<Found> found;
  if (auto f = from_slurm(env)) found.push_back(*f);
  if (auto f = from_index_var(env, "JOB_COMPLETION_INDEX")) found.push_back(*f);
  if (auto f = from_index_var(env, "SGT_SHARD_INDEX")) found.push_back(*f);
  if (found.empty()) {
    throw InputError(fmt::format(
        "--shard {}: no shard in the environment; it reads {}. Outside such a job, pass "
        "--shard I/N",
        text, kShardEnvHelp));
  }
  const auto env_n = env_count(env, "SGT_SHARD_COUNT");
  if (env_n && *env_n == 0) throw InputError("--shard auto: SGT_SHARD_COUNT=0");
  // Every count given: the environments' own, SGT_SHARD_COUNT and /N.
  std::vector<std::pair<unsigned, std::string>> counts;
  for (const auto& f : found) {
    if (f.count) counts.emplace_back(*f.count, f.source);
  }
  if (env_n) counts.emplace_back(*env_n, fmt::format("SGT_SHARD_COUNT={}", *env_n));
  if (n) counts.emplace_back(*n, fmt::format("--shard {}", text));
  if (counts.empty()) {
    throw InputError(
        fmt::format("--shard auto: {} gives the index but not the count: set SGT_SHARD_COUNT (in a "
                    "Kubernetes Indexed Job, to the Job's completions) or pass --shard auto/N",
                    found.front().source));
  }
  for (const auto& f : found) {
    if (f.index != found.front().index) {
      throw InputError(fmt::format("--shard auto: the environment names two shards: {} and {}",
                                   found.front().source, f.source));
    }
  }
  for (const auto& [c, src] : counts) {
    if (c != counts.front().first) {
      throw InputError(fmt::format("--shard auto: two shard counts: {} from {}, {} from {}",
                                   counts.front().first, counts.front().second, c, src));
    }
  }
  Shard s{found.front().index, counts.front().first, found.front().source};
  if (!found.front().count) s.source += ", count from " + counts.front().second;
  if (s.index >= s.count) {
    throw InputError(fmt::format("--shard auto: shard {} does not exist among {} ({})", s.index,
                                 s.count, s.source));
  }
  return s;
}

std::vector<unsigned> deal_by_cost(const std::vector<double>& costs, unsigned count) {
  if (count == 0) throw std::invalid_argument("deal_by_cost: no shards");
  for (double c : costs) {
    if (!std::isfinite(c) || c < 0) throw std::invalid_argument("deal_by_cost: bad cost");
  }
  std::vector<size_t> order(costs.size());
  std::iota(order.begin(), order.end(), size_t{0});
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return costs[a] > costs[b]; });
  std::vector<double> load(count, 0.0);
  std::vector<size_t> items(count, 0);
  std::vector<unsigned> deal(costs.size(), 0);
  for (size_t i : order) {
    // The least-loaded shard; among equals the one with fewer items (so zero-cost items still
    // spread), then the lowest index.
    unsigned best = 0;
    for (unsigned s = 1; s < count; ++s) {
      if (load[s] < load[best] || (load[s] == load[best] && items[s] < items[best])) best = s;
    }
    deal[i] = best;
    load[best] += costs[i];
    ++items[best];
  }
  return deal;
}

std::vector<size_t> items_of_shard(const std::vector<unsigned>& deal, unsigned index) {
  std::vector<size_t> out;
  for (size_t i = 0; i < deal.size(); ++i) {
    if (deal[i] == index) out.push_back(i);
  }
  return out;
}

double imbalance(const std::vector<double>& costs, const std::vector<unsigned>& deal,
                 unsigned count) {
  std::vector<double> load(count, 0.0);
  double total = 0;
  for (size_t i = 0; i < costs.size(); ++i) load[deal[i]] += costs[i], total += costs[i];
  if (total <= 0) return 1;
  return *std::max_element(load.begin(), load.end()) / (total / count);
}

TuneCostModel fit_tune_cost(const std::vector<RecordedCost>& recordings) {
  TuneCostModel m;
  if (recordings.empty()) return m;
  double sx = 0, sy = 0;
  for (const auto& r : recordings) sx += r.flops, sy += r.mean_measure_s;
  const double n = static_cast<double>(recordings.size());
  const double mx = sx / n, my = sy / n;
  double sxx = 0, sxy = 0;
  for (const auto& r : recordings) {
    sxx += (r.flops - mx) * (r.flops - mx);
    sxy += (r.flops - mx) * (r.mean_measure_s - my);
  }
  double slope = sxx > 0 ? sxy / sxx : 0;
  double intercept = my - slope * mx;
  if (slope < 0) slope = 0, intercept = my;
  if (intercept < 0) {
    // Through the origin instead: the best slope with no fixed cost.
    double sxx0 = 0, sxy0 = 0;
    for (const auto& r : recordings) sxx0 += r.flops * r.flops, sxy0 += r.flops * r.mean_measure_s;
    intercept = 0;
    slope = sxx0 > 0 ? sxy0 / sxx0 : 0;
  }
  m.per_candidate_s = intercept;
  m.per_flop_s = slope;
  m.basis = fmt::format("fitted to {} recorded problem{}", recordings.size(),
                        recordings.size() == 1 ? "" : "s");
  return m;
}

double estimate_tune_s(size_t candidates, double flops, const TuneCostModel& model, double budget_s,
                       size_t max_evals) {
  const size_t measured = max_evals > 0 ? std::min(candidates, max_evals) : candidates;
  const double s =
      static_cast<double>(measured) * (model.per_candidate_s + model.per_flop_s * flops);
  return budget_s > 0 ? std::min(s, budget_s) : s;
}

}  // namespace sgt
