// The cost model on its own, without the model strategy around it: what a trial teaches it, a fit
// on a small synthetic set, and a model saved and loaded that predicts the very same scores.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "cost_model.hpp"
#include "error.hpp"
#include "features.hpp"
#include "space.hpp"
#include "test_support.hpp"

namespace sgt {
namespace {

// A made-up truth over configs: larger tiles are faster, up to a point; NUM_THREADS 256 wins a
// little more. What the model is to learn, not a claim about any GPU.
double synthetic_speed(const WarpTileConfig& c) {
  const double tile = std::log2(static_cast<double>(c.BM * c.BN));
  return 1.0 - 0.02 * (tile - 13) * (tile - 13) + (c.NUM_THREADS == 256 ? 0.1 : 0.0);
}

Trial synthetic_trial(const WarpTileConfig& c, const Problem& p, size_t i) {
  Trial t;
  t.config = c;
  t.problem = p;
  t.cublas_median_ms = 1.0;
  if (i % 17 == 5) {
    t.status = TrialStatus::spills;  // a failure: below everything of its problem
  } else {
    t.time.median_ms = 1.0 / synthetic_speed(c);
  }
  return t;
}

struct Synthetic {
  std::vector<WarpTileConfig> candidates;
  Problem a = parse_shape("1024x1024x1024"), b = parse_shape("2048x512x2048");
  std::vector<RankGroup> groups;
  Synthetic() {
    candidates = enumerate(load_space("quick"), a).survivors;
    const size_t n = std::min<size_t>(candidates.size(), 120);
    candidates.resize(n);
    for (const Problem& p : {a, b}) {
      RankGroup g;
      for (size_t i = 0; i < n; ++i)
        g.add(candidates[i], p, 132, synthetic_trial(candidates[i], p, i));
      g.settle_failures();
      groups.push_back(std::move(g));
    }
  }
  std::vector<const RankGroup*> group_ptrs() const {
    std::vector<const RankGroup*> out;
    for (const auto& g : groups) out.push_back(&g);
    return out;
  }
};

TEST(CostModel, WhatATrialTeaches) {
  Trial t;
  t.status = TrialStatus::ok;
  t.time.median_ms = 0.5;
  t.cublas_median_ms = 1.0;
  EXPECT_FLOAT_EQ(*learned_value(t), std::log(2.0f));
  t.cublas_median_ms = 0;  // not timed against cuBLAS: nothing to learn
  EXPECT_FALSE(learned_value(t).has_value());
  t.status = TrialStatus::incorrect;
  EXPECT_EQ(*learned_value(t), -std::numeric_limits<float>::infinity());

  RankGroup g;
  g.y = {0.2f, -std::numeric_limits<float>::infinity(), -0.3f};
  g.settle_failures();
  EXPECT_FLOAT_EQ(g.y[1], -1.3f);  // one below the slowest measured
}

TEST(CostModel, FitsASyntheticSetAndRanksItsBestHigh) {
  const Synthetic s;
  ASSERT_GE(s.candidates.size(), 40u);
  EXPECT_EQ(s.groups[0].rows(), s.candidates.size());
  EXPECT_EQ(s.groups[0].x.size(), s.candidates.size() * feature_names().size());
  auto model = make_xgboost_cost_model({7});
  EXPECT_FALSE(model->fitted());
  EXPECT_THROW(model->predict(feature_rows(s.candidates, s.a, 132)), Error);
  model->fit({});
  EXPECT_FALSE(model->fitted());  // no group: nothing learned
  model->fit(s.group_ptrs());
  ASSERT_TRUE(model->fitted());

  const auto scores = model->predict(feature_rows(s.candidates, s.a, 132));
  ASSERT_EQ(scores.size(), s.candidates.size());
  // The predicted best is among the truly fastest quarter.
  std::vector<double> speed;
  for (const auto& c : s.candidates) speed.push_back(synthetic_speed(c));
  auto sorted = speed;
  std::sort(sorted.begin(), sorted.end(), std::greater<>());
  const size_t top =
      static_cast<size_t>(std::max_element(scores.begin(), scores.end()) - scores.begin());
  EXPECT_GE(speed[top], sorted[sorted.size() / 4]);
}

// Saved through XGBoost's own model file and loaded into another model, it predicts exactly what
// it predicted before, in either of XGBoost's formats; the same seed and groups fit the same model.
TEST(CostModel, SavedAndLoadedItPredictsTheSameScores) {
  const Synthetic s;
  auto model = make_xgboost_cost_model({7});
  model->fit(s.group_ptrs());
  const auto rows = feature_rows(s.candidates, s.b, 132);
  const auto before = model->predict(rows);

  auto twin = make_xgboost_cost_model({7});
  twin->fit(s.group_ptrs());
  EXPECT_EQ(twin->predict(rows), before);

  test::TempDir dir;
  for (const char* name : {"model.json", "model.ubj"}) {
    const auto file = dir.path() / name;
    model->save(file);
    ASSERT_TRUE(std::filesystem::exists(file)) << name;
    auto loaded = make_xgboost_cost_model({});
    loaded->load(file);
    ASSERT_TRUE(loaded->fitted());
    EXPECT_EQ(loaded->predict(rows), before) << name;
  }

  auto empty = make_xgboost_cost_model({});
  EXPECT_THROW(empty->save(dir.path() / "none.json"), Error);
  EXPECT_THROW(empty->load(dir.path() / "missing.json"), Error);
  EXPECT_FALSE(empty->fitted());
}

}  // namespace
}  // namespace sgt
