// `sgemm-tune bench` on a device (ctest label `gpu`; skipped without one): a tiny suite tuned with
// the quick space, then benchmarked again from the database alone; beside cuBLASLt and with a cold
// L2, and without them; beside cuBLAS 1xTF32 when asked for.
#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <sstream>

#include <nlohmann/json.hpp>

#include "gpu_support.hpp"
#include "test_support.hpp"

namespace sgt {
namespace {

namespace fs = std::filesystem;

std::string q(const fs::path& p) {
  return "'" + p.string() + "'";
}

// The CSV as one map per row, keyed by the header (no quoted fields are expected in these rows).
std::vector<std::map<std::string, std::string>> read_csv(const fs::path& p) {
  std::ifstream in(p);
  std::vector<std::string> header;
  std::vector<std::map<std::string, std::string>> rows;
  for (std::string line; std::getline(in, line);) {
    std::vector<std::string> f;
    std::stringstream ss(line);
    for (std::string x; std::getline(ss, x, ',');) f.push_back(x);
    if (!line.empty() && line.back() == ',') f.emplace_back();
    if (header.empty()) {
      header = f;
      continue;
    }
    std::map<std::string, std::string> row;
    for (size_t i = 0; i < header.size() && i < f.size(); ++i) row[header[i]] = f[i];
    rows.push_back(row);
  }
  return rows;
}

TEST(BenchGpu, TinySuiteIsTunedThenBenchmarkedAgainstCublas) {
  SKIP_WITHOUT_GPU();
  test::TempDir tmp;
  const auto suite = tmp.path() / "suite.json";
  // Square, another layout, and an odd size that no tile divides.
  std::ofstream(suite) << R"({"shapes": [
    {"shape": "1024x1024x1024", "layout": "NN"},
    {"shape": "512x768x256", "layout": "NT"},
    {"shape": "1000x1000x1000", "layout": "NN"}]})";
  const auto csv = tmp.path() / "bench.csv";
  const std::string common = "bench --suite " + q(suite) + " --space quick --seed 7 --db " +
                             q(tmp.path() / "t.db") + " --cache-dir " + q(tmp.path() / "cache") +
                             " --csv " + q(csv);

  const auto first = test::run_cli(common + " --json", false);
  ASSERT_EQ(first.exit_code, 0) << first.out;
  const auto j = nlohmann::json::parse(first.out);
  ASSERT_EQ(j.at("rows").size(), 3u);
  EXPECT_EQ(j.at("reps"), 20);
  EXPECT_EQ(j.at("summary").at("measured"), 3) << j.dump(2);
  EXPECT_GT(j.at("summary").at("geomean_ratio").get<double>(), 0.05);
  for (const auto& r : j.at("rows")) {
    EXPECT_EQ(r.at("source"), "tuned") << r.dump();
    EXPECT_EQ(r.at("space"), "quick") << r.dump();
    EXPECT_EQ(r.at("loads"), "float4") << r.dump();  // every shape's rows allow float4s
  }

  const auto rows = read_csv(csv);
  ASSERT_EQ(rows.size(), 3u);
  const std::vector<std::string> shapes = {"1024x1024x1024", "512x768x256", "1000x1000x1000"};
  for (size_t i = 0; i < rows.size(); ++i) {
    const auto& r = rows[i];
    EXPECT_EQ(r.at("shape"), shapes[i]);
    EXPECT_EQ(r.at("status"), "ok") << r.at("reason");
    EXPECT_GT(std::stod(r.at("tuned_ms")), 0);
    EXPECT_GT(std::stod(r.at("cublas_ms")), 0);
    EXPECT_GT(std::stod(r.at("ratio")), 0);
    EXPECT_FALSE(r.at("config").empty());
    EXPECT_FALSE(r.at("gpu").empty());
    EXPECT_EQ(r.at("reps"), "20");
  }
  EXPECT_EQ(rows[1].at("layout"), "NT");

  // Again, from the database alone: the same winners, nothing tuned; and the table on stdout.
  const auto second = test::run_cli(common + " --no-tune --reps 25", false);
  ASSERT_EQ(second.exit_code, 0) << second.out;
  EXPECT_NE(second.out.find("geometric mean of the ratio"), std::string::npos) << second.out;
  EXPECT_NE(second.out.find("minimum ratio"), std::string::npos) << second.out;
  const auto again = read_csv(csv);
  ASSERT_EQ(again.size(), 3u);
  for (size_t i = 0; i < again.size(); ++i) {
    EXPECT_EQ(again[i].at("source"), "db");
    EXPECT_EQ(again[i].at("space"), "");
    EXPECT_EQ(again[i].at("status"), "ok");
    EXPECT_EQ(again[i].at("config"), rows[i].at("config"));
    EXPECT_EQ(again[i].at("reps"), "25");
  }

  // A shape the database has never seen is reported untuned under --no-tune, not an error.
  std::ofstream(suite) << R"(["1024x1024x1024", "768x768x768"])";
  const auto third = test::run_cli(common + " --no-tune --json", false);
  ASSERT_EQ(third.exit_code, 0) << third.out;
  const auto j3 = nlohmann::json::parse(third.out);
  EXPECT_EQ(j3.at("rows")[0].at("status"), "ok");
  EXPECT_EQ(j3.at("rows")[1].at("status"), "untuned");
  EXPECT_EQ(j3.at("summary").at("measured"), 1);
}

