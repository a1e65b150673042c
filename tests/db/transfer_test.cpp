// Moving trials between databases: JSON export/import round trip, idempotent merge with winners
// that follow, and imports that fail whole.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>

#include "db_test_util.hpp"
#include "error.hpp"
#include "test_support.hpp"

namespace sgt::db {
namespace {

using test::make_trial;
using test::shape;
using test::TempDir;

// Everything but row ids, which are local to a file.
nlohmann::json content(const SqliteStore& s) {
  auto j = s.export_json();
  j.erase("exported_at");
  return j;
}

std::vector<std::pair<std::string, long long>> rows(const SqliteStore& s) {
  return s.info().rows;
}

// Importing `j` into `s` throws InputError whose message holds `needle` and `also`.
void expect_import_refused(SqliteStore& s, const nlohmann::json& j, const std::string& needle,
                           const std::string& also) {
  try {
    s.import_json(j, "bad.json");
    ADD_FAILURE() << "imported " << needle;
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find(also), std::string::npos) << e.what();
  }
}

void fill(SqliteStore& s) {
  const auto big = shape(4096, 4096, 4096), odd = shape(4093, 1021, 257);
  s.begin(test::h200(), big);
  s.record(make_trial(big, 0, 2.0));
  s.record(make_trial(big, 1, 1.5, TrialStatus::spills));
  s.record(make_trial(big, 2, 0.0, TrialStatus::compile_failed));
  s.begin(test::a100(), odd);
  s.record(make_trial(odd, 3, 0.25));
  s.record(make_trial(odd, 4, 0.5, TrialStatus::timeout));
}

TEST(Transfer, ExportImportRoundTrip) {
  TempDir dir;
  auto a = SqliteStore::open(dir.path() / "a.db", OpenMode::read_write);
  fill(a);
  const auto file = dir.path() / "export.json";
  EXPECT_EQ(a.export_json(file), 5);
  ASSERT_TRUE(std::filesystem::exists(file));
  EXPECT_EQ(nlohmann::json::parse(test::read_bytes(file)).at("format"), "sgemm-tune-trials");

  auto b = SqliteStore::open(dir.path() / "b.db", OpenMode::read_write);
  const auto r = b.import_json(file);
  EXPECT_EQ(r.trials_added, 5);
  EXPECT_EQ(r.trials_skipped, 0);
  EXPECT_EQ(r.gpus_added, 2);
  EXPECT_EQ(content(b), content(a));
  const auto ta = a.trials(), tb = b.trials();
  ASSERT_EQ(ta.size(), tb.size());
  for (size_t i = 0; i < ta.size(); ++i) {
    EXPECT_EQ(test::as_json(ta[i].trial), test::as_json(tb[i].trial));
    EXPECT_EQ(ta[i].gpu, tb[i].gpu);
    EXPECT_EQ(ta[i].driver_version, tb[i].driver_version);
  }

  const auto again = b.import_json(file);
  EXPECT_EQ(again.trials_added, 0);
  EXPECT_EQ(again.trials_skipped, 5);
  EXPECT_EQ(content(b), content(a));
}

// Export format 2 writes each trial's phase and source as keys of their own; a file of format 1
// (every export and dataset written before) has both in the strategy, and imports with the same
// meaning: the same trials, a finalist and its screening trial in the same second both kept.
TEST(Transfer, AFormat1ExportImportsWithThePhaseAndSourceItsStrategyCarried) {
  TempDir dir;
  const auto p = shape(1024, 1024, 1024);
  auto a = SqliteStore::open(dir.path() / "a.db", OpenMode::read_write);
  a.begin(test::h200(), p);
  auto screened = make_trial(p, 0, 1.0);
  screened.strategy = "model";
  auto final = screened;
  final.phase = TrialPhase::final;
  final.time.median_ms = 0.95;
  final.edge_checks = test::edge_checks(p, 2);
  auto look = make_trial(p, 1, 1.1);
  look.strategy = "model";
  look.phase = TrialPhase::look;
  auto replayed = make_trial(p, 2, 1.2);
  replayed.strategy = "exhaustive";
  replayed.source = TrialSource::replayed;
  auto replayed_final = replayed;
  replayed_final.phase = TrialPhase::final;
  for (const auto& t : {screened, final, look, replayed, replayed_final}) a.record(t);

  auto j = a.export_json();
  EXPECT_EQ(j.at("format_version"), 2);
  // As a release before wrote it.
  j["format_version"] = 1;
  // (strategy as written today, as written before)
  const std::vector<std::pair<std::string, std::string>> legacy = {
      {"model", "model"},
      {"model", "model/final"},
      {"model", "model/look"},
      {"exhaustive", "replay/exhaustive"},
      {"exhaustive", "replay/exhaustive/final"}};
  ASSERT_EQ(j.at("trials").size(), legacy.size());
  for (size_t i = 0; i < legacy.size(); ++i) {
    auto& t = j["trials"][i]["trial"];
    EXPECT_EQ(t.at("strategy"), legacy[i].first);
    t["strategy"] = legacy[i].second;
    t.erase("phase");
    t.erase("source");
  }
  auto b = SqliteStore::open(dir.path() / "b.db", OpenMode::read_write);
  const auto r = b.import_json(j, "format1.json");
  EXPECT_EQ(r.trials_added, 5);
  EXPECT_EQ(r.edge_checks_added, 2);
  const auto ta = a.trials(), tb = b.trials();
  ASSERT_EQ(ta.size(), tb.size());
  for (size_t i = 0; i < ta.size(); ++i)
    EXPECT_EQ(test::as_json(ta[i].trial), test::as_json(tb[i].trial)) << legacy[i].second;
  EXPECT_EQ(content(b), content(a));
  // The format-2 export of the same trials is the same measurements: nothing added.
  EXPECT_EQ(b.import_json(a.export_json(), "format2.json").trials_added, 0);
}

TEST(Transfer, UntimedTrialsSurviveTheJsonFile) {
  // JSON text has no NaN: the export writes null and the import reads it back as NaN.
  TempDir dir;
  const auto p = shape(64, 64, 64);
  auto a = SqliteStore::open(dir.path() / "a.db", OpenMode::read_write);
  a.begin(test::h200(), p);
  auto t = make_trial(p, 0, 1.0, TrialStatus::crashed);
  t.time.median_ms = t.time.min_ms = t.time.max_ms = t.time.spread = std::nan("");
  t.gflops = std::nan("");
  a.record(t);
  const auto file = dir.path() / "e.json";
  a.export_json(file);
  auto b = SqliteStore::open(dir.path() / "b.db", OpenMode::read_write);
  ASSERT_EQ(b.import_json(file).trials_added, 1);
  const auto back = b.trials().at(0).trial;
  EXPECT_TRUE(std::isnan(back.time.median_ms));
  EXPECT_TRUE(std::isnan(back.gflops));
  EXPECT_EQ(back.status, TrialStatus::crashed);
  EXPECT_EQ(b.import_json(file).trials_skipped, 1);
}

TEST(Transfer, MergeIsIdempotentKeepsEveryTrialAndWinnersFollow) {
  TempDir dir;
  const auto big = shape(4096, 4096, 4096);
  const auto h200 = GpuIdentity::of(test::h200());
  auto a = SqliteStore::open(dir.path() / "a.db", OpenMode::read_write);
  fill(a);
  // b = a's trials plus a faster config for `big` and a new shape.
  auto b = SqliteStore::open(dir.path() / "b.db", OpenMode::read_write);
  b.import_json(a.export_json(), "a");
  b.begin(test::h200(), big);
  b.record(make_trial(big, 10, 0.75));
  b.begin(test::h200(), shape(128, 128, 128));
  b.record(make_trial(shape(128, 128, 128), 11, 0.01));

  ASSERT_EQ(a.winner(h200, big)->best.trial.config_name, to_name(test::config_n(0)));
  const auto r = a.merge(b.path());
  EXPECT_EQ(r.trials_added, 2);
  EXPECT_EQ(r.trials_skipped, 5);
  EXPECT_EQ(a.trials().size(), 7u);
  EXPECT_EQ(a.winner(h200, big)->best.trial.config_name, to_name(test::config_n(10)));
  EXPECT_TRUE(a.winner(h200, shape(128, 128, 128)));

  const auto counts = rows(a);
  const auto before = content(a);
  const auto r2 = a.merge(b.path());
  EXPECT_EQ(r2.trials_added, 0);
  EXPECT_EQ(r2.trials_skipped, 7);
  EXPECT_EQ(r2.gpus_added, 0);
  EXPECT_EQ(rows(a), counts);
  EXPECT_EQ(content(a), before);

  // Merging the other way round converges to the same content.
  b.merge(a.path());
  EXPECT_EQ(content(b).at("trials").size(), content(a).at("trials").size());
}

// Two winners verified on edge shapes (one NN, one TN), one trial without checks.
void fill_verified(SqliteStore& s) {
  const auto nn = shape(2048, 2048, 2048), tn = shape(1000, 3000, 257, "TN");
  s.begin(test::h200(), nn);
  auto a = make_trial(nn, 20, 1.0);
  a.edge_checks = test::edge_checks(nn, 23);
  s.record(a);
  s.record(make_trial(nn, 21, 2.0));
  s.begin(test::h200(), tn);
  auto b = make_trial(tn, 22, 0.5);
  b.edge_checks = test::edge_checks(tn, 7, 2);
  s.record(b);
}

long long edge_rows(const SqliteStore& s) {
  return test::count_rows(s.path(), "SELECT count(*) FROM edge_checks");
}

TEST(Transfer, ExportImportCarriesEdgeChecks) {
  TempDir dir;
  auto a = SqliteStore::open(dir.path() / "a.db", OpenMode::read_write);
  fill_verified(a);
  const auto file = dir.path() / "e.json";
  EXPECT_EQ(a.export_json(file), 3);
  const auto j = nlohmann::json::parse(test::read_bytes(file));
  EXPECT_EQ(j.at("trials")[0].at("trial").at("edge_checks").size(), 23u);
  EXPECT_TRUE(j.at("trials")[1].at("trial").at("edge_checks").empty());

  auto b = SqliteStore::open(dir.path() / "b.db", OpenMode::read_write);
  auto r = b.import_json(file);
  EXPECT_EQ(r.trials_added, 3);
  EXPECT_EQ(r.edge_checks_added, 30);
  EXPECT_EQ(content(b), content(a));
  EXPECT_EQ(edge_rows(b), 30);
  r = b.import_json(file);
  EXPECT_EQ(r.trials_added, 0);
  EXPECT_EQ(r.edge_checks_added, 0);
  EXPECT_EQ(edge_rows(b), 30);
  EXPECT_EQ(content(b), content(a));

  // An export written before edge checks existed (no key) still imports.
  auto old = j;
  for (auto& t : old["trials"]) t["trial"].erase("edge_checks");
  auto c = SqliteStore::open(dir.path() / "c.db", OpenMode::read_write);
  r = c.import_json(old, "old.json");
  EXPECT_EQ(r.trials_added, 3);
  EXPECT_EQ(r.edge_checks_added, 0);
  // ... and the verified export then attaches the checks to the very same trials.
  r = c.import_json(file);
  EXPECT_EQ(r.trials_added, 0);
  EXPECT_EQ(r.trials_skipped, 3);
  EXPECT_EQ(r.edge_checks_added, 30);
  EXPECT_EQ(content(c), content(a));

  auto negative = j;
  negative["trials"][2]["trial"]["edge_checks"][1]["problem"]["M"] = -1;
  auto d = SqliteStore::open(dir.path() / "d.db", OpenMode::read_write);
  try {
    d.import_json(negative, "neg.json");
    ADD_FAILURE() << "imported an edge check of negative size";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("edge check 1"), std::string::npos) << e.what();
  }
  EXPECT_TRUE(d.trials().empty());
}

