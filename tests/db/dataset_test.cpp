// Dataset files: written from a store, read back field for field, plain or gzip; damaged or
// foreign files refused with the reason.
#include <gtest/gtest.h>

#include <set>

#include "dataset.hpp"
#include "db_test_util.hpp"
#include "error.hpp"
#include "file_util.hpp"
#include "test_support.hpp"

namespace sgt::db {
namespace {

struct Written {
  test::TempDir dir;
  std::vector<Trial> trials;
  Problem p = test::shape(512, 256, 128, "NT");
  DatasetSpec spec;
  std::filesystem::path db() const { return dir.path() / "t.db"; }
};

void fill(Written& w, int n) {
  auto store = SqliteStore::open(w.db(), OpenMode::read_write);
  store.begin(test::h200(), w.p);
  for (int i = 0; i < n; ++i) {
    auto t = test::make_trial(w.p, i, 0.5 + 0.01 * i);
    t.compile_s = 1.5 + i;
    t.measure_s = 0.02 * (i + 1);
    store.record(t);
    w.trials.push_back(t);
  }
  // Another problem's trial stays out of the dataset.
  store.begin(test::h200(), test::shape(64, 64, 64));
  store.record(test::make_trial(test::shape(64, 64, 64), 0, 0.1));
  w.spec.gpu = GpuIdentity::of(test::h200());
  w.spec.problem = w.p;
  w.spec.space = "made-up";
  w.spec.command = "sgemm-tune tune ...";
  for (const auto& t : w.trials) w.spec.candidates.push_back(t.config_name);
}

TEST(Dataset, WritesAndReadsBackEveryTrialPlainAndGzip) {
  Written w;
  fill(w, 5);
  auto store = SqliteStore::open(w.db(), OpenMode::read_only);
  for (const char* name : {"d.json", "d.json.gz"}) {
    const auto file = w.dir.path() / name;
    const auto h = write_dataset(store, w.spec, file);
    EXPECT_TRUE(h.complete);
    EXPECT_EQ(h.measured, 5);
    EXPECT_EQ(is_gzip(*read_file(file)), std::string(name).ends_with(".gz"));
    EXPECT_TRUE(is_json_recording(file));
    const auto ds = read_dataset(file);
    EXPECT_EQ(ds.header.problem, w.p);
    EXPECT_EQ(ds.header.command, w.spec.command);
    EXPECT_EQ(ds.gpu.fingerprint.uuid, test::h200().uuid);
    ASSERT_EQ(ds.trials.size(), w.trials.size());
    for (size_t i = 0; i < w.trials.size(); ++i) {
      EXPECT_EQ(test::as_json(ds.trials[i].trial), test::as_json(w.trials[i])) << i;
    }
  }
  EXPECT_FALSE(is_json_recording(w.db()));
}

TEST(Dataset, CoverageIsCountedAgainstTheCandidates) {
  Written w;
  fill(w, 3);
  w.spec.candidates.push_back(to_name(test::config_n(77)));  // never measured
  auto store = SqliteStore::open(w.db(), OpenMode::read_only);
  const auto h = write_dataset(store, w.spec, w.dir.path() / "d.json");
  EXPECT_FALSE(h.complete);
  EXPECT_EQ(h.measured, 3);
  EXPECT_EQ(h.candidates, 4);
}

TEST(Dataset, DamagedForeignAndNewerFilesAreRefused) {
  Written w;
  fill(w, 2);
  auto store = SqliteStore::open(w.db(), OpenMode::read_only);
  const auto gz = w.dir.path() / "d.json.gz";
  write_dataset(store, w.spec, gz);
  auto bytes = *read_file(gz);
  write_file_atomically(gz, bytes.substr(0, bytes.size() / 2));
  EXPECT_THROW(read_dataset(gz), InputError);

  const auto plain = w.dir.path() / "export.json";
  store.export_json(plain);
  try {
    read_dataset(plain);
    FAIL();
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("no \"dataset\" object"), std::string::npos) << e.what();
  }

  const auto newer = w.dir.path() / "newer.json";
  write_dataset(store, w.spec, newer);
  auto j = nlohmann::json::parse(*read_file(newer));
  j["dataset"]["version"] = kDatasetVersion + 1;
  write_file_atomically(newer, j.dump());
  try {
    read_dataset(newer);
    FAIL();
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("newer sgemm-tune"), std::string::npos) << e.what();
  }
}

