// The benchmark report: the summary over a suite (geometric mean, minimum, shapes below 0.90) and
// the CSV rows, from real numbers.
#include <gtest/gtest.h>

#include <cmath>
#include <sstream>

#include <nlohmann/json.hpp>

#include "retime.hpp"

namespace sgt::tune {
namespace {

BenchRow row(const std::string& shape, const std::string& layout, double tuned_ms, double cublas_ms,
             const std::string& status = "ok") {
  BenchRow r;
  r.problem = parse_shape(shape);
  r.problem.layout = layout;
  r.config = "wt_128x64x16_w64x32_wn2_t4x4_n128_mb1";
  r.status = status;
  r.source = "db";
  r.tuned_ms = tuned_ms;
  r.cublas_ms = cublas_ms;
  r.repetitions = 20;
  r.seed = 42;
  r.gpu = "NVIDIA H200";
  r.date = "2026-11-30T10:00:00Z";
  return r;
}

std::vector<std::string> lines(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string l; std::getline(in, l);) out.push_back(l);
  return out;
}

std::vector<std::string> fields(const std::string& line) {
  std::vector<std::string> out(1);
  bool quoted = false;
  for (size_t i = 0; i < line.size(); ++i) {
    const char c = line[i];
    if (quoted) {
      if (c == '"' && i + 1 < line.size() && line[i + 1] == '"') {
        out.back() += '"';
        ++i;
      } else if (c == '"') {
        quoted = false;
      } else {
        out.back() += c;
      }
    } else if (c == '"') {
      quoted = true;
    } else if (c == ',') {
      out.emplace_back();
    } else {
      out.back() += c;
    }
  }
  return out;
}

TEST(BenchReport, RatioIsCublasTimeOverTunedTime) {
  const auto r = row("4096x4096x4096", "NN", 3.0562, 2.6914);
  EXPECT_NEAR(r.ratio(), 2.6914 / 3.0562, 1e-12);
  EXPECT_NEAR(r.tuned_gflops(), 2.0 * 4096.0 * 4096 * 4096 / (3.0562e6), 1e-6);
  EXPECT_NEAR(r.cublas_gflops(), 2.0 * 4096.0 * 4096 * 4096 / (2.6914e6), 1e-6);
  // Not measured: no ratio, whatever the times say.
  EXPECT_EQ(row("1024x1024x1024", "NN", 1.0, 1.0, "incorrect").ratio(), 0);
  EXPECT_EQ(row("1024x1024x1024", "NN", 0, 1.0).ratio(), 0);
}

TEST(BenchReport, SummaryGivesGeomeanMinimumAndCountBelowThreshold) {
  const std::vector<BenchRow> rows = {
      row("4096x4096x4096", "NN", 3.0562, 2.6914),             // 0.8806
      row("2048x2048x2048", "NN", 0.4000, 0.3400),             // 0.85
      row("8192x128x8192", "NN", 0.5610, 0.2040),              // 0.3636
      row("2048x512x2048", "TN", 0.2000, 0.2200),              // 1.10
      row("1000x1000x1000", "NN", 0, 0, "untuned"),            // skipped
      row("1023x777x513", "NT", 0.1000, 0.0950, "incorrect"),  // skipped: not ok
      row("512x2048x512", "NT", 0.0500, 0.0475),               // 0.95
  };
  const auto s = summarize_bench(rows);
  EXPECT_EQ(s.total, 7);
  EXPECT_EQ(s.measured, 5);
  const double expect = std::exp((std::log(2.6914 / 3.0562) + std::log(0.85) +
                                  std::log(0.2040 / 0.5610) + std::log(1.1) + std::log(0.95)) /
                                 5);
  EXPECT_NEAR(s.geomean, expect, 1e-12);
  EXPECT_NEAR(s.geomean, 0.7777, 1e-4);
  EXPECT_NEAR(s.min_ratio, 0.2040 / 0.5610, 1e-12);
  EXPECT_EQ(s.min_label, "8192x128x8192 NN");
  EXPECT_NEAR(s.max_ratio, 1.1, 1e-12);
  EXPECT_DOUBLE_EQ(s.threshold, 0.90);
  EXPECT_EQ(s.below, 3);  // 0.8806, 0.85, 0.3636

  EXPECT_EQ(summarize_bench(rows, 0.5).below, 1);
  nlohmann::json j = s;
  EXPECT_EQ(j.at("below_threshold"), 3);
  EXPECT_EQ(j.at("min_shape"), "8192x128x8192 NN");
}

TEST(BenchReport, SummaryOfNothingMeasuredIsZero) {
  const auto s = summarize_bench({row("1000x1000x1000", "NN", 0, 0, "untuned")});
  EXPECT_EQ(s.total, 1);
  EXPECT_EQ(s.measured, 0);
  EXPECT_EQ(s.geomean, 0);
  EXPECT_EQ(s.min_ratio, 0);
  EXPECT_EQ(s.below, 0);
  EXPECT_TRUE(summarize_bench({}).min_label.empty());
}

TEST(BenchReport, CsvHasTheDocumentedColumnsAndOneRowPerShape) {
  auto failed = row("1000x1000x1000", "NN", 0, 0, "untuned");
  failed.config.clear();
  failed.reason = "no winner, \"quoted\", with commas";
  auto incorrect = row("1023x777x513", "NT", 0.25, 0.125, "incorrect");
  auto tuned = row("4096x4096x4096", "NN", 3.0562, 2.6914);
  tuned.source = "tuned";
  tuned.space = "suite";
  tuned.loads = "scalar";
  tuned.device = 3;
  const auto csv = bench_csv({tuned, failed, incorrect});
  const auto ls = lines(csv);
  ASSERT_EQ(ls.size(), 4u) << csv;
  const auto header = fields(ls[0]);
  // cuBLASLt's and the cold L2's columns come after the older ones.
  const std::vector<std::string> expected = {"shape",
                                             "M",
                                             "N",
                                             "K",
                                             "layout",
                                             "config",
                                             "tuned_ms",
                                             "cublas_ms",
                                             "ratio",
                                             "tuned_gflops",
                                             "cublas_gflops",
                                             "status",
                                             "gpu",
                                             "date",
                                             "source",
                                             "space",
                                             "loads",
                                             "reps",
                                             "tuned_spread",
                                             "cublas_spread",
                                             "seed",
                                             "reason",
                                             "device",
                                             "cublaslt_ms",
                                             "ratio_lt",
                                             "cublaslt_spread",
                                             "lt_algos",
                                             "lt_failed",
                                             "lt_algo",
                                             "lt_reason",
                                             "tuned_cold_ms",
                                             "cublas_cold_ms",
                                             "cublaslt_cold_ms",
                                             "ratio_cold",
                                             "ratio_lt_cold",
                                             "rotate_copies",
                                             "cublas_tf32_ms",
                                             "ratio_tf32",
                                             "cublas_tf32_spread",
                                             "tf32_error_ratio",
                                             "cublas_tf32_cold_ms",
                                             "ratio_tf32_cold",
                                             "tf32_reason"};
  EXPECT_EQ(header, expected);
  auto col = [&](const std::vector<std::string>& f, const std::string& name) {
    for (size_t i = 0; i < header.size(); ++i) {
      if (header[i] == name) return f.at(i);
    }
    ADD_FAILURE() << "no column " << name;
    return std::string();
  };

  const auto ok = fields(ls[1]);
  ASSERT_EQ(ok.size(), header.size()) << ls[1];
  EXPECT_EQ(col(ok, "shape"), "4096x4096x4096");
  EXPECT_EQ(col(ok, "M"), "4096");
  EXPECT_EQ(col(ok, "layout"), "NN");
  EXPECT_EQ(col(ok, "config"), "wt_128x64x16_w64x32_wn2_t4x4_n128_mb1");
  EXPECT_EQ(col(ok, "tuned_ms"), "3.056200");
  EXPECT_EQ(col(ok, "cublas_ms"), "2.691400");
  EXPECT_EQ(col(ok, "ratio"), "0.8806");
  EXPECT_EQ(col(ok, "tuned_gflops"), "44970.5");
  EXPECT_EQ(col(ok, "cublas_gflops"), "51066.0");
  EXPECT_EQ(col(ok, "status"), "ok");
  EXPECT_EQ(col(ok, "gpu"), "NVIDIA H200");
  EXPECT_EQ(col(ok, "date"), "2026-11-30T10:00:00Z");
  EXPECT_EQ(col(ok, "reps"), "20");
  EXPECT_EQ(col(ok, "seed"), "42");
  EXPECT_EQ(col(ok, "source"), "tuned");
  EXPECT_EQ(col(ok, "space"), "suite");
  EXPECT_EQ(col(ok, "loads"), "scalar");
  EXPECT_EQ(col(ok, "device"), "3");  // the GPU that tuned and re-timed it

  // Not measured: empty numbers, never zeros; the reason survives commas and quotes.
  const auto un = fields(ls[2]);
  ASSERT_EQ(un.size(), header.size()) << ls[2];
  EXPECT_EQ(col(un, "status"), "untuned");
  EXPECT_EQ(col(un, "config"), "");
  EXPECT_EQ(col(un, "tuned_ms"), "");
  EXPECT_EQ(col(un, "ratio"), "");
  EXPECT_EQ(col(un, "reason"), "no winner, \"quoted\", with commas");
  EXPECT_EQ(col(un, "space"), "");   // from the database: no space this run
  EXPECT_EQ(col(un, "loads"), "");   // nothing ran
  EXPECT_EQ(col(un, "device"), "");  // no device took it

  // A failed re-time keeps its times but has no ratio.
  const auto bad = fields(ls[3]);
  EXPECT_EQ(col(bad, "layout"), "NT");
  EXPECT_EQ(col(bad, "status"), "incorrect");
  EXPECT_EQ(col(bad, "tuned_ms"), "0.250000");
  EXPECT_EQ(col(bad, "ratio"), "");
}

TEST(BenchReport, RowJsonCarriesTheRatio) {
  nlohmann::json j = row("2048x512x2048", "TN", 0.2, 0.22);
  EXPECT_EQ(j.at("shape"), "2048x512x2048");
  EXPECT_EQ(j.at("layout"), "TN");
  EXPECT_NEAR(j.at("ratio").get<double>(), 1.1, 1e-12);
  EXPECT_FALSE(j.contains("reason"));
  EXPECT_EQ(j.at("device"), -1);
  EXPECT_EQ(bench_label(parse_shape("1x2x3")), "1x2x3 NN");
}

}  // namespace
}  // namespace sgt::tune