TEST(Transfer, MergeCarriesEdgeChecksAndTwiceIsANoOp) {
  TempDir dir;
  auto a = SqliteStore::open(dir.path() / "a.db", OpenMode::read_write);
  fill(a);
  auto b = SqliteStore::open(dir.path() / "b.db", OpenMode::read_write);
  fill_verified(b);

  auto r = a.merge(b.path());
  EXPECT_EQ(r.trials_added, 3);
  EXPECT_EQ(r.edge_checks_added, 30);
  EXPECT_EQ(edge_rows(a), 30);
  const auto w = a.winner(GpuIdentity::of(test::h200()), shape(1000, 3000, 257, "TN"));
  ASSERT_TRUE(w);
  EXPECT_EQ(w->best.trial.edge_checks.size(), 7u);
  EXPECT_EQ(edge_checks_passed(w->best.trial.edge_checks), 5);

  const auto counts = rows(a);
  const auto before = content(a);
  r = a.merge(b.path());
  EXPECT_EQ(r.trials_added, 0);
  EXPECT_EQ(r.edge_checks_added, 0);
  EXPECT_EQ(rows(a), counts);
  EXPECT_EQ(content(a), before);
  EXPECT_EQ(edge_rows(a), 30);
}

TEST(Transfer, MergeAttachesChecksToATrialStoredUnverified) {
  // The same measurement, stored before its winner was verified in one database and after in the
  // other: merging brings the checks, never twice, and never replaces checks already there.
  TempDir dir;
  const auto p = shape(512, 512, 512);
  auto t = make_trial(p, 0, 1.0);
  auto a = SqliteStore::open(dir.path() / "a.db", OpenMode::read_write);
  a.begin(test::h200(), p);
  a.record(t);
  auto b = SqliteStore::open(dir.path() / "b.db", OpenMode::read_write);
  b.begin(test::h200(), p);
  t.edge_checks = test::edge_checks(p, 9, 1);
  b.record(t);

  auto r = a.merge(b.path());
  EXPECT_EQ(r.trials_added, 0);
  EXPECT_EQ(r.trials_skipped, 1);
  EXPECT_EQ(r.edge_checks_added, 9);
  ASSERT_EQ(a.trials().size(), 1u);
  EXPECT_EQ(test::as_json(a.trials()[0].trial), test::as_json(t));
  EXPECT_EQ(a.merge(b.path()).edge_checks_added, 0);
  EXPECT_EQ(edge_rows(a), 9);
  EXPECT_EQ(content(a).at("trials"), content(b).at("trials"));
  const nlohmann::json j = r;
  EXPECT_EQ(j.at("edge_checks_added"), 9);
}

