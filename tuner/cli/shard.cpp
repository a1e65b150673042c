// --shard: the option text, the environment, the deal and its log line (see shard.hpp).
#include "shard.hpp"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "progress.hpp"

namespace sgt::cli {

void add_shard_option(CLI::App& sub, std::string& shard, const std::string& items,
                      const std::string& note) {
  sub.add_option(
      "--shard", shard,
      fmt::format("I/N: do only shard I (0-based) of N. {} are dealt by estimated cost, largest "
                  "first to the least-loaded shard, the same way on every shard, so N processes "
                  "or machines split them without talking to each other. auto: I and N from the "
                  "environment: {}. auto/N: the index from the environment, N shards. {}",
                  items, kShardEnvHelp, note));
}

std::optional<Shard> resolve_shard(const std::string& text) {
  if (text.empty()) return std::nullopt;
  return parse_shard(text, process_env());
}

ShardShare share_of(const Shard& shard, const std::vector<double>& costs) {
  ShardShare s;
  s.shard = shard;
  const auto deal = deal_by_cost(costs, shard.count);
  s.mine = items_of_shard(deal, shard.index);
  s.total = costs.size();
  for (double c : costs) s.total_cost += c;
  for (size_t i : s.mine) s.mine_cost += costs[i];
  s.imbalance = imbalance(costs, deal, shard.count);
  return s;
}

std::vector<double> tune_costs(const std::vector<PlannedShape>& plan, double budget_s,
                               size_t max_evals) {
  const TuneCostModel model;
  std::vector<double> out;
  out.reserve(plan.size());
  for (const auto& p : plan) {
    out.push_back(estimate_tune_s(p.enumeration.survivors.size(), p.problem.flops(), model,
                                  budget_s, max_evals));
  }
  return out;
}

void log_share(const ShardShare& s, const std::string& items, const std::string& unit) {
  if (unit == "s") {
    spdlog::info(
        "shard {}/{} ({}): {} of {} {}, estimated {} of {} in all (largest shard {:.2f}x the "
        "mean; {})",
        s.shard.index, s.shard.count, s.shard.source, s.mine.size(), s.total, items,
        duration(s.mine_cost), duration(s.total_cost), s.imbalance, TuneCostModel{}.basis);
  } else {
    spdlog::info("shard {}/{} ({}): {} of {} {} (equal cost each)", s.shard.index, s.shard.count,
                 s.shard.source, s.mine.size(), s.total, items);
  }
  if (s.mine.empty()) {
    spdlog::warn("shard {}/{} has none of the {} {}: nothing to do", s.shard.index, s.shard.count,
                 s.total, items);
  }
}

nlohmann::json share_json(const ShardShare& s) {
  return {{"index", s.shard.index},     {"count", s.shard.count},  {"source", s.shard.source},
          {"items", s.mine.size()},     {"of", s.total},           {"cost", s.mine_cost},
          {"total_cost", s.total_cost}, {"imbalance", s.imbalance}};
}

}  // namespace sgt::cli
