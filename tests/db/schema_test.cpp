// Opening and migrating the tuning database: fresh files, reopen, newer schemas and foreign files
// refused byte-for-byte untouched, config columns generated from kConfigFields.
#include <gtest/gtest.h>

#include <map>
#include <set>

#include <sqlite3.h>

#include "db_test_util.hpp"
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
  for (const char* table : {"gpus", "problems", "kernel_templates", "configs", "trials"}) {
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
  EXPECT_EQ(cols.size(), kConfigFields.size() + 2);  // id, name
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
        "PRAGMA application_id = 1397183537; CREATE TABLE future (x); PRAGMA user_version = 7");
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
