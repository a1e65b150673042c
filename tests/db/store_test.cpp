// SqliteStore through its API: the TrialStore round trip, resume rules, winners, staleness, the
// nearest-shape fallback, and writes refused on read-only or locked databases.
#include <gtest/gtest.h>

#include <chrono>
#include <cmath>

#include <sqlite3.h>

#include "db_test_util.hpp"
#include "error.hpp"
#include "test_support.hpp"

namespace sgt::db {
namespace {

using test::make_trial;
using test::shape;
using test::TempDir;

class StoreTest : public ::testing::Test {
 protected:
  std::filesystem::path path() const { return dir_.path() / "tuning.db"; }
  SqliteStore rw() { return SqliteStore::open(path(), OpenMode::read_write); }
  TempDir dir_;
};

TEST_F(StoreTest, RecordAndFinishedRoundTripEveryTrialField) {
  const auto p = shape(4096, 4096, 4096);
  auto store = rw();
  store.begin(test::h200(), p);
  auto ok = make_trial(p, 3, 1.375);
  auto failed = make_trial(p, 4, 0.0, TrialStatus::resources);
  failed.verify_error = -1;
  store.record(ok);
  store.record(failed);

  auto back = store.finished(ok.config_name, ok.kernel_hash);
  ASSERT_TRUE(back.has_value());
  EXPECT_EQ(test::as_json(*back), test::as_json(ok));
  EXPECT_EQ(back->seed, ok.seed);  // above INT64_MAX: survives the signed SQLite integer
  EXPECT_EQ(back->status, TrialStatus::ok);
  EXPECT_TRUE(back->cut_early);

  // A failed candidate is finished too: a resumed tune must not compile it again.
  auto back_failed = store.finished(failed.config_name, failed.kernel_hash);
  ASSERT_TRUE(back_failed.has_value());
  EXPECT_EQ(test::as_json(*back_failed), test::as_json(failed));
  EXPECT_EQ(back_failed->status, TrialStatus::resources);
  EXPECT_EQ(back_failed->reason, failed.reason);

  // Survives closing and a read-only reopen.
  store = SqliteStore::open(path(), OpenMode::read_only);
  const auto all = store.trials();
  ASSERT_EQ(all.size(), 2u);
  EXPECT_EQ(test::as_json(all[0].trial), test::as_json(ok));
  EXPECT_EQ(all[0].gpu, GpuIdentity::of(test::h200()));
  EXPECT_EQ(all[0].driver_version, 13000);
  EXPECT_EQ(all[0].nvrtc_major, 12);
}

TEST_F(StoreTest, NaNTimesRoundTrip) {
  const auto p = shape(64, 64, 64);
  auto store = rw();
  store.begin(test::h200(), p);
  auto t = make_trial(p, 0, 1.0, TrialStatus::crashed);
  t.time.median_ms = t.time.min_ms = t.time.max_ms = t.time.spread = std::nan("");
  store.record(t);
  const auto back = store.finished(t.config_name, t.kernel_hash);
  ASSERT_TRUE(back);
  EXPECT_TRUE(std::isnan(back->time.median_ms));
  EXPECT_TRUE(std::isnan(back->time.spread));
}

TEST_F(StoreTest, FinishedMatchesOnlyTheSameGpuProblemHashDriverAndNvrtc) {
  const auto p = shape(4096, 4096, 4096);
  const auto t = make_trial(p, 0, 2.0);
  {
    auto store = rw();
    store.begin(test::h200(), p);
    store.record(t);
    EXPECT_TRUE(store.finished(t.config_name, t.kernel_hash));
    EXPECT_FALSE(store.finished(t.config_name, "another-hash"));
    EXPECT_FALSE(store.finished(to_name(test::config_n(1)), t.kernel_hash));
  }
  auto check = [&](const GpuFingerprint& g, const Problem& prob) {
    auto store = rw();
    store.begin(g, prob);
    return store.finished(t.config_name, t.kernel_hash).has_value();
  };
  EXPECT_TRUE(check(test::h200(13020, 12), p));   // same driver major
  EXPECT_FALSE(check(test::h200(14000, 12), p));  // a new driver major measures again
  EXPECT_FALSE(check(test::h200(13000, 13), p));  // so does a new NVRTC major
  EXPECT_FALSE(check(test::a100(), p));
  EXPECT_FALSE(check(test::h200(), shape(4096, 4096, 2048)));
}

TEST_F(StoreTest, RecordBeforeBeginIsAnError) {
  auto store = rw();
  EXPECT_THROW(store.record(make_trial(shape(8, 8, 8), 0, 1.0)), Error);
  EXPECT_THROW(store.finished("x", "y"), Error);
}

TEST_F(StoreTest, RecordingTheSameTrialTwiceKeepsOneRow) {
  const auto p = shape(512, 512, 512);
  auto store = rw();
  store.begin(test::h200(), p);
  const auto t = make_trial(p, 0, 1.0);
  store.record(t);
  store.record(t);
  auto again = t;
  again.seed += 1;  // another measurement of the same config
  store.record(again);
  EXPECT_EQ(store.trials().size(), 2u);
}

// A finalist's re-timing may carry its screening trial's timestamp (to the second) and seed: it
// is still a measurement of its own, kept beside the screening one (before schema 5 it was
// dropped as the screening trial stored twice, and its edge checks went to that trial). Its phase
// tells them apart (schema 7), and so does the source: a replay's trial beside a measured one.
TEST_F(StoreTest, AFinalistsRetimingInTheSameSecondIsKept) {
  const auto p = shape(512, 512, 512);
  auto store = rw();
  store.begin(test::h200(), p);
  auto screened = make_trial(p, 0, 1.0);
  screened.strategy = "exhaustive";
  auto final = screened;
  final.phase = TrialPhase::final;
  final.time.median_ms = 0.9;
  auto replayed = screened;
  replayed.source = TrialSource::replayed;
  store.record(screened);
  store.record(final);
  store.record(final);  // still one row per measurement
  store.record(replayed);
  const auto all = store.trials();
  ASSERT_EQ(all.size(), 3u);
  EXPECT_EQ(all[0].trial.phase, TrialPhase::screen);
  EXPECT_EQ(all[1].trial.phase, TrialPhase::final);
  EXPECT_EQ(all[1].trial.time.median_ms, 0.9);
  EXPECT_EQ(all[2].trial.source, TrialSource::replayed);
  for (const auto& st : all) EXPECT_EQ(st.trial.strategy, "exhaustive");
  // The resumed search's screening leaves the finalist out.
  const auto order = store.screening_order();
  ASSERT_EQ(order.size(), 2u);
  for (const auto& t : order) EXPECT_NE(t.phase, TrialPhase::final);
}

TEST_F(StoreTest, BeginKeepsOneGpuRowWithTheLatestFingerprint) {
  const auto p = shape(512, 512, 512);
  auto store = rw();
  store.begin(test::h200(13000, 12), p);
  auto newer = test::h200(13020, 12);
  newer.uuid = "GPU-replaced-board";
  store.begin(newer, p);
  store.begin(test::a100(), p);
  const auto gpus = store.gpus();
  ASSERT_EQ(gpus.size(), 2u);
  const auto h = store.gpu(GpuIdentity::of(newer));
  ASSERT_TRUE(h);
  EXPECT_EQ(h->fingerprint.driver_version, 13020);
  EXPECT_EQ(h->fingerprint.uuid, "GPU-replaced-board");
  EXPECT_EQ(nlohmann::json(h->fingerprint), nlohmann::json(newer));
  EXPECT_EQ(store.find_gpus("nvidia h200").size(), 1u);
  EXPECT_EQ(store.find_gpus(GpuIdentity::of(test::a100()).key()).size(), 1u);
  EXPECT_TRUE(store.find_gpus("RTX 9999").empty());
}

TEST_F(StoreTest, WinnerIsTheFastestOkTrialAndIsDerived) {
  const auto p = shape(4096, 4096, 4096);
  auto store = rw();
  store.begin(test::h200(), p);
  store.record(make_trial(p, 0, 2.0));
  store.record(make_trial(p, 1, 0.5, TrialStatus::incorrect));  // fast but wrong: never a winner
  store.record(make_trial(p, 2, 1.0));
  const auto id = GpuIdentity::of(test::h200());
  auto w = store.winner(id, p);
  ASSERT_TRUE(w);
  EXPECT_EQ(w->best.trial.config_name, to_name(test::config_n(2)));
  EXPECT_EQ(w->ok_trials, 2);
  EXPECT_NEAR(w->ratio(), 1.25, 1e-9);

  store.record(make_trial(p, 3, 0.75));
  w = store.winner(id, p);
  ASSERT_TRUE(w);
  EXPECT_EQ(w->best.trial.config_name, to_name(test::config_n(3)));
  EXPECT_FALSE(store.winner(id, shape(1, 2, 3)));
  EXPECT_FALSE(store.winner(GpuIdentity::of(test::a100()), p));
}

// A tune screens every config, then verifies its finalists on the edge-shape suite in rank order
// and records the first that passes with its checks. A faster screening trial of a config that was
// never verified must not become the winner the database serves.
TEST_F(StoreTest, AVerifiedTrialWinsOverAFasterUnverifiedOne) {
  const auto p = shape(4096, 4096, 4096);
  const auto id = GpuIdentity::of(test::h200());
  auto store = rw();
  store.begin(test::h200(), p);
  store.record(make_trial(p, 0, 0.9));  // fastest in screening, never verified
  auto verified = make_trial(p, 1, 1.0);
  verified.edge_checks = test::edge_checks(p, 24);
  store.record(verified);
  auto failed = make_trial(p, 2, 0.8);  // checked, one case failed (as stored by an older tuner)
  failed.edge_checks = test::edge_checks(p, 24, 1);
  store.record(failed);
  auto w = store.winner(id, p);
  ASSERT_TRUE(w);
  EXPECT_EQ(w->best.trial.config_name, to_name(test::config_n(1)));
  EXPECT_EQ(w->ok_trials, 3);
  EXPECT_EQ(store.query(id, p).config_name, to_name(test::config_n(1)));
  ASSERT_EQ(store.winners().size(), 1u);
  EXPECT_EQ(store.winners()[0].best.trial.config_name, to_name(test::config_n(1)));

  // A finalist that fails the edge suite is recorded incorrect beside its ok screening trial: that
  // config is never served again for this problem, verified rival or not.
  const auto r = shape(1024, 1024, 1024);
  store.begin(test::h200(), r);
  store.record(make_trial(r, 0, 0.5));  // screened fastest, then failed the edge suite
  auto failed_final = make_trial(r, 0, 0.5, TrialStatus::incorrect);
  failed_final.timestamp = "2026-11-29T12:00:01Z";
  store.record(failed_final);
  store.record(make_trial(r, 1, 0.6));  // unverified (the tune was stopped), but not known wrong
  w = store.winner(id, r);
  ASSERT_TRUE(w);
  EXPECT_EQ(w->best.trial.config_name, to_name(test::config_n(1)));
  EXPECT_EQ(w->ok_trials, 1);

  // Without any verified trial the lowest median wins, as before edge checks existed.
  const auto q = shape(2048, 2048, 2048);
  store.begin(test::h200(), q);
  store.record(make_trial(q, 0, 0.9));
  store.record(make_trial(q, 1, 0.7));
  w = store.winner(id, q);
  ASSERT_TRUE(w);
  EXPECT_EQ(w->best.trial.config_name, to_name(test::config_n(1)));
}

// A kernel found inaccurate against FP64 is never served: neither its inaccurate trial (not ok)
// nor another ok trial of the same config on that GPU and problem (its screening trial passed, a
// re-timing failed the bound), as with a config recorded incorrect. The ratio is read back as
// stored, and a trial without one reads as not measured.
TEST_F(StoreTest, AnInaccurateConfigIsNeverAWinner) {
  const auto p = shape(4096, 4096, 4096);
  const auto id = GpuIdentity::of(test::h200());
  auto store = rw();
  store.begin(test::h200(), p);
  auto accurate = make_trial(p, 0, 1.0);
  accurate.error_ratio = 0.98;
  accurate.stress_ratio = 1.02;
  accurate.stress_case = "cancellation 256x128x1024 NN";
  store.record(accurate);
  auto fast = make_trial(p, 1, 0.5);
  fast.error_ratio = 1.01;
  store.record(fast);
  auto w = store.winner(id, p);
  ASSERT_TRUE(w);
  EXPECT_EQ(w->best.trial.config_name, to_name(test::config_n(1)));
  EXPECT_EQ(w->best.trial.error_ratio, 1.01);
  EXPECT_FALSE(w->best.trial.stress_ratio.has_value());

  auto retimed = make_trial(p, 1, 0.0, TrialStatus::inaccurate);
  retimed.timestamp = "2026-11-29T12:00:01Z";
  retimed.error_ratio = 1.01;
  retimed.stress_ratio = 2.5;
  retimed.stress_case = "underflow 128x128x1024 NN";
  store.record(retimed);
  w = store.winner(id, p);
  ASSERT_TRUE(w);
  EXPECT_EQ(w->best.trial.config_name, to_name(test::config_n(0)));
  EXPECT_EQ(w->ok_trials, 1);
  EXPECT_EQ(w->best.trial.error_ratio, 0.98);
  EXPECT_EQ(w->best.trial.stress_ratio, 1.02);
  EXPECT_EQ(w->best.trial.stress_case, "cancellation 256x128x1024 NN");
  EXPECT_EQ(nlohmann::json(*w).at("error_ratio"), 0.98);

  int inaccurate = 0;
  for (const auto& st : store.trials()) {
    if (st.trial.status != TrialStatus::inaccurate) continue;
    ++inaccurate;
    EXPECT_EQ(st.trial.stress_ratio, 2.5);
    EXPECT_EQ(st.trial.stress_case, "underflow 128x128x1024 NN");
  }
  EXPECT_EQ(inaccurate, 1);
}

TEST_F(StoreTest, StaleTrialsAreKeptButNotServedUnlessAllowed) {
  const auto p = shape(4096, 4096, 4096);
  const auto id = GpuIdentity::of(test::h200());
  auto store = rw();
  // Measured under driver 12.x, then the driver was upgraded to 13.x.
  store.begin(test::h200(12080, 12), p);
  store.record(make_trial(p, 0, 0.5));
  store.begin(test::h200(13000, 12), p);
  auto other_source = make_trial(p, 1, 0.6);
  other_source.kernel_hash = "0000000000000000000000000000000000000000000000000000000000000000";
  store.record(other_source);
  store.record(make_trial(p, 2, 1.0));

  auto w = store.winner(id, p);
  ASSERT_TRUE(w);
  EXPECT_EQ(w->best.trial.config_name, to_name(test::config_n(2)));
  EXPECT_FALSE(w->stale);
  const auto stale = store.stale_trials(id, p);
  EXPECT_EQ(stale.total, 2);
  EXPECT_EQ(stale.driver, 1);
  EXPECT_EQ(stale.kernel_hash, 1);
  EXPECT_EQ(stale.nvrtc, 0);

  QueryOptions any;
  any.allow_stale = true;
  w = store.winner(id, p, any);
  ASSERT_TRUE(w);
  EXPECT_EQ(w->best.trial.config_name, to_name(test::config_n(0)));
  EXPECT_TRUE(w->stale);
  EXPECT_EQ(store.trials().size(), 3u);

  // An explicit reference (what the GPU side will pass for the live device) overrides the row.
  QueryOptions old_driver;
  old_driver.reference.driver_major = 12;
  w = store.winner(id, p, old_driver);
  ASSERT_TRUE(w);
  EXPECT_EQ(w->best.trial.config_name, to_name(test::config_n(0)));
}

TEST_F(StoreTest, QueryFallsBackExactThenNearestThenDefault) {
  const auto big = shape(4096, 4096, 4096), small = shape(1024, 1024, 1024);
  const auto id = GpuIdentity::of(test::h200());
  auto store = rw();
  store.begin(test::h200(), big);
  store.record(make_trial(big, 0, 2.0));
  store.begin(test::h200(), small);
  store.record(make_trial(small, 1, 0.1));

  auto r = store.query(id, big);
  EXPECT_EQ(r.source, Source::exact);
  EXPECT_EQ(r.config_name, to_name(test::config_n(0)));
  EXPECT_EQ(r.distance, 0);

  r = store.query(id, shape(4096, 4096, 2048));
  EXPECT_EQ(r.source, Source::nearest);
  EXPECT_EQ(r.served, big);
  EXPECT_DOUBLE_EQ(r.distance, 1.0);
  EXPECT_EQ(r.config_name, to_name(test::config_n(0)));

  r = store.query(id, shape(1536, 1024, 1024));  // log2(1.5) from small, far from big
  EXPECT_EQ(r.source, Source::nearest);
  EXPECT_EQ(r.served, small);
  EXPECT_NEAR(r.distance, std::log2(1.5), 1e-12);

  r = store.query(id, shape(4096, 4096, 4096, "TN"));  // no tuned shape with this layout
  EXPECT_EQ(r.source, Source::default_config);
  EXPECT_EQ(r.config_name, kDefaultConfigName);

  r = store.query(GpuIdentity::of(test::a100()), big);
  EXPECT_EQ(r.source, Source::default_config);
  EXPECT_TRUE(r.shape_violations.empty());
  // The kernel serves any shape: a tile that does not divide the problem is no violation.
  r = store.query(GpuIdentity::of(test::a100()), shape(1000, 1000, 1000, "TT"));
  EXPECT_EQ(r.source, Source::default_config);
  EXPECT_TRUE(r.shape_violations.empty());
}

// The nearest winner that cannot run the requested shape (a TMA config, whose tensor copies need
// rows of whole 16-byte units) is passed over and named; the next nearest that can is served, and
// with none left the default config.
TEST_F(StoreTest, QueryPassesOverANearerWinnerThatCannotRunTheShape) {
  const auto near = shape(1024, 1024, 512), far = shape(4096, 4096, 4096);
  const auto id = GpuIdentity::of(test::h200());
  auto tma = make_trial(near, 0, 0.05);
  tma.config = *from_name("wt_64x128x32_w32x32_wn1_t4x4_n256_mb1_s3_p4_g8_o1_m1");
  tma.config_name = to_name(tma.config);
  tma.kernel_hash = kernel_source_hash(tma.config);
  auto store = rw();
  store.begin(test::h200(), near);
  store.record(tma);

  // Only the TMA winner: the default config, with the skipped winner named.
  const auto odd = shape(1023, 777, 513);
  auto r = store.query(id, odd);
  EXPECT_EQ(r.source, Source::default_config);
  EXPECT_EQ(r.config_name, kDefaultConfigName);
  EXPECT_TRUE(r.shape_violations.empty());
  ASSERT_EQ(r.skipped.size(), 1u);
  EXPECT_EQ(r.skipped[0].config_name, tma.config_name);
  EXPECT_EQ(r.skipped[0].served, near);
  ASSERT_FALSE(r.skipped[0].violations.empty());
  EXPECT_EQ(r.skipped[0].violations[0].rule, "shape_tma_operands");

  // A farther winner that fits is served instead.
  store.begin(test::h200(), far);
  store.record(make_trial(far, 1, 2.0));
  r = store.query(id, odd);
  EXPECT_EQ(r.source, Source::nearest);
  EXPECT_EQ(r.served, far);
  EXPECT_EQ(r.config_name, to_name(test::config_n(1)));
  EXPECT_TRUE(r.shape_violations.empty());
  ASSERT_EQ(r.skipped.size(), 1u);
  EXPECT_GT(r.distance, r.skipped[0].distance);

  // A shape the TMA winner can run is served it, with nothing skipped.
  r = store.query(id, shape(1024, 1024, 1024));
  EXPECT_EQ(r.config_name, tma.config_name);
  EXPECT_TRUE(r.skipped.empty());
}

TEST_F(StoreTest, QueryServesEachLayoutItsOwnWinners) {
  const auto nn = shape(2048, 2048, 2048), tn = shape(2048, 2048, 2048, "TN");
  const auto id = GpuIdentity::of(test::h200());
  auto store = rw();
  store.begin(test::h200(), nn);
  store.record(make_trial(nn, 0, 1.0));
  store.begin(test::h200(), tn);
  store.record(make_trial(tn, 1, 1.2));

  auto r = store.query(id, tn);
  EXPECT_EQ(r.source, Source::exact);
  EXPECT_EQ(r.config_name, to_name(test::config_n(1)));
  r = store.query(id, shape(1024, 2048, 2048, "TN"));
  EXPECT_EQ(r.source, Source::nearest);
  EXPECT_EQ(r.served, tn);
  EXPECT_EQ(r.config_name, to_name(test::config_n(1)));
  r = store.query(id, shape(1024, 2048, 2048));
  EXPECT_EQ(r.served, nn);
  EXPECT_EQ(r.config_name, to_name(test::config_n(0)));
  EXPECT_EQ(store.query(id, shape(2048, 2048, 2048, "NT")).source, Source::default_config);
}

TEST_F(StoreTest, EdgeChecksRoundTripWithTheirTrial) {
  const auto p = shape(4096, 4096, 4096, "TN");
  const auto id = GpuIdentity::of(test::h200());
  auto winner = make_trial(p, 0, 1.0);
  winner.edge_checks = test::edge_checks(p, 23, 2);
  const auto loser = make_trial(p, 1, 2.0);  // verified on nothing
  {
    auto store = rw();
    store.begin(test::h200(), p);
    store.record(winner);
    store.record(loser);

    const auto back = store.finished(winner.config_name, winner.kernel_hash);
    ASSERT_TRUE(back);
    EXPECT_EQ(test::as_json(*back), test::as_json(winner));
    const auto back_loser = store.finished(loser.config_name, loser.kernel_hash);
    ASSERT_TRUE(back_loser);
    EXPECT_TRUE(back_loser->edge_checks.empty());
  }
  EXPECT_EQ(test::count_rows(path(), "SELECT count(*) FROM edge_checks"), 23);

  auto ro = SqliteStore::open(path(), OpenMode::read_only);
  const auto all = ro.trials();
  ASSERT_EQ(all.size(), 2u);
  EXPECT_EQ(test::as_json(all[0].trial), test::as_json(winner));
  EXPECT_TRUE(all[1].trial.edge_checks.empty());
  ASSERT_EQ(all[0].trial.edge_checks.size(), 23u);
  EXPECT_EQ(all[0].trial.edge_checks[22].problem.K, 0);  // order kept, K = 0 stored
  EXPECT_EQ(edge_checks_passed(all[0].trial.edge_checks), 21);

  const auto w = ro.winner(id, p);
  ASSERT_TRUE(w);
  EXPECT_EQ(test::as_json(w->best.trial), test::as_json(winner));
  const auto r = ro.query(id, shape(4096, 4096, 2048, "TN"));  // nearest: the same winner
  ASSERT_EQ(r.source, Source::nearest);
  ASSERT_TRUE(r.winner);
  EXPECT_EQ(r.winner->best.trial.edge_checks.size(), 23u);
  const nlohmann::json j = r;
  EXPECT_EQ(j.at("edge_checks").size(), 23u);
  EXPECT_EQ(j.at("edge_check_summary").at("passed"), 21);
  EXPECT_EQ(j.at("edge_check_summary").at("failed"), nlohmann::json({"case-0", "case-1"}));
  const auto winners = ro.winners();
  ASSERT_EQ(winners.size(), 1u);
  EXPECT_EQ(winners[0].best.trial.edge_checks.size(), 23u);
}

TEST_F(StoreTest, RecordingTheWinnerAgainAttachesItsEdgeChecksOnce) {
  // A tune records every finalist as it is measured, then the winner again once verified.
  const auto p = shape(1024, 1024, 1024);
  auto store = rw();
  store.begin(test::h200(), p);
  auto t = make_trial(p, 0, 1.0);
  store.record(t);
  EXPECT_TRUE(store.finished(t.config_name, t.kernel_hash)->edge_checks.empty());

  t.edge_checks = test::edge_checks(p, 5);
  store.record(t);
  auto back = store.finished(t.config_name, t.kernel_hash);
  ASSERT_TRUE(back);
  EXPECT_EQ(test::as_json(*back), test::as_json(t));
  EXPECT_EQ(store.trials().size(), 1u);

  // Checks already stored are kept: neither another suite nor an unverified copy replaces them.
  auto other = t;
  other.edge_checks = test::edge_checks(p, 3, 3);
  store.record(other);
  auto bare = t;
  bare.edge_checks.clear();
  store.record(bare);
  back = store.finished(t.config_name, t.kernel_hash);
  ASSERT_TRUE(back);
  EXPECT_EQ(test::as_json(*back), test::as_json(t));
  EXPECT_EQ(test::count_rows(path(), "SELECT count(*) FROM edge_checks"), 5);
  EXPECT_EQ(store.trials().size(), 1u);
}

TEST_F(StoreTest, NullKnobColumnsLoadAsTheKnobsDefaults) {
  // Rows stored before a knob's column existed hold NULL there once migrate() adds it.
  const auto p = shape(1024, 1024, 1024);
  auto knobbed = test::config_n(1);
  knobbed.STAGES = 2;
  knobbed.PAD_A = 4;
  {
    auto store = rw();
    store.begin(test::h200(), p);
    store.record(make_trial(p, 0, 1.0));
    auto t = make_trial(p, 1, 2.0);
    t.config = knobbed;
    t.config_name = to_name(knobbed);
    store.record(t);
  }
  std::string nulls;
  int knobs = 0;
  for (const auto& f : kConfigFields) {
    if (f.default_value == kRequired) continue;
    nulls += std::string(nulls.empty() ? "" : ", ") + "\"" + std::string(f.name) + "\" = NULL";
    ++knobs;
  }
  ASSERT_GT(knobs, 0);
  {
    Connection c(path(), SQLITE_OPEN_READWRITE, 1000);
    c.exec_script("UPDATE configs SET " + nulls);
  }
  auto check_defaults = [&](const SqliteStore& s) {
    const auto all = s.trials();
    ASSERT_EQ(all.size(), 2u);
    for (const auto& f : kConfigFields) {
      if (f.default_value == kRequired) continue;
      EXPECT_EQ(all[0].trial.config.*f.member, f.default_value) << f.name;
    }
    EXPECT_EQ(all[0].trial.config, test::config_n(0));
    // A knob that differs from its default is in the canonical name, which wins over NULL.
    EXPECT_EQ(all[1].trial.config, knobbed);
  };
  check_defaults(SqliteStore::open(path(), OpenMode::read_only));
  check_defaults(rw());

  // Even a row whose name is not canonical gets the defaults, never a zero.
  {
    Connection c(path(), SQLITE_OPEN_READWRITE, 1000);
    c.exec_script("UPDATE configs SET name = 'hand-made' WHERE name = '" +
                  to_name(test::config_n(0)) + "'");
  }
  const auto all = SqliteStore::open(path(), OpenMode::read_only).trials();
  ASSERT_EQ(all.size(), 2u);
  EXPECT_EQ(all[0].trial.config_name, "hand-made");
  EXPECT_EQ(all[0].trial.config, test::config_n(0));
}

TEST(ShapeDistance, IsTheLog2EuclideanDistance) {
  EXPECT_DOUBLE_EQ(shape_distance(shape(4096, 4096, 4096), shape(4096, 4096, 4096)), 0.0);
  EXPECT_DOUBLE_EQ(shape_distance(shape(4096, 4096, 4096), shape(2048, 4096, 4096)), 1.0);
  EXPECT_DOUBLE_EQ(shape_distance(shape(1024, 1024, 1024), shape(2048, 2048, 2048)),
                   std::sqrt(3.0));
  EXPECT_DOUBLE_EQ(shape_distance(shape(1, 4, 16), shape(4, 1, 16)), std::sqrt(8.0));
}

TEST_F(StoreTest, ReadOnlyStoreRefusesEveryWriteAndLeavesTheFile) {
  const auto p = shape(256, 256, 256);
  {
    auto store = rw();
    store.begin(test::h200(), p);
    store.record(make_trial(p, 0, 1.0));
  }
  const auto bytes = test::read_bytes(path());
  auto ro = SqliteStore::open(path(), OpenMode::read_only);
  EXPECT_THROW(ro.begin(test::h200(), p), Error);
  EXPECT_THROW(ro.vacuum(), Error);
  EXPECT_THROW(ro.import_json(nlohmann::json::object(), "x"), Error);
  EXPECT_EQ(ro.trials().size(), 1u);
  EXPECT_EQ(test::read_bytes(path()), bytes);
}

TEST_F(StoreTest, PermissionDeniedFileIsRefusedForWriting) {
  if (geteuid() == 0) GTEST_SKIP() << "running as root: chmod 0444 does not stop root's writes";
  const auto p = shape(256, 256, 256);
  {
    auto store = rw();
    store.begin(test::h200(), p);
  }
  std::filesystem::permissions(path(), std::filesystem::perms::owner_read |
                                           std::filesystem::perms::group_read |
                                           std::filesystem::perms::others_read);
  const auto bytes = test::read_bytes(path());
  try {
    rw();
    ADD_FAILURE() << "opened a 0444 file for writing";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("not writable"), std::string::npos) << e.what();
  }
  EXPECT_EQ(test::read_bytes(path()), bytes);
  EXPECT_NO_THROW(SqliteStore::open(path(), OpenMode::read_only).gpus());
}

TEST_F(StoreTest, LockedDatabaseFailsAfterTheBusyTimeoutAndLosesNothing) {
  const auto p = shape(256, 256, 256);
  auto store = SqliteStore::open(path(), OpenMode::read_write, /*busy_timeout_ms=*/150);
  store.begin(test::h200(), p);
  store.record(make_trial(p, 0, 1.0));

  Connection locker(path(), SQLITE_OPEN_READWRITE, 0);
  locker.exec_script("BEGIN EXCLUSIVE");
  const auto t0 = std::chrono::steady_clock::now();
  try {
    store.record(make_trial(p, 1, 1.0));
    ADD_FAILURE() << "recorded through an exclusive lock";
  } catch (const Error& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find("locked"), std::string::npos) << msg;
    EXPECT_NE(msg.find(path().string()), std::string::npos) << msg;
    EXPECT_NE(msg.find("SGT_DB_BUSY_TIMEOUT_MS"), std::string::npos) << msg;
  }
  const auto waited = std::chrono::steady_clock::now() - t0;
  // It waited for the lock (the busy timeout), rather than failing at once.
  EXPECT_GE(waited, std::chrono::milliseconds(100));
  // WAL: readers are not blocked by a writer.
  EXPECT_EQ(store.trials().size(), 1u);
  locker.exec_script("ROLLBACK");

  store.record(make_trial(p, 1, 1.0));
  EXPECT_EQ(store.trials().size(), 2u);
}

}  // namespace
}  // namespace sgt::db
