// The cost model seam: what learns from measured trials which candidates are faster, over their
// features (features.hpp), and ranks candidates never measured. The model strategy searches with
// one; another strategy, or a tool that ranks ahead of any measurement, can fit, save and load one
// without the strategy around it.
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <vector>

#include "config.hpp"
#include "problem.hpp"
#include "trial.hpp"

namespace sgt {

// What a trial teaches, higher being faster: an ok trial its speed relative to cuBLAS in the same
// run, log(cuBLAS time / its time), which is shape-free; a failed one (spills, incorrect, crashed,
// ...) -infinity, below everything of its problem (RankGroup::settle_failures gives it a value);
// nullopt: nothing to learn (ok but not timed against cuBLAS). A trial cut early counts with the
// time of its first repetitions, as slow as they already showed.
std::optional<float> learned_value(const Trial& t);

// The rows of one problem, which a ranking model orders against each other only: features() of
// each candidate, row-major, and its learned value.
struct RankGroup {
  std::vector<float> x;
  std::vector<float> y;
  float weight = 1;  // how much the group counts against the others
  size_t rows() const { return y.size(); }
  // Adds candidate c on problem p (sm_count: the GPU's SMs) with what its trial t teaches; false,
  // adding nothing, when it teaches nothing.
  bool add(const WarpTileConfig& c, const Problem& p, int sm_count, const Trial& t);
  // Replaces -infinity (failures) by one below the group's slowest measured value.
  void settle_failures();
};

class CostModel {
 public:
  virtual ~CostModel() = default;
  // Learns from the groups (failures settled), replacing whatever it had learned or loaded. No
  // group: nothing changes.
  virtual void fit(const std::vector<const RankGroup*>& groups) = 0;
  // Whether fit() or load() has given it a model to predict with.
  virtual bool fitted() const = 0;
  // One score per candidate row of x (row-major, features() columns): higher is predicted faster;
  // only the order counts. Throws Error when not fitted.
  virtual std::vector<float> predict(const std::vector<float>& x) const = 0;
  // The fitted model, as the library behind it writes it; load() reads it back to predict the same
  // scores. Throws Error naming the file when it cannot.
  virtual void save(const std::filesystem::path& file) const = 0;
  virtual void load(const std::filesystem::path& file) = 0;
};

// The features() rows of candidates on a problem, one after the other: what predict() takes.
std::vector<float> feature_rows(const std::vector<WarpTileConfig>& candidates, const Problem& p,
                                int sm_count);

struct CostModelOptions {
  std::uint64_t seed = 0;  // of the fit's sampling: the same seed and groups give the same model
  unsigned threads = 0;    // 0: every core
  int rounds = 60;         // boosting rounds
};

// A gradient-boosted ranking model (XGBoost, pairwise rank loss, as AutoTVM's) over features().
// save() and load() go through XGBoost's own model files; the format follows the file's
// extension as XGBoost's does (".json", ".ubj"; both read back exactly).
std::unique_ptr<CostModel> make_xgboost_cost_model(const CostModelOptions& options);

}  // namespace sgt
