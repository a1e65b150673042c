// The shape sources `tune --shapes` reads besides a list of shapes, on samples in their real
// formats (tests/preload/data/): a capture, PyTorch TunableOp untuned and results files, a cuBLAS
// API log. And that the tuner's reading of cuBLAS arguments agrees with the preload library's.
#include <gtest/gtest.h>

#include <fstream>
#include <string>
#include <vector>

#include "error.hpp"
#include "problem.hpp"
#include "sgemm_tune/preload/row_major.hpp"
#include "test_support.hpp"

namespace sgt {
namespace {

std::string data(const std::string& name) {
  return std::string(SGT_TEST_SOURCE_DIR) + "/tests/preload/data/" + name;
}

std::vector<std::string> shapes(const std::vector<SuiteEntry>& suite) {
  std::vector<std::string> out;
  for (const auto& e : suite) out.push_back(e.problem.shape() + " " + e.problem.layout);
  return out;
}

using Reasons = std::vector<std::pair<std::string, size_t>>;

TEST(ShapeSources, TheSampleCapture) {
  SuiteSource src;
  const auto suite = load_suite(data("captured.json"), "NN", &src);
  EXPECT_EQ(src.format, "capture");
  // Most measured time first: each problem's time scaled to all its calls.
  EXPECT_EQ(shapes(suite),
            (std::vector<std::string>{"4096x4096x4096 NN", "1024x30522x768 NT", "768x8192x3072 NN",
                                      "3072x8192x768 TN", "1000x1000x1000 NN"}));
  EXPECT_EQ(src.left_out, (Reasons{{"TF32 allowed", 1}, {"batched", 1}, {"not FP32", 1}}));
}

TEST(ShapeSources, TunableOpUntunedFile) {
  SuiteSource src;
  const auto suite = load_suite(data("tunableop_untuned0.csv"), "TT", &src);
  EXPECT_EQ(src.format, "tunableop");
  EXPECT_EQ(src.problems, 9u);
  EXPECT_EQ(src.calls, 0);  // the file says nothing of how often
  // nt_25088_4096_64: cuBLAS's m = 25088, n = 4096 -> sgemm-tune's 4096 x 25088, layout TN. No
  // counts: the largest first. The default layout does not apply: each line has its own.
  EXPECT_EQ(shapes(suite), (std::vector<std::string>{"4096x4096x4096 NN", "4096x25088x64 TN",
                                                     "384x512x64 NT", "200x100x300 TT"}));
  EXPECT_EQ(src.left_out,
            (Reasons{{"not FP32", 2}, {"TF32 allowed", 1}, {"batched", 1}, {"epilogue", 1}}));
  EXPECT_NE(src.note.find("9 problems (tunableop), 4 to tune, largest first; left out 5"),
            std::string::npos)
      << src.note;
}

TEST(ShapeSources, TunableOpResultsFile) {
  SuiteSource src;
  const auto suite = load_suite(data("tunableop_results0.csv"), "NN", &src);
  EXPECT_EQ(shapes(suite), (std::vector<std::string>{"4096x4096x4096 NN", "4096x25088x64 TN",
                                                     "1000x1000x1000 NT"}));
  EXPECT_TRUE(src.left_out.empty());
}

TEST(ShapeSources, CublasApiLog) {
  SuiteSource src;
  const auto suite = load_suite(data("cublas_api.log"), "NN", &src);
  EXPECT_EQ(src.format, "cublas-log");
  EXPECT_EQ(src.calls, 11);  // the GEMMs; cublasCreate and cublasSetStream are not problems
  EXPECT_EQ(src.problems, 7u);
  EXPECT_EQ(shapes(suite),
            (std::vector<std::string>{"256x512x128 NN", "200x300x100 TN", "48x64x32 TT"}));
  EXPECT_EQ(src.left_out, (Reasons{{"TF32 allowed", 2}, {"batched", 1}, {"not FP32", 1}}));
  EXPECT_NE(src.note.find("most calls first"), std::string::npos) << src.note;
}

// The tuner reads cuBLAS's arguments (TunableOp, logs) with a mapping of its own; it must be the
// preload library's, which the row-major tests prove by arithmetic.
TEST(ShapeSources, TheTunersMappingIsThePreloadLibrarys) {
  test::TempDir dir;
  const auto path = (dir.path() / "ops.csv").string();
  for (const char ta : {'n', 't'}) {
    for (const char tb : {'n', 't'}) {
      std::ofstream(path) << "GemmTunableOp_float_XX," << ta << tb << "_70_90_110\n";
      const auto suite = load_suite(path);
      ASSERT_EQ(suite.size(), 1u);
      const char TA = ta == 'n' ? 'N' : 'T', TB = tb == 'n' ? 'N' : 'T';
      const auto r = preload::to_row_major({TA, TB, 70, 90, 110, 200, 200, 200});
      EXPECT_EQ(suite[0].problem.M, r.M);
      EXPECT_EQ(suite[0].problem.N, r.N);
      EXPECT_EQ(suite[0].problem.K, r.K);
      EXPECT_EQ(suite[0].problem.layout, r.layout());
    }
  }
}

TEST(ShapeSources, MalformedSourcesNameTheFileAndLine) {
  test::TempDir dir;
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"GemmTunableOp_float_NN\n", ":1: expected at least two"},
      {"Validator,PT_VERSION,2.5\nGemmTunableOp_float_NN,nn_1_2\n", ":2: the parameters"},
      {"GemmTunableOp_float_NN,xn_1_2_3\n", "op(A) and op(B)"},
      {"GemmTunableOp_float_NN,nn_1_two_3\n", "must be integers"},
      {"Validator,PT_VERSION,2.5\nhello,world\n", "not a TunableOp signature"},
      {"GemmTunableOp_tf32_NN,nn_8_8_8\n", "no problem sgemm-tune can tune (left out 1 TF32"},
      {"I! cuBLAS (v13.0) function cublasStatus_t cublasSgemm_v2(...) called:\n"
       "i!  transa: type=cublasOperation_t; val=CUBLAS_OP_N(0)\n",
       "cublasSgemm_v2 call: no argument 'transb'"},
      {"I! cuBLAS (v13.0) function cublasStatus_t cublasSgemm_v2(...) called:\n"
       "i!  transa: type=cublasOperation_t; val=CUBLAS_OP_Q(9)\ni!  transb: type=x; val=y\n"
       "i!  m: type=int; val=1\ni!  n: type=int; val=1\ni!  k: type=int; val=1\n",
       "'transa' is not an operation"},
      {"I! cuBLAS (v13.0) function cublasStatus_t cublasCreate_v2(x) called:\n",
       "the file lists none"},
      {"just text\n", "invalid JSON"},
  };
  for (const auto& [text, needle] : cases) {
    const auto path = (dir.path() / "src.txt").string();
    std::ofstream(path) << text;
    try {
      load_suite(path);
      ADD_FAILURE() << text << " was accepted";
    } catch (const InputError& e) {
      const std::string msg = e.what();
      EXPECT_NE(msg.find(path), std::string::npos) << msg;
      EXPECT_NE(msg.find(needle), std::string::npos) << text << " -> " << msg;
    }
  }
}

}  // namespace
}  // namespace sgt