TEST(Transfer, MergeTakesTheLaterGpuFingerprint) {
  TempDir dir;
  const auto p = shape(256, 256, 256);
  auto a = SqliteStore::open(dir.path() / "a.db", OpenMode::read_write);
  a.begin(test::h200(13000), p);
  auto j = a.export_json();
  j["gpus"][0]["driver_version"] = 13050;
  j["gpus"][0]["last_seen"] = "2999-01-01T00:00:00Z";
  auto b = SqliteStore::open(dir.path() / "b.db", OpenMode::read_write);
  b.import_json(j, "later");
  a.merge(b.path());
  EXPECT_EQ(a.gpu(GpuIdentity::of(test::h200()))->fingerprint.driver_version, 13050);
  j["gpus"][0]["driver_version"] = 12000;
  j["gpus"][0]["last_seen"] = "2000-01-01T00:00:00Z";
  a.import_json(j, "earlier");
  EXPECT_EQ(a.gpu(GpuIdentity::of(test::h200()))->fingerprint.driver_version, 13050);
}

TEST(Transfer, MergeRefusesItselfAndMissingFiles) {
  TempDir dir;
  auto a = SqliteStore::open(dir.path() / "a.db", OpenMode::read_write);
  EXPECT_THROW(a.merge(a.path()), InputError);
  EXPECT_THROW(a.merge(dir.path() / "nope.db"), InputError);
  EXPECT_FALSE(std::filesystem::exists(dir.path() / "nope.db"));
}

