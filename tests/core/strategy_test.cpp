// Search strategies on their own: what they ask for, in which order, and what they skip.
#include <gtest/gtest.h>

#include <algorithm>
#include <set>

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

TEST(Strategy, UnknownNamesAreRefusedWithTheKnownOnes) {
  try {
    make_strategy("annealing");
    FAIL();
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("exhaustive, random, model"), std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace sgt
