// Search strategies on their own: what they ask for, in which order, and what they skip.
#include <gtest/gtest.h>

#include <algorithm>
#include <limits>
#include <map>
#include <set>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "error.hpp"
#include "space.hpp"
#include "strategy.hpp"

namespace sgt {
namespace {

std::vector<size_t> drain(SearchStrategy& s, size_t batch) {
  std::vector<size_t> all;
  while (true) {
    const auto next = s.ask(batch);
    if (next.empty()) break;
    EXPECT_LE(next.size(), batch);
    all.insert(all.end(), next.begin(), next.end());
  }
  return all;
}

struct Fixture {
  std::vector<WarpTileConfig> candidates;
  std::vector<std::optional<Trial>> known;
  std::vector<Trial> history;
  Problem problem = parse_shape("1024x1024x1024");
  Fixture() {
    candidates = enumerate(load_space("quick"), problem).survivors;
    known.resize(candidates.size());
    for (size_t i = 0; i < known.size(); i += 3) known[i] = Trial{};  // a third already measured
  }
};

TEST(Strategy, ExhaustiveAsksForEveryUnmeasuredCandidateInOrder) {
  Fixture f;
  auto s = make_strategy("exhaustive");
  s->start({f.candidates, f.problem, f.known, 1, 132, f.history});
  const auto got = drain(*s, 7);
  std::vector<size_t> want;
  for (size_t i = 0; i < f.candidates.size(); ++i) {
    if (!f.known[i]) want.push_back(i);
  }
  EXPECT_EQ(got, want);
}

TEST(Strategy, RandomIsAPermutationWithoutReplacementDrawnFromTheSeed) {
  Fixture f;
  auto run = [&](std::uint64_t seed) {
    auto s = make_strategy("random");
    s->start({f.candidates, f.problem, f.known, seed, 132, f.history});
    return drain(*s, 5);
  };
  const auto a = run(1), b = run(1), c = run(2);
  EXPECT_EQ(a, b);
  EXPECT_NE(a, c);
  std::set<size_t> seen(a.begin(), a.end());
  EXPECT_EQ(seen.size(), a.size());
  for (size_t i : a) EXPECT_FALSE(f.known.at(i).has_value()) << i;
  EXPECT_EQ(a.size(),
            static_cast<size_t>(std::count(f.known.begin(), f.known.end(), std::nullopt)));
}

// Annealing walks one knob at a time: after a start, its next picks are neighbours of the best
// told so far; it never asks twice and ends with every candidate asked.
TEST(Strategy, AnnealingProposesNeighboursAndAsksEachCandidateOnce) {
  Fixture f;
  auto s = make_strategy("anneal");
  s->start({f.candidates, f.problem, f.known, 3, 132, f.history});
  const auto first = s->ask(1);
  ASSERT_EQ(first.size(), 1u);
  Trial fast;
  fast.time.median_ms = 0.5;
  s->tell(first[0], fast);
  const auto& a = f.candidates[first[0]];
  auto one_apart = [&](const WarpTileConfig& b) {
    int differ = 0;
    for (const auto& field : kConfigFields) differ += a.*field.member != b.*field.member;
    return differ == 1;
  };
  size_t around = 0;
  for (size_t j = 0; j < f.candidates.size(); ++j)
    around += !f.known[j] && one_apart(f.candidates[j]);
  const auto next = s->ask(4);
  ASSERT_EQ(next.size(), 4u);
  for (size_t k = 0; k < std::min<size_t>(4, around); ++k) {
    EXPECT_TRUE(one_apart(f.candidates[next[k]]))
        << to_name(a) << " -> " << to_name(f.candidates[next[k]]);
  }
  std::set<size_t> seen;
  while (true) {
    const auto next = s->ask(9);
    if (next.empty()) break;
    for (size_t i : next) {
      EXPECT_TRUE(seen.insert(i).second);
      EXPECT_FALSE(f.known[i].has_value());
      Trial t;
      t.time.median_ms = 1.0 + static_cast<double>(i % 7);
      s->tell(i, t);
    }
  }
  EXPECT_EQ(seen.size() + 5,
            static_cast<size_t>(std::count(f.known.begin(), f.known.end(), std::nullopt)));
}

// Before anything is told, annealing's first batch is spread out: each pick is as many knobs
// away from the picks before it as any candidate still open, and the batch is drawn from the seed.
TEST(Strategy, AnnealingSpreadsItsFirstBatchBeforeAnythingIsTold) {
  Fixture f;
  auto knobs_apart = [](const WarpTileConfig& a, const WarpTileConfig& b) {
    int d = a.family != b.family;
    for (const auto& field : kConfigFields) d += a.*field.member != b.*field.member;
    return d;
  };
  auto first_batch = [&](std::uint64_t seed) {
    auto s = make_strategy("anneal");
    s->start({f.candidates, f.problem, f.known, seed, 132, f.history});
    return s->ask(6);
  };
  const auto batch = first_batch(5);
  ASSERT_EQ(batch.size(), 6u);
  EXPECT_EQ(batch, first_batch(5));
  std::set<size_t> picked;
  for (size_t k = 0; k < batch.size(); ++k) {
    EXPECT_FALSE(f.known[batch[k]].has_value());
    EXPECT_TRUE(picked.insert(batch[k]).second);
    if (k == 0) continue;
    // The nearest earlier pick of this one, against the best any open candidate could do.
    auto nearest = [&](size_t i) {
      int d = std::numeric_limits<int>::max();
      for (size_t e = 0; e < k; ++e) {
        d = std::min(d, knobs_apart(f.candidates[i], f.candidates[batch[e]]));
      }
      return d;
    };
    int best = 0;
    for (size_t i = 0; i < f.candidates.size(); ++i) {
      if (!f.known[i] && !picked.count(i)) best = std::max(best, nearest(i));
    }
    EXPECT_GE(nearest(batch[k]), best) << "pick " << k;
    EXPECT_GT(nearest(batch[k]), 0);
  }
}

// The one-knob neighbours (anneal's moves, the session's last look) are exactly the candidates
// that differ in one field, each pair both ways and once.
TEST(Strategy, OneKnobNeighboursDifferInExactlyOneField) {
  Fixture f;
  const auto next_to = one_knob_neighbours(f.candidates);
  ASSERT_EQ(next_to.size(), f.candidates.size());
  auto differ = [&](size_t i, size_t j) {
    int n = 0;
    for (const auto& field : kConfigFields)
      n += f.candidates[i].*field.member != f.candidates[j].*field.member;
    return n;
  };
  size_t pairs = 0;
  for (size_t i = 0; i < f.candidates.size(); ++i) {
    const std::set<size_t> got(next_to[i].begin(), next_to[i].end());
    EXPECT_EQ(got.size(), next_to[i].size()) << to_name(f.candidates[i]);
    std::set<size_t> want;
    for (size_t j = 0; j < f.candidates.size(); ++j) {
      if (differ(i, j) == 1) want.insert(j);
    }
    EXPECT_EQ(got, want) << to_name(f.candidates[i]);
    pairs += got.size();
  }
  EXPECT_GT(pairs, 0u);
}

// A block-tile move keeps the family and every knob outside the tiling, steps one of BM, BN, BK to
// the next value the candidates with those knobs take, or half or twice it (the other two the
// same), and repairs the warp tiling with the fewest changes any such candidate needs. On the
// default space at a narrow problem where the search settled on 32 x 128 tiles (2026-12-07), the 64
// x 128 tile with the same split and stages is among the moves, which one knob never reaches.
TEST(Strategy, TileMovesStepOneBlockDimensionWithTheFewestWarpChanges) {
  Problem p = parse_shape("160x6144x3072");
  p.layout = "NT";
  const auto cs = enumerate_spaces(kAutoSpace, p).enumeration.survivors;
  ASSERT_GT(cs.size(), 1000u);
  const auto moves = tile_move_neighbours(cs);
  ASSERT_EQ(moves.size(), cs.size());
  const std::set<std::string, std::less<>> block = {"BM", "BN", "BK"};
  const std::set<std::string, std::less<>> warp = {"WM", "WN", "WNITER", "TM", "TN", "NUM_THREADS"};
  auto changes = [&](size_t i, size_t j, const std::set<std::string, std::less<>>& fields) {
    int n = 0;
    for (const auto& f : kConfigFields)
      n += fields.count(f.name) && cs[i].*f.member != cs[j].*f.member;
    return n;
  };
  // The values each block field takes among the candidates of the same family and knobs outside
  // the tiling, for "one step".
  auto group_of = [&](const WarpTileConfig& c) {
    std::vector<int> key;
    for (const auto& f : kConfigFields)
      if (!block.count(f.name) && !warp.count(f.name)) key.push_back(c.*f.member);
    return std::make_pair(c.family, key);
  };
  std::map<std::pair<std::string, std::vector<int>>,
           std::map<std::string, std::set<int>, std::less<>>>
      values;
  for (const auto& c : cs)
    for (const auto& f : kConfigFields)
      if (block.count(f.name)) values[group_of(c)][std::string(f.name)].insert(c.*f.member);
  size_t total = 0;
  for (size_t i = 0; i < cs.size(); i += 7) {
    const std::set<size_t> got(moves[i].begin(), moves[i].end());
    EXPECT_EQ(got.size(), moves[i].size()) << to_name(cs[i]);
    total += got.size();
    for (size_t j : got) {
      EXPECT_EQ(cs[j].family, cs[i].family);
      EXPECT_EQ(changes(i, j, block), 1) << to_name(cs[i]) << " -> " << to_name(cs[j]);
      EXPECT_LE(changes(i, j, warp), kMaxTileRepair);
      for (const auto& f : kConfigFields) {
        if (block.count(f.name) || warp.count(f.name)) continue;
        EXPECT_EQ(cs[i].*f.member, cs[j].*f.member) << f.name;
      }
      for (const auto& f : kConfigFields) {
        if (!block.count(f.name) || cs[i].*f.member == cs[j].*f.member) continue;
        const auto& v = values.at(group_of(cs[i])).find(f.name)->second;
        const auto at = v.find(cs[i].*f.member);
        const int to = cs[j].*f.member, from = cs[i].*f.member;
        EXPECT_TRUE((at != v.begin() && *std::prev(at) == to) ||
                    (std::next(at) != v.end() && *std::next(at) == to) || to == 2 * from ||
                    2 * to == from)
            << f.name << ": " << to_name(cs[i]) << " -> " << to_name(cs[j]);
      }
    }
    // Nothing with the same move needs fewer warp changes than those kept.
    for (size_t j = 0; j < cs.size(); ++j) {
      if (got.count(j) || cs[j].family != cs[i].family || changes(i, j, block) != 1) continue;
      bool same_rest = true;
      for (const auto& f : kConfigFields)
        if (!block.count(f.name) && !warp.count(f.name) && cs[i].*f.member != cs[j].*f.member)
          same_rest = false;
      if (!same_rest) continue;
      for (size_t k : got) {
        bool same_move = true;
        for (const auto& f : kConfigFields)
          if (block.count(f.name) && cs[j].*f.member != cs[k].*f.member) same_move = false;
        if (same_move) EXPECT_GE(changes(i, j, warp), changes(i, k, warp)) << to_name(cs[j]);
      }
    }
  }
  EXPECT_GT(total, 0u);
  const auto from = from_name("wt_32x128x16_w16x64_wn1_t8x4_n128_mb1_s2_p4_g8_k8_o1");
  ASSERT_TRUE(from);
  const auto at = std::find(cs.begin(), cs.end(), *from);
  ASSERT_NE(at, cs.end());
  const auto& m = moves[static_cast<size_t>(at - cs.begin())];
  std::vector<std::string> names;
  for (size_t j : m) names.push_back(to_name(cs[j]));
  EXPECT_TRUE(std::any_of(names.begin(), names.end(), [](const auto& n) {
    return n.rfind("wt_64x128x16_", 0) == 0 && n.find("_s2_") != std::string::npos &&
           n.find("_k8_") != std::string::npos;
  })) << fmt::format("{}", fmt::join(names, " "));
  const auto one = one_knob_neighbours(cs)[static_cast<size_t>(at - cs.begin())];
  for (size_t j : one) EXPECT_EQ(cs[j].BM, from->BM) << to_name(cs[j]);
}

TEST(Strategy, UnknownNamesAreRefusedWithTheKnownOnes) {
  try {
    make_strategy("annealing");
    FAIL();
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("exhaustive, random, model, anneal"), std::string::npos)
        << e.what();
  }
  EXPECT_THROW(strategy_traits("annealing"), InputError);
}

// Each strategy's defaults and needs come from its registry entry: a search that measures every
// candidate has no patience, exhaustive no time limit, and only the model learns from history.
TEST(Strategy, EveryStrategyCarriesItsTraits) {
  for (const auto& name : strategy_names()) {
    const auto& t = strategy_traits(name);
    EXPECT_EQ(t.name, name);
    EXPECT_EQ(make_strategy(name)->name(), name);
  }
  EXPECT_EQ(strategy_traits("exhaustive").default_patience, 0u);
  EXPECT_EQ(strategy_traits("exhaustive").default_budget_s, 0);
  EXPECT_EQ(strategy_traits("random").default_patience, 0u);
  EXPECT_GT(strategy_traits("random").default_budget_s, 0);
  EXPECT_EQ(strategy_traits("model").default_patience, kDefaultPatience);
  EXPECT_EQ(strategy_traits("anneal").default_patience, kDefaultPatience);
  EXPECT_TRUE(strategy_traits("model").needs_history);
  EXPECT_FALSE(strategy_traits("anneal").needs_history);
}

}  // namespace
}  // namespace sgt
