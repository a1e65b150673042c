// Model-guided search: a gradient-boosted ranking model (XGBoost, pairwise rank loss, as AutoTVM)
// over the candidates' shape-relative features ranks the candidates not yet measured; the session
// measures the best-ranked in batches, and the model is refitted as trials arrive. It starts from
// the history (other problems on this GPU model), so the first batch of a new shape is already
// ranked; with no history the first batch is a random, space-filling sample.
//
// What a trial teaches: an ok trial its speed relative to cuBLAS in the same run (shape-free);
// a trial cut early is censored (its first repetitions were already too slow): it counts as at
// least as slow as its own fast repetitions showed, and never as fast as the best; a failed one
// (spills, incorrect, crashed, ...) as slower than anything measured for its problem.
#include <algorithm>
#include <cmath>
#include <map>
#include <numeric>
#include <random>
#include <thread>

#include <fmt/format.h>
#include <xgboost/c_api.h>

#include "error.hpp"
#include "features.hpp"
#include "strategy.hpp"

namespace sgt {

namespace {

void xgb_check(int rc, const char* what) {
  if (rc != 0) throw Error(fmt::format("XGBoost: {}: {}", what, XGBGetLastError()));
}

// The learned value of a trial: higher is faster. nullopt: nothing to learn (not measured).
std::optional<float> target(const Trial& t) {
  if (t.status == TrialStatus::ok && t.time.median_ms > 0 && t.cublas_median_ms > 0) {
    return static_cast<float>(std::log(t.cublas_median_ms / t.time.median_ms));
  }
  if (t.status == TrialStatus::ok) return std::nullopt;
  return -std::numeric_limits<float>::infinity();  // failed: below everything of its group
}

// Rows of one problem (an XGBoost ranking group).
struct Group {
  std::vector<float> x;  // row-major, feature_names().size() columns
  std::vector<float> y;
  float weight = 1;
  size_t rows() const { return y.size(); }
};

// Replaces -inf (failures) by one below the group's slowest measured value.
void settle_failures(Group& g) {
  float lo = 0;
  bool any = false;
  for (float v : g.y) {
    if (std::isfinite(v)) lo = any ? std::min(lo, v) : v, any = true;
  }
  for (float& v : g.y) {
    if (!std::isfinite(v)) v = lo - 1.0f;
  }
}

class ModelSearch final : public SearchStrategy {
 public:
  std::string_view name() const override { return "model"; }

  void start(const StrategyContext& ctx) override {
    ctx_.emplace(ctx);
    rng_.seed(ctx.seed);
    ncol_ = feature_names().size();
    x_.reserve(ctx.candidates.size() * ncol_);
    for (const auto& c : ctx.candidates) {
      const auto f = features(c, ctx.problem, ctx.sm_count);
      x_.insert(x_.end(), f.begin(), f.end());
    }
    asked_.assign(ctx.candidates.size(), false);
    for (size_t i = 0; i < ctx.candidates.size(); ++i) {
      if (ctx.known[i]) asked_[i] = true, learn(ctx.candidates[i], *ctx.known[i]);
    }
    history_groups();
    if (!history_.empty() || current_.rows() > 0) fit();
  }

  std::vector<size_t> ask(size_t n) override {
    if (stale_ >= refit_after()) fit();
    std::vector<size_t> open;
    for (size_t i = 0; i < asked_.size(); ++i) {
      if (!asked_[i]) open.push_back(i);
    }
    if (open.empty()) return {};
    std::vector<size_t> out;
    if (scores_.empty()) {
      std::shuffle(open.begin(), open.end(), rng_);  // no model yet: a space-filling sample
      out.assign(open.begin(), open.begin() + std::min(n, open.size()));
    } else {
      // The best-ranked, with one pick in ten left to chance so that a wrong model still learns.
      std::stable_sort(open.begin(), open.end(),
                       [&](size_t a, size_t b) { return scores_[a] > scores_[b]; });
      std::bernoulli_distribution explore(0.1);
      size_t head = 0;
      while (out.size() < n && head < open.size()) {
        if (explore(rng_) && open.size() - head > 1) {
          std::uniform_int_distribution<size_t> pick(head + 1, open.size() - 1);
          const size_t j = pick(rng_);
          out.push_back(open[j]);
          open.erase(open.begin() + static_cast<std::ptrdiff_t>(j));
        } else {
          out.push_back(open[head++]);
        }
      }
    }
    for (size_t i : out) asked_[i] = true;
    return out;
  }

  void tell(size_t index, const Trial& trial) override {
    learn(ctx_->candidates[index], trial);
    ++stale_;
  }

  ~ModelSearch() override {
    if (booster_) XGBoosterFree(booster_);
  }

 private:
  // Refit once the trials since the last fit are a fair share of what the model was fitted on.
  size_t refit_after() const { return std::max<size_t>(16, current_.rows() / 4); }

