// Opening and migrating the tuning database: fresh files, reopen, newer schemas and foreign files
// refused byte-for-byte untouched, config columns generated from kConfigFields.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <string>
#include <vector>

#include <sqlite3.h>

#include "db_test_util.hpp"
#include "release_schemas.hpp"
#include "error.hpp"
#include "schema.hpp"
#include "test_support.hpp"

namespace sgt::db {
namespace {

using test::TempDir;

std::set<std::string> schema_objects(const std::filesystem::path& p) {
  Connection c(p, SQLITE_OPEN_READONLY, 1000);
  Stmt s(c, "SELECT type || ' ' || name || ' ' || COALESCE(sql, '') FROM sqlite_master");
  std::set<std::string> out;
  while (s.step()) out.insert(s.text(0));
  return out;
}

std::string pragma_text(const std::filesystem::path& p, const char* pragma) {
  Connection c(p, SQLITE_OPEN_READONLY, 1000);
  Stmt s(c, pragma);
  s.step();
  return s.text(0);
}

template <class F>
std::string error_of(F&& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  return "(no error)";
}

TEST(Schema, MigratesAFreshFileAndCreatesParentDirectories) {
  TempDir dir;
  const auto path = dir.path() / "a" / "b" / "tuning.db";
  {
    auto store = SqliteStore::open(path, OpenMode::read_write);
    EXPECT_EQ(store.info().schema_version, SqliteStore::schema_version());
  }
  ASSERT_TRUE(std::filesystem::exists(path));
  EXPECT_EQ(pragma_text(path, "PRAGMA user_version"), std::to_string(latest_schema_version()));
  EXPECT_EQ(pragma_text(path, "PRAGMA application_id"), std::to_string(kApplicationId));
  EXPECT_EQ(pragma_text(path, "PRAGMA journal_mode"), "wal");
  const auto objects = schema_objects(path);
  for (const char* table :
       {"gpus", "problems", "kernel_templates", "configs", "trials", "edge_checks"}) {
    bool found = false;
    for (const auto& o : objects)
      found = found || o.rfind(std::string("table ") + table + " ", 0) == 0;
    EXPECT_TRUE(found) << table;
  }
}

TEST(Schema, ConfigsHasOneIntegerColumnPerConfigField) {
  TempDir dir;
  const auto path = dir.path() / "t.db";
  SqliteStore::open(path, OpenMode::read_write);
  Connection c(path, SQLITE_OPEN_READONLY, 1000);
  Stmt s(c, "SELECT name, type FROM pragma_table_info('configs')");
  std::map<std::string, std::string> cols;
  while (s.step()) cols[s.text(0)] = s.text(1);
  for (const auto& f : kConfigFields) {
    ASSERT_TRUE(cols.count(std::string(f.name))) << f.name;
    EXPECT_EQ(cols[std::string(f.name)], "INTEGER") << f.name;
  }
  EXPECT_EQ(cols["family"], "TEXT");                 // the kernel family's id (schema 4)
  EXPECT_EQ(cols.size(), kConfigFields.size() + 3);  // id, name, family
}

TEST(Schema, ReopenIsIdempotentAndKeepsData) {
  TempDir dir;
  const auto path = dir.path() / "t.db";
  const auto p = test::shape(4096, 4096, 4096);
  {
    auto store = SqliteStore::open(path, OpenMode::read_write);
    store.begin(test::h200(), p);
    store.record(test::make_trial(p, 0, 2.0));
  }
  const auto before = schema_objects(path);
  for (int i = 0; i < 3; ++i) {
    auto store = SqliteStore::open(path, OpenMode::read_write);
    EXPECT_EQ(store.trials().size(), 1u);
  }
  EXPECT_EQ(schema_objects(path), before);
  EXPECT_EQ(pragma_text(path, "PRAGMA user_version"), std::to_string(latest_schema_version()));
}

TEST(Schema, AddsAMissingConfigColumnAndReadersFallBackToTheName) {
  // A file written before a knob existed lacks its column: readers use the canonical name, and the
  // next writer adds the column without a hand-written migration.
  TempDir dir;
  const auto path = dir.path() / "t.db";
  const auto p = test::shape(1024, 1024, 1024);
  const auto trial = test::make_trial(p, 7, 1.0);
  {
    auto store = SqliteStore::open(path, OpenMode::read_write);
    store.begin(test::h200(), p);
    store.record(trial);
  }
  {
    Connection c(path, SQLITE_OPEN_READWRITE, 1000);
    c.exec_script("ALTER TABLE configs DROP COLUMN MIN_BLOCKS");
  }
  {
    auto ro = SqliteStore::open(path, OpenMode::read_only);
    const auto all = ro.trials();
    ASSERT_EQ(all.size(), 1u);
    EXPECT_EQ(all[0].trial.config, trial.config);
  }
  SqliteStore::open(path, OpenMode::read_write);
  Connection c(path, SQLITE_OPEN_READONLY, 1000);
  Stmt s(c, "SELECT count(*) FROM pragma_table_info('configs') WHERE name = 'MIN_BLOCKS'");
  s.step();
  EXPECT_EQ(s.int64(0), 1);
}

// A database as sgemm-tune 0.1 wrote it, schema version 1: kSchemaV1 (release_schemas.hpp).
using test::kSchemaV1;

struct V1Trial {
  GpuFingerprint gpu;
  Trial trial;
};

// Writes `trials` into a fresh schema-1 file with the statements a 0.1 binary used (values bound).
void write_v1_database(const std::filesystem::path& path, const std::vector<V1Trial>& trials) {
  Connection c(path, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, 1000);
  c.exec_script(kSchemaV1);
  for (const auto& [g, t] : trials) {
    Stmt gi(c,
            "INSERT OR IGNORE INTO gpus (name, cc_major, cc_minor, sm_count, uuid, memory_bytes,"
            " l2_bytes, smem_optin_bytes, sm_clock_khz, mem_clock_khz, driver_version,"
            " runtime_version, nvrtc_major, nvrtc_minor, last_seen) VALUES (?, ?, ?, ?, ?, ?, ?,"
            " ?, ?, ?, ?, ?, ?, ?, '2025-06-01T12:00:00Z')");
    gi.bind(1, g.name).bind(2, g.cc_major).bind(3, g.cc_minor).bind(4, g.sm_count);
    gi.bind(5, g.uuid).bind(6, g.memory_bytes).bind(7, g.l2_bytes).bind(8, g.smem_optin_bytes);
    gi.bind(9, g.sm_clock_khz).bind(10, g.mem_clock_khz).bind(11, g.driver_version);
    gi.bind(12, g.runtime_version).bind(13, g.nvrtc_major).bind(14, g.nvrtc_minor);
    gi.run();
    Stmt pi(c, "INSERT OR IGNORE INTO problems (M, N, K, layout, dtype) VALUES (?, ?, ?, ?, ?)");
    pi.bind(1, t.problem.M).bind(2, t.problem.N).bind(3, t.problem.K);
    pi.bind(4, t.problem.layout).bind(5, t.problem.dtype);
    pi.run();
    Stmt ki(c, "INSERT OR IGNORE INTO kernel_templates (name, source_hash) VALUES (?, ?)");
    ki.bind(1, t.kernel_template).bind(2, t.kernel_hash);
    ki.run();
    const auto& k = t.config;
    Stmt ci(c,
            "INSERT OR IGNORE INTO configs (name, BM, BN, BK, WM, WN, WNITER, TM, TN, NUM_THREADS,"
            " MIN_BLOCKS) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)");
    ci.bind(1, t.config_name).bind(2, k.BM).bind(3, k.BN).bind(4, k.BK).bind(5, k.WM);
    ci.bind(6, k.WN).bind(7, k.WNITER).bind(8, k.TM).bind(9, k.TN).bind(10, k.NUM_THREADS);
    ci.bind(11, k.MIN_BLOCKS);
    ci.run();
    Stmt ti(c,
            "INSERT INTO trials (gpu_id, problem_id, config_id, template_id, driver_version,"
            " nvrtc_major, status, reason, median_ms, min_ms, max_ms, spread, repetitions,"
            " cut_early, gflops, verify_error, registers, spill_bytes, stack_bytes, shared_bytes,"
            " cublas_median_ms, tuner_version, strategy, seed, timestamp) VALUES ("
            " (SELECT id FROM gpus WHERE name = :gpu AND cc_major = :ccmaj AND cc_minor = :ccmin"
            "  AND sm_count = :sms),"
            " (SELECT id FROM problems WHERE M = :M AND N = :N AND K = :K AND layout = :layout"
            "  AND dtype = :dtype),"
            " (SELECT id FROM configs WHERE name = :config),"
            " (SELECT id FROM kernel_templates WHERE name = :tmpl AND source_hash = :hash),"
            " :drv, :nvrtc, :status, :reason, :median, :min, :max, :spread, :reps, :cut, :gflops,"
            " :verr, :regs, :spill, :stack, :shared, :cublas, :tv, :strategy, :seed, :ts)");
    ti.bind(":gpu", g.name).bind(":ccmaj", g.cc_major).bind(":ccmin", g.cc_minor);
    ti.bind(":sms", g.sm_count).bind(":M", t.problem.M).bind(":N", t.problem.N);
    ti.bind(":K", t.problem.K).bind(":layout", t.problem.layout).bind(":dtype", t.problem.dtype);
    ti.bind(":config", t.config_name).bind(":tmpl", t.kernel_template);
    ti.bind(":hash", t.kernel_hash).bind(":drv", g.driver_version).bind(":nvrtc", g.nvrtc_major);
    ti.bind(":status", to_string(t.status)).bind(":reason", t.reason);
    ti.bind(":median", t.time.median_ms).bind(":min", t.time.min_ms);
    ti.bind(":max", t.time.max_ms).bind(":spread", t.time.spread);
    ti.bind(":reps", t.time.repetitions).bind(":cut", t.cut_early).bind(":gflops", t.gflops);
    ti.bind(":verr", t.verify_error).bind(":regs", t.registers).bind(":spill", t.spill_bytes);
    ti.bind(":stack", t.stack_bytes).bind(":shared", t.shared_bytes);
    ti.bind(":cublas", t.cublas_median_ms).bind(":tv", t.tuner_version);
    ti.bind(":strategy", t.strategy).bind(":seed", static_cast<long long>(t.seed));
    ti.bind(":ts", t.timestamp);
    ti.run();
  }
}

TEST(Schema, MigratesAVersion1DatabaseWithoutLosingAnything) {
  TempDir dir;
  const auto path = dir.path() / "v1.db";
  const auto big = test::shape(4096, 4096, 4096), odd = test::shape(4093, 1021, 257);
  const std::vector<V1Trial> v1 = {
      {test::h200(), test::make_trial(big, 0, 2.0)},
      {test::h200(), test::make_trial(big, 1, 1.5)},
      {test::a100(), test::make_trial(odd, 2, 0.0, TrialStatus::compile_failed)}};
  write_v1_database(path, v1);
  ASSERT_EQ(pragma_text(path, "PRAGMA user_version"), "1");

  auto expect_v1_content = [&](const SqliteStore& s) {
    const auto all = s.trials();
    ASSERT_EQ(all.size(), v1.size());
    for (size_t i = 0; i < v1.size(); ++i) {
      EXPECT_EQ(test::as_json(all[i].trial), test::as_json(v1[i].trial)) << i;
      EXPECT_EQ(all[i].gpu, GpuIdentity::of(v1[i].gpu)) << i;
      EXPECT_TRUE(all[i].trial.edge_checks.empty());
      for (const auto& f : kConfigFields) {
        if (f.default_value != kRequired) EXPECT_EQ(all[i].trial.config.*f.member, f.default_value);
      }
    }
    EXPECT_EQ(s.gpus().size(), 2u);
    const auto w = s.winner(GpuIdentity::of(test::h200()), big);
    ASSERT_TRUE(w);
    EXPECT_EQ(w->best.trial.config_name, to_name(test::config_n(1)));
  };

  // Read-only, the file is served as it is and not touched.
  const auto bytes = test::read_bytes(path);
  {
    auto ro = SqliteStore::open(path, OpenMode::read_only);
    expect_v1_content(ro);
    const auto info = ro.info();
    EXPECT_EQ(info.schema_version, 1);
    bool counted = false;
    for (const auto& [table, n] : info.rows) {
      if (table == "edge_checks") counted = n == 0;
    }
    EXPECT_TRUE(counted);
  }
  EXPECT_EQ(test::read_bytes(path), bytes);

  // A writer migrates it: every trial kept, the new table and the knob columns added.
  {
    auto rw = SqliteStore::open(path, OpenMode::read_write);
    EXPECT_EQ(rw.info().schema_version, latest_schema_version());
    expect_v1_content(rw);
    // An old trial can be verified now: its edge checks attach to it.
    rw.begin(test::h200(), big);
    auto t = v1[1].trial;
    t.edge_checks = test::edge_checks(big, 4, 1);
    rw.record(t);
    EXPECT_EQ(rw.trials().size(), v1.size());
  }
  EXPECT_EQ(pragma_text(path, "PRAGMA user_version"), std::to_string(latest_schema_version()));
  const auto objects = schema_objects(path);
  EXPECT_TRUE(objects.count(
      "index edge_checks_trial CREATE UNIQUE INDEX edge_checks_trial ON edge_checks (trial_id, "
      "seq)"));
  auto ro = SqliteStore::open(path, OpenMode::read_only);
  const auto w = ro.winner(GpuIdentity::of(test::h200()), big);
  ASSERT_TRUE(w);
  EXPECT_EQ(w->best.trial.edge_checks.size(), 4u);
  EXPECT_EQ(edge_checks_passed(w->best.trial.edge_checks), 3);
  EXPECT_EQ(test::count_rows(path, "SELECT count(*) FROM trials"), 3);
  EXPECT_EQ(test::count_rows(path, "SELECT count(*) FROM edge_checks"), 4);
}

TEST(Schema, EdgeChecksGoWithTheirTrial) {
  // ON DELETE CASCADE: no edge check outlives its trial (the store never deletes; a person with
  // the sqlite3 shell might).
  TempDir dir;
  const auto path = dir.path() / "t.db";
  const auto p = test::shape(256, 256, 256, "NT");
  {
    auto store = SqliteStore::open(path, OpenMode::read_write);
    store.begin(test::h200(), p);
    auto t = test::make_trial(p, 0, 1.0);
    t.edge_checks = test::edge_checks(p, 6);
    store.record(t);
  }
  Connection c(path, SQLITE_OPEN_READWRITE, 1000);
  c.exec_script("PRAGMA foreign_keys = ON; DELETE FROM trials");
  Stmt s(c, "SELECT count(*) FROM edge_checks");
  s.step();
  EXPECT_EQ(s.int64(0), 0);
}

TEST(Schema, NewerSchemaIsRefusedAndTheFileIsUntouched) {
  TempDir dir;
  const auto path = dir.path() / "t.db";
  const auto p = test::shape(4096, 4096, 4096);
  {
    auto store = SqliteStore::open(path, OpenMode::read_write);
    store.begin(test::h200(), p);
    store.record(test::make_trial(p, 0, 2.0));
  }
  {
    Connection c(path, SQLITE_OPEN_READWRITE, 1000);
    c.exec_script("PRAGMA user_version = 99");
  }
  const auto bytes = test::read_bytes(path);
  for (auto mode : {OpenMode::read_write, OpenMode::read_only}) {
    const auto msg = error_of([&] { SqliteStore::open(path, mode); });
    EXPECT_NE(msg.find("schema version 99"), std::string::npos) << msg;
    EXPECT_NE(msg.find("newer"), std::string::npos) << msg;
    EXPECT_NE(msg.find(path.string()), std::string::npos) << msg;
    EXPECT_EQ(test::read_bytes(path), bytes);
  }
}

TEST(Schema, NewerRollbackJournalDatabaseIsNotEvenConvertedToWal) {
  TempDir dir;
  const auto path = dir.path() / "t.db";
  {
    Connection c(path, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, 1000);
    c.exec_script(
        "PRAGMA application_id = 1397183537; CREATE TABLE future (x); PRAGMA user_version = " +
        std::to_string(latest_schema_version() + 1));
  }
  const auto bytes = test::read_bytes(path);
  ASSERT_EQ(bytes[18], 1);  // legacy (rollback journal) file format
  EXPECT_NE(error_of([&] { SqliteStore::open(path, OpenMode::read_write); }).find("newer"),
            std::string::npos);
  EXPECT_EQ(test::read_bytes(path), bytes);
  EXPECT_FALSE(std::filesystem::exists(path.string() + "-wal"));
}

TEST(Schema, AnotherProgramsDatabaseIsRefusedUntouched) {
  TempDir dir;
  const auto path = dir.path() / "other.db";
  {
    Connection c(path, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, 1000);
    c.exec_script("CREATE TABLE photos (id INTEGER PRIMARY KEY, blob BLOB)");
  }
  const auto bytes = test::read_bytes(path);
  const auto msg = error_of([&] { SqliteStore::open(path, OpenMode::read_write); });
  EXPECT_NE(msg.find("another program"), std::string::npos) << msg;
  EXPECT_EQ(test::read_bytes(path), bytes);
}

TEST(Schema, ReadOnlyOpenNeverCreatesAFile) {
  TempDir dir;
  const auto path = dir.path() / "missing.db";
  const auto msg = error_of([&] { SqliteStore::open(path, OpenMode::read_only); });
  EXPECT_NE(msg.find("no tuning database"), std::string::npos) << msg;
  EXPECT_FALSE(std::filesystem::exists(path));
}

TEST(Schema, ReadOnlyOpenOfAnEmptyFileExplainsIt) {
  TempDir dir;
  const auto path = dir.path() / "empty.db";
  test::write_bytes(path, "");
  const auto msg = error_of([&] { SqliteStore::open(path, OpenMode::read_only); });
  EXPECT_NE(msg.find("empty database"), std::string::npos) << msg;
  EXPECT_EQ(std::filesystem::file_size(path), 0u);
}

TEST(Paths, DefaultDbPathFollowsTheEnvironment) {
  test::ScopedEnv db("SGT_DB", std::nullopt), xdg("XDG_CACHE_HOME", std::nullopt),
      home("HOME", "/home/someone");
  EXPECT_EQ(default_db_path(), "/home/someone/.cache/sgemm-tune/tuning.db");
  {
    test::ScopedEnv x("XDG_CACHE_HOME", "/xdg");
    EXPECT_EQ(default_db_path(), "/xdg/sgemm-tune/tuning.db");
    test::ScopedEnv s("SGT_DB", "/explicit/t.db");
    EXPECT_EQ(default_db_path(), "/explicit/t.db");
  }
  test::ScopedEnv nohome("HOME", std::nullopt);
  EXPECT_THROW(default_db_path(), Error);
}

TEST(Paths, BusyTimeoutComesFromTheEnvironment) {
  {
    test::ScopedEnv e("SGT_DB_BUSY_TIMEOUT_MS", std::nullopt);
    EXPECT_EQ(default_busy_timeout_ms(), 10000);
  }
  {
    test::ScopedEnv e("SGT_DB_BUSY_TIMEOUT_MS", "250");
    EXPECT_EQ(default_busy_timeout_ms(), 250);
  }
  test::ScopedEnv e("SGT_DB_BUSY_TIMEOUT_MS", "soon");
  EXPECT_THROW(default_busy_timeout_ms(), InputError);
}

TEST(Defaults, TheDefaultConfigIsValid) {
  const auto c = from_name(kDefaultConfigName);
  ASSERT_TRUE(c.has_value());
  EXPECT_EQ(to_name(*c), kDefaultConfigName);
  EXPECT_TRUE(check(*c).empty());
}

}  // namespace
}  // namespace sgt::db

namespace sgt::db {
namespace {

// docs/database.md's version table lists every schema version the migrations reach, each once and
// in order: a migration added without its row (or a row for one that does not exist) fails here.
TEST(Schema, TheDocumentedVersionsAreTheMigrations) {
  std::ifstream in(std::filesystem::path(SGT_TEST_SOURCE_DIR) / "docs" / "database.md");
  ASSERT_TRUE(in) << "docs/database.md";
  std::vector<int> documented;
  bool in_section = false;
  const std::regex row(R"(^\| (\d+) \| )");
  for (std::string line; std::getline(in, line);) {
    if (line.starts_with("## ")) in_section = line == "## Schema and migrations";
    std::smatch m;
    if (in_section && std::regex_search(line, m, row)) documented.push_back(std::stoi(m[1]));
  }
  std::vector<int> migrations;
  for (int v = 1; v <= latest_schema_version(); ++v) migrations.push_back(v);
  EXPECT_EQ(documented, migrations);
}

}  // namespace
}  // namespace sgt::db