TEST(Transfer, BadImportsImportNothing) {
  TempDir dir;
  auto a = SqliteStore::open(dir.path() / "a.db", OpenMode::read_write);
  fill(a);
  const auto good = a.export_json();
  auto b = SqliteStore::open(dir.path() / "b.db", OpenMode::read_write);
  const auto p = shape(64, 64, 64);
  b.begin(test::h200(), p);
  b.record(make_trial(p, 0, 1.0));
  const auto before = content(b);

  auto expect_refused = [&](const nlohmann::json& j, const std::string& needle) {
    expect_import_refused(b, j, needle, "bad.json");
    EXPECT_EQ(content(b), before);
  };
  expect_refused(nlohmann::json::array(), "not an sgemm-tune export");
  auto newer = good;
  newer["format_version"] = 99;
  expect_refused(newer, "format_version 99");
  auto broken_last = good;
  broken_last["trials"].back()["trial"].erase("timestamp");
  expect_refused(broken_last, "trial 4");
  auto bad_status = good;
  bad_status["trials"][1]["trial"]["status"] = "exploded";
  expect_refused(bad_status, "exploded");
  auto unknown_gpu = good;
  unknown_gpu["gpus"].erase(1);
  expect_refused(unknown_gpu, "not listed");
  auto renamed = good;
  renamed["trials"][0]["trial"]["config_name"] = "wt_1x1x1_w1x1_wn1_t1x1_n1_mb1";
  expect_refused(renamed, "does not match");

  const auto text_file = dir.path() / "not.json";
  test::write_bytes(text_file, "{ this is not json");
  EXPECT_THROW(b.import_json(text_file), InputError);
  EXPECT_THROW(b.import_json(dir.path() / "missing.json"), InputError);
  EXPECT_EQ(content(b), before);
}

