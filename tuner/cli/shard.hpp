// --shard for `tune --shapes`, `bench` and `compile`: one option, one parser (core/shard_deal.hpp)
// and one cost-balanced deal, so the three commands split their work alike.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "shard_deal.hpp"
#include "tune_store.hpp"

namespace sgt::cli {

// Adds --shard to `sub`; `items` names what is dealt ("the shapes of --shapes"), `note` ends the
// help (what each shard should be given of its own).
void add_shard_option(CLI::App& sub, std::string& shard, const std::string& items,
                      const std::string& note);

// The shard that --shard names (parse_shard on the process's environment); nullopt without one.
std::optional<Shard> resolve_shard(const std::string& text);

// One shard's share of the items: their positions in order, and what the deal looks like.
struct ShardShare {
  Shard shard;
  std::vector<size_t> mine;  // positions of this shard's items, in the suite's order
  size_t total = 0;          // items of every shard
  double mine_cost = 0, total_cost = 0;
  double imbalance = 1;  // the largest shard's cost over the mean's
};

ShardShare share_of(const Shard& shard, const std::vector<double>& costs);

// Estimated seconds of tuning each planned shape (estimate_tune_s with the fixed model).
std::vector<double> tune_costs(const std::vector<PlannedShape>& plan, double budget_s,
                               size_t max_evals);

// "shard 1/4 (SLURM_ARRAY_TASK_ID=1 of array 0-3 (4 tasks)): 3 of 12 shapes, ..." to the log;
// `unit` "s" when the costs are estimated seconds, else the items cost one each.
void log_share(const ShardShare& s, const std::string& items, const std::string& unit);

// {"index", "count", "source", "items", "of", "cost", "total_cost", "imbalance"} for --json.
nlohmann::json share_json(const ShardShare& s);

// The entries at the share's positions.
template <typename T>
std::vector<T> pick(const std::vector<T>& all, const ShardShare& s) {
  std::vector<T> out;
  out.reserve(s.mine.size());
  for (size_t i : s.mine) out.push_back(all[i]);
  return out;
}

}  // namespace sgt::cli
