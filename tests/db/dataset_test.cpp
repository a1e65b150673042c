// Dataset files: written from a store, read back field for field, plain or gzip; damaged or
// foreign files refused with the reason.
#include <gtest/gtest.h>

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