// An import holds what a tune could have written, checked with the tune's own rules; the first
// field that no tune writes refuses the whole file, named, and nothing is imported.
TEST(Transfer, ImportValidatesEveryFieldAsATuneWould) {
  TempDir dir;
  auto a = SqliteStore::open(dir.path() / "a.db", OpenMode::read_write);
  fill(a);
  const auto good = a.export_json();
  auto b = SqliteStore::open(dir.path() / "b.db", OpenMode::read_write);
  const auto before = content(b);
  auto expect_refused = [&](const nlohmann::json& j, const std::string& needle) {
    expect_import_refused(b, j, needle, "nothing was imported");
    EXPECT_EQ(content(b), before);
  };
  auto with = [&](const std::function<void(nlohmann::json&)>& edit) {
    auto j = good;
    edit(j["trials"][0]["trial"]);
    return j;
  };
  // A config that breaks a rule (WNITER 3 does not divide the warp tile), stored as ok, with its
  // own matching name: it would be served as an exact winner.
  const auto broken = *from_name("wt_128x128x8_w64x64_wn3_t8x8_n128_mb1");
  expect_refused(with([&](nlohmann::json& t) {
                   t["config"] = broken;
                   t["config_name"] = to_name(broken);
                 }),
                 "breaks rule");
  expect_refused(with([](nlohmann::json& t) { t["problem"]["layout"] = "XY"; }), "layout 'XY'");
  expect_refused(with([](nlohmann::json& t) { t["problem"]["dtype"] = "zz"; }), "dtype 'zz'");
  expect_refused(with([](nlohmann::json& t) { t["time"]["median_ms"] = -1.0; }),
                 "time.median_ms -1");
  expect_refused(with([](nlohmann::json& t) { t["registers"] = 12.5; }), "registers 12.5");
  expect_refused(with([](nlohmann::json& t) { t["registers"] = 4096; }), "registers 4096");
  expect_refused(with([](nlohmann::json& t) { t["timestamp"] = "yesterday"; }),
                 "timestamp 'yesterday'");
  expect_refused(with([](nlohmann::json& t) { t["spill_bytes"] = -8; }), "spill_bytes -8");
  expect_refused(with([](nlohmann::json& t) { t["time"]["median_ms"] = nullptr; }),
                 "status ok with time.median_ms");
  // The unchanged export still imports whole.
  EXPECT_EQ(b.import_json(good, "good.json").trials_added, 5);
}

