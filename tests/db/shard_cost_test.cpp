// The cost model shards deal shapes by (shard_deal.hpp) is fixed in the code so that every shard
// deals alike; this fits it again from the shipped recordings, so a new recording that moves the
// fit shows here.
#include <gtest/gtest.h>

#include <filesystem>

#include "dataset.hpp"
#include "shard_deal.hpp"

namespace sgt {
namespace {

TEST(ShardCost, TheFixedModelIsTheFitOfTheShippedRecordings) {
  std::vector<RecordedCost> points;
  const auto root = std::filesystem::path(SGT_TEST_SOURCE_DIR) / "datasets" / "h200";
  for (const auto& e : std::filesystem::directory_iterator(root)) {
    if (!e.path().string().ends_with(".json.gz")) continue;
    const auto ds = db::read_dataset(e.path());
    // The model is of a search over thousands of candidates; a family's own small space (the
    // eight tf32x3_wg configs, each also paying the accuracy checks) is no such tune.
    if (ds.header.measured < 1000) continue;
    double sum = 0;
    size_t n = 0;
    for (const auto& st : ds.trials) {
      if (st.trial.measure_s > 0) sum += st.trial.measure_s, ++n;
    }
    ASSERT_GT(n, 0u) << e.path();
    points.push_back({ds.header.problem.flops(), sum / static_cast<double>(n)});
  }
  ASSERT_GE(points.size(), 2u);
  const auto fit = fit_tune_cost(points);
  const TuneCostModel fixed;
  // Two significant digits, as the constants are written.
  EXPECT_NEAR(fit.per_candidate_s, fixed.per_candidate_s, 0.05 * fixed.per_candidate_s);
  EXPECT_NEAR(fit.per_flop_s, fixed.per_flop_s, 0.05 * fixed.per_flop_s);
}

}  // namespace
}  // namespace sgt