// Both baselines and both timings (the defaults): every column of cuBLASLt and of the cold L2 is
// filled, the document matches its schema, and the table states the suite's figure both ways;
// each can be left out.
TEST(BenchGpu, PeersAndColdL2FillTheirColumnsAndTheSummaryStatesEach) {
  SKIP_WITHOUT_GPU();
  test::TempDir tmp;
  const auto suite = tmp.path() / "suite.json";
  std::ofstream(suite) << R"([{"shape": "1023x777x513", "layout": "NT"}, "512x512x512"])";
  const auto csv = tmp.path() / "bench.csv";
  const std::string common = "bench --suite " + q(suite) + " --space quick --seed 9 --db " +
                             q(tmp.path() / "t.db") + " --cache-dir " + q(tmp.path() / "cache") +
                             " --csv " + q(csv);

  const auto first = test::run_cli(common + " --json", false);
  ASSERT_EQ(first.exit_code, 0) << first.out;
  const auto j = nlohmann::json::parse(first.out);
  EXPECT_EQ(j.at("baselines"), nlohmann::json({"cublas", "cublaslt"}));
  EXPECT_EQ(j.at("l2"), nlohmann::json({"flush", "rotate"}));
  EXPECT_EQ(j.at("cublaslt").at("max_algos"), 32);
  EXPECT_EQ(j.at("cublaslt").at("compute"), "CUBLAS_COMPUTE_32F");
  ASSERT_EQ(j.at("rows").size(), 2u);
  for (const auto& r : j.at("rows")) {
    EXPECT_EQ(r.at("status"), "ok") << r.dump();
    for (const char* k :
         {"tuned_ms", "cublas_ms", "cublaslt_ms", "ratio", "ratio_lt", "tuned_cold_ms",
          "cublas_cold_ms", "cublaslt_cold_ms", "ratio_cold", "ratio_lt_cold"}) {
      EXPECT_GT(r.at(k).get<double>(), 0) << k << " " << r.dump();
    }
    EXPECT_GT(r.at("lt_algos").get<int>(), 0) << r.dump();
    EXPECT_LE(r.at("lt_algos").get<int>(), 32) << r.dump();
    EXPECT_FALSE(r.at("lt_algo").get<std::string>().empty()) << r.dump();
    EXPECT_FALSE(r.contains("lt_reason")) << r.dump();
    EXPECT_GE(r.at("rotate_copies").get<int>(), 2) << r.dump();
  }
  for (const char* k : {"ratio_lt", "ratio_cold", "ratio_lt_cold"}) {
    EXPECT_EQ(j.at("summary").at(k).at("measured"), 2) << k;
    EXPECT_GT(j.at("summary").at(k).at("geomean_ratio").get<double>(), 0.05) << k;
  }
  std::ofstream(tmp.path() / "doc.json") << first.out;
  const fs::path source = SGT_TEST_SOURCE_DIR;
  const auto valid =
      test::run_shell("python3 " + q(source / "tests" / "bench" / "validate_bench_json.py") + " " +
                      q(source / "docs" / "schemas") + " " + q(tmp.path() / "doc.json"));
  if (valid.exit_code != 77) EXPECT_EQ(valid.exit_code, 0) << valid.out;
  auto rows = read_csv(csv);
  ASSERT_EQ(rows.size(), 2u);
  for (const auto& r : rows) {
    for (const char* k :
         {"cublaslt_ms", "ratio_lt", "lt_algos", "ratio_cold", "ratio_lt_cold", "rotate_copies"}) {
      EXPECT_FALSE(r.at(k).empty()) << k;
    }
  }

  // The table, from the database alone: every ratio, and the suite both ways.
  const auto table = test::run_cli(common + " --no-tune", false);
  ASSERT_EQ(table.exit_code, 0) << table.out;
  for (const char* says :
       {"cuBLASLt ms", "ratio_lt", "ratio_cold", "ratio_lt_cold", "geometric mean of the ratio",
        "geometric mean of ratio_lt (cuBLASLt)", "geometric mean of ratio_cold",
        "with the L2 flushed; ", "with a cold L2"}) {
    EXPECT_NE(table.out.find(says), std::string::npos) << says << "\n" << table.out;
  }

  // cuBLAS alone, flushed alone: the new columns stay empty.
  const auto plain = test::run_cli(common + " --no-tune --baseline cublas --l2 flush", false);
  ASSERT_EQ(plain.exit_code, 0) << plain.out;
  EXPECT_EQ(plain.out.find("cuBLASLt"), std::string::npos) << plain.out;
  rows = read_csv(csv);
  ASSERT_EQ(rows.size(), 2u);
  for (const auto& r : rows) {
    EXPECT_EQ(r.at("status"), "ok");
    for (const char* k :
         {"cublaslt_ms", "lt_algos", "tuned_cold_ms", "ratio_cold", "rotate_copies"})
      EXPECT_TRUE(r.at(k).empty()) << k << "=" << r.at(k);
  }

  // Rotated alone, a few algorithms asked for: the cold sides only.
  const auto cold = test::run_cli(common + " --no-tune --l2 rotate --lt-algos 4 --json", false);
  ASSERT_EQ(cold.exit_code, 0) << cold.out;
  const auto jc = nlohmann::json::parse(cold.out);
  EXPECT_EQ(jc.at("l2"), nlohmann::json({"rotate"}));
  EXPECT_EQ(jc.at("summary").at("measured"), 0);
  EXPECT_EQ(jc.at("summary").at("ratio_cold").at("measured"), 2);
  for (const auto& r : jc.at("rows")) {
    EXPECT_EQ(r.at("tuned_ms"), 0) << r.dump();
    EXPECT_GT(r.at("tuned_cold_ms").get<double>(), 0) << r.dump();
    EXPECT_LE(r.at("lt_algos").get<int>(), 4) << r.dump();
  }
}

