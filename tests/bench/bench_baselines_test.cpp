// The peers and the cold L2 of `bench` without a GPU: how many copies a rotation takes, the
// cuBLASLt and cold-L2 ratios and their summaries, the CSV columns, the JSON rows against the
// bench schema, the table, and why a cuBLASLt search kept nothing.
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>

#include <nlohmann/json.hpp>

#include "bench.hpp"
#include "retime.hpp"
#include "test_support.hpp"
#include "worker_protocol.hpp"

namespace sgt::gpu {
namespace {

using namespace sgt::eval;
using namespace sgt::tune;

namespace fs = std::filesystem;

constexpr long long kMiB = 1 << 20;
constexpr long long kH200L2 = 60 * kMiB;  // cudaDevAttrL2CacheSize on an H200

TEST(Rotation, CopiesLeaveTwiceTheL2BetweenTwoUsesOfAny) {
  // 1024^3 NN: A, B and C of 4 MiB each; the other copies must hold 120 MiB: 10, plus the one in
  // use.
  EXPECT_EQ(rotation_copies(kH200L2, 12 * kMiB), 11);
  // Exactly a multiple: no copy more than needed.
  EXPECT_EQ(rotation_copies(100, 50), 5);
  EXPECT_EQ(rotation_copies(100, 51), 5);
  EXPECT_EQ(rotation_copies(100, 49), 6);
  // A set larger than twice the L2 still needs a second copy: the tail of the last launch is in
  // the L2 when the next one starts.
  EXPECT_EQ(rotation_copies(kH200L2, 768 * kMiB), 2);
  EXPECT_EQ(rotation_copies(kH200L2, 2 * kH200L2), 2);
  EXPECT_EQ(rotation_copies(kH200L2, 2 * kH200L2 - 1), 3);
  // Nothing to rotate.
  EXPECT_EQ(rotation_copies(0, 12 * kMiB), 1);
  EXPECT_EQ(rotation_copies(kH200L2, 0), 1);
  EXPECT_EQ(rotation_copies(-1, -1), 1);
  // A tiny set: many copies, and still no more than the rule needs.
  for (const long long set : {256LL, 3 * 4096LL, 786432LL, 12582912LL, 50331648LL, 201326592LL}) {
    const long long n = rotation_copies(kH200L2, set);
    EXPECT_GE((n - 1) * set, kRotationL2Factor * kH200L2) << set;
    if (n > 2) EXPECT_LT((n - 2) * set, kRotationL2Factor * kH200L2) << set;
  }
}

TEST(Rotation, L2ModesHaveOneNameEach) {
  for (const auto m : {L2Mode::flush, L2Mode::rotate}) EXPECT_EQ(parse_l2_mode(to_string(m)), m);
  EXPECT_EQ(to_string(L2Mode::flush), "flush");
  EXPECT_EQ(to_string(L2Mode::rotate), "rotate");
  EXPECT_FALSE(parse_l2_mode("both"));  // the CLI's, not a timing
  EXPECT_FALSE(parse_l2_mode("Rotate"));
  EXPECT_FALSE(parse_l2_mode(""));
}

// A measured row: the tuned kernel, cuBLAS and cuBLASLt, flushed and cold.
BenchRow row(const std::string& shape, double tuned, double cublas, double lt, double tuned_cold,
             double cublas_cold, double lt_cold) {
  BenchRow r;
  r.problem = parse_shape(shape);
  r.config = test::kSeed;
  r.status = "ok";
  r.source = "db";
  r.loads = "float4";
  r.tuned_ms = tuned;
  r.cublas_ms = cublas;
  r.repetitions = 20;
  r.seed = 7;
  r.gpu = "NVIDIA H200";
  r.date = "2026-12-03T10:00:00Z";
  r.device = 0;
  r.lt_searched = true;
  r.lt_algos = 12;
  r.lt_failed = 1;
  r.lt_algo = "id=21 tile=18 stages=6 splitk=1 reduction=0 swizzle=0 custom=0 inner=0 cluster=0";
  r.cublaslt_ms = lt;
  r.cublaslt_spread = 0.01;
  r.tuned_cold_ms = tuned_cold;
  r.cublas_cold_ms = cublas_cold;
  r.cublaslt_cold_ms = lt_cold;
  r.rotate_copies = 11;
  return r;
}

std::vector<BenchRow> sample() {
  auto lt_none = row("1023x777x513", 0.05, 0.055, 0, 0.06, 0.063, 0);
  lt_none.problem.layout = "NT";
  lt_none.lt_algo.clear();
  lt_none.lt_reason = "none of the 3 algorithms of cuBLASLt's heuristic passed (incorrect=3)";
  auto flushed_only = row("2048x2048x2048", 0.5, 0.45, 0, 0, 0, 0);
  flushed_only.lt_searched = false;
  flushed_only.lt_algos = flushed_only.lt_failed = 0;
  flushed_only.lt_algo.clear();
  flushed_only.rotate_copies = 0;
  BenchRow untuned;
  untuned.problem = parse_shape("1000x1000x1000");
  untuned.status = "untuned";
  untuned.reason = "no winner in the database";
  return {row("4096x4096x4096", 2.0, 2.2, 2.1, 2.5, 2.6, 2.4), lt_none, flushed_only, untuned};
}

TEST(BenchPeers, EveryRatioIsTheBaselineTimeOverTheTunedTime) {
  const auto r = row("4096x4096x4096", 2.0, 2.2, 2.1, 2.5, 2.6, 2.4);
  EXPECT_NEAR(r.ratio(), 1.1, 1e-12);
  EXPECT_NEAR(r.ratio_lt(), 1.05, 1e-12);
  EXPECT_NEAR(r.ratio_cold(), 2.6 / 2.5, 1e-12);
  EXPECT_NEAR(r.ratio_lt_cold(), 2.4 / 2.5, 1e-12);
  EXPECT_TRUE(r.measured_any());
  // A side not timed, or a row not ok: no ratio, whatever the times say.
  auto bad = r;
  bad.status = "incorrect";
  EXPECT_EQ(bad.ratio_lt(), 0);
  EXPECT_EQ(bad.ratio_cold(), 0);
  EXPECT_FALSE(bad.measured_any());
  EXPECT_EQ(row("1x2x3", 1, 1, 0, 0, 1, 1).ratio_lt(), 0);
  EXPECT_EQ(row("1x2x3", 1, 1, 1, 0, 1, 1).ratio_cold(), 0);
  // --l2 rotate alone: no flushed ratio, and the row still counts as measured.
  const auto cold_only = row("1x2x3", 0, 0, 0, 2, 3, 0);
  EXPECT_EQ(cold_only.ratio(), 0);
  EXPECT_FALSE(cold_only.measured());
  EXPECT_TRUE(cold_only.measured_any());
}

TEST(BenchPeers, SummaryGivesEachRatiosGeometricMean) {
  const auto s = summarize_bench(sample());
  EXPECT_EQ(s.total, 4);
  EXPECT_EQ(s.measured, 3);
  EXPECT_NEAR(s.geomean, std::cbrt(1.1 * 1.1 * 0.9), 1e-12);
  EXPECT_EQ(s.lt.measured, 1);  // one row's search kept nothing, one row did not search
  EXPECT_NEAR(s.lt.geomean, 1.05, 1e-12);
  EXPECT_NEAR(s.lt.min_ratio, 1.05, 1e-12);
  EXPECT_EQ(s.lt.min_label, "4096x4096x4096 NN");
  EXPECT_EQ(s.lt.below, 0);
  EXPECT_EQ(s.cold.measured, 2);
  EXPECT_NEAR(s.cold.geomean, std::sqrt(2.6 / 2.5 * 1.05), 1e-12);
  EXPECT_EQ(s.cold.min_label, "4096x4096x4096 NN");
  EXPECT_EQ(s.lt_cold.measured, 1);
  EXPECT_NEAR(s.lt_cold.geomean, 2.4 / 2.5, 1e-12);
  EXPECT_NEAR(s.lt_cold.max_ratio, 2.4 / 2.5, 1e-12);

  const nlohmann::json j = s;
  EXPECT_EQ(j.at("measured"), 3);
  EXPECT_EQ(j.at("ratio_lt").at("measured"), 1);
  EXPECT_NEAR(j.at("ratio_lt").at("geomean_ratio").get<double>(), 1.05, 1e-12);
  EXPECT_EQ(j.at("ratio_cold").at("min_shape"), "4096x4096x4096 NN");
  EXPECT_EQ(j.at("ratio_lt_cold").at("below_threshold"), 0);
}

TEST(BenchPeers, CsvHasTheLtAndColdColumnsEmptyWhereNotTimed) {
  const auto lines = test::csv_rows(bench_csv(sample()));
  ASSERT_EQ(lines.size(), 5u);
  const auto& header = lines[0];
  auto col = [&](size_t line, const std::string& name) {
    for (size_t i = 0; i < header.size(); ++i) {
      if (header[i] == name) return lines[line].at(i);
    }
    ADD_FAILURE() << "no column " << name;
    return std::string();
  };
  for (const auto& l : lines) EXPECT_EQ(l.size(), header.size());
  // Appended after device, so readers by position of the older columns keep working.
  EXPECT_EQ(header.at(22), "device");
  EXPECT_EQ(header.at(23), "cublaslt_ms");
  EXPECT_EQ(header.at(35), "rotate_copies");  // cuBLAS 1xTF32's columns come after it

  EXPECT_EQ(col(1, "cublaslt_ms"), "2.100000");
  EXPECT_EQ(col(1, "ratio_lt"), "1.0500");
  EXPECT_EQ(col(1, "cublaslt_spread"), "0.0100");
  EXPECT_EQ(col(1, "lt_algos"), "12");
  EXPECT_EQ(col(1, "lt_failed"), "1");
  EXPECT_EQ(col(1, "lt_algo"), row("1x1x1", 1, 1, 1, 1, 1, 1).lt_algo);
  EXPECT_EQ(col(1, "lt_reason"), "");
  EXPECT_EQ(col(1, "tuned_cold_ms"), "2.500000");
  EXPECT_EQ(col(1, "cublas_cold_ms"), "2.600000");
  EXPECT_EQ(col(1, "cublaslt_cold_ms"), "2.400000");
  EXPECT_EQ(col(1, "ratio_cold"), "1.0400");
  EXPECT_EQ(col(1, "ratio_lt_cold"), "0.9600");
  EXPECT_EQ(col(1, "rotate_copies"), "11");

  // Searched, nothing kept: the counts and why, no time.
  EXPECT_EQ(col(2, "layout"), "NT");
  EXPECT_EQ(col(2, "cublaslt_ms"), "");
  EXPECT_EQ(col(2, "ratio_lt"), "");
  EXPECT_EQ(col(2, "lt_algos"), "12");
  EXPECT_EQ(col(2, "lt_reason"), sample()[1].lt_reason);
  EXPECT_EQ(col(2, "ratio_cold"), "1.0500");
  EXPECT_EQ(col(2, "ratio_lt_cold"), "");

  // --baseline cublas --l2 flush: every new column empty, never a zero.
  for (const char* c : {"cublaslt_ms", "ratio_lt", "lt_algos", "lt_failed", "lt_algo",
                        "tuned_cold_ms", "ratio_cold", "ratio_lt_cold", "rotate_copies"}) {
    EXPECT_EQ(col(3, c), "") << c;
  }
  EXPECT_EQ(col(3, "ratio"), "0.9000");
  EXPECT_EQ(col(4, "status"), "untuned");
  EXPECT_EQ(col(4, "ratio_cold"), "");
}

TEST(BenchPeers, JsonRowsCarryEveryRatio) {
  const auto rows = sample();
  const nlohmann::json j = rows[0];
  EXPECT_NEAR(j.at("ratio_lt").get<double>(), 2.1 / 2.0, 1e-12);
  EXPECT_NEAR(j.at("ratio_cold").get<double>(), 2.6 / 2.5, 1e-12);
  EXPECT_NEAR(j.at("ratio_lt_cold").get<double>(), 2.4 / 2.5, 1e-12);
  EXPECT_EQ(j.at("lt_algos"), 12);
  EXPECT_EQ(j.at("rotate_copies"), 11);
  EXPECT_FALSE(j.contains("lt_reason"));
  const nlohmann::json none = rows[1];
  EXPECT_EQ(none.at("ratio_lt"), 0);
  EXPECT_EQ(none.at("lt_reason"), rows[1].lt_reason);
}

// The rows and the summary as `bench --json` prints them, in the schema's own example document:
// they must match docs/schemas/bench.schema.json (python3 with jsonschema does the checking).
TEST(BenchPeers, JsonRowsAndSummaryMatchTheBenchSchema) {
  const fs::path source = SGT_TEST_SOURCE_DIR;
  const fs::path schemas = source / "docs" / "schemas";
  std::ifstream in(schemas / "bench.schema.json");
  const auto schema = nlohmann::json::parse(in);
  auto doc = schema.at("examples").at(0);
  const auto rows = sample();
  doc["rows"] = rows;
  doc["summary"] = summarize_bench(rows);
  test::TempDir dir;
  std::ofstream(dir.path() / "doc.json") << doc.dump(2);
  // A document that breaks the schema must fail, or the check proves nothing.
  auto broken = doc;
  broken["rows"][0].erase("ratio_lt");
  std::ofstream(dir.path() / "broken.json") << broken.dump(2);
  const std::string validate =
      "python3 " + test::sh_quote(source / "tests" / "bench" / "validate_bench_json.py") + " " +
      test::sh_quote(schemas) + " ";
  const auto ok = test::run_shell(validate + test::sh_quote(dir.path() / "doc.json"));
  if (ok.exit_code == 77) GTEST_SKIP() << ok.out;
  EXPECT_EQ(ok.exit_code, 0) << ok.out;
  const auto bad = test::run_shell(validate + test::sh_quote(dir.path() / "broken.json"));
  EXPECT_EQ(bad.exit_code, 1) << bad.out;
  EXPECT_NE(bad.out.find("ratio_lt"), std::string::npos) << bad.out;
}

TEST(BenchPeers, TableShowsEachAskedRatioAndTheSuiteBothWays) {
  const auto rows = sample();
  const auto s = summarize_bench(rows);
  BenchTableOptions o;
  o.gpu_name = "NVIDIA H200";
  o.cublaslt = true;
  o.flush = o.rotate = true;
  const auto t = bench_table(rows, s, o);
  for (const char* says :
       {"cuBLASLt FP32", "cuBLASLt ms", "ratio_lt", "ratio_cold", "ratio_lt_cold",
        "L2 flushed before each repetition", "cold L2", "geometric mean of the ratio: 1.029",
        "geometric mean of ratio_lt (cuBLASLt): 1.050", "geometric mean of ratio_cold",
        "no cuBLASLt time for 1023x777x513 NT: none of the 3 algorithms",
        "untuned: no winner in the database",
        "suite (geometric means): 1.029x cuBLAS, 1.050x cuBLASLt with the L2 flushed; 1.045x "
        "cuBLAS, 0.960x cuBLASLt with a cold L2"}) {
    EXPECT_NE(t.find(says), std::string::npos) << says << "\n" << t;
  }
  // A side not timed is a dash, never a zero.
  EXPECT_EQ(t.find(" 0.000 "), std::string::npos) << t;

  // Only cuBLAS, only flushed: none of the new columns.
  o.cublaslt = o.rotate = false;
  const auto plain = bench_table(rows, s, o);
  for (const char* absent : {"cuBLASLt", "ratio_lt", "_cold", "cold L2"}) {
    EXPECT_EQ(plain.find(absent), std::string::npos) << absent << "\n" << plain;
  }
  EXPECT_NE(plain.find("suite (geometric means): 1.029x cuBLAS with the L2 flushed"),
            std::string::npos)
      << plain;

  // Only the cold timing: its times fill the time columns and its ratios head the table.
  o.cublaslt = true;
  o.flush = false;
  o.rotate = true;
  const auto cold = bench_table(rows, s, o);
  EXPECT_NE(cold.find("2.5000"), std::string::npos) << cold;  // tuned_cold_ms of the first row
  EXPECT_EQ(cold.find("geometric mean of the ratio:"), std::string::npos) << cold;
  EXPECT_NE(cold.find("geometric mean of ratio_cold"), std::string::npos) << cold;
  EXPECT_EQ(cold.find("with the L2 flushed"), std::string::npos) << cold;

  // Nothing measured at all.
  const auto none = bench_table({rows[3]}, summarize_bench({rows[3]}), o);
  EXPECT_NE(none.find("no shape was measured (1 in the suite)"), std::string::npos) << none;
}

TEST(BenchPeers, ASearchThatKeptNothingSaysWhy) {
  LtSearch s;
  s.requested = 32;
  EXPECT_EQ(lt_search_reason(s), "cuBLASLt's heuristic returned no algorithm for this problem");
  LtAlgo wrong;
  wrong.status = TrialStatus::incorrect;
  wrong.reason = "relative L2 error 0.5 exceeds tolerance 1e-04";
  LtAlgo refused;
  refused.status = TrialStatus::resources;
  refused.reason = "cuBLAS call failed";
  s.algos = {wrong, refused, wrong};
  EXPECT_EQ(s.failed(), 3);
  EXPECT_EQ(s.best_algo(), nullptr);
  const auto why = lt_search_reason(s);
  EXPECT_NE(why.find("none of the 3 algorithms"), std::string::npos) << why;
  EXPECT_NE(why.find("incorrect=2"), std::string::npos) << why;
  EXPECT_NE(why.find("resources=1"), std::string::npos) << why;
  EXPECT_NE(why.find("relative L2 error 0.5"), std::string::npos) << why;
  // One kept: nothing to explain.
  LtAlgo good;
  good.time.median_ms = 1;
  s.algos.push_back(good);
  s.best = 3;
  EXPECT_EQ(s.best_algo(), &s.algos[3]);
  EXPECT_EQ(s.failed(), 3);
  EXPECT_EQ(lt_search_reason(s), "");
}

// The worker refuses a parent of another protocol before it looks for a GPU, naming both versions;
// no request of the new protocol reaches an older worker, nor the reverse.
TEST(WorkerProtocol, AParentOfAnotherProtocolIsRefusedNamingBoth) {
  for (const int other : {kWorkerProtocol - 1, kWorkerProtocol + 1}) {
    const auto r =
        test::run_shell("echo '{\"op\": \"hello\", \"protocol\": " + std::to_string(other) +
                            ", \"gpu\": -1}' | " + test::sh_quote(test::cli_path()) + " __worker",
                        false);
    EXPECT_EQ(r.exit_code, 0) << r.out;
    const auto j = nlohmann::json::parse(r.out.substr(0, r.out.find('\n')));
    EXPECT_FALSE(j.at("ok").get<bool>()) << r.out;
    const std::string e = j.at("error");
    EXPECT_NE(e.find("protocol mismatch"), std::string::npos) << e;
    EXPECT_NE(e.find("speaks protocol " + std::to_string(kWorkerProtocol)), std::string::npos) << e;
    EXPECT_NE(e.find("its parent " + std::to_string(other)), std::string::npos) << e;
  }
}

}  // namespace
}  // namespace sgt::gpu
