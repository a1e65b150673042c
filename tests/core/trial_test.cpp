// Trials and their edge checks as JSON: round trips, files written before edge checks (or the phase
// and source keys) existed, the summaries the CLI prints, and the JSON-lines store that carries
// them.
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "error.hpp"
#include "jsonl_store.hpp"
#include "test_support.hpp"
#include "trial.hpp"

namespace sgt {
namespace {

EdgeCheck edge(std::string label, long long M, long long N, long long K, std::string layout,
               bool passed) {
  EdgeCheck e;
  e.label = std::move(label);
  e.problem.M = M;
  e.problem.N = N;
  e.problem.K = K;
  e.problem.layout = std::move(layout);
  e.lda = e.problem.layout[0] == 'N' ? K + 3 : M + 3;
  e.ldb = N + 1;
  e.ldc = N + 5;
  e.offset = 1;
  e.alpha = 1.5f;
  e.beta = -0.75f;
  e.passed = passed;
  e.error = passed ? 2.5e-7 : 0.31;
  e.reason = passed ? "" : "relative error 0.31 over the tolerance";
  return e;
}

Trial trial_with(std::vector<EdgeCheck> checks) {
  Trial t;
  t.config = test::config(test::kSeed);
  t.config_name = test::kSeed;
  t.problem.M = t.problem.N = t.problem.K = 4096;
  t.problem.layout = "TN";
  t.time = {1.0, 0.98, 1.03, 0.05, 20};
  t.gflops = 137000;
  t.verify_error = 1e-7;
  t.registers = 128;
  t.cublas_median_ms = 0.9;
  t.kernel_template = "sgemm_warptile";
  t.kernel_hash = "abc";
  t.tuner_version = "0.1.0-test";
  t.strategy = "exhaustive";
  t.phase = TrialPhase::final;
  t.seed = 42;
  t.timestamp = "2025-06-01T12:00:00Z";
  t.edge_checks = std::move(checks);
  return t;
}

TEST(EdgeCheckJson, RoundTripsEveryField) {
  const auto e = edge("tile+1", 129, 65, 17, "TN", false);
  const nlohmann::json j = e;
  EXPECT_EQ(j.at("label"), "tile+1");
  EXPECT_EQ(j.at("problem").at("M"), 129);
  EXPECT_EQ(j.at("problem").at("layout"), "TN");
  EXPECT_EQ(j.at("lda"), 132);
  EXPECT_EQ(j.at("offset"), 1);
  EXPECT_EQ(j.at("passed"), false);

  // Through text, as files and the database export carry it.
  const auto back = nlohmann::json::parse(j.dump()).get<EdgeCheck>();
  EXPECT_EQ(back.label, e.label);
  EXPECT_EQ(back.problem, e.problem);
  EXPECT_EQ(back.lda, e.lda);
  EXPECT_EQ(back.ldb, e.ldb);
  EXPECT_EQ(back.ldc, e.ldc);
  EXPECT_EQ(back.offset, e.offset);
  EXPECT_EQ(back.alpha, e.alpha);
  EXPECT_EQ(back.beta, e.beta);
  EXPECT_EQ(back.passed, e.passed);
  EXPECT_EQ(back.error, e.error);
  EXPECT_EQ(back.reason, e.reason);
}

TEST(EdgeCheckJson, DegenerateShapesAndAnUnmeasurableErrorSurvive) {
  // K = 0 (C = beta*C) and a NaN error: JSON writes null, which reads back as NaN.
  auto e = edge("K=0", 7, 5, 0, "TT", false);
  e.error = std::nan("");
  const auto text = nlohmann::json(e).dump();
  EXPECT_NE(text.find("\"error\":null"), std::string::npos) << text;
  const auto back = nlohmann::json::parse(text).get<EdgeCheck>();
  EXPECT_EQ(back.problem.K, 0);
  EXPECT_TRUE(std::isnan(back.error));
}

TEST(EdgeCheckJson, MissingFieldIsAnError) {
  auto j = nlohmann::json(edge("prime", 127, 131, 137, "NN", true));
  j.erase("ldb");
  EXPECT_THROW(j.get<EdgeCheck>(), nlohmann::json::exception);
}

TEST(TrialJson, CarriesEdgeChecksInOrder) {
  const auto t =
      trial_with({edge("1", 1, 1, 1, "TN", true), edge("tile-3", 125, 61, 13, "TN", true),
                  edge("prime", 127, 131, 137, "TN", false)});
  const nlohmann::json j = t;
  ASSERT_TRUE(j.at("edge_checks").is_array());
  ASSERT_EQ(j.at("edge_checks").size(), 3u);
  const auto back = nlohmann::json::parse(j.dump()).get<Trial>();
  ASSERT_EQ(back.edge_checks.size(), 3u);
  EXPECT_EQ(back.edge_checks[0].label, "1");
  EXPECT_EQ(back.edge_checks[1].problem.M, 125);
  EXPECT_EQ(back.edge_checks[2].passed, false);
  EXPECT_EQ(nlohmann::json(back), j);
}

TEST(TrialJson, FilesWrittenBeforeEdgeChecksStillLoad) {
  auto j = nlohmann::json(trial_with({}));
  EXPECT_TRUE(j.at("edge_checks").empty());
  j.erase("edge_checks");
  const auto back = j.get<Trial>();
  EXPECT_TRUE(back.edge_checks.empty());
  EXPECT_EQ(back.config_name, test::kSeed);

  j["edge_checks"] = nullptr;
  EXPECT_TRUE(j.get<Trial>().edge_checks.empty());
  j["edge_checks"] = "all fine";
  EXPECT_THROW(j.get<Trial>(), InputError);
}

// Statuses are stored as text: each one's name reads back as itself, inaccurate included, and an
// unknown name is refused rather than guessed.
TEST(TrialStatusNames, EveryStatusRoundTripsThroughItsName) {
  using S = TrialStatus;
  for (const S s : {S::ok, S::compile_failed, S::spills, S::resources, S::incorrect, S::crashed,
                    S::timeout, S::inaccurate}) {
    EXPECT_NE(to_string(s), "unknown");
    EXPECT_EQ(status_from_string(to_string(s)), s) << to_string(s);
  }
  EXPECT_EQ(to_string(S::inaccurate), "inaccurate");
  EXPECT_EQ(status_from_string("inaccurate"), S::inaccurate);
  EXPECT_FALSE(status_from_string("Inaccurate").has_value());

  auto t = trial_with({});
  t.status = S::inaccurate;
  t.reason = "error ratio 2.5 on the problem exceeds 1.05";
  const auto back = nlohmann::json::parse(nlohmann::json(t).dump()).get<Trial>();
  EXPECT_EQ(back.status, S::inaccurate);
  EXPECT_EQ(back.reason, t.reason);
}

// The accuracy against FP64 is written only where it was measured, and reads back as it was; a
// trial without it (every trial written before, every strict kernel's) reads as not measured.
TEST(TrialJson, ErrorRatiosAreWrittenOnlyWhereMeasured) {
  auto t = trial_with({});
  auto j = nlohmann::json(t);
  EXPECT_FALSE(j.contains("error_ratio"));
  EXPECT_FALSE(j.contains("stress_ratio"));
  EXPECT_FALSE(j.contains("stress_case"));
  auto back = j.get<Trial>();
  EXPECT_FALSE(back.error_ratio.has_value());
  EXPECT_FALSE(back.stress_ratio.has_value());
  EXPECT_EQ(back.stress_case, "");

  t.error_ratio = 0.97;
  t.stress_ratio = 1.02;
  t.stress_case = "underflow 128x128x1024 TN";
  j = nlohmann::json(t);
  EXPECT_EQ(j.at("error_ratio"), 0.97);
  back = nlohmann::json::parse(j.dump()).get<Trial>();
  EXPECT_EQ(back.error_ratio, 0.97);
  EXPECT_EQ(back.stress_ratio, 1.02);
  EXPECT_EQ(back.stress_case, "underflow 128x128x1024 TN");
  EXPECT_EQ(nlohmann::json(back), j);

  // Measured on the problem alone (no stress cases): no stress keys.
  t.stress_ratio.reset();
  t.stress_case.clear();
  j = nlohmann::json(t);
  EXPECT_FALSE(j.contains("stress_case"));
  EXPECT_EQ(j.get<Trial>().error_ratio, 0.97);

  j["error_ratio"] = nullptr;
  EXPECT_FALSE(j.get<Trial>().error_ratio.has_value());
  j["error_ratio"] = "close to 1";
  EXPECT_THROW(j.get<Trial>(), InputError);
}

// Phases and sources are stored as text, as statuses are: each name reads back as itself, and an
// unknown one is refused rather than guessed.
TEST(TrialRoleNames, EveryPhaseAndSourceRoundTripsThroughItsName) {
  for (const auto p : {TrialPhase::screen, TrialPhase::look, TrialPhase::final}) {
    EXPECT_NE(to_string(p), "unknown");
    EXPECT_EQ(phase_from_string(to_string(p)), p) << to_string(p);
  }
  EXPECT_EQ(to_string(TrialPhase::screen), "screen");
  EXPECT_EQ(to_string(TrialPhase::look), "look");
  EXPECT_EQ(to_string(TrialPhase::final), "final");
  EXPECT_FALSE(phase_from_string("edge").has_value());
  EXPECT_FALSE(phase_from_string("Final").has_value());
  for (const auto s : {TrialSource::measured, TrialSource::replayed}) {
    EXPECT_NE(to_string(s), "unknown");
    EXPECT_EQ(source_from_string(to_string(s)), s) << to_string(s);
  }
  EXPECT_EQ(to_string(TrialSource::measured), "measured");
  EXPECT_EQ(to_string(TrialSource::replayed), "replayed");
  EXPECT_FALSE(source_from_string("replay").has_value());
}

// A trial's phase and source are keys of their own, and the strategy is its name alone. A trial
// written before (no such keys: export format 1, datasets 1 and 2, older --results lines) had
// both in its strategy, and reads with the same meaning.
TEST(TrialJson, PhaseAndSourceAreKeysAndOlderTrialsTakeThemFromTheStrategy) {
  auto t = trial_with({});
  t.source = TrialSource::replayed;
  auto j = nlohmann::json(t);
  EXPECT_EQ(j.at("strategy"), "exhaustive");
  EXPECT_EQ(j.at("phase"), "final");
  EXPECT_EQ(j.at("source"), "replayed");
  auto back = nlohmann::json::parse(j.dump()).get<Trial>();
  EXPECT_EQ(back.strategy, "exhaustive");
  EXPECT_EQ(back.phase, TrialPhase::final);
  EXPECT_EQ(back.source, TrialSource::replayed);
  EXPECT_EQ(nlohmann::json(back), j);

  struct Old {
    const char* strategy;
    const char* name;
    TrialPhase phase;
    TrialSource source;
  };
  const Old old[] = {
      {"model", "model", TrialPhase::screen, TrialSource::measured},
      {"model/final", "model", TrialPhase::final, TrialSource::measured},
      {"anneal/look", "anneal", TrialPhase::look, TrialSource::measured},
      {"replay/exhaustive", "exhaustive", TrialPhase::screen, TrialSource::replayed},
      {"replay/exhaustive/final", "exhaustive", TrialPhase::final, TrialSource::replayed},
      {"replay/random/look", "random", TrialPhase::look, TrialSource::replayed},
      {"fixture-test", "fixture-test", TrialPhase::screen, TrialSource::measured},
  };
  for (const auto& o : old) {
    j.erase("phase");
    j.erase("source");
    j["strategy"] = o.strategy;
    back = j.get<Trial>();
    EXPECT_EQ(back.strategy, o.name) << o.strategy;
    EXPECT_EQ(back.phase, o.phase) << o.strategy;
    EXPECT_EQ(back.source, o.source) << o.strategy;
    // Written again, it is today's form.
    const auto again = nlohmann::json(back);
    EXPECT_EQ(again.at("strategy"), o.name);
    EXPECT_EQ(again.at("phase"), to_string(o.phase));
    EXPECT_EQ(again.at("source"), to_string(o.source));
  }

  // With the keys, the strategy is taken as written: no suffix is read into it.
  j["strategy"] = "exhaustive/final";
  j["phase"] = "screen";
  j["source"] = "measured";
  back = j.get<Trial>();
  EXPECT_EQ(back.strategy, "exhaustive/final");
  EXPECT_EQ(back.phase, TrialPhase::screen);

  auto one = j;
  one.erase("source");
  EXPECT_THROW(one.get<Trial>(), InputError);
  auto unknown = j;
  unknown["phase"] = "edge";
  EXPECT_THROW(unknown.get<Trial>(), InputError);
  unknown = j;
  unknown["source"] = "simulated";
  EXPECT_THROW(unknown.get<Trial>(), InputError);
}

TEST(EdgeCheckSummary, SaysAllPassedOrNamesTheFailures) {
  EXPECT_EQ(edge_check_summary({}), "not verified on edge cases");

  std::vector<EdgeCheck> ok;
  for (int i = 0; i < 23; ++i)
    ok.push_back(edge("case" + std::to_string(i), 1 + i, 2, 3, "NN", true));
  EXPECT_EQ(edge_checks_passed(ok), 23);
  EXPECT_EQ(edge_check_summary(ok), "verified on 23 edge cases: all passed");

  auto some = ok;
  some[4] = edge("tile+1", 129, 65, 17, "NT", false);
  some[9] = edge("prime", 127, 131, 137, "NT", false);
  some[9].reason.clear();  // no reason: the error is shown instead
  EXPECT_EQ(edge_checks_passed(some), 21);
  const auto s = edge_check_summary(some);
  EXPECT_EQ(s.rfind("verified on 23 edge cases: 2 failed:", 0), 0u) << s;
  EXPECT_NE(s.find("tile+1 129x65x17 NT (relative error 0.31 over the tolerance)"),
            std::string::npos)
      << s;
  EXPECT_NE(s.find("prime 127x131x137 NT (error 0.31)"), std::string::npos) << s;
  EXPECT_EQ(s.find("case4"), std::string::npos) << s;

  const auto j = edge_check_tally_json(some);
  EXPECT_EQ(j.at("total"), 23);
  EXPECT_EQ(j.at("passed"), 21);
  EXPECT_EQ(j.at("all_passed"), false);
  EXPECT_EQ(j.at("failed"), nlohmann::json({"tile+1", "prime"}));
  EXPECT_EQ(edge_check_tally_json(ok).at("all_passed"), true);
  EXPECT_EQ(edge_check_tally_json({}).at("all_passed"), false);
}

TEST(JsonLinesStore, KeepsEdgeChecksAndReadsOldLines) {
  test::TempDir dir;
  const auto path = dir.path() / "results.jsonl";
  // A line as written before edge checks existed, with no "edge_checks" key (nor "phase" and
  // "source", which came later still): a screening trial.
  auto old = nlohmann::json(trial_with({}));
  old.erase("edge_checks");
  old.erase("phase");
  old.erase("source");
  old["strategy"] = "exhaustive";
  std::ofstream(path) << old.dump() << "\n";

  Trial fresh = trial_with({edge("offset", 130, 66, 18, "TN", true)});
  fresh.phase = TrialPhase::screen;
  fresh.config = test::config("wt_128x64x16_w64x32_wn2_t4x4_n128_mb2");
  fresh.config_name = "wt_128x64x16_w64x32_wn2_t4x4_n128_mb2";
  {
    JsonLinesStore store(path);
    store.begin(GpuFingerprint{}, fresh.problem);
    const auto found = store.finished(test::kSeed, "abc");
    ASSERT_TRUE(found.has_value());
    EXPECT_TRUE(found->edge_checks.empty());
    store.record(fresh);
  }
  JsonLinesStore again(path);
  again.begin(GpuFingerprint{}, fresh.problem);
  const auto back = again.finished(fresh.config_name, "abc");
  ASSERT_TRUE(back.has_value());
  ASSERT_EQ(back->edge_checks.size(), 1u);
  EXPECT_EQ(back->edge_checks[0].label, "offset");
  EXPECT_EQ(back->edge_checks[0].problem.layout, "TN");
}

// A --results file of an earlier release marks a finalist's re-timing by its strategy only
// ("<strategy>/final"): resumed, that line is still a finalist, never the config's screening trial.
TEST(JsonLinesStore, AnOlderFinalistLineIsNotAScreeningTrial) {
  test::TempDir dir;
  const auto path = dir.path() / "results.jsonl";
  auto line = nlohmann::json(trial_with({}));
  line.erase("phase");
  line.erase("source");
  line["strategy"] = "replay/exhaustive/final";
  std::ofstream(path) << line.dump() << "\n";
  JsonLinesStore store(path);
  store.begin(GpuFingerprint{}, trial_with({}).problem);
  EXPECT_FALSE(store.finished(test::kSeed, "abc").has_value());

  line["strategy"] = "replay/exhaustive";
  std::ofstream(path, std::ios::app) << line.dump() << "\n";
  JsonLinesStore again(path);
  again.begin(GpuFingerprint{}, trial_with({}).problem);
  const auto found = again.finished(test::kSeed, "abc");
  ASSERT_TRUE(found.has_value());
  EXPECT_EQ(found->strategy, "exhaustive");
  EXPECT_EQ(found->phase, TrialPhase::screen);
  EXPECT_EQ(found->source, TrialSource::replayed);
}

TEST(Trial, GpusShareATuneOnlyWhenTheirModelClocksAndDriverAgree) {
  GpuFingerprint a;
  a.name = "NVIDIA H200";
  a.uuid = "GPU-a";
  a.cc_major = 9;
  a.sm_count = 132;
  a.sm_clock_khz = 1980000;
  a.driver_version = 13000;
  a.memory_bytes = 150LL << 30;
  GpuFingerprint b = a;
  b.uuid = "GPU-b";
  b.memory_bytes = 140LL << 30;  // memory and UUID may differ
  b.driver_version = 13010;      // so may the driver's minor version
  b.sm_clock_khz = 1965000;      // and the clock within 2 %
  EXPECT_EQ(model_difference(a, b), "");
  GpuFingerprint c = a;
  c.name = "NVIDIA H100 80GB HBM3";
  EXPECT_NE(model_difference(a, c).find("H100"), std::string::npos);
  c = a;
  c.sm_count = 114;
  EXPECT_NE(model_difference(a, c).find("132 SMs against 114"), std::string::npos);
  c = a;
  c.sm_clock_khz = 1755000;
  EXPECT_NE(model_difference(a, c).find("SM clock"), std::string::npos);
  c = a;
  c.driver_version = 12080;
  EXPECT_NE(model_difference(a, c).find("driver 13 against 12"), std::string::npos);
  c = a;
  c.cc_minor = 1;
  EXPECT_NE(model_difference(a, c).find("sm_91"), std::string::npos);
}

}  // namespace
}  // namespace sgt
