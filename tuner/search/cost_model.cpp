// The XGBoost cost model (see cost_model.hpp).
#include "cost_model.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <thread>
#include <utility>

#include <fmt/format.h>
#include <xgboost/c_api.h>

#include "error.hpp"
#include "features.hpp"

namespace sgt {

namespace {

void xgb_check(int rc, const char* what) {
  if (rc != 0) throw Error(fmt::format("XGBoost: {}: {}", what, XGBGetLastError()));
}

class XgboostCostModel final : public CostModel {
 public:
  explicit XgboostCostModel(const CostModelOptions& o) : o_(o), ncol_(feature_names().size()) {}
  ~XgboostCostModel() override {
    if (booster_) XGBoosterFree(booster_);
  }
  XgboostCostModel(const XgboostCostModel&) = delete;
  XgboostCostModel& operator=(const XgboostCostModel&) = delete;

  void fit(const std::vector<const RankGroup*>& groups) override {
    if (groups.empty()) return;
    std::vector<float> x, y, w;
    std::vector<unsigned> sizes;
    for (const RankGroup* g : groups) {
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
    const unsigned cores = o_.threads ? o_.threads : std::thread::hardware_concurrency();
    const auto threads = std::to_string(std::max(1u, cores));
    const std::pair<const char*, std::string> params[] = {
        {"objective", "rank:pairwise"},
        {"tree_method", "hist"},
        {"max_depth", "6"},
        {"eta", "0.3"},
        {"subsample", "0.9"},
        {"nthread", threads},
        {"verbosity", "0"},
        {"seed", std::to_string(o_.seed % 1000000)}};
    for (const auto& [k, v] : params) xgb_check(XGBoosterSetParam(booster_, k, v.c_str()), k);
    for (int it = 0; it < o_.rounds; ++it) {
      xgb_check(XGBoosterUpdateOneIter(booster_, it, train), "training");
    }
  }

  bool fitted() const override { return booster_ != nullptr; }

  std::vector<float> predict(const std::vector<float>& x) const override {
    if (!booster_) throw Error("cost model: predict() before fit() or load()");
    const size_t rows = x.size() / ncol_;
    DMatrixHandle all = nullptr;
    xgb_check(XGDMatrixCreateFromMat(x.data(), rows, ncol_, NAN, &all), "matrix");
    bst_ulong n = 0;
    const float* out = nullptr;
    const int rc = XGBoosterPredict(booster_, all, 0, 0, 0, &n, &out);
    std::vector<float> scores;
    if (rc == 0) scores.assign(out, out + n);
    XGDMatrixFree(all);
    xgb_check(rc, "prediction");
    return scores;
  }

  void save(const std::filesystem::path& file) const override {
    if (!booster_) throw Error("cost model: save() before fit() or load()");
    if (XGBoosterSaveModel(booster_, file.c_str()) != 0) {
      throw Error(fmt::format("cannot save the cost model to '{}': XGBoost: {}", file.string(),
                              XGBGetLastError()));
    }
  }

  void load(const std::filesystem::path& file) override {
    BoosterHandle h = nullptr;
    xgb_check(XGBoosterCreate(nullptr, 0, &h), "booster");
    if (XGBoosterLoadModel(h, file.c_str()) != 0) {
      const std::string why = XGBGetLastError();
      XGBoosterFree(h);
      throw Error(
          fmt::format("cannot load a cost model from '{}': XGBoost: {}", file.string(), why));
    }
    bst_ulong features = 0;
    if (XGBoosterGetNumFeature(h, &features) != 0 || features != ncol_) {
      XGBoosterFree(h);
      throw Error(fmt::format(
          "cost model '{}' was fitted on {} features, not the {} this sgemm-tune computes",
          file.string(), features, ncol_));
    }
    if (booster_) XGBoosterFree(booster_);
    booster_ = h;
  }

 private:
  CostModelOptions o_;
  size_t ncol_;
  BoosterHandle booster_ = nullptr;
};

}  // namespace

std::optional<float> learned_value(const Trial& t) {
  if (t.status == TrialStatus::ok && t.time.median_ms > 0 && t.cublas_median_ms > 0) {
    return static_cast<float>(std::log(t.cublas_median_ms / t.time.median_ms));
  }
  if (t.status == TrialStatus::ok) return std::nullopt;
  return -std::numeric_limits<float>::infinity();  // failed: below everything of its group
}

bool RankGroup::add(const WarpTileConfig& c, const Problem& p, int sm_count, const Trial& t) {
  const auto v = learned_value(t);
  if (!v) return false;
  const auto f = features(c, p, sm_count);
  x.insert(x.end(), f.begin(), f.end());
  y.push_back(*v);
  return true;
}

void RankGroup::settle_failures() {
  float lo = 0;
  bool any = false;
  for (float v : y) {
    if (std::isfinite(v)) lo = any ? std::min(lo, v) : v, any = true;
  }
  for (float& v : y) {
    if (!std::isfinite(v)) v = lo - 1.0f;
  }
}

std::vector<float> feature_rows(const std::vector<WarpTileConfig>& candidates, const Problem& p,
                                int sm_count) {
  std::vector<float> x;
  x.reserve(candidates.size() * feature_names().size());
  for (const auto& c : candidates) {
    const auto f = features(c, p, sm_count);
    x.insert(x.end(), f.begin(), f.end());
  }
  return x;
}

std::unique_ptr<CostModel> make_xgboost_cost_model(const CostModelOptions& options) {
  return std::make_unique<XgboostCostModel>(options);
}

}  // namespace sgt
