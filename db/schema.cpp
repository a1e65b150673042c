// Schema migrations of the tuning database. Stored formats only grow: a migration is never edited
// once released; a change is a new entry at the end of kMigrations.
#include "schema.hpp"

#include <fmt/format.h>

#include "config.hpp"
#include "error.hpp"
#include "family.hpp"

namespace sgt::db {

namespace {

struct Migration {
  int version;
  const char* sql;  // ends by setting PRAGMA user_version to `version`
};

// Trials keep every Trial field plus the driver version and NVRTC major of the run, so a trial
// measured under another software stack can be recognised as stale without being deleted.
// The config field columns are not here: migrate() adds one per kConfigFields entry, so a new knob
// gets its column without a hand-written migration.
constexpr Migration kMigrations[] = {
    {1, R"sql(
PRAGMA application_id = 1397183537;

CREATE TABLE gpus (
  id               INTEGER PRIMARY KEY,
  name             TEXT    NOT NULL,
  cc_major         INTEGER NOT NULL,
  cc_minor         INTEGER NOT NULL,
  sm_count         INTEGER NOT NULL,
  uuid             TEXT    NOT NULL,
  memory_bytes     INTEGER NOT NULL,
  l2_bytes         INTEGER NOT NULL,
  smem_optin_bytes INTEGER NOT NULL,
  sm_clock_khz     INTEGER NOT NULL,
  mem_clock_khz    INTEGER NOT NULL,
  driver_version   INTEGER NOT NULL,
  runtime_version  INTEGER NOT NULL,
  nvrtc_major      INTEGER NOT NULL,
  nvrtc_minor      INTEGER NOT NULL,
  last_seen        TEXT    NOT NULL,
  UNIQUE (name, cc_major, cc_minor, sm_count)
);

CREATE TABLE problems (
  id     INTEGER PRIMARY KEY,
  M      INTEGER NOT NULL CHECK (M > 0),
  N      INTEGER NOT NULL CHECK (N > 0),
  K      INTEGER NOT NULL CHECK (K > 0),
  layout TEXT    NOT NULL,
  dtype  TEXT    NOT NULL,
  UNIQUE (M, N, K, layout, dtype)
);

CREATE TABLE kernel_templates (
  id          INTEGER PRIMARY KEY,
  name        TEXT NOT NULL,
  source_hash TEXT NOT NULL,
  UNIQUE (name, source_hash)
);

CREATE TABLE configs (
  id   INTEGER PRIMARY KEY,
  name TEXT NOT NULL UNIQUE
);

CREATE TABLE trials (
  id               INTEGER PRIMARY KEY,
  gpu_id           INTEGER NOT NULL REFERENCES gpus (id),
  problem_id       INTEGER NOT NULL REFERENCES problems (id),
  config_id        INTEGER NOT NULL REFERENCES configs (id),
  template_id      INTEGER NOT NULL REFERENCES kernel_templates (id),
  driver_version   INTEGER NOT NULL,
  nvrtc_major      INTEGER NOT NULL,
  status           TEXT    NOT NULL,
  reason           TEXT    NOT NULL,
  median_ms        REAL,
  min_ms           REAL,
  max_ms           REAL,
  spread           REAL,
  repetitions      INTEGER NOT NULL,
  cut_early        INTEGER NOT NULL,
  gflops           REAL,
  verify_error     REAL,
  registers        INTEGER NOT NULL,
  spill_bytes      INTEGER NOT NULL,
  stack_bytes      INTEGER NOT NULL,
  shared_bytes     INTEGER NOT NULL,
  cublas_median_ms REAL,
  tuner_version    TEXT    NOT NULL,
  strategy         TEXT    NOT NULL,
  seed             INTEGER NOT NULL,
  timestamp        TEXT    NOT NULL
);

-- One trial is one measurement: merging or importing it again must be a no-op.
CREATE UNIQUE INDEX trials_identity
  ON trials (gpu_id, problem_id, config_id, template_id, timestamp, seed);
CREATE INDEX trials_ranking ON trials (gpu_id, problem_id, status, median_ms);

-- For people reading the file with the sqlite3 shell; the program does not depend on it.
CREATE VIEW trial_details AS
SELECT t.id, g.name AS gpu, 'sm_' || g.cc_major || g.cc_minor AS arch, g.sm_count,
       p.M || 'x' || p.N || 'x' || p.K AS shape, p.layout, p.dtype, c.name AS config,
       k.name AS kernel_template, k.source_hash AS kernel_hash, t.status, t.reason,
       t.median_ms, t.gflops, t.cublas_median_ms, t.driver_version, t.nvrtc_major,
       t.tuner_version, t.strategy, t.seed, t.timestamp
FROM trials t
JOIN gpus g ON g.id = t.gpu_id
JOIN problems p ON p.id = t.problem_id
JOIN configs c ON c.id = t.config_id
JOIN kernel_templates k ON k.id = t.template_id;

PRAGMA user_version = 1;
)sql"},
    // The verification of a trial (a tune's winner) on edge shapes other than the tuned one: sizes
    // that are not multiples of the tile, primes, K not a multiple of BK, padded leading
    // dimensions, offset pointers, other alpha/beta. seq keeps the suite's order. M, N, K may be 0
    // (the degenerate cases of a suite), unlike a tuned problem's.
    {2, R"sql(
CREATE TABLE edge_checks (
  id           INTEGER PRIMARY KEY,
  trial_id     INTEGER NOT NULL REFERENCES trials (id) ON DELETE CASCADE,
  seq          INTEGER NOT NULL,
  label        TEXT    NOT NULL,
  M            INTEGER NOT NULL CHECK (M >= 0),
  N            INTEGER NOT NULL CHECK (N >= 0),
  K            INTEGER NOT NULL CHECK (K >= 0),
  layout       TEXT    NOT NULL,
  dtype        TEXT    NOT NULL,
  lda          INTEGER NOT NULL,
  ldb          INTEGER NOT NULL,
  ldc          INTEGER NOT NULL,
  offset_elems INTEGER NOT NULL,
  alpha        REAL,
  beta         REAL,
  passed       INTEGER NOT NULL,
  error        REAL,
  reason       TEXT    NOT NULL
);

CREATE UNIQUE INDEX edge_checks_trial ON edge_checks (trial_id, seq);

PRAGMA user_version = 2;
)sql"},
    // What each trial cost in wall seconds: its binary's NVRTC compilation and the worker's
    // verify-and-time call. A replay of recorded trials charges them as simulated time.
    {3, R"sql(
ALTER TABLE trials ADD COLUMN compile_s REAL;
ALTER TABLE trials ADD COLUMN measure_s REAL;

PRAGMA user_version = 3;
)sql"},
    // The kernel family of each config (family.hpp), by its id. Which family a config is of is the
    // registry's knowledge, not SQL's: migrate() fills the rows written before, from their names.
    {4, R"sql(
ALTER TABLE configs ADD COLUMN family TEXT;

PRAGMA user_version = 4;
)sql"},
    // A finalist's re-timing is its own measurement, though it may carry its screening trial's
    // timestamp to the second and seed: the strategy ("<strategy>/final") tells them apart, so
    // neither is dropped as the other stored twice.
    {5, R"sql(
DROP INDEX trials_identity;
CREATE UNIQUE INDEX trials_identity
  ON trials (gpu_id, problem_id, config_id, template_id, timestamp, seed, strategy);

PRAGMA user_version = 5;
)sql"},
    // The accuracy of a kernel of a non-strict precision class (precision.hpp): its error against
    // an FP64 reference over cuBLAS FP32's on the trial's problem, and the worst over the stress
    // cases with that case. NULL: not measured (every trial written before, every strict kernel's).
    // The view shows the ratio too.
    {6, R"sql(
ALTER TABLE trials ADD COLUMN error_ratio REAL;
ALTER TABLE trials ADD COLUMN stress_ratio REAL;
ALTER TABLE trials ADD COLUMN stress_case TEXT;

DROP VIEW trial_details;
CREATE VIEW trial_details AS
SELECT t.id, g.name AS gpu, 'sm_' || g.cc_major || g.cc_minor AS arch, g.sm_count,
       p.M || 'x' || p.N || 'x' || p.K AS shape, p.layout, p.dtype, c.name AS config,
       k.name AS kernel_template, k.source_hash AS kernel_hash, t.status, t.reason,
       t.median_ms, t.gflops, t.cublas_median_ms, t.error_ratio, t.stress_ratio, t.stress_case,
       t.driver_version, t.nvrtc_major, t.tuner_version, t.strategy, t.seed, t.timestamp
FROM trials t
JOIN gpus g ON g.id = t.gpu_id
JOIN problems p ON p.id = t.problem_id
JOIN configs c ON c.id = t.config_id
JOIN kernel_templates k ON k.id = t.template_id;

PRAGMA user_version = 6;
)sql"},
    // A trial's phase (screen, look, final) and source (measured, replayed) are columns of their
    // own (Trial::phase, Trial::source); releases before wrote them into the strategy:
    // "replay/<strategy>" for a replayed trial, "<strategy>/final" for a finalist's re-timing,
    // "<strategy>/look" for the last look's, "replay/<strategy>/final" for both. The rows written
    // so get their phase and source from it and keep the strategy's name alone, so the identity
    // (strategy, phase, source) of every row is the one its old strategy text was, and the unique
    // index names them instead of relying on the text. The view shows them.
    {7, R"sql(
ALTER TABLE trials ADD COLUMN phase TEXT NOT NULL DEFAULT 'screen';
ALTER TABLE trials ADD COLUMN source TEXT NOT NULL DEFAULT 'measured';

DROP INDEX trials_identity;

UPDATE trials SET source = 'replayed', strategy = substr(strategy, 8)
  WHERE substr(strategy, 1, 7) = 'replay/';
UPDATE trials SET phase = 'final', strategy = substr(strategy, 1, length(strategy) - 6)
  WHERE substr(strategy, -6) = '/final';
UPDATE trials SET phase = 'look', strategy = substr(strategy, 1, length(strategy) - 5)
  WHERE phase = 'screen' AND substr(strategy, -5) = '/look';

CREATE UNIQUE INDEX trials_identity
  ON trials (gpu_id, problem_id, config_id, template_id, timestamp, seed, strategy, phase, source);

DROP VIEW trial_details;
CREATE VIEW trial_details AS
SELECT t.id, g.name AS gpu, 'sm_' || g.cc_major || g.cc_minor AS arch, g.sm_count,
       p.M || 'x' || p.N || 'x' || p.K AS shape, p.layout, p.dtype, c.name AS config,
       k.name AS kernel_template, k.source_hash AS kernel_hash, t.status, t.reason,
       t.median_ms, t.gflops, t.cublas_median_ms, t.error_ratio, t.stress_ratio, t.stress_case,
       t.driver_version, t.nvrtc_major, t.tuner_version, t.strategy, t.phase, t.source, t.seed,
       t.timestamp
FROM trials t
JOIN gpus g ON g.id = t.gpu_id
JOIN problems p ON p.id = t.problem_id
JOIN configs c ON c.id = t.config_id
JOIN kernel_templates k ON k.id = t.template_id;

PRAGMA user_version = 7;
)sql"},
};

bool is_identifier(std::string_view s) {
  if (s.empty()) return false;
  for (char ch : s) {
    const bool ok = (ch >= 'A' && ch <= 'Z') || (ch >= 'a' && ch <= 'z') ||
                    (ch >= '0' && ch <= '9') || ch == '_';
    if (!ok) return false;
  }
  return true;
}

// Configs without a family: every row an older schema wrote, until label_families() has run.
bool has_unlabelled_configs(const Connection& conn) {
  if (!column_names(conn, "configs").contains("family")) return false;
  Stmt s(conn, "SELECT count(*) FROM configs WHERE family IS NULL");
  s.step();
  return s.int64(0) > 0;
}

// Gives every config row without a family its family's id, from its canonical name (every name
// stored parses to the config it was stored for). A name that no longer parses keeps NULL: its
// trials are served by nobody either way.
void label_families(const Connection& conn) {
  std::vector<std::pair<long long, std::string>> rows;
  {
    Stmt s(conn, "SELECT id, name FROM configs WHERE family IS NULL");
    while (s.step()) rows.emplace_back(s.int64(0), s.text(1));
  }
  Stmt set(conn, "UPDATE configs SET family = :family WHERE id = :id");
  for (const auto& [id, name] : rows) {
    const auto c = from_name(name);
    if (!c) continue;
    set.reset();
    set.bind(":family", c->family).bind(":id", id);
    set.run();
  }
}

long long count_schema_objects(const Connection& conn) {
  Stmt s(conn, "SELECT count(*) FROM sqlite_master");
  s.step();
  return s.int64(0);
}

}  // namespace

int latest_schema_version() {
  return static_cast<int>(sizeof(kMigrations) / sizeof(kMigrations[0]));
}

int read_user_version(const Connection& conn) {
  Stmt s(conn, "PRAGMA user_version");
  s.step();
  return s.int32(0);
}

int read_application_id(const Connection& conn) {
  Stmt s(conn, "PRAGMA application_id");
  s.step();
  return s.int32(0);
}

void check_version(const Connection& conn, bool writable) {
  const auto& path = conn.path().string();
  const int v = read_user_version(conn);
  const int latest = latest_schema_version();
  if (v > latest) {
    throw Error(fmt::format(
        "tuning database '{}' has schema version {}, newer than this sgemm-tune knows ({}): it "
        "was written by a newer sgemm-tune. Refusing to use it; the file was not modified. Use a "
        "newer sgemm-tune, or point --db / SGT_DB at another file.",
        path, v, latest));
  }
  if (v > 0 && read_application_id(conn) != kApplicationId) {
    throw Error(fmt::format(
        "'{}' is an SQLite database of another program (application_id {}), not an sgemm-tune "
        "tuning database; refusing to use it. The file was not modified.",
        path, read_application_id(conn)));
  }
  if (v == 0 && count_schema_objects(conn) > 0) {
    throw Error(fmt::format(
        "'{}' is an SQLite database of another program (it has tables but no sgemm-tune schema "
        "version); refusing to use it. The file was not modified.",
        path));
  }
  // An older schema is read as it is (readers treat what a later migration added as absent), so
  // query, list and export keep working on a file no writer has upgraded yet.
  if (!writable && v == 0) {
    throw Error(fmt::format("'{}' is an empty database: nothing has been tuned into it yet", path));
  }
}

bool has_table(const Connection& conn, std::string_view table) {
  Stmt s(conn, "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = :name");
  s.bind(":name", table);
  s.step();
  return s.int64(0) > 0;
}

std::set<std::string> column_names(const Connection& conn, std::string_view table) {
  std::set<std::string> out;
  Stmt s(conn, "SELECT name FROM pragma_table_info(:table)");
  s.bind(":table", table);
  while (s.step()) out.insert(s.text(0));
  return out;
}

std::vector<bool> config_columns_present(const Connection& conn) {
  std::vector<bool> present(kConfigFields.size(), false);
  Stmt s(conn, "SELECT name FROM pragma_table_info('configs')");
  while (s.step()) {
    const auto col = s.text(0);
    for (size_t i = 0; i < kConfigFields.size(); ++i) {
      if (kConfigFields[i].name == col) present[i] = true;
    }
  }
  return present;
}

void migrate(const Connection& conn) {
  const int latest = latest_schema_version();
  auto up_to_date = [&] {
    if (read_user_version(conn) != latest) return false;
    for (bool p : config_columns_present(conn)) {
      if (!p) return false;
    }
    return true;
  };
  if (up_to_date() && !has_unlabelled_configs(conn)) return;

  Transaction tx(conn, Transaction::Kind::write);
  // Another process may have migrated between our first look and taking the lock.
  check_version(conn, true);
  for (const auto& m : kMigrations) {
    if (m.version <= read_user_version(conn)) continue;
    conn.exec_script(m.sql);
    if (read_user_version(conn) != m.version) {
      throw Error(fmt::format("migration {} of '{}' did not set user_version (bug)", m.version,
                              conn.path().string()));
    }
  }
  const auto present = config_columns_present(conn);
  for (size_t i = 0; i < kConfigFields.size(); ++i) {
    if (present[i]) continue;
    // Column names come from the compile-time field list, never from input; an identifier cannot
    // be bound, so it is checked and quoted instead.
    const auto name = kConfigFields[i].name;
    if (!is_identifier(name))
      throw Error(fmt::format("config field '{}' is not an identifier", name));
    conn.exec_script(fmt::format("ALTER TABLE configs ADD COLUMN \"{}\" INTEGER", name));
  }
  label_families(conn);
  tx.commit();
}

}  // namespace sgt::db
