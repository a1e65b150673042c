// The tuning database's schema as earlier releases wrote it, frozen here so that a test can write a
// file such a release would have written: schema 1 as sgemm-tune 0.1 created it (migration 1 and
// the config columns its binary added, the ten parameters of the seed kernel), then migrations 2
// to 6 copied from db/schema.cpp as they were released. Tests must not follow later edits of the
// migrations, so these are copies, never references.
#pragma once

#include <string>

namespace sgt::test {

inline constexpr const char* kSchemaV1 = R"sql(
PRAGMA application_id = 1397183537;
CREATE TABLE gpus (
  id INTEGER PRIMARY KEY, name TEXT NOT NULL, cc_major INTEGER NOT NULL,
  cc_minor INTEGER NOT NULL, sm_count INTEGER NOT NULL, uuid TEXT NOT NULL,
  memory_bytes INTEGER NOT NULL, l2_bytes INTEGER NOT NULL, smem_optin_bytes INTEGER NOT NULL,
  sm_clock_khz INTEGER NOT NULL, mem_clock_khz INTEGER NOT NULL, driver_version INTEGER NOT NULL,
  runtime_version INTEGER NOT NULL, nvrtc_major INTEGER NOT NULL, nvrtc_minor INTEGER NOT NULL,
  last_seen TEXT NOT NULL, UNIQUE (name, cc_major, cc_minor, sm_count));
CREATE TABLE problems (
  id INTEGER PRIMARY KEY, M INTEGER NOT NULL CHECK (M > 0), N INTEGER NOT NULL CHECK (N > 0),
  K INTEGER NOT NULL CHECK (K > 0), layout TEXT NOT NULL, dtype TEXT NOT NULL,
  UNIQUE (M, N, K, layout, dtype));
CREATE TABLE kernel_templates (
  id INTEGER PRIMARY KEY, name TEXT NOT NULL, source_hash TEXT NOT NULL,
  UNIQUE (name, source_hash));
CREATE TABLE configs (id INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE);
CREATE TABLE trials (
  id INTEGER PRIMARY KEY, gpu_id INTEGER NOT NULL REFERENCES gpus (id),
  problem_id INTEGER NOT NULL REFERENCES problems (id),
  config_id INTEGER NOT NULL REFERENCES configs (id),
  template_id INTEGER NOT NULL REFERENCES kernel_templates (id),
  driver_version INTEGER NOT NULL, nvrtc_major INTEGER NOT NULL, status TEXT NOT NULL,
  reason TEXT NOT NULL, median_ms REAL, min_ms REAL, max_ms REAL, spread REAL,
  repetitions INTEGER NOT NULL, cut_early INTEGER NOT NULL, gflops REAL, verify_error REAL,
  registers INTEGER NOT NULL, spill_bytes INTEGER NOT NULL, stack_bytes INTEGER NOT NULL,
  shared_bytes INTEGER NOT NULL, cublas_median_ms REAL, tuner_version TEXT NOT NULL,
  strategy TEXT NOT NULL, seed INTEGER NOT NULL, timestamp TEXT NOT NULL);
CREATE UNIQUE INDEX trials_identity
  ON trials (gpu_id, problem_id, config_id, template_id, timestamp, seed);
CREATE INDEX trials_ranking ON trials (gpu_id, problem_id, status, median_ms);
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
ALTER TABLE configs ADD COLUMN "BM" INTEGER;
ALTER TABLE configs ADD COLUMN "BN" INTEGER;
ALTER TABLE configs ADD COLUMN "BK" INTEGER;
ALTER TABLE configs ADD COLUMN "WM" INTEGER;
ALTER TABLE configs ADD COLUMN "WN" INTEGER;
ALTER TABLE configs ADD COLUMN "WNITER" INTEGER;
ALTER TABLE configs ADD COLUMN "TM" INTEGER;
ALTER TABLE configs ADD COLUMN "TN" INTEGER;
ALTER TABLE configs ADD COLUMN "NUM_THREADS" INTEGER;
ALTER TABLE configs ADD COLUMN "MIN_BLOCKS" INTEGER;
)sql";

// Migrations 2 .. 6 as released; kReleasedMigrations[v] brings a file from v - 1 to v.
inline constexpr const char* kReleasedMigrations[] = {
    nullptr,
    nullptr,
    // 2
    R"sql(
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
)sql",
    // 3
    R"sql(
ALTER TABLE trials ADD COLUMN compile_s REAL;
ALTER TABLE trials ADD COLUMN measure_s REAL;

PRAGMA user_version = 3;
)sql",
    // 4
    R"sql(
ALTER TABLE configs ADD COLUMN family TEXT;

PRAGMA user_version = 4;
)sql",
    // 5
    R"sql(
DROP INDEX trials_identity;
CREATE UNIQUE INDEX trials_identity
  ON trials (gpu_id, problem_id, config_id, template_id, timestamp, seed, strategy);

PRAGMA user_version = 5;
)sql",
    // 6
    R"sql(
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
)sql",
};

// The schema a file of release schema `version` (1 .. 6) has, as one script.
inline std::string release_schema(int version) {
  std::string sql = kSchemaV1;
  for (int v = 2; v <= version; ++v) sql += kReleasedMigrations[v];
  return sql;
}

}  // namespace sgt::test