// A kernel of a non-strict precision class is recorded with its accuracy against FP64 (version 2):
// its ratios and its status, inaccurate included, come back as written, so that a replay answers
// what was measured. A version-1 dataset (the recorded H200 datasets) reads as it is.
TEST(Dataset, CarriesTheAccuracyOfEveryTrialAndReadsVersion1) {
  Written w;
  {
    auto store = SqliteStore::open(w.db(), OpenMode::read_write);
    store.begin(test::h200(), w.p);
    auto accurate = test::make_trial(w.p, 0, 0.5);
    accurate.error_ratio = 0.96;
    accurate.stress_ratio = 1.03;
    accurate.stress_case = "long-K 64x64x65536 NT";
    auto inaccurate = test::make_trial(w.p, 1, 0.0, TrialStatus::inaccurate);
    inaccurate.reason = "error ratio 1.8 on stress case underflow 128x128x1024 NT exceeds 1.05";
    inaccurate.error_ratio = 1.01;
    inaccurate.stress_ratio = 1.8;
    inaccurate.stress_case = "underflow 128x128x1024 NT";
    auto strict = test::make_trial(w.p, 2, 0.6);  // an FFMA kernel: nothing measured
    for (const auto& t : {accurate, inaccurate, strict}) {
      store.record(t);
      w.trials.push_back(t);
      w.spec.candidates.push_back(t.config_name);
    }
    w.spec.gpu = GpuIdentity::of(test::h200());
    w.spec.problem = w.p;
    w.spec.space = "made-up";
  }
  auto store = SqliteStore::open(w.db(), OpenMode::read_only);
  const auto file = w.dir.path() / "d.json.gz";
  write_dataset(store, w.spec, file);
  const auto j = nlohmann::json::parse(*read_file_maybe_gzip(file));
  EXPECT_EQ(j.at("dataset").at("version"), kDatasetVersion);
  EXPECT_GE(kDatasetVersion, 2);
  const auto ds = read_dataset(file);
  ASSERT_EQ(ds.trials.size(), 3u);
  for (size_t i = 0; i < 3; ++i)
    EXPECT_EQ(test::as_json(ds.trials[i].trial), test::as_json(w.trials[i])) << i;
  EXPECT_EQ(ds.trials[0].trial.error_ratio, 0.96);
  EXPECT_EQ(ds.trials[0].trial.stress_case, "long-K 64x64x65536 NT");
  EXPECT_EQ(ds.trials[1].trial.status, TrialStatus::inaccurate);
  EXPECT_EQ(ds.trials[1].trial.stress_ratio, 1.8);
  EXPECT_FALSE(ds.trials[2].trial.error_ratio.has_value());

  // Version 1, as the recorded datasets are: no ratios anywhere.
  auto old = j;
  old["dataset"]["version"] = 1;
  for (auto& t : old["trials"]) {
    t["trial"].erase("error_ratio");
    t["trial"].erase("stress_ratio");
    t["trial"].erase("stress_case");
  }
  const auto v1 = w.dir.path() / "v1.json";
  write_file_atomically(v1, old.dump());
  const auto back = read_dataset(v1);
  ASSERT_EQ(back.trials.size(), 3u);
  for (const auto& st : back.trials) EXPECT_FALSE(st.trial.error_ratio.has_value());
}

// Every shipped dataset of versions 1 and 2 (export format 1) marks a finalist's re-timing by its
// strategy only ("exhaustive/final"): read today, the same trials are finalists by their phase,
// every strategy is the strategy's name alone, and the screened configs are what the header counts.
// A version 3 file states the phase itself.
TEST(Dataset, EveryShippedDatasetReadsWithTheSameFinalists) {
  const auto dir = std::filesystem::path(SGT_TEST_SOURCE_DIR) / "datasets" / "h200";
  int files = 0;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    if (!entry.path().string().ends_with(".json.gz")) continue;
    ++files;
    const auto raw = nlohmann::json::parse(*read_file_maybe_gzip(entry.path()));
    const auto ds = read_dataset(entry.path());
    const auto& trials = raw.at("trials");
    const bool states_phase = raw.at("dataset").at("version").get<int>() >= 3;
    ASSERT_EQ(ds.trials.size(), trials.size()) << entry.path();
    std::set<std::string> screened;
    for (size_t i = 0; i < trials.size(); ++i) {
      const auto& rt = trials[i].at("trial");
      const std::string strategy = rt.at("strategy");
      const auto& t = ds.trials[i].trial;
      EXPECT_EQ(t.strategy.find('/'), std::string::npos) << strategy;
      if (states_phase) {
        EXPECT_EQ(rt.at("phase").get<std::string>(), to_string(t.phase)) << entry.path();
        EXPECT_EQ(t.source, TrialSource::measured) << entry.path();
      } else {
        EXPECT_EQ(t.phase == TrialPhase::final, strategy.ends_with("/final")) << strategy;
        EXPECT_EQ(t.source == TrialSource::replayed, strategy.starts_with("replay/")) << strategy;
        EXPECT_FALSE(rt.contains("phase"));
      }
      if (t.phase != TrialPhase::final) screened.insert(t.config_name);
    }
    EXPECT_EQ(static_cast<long long>(screened.size()), ds.header.measured) << entry.path();
  }
  EXPECT_GE(files, 21);  // every file datasets/README.md lists (12 FFMA, 4 tf32x3, 5 tf32x3_wg)
}

// A dataset is an export: `db import` takes it as it is, compressed or not.
TEST(Dataset, ImportsIntoADatabase) {
  Written w;
  fill(w, 4);
  const auto gz = w.dir.path() / "d.json.gz";
  {
    auto store = SqliteStore::open(w.db(), OpenMode::read_only);
    write_dataset(store, w.spec, gz);
  }
  auto other = SqliteStore::open(w.dir.path() / "o.db", OpenMode::read_write);
  const auto r = other.import_json(gz);
  EXPECT_EQ(r.trials_added, 4);
  EXPECT_EQ(other.trials().size(), 4u);
}

}  // namespace
}  // namespace sgt::db
