// Simulated annealing over the candidate set: a walk from config to config that differs in one
// knob, accepting a slower neighbour with a probability that falls as the search cools, and
// restarting from a random candidate where every neighbour was tried. No model and no history:
// the local-search baseline of the tuning literature (dual annealing in Kernel Tuner).
// The walk starts from the best of a spread-out first batch: until the first result is told, each
// pick is a candidate farthest (in knobs that differ) from every pick before it. The session asks
// a window ahead (2 * threads + GPUs), so the first batch is chosen blind; spread out, it finds a
// good basin sooner than a random one (strategy-bench over the H200 datasets, 30 seeds: 0.952 of
// the optimum at 1 % of the candidates against 0.931,
// docs/experiments/2026-12-04-strategy-bench-anneal.md).
#include <algorithm>
#include <cmath>
#include <limits>
#include <random>

#include "strategy.hpp"

namespace sgt {

namespace {

// Lower is better: log time; a failed candidate is worse than any.
double cost(const Trial& t) {
  if (t.status != TrialStatus::ok || !(t.time.median_ms > 0)) return INFINITY;
  return std::log(t.time.median_ms);
}

class Annealing final : public SearchStrategy {
 public:
  std::string_view name() const override { return "anneal"; }

  void start(const StrategyContext& ctx) override {
    rng_.seed(ctx.seed);
    next_to_ = one_knob_neighbours(ctx.candidates);
    asked_.assign(ctx.candidates.size(), false);
    candidates_ = &ctx.candidates;
    distance_.assign(ctx.candidates.size(), std::numeric_limits<int>::max());
    for (size_t i = 0; i < ctx.known.size(); ++i) {
      if (!ctx.known[i]) continue;
      asked_[i] = true;
      const double c = cost(*ctx.known[i]);
      if (c < current_cost_) current_ = i, current_cost_ = c;
    }
  }

  std::vector<size_t> ask(size_t n) override {
    std::vector<size_t> out;
    if (current_ == kNone && told_ == 0) {
      while (out.size() < n) {
        const size_t j = farthest();
        if (j == kNone) break;
        asked_[j] = true, out.push_back(j);
      }
    }
    if (current_ != kNone) {
      auto around = next_to_[current_];
      std::shuffle(around.begin(), around.end(), rng_);
      for (size_t j : around) {
        if (out.size() == n) break;
        if (!asked_[j]) asked_[j] = true, out.push_back(j);
      }
    }
    // Nothing left around here (or no start yet): restart at random candidates.
    std::vector<size_t> open;
    if (out.size() < n) {
      for (size_t i = 0; i < asked_.size(); ++i) {
        if (!asked_[i]) open.push_back(i);
      }
      std::shuffle(open.begin(), open.end(), rng_);
    }
    for (size_t i : open) {
      if (out.size() == n) break;
      asked_[i] = true;
      out.push_back(i);
    }
    return out;
  }

  // The unasked candidate farthest from every candidate picked so far by this (the first pick:
  // a random one), ties drawn at random; none left: kNone.
  size_t farthest() {
    std::vector<size_t> ties;
    int far = -1;
    for (size_t i = 0; i < asked_.size(); ++i) {
      if (asked_[i]) continue;
      if (last_ != kNone)
        distance_[i] =
            std::min(distance_[i], knobs_apart((*candidates_)[i], (*candidates_)[last_]));
      if (distance_[i] > far) far = distance_[i], ties.clear();
      if (distance_[i] == far) ties.push_back(i);
    }
    if (ties.empty()) return kNone;
    last_ = ties[std::uniform_int_distribution<size_t>(0, ties.size() - 1)(rng_)];
    return last_;
  }

  static int knobs_apart(const WarpTileConfig& a, const WarpTileConfig& b) {
    int d = a.family != b.family;
    for (const auto& f : kConfigFields) d += a.*f.member != b.*f.member;
    return d;
  }

  void tell(size_t index, const Trial& t) override {
    const double c = cost(t);
    ++told_;
    const double temperature = 0.1 * std::pow(0.95, static_cast<double>(told_) / 16.0);
    std::uniform_real_distribution<double> u(0, 1);
    if (current_ == kNone || c < current_cost_ ||
        (std::isfinite(c) && u(rng_) < std::exp(-(c - current_cost_) / temperature))) {
      current_ = index;
      current_cost_ = c;
    }
  }

 private:
  static constexpr size_t kNone = static_cast<size_t>(-1);
  std::mt19937_64 rng_;
  std::vector<std::vector<size_t>> next_to_;
  std::vector<bool> asked_;
  size_t current_ = kNone;
  double current_cost_ = INFINITY;
  size_t told_ = 0;
  // The spread-out first batch: the candidates, each one's distance to the nearest pick so far,
  // and the last pick.
  const std::vector<WarpTileConfig>* candidates_ = nullptr;
  std::vector<int> distance_;
  size_t last_ = kNone;
};

}  // namespace

std::unique_ptr<SearchStrategy> make_anneal_strategy() {
  return std::make_unique<Annealing>();
}

}  // namespace sgt