// The accuracy of a kernel of a non-strict precision class goes with its trial through export,
// import and merge, the status inaccurate too; a trial without it stays without.
TEST(Transfer, ExportImportAndMergeCarryTheAccuracyAgainstFp64) {
  TempDir dir;
  const auto p = shape(2048, 1024, 512, "TN");
  auto a = SqliteStore::open(dir.path() / "a.db", OpenMode::read_write);
  a.begin(test::h200(), p);
  auto accurate = make_trial(p, 0, 0.4);
  accurate.error_ratio = 0.99;
  accurate.stress_ratio = 1.04;
  accurate.stress_case = "exponents 128x128x1024 TN";
  a.record(accurate);
  auto inaccurate = make_trial(p, 1, 0.0, TrialStatus::inaccurate);
  inaccurate.error_ratio = 3.25;
  a.record(inaccurate);  // failed on the problem: no stress case measured
  a.record(make_trial(p, 2, 0.5));
  const auto file = dir.path() / "export.json";
  EXPECT_EQ(a.export_json(file), 3);
  auto b = SqliteStore::open(dir.path() / "b.db", OpenMode::read_write);
  EXPECT_EQ(b.import_json(file).trials_added, 3);
  auto c = SqliteStore::open(dir.path() / "c.db", OpenMode::read_write);
  EXPECT_EQ(c.merge(a.path()).trials_added, 3);
  for (const SqliteStore* s : {&b, &c}) {
    EXPECT_EQ(content(*s), content(a));
    const auto t = s->trials();
    ASSERT_EQ(t.size(), 3u);
    EXPECT_EQ(t[0].trial.error_ratio, 0.99);
    EXPECT_EQ(t[0].trial.stress_ratio, 1.04);
    EXPECT_EQ(t[0].trial.stress_case, "exponents 128x128x1024 TN");
    EXPECT_EQ(t[1].trial.status, TrialStatus::inaccurate);
    EXPECT_EQ(t[1].trial.error_ratio, 3.25);
    EXPECT_FALSE(t[1].trial.stress_ratio.has_value());
    EXPECT_FALSE(t[2].trial.error_ratio.has_value());
  }
  // A ratio no measurement gives is refused, named.
  auto bad = a.export_json();
  bad["trials"][0]["trial"]["error_ratio"] = -0.5;
  auto d = SqliteStore::open(dir.path() / "d.db", OpenMode::read_write);
  expect_import_refused(d, bad, "error_ratio -0.5", "nothing was imported");
  bad = a.export_json();
  bad["trials"][0]["trial"].erase("stress_case");
  expect_import_refused(d, bad, "stress_ratio without its stress_case", "nothing was imported");
}

TEST(Transfer, VacuumKeepsEveryTrial) {
  TempDir dir;
  auto a = SqliteStore::open(dir.path() / "a.db", OpenMode::read_write);
  fill(a);
  const auto before = content(a);
  a.vacuum();
  EXPECT_EQ(content(a), before);
  EXPECT_EQ(a.integrity_check(), "ok");
  const auto info = a.info(true);
  EXPECT_EQ(info.integrity, "ok");
  EXPECT_EQ(info.wal_bytes, 0);
  EXPECT_GT(info.file_bytes, 0);
}

}  // namespace
}  // namespace sgt::db
