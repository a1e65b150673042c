// Model-guided search: a cost model (cost_model.hpp: gradient-boosted ranking, XGBoost, pairwise
// rank loss, as AutoTVM) over the candidates' shape-relative features ranks the candidates not yet
// measured; the session measures the best-ranked in batches, and the model is refitted as trials
// arrive. It starts from the history (other problems on this GPU model), so the first batch of a
// new shape is already ranked; with no history the first batch is a random, space-filling sample.
//
// What a trial teaches (learned_value): an ok trial its speed relative to cuBLAS in the same run
// (shape-free); a trial cut early is censored (its first repetitions were already too slow): it
// counts as at least as slow as its own fast repetitions showed, and never as fast as the best; a
// failed one (spills, incorrect, crashed, ...) as slower than anything measured for its problem.
//
// The model learns from each problem's trials ranked among themselves, so a family recorded apart
// from the others (a family's own datasets) or never recorded at all teaches it nothing about how
// that family compares with the rest at this problem: it is unknown, not known to be slow. So when
// the candidates hold several families, the first batch measures the best-ranked candidate of
// each family without an ok trial of this problem (a scout) before the model's own order, and one
// trial here tells the model what the family is worth. A scout that fails (a compile that NVRTC
// botched, a spill) is followed by the family's next-ranked candidate, up to kScoutTries of them.
#include <algorithm>
#include <map>
#include <random>
#include <set>

#include "cost_model.hpp"
#include "family.hpp"
#include "features.hpp"
#include "strategy.hpp"

namespace sgt {

namespace {

class ModelSearch final : public SearchStrategy {
 public:
  std::string_view name() const override { return "model"; }

  void start(const StrategyContext& ctx) override {
    ctx_.emplace(ctx);
    rng_.seed(ctx.seed);
    model_ = make_xgboost_cost_model({ctx.seed, ctx.model_threads});
    x_ = feature_rows(ctx.candidates, ctx.problem, ctx.sm_count);
    asked_.assign(ctx.candidates.size(), false);
    for (size_t i = 0; i < ctx.candidates.size(); ++i) {
      if (ctx.known[i]) asked_[i] = true, learn(ctx.candidates[i], *ctx.known[i]);
    }
    history_groups();
    if (!history_.empty() || current_.rows() > 0) fit();
    plan_scouts();
  }

  std::vector<size_t> ask(size_t n) override {
    if (stale_ >= refit_after()) fit();
    std::vector<size_t> open;
    for (size_t i = 0; i < asked_.size(); ++i) {
      if (!asked_[i]) open.push_back(i);
    }
    if (open.empty()) return {};
    std::vector<size_t> out;
    for (size_t i : scouts_) {
      if (out.size() < n && !asked_[i]) out.push_back(i), asked_[i] = true;
    }
    scouts_.clear();
    std::erase_if(open, [&](size_t i) { return asked_[i]; });
    if (scores_.empty()) {
      std::shuffle(open.begin(), open.end(), rng_);  // no model yet: a space-filling sample
      out.insert(out.end(), open.begin(), open.begin() + std::min(n - out.size(), open.size()));
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
    const KernelFamily* f = &family_of(ctx_->candidates[index]);
    if (trial.status == TrialStatus::ok) {
      scouting_.erase(f);
    } else if (auto it = scouting_.find(f); it != scouting_.end() && --it->second > 0) {
      if (const auto next = best_unasked(f)) scouts_.push_back(*next);
    }
  }

 private:
  // Refit once the trials since the last fit are a fair share of what the model was fitted on.
  size_t refit_after() const { return std::max<size_t>(16, current_.rows() / 4); }

  void learn(const WarpTileConfig& c, const Trial& t) {
    current_.add(c, ctx_->problem, ctx_->sm_count, t);
  }

  // The history, one group per problem, at most kPerProblem rows each (a random sample).
  void history_groups() {
    constexpr size_t kPerProblem = 1500;
    std::map<std::string, std::vector<const Trial*>> by_problem;
    for (const auto& t : ctx_->history) {
      if (t.problem == ctx_->problem || t.phase == TrialPhase::final) continue;
      by_problem[t.problem.shape() + " " + t.problem.layout].push_back(&t);
    }
    for (auto& [key, trials] : by_problem) {
      std::shuffle(trials.begin(), trials.end(), rng_);
      RankGroup g;
      for (const Trial* t : trials) {
        if (g.rows() >= kPerProblem) break;
        g.add(t->config, t->problem, ctx_->sm_count, *t);
      }
      g.settle_failures();
      if (g.rows() > 1) history_.push_back(std::move(g));
    }
  }

  // One candidate of every family of which no trial of this problem is ok: the model's
  // best-ranked of the family (a random one while there is no model).
  void plan_scouts() {
    std::set<const KernelFamily*> seen, present;
    for (const auto& k : ctx_->known) {
      if (k && k->status == TrialStatus::ok) seen.insert(&family_of(k->config));
    }
    for (const auto& c : ctx_->candidates) present.insert(&family_of(c));
    if (present.size() < 2) return;  // one family only: the model's order decides
    for (const KernelFamily* f : present) {
      if (seen.count(f)) continue;
      if (const auto first = best_unasked(f)) {
        scouts_.push_back(*first);
        scouting_[f] = kScoutTries;
      }
    }
  }

  // The family's best-ranked candidate not yet asked for (a random one while there is no model).
  std::optional<size_t> best_unasked(const KernelFamily* f) {
    std::vector<size_t> idx;
    for (size_t i = 0; i < ctx_->candidates.size(); ++i) {
      if (!asked_[i] && &family_of(ctx_->candidates[i]) == f) idx.push_back(i);
    }
    if (idx.empty()) return std::nullopt;
    std::shuffle(idx.begin(), idx.end(), rng_);
    size_t best = idx.front();
    if (!scores_.empty()) {
      for (size_t i : idx) best = scores_[i] > scores_[best] ? i : best;
    }
    return best;
  }

  void fit() {
    stale_ = 0;
    std::vector<const RankGroup*> groups;
    for (const auto& g : history_) groups.push_back(&g);
    RankGroup cur = current_;
    cur.settle_failures();
    // This problem's own trials count for more than any other problem's, more as they grow.
    cur.weight = 1.0f + static_cast<float>(std::min<size_t>(cur.rows(), 200)) / 20.0f;
    if (cur.rows() > 1) groups.push_back(&cur);
    if (groups.empty()) return;
    model_->fit(groups);
    scores_ = model_->predict(x_);
  }

  std::optional<StrategyContext> ctx_;
  std::mt19937_64 rng_;
  std::unique_ptr<CostModel> model_;
  std::vector<float> x_;  // every candidate's features
  std::vector<bool> asked_;
  std::vector<RankGroup> history_;
  RankGroup current_;
  size_t stale_ = 0;
  std::vector<float> scores_;
  static constexpr int kScoutTries = 3;
  std::vector<size_t> scouts_;                   // asked first (plan_scouts, tell)
  std::map<const KernelFamily*, int> scouting_;  // families scouted, tries left
};

}  // namespace

std::unique_ptr<SearchStrategy> make_model_strategy() {
  return std::make_unique<ModelSearch>();
}

}  // namespace sgt
