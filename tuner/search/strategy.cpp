// The registry of search strategies.
#include "strategy.hpp"

#include <algorithm>
#include <map>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "error.hpp"
#include "family.hpp"

namespace sgt {

std::unique_ptr<SearchStrategy> make_exhaustive_strategy();
std::unique_ptr<SearchStrategy> make_random_strategy();
std::unique_ptr<SearchStrategy> make_model_strategy();
std::unique_ptr<SearchStrategy> make_anneal_strategy();

namespace {

struct Entry {
  StrategyTraits traits;
  std::unique_ptr<SearchStrategy> (*make)();
};

// name, patience, budget, learns from history.
constexpr Entry kStrategies[] = {
    {{"exhaustive", 0, 0, false}, make_exhaustive_strategy},
    {{"random", 0, kDefaultBudgetS, false}, make_random_strategy},
    {{"model", kDefaultPatience, kDefaultBudgetS, true}, make_model_strategy},
    {{"anneal", kDefaultPatience, kDefaultBudgetS, false}, make_anneal_strategy},
};

[[noreturn]] void unknown(std::string_view name) {
  throw InputError(
      fmt::format("unknown strategy '{}' (known: {})", name, fmt::join(strategy_names(), ", ")));
}

}  // namespace

void FixedOrderStrategy::start(const StrategyContext& ctx) {
  order_.clear();
  next_ = 0;
  for (size_t i = 0; i < ctx.candidates.size(); ++i) {
    if (!ctx.known[i]) order_.push_back(i);
  }
  arrange(order_, ctx.seed);
}

std::vector<size_t> FixedOrderStrategy::ask(size_t n) {
  std::vector<size_t> out;
  while (out.size() < n && next_ < order_.size()) out.push_back(order_[next_++]);
  return out;
}

std::vector<std::vector<size_t>> one_knob_neighbours(const std::vector<WarpTileConfig>& cs) {
  std::vector<std::vector<size_t>> out(cs.size());
  // Per field, and then the family (one more knob): the candidates that agree on every other
  // field and family are each other's neighbours.
  const auto& all = families();
  auto family_index = [&](const WarpTileConfig& c) {
    return static_cast<int>(std::find(all.begin(), all.end(), &family_of(c)) - all.begin());
  };
  for (size_t f = 0; f <= kConfigFields.size(); ++f) {
    std::map<std::vector<int>, std::vector<size_t>> by_rest;
    for (size_t i = 0; i < cs.size(); ++i) {
      std::vector<int> key;
      for (size_t g = 0; g < kConfigFields.size(); ++g) {
        if (g != f) key.push_back(cs[i].*kConfigFields[g].member);
      }
      if (f != kConfigFields.size()) key.push_back(family_index(cs[i]));
      by_rest[key].push_back(i);
    }
    for (const auto& [key, group] : by_rest) {
      for (size_t i : group) {
        for (size_t j : group) {
          if (i != j) out[i].push_back(j);
        }
      }
    }
  }
  return out;
}

std::vector<std::vector<size_t>> tile_move_neighbours(const std::vector<WarpTileConfig>& cs) {
  using F = int WarpTileConfig::*;
  static constexpr F kBlock[] = {&WarpTileConfig::BM, &WarpTileConfig::BN, &WarpTileConfig::BK};
  static constexpr F kWarp[] = {&WarpTileConfig::WM,     &WarpTileConfig::WN,
                                &WarpTileConfig::WNITER, &WarpTileConfig::TM,
                                &WarpTileConfig::TN,     &WarpTileConfig::NUM_THREADS};
  auto tiling = [](const auto& fields, F member) {
    return std::find(std::begin(fields), std::end(fields), member) != std::end(fields);
  };
  // Candidates grouped by family and every knob outside the tiling.
  std::map<std::pair<std::string, std::vector<int>>, std::vector<size_t>> groups;
  for (size_t i = 0; i < cs.size(); ++i) {
    std::vector<int> key;
    for (const auto& f : kConfigFields) {
      if (!tiling(kBlock, f.member) && !tiling(kWarp, f.member)) key.push_back(cs[i].*f.member);
    }
    groups[{cs[i].family, std::move(key)}].push_back(i);
  }
  std::vector<std::vector<size_t>> out(cs.size());
  for (const auto& [key, group] : groups) {
    for (size_t b = 0; b < std::size(kBlock); ++b) {
      const F moved = kBlock[b];
      std::vector<int> values;
      for (size_t i : group) values.push_back(cs[i].*moved);
      std::sort(values.begin(), values.end());
      values.erase(std::unique(values.begin(), values.end()), values.end());
      for (size_t i : group) {
        // The next value down and up, and half and twice this one where the space has a value
        // between (48 between 32 and 64 must not hide the 64).
        const int v = cs[i].*moved;
        const auto at = std::lower_bound(values.begin(), values.end(), v);
        std::vector<int> steps;
        if (at != values.begin()) steps.push_back(*(at - 1));
        if (at + 1 < values.end()) steps.push_back(*(at + 1));
        for (const int w : {v / 2, v * 2}) {
          if (v % 2 == 0 && std::binary_search(values.begin(), values.end(), w) &&
              std::find(steps.begin(), steps.end(), w) == steps.end())
            steps.push_back(w);
        }
        for (const int step : steps) {
          int fewest = kMaxTileRepair + 1;
          std::vector<size_t> nearest;
          for (size_t j : group) {
            if (cs[j].*moved != step) continue;
            bool same_block = true;
            for (const F other : kBlock) {
              if (other != moved && cs[j].*other != cs[i].*other) same_block = false;
            }
            if (!same_block) continue;
            int changes = 0;
            for (const F w : kWarp) changes += cs[j].*w != cs[i].*w;
            if (changes > kMaxTileRepair) continue;
            if (changes < fewest) fewest = changes, nearest.clear();
            if (changes == fewest) nearest.push_back(j);
          }
          out[i].insert(out[i].end(), nearest.begin(), nearest.end());
        }
      }
    }
  }
  return out;
}

std::unique_ptr<SearchStrategy> make_strategy(std::string_view name) {
  for (const auto& e : kStrategies) {
    if (e.traits.name == name) return e.make();
  }
  unknown(name);
}

const StrategyTraits& strategy_traits(std::string_view name) {
  for (const auto& e : kStrategies) {
    if (e.traits.name == name) return e.traits;
  }
  unknown(name);
}

std::vector<std::string> strategy_names() {
  std::vector<std::string> out;
  for (const auto& e : kStrategies) out.emplace_back(e.traits.name);
  return out;
}

}  // namespace sgt
