// The tune session on the replay evaluator: complete tunes, resume, budgets, the cut, failures of
// every status and edge verification, with no GPU and no compiler; over the shipped H200 datasets
// and over small recordings made up for the mechanics.
#include <gtest/gtest.h>

#include <fmt/format.h>

#include <map>
#include <set>

#include "dataset.hpp"
#include "error.hpp"
#include "replay_evaluator.hpp"
#include "space.hpp"
#include "store.hpp"
#include "test_support.hpp"
#include "replay_support.hpp"
#include "tune.hpp"

namespace sgt {
namespace {

using eval::Recording;
using eval::ReplayEvaluator;

using test::load;
using test::MemoryStore;
using test::shipped;
using test::survivors;

tune::TuneOptions options(const Recording& r, std::vector<WarpTileConfig> candidates) {
  tune::TuneOptions o;
  o.problem = r.problem;
  o.candidates = std::move(candidates);
  o.top_k = 3;
  o.seed = 11;
  o.compile_threads = 2;
  return o;
}

const Trial* recorded_screening_best(const Recording& r) {
  const Trial* best = nullptr;
  for (const auto& t : r.trials) {
    if (t.phase == TrialPhase::final || t.status != TrialStatus::ok || t.cut_early) continue;
    if (!best || t.time.median_ms < best->time.median_ms) best = &t;
  }
  return best;
}

// The whole recorded set (every built-in space of its day) of a shipped dataset, exhaustively:
// every candidate measured once, the recording's statuses and cuts reproduced (the replay cuts what
// the recording cut, in the same order, against the same best), and the recorded winner wins again.
TEST(ReplayTune, ExhaustiveReplayOfAShippedDatasetReproducesItsRecording) {
  const auto rec = load(shipped("1024x1024x1024-NN"));
  ASSERT_FALSE(rec.space.empty());
  const auto candidates = survivors(rec.space, rec.problem);
  ReplayEvaluator ev(rec, 16);
  MemoryStore store;
  const auto r = tune::run_tune(options(rec, candidates), ev, store);
  EXPECT_EQ(r.measured, static_cast<int>(candidates.size()));
  EXPECT_EQ(r.evaluator, "replay");
  std::map<std::string, int> recorded_status;
  int recorded_cut = 0;
  for (const auto& t : rec.trials) {
    if (t.phase == TrialPhase::final) continue;
    ++recorded_status[std::string(to_string(t.status))];
    recorded_cut += t.cut_early;
  }
  EXPECT_EQ(r.status_counts, recorded_status);
  EXPECT_EQ(r.cut_early, recorded_cut);
  std::set<std::string> names;
  for (const auto& t : store.trials) {
    if (t.phase != TrialPhase::final) EXPECT_TRUE(names.insert(t.config_name).second);
    EXPECT_EQ(t.strategy, "exhaustive");
    EXPECT_EQ(t.source, TrialSource::replayed);
  }
  EXPECT_EQ(names.size(), candidates.size());
  ASSERT_FALSE(r.finalists.empty());
  const Trial* best = recorded_screening_best(rec);
  ASSERT_NE(best, nullptr);
  bool best_is_finalist = false;
  for (const auto& f : r.finalists) best_is_finalist |= f.trial.config_name == best->config_name;
  EXPECT_TRUE(best_is_finalist);
  // The recorded winner carries its 24 edge checks, replayed with it.
  EXPECT_EQ(r.finalists.front().trial.edge_checks.size(), 24u);
  EXPECT_EQ(edge_checks_passed(r.finalists.front().trial.edge_checks), 24);
  // Simulated time: every binary's compile once (over 16 threads) plus every measurement.
  EXPECT_GT(ev.elapsed_s(), 0);
}

// A budgeted replay stops at exactly max_evals; the same command again resumes and measures only
// what is left: nothing twice, nothing lost, in the database a real tune uses.
TEST(ReplayTune, ResumedReplayMeasuresNothingTwice) {
  const auto rec = load(shipped("512x2048x512-NT"));
  const auto candidates = survivors("quick+tma", rec.problem);
  ASSERT_GT(candidates.size(), 100u);
  test::TempDir dir;
  const auto path = dir.path() / "replay.db";
  auto o = options(rec, candidates);
  o.strategy = "random";
  o.max_evals = 60;
  {
    auto store = db::SqliteStore::open(path, db::OpenMode::read_write);
    ReplayEvaluator ev(rec);
    const auto r = tune::run_tune(o, ev, store);
    EXPECT_EQ(r.measured, 60);
    EXPECT_TRUE(r.budget_hit);
    EXPECT_EQ(r.resumed, 0);
  }
  o.max_evals = 0;
  auto store = db::SqliteStore::open(path, db::OpenMode::read_write);
  ReplayEvaluator ev(rec);
  const auto r = tune::run_tune(o, ev, store);
  EXPECT_EQ(r.resumed, 60);
  EXPECT_EQ(r.measured, static_cast<int>(candidates.size()) - 60);
  EXPECT_FALSE(r.budget_hit);
  EXPECT_EQ(r.trials.size(), candidates.size());
  // Screening trials: one per candidate across both runs.
  std::map<std::string, int> screened;
  for (const auto& st : store.trials()) {
    if (st.trial.phase != TrialPhase::final) ++screened[st.trial.config_name];
  }
  EXPECT_EQ(screened.size(), candidates.size());
  for (const auto& [name, n] : screened) EXPECT_EQ(n, 1) << name;
  // The stored winner is the one a query serves (stale trials allowed: this recording's TMA
  // trials predate a change of the TMA kernel, and replayed they keep their recorded hash).
  ASSERT_FALSE(r.finalists.empty());
  db::QueryOptions stale;
  stale.allow_stale = true;
  const auto w = store.winner(db::GpuIdentity::of(rec.gpu), rec.problem, stale);
  ASSERT_TRUE(w);
  EXPECT_EQ(w->best.trial.config_name, r.finalists.front().trial.config_name);
}

// A recording made up for the mechanics: configs of the quick space, each given an outcome.
struct Synthetic {
  Recording rec;
  std::vector<WarpTileConfig> candidates;
};

Synthetic synthetic(const std::vector<TrialStatus>& statuses, std::vector<double> medians) {
  Synthetic s;
  s.rec.origin = "synthetic";
  s.rec.gpu.name = "NVIDIA H200";
  s.rec.gpu.cc_major = 9;
  s.rec.gpu.sm_count = 132;
  s.rec.problem = parse_shape("1024x1024x1024");
  auto all = survivors("quick", s.rec.problem);
  all.erase(
      std::remove_if(all.begin(), all.end(), [](const auto& c) { return c.family == "ws_tma"; }),
      all.end());
  for (size_t i = 0; i < statuses.size(); ++i) {
    Trial t;
    t.config = all.at(i);
    t.config_name = to_name(t.config);
    t.problem = s.rec.problem;
    t.status = statuses[i];
    t.reason = statuses[i] == TrialStatus::ok ? "" : std::string(to_string(statuses[i])) + " here";
    if (statuses[i] == TrialStatus::ok) {
      t.time.median_ms = medians[i];
      t.time.min_ms = medians[i] * 0.99;
      t.time.max_ms = medians[i] * 1.02;
      t.time.repetitions = 5;
      t.verify_error = 0;
    }
    t.registers = 100 + static_cast<int>(i);
    t.cublas_median_ms = 0.1;
    t.compile_s = 1.0;
    t.measure_s = 0.01;
    t.strategy = "exhaustive";
    s.rec.trials.push_back(t);
    s.candidates.push_back(t.config);
  }
  return s;
}

TEST(ReplayTune, EveryFailureIsARecordedTrialWithItsReason) {
  using S = TrialStatus;
  const std::vector<S> st = {S::ok,        S::compile_failed, S::spills,  S::resources,
                             S::incorrect, S::crashed,        S::timeout, S::ok};
  auto s = synthetic(st, {0.2, 0, 0, 0, 0, 0, 0, 0.15});
  ReplayEvaluator ev(s.rec, 1);
  MemoryStore store;
  auto o = options(s.rec, s.candidates);
  const auto r = tune::run_tune(o, ev, store);
  ASSERT_EQ(r.trials.size(), st.size());
  for (size_t i = 0; i < st.size(); ++i) {
    EXPECT_EQ(r.trials[i].status, st[i]) << i;
    if (st[i] != S::ok) EXPECT_EQ(r.trials[i].reason, std::string(to_string(st[i])) + " here");
  }
  // ptxas's report travels with the trial, failed or not.
  EXPECT_EQ(r.trials[2].registers, 102);
  // Only ok trials become finalists: the faster first.
  ASSERT_EQ(r.finalists.size(), 2u);
  EXPECT_EQ(r.finalists[0].trial.config_name, s.rec.trials[7].config_name);
  EXPECT_NEAR(r.finalists[0].ratio, 0.1 / 0.15, 1e-9);
  // Unverifiable in a replay: the winner is left without edge checks, not passed by guess.
  EXPECT_TRUE(r.finalists[0].trial.edge_checks.empty());
}

// A candidate recorded whole is cut when the replay's best so far makes it too slow; one the
// recording cut stays cut (censored) even where the replay would not have cut it.
TEST(ReplayTune, TheCutIsReplayedAndCensoredTrialsStayCensored) {
  using S = TrialStatus;
  auto s = synthetic({S::ok, S::ok, S::ok, S::ok}, {0.30, 0.10, 0.20, 0.11});
  s.rec.trials[0].cut_early = true;  // cut in the recording, though first here
  s.rec.trials[0].time.repetitions = 2;
  ReplayEvaluator ev(s.rec, 1);
  MemoryStore store;
  auto o = options(s.rec, s.candidates);
  o.cut_ratio = 1.25;
  const auto r = tune::run_tune(o, ev, store);
  EXPECT_TRUE(r.trials[0].cut_early);   // censored as recorded
  EXPECT_FALSE(r.trials[1].cut_early);  // the best so far
  EXPECT_TRUE(r.trials[2].cut_early);   // 0.198 > 1.25 x 0.10
  EXPECT_EQ(r.trials[2].time.repetitions, 2);
  EXPECT_FALSE(r.trials[3].cut_early);  // 0.109 <= 0.125
  EXPECT_EQ(r.cut_early, 2);
  // Cut trials never become finalists.
  for (const auto& f : r.finalists) EXPECT_FALSE(f.trial.cut_early);
}

// The fastest finalist fails its recorded edge cases: it is stored incorrect with the failed
// cases, and the next one that passes wins.
TEST(ReplayTune, AFinalistFailingItsEdgeCasesLosesToTheNextThatPasses) {
  using S = TrialStatus;
  auto s = synthetic({S::ok, S::ok, S::ok}, {0.12, 0.10, 0.11});
  auto edges = [&](int failed) {
    std::vector<EdgeCheck> out(3);
    for (int i = 0; i < 3; ++i) {
      out[i].label = "case" + std::to_string(i);
      out[i].problem = parse_shape("129x65x17");
      out[i].passed = i >= failed;
      out[i].reason = out[i].passed ? "" : "mismatch";
    }
    return out;
  };
  s.rec.trials[1].edge_checks = edges(1);
  s.rec.trials[2].edge_checks = edges(0);
  ReplayEvaluator ev(s.rec, 1);
  MemoryStore store;
  const auto r = tune::run_tune(options(s.rec, s.candidates), ev, store);
  ASSERT_EQ(r.finalists.size(), 3u);
  EXPECT_EQ(r.finalists[0].trial.config_name, s.rec.trials[2].config_name);
  EXPECT_EQ(edge_checks_passed(r.finalists[0].trial.edge_checks), 3);
  bool stored_incorrect = false;
  for (const auto& t : store.trials) {
    if (t.config_name == s.rec.trials[1].config_name && t.status == S::incorrect) {
      stored_incorrect = true;
      EXPECT_NE(t.reason.find("failed 1 of 3 edge cases"), std::string::npos) << t.reason;
      EXPECT_EQ(t.edge_checks.size(), 3u);
    }
  }
  EXPECT_TRUE(stored_incorrect);
}

TEST(ReplayTune, ACandidateTheRecordingLacksIsAnErrorNotAGuess) {
  auto s = synthetic({TrialStatus::ok}, {0.1});
  auto extra = survivors("quick", s.rec.problem);
  ASSERT_GT(extra.size(), 5u);
  s.candidates.push_back(extra[5]);
  ReplayEvaluator ev(s.rec, 1);
  MemoryStore store;
  try {
    tune::run_tune(options(s.rec, s.candidates), ev, store);
    FAIL() << "expected InputError";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find(to_name(extra[5])), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("not in the recording"), std::string::npos) << e.what();
  }
}

TEST(ReplayTune, MaxEvalsIsHonouredExactly) {
  const auto rec = load(shipped("64x4096x4096-NN"));
  const auto candidates = survivors("skinny", rec.problem);
  for (size_t n : {1u, 7u, 33u}) {
    ReplayEvaluator ev(rec);
    MemoryStore store;
    auto o = options(rec, candidates);
    o.max_evals = n;
    o.strategy = "random";
    const auto r = tune::run_tune(o, ev, store);
    EXPECT_EQ(r.measured, static_cast<int>(n));
    EXPECT_TRUE(r.budget_hit);
    size_t screened = 0;
    for (const auto& t : store.trials) screened += t.phase != TrialPhase::final;
    EXPECT_EQ(screened, n);
  }
}

// Patience: the session stops at the first measurement that completes `patience` in a row without
// a gain of min_gain over the best at the last gain, recomputed here from the stored order; without
// patience the same search measures everything.
TEST(ReplayTune, PatienceStopsASearchThatNoLongerGains) {
  const auto rec = load(shipped("4096x4096x1024-NT"));
  const auto candidates = survivors("large+tma", rec.problem);
  ASSERT_GT(candidates.size(), 400u);
  for (size_t patience : {25u, 80u}) {
    ReplayEvaluator ev(rec);
    MemoryStore store;
    auto o = options(rec, candidates);
    o.strategy = "exhaustive";
    o.patience = patience;
    const auto r = tune::run_tune(o, ev, store);
    EXPECT_EQ(r.stopped, "converged");
    EXPECT_EQ(r.since_gain, static_cast<int>(patience));
    EXPECT_FALSE(r.budget_hit);
    // Where the rule says the search ends, from the screening trials in the order measured.
    double ref = 0;
    size_t since = 0, stop = 0, n = 0;
    for (const auto& t : store.trials) {
      if (t.phase == TrialPhase::final) continue;
      ++n;
      const bool ok = t.status == TrialStatus::ok && !t.cut_early;
      if (ok && (ref == 0 || t.time.median_ms < ref * (1 - o.min_gain))) {
        ref = t.time.median_ms;
        since = 0;
      } else if (++since == patience && stop == 0) {
        stop = n;
      }
    }
    EXPECT_EQ(stop, n) << "patience " << patience;
    EXPECT_EQ(r.measured, static_cast<int>(n));
    EXPECT_LT(r.measured, static_cast<int>(candidates.size()));
  }
  ReplayEvaluator ev(rec);
  MemoryStore store;
  auto o = options(rec, candidates);
  o.strategy = "exhaustive";
  const auto all = tune::run_tune(o, ev, store);
  EXPECT_EQ(all.stopped, "exhausted");
  EXPECT_EQ(all.measured, static_cast<int>(candidates.size()));
}

// A time budget on a replay runs on the recorded seconds: the search stops once they are spent,
// and the same tune again resumes with what is left.
TEST(ReplayTune, ABudgetStopsTheSearchOnTheRecordedClockAndAResumeGoesOn) {
  const auto rec = load(shipped("2048x512x2048-TN"));
  const auto candidates = survivors("small", rec.problem);
  MemoryStore store;
  auto o = options(rec, candidates);
  o.strategy = "random";
  o.budget_s = 30;
  ReplayEvaluator ev(rec, 16);
  const auto r = tune::run_tune(o, ev, store);
  EXPECT_TRUE(r.budget_hit);
  EXPECT_GT(r.measured, 0);
  EXPECT_LT(r.measured, static_cast<int>(candidates.size()));
  EXPECT_GE(ev.elapsed_s(), 30.0);
  o.budget_s = 0;
  ReplayEvaluator again(rec, 16);
  const auto rest = tune::run_tune(o, again, store);
  EXPECT_EQ(rest.resumed, r.measured);
  EXPECT_EQ(rest.resumed + rest.measured, static_cast<int>(candidates.size()));
  EXPECT_FALSE(rest.budget_hit);
}

// CI reads every shipped dataset: each is one H200 problem. A complete one holds every survivor of
// the spaces its header names (the built-in set of the day it was recorded; a space added since is
// not asked of it: a replay tunes the header's set).
TEST(ShippedDatasets, EveryDatasetReadsAndTheCompleteOnesCoverTheirSpace) {
  int complete = 0;
  for (const auto& e : std::filesystem::directory_iterator(shipped("x").parent_path())) {
    if (e.path().extension() != ".gz") continue;
    const auto ds = db::read_dataset(e.path());
    EXPECT_EQ(ds.gpu.fingerprint.name, "NVIDIA H200") << e.path();
    const auto& h = ds.header;
    const auto name = fmt::format("{}-{}", h.problem.shape(), h.problem.layout);
    EXPECT_EQ(e.path().filename().string(), name + ".json.gz");
    if (!h.complete) continue;
    ++complete;
    std::set<std::string> recorded;
    for (const auto& st : ds.trials) recorded.insert(st.trial.config_name);
    for (const auto& c : survivors(h.space, h.problem)) {
      EXPECT_TRUE(recorded.count(to_name(c))) << name << " lacks " << to_name(c);
    }
  }
  EXPECT_GE(complete, 8);
}

}  // namespace
}  // namespace sgt