  void learn(const WarpTileConfig& c, const Trial& t) {
    auto y = target(t);
    if (!y) return;
    const auto f = features(c, ctx_->problem, ctx_->sm_count);
    current_.x.insert(current_.x.end(), f.begin(), f.end());
    current_.y.push_back(*y);
  }

  // The history, one group per problem, at most kPerProblem rows each (a random sample).
  void history_groups() {
    constexpr size_t kPerProblem = 1500;
    std::map<std::string, std::vector<const Trial*>> by_problem;
    for (const auto& t : ctx_->history) {
      if (t.problem == ctx_->problem || t.strategy.ends_with("/final")) continue;
      by_problem[t.problem.shape() + " " + t.problem.layout].push_back(&t);
    }
    for (auto& [key, trials] : by_problem) {
      std::shuffle(trials.begin(), trials.end(), rng_);
      Group g;
      for (const Trial* t : trials) {
        if (g.rows() >= kPerProblem) break;
        auto y = target(*t);
        if (!y) continue;
        const auto f = features(t->config, t->problem, ctx_->sm_count);
        g.x.insert(g.x.end(), f.begin(), f.end());
        g.y.push_back(*y);
      }
      settle_failures(g);
      if (g.rows() > 1) history_.push_back(std::move(g));
    }
  }

  void fit() {
    stale_ = 0;
    std::vector<const Group*> groups;
    for (const auto& g : history_) groups.push_back(&g);
    Group cur = current_;
    settle_failures(cur);
    // This problem's own trials count for more than any other problem's, more as they grow.
    cur.weight = 1.0f + static_cast<float>(std::min<size_t>(cur.rows(), 200)) / 20.0f;
    if (cur.rows() > 1) groups.push_back(&cur);
    if (groups.empty()) return;
    std::vector<float> x, y, w;
    std::vector<unsigned> sizes;
    for (const Group* g : groups) {
      x.insert(x.end(), g->x.begin(), g->x.end());
      y.insert(y.end(), g->y.begin(), g->y.end());
      w.push_back(g->weight);
      sizes.push_back(static_cast<unsigned>(g->rows()));
    }
    DMatrixHandle train = nullptr;
    xgb_check(XGDMatrixCreateFromMat(x.data(), y.size(), ncol_, NAN, &train), "training matrix");
    struct Free {
      DMatrixHandle h;
      ~Free() { XGDMatrixFree(h); }
    } free_train{train};
    xgb_check(XGDMatrixSetFloatInfo(train, "label", y.data(), y.size()), "labels");
    xgb_check(XGDMatrixSetFloatInfo(train, "weight", w.data(), w.size()), "weights");
    xgb_check(XGDMatrixSetUIntInfo(train, "group", sizes.data(), sizes.size()), "groups");
    if (booster_) XGBoosterFree(booster_), booster_ = nullptr;
    xgb_check(XGBoosterCreate(&train, 1, &booster_), "booster");
    const auto threads = std::to_string(std::max(1u, std::thread::hardware_concurrency()));
    const std::pair<const char*, std::string> params[] = {
        {"objective", "rank:pairwise"},
        {"tree_method", "hist"},
        {"max_depth", "6"},
        {"eta", "0.3"},
        {"subsample", "0.9"},
        {"nthread", threads},
        {"verbosity", "0"},
        {"seed", std::to_string(ctx_->seed % 1000000)}};
    for (const auto& [k, v] : params) xgb_check(XGBoosterSetParam(booster_, k, v.c_str()), k);
    for (int it = 0; it < kRounds; ++it) {
      xgb_check(XGBoosterUpdateOneIter(booster_, it, train), "training");
    }
    predict();
  }

  void predict() {
    DMatrixHandle all = nullptr;
    xgb_check(XGDMatrixCreateFromMat(x_.data(), asked_.size(), ncol_, NAN, &all), "matrix");
    bst_ulong n = 0;
    const float* out = nullptr;
    const int rc = XGBoosterPredict(booster_, all, 0, 0, 0, &n, &out);
    if (rc == 0) scores_.assign(out, out + n);
    XGDMatrixFree(all);
    xgb_check(rc, "prediction");
  }

  static constexpr int kRounds = 60;
  std::optional<StrategyContext> ctx_;
  std::mt19937_64 rng_;
  size_t ncol_ = 0;
  std::vector<float> x_;  // every candidate's features
  std::vector<bool> asked_;
  std::vector<Group> history_;
  Group current_;
  size_t stale_ = 0;
  std::vector<float> scores_;
  BoosterHandle booster_ = nullptr;
};

}  // namespace

std::unique_ptr<SearchStrategy> make_model_strategy() {
  return std::make_unique<ModelSearch>();
}

}  // namespace sgt
