// A database the previous release wrote on the H200 (the default tune of 1000x1000x1000 NN,
// 2026-12-01, schema 3) keeps serving: it opens, every trial survives a writer's open, and its
// winners are served by what they were measured with. Its TMA kernel has since changed on purpose
// (the proxy fence, docs/experiments/2026-12-02-tma-proxy-fence.md), so its 168 TMA trials are
// stale: query and export serve the best trial whose kernel this build still compiles (a
// warp-tiling config), and --allow-stale the fastest of all, marked stale. When a kernel changes
// again, the counts here change with it, which is the point: the figures measured with the old
// kernel no longer hold.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <set>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <sqlite3.h>

#include "schema.hpp"
#include "sqlite.hpp"
#include "store.hpp"
#include "test_support.hpp"

namespace sgt::db {
namespace {

namespace fs = std::filesystem;

constexpr const char* kStaleWinner = "wt_64x64x32_w32x32_wn1_t8x4_n128_mb2_s4_p4_g8_o1_m1";
constexpr const char* kCurrentWinner = "wt_64x128x16_w16x64_wn1_t8x4_n256_mb1_s2_p4_g8_o1_b4";

fs::path fixture() {
  return fs::path(SGT_TEST_SOURCE_DIR) / "tests" / "db" / "fixtures" /
         "h200-1000x1000x1000-NN-schema3.db";
}

TEST(ReleaseFixture, ADatabaseOfThePreviousReleaseServesWhatStillHolds) {
  test::TempDir dir;
  const auto db = dir.path() / "tuning.db";
  fs::copy_file(fixture(), db);  // the checked-in file is never opened for writing
  const auto dbarg = " --db " + test::sh_quote(db);

  const auto info = test::run_cli("db info --json" + dbarg, false);
  ASSERT_EQ(info.exit_code, 0) << info.out;
  const auto ij = nlohmann::json::parse(info.out);
  EXPECT_EQ(ij.at("schema_version"), 3);
  EXPECT_EQ(ij.at("rows").at("trials"), 224);

  auto query = [&](const std::string& extra) {
    const auto q = test::run_cli(
        "query --gpu 'NVIDIA H200' --shape 1000x1000x1000 --layout NN --json" + extra + dbarg,
        false);
    EXPECT_EQ(q.exit_code, 0) << q.out;
    return nlohmann::json::parse(q.out);
  };
  const auto q = query("");
  EXPECT_EQ(q.at("source"), "exact");
  EXPECT_EQ(q.at("config_name"), kCurrentWinner);
  EXPECT_FALSE(q.at("winner").at("stale").get<bool>());
  EXPECT_EQ(q.at("stale_skipped").at("kernel_hash"), 168);
  EXPECT_GT(q.at("winner").at("ratio").get<double>(), 1.05);

  const auto all = query(" --allow-stale");
  EXPECT_EQ(all.at("config_name"), kStaleWinner);
  EXPECT_TRUE(all.at("winner").at("stale").get<bool>());
  EXPECT_EQ(all.at("winner").at("edge_check_summary").at("passed"), 24);

  // A writer's open (migrating, if this build's schema is newer) keeps every trial and the winners.
  {
    auto rw = SqliteStore::open(db, OpenMode::read_write);
    EXPECT_EQ(rw.trials().size(), 224u);
    EXPECT_EQ(rw.info().schema_version, SqliteStore::schema_version());
  }
  EXPECT_EQ(query("").at("config_name"), kCurrentWinner);
  EXPECT_EQ(query(" --allow-stale").at("config_name"), kStaleWinner);

  const auto table = dir.path() / "table.hpp";
  const auto ex = test::run_cli("export --format cpp -o " + test::sh_quote(table) + dbarg);
  ASSERT_EQ(ex.exit_code, 0) << ex.out;
  std::ifstream in(table);
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const auto row = text.find("{1000, 1000, 1000, \"NN\"");
  ASSERT_NE(row, std::string::npos) << text.substr(0, 2000);
  EXPECT_NE(text.find(kCurrentWinner, row), std::string::npos);
  EXPECT_EQ(text.find(kStaleWinner), std::string::npos);
}

// A database this release wrote on the H200 (the default tune of 1000x1000x1000 NN, 2026-12-02,
// with the TMA kernel's proxy fence) is served as it was written: its winner exact and current,
// with the edge checks it passed. A kernel change turns this winner stale, and then this fixture
// moves to the test above and a new one is written on the device.
TEST(ReleaseFixture, ADatabaseOfThisReleaseServesItsWinnerAsCurrent) {
  test::TempDir dir;
  const auto db = dir.path() / "tuning.db";
  fs::copy_file(fs::path(SGT_TEST_SOURCE_DIR) / "tests" / "db" / "fixtures" /
                    "h200-1000x1000x1000-NN-schema3-fenced.db",
                db);
  const auto q = test::run_cli(
      "query --gpu 'NVIDIA H200' --shape 1000x1000x1000 --layout NN --json"
      " --db " +
          test::sh_quote(db),
      false);
  ASSERT_EQ(q.exit_code, 0) << q.out;
  const auto j = nlohmann::json::parse(q.out);
  EXPECT_EQ(j.at("source"), "exact");
  EXPECT_EQ(j.at("config_name"), "wt_64x64x32_w32x32_wn1_t4x4_n128_mb2_s2_p4_g8_o1_m1");
  EXPECT_FALSE(j.at("winner").at("stale").get<bool>());
  EXPECT_EQ(j.at("stale_skipped").at("total"), 0);
  EXPECT_EQ(j.at("winner").at("edge_check_summary").at("passed"), 24);
  EXPECT_GT(j.at("winner").at("ratio").get<double>(), 1.1);
}

// A writer's open migrates the file to schema 4 and labels every config the previous release
// stored with its kernel family, from its name alone, and the winner is served as before.
TEST(ReleaseFixture, AWritersOpenLabelsEveryStoredConfigWithItsFamily) {
  test::TempDir dir;
  const auto db = dir.path() / "tuning.db";
  fs::copy_file(fixture(), db);
  SqliteStore::open(db, OpenMode::read_write);
  const auto count = [&](const char* sql) {
    Connection c(db, SQLITE_OPEN_READONLY, 1000);
    Stmt s(c, sql);
    s.step();
    return s.int64(0);
  };
  EXPECT_EQ(count("PRAGMA user_version"), latest_schema_version());
  EXPECT_EQ(count("SELECT count(*) FROM configs"), 219);
  EXPECT_EQ(count("SELECT count(*) FROM configs WHERE family IS NULL"), 0);
  EXPECT_EQ(count("SELECT count(*) FROM configs WHERE family = 'ws_tma'"), 163);
  EXPECT_EQ(count("SELECT count(*) FROM configs WHERE family = 'ws_tma' AND name NOT LIKE '%_m1'"),
            0);
  EXPECT_EQ(count("SELECT count(*) FROM configs WHERE family = 'warptile'"), 219 - 163);
  const auto q =
      test::run_cli("query --gpu 'NVIDIA H200' --shape 1000x1000x1000 --layout NN --json --db " +
                        test::sh_quote(db),
                    false);
  ASSERT_EQ(q.exit_code, 0) << q.out;
  EXPECT_EQ(nlohmann::json::parse(q.out).at("config_name"), kCurrentWinner);
}

// The previous release stored each config's family as its field TMA (a column, and _m1 in the
// name). Read as it is (no family column yet) and after a writer's migration, every stored config
// is the same config: the family TMA named, every field its column's value, and its canonical
// name the stored one, byte for byte.
TEST(ReleaseFixture, StoredConfigsKeepTheirFamilyNameAndFieldsAfterTheTmaFieldBecameTheFamilyId) {
  test::TempDir dir;
  const auto db = dir.path() / "tuning.db";
  fs::copy_file(fixture(), db);
  struct Row {
    int tma;
    std::map<std::string, int> fields;
  };
  std::map<std::string, Row> stored;
  {
    Connection c(db, SQLITE_OPEN_READONLY, 1000);
    std::string cols;
    for (const auto& f : kConfigFields) cols += fmt::format(", \"{}\"", f.name);
    Stmt s(c, "SELECT name, TMA" + cols + " FROM configs");
    while (s.step()) {
      Row r{s.int32(1), {}};
      for (size_t i = 0; i < kConfigFields.size(); ++i)
        r.fields[std::string(kConfigFields[i].name)] = s.int32(2 + static_cast<int>(i));
      stored.emplace(s.text(0), r);
    }
  }
  ASSERT_EQ(stored.size(), 219u);
  const auto expect_same = [&](const std::vector<StoredTrial>& trials) {
    std::set<std::string> seen;
    for (const auto& st : trials) {
      const auto& t = st.trial;
      const auto it = stored.find(t.config_name);
      ASSERT_NE(it, stored.end()) << t.config_name;
      EXPECT_EQ(t.config.family, it->second.tma == 1 ? "ws_tma" : "warptile") << t.config_name;
      EXPECT_EQ(to_name(t.config), t.config_name);
      EXPECT_EQ(from_name(t.config_name), t.config) << t.config_name;
      for (const auto& f : kConfigFields)
        EXPECT_EQ(t.config.*f.member, it->second.fields.at(std::string(f.name)))
            << t.config_name << " " << f.name;
      seen.insert(t.config_name);
    }
    EXPECT_EQ(seen.size(), 219u);
  };
  expect_same(SqliteStore::open(db, OpenMode::read_only).trials());
  expect_same(SqliteStore::open(db, OpenMode::read_write).trials());
  // The old column stays (an older release reading the file finds it), unwritten by this one.
  Connection c(db, SQLITE_OPEN_READONLY, 1000);
  EXPECT_TRUE(column_names(c, "configs").contains("TMA"));
}

// Schema 6 adds each trial's accuracy against FP64. The previous release's file is read as it is
// (every trial not measured), a writer's open adds the columns (NULL in every old row) and the view
// shows them, and the file keeps serving: its winner as before, and a config recorded inaccurate
// since is served no more.
TEST(ReleaseFixture, AWritersOpenAddsTheErrorRatioAndTheFileKeepsServing) {
  test::TempDir dir;
  const auto db = dir.path() / "tuning.db";
  fs::copy_file(fixture(), db);
  for (const auto& st : SqliteStore::open(db, OpenMode::read_only).trials()) {
    EXPECT_FALSE(st.trial.error_ratio.has_value()) << st.trial.config_name;
    EXPECT_FALSE(st.trial.stress_ratio.has_value()) << st.trial.config_name;
  }
  const auto count = [&](const char* sql) {
    Connection c(db, SQLITE_OPEN_READONLY, 1000);
    Stmt s(c, sql);
    s.step();
    return s.int64(0);
  };
  {
    Connection c(db, SQLITE_OPEN_READONLY, 1000);
    EXPECT_FALSE(column_names(c, "trials").contains("error_ratio"));
  }
  const auto query = [&] {
    const auto q =
        test::run_cli("query --gpu 'NVIDIA H200' --shape 1000x1000x1000 --layout NN --json --db " +
                          test::sh_quote(db),
                      false);
    EXPECT_EQ(q.exit_code, 0) << q.out;
    return nlohmann::json::parse(q.out);
  };

  auto rw = SqliteStore::open(db, OpenMode::read_write);
  EXPECT_EQ(count("PRAGMA user_version"), latest_schema_version());
  {
    Connection c(db, SQLITE_OPEN_READONLY, 1000);
    const auto cols = column_names(c, "trials");
    EXPECT_TRUE(cols.contains("error_ratio"));
    EXPECT_TRUE(cols.contains("stress_ratio"));
    EXPECT_TRUE(cols.contains("stress_case"));
    EXPECT_TRUE(column_names(c, "trial_details").contains("error_ratio"));
  }
  EXPECT_EQ(count("SELECT count(*) FROM trials WHERE error_ratio IS NOT NULL"), 0);
  EXPECT_EQ(count("SELECT count(*) FROM trial_details"), 224);
  auto q = query();
  EXPECT_EQ(q.at("config_name"), kCurrentWinner);
  EXPECT_FALSE(q.at("winner").contains("error_ratio"));

  // The winner's config, measured again and found inaccurate: served no more; the ratio is kept.
  const auto all = rw.trials();
  const auto winner = std::find_if(all.begin(), all.end(), [](const StoredTrial& st) {
    return st.trial.config_name == kCurrentWinner && st.trial.status == TrialStatus::ok;
  });
  ASSERT_NE(winner, all.end());
  const auto gpu = rw.gpu(winner->gpu);
  ASSERT_TRUE(gpu);
  Trial t = winner->trial;
  t.status = TrialStatus::inaccurate;
  t.reason = "error ratio 1.3 on stress case underflow 128x128x1024 NN exceeds 1.05";
  t.time = TimeStats{};
  t.gflops = 0;
  t.error_ratio = 0.99;
  t.stress_ratio = 1.3;
  t.stress_case = "underflow 128x128x1024 NN";
  t.strategy = "fixture-test";
  t.timestamp = utc_timestamp();
  t.edge_checks.clear();
  rw.begin(gpu->fingerprint, t.problem);
  rw.record(t);
  EXPECT_EQ(count("SELECT count(*) FROM trials WHERE status = 'inaccurate' AND error_ratio = 0.99 "
                  "AND stress_ratio = 1.3 AND stress_case = 'underflow 128x128x1024 NN'"),
            1);
  q = query();
  EXPECT_NE(q.at("config_name"), kCurrentWinner);
  EXPECT_EQ(q.at("source"), "exact");
}

// Schema 7 moves each trial's phase and source out of its strategy text. The previous release's
// file stores "model" and "model/final": read as it is, its five finalists are finalists; after a
// writer's migration they are so by their column, every strategy is "model", and the file serves
// its winners as before.
TEST(ReleaseFixture, AWritersOpenMovesEachTrialsPhaseOutOfItsStrategy) {
  test::TempDir dir;
  const auto db = dir.path() / "tuning.db";
  fs::copy_file(fixture(), db);
  const auto expect_roles = [](const std::vector<StoredTrial>& all) {
    ASSERT_EQ(all.size(), 224u);
    int finals = 0;
    for (const auto& st : all) {
      EXPECT_EQ(st.trial.strategy, "model");
      EXPECT_EQ(st.trial.source, TrialSource::measured);
      finals += st.trial.phase == TrialPhase::final;
    }
    EXPECT_EQ(finals, 5);
  };
  expect_roles(SqliteStore::open(db, OpenMode::read_only).trials());
  expect_roles(SqliteStore::open(db, OpenMode::read_write).trials());
  const auto count = [&](const char* sql) {
    Connection c(db, SQLITE_OPEN_READONLY, 1000);
    Stmt s(c, sql);
    s.step();
    return s.int64(0);
  };
  EXPECT_EQ(count("SELECT count(*) FROM trials WHERE strategy = 'model'"), 224);
  EXPECT_EQ(count("SELECT count(*) FROM trials WHERE phase = 'final'"), 5);
  EXPECT_EQ(count("SELECT count(*) FROM trials WHERE phase = 'screen' AND source = 'measured'"),
            219);
  const auto query = [&](const std::string& extra) {
    const auto q =
        test::run_cli("query --gpu 'NVIDIA H200' --shape 1000x1000x1000 --layout NN --json --db " +
                          test::sh_quote(db) + extra,
                      false);
    EXPECT_EQ(q.exit_code, 0) << q.out;
    return nlohmann::json::parse(q.out);
  };
  // The current winner was screened only (the finalists were TMA configs, now stale); the stale
  // one is the finalist that passed its edge checks.
  auto j = query("");
  EXPECT_EQ(j.at("config_name"), kCurrentWinner);
  EXPECT_EQ(j.at("winner").at("trial").at("phase"), "screen");
  j = query(" --allow-stale");
  EXPECT_EQ(j.at("config_name"), kStaleWinner);
  EXPECT_EQ(j.at("winner").at("trial").at("phase"), "final");
  EXPECT_EQ(j.at("winner").at("trial").at("strategy"), "model");
}

bool wal_or_shm_beside(const fs::path& db) {
  return fs::exists(db.string() + "-wal") || fs::exists(db.string() + "-shm");
}

// Read-only commands read a database that no process has open without creating its -wal and -shm
// files (they would stay behind: a reader cannot remove them), and so also on a read-only
// filesystem; a merge source likewise.
TEST(ReadOnlyOpen, ReadOnlyCommandsLeaveNothingBesideTheDatabase) {
  test::TempDir dir;
  const auto db = dir.path() / "tuning.db";
  fs::copy_file(fixture(), db);
  const auto dbarg = " --db " + test::sh_quote(db);
  for (const std::string& cmd : std::vector<std::string>{
           "db info", "list", "query --gpu 'NVIDIA H200' --shape 1000x1000x1000",
           "export --format cpp -o " + test::sh_quote(dir.path() / "t.hpp"),
           "db export --json " + test::sh_quote(dir.path() / "t.json")}) {
    const auto r = test::run_cli(cmd + dbarg);
    EXPECT_EQ(r.exit_code, 0) << cmd << ": " << r.out;
    EXPECT_FALSE(wal_or_shm_beside(db)) << cmd;
  }
  const auto other = dir.path() / "other.db";
  const auto m = test::run_cli("db merge " + test::sh_quote(db) + " --db " + test::sh_quote(other));
  EXPECT_EQ(m.exit_code, 0) << m.out;
  EXPECT_FALSE(wal_or_shm_beside(db)) << "merge source";
}

TEST(ReadOnlyOpen, ReadOnlyCommandsWorkOnAReadOnlyFilesystem) {
  test::TempDir dir;
  const auto src = dir.path() / "src", mnt = dir.path() / "mnt";
  fs::create_directories(src);
  fs::create_directories(mnt);
  fs::copy_file(fixture(), src / "tuning.db");
  // A private mount namespace with a read-only bind mount: root cannot write there either.
  const std::string ro_mount = "unshare -m sh -c \"mount --bind " + test::sh_quote(src) + " " +
                               test::sh_quote(mnt) + " && mount -o remount,bind,ro " +
                               test::sh_quote(mnt) + " && ";
  const auto probe =
      test::run_shell(ro_mount + "! touch " + test::sh_quote(mnt / "probe") + " 2>/dev/null\"");
  if (probe.exit_code != 0) GTEST_SKIP() << "cannot make a read-only mount here: " << probe.out;
  const auto db = test::sh_quote(mnt / "tuning.db");
  for (const std::string& cmd : std::vector<std::string>{
           "db info --db " + db, "list --db " + db,
           "query --gpu 'NVIDIA H200' --shape 1000x1000x1000 --db " + db,
           "db export --json " + test::sh_quote(dir.path() / "x.json") + " --db " + db}) {
    const auto r =
        test::run_shell(ro_mount + test::sh_quote(test::cli_path()) + " " + cmd + " >/dev/null\"");
    EXPECT_EQ(r.exit_code, 0) << cmd << ": " << r.out;
  }
}

}  // namespace
}  // namespace sgt::db
