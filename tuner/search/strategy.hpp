// Search strategies, asked and told by a tune session: the strategy only decides which candidate
// to measure next; the session builds, measures, stores, resumes and verifies. One strategy per
// file (strategy_*.cpp), registered in strategy.cpp.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "config.hpp"
#include "problem.hpp"
#include "trial.hpp"

namespace sgt {

// What a strategy starts from. The references outlive the strategy's use of them (the session
// holds them for the whole tune).
struct StrategyContext {
  const std::vector<WarpTileConfig>& candidates;
  const Problem& problem;
  // For each candidate, the trial already stored (resume), if any: never asked for again.
  const std::vector<std::optional<Trial>>& known;
  std::uint64_t seed = 0;
  int sm_count = 0;  // of the GPU, for shape-relative features
  // Trials of other problems on this GPU model (the database's, shipped datasets'): what a model
  // learns from before the first measurement of this problem. May be empty.
  const std::vector<Trial>& history;
  // Threads a learning strategy's model fits with (0: every core). The fit's sums depend on the
  // count, so a replay that must give the same answers on any machine fixes it (strategy-bench).
  unsigned model_threads = 0;
};

class SearchStrategy {
 public:
  virtual ~SearchStrategy() = default;
  virtual std::string_view name() const = 0;
  // Once, before the first ask.
  virtual void start(const StrategyContext& ctx) = 0;
  // Up to n candidate indices to measure next, the most promising first; none left: empty. The
  // session asks ahead of what it measures (to compile in time), so answers need not wait for
  // tell.
  virtual std::vector<size_t> ask(size_t n) = 0;
  // The finished trial of a candidate it asked for.
  virtual void tell(size_t index, const Trial& trial) = 0;
};

// A strategy that fixes its whole order at start (exhaustive, random): it measures every
// unmeasured candidate, in the order arrange() leaves them.
class FixedOrderStrategy : public SearchStrategy {
 public:
  void start(const StrategyContext& ctx) override;
  std::vector<size_t> ask(size_t n) override;
  void tell(size_t, const Trial&) override {}

 protected:
  // Reorders the unmeasured candidates' indices (given in the space's order).
  virtual void arrange(std::vector<size_t>& order, std::uint64_t seed) = 0;

 private:
  std::vector<size_t> order_;
  size_t next_ = 0;
};

// For each candidate, the indices of the candidates that differ from it in exactly one field of
// WarpTileConfig: anneal's moves, and the session's last look around its best before it stops.
// Only candidates count, so a knob whose change must move another field too (a derived one) has no
// neighbour there.
std::vector<std::vector<size_t>> one_knob_neighbours(const std::vector<WarpTileConfig>& candidates);

// For each candidate, its block-tile moves: the candidates of the same family and the same knobs
// outside the tiling (stages, split, order, padding, packing, occupancy, tail) whose block tile
// differs in one of BM, BN, BK by one step of the values those candidates take (the same family
// and knobs: a BK 8 candidate's next BM is the next one among BK 8 candidates), or is half or twice
// it, the other two the same, with the fewest changes to the warp tiling (WM, WN, WNITER, TM, TN,
// NUM_THREADS) that make it valid, at most kMaxTileRepair. A block tile can rarely change alone: a
// wider block needs a wider warp tile or more warps, so one_knob_neighbours has none there, and a
// search that settles on one tile size never compares the next one up or down with the same knobs.
inline constexpr int kMaxTileRepair = 3;
std::vector<std::vector<size_t>> tile_move_neighbours(
    const std::vector<WarpTileConfig>& candidates);

// "exhaustive" (every candidate, in the space's order), "random" (every candidate, in an order
// drawn from the seed, without replacement) or "model" (a cost model ranks the candidates not yet
// measured, refitted as trials arrive; strategy_model.cpp) or "anneal" (simulated annealing over
// configs one knob apart). InputError naming the known ones otherwise.
std::unique_ptr<SearchStrategy> make_strategy(std::string_view name);
std::vector<std::string> strategy_names();

// What the tools need to know of a strategy besides its answers, kept in its registry entry so
// that no caller compares names: its defaults and whether it learns from other problems.
struct StrategyTraits {
  std::string_view name;
  // Measurements without a gain before a search stops (0: never; the strategy measures every
  // candidate unless a budget stops it).
  std::size_t default_patience = 0;
  // Seconds a tune of one shape may take by default (0: no limit).
  double default_budget_s = 0;
  // It learns from trials of other problems (the model strategy): a tune loads the history for
  // it, and a replay benchmark without any history claims nothing for it.
  bool needs_history = false;
};
// The default tune's limits: a search that learns stops after kDefaultPatience measurements
// without a gain (strategy-bench over the H200 datasets: 0.9999 of the optimum on average at about
// 300 evaluations, docs/experiments/2026-12-01-default-tune.md), and at kDefaultBudgetS seconds at
// the latest. Exhaustive measures every candidate, with no time limit.
inline constexpr double kDefaultBudgetS = 300;
inline constexpr std::size_t kDefaultPatience = 200;
// InputError naming the known strategies for an unknown name.
const StrategyTraits& strategy_traits(std::string_view name);

}  // namespace sgt
