// The last look of a converged search (TuneOptions::local_look) on the replay evaluator: a made-up
// recording whose optimum is a one-knob neighbour of the best the search measured, which the
// strategy never asked for before its patience ran out; and the stops that must not look.
#include <gtest/gtest.h>

#include <algorithm>
#include <optional>
#include <set>

#include <nlohmann/json.hpp>

#include "replay_evaluator.hpp"
#include "replay_support.hpp"
#include "store.hpp"
#include "strategy.hpp"
#include "test_support.hpp"
#include "tune.hpp"

namespace sgt {
namespace {

using eval::Recording;
using eval::ReplayEvaluator;
using test::MemoryStore;
using test::survivors;

constexpr size_t kPatience = 12;

// Candidates in the order exhaustive measures them: the near-best `near` first, then slower
// fillers none of which is one knob from `near`, then `optimum` (one knob from `near`, faster
// than anything) and more fillers. Exhaustive with patience kPatience converges after `near` and
// kPatience fillers, before it reaches `optimum`.
struct Planted {
  Recording rec;
  std::vector<WarpTileConfig> candidates;
  std::string near, optimum;
};

// With tile_move, `optimum` is a block-tile move of `near` (tile_move_neighbours) that differs
// from it in more than one knob, so only the look's tile moves reach it.
Planted planted(bool tile_move = false) {
  Planted s;
  s.rec.origin = "synthetic";
  s.rec.gpu.name = "NVIDIA H200";
  s.rec.gpu.cc_major = 9;
  s.rec.gpu.sm_count = 132;
  s.rec.gpu.uuid = "GPU-synthetic-local-look";
  s.rec.gpu.driver_version = 13000;
  s.rec.gpu.nvrtc_major = 13;
  s.rec.problem = parse_shape("1024x1024x1024");
  auto all = survivors("quick", s.rec.problem);
  std::erase_if(all, [](const auto& c) { return c.family == "ws_tma"; });
  const auto next_to = one_knob_neighbours(all);
  const auto moves = tile_move_neighbours(all);
  // The picks of a look around a: its one-knob neighbours and its tile moves.
  auto around_of = [&](size_t a) {
    std::set<size_t> out(next_to[a].begin(), next_to[a].end());
    out.insert(moves[a].begin(), moves[a].end());
    return out;
  };
  auto far_move = [&](size_t a) -> std::optional<size_t> {
    for (size_t j : moves[a]) {
      if (std::find(next_to[a].begin(), next_to[a].end(), j) == next_to[a].end()) return j;
    }
    return std::nullopt;
  };
  size_t a = 0;
  while (a < all.size() && (tile_move ? !far_move(a) : next_to[a].empty())) ++a;
  EXPECT_LT(a, all.size()) << "no candidate of quick has such a neighbour";
  const size_t b = tile_move ? *far_move(a) : next_to[a].front();
  const std::set<size_t> around = around_of(a);
  std::vector<size_t> fillers;
  for (size_t i = 0; i < all.size() && fillers.size() < kPatience + 8; ++i) {
    // No filler is one knob from the optimum either: only a look around `near` reaches it.
    const bool next_to_b = std::find(next_to[b].begin(), next_to[b].end(), i) != next_to[b].end();
    if (i != a && i != b && !around.count(i) && !next_to_b) fillers.push_back(i);
  }
  EXPECT_EQ(fillers.size(), kPatience + 8);
  std::vector<std::pair<size_t, double>> order = {{a, 0.100}};
  for (size_t f = 0; f < kPatience; ++f) order.emplace_back(fillers[f], 0.150 + 0.001 * f);
  order.emplace_back(b, 0.090);
  for (size_t f = kPatience; f < fillers.size(); ++f)
    order.emplace_back(fillers[f], 0.150 + 0.001 * f);
  for (const auto& [i, ms] : order) {
    Trial t;
    t.config = all[i];
    t.config_name = to_name(t.config);
    t.problem = s.rec.problem;
    t.status = TrialStatus::ok;
    t.time.median_ms = ms;
    t.time.min_ms = ms * 0.99;
    t.time.max_ms = ms * 1.02;
    t.time.repetitions = 5;
    t.cublas_median_ms = 0.1;
    t.compile_s = 1.0;
    t.measure_s = 0.01;
    t.strategy = "exhaustive";
    s.rec.trials.push_back(t);
    s.candidates.push_back(t.config);
  }
  s.near = to_name(all[a]);
  s.optimum = to_name(all[b]);
  return s;
}

tune::TuneOptions options(const Planted& s) {
  tune::TuneOptions o;
  o.problem = s.rec.problem;
  o.candidates = s.candidates;
  o.strategy = "exhaustive";
  o.patience = kPatience;
  o.local_look = true;  // exhaustive does not converge by default, so it does not look unasked
  o.top_k = 2;
  o.seed = 5;
  o.compile_threads = 1;
  return o;
}

bool measured(const MemoryStore& store, const std::string& name) {
  const auto s = store.screened();
  return std::find(s.begin(), s.end(), name) != s.end();
}

// Without the look the search ends on `near`; with it, the neighbour it never asked for is
// measured, stored as the look's, and wins.
TEST(LocalLook, AConvergedSearchMeasuresTheBestsUnmeasuredNeighbourAndItWins) {
  const auto s = planted();
  {
    auto o = options(s);
    o.local_look = false;
    ReplayEvaluator ev(s.rec, 1);
    MemoryStore store;
    const auto r = tune::run_tune(o, ev, store);
    EXPECT_EQ(r.stopped, "converged");
    EXPECT_EQ(r.measured, static_cast<int>(kPatience) + 1);
    EXPECT_EQ(r.look_measured, 0);
    EXPECT_FALSE(measured(store, s.optimum));
    ASSERT_FALSE(r.finalists.empty());
    EXPECT_EQ(r.finalists.front().trial.config_name, s.near);
  }
  ReplayEvaluator ev(s.rec, 1);
  MemoryStore store;
  const auto r = tune::run_tune(options(s), ev, store);
  EXPECT_EQ(r.stopped, "converged");
  EXPECT_FALSE(r.budget_hit);
  EXPECT_GE(r.look_measured, 1);
  EXPECT_EQ(r.measured, static_cast<int>(kPatience) + 1 + r.look_measured);
  EXPECT_TRUE(r.look_new_best);
  // The patience count is the search's, not the look's.
  EXPECT_EQ(r.since_gain, static_cast<int>(kPatience));
  ASSERT_FALSE(r.finalists.empty());
  EXPECT_EQ(r.finalists.front().trial.config_name, s.optimum);
  int look_trials = 0;
  for (const auto& t : store.trials) {
    if (t.phase == TrialPhase::look) {
      ++look_trials;
      EXPECT_EQ(t.strategy, "exhaustive");
      EXPECT_EQ(t.source, TrialSource::replayed);
    }
    if (t.config_name == s.optimum && t.phase != TrialPhase::final)
      EXPECT_EQ(t.phase, TrialPhase::look) << to_string(t.phase);
  }
  EXPECT_EQ(look_trials, r.look_measured);
  // Each candidate once.
  const auto names = store.screened();
  EXPECT_EQ(std::set<std::string>(names.begin(), names.end()).size(), names.size());
}

// A block tile rarely changes alone (a wider block needs a wider warp tile or more warps), so the
// next tile size up or down with the same knobs is no one-knob neighbour: the look measures the
// block-tile moves of its best too, and finds an optimum there.
TEST(LocalLook, TheLookMeasuresTheBestsBlockTileMovesToo) {
  const auto s = planted(true);
  const auto near = from_name(s.near), optimum = from_name(s.optimum);
  ASSERT_TRUE(near && optimum);
  int knobs = 0;
  for (const auto& f : kConfigFields) knobs += (*near).*f.member != (*optimum).*f.member;
  EXPECT_GT(knobs, 1) << s.near << " -> " << s.optimum;
  ReplayEvaluator ev(s.rec, 1);
  MemoryStore store;
  const auto r = tune::run_tune(options(s), ev, store);
  EXPECT_EQ(r.stopped, "converged");
  EXPECT_TRUE(r.look_new_best);
  ASSERT_FALSE(r.finalists.empty());
  EXPECT_EQ(r.finalists.front().trial.config_name, s.optimum);
  EXPECT_TRUE(measured(store, s.optimum));
}

// A search that --max-evals or the budget stopped has not converged: it resumes later and looks
// then, not now.
TEST(LocalLook, NoLookWhenMaxEvalsOrTheBudgetStopsTheSearch) {
  const auto s = planted();
  {
    auto o = options(s);
    o.max_evals = kPatience;  // one short of convergence
    ReplayEvaluator ev(s.rec, 1);
    MemoryStore store;
    const auto r = tune::run_tune(o, ev, store);
    EXPECT_EQ(r.stopped, "max_evals");
    EXPECT_EQ(r.measured, static_cast<int>(kPatience));
    EXPECT_EQ(r.look_measured, 0);
    EXPECT_FALSE(measured(store, s.optimum));
  }
  {
    auto o = options(s);
    o.budget_s = 5.5;  // recorded seconds: 1 s of compiling and 0.01 s of measuring each
    ReplayEvaluator ev(s.rec, 1);
    MemoryStore store;
    const auto r = tune::run_tune(o, ev, store);
    EXPECT_EQ(r.stopped, "budget");
    EXPECT_TRUE(r.budget_hit);
    EXPECT_LT(r.measured, static_cast<int>(kPatience));
    EXPECT_EQ(r.look_measured, 0);
    EXPECT_FALSE(measured(store, s.optimum));
  }
  {
    // --max-evals bounds the look as well: converged with room for one more, it looks at one.
    auto o = options(s);
    o.max_evals = kPatience + 2;
    ReplayEvaluator ev(s.rec, 1);
    MemoryStore store;
    const auto r = tune::run_tune(o, ev, store);
    EXPECT_EQ(r.stopped, "converged");
    EXPECT_EQ(r.measured, static_cast<int>(kPatience) + 2);
    EXPECT_EQ(r.look_measured, 1);
  }
}

// On by default where the strategy converges by default; off with the option, and never without
// patience.
TEST(LocalLook, OnByDefaultForTheStrategiesThatConverge) {
  tune::TuneOptions o;
  o.patience = 200;
  for (const auto& name : strategy_names()) {
    o.strategy = name;
    EXPECT_EQ(tune::local_look_on(o), strategy_traits(name).default_patience > 0) << name;
  }
  o.strategy = "model";
  EXPECT_TRUE(tune::local_look_on(o));
  o.local_look = false;
  EXPECT_FALSE(tune::local_look_on(o));
  o.local_look = true;
  o.patience = 0;
  EXPECT_FALSE(tune::local_look_on(o));
}

// A search that converged and looked is done: the look's new best does not reopen it, so the same
// tune again measures nothing, and --continue searches on.
TEST(LocalLook, ASearchThatConvergedAndLookedIsDoneInTheStore) {
  const auto s = planted();
  test::TempDir dir;
  auto store = db::SqliteStore::open(dir.path() / "look.db", db::OpenMode::read_write);
  {
    ReplayEvaluator ev(s.rec, 1);
    const auto r = tune::run_tune(options(s), ev, store);
    ASSERT_TRUE(r.look_new_best);
  }
  ReplayEvaluator ev(s.rec, 1);
  const auto again = tune::run_tune(options(s), ev, store);
  EXPECT_TRUE(again.done_before);
  EXPECT_EQ(again.stopped, "converged");
  EXPECT_EQ(again.measured, 0);
  EXPECT_EQ(again.look_measured, 0);
  ASSERT_FALSE(again.finalists.empty());
  EXPECT_EQ(again.finalists.front().trial.config_name, s.optimum);
  auto o = options(s);
  o.continue_search = true;
  ReplayEvaluator more(s.rec, 1);
  const auto on = tune::run_tune(o, more, store);
  EXPECT_FALSE(on.done_before);
  EXPECT_GT(on.measured, 0);
}

// As a user runs it: anneal looks by default and says so; --no-local-look stops at once.
TEST(LocalLook, TuneNoLocalLookTurnsItOff) {
  test::TempDir dir;
  auto tune = [&](const std::string& db, const std::string& extra) {
    const auto r = test::run_cli(
        "tune --replay " + test::sh_quote(test::shipped("512x2048x512-NT")) +
            " --shape 512x2048x512 --layout NT --space small --strategy anneal --patience 30 "
            "--seed 1 --top 1 --json --db " +
            test::sh_quote(dir.path() / db) + extra,
        false);
    EXPECT_EQ(r.exit_code, 0) << r.out;
    return nlohmann::json::parse(r.out);
  };
  const auto on = tune("on.db", "");
  const auto off = tune("off.db", " --no-local-look");
  EXPECT_EQ(on.at("stopped"), "converged");
  EXPECT_EQ(off.at("stopped"), "converged");
  const int looked = on.at("local_look").at("measured");
  EXPECT_GT(looked, 0);
  EXPECT_EQ(off.at("local_look").at("measured"), 0);
  EXPECT_FALSE(off.at("local_look").at("new_best").get<bool>());
  // The same search up to the convergence, then the look.
  EXPECT_EQ(on.at("measured").get<int>(), off.at("measured").get<int>() + looked);
  const auto text =
      test::run_cli("tune --replay " + test::sh_quote(test::shipped("512x2048x512-NT")) +
                    " --shape 512x2048x512 --layout NT --space small --strategy "
                    "anneal --patience 30 --seed 1 --top 1 --db " +
                    test::sh_quote(dir.path() / "text.db"));
  EXPECT_NE(text.out.find("last look: " + std::to_string(looked) + " neighbours"),
            std::string::npos)
      << text.out;
}

}  // namespace
}  // namespace sgt
