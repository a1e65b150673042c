// cuBLAS 1xTF32 as a baseline of `bench` without a GPU: its ratios and summaries, its CSV columns
// (appended last) and JSON fields against the bench schema, the table saying it is not
// FP32-accurate; the cublas_tf32 request of the worker protocol both ways; and the worker's
// dispatch answering every request that comes before its set-up by name.
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <sstream>
#include <utility>

#include <nlohmann/json.hpp>

#include "retime.hpp"
#include "test_support.hpp"
#include "worker_protocol.hpp"

namespace sgt::tune {
namespace {

using namespace sgt::eval;

namespace fs = std::filesystem;

// A measured row: the tuned kernel, cuBLAS and cuBLAS 1xTF32, flushed and cold.
BenchRow tf32_row(const std::string& shape, double tuned, double cublas, double tf32,
                  double tuned_cold, double tf32_cold) {
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
  r.date = "2026-12-05T10:00:00Z";
  r.device = 0;
  r.tuned_cold_ms = tuned_cold;
  r.cublas_cold_ms = cublas * 1.1;
  r.rotate_copies = 11;
  r.tf32_timed = true;
  r.cublas_tf32_ms = tf32;
  r.cublas_tf32_spread = 0.02;
  r.cublas_tf32_cold_ms = tf32_cold;
  r.tf32_error_ratio = tf32 > 0 ? 1874.25 : 0;
  return r;
}

std::vector<BenchRow> tf32_sample() {
  // Asked for, then failed a round: no time, and why (with a comma: the CSV quotes it).
  auto failed = tf32_row("1023x777x513", 0.05, 0.055, 0, 0.06, 0);
  failed.problem.layout = "NT";
  failed.tf32_reason =
      "round 2 (rotate): incorrect relative L2 error 0.5 exceeds tolerance 1e-02, on a copy";
  // Not asked for.
  auto plain = tf32_row("2048x2048x2048", 0.5, 0.45, 0, 0, 0);
  plain.tf32_timed = false;
  plain.rotate_copies = 0;
  plain.cublas_cold_ms = 0;
  BenchRow untuned;
  untuned.problem = parse_shape("1000x1000x1000");
  untuned.status = "untuned";
  untuned.reason = "no winner in the database";
  return {tf32_row("4096x4096x4096", 2.0, 2.2, 1.0, 2.5, 1.25), failed, plain, untuned};
}

TEST(BenchTf32, RatiosAreItsTimeOverTheTunedTime) {
  const auto r = tf32_row("4096x4096x4096", 2.0, 2.2, 1.0, 2.5, 1.25);
  EXPECT_NEAR(r.ratio_tf32(), 0.5, 1e-12);
  EXPECT_NEAR(r.ratio_tf32_cold(), 0.5, 1e-12);
  EXPECT_NEAR(r.ratio(), 1.1, 1e-12);  // the FP32 ratio is untouched
  auto bad = r;
  bad.status = "incorrect";
  EXPECT_EQ(bad.ratio_tf32(), 0);
  EXPECT_EQ(bad.ratio_tf32_cold(), 0);
  EXPECT_EQ(tf32_row("1x2x3", 1, 1, 0, 1, 0).ratio_tf32(), 0);

  const auto s = summarize_bench(tf32_sample());
  EXPECT_EQ(s.measured, 3);
  EXPECT_EQ(s.tf32.measured, 1);
  EXPECT_NEAR(s.tf32.geomean, 0.5, 1e-12);
  EXPECT_EQ(s.tf32.min_label, "4096x4096x4096 NN");
  EXPECT_EQ(s.tf32.below, 1);
  EXPECT_EQ(s.tf32_cold.measured, 1);
  EXPECT_NEAR(s.tf32_cold.geomean, 0.5, 1e-12);
  const nlohmann::json j = s;
  EXPECT_EQ(j.at("ratio_tf32").at("measured"), 1);
  EXPECT_EQ(j.at("ratio_tf32_cold").at("below_threshold"), 1);
}

TEST(BenchTf32, CsvAppendsItsColumnsLastEmptyWhereNotTimed) {
  const auto lines = test::csv_rows(bench_csv(tf32_sample()));
  ASSERT_EQ(lines.size(), 5u);
  const auto& header = lines[0];
  for (const auto& l : lines) EXPECT_EQ(l.size(), header.size());
  // After every column of before, in this order: readers by position keep working.
  const std::vector<std::string> added = {
      "cublas_tf32_ms",      "ratio_tf32",      "cublas_tf32_spread", "tf32_error_ratio",
      "cublas_tf32_cold_ms", "ratio_tf32_cold", "tf32_reason"};
  ASSERT_EQ(header.size(), 36u + added.size());
  EXPECT_EQ(header.at(35), "rotate_copies");
  EXPECT_EQ(std::vector<std::string>(header.end() - 7, header.end()), added);
  auto col = [&](size_t line, const std::string& name) {
    for (size_t i = 0; i < header.size(); ++i) {
      if (header[i] == name) return lines[line].at(i);
    }
    ADD_FAILURE() << "no column " << name;
    return std::string();
  };
  EXPECT_EQ(col(1, "cublas_tf32_ms"), "1.000000");
  EXPECT_EQ(col(1, "ratio_tf32"), "0.5000");
  EXPECT_EQ(col(1, "cublas_tf32_spread"), "0.0200");
  EXPECT_EQ(col(1, "tf32_error_ratio"), "1874");
  EXPECT_EQ(col(1, "cublas_tf32_cold_ms"), "1.250000");
  EXPECT_EQ(col(1, "ratio_tf32_cold"), "0.5000");
  EXPECT_EQ(col(1, "tf32_reason"), "");
  EXPECT_EQ(col(1, "ratio"), "1.1000");
  // Failed: why, and no time, no ratio, no error ratio.
  EXPECT_EQ(col(2, "tf32_reason"), tf32_sample()[1].tf32_reason);
  for (const char* c : {"cublas_tf32_ms", "ratio_tf32", "tf32_error_ratio", "ratio_tf32_cold"})
    EXPECT_EQ(col(2, c), "") << c;
  // Not asked for, or not measured: every new column empty, never a zero.
  for (const size_t line : {3u, 4u}) {
    for (const auto& c : added) EXPECT_EQ(col(line, c), "") << line << " " << c;
  }
}

TEST(BenchTf32, JsonRowsCarryItsFieldsAndMatchTheSchema) {
  const auto rows = tf32_sample();
  const nlohmann::json j = rows[0];
  EXPECT_NEAR(j.at("ratio_tf32").get<double>(), 0.5, 1e-12);
  EXPECT_NEAR(j.at("ratio_tf32_cold").get<double>(), 0.5, 1e-12);
  EXPECT_EQ(j.at("cublas_tf32_ms"), 1.0);
  EXPECT_EQ(j.at("tf32_error_ratio"), 1874.25);
  EXPECT_FALSE(j.contains("tf32_reason"));
  const nlohmann::json failed = rows[1];
  EXPECT_EQ(failed.at("ratio_tf32"), 0);
  EXPECT_EQ(failed.at("tf32_reason"), rows[1].tf32_reason);
  const nlohmann::json plain = rows[2];
  EXPECT_EQ(plain.at("cublas_tf32_ms"), 0);  // always present, 0 when not timed
  EXPECT_EQ(plain.at("tf32_error_ratio"), 0);

  const fs::path source = SGT_TEST_SOURCE_DIR;
  const fs::path schemas = source / "docs" / "schemas";
  std::ifstream in(schemas / "bench.schema.json");
  const auto schema = nlohmann::json::parse(in);
  auto doc = schema.at("examples").at(0);
  EXPECT_EQ(doc.at("baselines"), nlohmann::json({"cublas", "cublaslt", "cublas-tf32"}));
  EXPECT_EQ(doc.at("cublas_tf32").at("compute"), "CUBLAS_COMPUTE_32F_FAST_TF32");
  EXPECT_EQ(doc.at("cublas_tf32").at("fp32_accurate"), false);
  doc["rows"] = rows;
  doc["summary"] = summarize_bench(rows);
  test::TempDir dir;
  std::ofstream(dir.path() / "doc.json") << doc.dump(2);
  auto broken = doc;
  broken["rows"][0].erase("tf32_error_ratio");
  std::ofstream(dir.path() / "broken.json") << broken.dump(2);
  auto unknown = doc;
  unknown["baselines"] = {"cublas", "cublas_tf32"};
  std::ofstream(dir.path() / "unknown.json") << unknown.dump(2);
  const std::string validate =
      "python3 " + test::sh_quote(source / "tests" / "bench" / "validate_bench_json.py") + " " +
      test::sh_quote(schemas) + " ";
  const auto ok = test::run_shell(validate + test::sh_quote(dir.path() / "doc.json"));
  if (ok.exit_code == 77) GTEST_SKIP() << ok.out;
  EXPECT_EQ(ok.exit_code, 0) << ok.out;
  const auto bad = test::run_shell(validate + test::sh_quote(dir.path() / "broken.json"));
  EXPECT_EQ(bad.exit_code, 1) << bad.out;
  EXPECT_NE(bad.out.find("tf32_error_ratio"), std::string::npos) << bad.out;
  const auto bad_name = test::run_shell(validate + test::sh_quote(dir.path() / "unknown.json"));
  EXPECT_EQ(bad_name.exit_code, 1) << bad_name.out;
}

TEST(BenchTf32, TableSaysItIsNotFp32AccurateAndGivesItsErrorRatio) {
  const auto rows = tf32_sample();
  const auto s = summarize_bench(rows);
  BenchTableOptions o;
  o.gpu_name = "NVIDIA H200";
  o.cublas_tf32 = true;
  o.flush = o.rotate = true;
  const auto t = bench_table(rows, s, o);
  for (const char* says :
       {"cuBLAS 1xTF32 (TF32 tensor cores: NOT FP32-accurate)", "TF32 ms", "ratio_tf32", "tf32_err",
        "1.87e+03", "ratio_tf32_cold", "CUBLAS_COMPUTE_32F_FAST_TF32", "is NOT FP32-accurate",
        "at most 1.05", "no cuBLAS 1xTF32 time for 1023x777x513 NT: round 2 (rotate): incorrect",
        "geometric mean of ratio_tf32 (cuBLAS 1xTF32, not FP32-accurate): 0.500",
        "geometric mean of ratio_tf32_cold (cuBLAS 1xTF32, cold L2): 0.500",
        "ratio_tf32 the same against cuBLAS 1xTF32",
        "suite (geometric means): 1.029x cuBLAS, 0.500x cuBLAS 1xTF32 with the L2 flushed"}) {
    EXPECT_NE(t.find(says), std::string::npos) << says << "\n" << t;
  }
  EXPECT_EQ(t.find(" 0.000 "), std::string::npos) << t;
  EXPECT_EQ(t.find("cuBLASLt"), std::string::npos) << t;  // not asked for

  // Not asked for: nothing of it, whatever the rows hold.
  o.cublas_tf32 = false;
  const auto plain = bench_table(rows, s, o);
  for (const char* absent : {"TF32", "tf32"})
    EXPECT_EQ(plain.find(absent), std::string::npos) << absent << "\n" << plain;
}

TEST(WorkerProtocolTf32, RequestRoundTripsAndBadOnesAreRefused) {
  Tf32Request r;
  r.warmup = 3;
  r.repetitions = 25;
  r.tolerance = 0.02;
  r.l2 = L2Mode::rotate;
  const auto j = tf32_request_json(r);
  EXPECT_EQ(j.at("op"), "cublas_tf32");
  EXPECT_EQ(j.at("l2"), "rotate");
  const auto back = tf32_request_from_json(j);
  EXPECT_EQ(back.warmup, 3);
  EXPECT_EQ(back.repetitions, 25);
  EXPECT_EQ(back.tolerance, 0.02);
  EXPECT_EQ(back.l2, L2Mode::rotate);
  // The defaults: two warm-ups as cuBLAS, flushed; the tolerance a TF32 result can meet.
  EXPECT_EQ(Tf32Request{}.tolerance, kTf32Tolerance);
  EXPECT_GT(kTf32Tolerance, 1e-4);
  const auto minimal =
      tf32_request_from_json({{"op", "cublas_tf32"}, {"reps", 5}, {"tolerance", 0.01}});
  EXPECT_EQ(minimal.warmup, 2);
  EXPECT_EQ(minimal.l2, L2Mode::flush);

  auto refused = [](nlohmann::json req, const std::string& says) {
    try {
      tf32_request_from_json(req);
      ADD_FAILURE() << "accepted " << req.dump();
    } catch (const std::exception& e) {
      EXPECT_NE(std::string(e.what()).find(says), std::string::npos) << e.what();
    }
  };
  refused({{"reps", 5}, {"tolerance", 0.01}, {"l2", "cold"}}, "unknown l2 mode 'cold'");
  refused({{"reps", 0}, {"tolerance", 0.01}}, "reps 0");
  refused({{"reps", 5}, {"warmup", -1}, {"tolerance", 0.01}}, "warmup -1");
  refused({{"reps", 5}, {"tolerance", 0.0}}, "tolerance 0 is not positive");
  refused({{"tolerance", 0.01}}, "reps");

  // The answer is a trial response: its error ratio survives, a non-finite one as 1e300.
  TrialResponse t;
  t.verify_error = 4.5e-4;
  t.error_ratio = 1874.25;
  t.time.median_ms = 1.0;
  t.time.repetitions = 20;
  auto rt = trial_response_from_json(trial_response_json(t));
  EXPECT_EQ(rt.status, TrialStatus::ok);
  EXPECT_EQ(rt.error_ratio, 1874.25);
  EXPECT_EQ(rt.verify_error, 4.5e-4);
  EXPECT_EQ(rt.stress_ratio, -1);
  t.error_ratio = INFINITY;
  EXPECT_EQ(trial_response_from_json(trial_response_json(t)).error_ratio, 1e300);
  // An answer without the field (as protocol 7's cublaslt answered) reads as not measured.
  auto old = trial_response_json(t);
  old.erase("error_ratio");
  EXPECT_EQ(trial_response_from_json(old).error_ratio, -1);
  EXPECT_EQ(kWorkerProtocol, 10);
}

// The worker, no GPU needed: every request that needs a set-up first is refused by name, the new
// one included, and an unknown op is named; the worker answers each and goes on.
TEST(WorkerProtocolTf32, TheWorkerNamesWhatARequestNeedsFirst) {
  const std::vector<std::pair<std::string, std::string>> asks = {
      {R"({"op": "cublas_tf32", "reps": 5, "tolerance": 0.01})", "cublas_tf32 before problem"},
      {R"({"op": "cublas", "reps": 5})", "cublas before problem"},
      {R"({"op": "rotation"})", "rotation before problem"},
      {R"({"op": "cublaslt_search", "max_algos": 4, "tolerance": 0.0001, "reps": 3})",
       "cuBLASLt before problem"},
      {R"({"op": "cublaslt", "algo": [0,0,0,0,0,0,0,0], "reps": 3, "tolerance": 0.0001})",
       "cuBLASLt before problem"},
      {R"({"op": "trial"})", "trial before problem"},
      {R"({"op": "verify"})", "verify before hello"},
      {R"({"op": "problem"})", "problem before hello"},
      {R"({"op": "frobnicate"})", "unknown op 'frobnicate'"},
  };
  std::string input;
  for (const auto& [req, says] : asks) input += req + "\n";
  test::TempDir dir;
  std::ofstream(dir.path() / "in.jsonl") << input;
  const auto r = test::run_shell(
      test::sh_quote(test::cli_path()) + " __worker < " + test::sh_quote(dir.path() / "in.jsonl"),
      false);
  EXPECT_EQ(r.exit_code, 0) << r.out;
  std::istringstream out(r.out);
  for (const auto& [req, says] : asks) {
    std::string line;
    ASSERT_TRUE(std::getline(out, line)) << "no answer to " << req << "\n" << r.out;
    const auto j = nlohmann::json::parse(line);
    EXPECT_FALSE(j.at("ok").get<bool>()) << line;
    EXPECT_NE(j.at("error").get<std::string>().find(says), std::string::npos)
        << req << " -> " << line;
  }
}

}  // namespace
}  // namespace sgt::tune