// cuBLAS 1xTF32 (opt-in): its columns filled, its error ratio above what fp32-accurate allows, the
// document valid, the table saying it is not FP32-accurate; without it, its columns stay empty.
TEST(BenchGpu, CublasTf32FillsItsColumnsOnlyWhenAskedFor) {
  SKIP_WITHOUT_GPU();
  test::TempDir tmp;
  const auto suite = tmp.path() / "suite.json";
  std::ofstream(suite) << R"([{"shape": "1024x768x512", "layout": "NT"}, "512x512x512"])";
  const auto csv = tmp.path() / "bench.csv";
  const std::string common = "bench --suite " + q(suite) + " --space quick --seed 5 --db " +
                             q(tmp.path() / "t.db") + " --cache-dir " + q(tmp.path() / "cache") +
                             " --csv " + q(csv);

  const auto first = test::run_cli(common + " --baseline cublas,cublas-tf32 --json", false);
  ASSERT_EQ(first.exit_code, 0) << first.out;
  const auto j = nlohmann::json::parse(first.out);
  EXPECT_EQ(j.at("baselines"), nlohmann::json({"cublas", "cublas-tf32"}));
  EXPECT_EQ(j.at("cublas_tf32").at("compute"), "CUBLAS_COMPUTE_32F_FAST_TF32");
  EXPECT_EQ(j.at("cublas_tf32").at("fp32_accurate"), false);
  EXPECT_FALSE(j.contains("cublaslt"));
  ASSERT_EQ(j.at("rows").size(), 2u);
  for (const auto& r : j.at("rows")) {
    EXPECT_EQ(r.at("status"), "ok") << r.dump();
    for (const char* k : {"cublas_tf32_ms", "ratio_tf32", "cublas_tf32_cold_ms", "ratio_tf32_cold"})
      EXPECT_GT(r.at(k).get<double>(), 0) << k << " " << r.dump();
    // Aligned shapes on TF32 tensor cores: far less accurate than cuBLAS FP32.
    EXPECT_GT(r.at("tf32_error_ratio").get<double>(), 1.05) << r.dump();
    EXPECT_FALSE(r.contains("tf32_reason")) << r.dump();
    EXPECT_EQ(r.at("cublaslt_ms"), 0) << r.dump();
  }
  for (const char* k : {"ratio_tf32", "ratio_tf32_cold"})
    EXPECT_EQ(j.at("summary").at(k).at("measured"), 2) << k;
  std::ofstream(tmp.path() / "doc.json") << first.out;
  const fs::path source = SGT_TEST_SOURCE_DIR;
  const auto valid =
      test::run_shell("python3 " + q(source / "tests" / "bench" / "validate_bench_json.py") + " " +
                      q(source / "docs" / "schemas") + " " + q(tmp.path() / "doc.json"));
  if (valid.exit_code != 77) EXPECT_EQ(valid.exit_code, 0) << valid.out;
  auto rows = read_csv(csv);
  ASSERT_EQ(rows.size(), 2u);
  for (const auto& r : rows) {
    for (const char* k : {"cublas_tf32_ms", "ratio_tf32", "tf32_error_ratio", "ratio_tf32_cold"})
      EXPECT_FALSE(r.at(k).empty()) << k;
    EXPECT_TRUE(r.at("tf32_reason").empty()) << r.at("tf32_reason");
  }

  // The table, from the database alone, all three baselines.
  const auto table =
      test::run_cli(common + " --no-tune --baseline cublas,cublaslt,cublas-tf32", false);
  ASSERT_EQ(table.exit_code, 0) << table.out;
  for (const char* says : {"NOT FP32-accurate", "TF32 ms", "ratio_tf32", "tf32_err", "ratio_lt",
                           "geometric mean of ratio_tf32", "x cuBLAS 1xTF32 with the L2 flushed"}) {
    EXPECT_NE(table.out.find(says), std::string::npos) << says << "\n" << table.out;
  }

  // The default baselines: nothing of it.
  const auto plain = test::run_cli(common + " --no-tune", false);
  ASSERT_EQ(plain.exit_code, 0) << plain.out;
  EXPECT_EQ(plain.out.find("TF32 ms"), std::string::npos) << plain.out;
  rows = read_csv(csv);
  ASSERT_EQ(rows.size(), 2u);
  for (const auto& r : rows) {
    for (const char* k : {"cublas_tf32_ms", "ratio_tf32", "tf32_error_ratio", "ratio_tf32_cold"})
      EXPECT_TRUE(r.at(k).empty()) << k << "=" << r.at(k);
  }
}

TEST(BenchGpu, PlotIsDrawnWhenMatplotlibIsThere) {
  SKIP_WITHOUT_GPU();
  bool mpl = false;
  for (const char* py : {"python3", "/usr/bin/python3"}) {
    mpl =
        mpl ||
        test::run_shell(std::string(py) + " -c 'import matplotlib' >/dev/null 2>&1").exit_code == 0;
  }
  if (!mpl) GTEST_SKIP() << "no python3 with matplotlib";
  test::TempDir tmp;
  const auto suite = tmp.path() / "suite.json";
  std::ofstream(suite) << R"(["512x512x512"])";
  const auto png = tmp.path() / "bench.png";
  const auto r = test::run_cli("bench --suite " + q(suite) + " --space quick --db " +
                               q(tmp.path() / "t.db") + " --cache-dir " + q(tmp.path() / "cache") +
                               " --csv " + q(tmp.path() / "b.csv") + " --plot " + q(png));
  ASSERT_EQ(r.exit_code, 0) << r.out;
  ASSERT_TRUE(fs::exists(png));
  EXPECT_GT(fs::file_size(png), 2000u);
}

}  // namespace
}  // namespace sgt
