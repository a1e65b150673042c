// Shards (shard_deal.hpp): what --shard's texts and the schedulers' environments mean, and the
// deal: every item exactly once, the same on every call, and balanced by cost where round-robin is
// not.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <numeric>

#include "error.hpp"
#include "shard_deal.hpp"

namespace sgt {
namespace {

EnvLookup env_of(std::map<std::string, std::string> vars) {
  return [vars = std::move(vars)](const char* name) -> std::optional<std::string> {
    const auto it = vars.find(name);
    if (it == vars.end()) return std::nullopt;
    return it->second;
  };
}

const EnvLookup kNoEnv = env_of({});

// The message of the InputError that parse_shard throws, or "" when it throws none.
std::string error_of(const std::string& text, const EnvLookup& env) {
  try {
    (void)parse_shard(text, env);
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

std::map<std::string, std::string> slurm(unsigned id, unsigned min, unsigned max, unsigned step,
                                         unsigned count) {
  return {{"SLURM_ARRAY_TASK_ID", std::to_string(id)},
          {"SLURM_ARRAY_TASK_MIN", std::to_string(min)},
          {"SLURM_ARRAY_TASK_MAX", std::to_string(max)},
          {"SLURM_ARRAY_TASK_STEP", std::to_string(step)},
          {"SLURM_ARRAY_TASK_COUNT", std::to_string(count)},
          {"SLURM_ARRAY_JOB_ID", "77"}};
}

TEST(ShardSpec, IOverNIgnoresTheEnvironment) {
  const auto s = parse_shard("1/4", env_of(slurm(0, 0, 7, 1, 8)));
  EXPECT_EQ(s.index, 1u);
  EXPECT_EQ(s.count, 4u);
  EXPECT_EQ(s.source, "--shard 1/4");
  EXPECT_EQ(parse_shard("0/1", kNoEnv).count, 1u);
}

TEST(ShardSpec, MalformedAndOutOfRangeAreBadInput) {
  for (const char* bad : {"2/2", "5/4", "1", "a/b", "1/0", "0/2/3", "-1/2", "", "/2", "1/", " 1/2",
                          "1/2 ", "auto/0", "auto/x", "autox", "99999999999/2"}) {
    EXPECT_NE(error_of(bad, kNoEnv), "") << "'" << bad << "' was accepted";
  }
  EXPECT_NE(error_of("4/4", kNoEnv).find("shard 4 does not exist among 4"), std::string::npos);
}

TEST(ShardSpec, ASlurmArrayGivesThePositionNotTheTaskId) {
  // --array=3-7:2 has tasks 3, 5, 7: task 7 is shard 2 of 3.
  const auto s = parse_shard("auto", env_of(slurm(7, 3, 7, 2, 3)));
  EXPECT_EQ(s.index, 2u);
  EXPECT_EQ(s.count, 3u);
  EXPECT_NE(s.source.find("SLURM_ARRAY_TASK_ID=7 of array 3-7:2"), std::string::npos) << s.source;
  // --array=1-4: task 1 is shard 0 of 4.
  EXPECT_EQ(parse_shard("auto", env_of(slurm(1, 1, 4, 1, 4))).index, 0u);
  // auto/N agrees with the array, or is refused.
  EXPECT_EQ(parse_shard("auto/4", env_of(slurm(2, 1, 4, 1, 4))).index, 1u);
  EXPECT_NE(error_of("auto/5", env_of(slurm(2, 1, 4, 1, 4))).find("two shard counts"),
            std::string::npos);
  // No STEP (older Slurm): a step of 1.
  auto vars = slurm(5, 0, 7, 1, 8);
  vars.erase("SLURM_ARRAY_TASK_STEP");
  EXPECT_EQ(parse_shard("auto", env_of(vars)).index, 5u);
}

TEST(ShardSpec, ASlurmIndexListOrBrokenArrayIsRefused) {
  // --array=1,3,8: three tasks spread over 1..8; their positions are not in the environment.
  const auto list = error_of("auto", env_of(slurm(3, 1, 8, 1, 3)));
  EXPECT_NE(list.find("--array=1,3,8"), std::string::npos) << list;
  EXPECT_NE(list.find("--array=0-2"), std::string::npos) << list;
  // A task off the step, or below the minimum.
  EXPECT_NE(error_of("auto", env_of(slurm(4, 3, 7, 2, 3))), "");
  EXPECT_NE(error_of("auto", env_of(slurm(2, 3, 7, 2, 3))), "");
  // The count missing, or not a number.
  auto vars = slurm(1, 0, 3, 1, 4);
  vars.erase("SLURM_ARRAY_TASK_COUNT");
  EXPECT_NE(error_of("auto", env_of(vars)).find("SLURM_ARRAY_TASK_COUNT is not"),
            std::string::npos);
  vars = slurm(1, 0, 3, 1, 4);
  vars["SLURM_ARRAY_TASK_ID"] = "1a";
  EXPECT_NE(error_of("auto", env_of(vars)).find("SLURM_ARRAY_TASK_ID='1a'"), std::string::npos);
}

TEST(ShardSpec, KubernetesGivesTheIndexAndTheCountComesFromSgtShardCountOrN) {
  const auto k8s = env_of({{"JOB_COMPLETION_INDEX", "2"}});
  const auto no_count = error_of("auto", k8s);
  EXPECT_NE(no_count.find("JOB_COMPLETION_INDEX=2 gives the index but not the count"),
            std::string::npos)
      << no_count;
  const auto a = parse_shard("auto/4", k8s);
  EXPECT_EQ(a.index, 2u);
  EXPECT_EQ(a.count, 4u);
  const auto b =
      parse_shard("auto", env_of({{"JOB_COMPLETION_INDEX", "2"}, {"SGT_SHARD_COUNT", "3"}}));
  EXPECT_EQ(b.index, 2u);
  EXPECT_EQ(b.count, 3u);
  EXPECT_NE(b.source.find("count from SGT_SHARD_COUNT=3"), std::string::npos) << b.source;
  // The index out of the count's range.
  EXPECT_NE(error_of("auto", env_of({{"JOB_COMPLETION_INDEX", "3"}, {"SGT_SHARD_COUNT", "3"}}))
                .find("shard 3 does not exist among 3"),
            std::string::npos);
  EXPECT_NE(error_of("auto", env_of({{"JOB_COMPLETION_INDEX", "0"}, {"SGT_SHARD_COUNT", "0"}})),
            "");
  // Any other launcher: SGT_SHARD_INDEX.
  EXPECT_EQ(parse_shard("auto", env_of({{"SGT_SHARD_INDEX", "1"}, {"SGT_SHARD_COUNT", "2"}})).index,
            1u);
}

TEST(ShardSpec, NoEnvironmentOrEnvironmentsThatDisagreeAreRefused) {
  const auto none = error_of("auto", kNoEnv);
  EXPECT_NE(none.find("no shard in the environment"), std::string::npos) << none;
  EXPECT_NE(none.find("SLURM_ARRAY_TASK_ID"), std::string::npos) << none;
  EXPECT_NE(none.find("JOB_COMPLETION_INDEX"), std::string::npos) << none;
  // A Slurm job that is not an array names no shard either.
  EXPECT_NE(error_of("auto", env_of({{"SLURM_JOB_ID", "5"}})), "");
  auto vars = slurm(1, 0, 3, 1, 4);
  vars["JOB_COMPLETION_INDEX"] = "2";
  EXPECT_NE(error_of("auto", env_of(vars)).find("names two shards"), std::string::npos);
  vars["JOB_COMPLETION_INDEX"] = "1";
  EXPECT_EQ(parse_shard("auto", env_of(vars)).index, 1u);
  vars["SGT_SHARD_COUNT"] = "5";
  EXPECT_NE(error_of("auto", env_of(vars)).find("two shard counts"), std::string::npos);
}

// Every item on exactly one shard; the shards together hold them all.
void expect_partition(const std::vector<unsigned>& deal, size_t items, unsigned count) {
  ASSERT_EQ(deal.size(), items);
  std::vector<size_t> all;
  for (unsigned s = 0; s < count; ++s) {
    const auto mine = items_of_shard(deal, s);
    EXPECT_TRUE(std::is_sorted(mine.begin(), mine.end()));
    all.insert(all.end(), mine.begin(), mine.end());
  }
  std::sort(all.begin(), all.end());
  std::vector<size_t> expected(items);
  std::iota(expected.begin(), expected.end(), size_t{0});
  EXPECT_EQ(all, expected);
}

// A suite as shapes come: a few large problems among many small ones, the large ones where
// round-robin puts them all on one shard.
std::vector<double> skewed_suite() {
  std::vector<double> costs;
  for (int i = 0; i < 16; ++i) costs.push_back(i % 4 == 0 ? 300.0 : 10.0 + i);
  return costs;
}

TEST(ShardDeal, BalancedByCostBetterThanRoundRobin) {
  const auto costs = skewed_suite();
  const auto deal = deal_by_cost(costs, 4);
  expect_partition(deal, costs.size(), 4);
  std::vector<unsigned> round_robin(costs.size());
  for (size_t i = 0; i < costs.size(); ++i) round_robin[i] = static_cast<unsigned>(i % 4);
  const double rr = imbalance(costs, round_robin, 4), lpt = imbalance(costs, deal, 4);
  EXPECT_GT(rr, 2.5);  // every 300 on shard 0
  EXPECT_LT(lpt, 1.1);
  // Each large problem on its own shard.
  std::vector<int> large(4, 0);
  for (size_t i = 0; i < costs.size(); ++i) large[deal[i]] += costs[i] == 300.0;
  EXPECT_EQ(large, (std::vector<int>{1, 1, 1, 1}));
}

TEST(ShardDeal, DeterministicAndRoundRobinForEqualCosts) {
  const auto costs = skewed_suite();
  EXPECT_EQ(deal_by_cost(costs, 3), deal_by_cost(costs, 3));
  const auto equal = deal_by_cost(std::vector<double>(10, 1.0), 3);
  EXPECT_EQ(equal, (std::vector<unsigned>{0, 1, 2, 0, 1, 2, 0, 1, 2, 0}));
  // Zero costs spread too, rather than all landing on shard 0.
  EXPECT_EQ(deal_by_cost(std::vector<double>(4, 0.0), 2), (std::vector<unsigned>{0, 1, 0, 1}));
}

TEST(ShardDeal, MoreShardsThanItemsLeavesSomeEmptyAndOneShardTakesAll) {
  const auto deal = deal_by_cost({5, 1, 3}, 5);
  expect_partition(deal, 3, 5);
  EXPECT_TRUE(items_of_shard(deal, 3).empty());
  EXPECT_TRUE(items_of_shard(deal, 4).empty());
  const auto one = deal_by_cost(skewed_suite(), 1);
  EXPECT_EQ(items_of_shard(one, 0).size(), skewed_suite().size());
  EXPECT_TRUE(deal_by_cost({}, 3).empty());
  EXPECT_THROW(deal_by_cost({1, -1}, 2), std::invalid_argument);
  EXPECT_THROW(deal_by_cost({1}, 0), std::invalid_argument);
}

// Within 4/3 of the best possible on every small suite (brute force over all deals).
TEST(ShardDeal, WithinFourThirdsOfTheBestMakespan) {
  const std::vector<std::vector<double>> suites = {
      {7, 7, 6, 6, 5, 5, 4, 4, 4}, {3, 3, 2, 2, 2}, {10, 1, 1, 1, 1, 1, 1, 1, 1, 1}, {9, 8, 2}};
  for (const auto& costs : suites) {
    const unsigned k = 3;
    double best = 1e300;
    std::vector<unsigned> d(costs.size(), 0);
    for (;;) {
      std::vector<double> load(k, 0);
      for (size_t i = 0; i < costs.size(); ++i) load[d[i]] += costs[i];
      best = std::min(best, *std::max_element(load.begin(), load.end()));
      size_t i = 0;
      while (i < d.size() && ++d[i] == k) d[i++] = 0;
      if (i == d.size()) break;
    }
    const auto deal = deal_by_cost(costs, k);
    std::vector<double> load(k, 0);
    for (size_t i = 0; i < costs.size(); ++i) load[deal[i]] += costs[i];
    EXPECT_LE(*std::max_element(load.begin(), load.end()), best * 4 / 3 + 1e-9);
  }
}

TEST(TuneCost, FitIsTheLineThroughTheRecordingsAndNeverNegative) {
  const auto m = fit_tune_cost({{1e9, 0.002}, {2e9, 0.003}, {5e9, 0.006}});
  EXPECT_NEAR(m.per_candidate_s, 0.001, 1e-12);
  EXPECT_NEAR(m.per_flop_s, 1e-12, 1e-20);
  // Falling with size: no slope, the mean.
  const auto flat = fit_tune_cost({{1e9, 0.004}, {2e9, 0.002}});
  EXPECT_EQ(flat.per_flop_s, 0);
  EXPECT_NEAR(flat.per_candidate_s, 0.003, 1e-12);
  // A line below zero at no flops: through the origin instead.
  const auto origin = fit_tune_cost({{1e9, 0.0001}, {2e9, 0.01}});
  EXPECT_EQ(origin.per_candidate_s, 0);
  EXPECT_GT(origin.per_flop_s, 0);
  EXPECT_EQ(fit_tune_cost({}).per_candidate_s, TuneCostModel{}.per_candidate_s);
}

TEST(TuneCost, EstimateCountsCandidatesUpToMaxEvalsAndStopsAtTheBudget) {
  const TuneCostModel m{0.01, 1e-12, "test"};
  EXPECT_NEAR(estimate_tune_s(100, 1e10, m), 100 * 0.02, 1e-12);
  EXPECT_NEAR(estimate_tune_s(100, 1e10, m, 0, 10), 10 * 0.02, 1e-12);
  EXPECT_NEAR(estimate_tune_s(100, 1e10, m, 1.5), 1.5, 1e-12);
  // A larger problem costs more at the same candidate count.
  EXPECT_GT(estimate_tune_s(100, 1e12, m), estimate_tune_s(100, 1e10, m));
}

}  // namespace
}  // namespace sgt
