// Schema 7 moves a trial's phase and source out of its strategy text into columns of their own. A
// database as each earlier release (schemas 3, 4, 5 and 6) wrote it, with the strategies those
// releases stored ("model/final", "replay/exhaustive", "anneal/look", ...), is read as it is with
// the same meaning, and after a writer's migration holds the same trials and serves the same
// winners; the unique identity of every trial is what it was.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>
#include <sqlite3.h>

#include "db_test_util.hpp"
#include "release_schemas.hpp"
#include "schema.hpp"
#include "test_support.hpp"

namespace sgt::db {
namespace {

namespace fs = std::filesystem;

// One row as a release stored it: its strategy text, and what that text means.
struct OldRow {
  Trial trial;  // strategy: as the release wrote it
  std::string name;
  TrialPhase phase;
  TrialSource source;
};

// The rows of a small tune, as that release's binary stored them. From schema 5 on, a finalist's
// re-timing may carry its screening trial's timestamp and seed (it did not before: the unique
// index would have dropped it).
std::vector<OldRow> old_rows(int version, const Problem& p) {
  const bool same_second = version >= 5;
  auto row = [&](int config, double ms, const char* strategy, std::string name, TrialPhase phase,
                 TrialSource source, const char* ts) {
    auto t = test::make_trial(p, config, ms);
    t.cut_early = false;
    t.strategy = strategy;
    t.timestamp = ts;
    t.seed = 2612;
    t.compile_s = 1.25 + config;
    t.measure_s = 0.5;
    return OldRow{t, std::move(name), phase, source};
  };
  using P = TrialPhase;
  using S = TrialSource;
  std::vector<OldRow> rows = {
      row(0, 2.0, "model", "model", P::screen, S::measured, "2026-11-01T10:00:00Z"),
      row(1, 1.5, "model", "model", P::screen, S::measured, "2026-11-01T10:00:01Z"),
      row(2, 1.6, "model/look", "model", P::look, S::measured, "2026-11-01T10:00:02Z"),
      // Faster than the winner, but its finalist failed an edge case: never served.
      row(3, 1.3, "replay/exhaustive", "exhaustive", P::screen, S::replayed,
          "2026-11-01T10:00:03Z"),
      row(3, 1.35, "replay/exhaustive/final", "exhaustive", P::final, S::replayed,
          "2026-11-01T10:00:04Z"),
      row(1, 1.4, "model/final", "model", P::final, S::measured,
          same_second ? "2026-11-01T10:00:01Z" : "2026-11-01T10:00:05Z"),
      row(4, 0, "model", "model", P::screen, S::measured, "2026-11-01T10:00:06Z"),
  };
  rows[4].trial.edge_checks = test::edge_checks(p, 3, 1);  // failed one: marked incorrect
  rows[4].trial.status = TrialStatus::incorrect;
  rows[4].trial.reason = "failed 1 of 3 edge cases";
  rows[5].trial.edge_checks = test::edge_checks(p, 3);
  rows[6].trial.status = TrialStatus::compile_failed;
  rows[6].trial.reason = "ptxas: error";
  rows[6].trial.time = TimeStats{};
  rows[6].trial.gflops = 0;
  if (version >= 6) rows[1].trial.error_ratio = 0.98;  // schema 6 stored the accuracy
  return rows;
}

// Writes the rows into a fresh file of release schema `version` (3 .. 6), with the columns that
// release had and the statements it used (values bound).
void write_release_database(const fs::path& path, int version, const GpuFingerprint& g,
                            const std::vector<OldRow>& rows) {
  Connection c(path, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, 1000);
  c.exec_script(test::release_schema(version));
  ASSERT_EQ(read_user_version(c), version);
  Stmt gi(c,
          "INSERT OR IGNORE INTO gpus (name, cc_major, cc_minor, sm_count, uuid, memory_bytes,"
          " l2_bytes, smem_optin_bytes, sm_clock_khz, mem_clock_khz, driver_version,"
          " runtime_version, nvrtc_major, nvrtc_minor, last_seen) VALUES (?, ?, ?, ?, ?, ?, ?,"
          " ?, ?, ?, ?, ?, ?, ?, '2026-11-01T10:00:00Z')");
  gi.bind(1, g.name).bind(2, g.cc_major).bind(3, g.cc_minor).bind(4, g.sm_count);
  gi.bind(5, g.uuid).bind(6, g.memory_bytes).bind(7, g.l2_bytes).bind(8, g.smem_optin_bytes);
  gi.bind(9, g.sm_clock_khz).bind(10, g.mem_clock_khz).bind(11, g.driver_version);
  gi.bind(12, g.runtime_version).bind(13, g.nvrtc_major).bind(14, g.nvrtc_minor);
  gi.run();
  for (const auto& r : rows) {
    const Trial& t = r.trial;
    Stmt pi(c, "INSERT OR IGNORE INTO problems (M, N, K, layout, dtype) VALUES (?, ?, ?, ?, ?)");
    pi.bind(1, t.problem.M).bind(2, t.problem.N).bind(3, t.problem.K);
    pi.bind(4, t.problem.layout).bind(5, t.problem.dtype);
    pi.run();
    Stmt ki(c, "INSERT OR IGNORE INTO kernel_templates (name, source_hash) VALUES (?, ?)");
    ki.bind(1, t.kernel_template).bind(2, t.kernel_hash);
    ki.run();
    const auto& k = t.config;
    Stmt ci(c, fmt::format("INSERT OR IGNORE INTO configs (name, BM, BN, BK, WM, WN, WNITER, TM, "
                           "TN, NUM_THREADS, MIN_BLOCKS{}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, "
                           "?{})",
                           version >= 4 ? ", family" : "", version >= 4 ? ", ?" : ""));
    ci.bind(1, t.config_name).bind(2, k.BM).bind(3, k.BN).bind(4, k.BK).bind(5, k.WM);
    ci.bind(6, k.WN).bind(7, k.WNITER).bind(8, k.TM).bind(9, k.TN).bind(10, k.NUM_THREADS);
    ci.bind(11, k.MIN_BLOCKS);
    if (version >= 4) ci.bind(12, k.family);
    ci.run();
    std::string cols =
        "gpu_id, problem_id, config_id, template_id, driver_version, nvrtc_major, status, reason,"
        " median_ms, min_ms, max_ms, spread, repetitions, cut_early, gflops, verify_error,"
        " registers, spill_bytes, stack_bytes, shared_bytes, cublas_median_ms, tuner_version,"
        " strategy, seed, timestamp, compile_s, measure_s";
    std::string params =
        "(SELECT id FROM gpus WHERE name = :gpu), (SELECT id FROM problems WHERE M = :M AND"
        " N = :N AND K = :K AND layout = :layout AND dtype = :dtype), (SELECT id FROM configs"
        " WHERE name = :config), (SELECT id FROM kernel_templates WHERE name = :tmpl AND"
        " source_hash = :hash), :drv, :nvrtc, :status, :reason, :median, :min, :max, :spread,"
        " :reps, :cut, :gflops, :verr, :regs, :spill, :stack, :shared, :cublas, :tv, :strategy,"
        " :seed, :ts, :compile, :measure";
    if (version >= 6) {
      cols += ", error_ratio";
      params += ", :ratio";
    }
    Stmt ti(c, fmt::format("INSERT INTO trials ({}) VALUES ({})", cols, params));
    ti.bind(":gpu", g.name).bind(":M", t.problem.M).bind(":N", t.problem.N);
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
    ti.bind(":ts", t.timestamp).bind(":compile", t.compile_s).bind(":measure", t.measure_s);
    if (version >= 6) {
      if (t.error_ratio) {
        ti.bind(":ratio", *t.error_ratio);
      } else {
        ti.bind_null(":ratio");
      }
    }
    ti.run();
    const long long trial_id = sqlite3_last_insert_rowid(c.get());
    for (size_t i = 0; i < t.edge_checks.size(); ++i) {
      const auto& e = t.edge_checks[i];
      Stmt ei(c,
              "INSERT INTO edge_checks (trial_id, seq, label, M, N, K, layout, dtype, lda, ldb,"
              " ldc, offset_elems, alpha, beta, passed, error, reason) VALUES (?, ?, ?, ?, ?, ?,"
              " ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)");
      ei.bind(1, trial_id).bind(2, static_cast<long long>(i)).bind(3, e.label);
      ei.bind(4, e.problem.M).bind(5, e.problem.N).bind(6, e.problem.K);
      ei.bind(7, e.problem.layout).bind(8, e.problem.dtype).bind(9, e.lda).bind(10, e.ldb);
      ei.bind(11, e.ldc).bind(12, e.offset).bind(13, static_cast<double>(e.alpha));
      ei.bind(14, static_cast<double>(e.beta)).bind(15, e.passed).bind(16, e.error);
      ei.bind(17, e.reason);
      ei.run();
    }
  }
}

// What each stored trial means, in stored order: (strategy, phase, source).
std::vector<std::string> roles(const std::vector<StoredTrial>& trials) {
  std::vector<std::string> out;
  for (const auto& st : trials) {
    out.push_back(fmt::format("{} {} {}", st.trial.strategy, to_string(st.trial.phase),
                              to_string(st.trial.source)));
  }
  return out;
}

std::vector<std::string> expected_roles(const std::vector<OldRow>& rows) {
  std::vector<std::string> out;
  for (const auto& r : rows)
    out.push_back(fmt::format("{} {} {}", r.name, to_string(r.phase), to_string(r.source)));
  return out;
}

std::vector<nlohmann::json> as_json(const std::vector<StoredTrial>& trials) {
  std::vector<nlohmann::json> out;
  for (const auto& st : trials) out.push_back(st.trial);
  return out;
}

class ReleaseSchema : public ::testing::TestWithParam<int> {};

TEST_P(ReleaseSchema, OpensMigratesAndServesTheSameWinnersAndTrials) {
  const int version = GetParam();
  test::TempDir dir;
  const auto path = dir.path() / fmt::format("schema{}.db", version);
  const auto p = test::shape(1000, 1000, 1000);
  const auto gpu = GpuIdentity::of(test::h200());
  const auto rows = old_rows(version, p);
  write_release_database(path, version, test::h200(), rows);
  const auto winner_of = [&](const SqliteStore& s) {
    const auto w = s.winner(gpu, p);
    EXPECT_TRUE(w);
    return w ? w->best.trial : Trial{};
  };

  // Read as it is: every trial with the meaning its release gave it, the file untouched.
  const auto bytes = test::read_bytes(path);
  std::vector<nlohmann::json> before;
  Trial served;
  {
    auto ro = SqliteStore::open(path, OpenMode::read_only);
    const auto all = ro.trials();
    ASSERT_EQ(all.size(), rows.size());
    EXPECT_EQ(roles(all), expected_roles(rows));
    before = as_json(all);
    served = winner_of(ro);
    EXPECT_EQ(served.config_name, rows[5].trial.config_name);
    EXPECT_EQ(served.phase, TrialPhase::final);
    EXPECT_EQ(served.time.median_ms, 1.4);
    EXPECT_EQ(served.edge_checks.size(), 3u);
  }
  EXPECT_EQ(test::read_bytes(path), bytes);

  // A writer migrates it: the columns filled from the old text, the strategy its name alone,
  // every trial and the winner as before.
  {
    auto rw = SqliteStore::open(path, OpenMode::read_write);
    EXPECT_EQ(rw.info().schema_version, latest_schema_version());
    const auto all = rw.trials();
    EXPECT_EQ(roles(all), expected_roles(rows));
    EXPECT_EQ(as_json(all), before);
    EXPECT_EQ(nlohmann::json(winner_of(rw)), nlohmann::json(served));
  }
  {
    Connection c(path, SQLITE_OPEN_READONLY, 1000);
    Stmt s(c, "SELECT strategy || ' ' || phase || ' ' || source FROM trials ORDER BY id");
    std::vector<std::string> stored;
    while (s.step()) stored.push_back(s.text(0));
    EXPECT_EQ(stored, expected_roles(rows));
    Stmt idx(c, "SELECT sql FROM sqlite_master WHERE name = 'trials_identity'");
    ASSERT_TRUE(idx.step());
    EXPECT_NE(idx.text(0).find("timestamp, seed, strategy, phase, source)"), std::string::npos)
        << idx.text(0);
    EXPECT_TRUE(column_names(c, "trial_details").contains("phase"));
    EXPECT_TRUE(column_names(c, "trial_details").contains("source"));
  }

  // The identity is what it was: each trial recorded again adds nothing (a finalist's edge checks
  // included), a trial that differs only in its source or phase is a measurement of its own.
  {
    auto rw = SqliteStore::open(path, OpenMode::read_write);
    const auto all = rw.trials();
    rw.begin(test::h200(), p);
    for (const auto& st : all) rw.record(st.trial);
    EXPECT_EQ(rw.trials().size(), rows.size());
    EXPECT_EQ(test::count_rows(path, "SELECT count(*) FROM edge_checks"), 6);
    auto measured = all[3].trial;  // the replayed screening trial, measured instead
    measured.source = TrialSource::measured;
    rw.record(measured);
    EXPECT_EQ(rw.trials().size(), rows.size() + 1);
    // A resumed search reads the screening (the look's included), never a finalist.
    const auto order = rw.screening_order();
    EXPECT_EQ(order.size(), 5u + 1u);
    for (const auto& t : order) EXPECT_NE(t.phase, TrialPhase::final) << t.config_name;
    EXPECT_EQ(nlohmann::json(winner_of(rw)), nlohmann::json(served));
  }
  // Opening again migrates nothing twice.
  SqliteStore::open(path, OpenMode::read_write);
  EXPECT_EQ(test::count_rows(path, "SELECT count(*) FROM trials"),
            static_cast<long long>(rows.size()) + 1);
  EXPECT_EQ(test::count_rows(path, "SELECT count(*) FROM trials WHERE strategy LIKE '%/%'"), 0);
  EXPECT_EQ(test::count_rows(path, "SELECT count(*) FROM trials WHERE phase = 'final'"), 2);
  EXPECT_EQ(test::count_rows(path, "SELECT count(*) FROM trials WHERE source = 'replayed'"), 2);
}

INSTANTIATE_TEST_SUITE_P(Schemas3To6, ReleaseSchema, ::testing::Values(3, 4, 5, 6),
                         [](const auto& info) { return fmt::format("schema{}", info.param); });

}  // namespace
}  // namespace sgt::db
