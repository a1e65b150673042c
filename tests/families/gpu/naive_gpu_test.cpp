// The test family `naive` (tests/families/naive/) tuned on a GPU by the real worker process: the
// worker knows nothing of the family (it is registered in this test process only) and runs it by
// its launch ABI, the warp-tiling kernel's argument list, through the shared launch plan. Every
// candidate is verified against cuBLAS FP32, and the winner passes the edge shapes.
#include <gtest/gtest.h>

#include <optional>
#include <set>
#include <string>
#include <vector>

#include "family.hpp"
#include "gpu_support.hpp"
#include "naive/naive_family.hpp"
#include "test_support.hpp"
#include "tune.hpp"
#include "worker_client.hpp"
#include "worker_evaluator.hpp"

namespace sgt {
namespace {

class Trials final : public TrialStore {
 public:
  void begin(const GpuFingerprint&, const Problem&) override {}
  std::optional<Trial> finished(const std::string&, const std::string&) override {
    return std::nullopt;
  }
  void record(const Trial& t) override { trials.push_back(t); }
  std::vector<Trial> trials;
};

using test::naive_config;

TEST(KernelFamiliesGpu, ANewFamilyIsTunedAndVerifiedByAWorkerThatDoesNotKnowIt) {
  SKIP_WITHOUT_GPU();
  register_family(test::make_naive_family());
  const KernelFamily& naive = *find_family("naive");
  test::TempDir tmp;
  eval::WorkerClient worker(test::cli_path(), -1);
  gpu::WorkerEvaluator ev(worker, tmp.path() / "cache");
  for (const char* layout : {"NN", "TN", "NT", "TT"}) {
    SCOPED_TRACE(layout);
    tune::TuneOptions o;
    // Odd sizes: partial tiles in M and N, and a K that is no multiple of anything.
    o.problem = parse_shape("301x259x67");
    o.problem.layout = layout;
    o.candidates = {naive_config(32, 32, 2, 4), naive_config(16, 32, 1, 4),
                    naive_config(32, 16, 4, 2), naive_config(64, 32, 4, 4)};
    for (const auto& c : o.candidates) ASSERT_TRUE(check(c).empty()) << to_name(c);
    o.top_k = 2;
    o.seed = 5;
    o.compile_threads = 2;
    Trials store;
    const auto r = tune::run_tune(o, ev, store);
    std::set<std::string> screened;
    for (const auto& t : store.trials) {
      EXPECT_EQ(t.status, TrialStatus::ok) << t.config_name << ": " << t.reason;
      EXPECT_EQ(t.kernel_hash, naive.source_hash());
      EXPECT_EQ(t.config_name.rfind("nv_", 0), 0u) << t.config_name;
      EXPECT_GE(t.verify_error, 0);
      EXPECT_LT(t.verify_error, 1e-4) << t.config_name;
      EXPECT_GT(t.time.median_ms, 0);
      if (t.phase != TrialPhase::final) screened.insert(t.config_name);
    }
    EXPECT_EQ(screened.size(), o.candidates.size());
    ASSERT_FALSE(r.finalists.empty());
    const auto& edge = r.finalists.front().trial.edge_checks;
    ASSERT_FALSE(edge.empty());
    EXPECT_EQ(edge_checks_passed(edge), static_cast<int>(edge.size()));
    EXPECT_GT(r.finalists.front().ratio, 0);
  }
}

// A kernel of a non-strict precision class far less accurate than cuBLAS FP32 (the naive kernel
// on operands rounded to TF32): within a loose verification tolerance, so only its error against
// FP64 can refuse it. A tune asks the worker for it (the family's precision class), stores the
// ratios, and records every candidate inaccurate, untimed and never a finalist.
TEST(KernelFamiliesGpu, AKernelLessAccurateThanCuBlasIsRecordedInaccurate) {
  SKIP_WITHOUT_GPU();
  if (!find_family("naive_tf32")) register_family(test::make_naive_tf32_family());
  test::TempDir tmp;
  eval::WorkerClient worker(test::cli_path(), -1);
  gpu::WorkerEvaluator ev(worker, tmp.path() / "cache");
  tune::TuneOptions o;
  o.problem = parse_shape("256x192x512");
  o.problem.layout = "NT";
  o.candidates = {test::naive_tf32_config(32, 32, 2, 4), test::naive_tf32_config(16, 32, 1, 4)};
  for (const auto& c : o.candidates) ASSERT_TRUE(check(c).empty()) << to_name(c);
  // TF32 operands are some 5e-4 off: verified against cuBLAS at 1e-2, they pass.
  o.tolerance = 1e-2;
  o.top_k = 2;
  o.seed = 7;
  o.compile_threads = 2;
  Trials store;
  const auto r = tune::run_tune(o, ev, store);
  ASSERT_EQ(store.trials.size(), o.candidates.size());
  for (const auto& t : store.trials) {
    SCOPED_TRACE(t.config_name);
    EXPECT_EQ(t.status, TrialStatus::inaccurate) << t.reason;
    EXPECT_EQ(t.config_name.rfind("nt_", 0), 0u);
    EXPECT_GT(t.verify_error, 0);
    EXPECT_LT(t.verify_error, 1e-2);
    ASSERT_TRUE(t.error_ratio.has_value());
    EXPECT_GT(*t.error_ratio, 10 * kAccurateErrorRatioMax);
    ASSERT_TRUE(t.stress_ratio.has_value());
    EXPECT_GT(*t.stress_ratio, kAccurateErrorRatioMax);
    EXPECT_FALSE(t.stress_case.empty());
    EXPECT_NE(t.reason.find("on the problem exceeds"), std::string::npos) << t.reason;
    EXPECT_EQ(t.time.median_ms, 0);
  }
  EXPECT_TRUE(r.finalists.empty());
  EXPECT_EQ(r.status_counts.at("inaccurate"), static_cast<int>(o.candidates.size()));
}

}  // namespace
}  // namespace sgt
