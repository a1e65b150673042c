// Search spaces: enumeration counts and speed, and the errors a bad space file must produce.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <fstream>
#include <numeric>
#include <set>
#include <string>

#include <nlohmann/json.hpp>

#include "error.hpp"
#include "space.hpp"
#include "test_support.hpp"

namespace sgt {
namespace {

TEST(Space, BuiltinsAreListedAndLoad) {
  const auto names = builtin_space_names();
  const std::set<std::string> set(names.begin(), names.end());
  EXPECT_TRUE(set.count("default"));
  EXPECT_TRUE(set.count("quick"));
  const auto s = load_space("default");
  EXPECT_EQ(s.name, "default");
  EXPECT_EQ(s.origin, "built-in:default");
  ASSERT_EQ(s.values.size(), kConfigFields.size());
}

TEST(Space, DefaultEnumeratesWithConsistentCounts) {
  const auto space = load_space("default");
  long long product = 1;
  for (const auto& v : space.values) product *= static_cast<long long>(v.size());

  const auto e = enumerate(space);

  EXPECT_EQ(e.total, product);
  EXPECT_EQ(e.total, space.combinations());
  // Several hundred: the space spans the knobs (STAGES, PAD_A, FMA_ORDER, ...) around the
  // fastest tiles rather than every tile shape.
  EXPECT_GT(e.survivors.size(), 500u);

  // One row per rule, in rules() order, and "first" attributes each reject exactly once.
  ASSERT_EQ(e.rejections.size(), rules().size());
  long long first = 0;
  for (size_t i = 0; i < rules().size(); ++i) {
    EXPECT_EQ(e.rejections[i].rule, rules()[i].name);
    EXPECT_LE(e.rejections[i].first, e.rejections[i].violations);
    EXPECT_EQ(e.rejections[i].sample.empty(), e.rejections[i].violations == 0);
    first += e.rejections[i].first;
  }
  EXPECT_EQ(first, e.total - static_cast<long long>(e.survivors.size()));

  std::set<std::string> names;
  for (const auto& c : e.survivors) {
    EXPECT_TRUE(check(c, space.limits).empty()) << to_name(c);
    EXPECT_TRUE(names.insert(to_name(c)).second) << "duplicate survivor " << to_name(c);
  }
}

TEST(Space, SampleRejectsReallyBreakTheirRule) {
  const auto space = load_space("default");
  const auto e = enumerate(space);
  for (const auto& r : e.rejections) {
    if (r.sample.empty()) continue;
    const auto c = from_name(r.sample);
    ASSERT_TRUE(c.has_value()) << r.sample;
    bool found = false;
    for (const auto& v : check(*c, space.limits)) found = found || v.rule == r.rule;
    EXPECT_TRUE(found) << r.rule << " sample " << r.sample;
  }
}

// "default+tma" is the union of two spaces: each part enumerated with its own limits and
// constraints, survivors in order without repeats, rule counts added.
TEST(Space, AUnionJoinsTheSurvivorsOfItsParts) {
  EXPECT_EQ(split_space_union("default"), (std::vector<std::string>{"default"}));
  EXPECT_EQ(split_space_union("small+tma+tma-split"),
            (std::vector<std::string>{"small", "tma", "tma-split"}));
  for (const char* bad : {"+tma", "default+", "default++tma"}) {
    EXPECT_THROW(split_space_union(bad), InputError) << bad;
  }
  const auto d = enumerate(load_space("default")), t = enumerate(load_space("tma"));
  const auto u = merge_enumerations({{"default", d}, {"tma", t}});
  EXPECT_EQ(u.total, d.total + t.total);
  ASSERT_EQ(u.survivors.size(), d.survivors.size() + t.survivors.size());
  EXPECT_TRUE(std::equal(d.survivors.begin(), d.survivors.end(), u.survivors.begin()));
  for (const auto& c : t.survivors) EXPECT_EQ(c.family, "ws_tma") << to_name(c);
  for (const auto& c : d.survivors) EXPECT_EQ(c.family, "warptile") << to_name(c);
  long long rejected = 0;
  for (const auto& r : u.rejections) rejected += r.first;
  EXPECT_EQ(rejected, u.total - static_cast<long long>(u.survivors.size()));
  // A space joined with itself adds nothing.
  EXPECT_EQ(merge_enumerations({{"tma", t}, {"tma", t}}).survivors.size(), t.survivors.size());
  // The TMA spaces hold only TMA configs, split-K only in tma-split; every survivor passes the
  // shape rule where the operands allow copies and none where they do not.
  const auto split = enumerate(load_space("tma-split"));
  EXPECT_EQ(split.survivors.size(), 6 * t.survivors.size());
  Problem odd = parse_shape("4095x4097x1023");
  EXPECT_TRUE(enumerate(load_space("tma"), odd).survivors.empty());
  // NN stages A through shared memory: the configs too large with it go, by the shape rule.
  const auto nn = enumerate(load_space("tma"), parse_shape("1024x1024x1024"));
  EXPECT_LT(nn.survivors.size(), t.survivors.size());
  EXPECT_GE(nn.survivors.size(), t.survivors.size() * 9 / 10);
  for (const auto& r : nn.rejections) {
    if (r.rule == "shape_tma_shared_memory") {
      EXPECT_EQ(r.first, nn.total - static_cast<long long>(nn.survivors.size()) -
                             (t.total - static_cast<long long>(t.survivors.size())));
    }
  }
}

// tma-small: TMA blocks of four consumer warps, two or three on an SM, on the operands as they
// are or on PACK's panels. Its measured winners (bench/NOTES.md) are in it; where the copies cannot
// read the operands (lda = 513) only its PACK half survives, and on aligned ones both halves do.
TEST(Space, TmaSmallHoldsSmallTmaBlocksAndItsWinners) {
  const auto all = enumerate(load_space("tma-small"));
  ASSERT_FALSE(all.survivors.empty());
  std::set<std::string> names;
  for (const auto& c : all.survivors) {
    EXPECT_EQ(c.family, "ws_tma") << to_name(c);
    EXPECT_EQ(c.NUM_THREADS, 128) << to_name(c);
    EXPECT_TRUE(c.MIN_BLOCKS == 2 || c.MIN_BLOCKS == 3) << to_name(c);
    names.insert(to_name(c));
  }
  for (const char* w : {"wt_64x64x32_w32x32_wn1_t4x4_n128_mb2_s3_p4_g8_o1_m1",
                        "wt_64x128x16_w32x64_wn2_t4x4_n128_mb3_s3_p4_g8_o1_x1_m1",
                        "wt_64x64x16_w32x32_wn1_t4x4_n128_mb3_s2_p4_g8_o1_x1_m1"}) {
    EXPECT_TRUE(names.count(w)) << w;
  }
  const auto odd = enumerate(load_space("tma-small"), parse_shape("1023x777x513"));
  ASSERT_FALSE(odd.survivors.empty());
  for (const auto& c : odd.survivors) EXPECT_EQ(c.PACK, 1) << to_name(c);
  const auto even = enumerate(load_space("tma-small"), parse_shape("1000x1000x1000"));
  std::set<int> packs;
  for (const auto& c : even.survivors) packs.insert(c.PACK);
  EXPECT_EQ(packs, (std::set<int>{0, 1}));
  EXPECT_GT(even.survivors.size(), odd.survivors.size());
}

TEST(Space, QuickHasAFewDozenSurvivors) {
  const auto e = enumerate(load_space("quick"));
  EXPECT_GE(e.survivors.size(), 20u);
  EXPECT_LE(e.survivors.size(), 80u);
}

TEST(Space, ShapeRulesNoLongerPruneByTileMultiple) {
  // The kernel guards its edge tiles: every survivor serves any shape, tile multiple or not.
  const auto space = load_space("default");
  const auto all = enumerate(space);
  for (const char* shape : {"4096x4096x4096", "4096x4096x4088", "1000x999x17", "1x1x1"}) {
    const auto e = enumerate(space, parse_shape(shape));
    EXPECT_EQ(e.survivors, all.survivors) << shape;
    bool row = false;
    for (const auto& r : e.rejections) {
      EXPECT_NE(r.rule, "shape_tile_multiple") << shape;
      if (r.rule == "shape_layout") {
        row = true;
        EXPECT_EQ(r.violations, 0) << shape;
      }
    }
    EXPECT_TRUE(row) << shape;
  }
}

// A valid space in JSON, small enough to enumerate in no time, for tests to break one field at a
// time.
nlohmann::json base_space() {
  return nlohmann::json::parse(R"({
    "name": "t",
    "parameters": {
      "BM": [64, 128], "BN": [64, 128], "BK": [8, 16], "WM": [32, 64], "WN": [32, 64],
      "WNITER": [1, 2], "TM": [4, 8], "TN": [4], "NUM_THREADS": [128], "MIN_BLOCKS": [1]
    },
    "limits": {"max_static_shared_bytes": 49152}
  })");
}

class SpaceFile : public ::testing::Test {
 protected:
  std::string write(const std::string& text) {
    const auto path = (dir_.path() / ("space" + std::to_string(n_++) + ".json")).string();
    std::ofstream(path) << text;
    return path;
  }
  // Loading `text` must throw InputError naming the file and every needle.
  void expect_error(const std::string& text, const std::vector<std::string>& needles) {
    const auto path = write(text);
    try {
      const auto s = load_space(path);
      ADD_FAILURE() << "accepted " << text;
    } catch (const InputError& e) {
      const std::string msg = e.what();
      EXPECT_NE(msg.find(path), std::string::npos) << "no file name in: " << msg;
      for (const auto& n : needles) {
        EXPECT_NE(msg.find(n), std::string::npos) << "no '" << n << "' in: " << msg;
      }
    }
  }
  void expect_param_error(const std::string& field, const nlohmann::json& value,
                          const std::vector<std::string>& needles) {
    auto j = base_space();
    j["parameters"][field] = value;
    expect_error(j.dump(), needles);
  }

  test::TempDir dir_;
  int n_ = 0;
};

TEST_F(SpaceFile, BaseSpaceLoads) {
  const auto path = write(base_space().dump());
  const auto s = load_space(path);
  EXPECT_EQ(s.origin, path);
  EXPECT_EQ(s.combinations(), 2 * 2 * 2 * 2 * 2 * 2 * 2);
  EXPECT_FALSE(enumerate(s).survivors.empty());
}

TEST_F(SpaceFile, InvalidJson) {
  expect_error("{\"name\": \"t\", \"parameters\": {", {"JSON"});
}

TEST_F(SpaceFile, NotAnObject) {
  expect_error("[1, 2, 3]", {"object"});
}

TEST_F(SpaceFile, UnknownTopLevelKey) {
  auto j = base_space();
  j["paramaters"] = j["parameters"];
  expect_error(j.dump(), {"paramaters"});
}

TEST_F(SpaceFile, UnknownParameter) {
  auto j = base_space();
  j["parameters"]["BX"] = {1};
  expect_error(j.dump(), {"BX"});
}

TEST_F(SpaceFile, MissingParameter) {
  auto j = base_space();
  j["parameters"].erase("WNITER");
  expect_error(j.dump(), {"WNITER", "missing"});
}

TEST_F(SpaceFile, MissingParameters) {
  auto j = base_space();
  j.erase("parameters");
  expect_error(j.dump(), {"parameters"});
}

TEST_F(SpaceFile, EmptyList) {
  expect_param_error("BM", nlohmann::json::array(), {"BM", "empty"});
}

TEST_F(SpaceFile, NotAList) {
  expect_param_error("BM", 64, {"BM"});
}

// A pad that can never be aligned is a mistake in the file, not a value to enumerate.
TEST_F(SpaceFile, MisalignedPadIsRefusedByName) {
  expect_param_error("PAD_A", {0, 6}, {"PAD_A", "pad_alignment"});
  expect_param_error("PAD_B", {0, 2}, {"PAD_B", "pad_alignment"});
}

TEST_F(SpaceFile, PackOtherThanZeroOrOneIsRefusedByName) {
  expect_param_error("PACK", {0, 2}, {"PACK", "pack_flag"});
}

TEST_F(SpaceFile, StageCOtherThanZeroOrOneIsRefusedByName) {
  expect_param_error("STAGE_C", {0, 3}, {"STAGE_C", "stage_c_flag"});
}

// Four outer-product orders exist: a space may list any of them, and nothing past them.
TEST_F(SpaceFile, FmaOrderPastTheFourOrdersIsRefusedByName) {
  expect_param_error("FMA_ORDER", {1, 4}, {"FMA_ORDER", "fma_order"});
  auto j = base_space();
  j["parameters"]["FMA_ORDER"] = {0, 1, 2, 3};
  const auto s = load_space(write(j.dump()));
  std::set<int> orders;
  for (const auto& c : enumerate(s).survivors) orders.insert(c.FMA_ORDER);
  EXPECT_EQ(orders, (std::set<int>{0, 1, 2, 3}));
}

TEST_F(SpaceFile, Zero) {
  expect_param_error("TM", {4, 0}, {"TM", "0"});
}

TEST_F(SpaceFile, Negative) {
  expect_param_error("WN", {32, -32}, {"WN", "-32"});
}

TEST_F(SpaceFile, NonInteger) {
  expect_param_error("BN", {64, 64.5}, {"BN", "64.5"});
  expect_param_error("BN", {"64"}, {"BN", "\"64\""});
}

TEST_F(SpaceFile, TooLarge) {
  expect_param_error("BM", {1 << 17}, {"BM", "131072"});
}

TEST_F(SpaceFile, DuplicateValue) {
  expect_param_error("BK", {8, 16, 8}, {"BK", "8", "twice"});
}

TEST_F(SpaceFile, Bk6CanNeverBeValid) {
  expect_param_error("BK", {8, 6}, {"BK", "6", "float4_alignment"});
}

TEST_F(SpaceFile, NumThreads100CanNeverBeValid) {
  expect_param_error("NUM_THREADS", {128, 100}, {"NUM_THREADS", "100"});
}

// A space selects kernel families by id; the field TMA of earlier releases' spaces is an alias
// (0 the warp-tiling family, 1 the TMA-fed one) and enumerates the very same configs, the family
// varying fastest as TMA did. Constraints still read TMA as the family's legacy value.
TEST_F(SpaceFile, FamiliesAreSelectedByIdAndTheLegacyTmaListMeansTheSame) {
  auto j = base_space();
  j["parameters"]["STAGES"] = {2};
  j["parameters"]["BK"] = {16};
  j["parameters"]["NUM_THREADS"] = {256};  // 128 would leave the TMA kernel's registers uncapped
  j["parameters"]["family"] = {"warptile", "ws_tma"};
  const auto by_id = load_space(write(j.dump()));
  EXPECT_EQ(by_id.families, (std::vector<std::string>{"warptile", "ws_tma"}));
  EXPECT_EQ(by_id.combinations(), 2 * 2 * 2 * 2 * 2 * 2 * 2);
  j["parameters"].erase("family");
  j["parameters"]["TMA"] = {0, 1};
  const auto by_tma = load_space(write(j.dump()));
  EXPECT_EQ(by_tma.families, by_id.families);
  const auto a = enumerate(by_id), b = enumerate(by_tma);
  EXPECT_EQ(a.total, b.total);
  ASSERT_EQ(a.survivors, b.survivors);
  std::set<std::string> fams;
  for (const auto& c : a.survivors) fams.insert(c.family);
  EXPECT_EQ(fams, (std::set<std::string>{"warptile", "ws_tma"}));
  // Neither: the default family alone, as TMA's default 0 was.
  j["parameters"].erase("TMA");
  EXPECT_EQ(load_space(write(j.dump())).families, (std::vector<std::string>{"warptile"}));
  // A constraint over TMA keeps its sense.
  j["parameters"]["family"] = {"warptile", "ws_tma"};
  j["constraints"] = {"TMA == 1"};
  const auto only_tma = enumerate(load_space(write(j.dump())));
  ASSERT_FALSE(only_tma.survivors.empty());
  for (const auto& c : only_tma.survivors) EXPECT_EQ(c.family, "ws_tma") << to_name(c);

  expect_param_error("family", {"warptile", "nope"}, {"family", "nope", "ws_tma"});
  expect_param_error("family", {"ws_tma", "ws_tma"}, {"family", "twice"});
  expect_param_error("family", nlohmann::json::array(), {"family"});
  expect_param_error("TMA", {0, 2}, {"TMA", "2", "tma_flag"});
  auto both = base_space();
  both["parameters"]["TMA"] = {1};
  both["parameters"]["family"] = {"ws_tma"};
  expect_error(both.dump(), {"family", "TMA"});
}

// The built-in TMA spaces select their family by id; as the files of earlier releases wrote them
// ("TMA": [1]) they enumerate the same configs, in the same order.
TEST_F(SpaceFile, TheTmaSpacesAsEarlierReleasesWroteThemEnumerateTheSame) {
  for (const char* name : {"tma", "tma-small", "tma-pack", "tma-split"}) {
    SCOPED_TRACE(name);
    std::ifstream in(std::string(SGT_TEST_SOURCE_DIR) + "/search_spaces/" + name + ".json");
    auto j = nlohmann::json::parse(in);
    ASSERT_EQ(j.at("parameters").at("family"), nlohmann::json({"ws_tma"}));
    j["parameters"].erase("family");
    j["parameters"]["TMA"] = {1};
    const auto old = enumerate(load_space(write(j.dump())));
    const auto now = enumerate(load_space(name));
    EXPECT_EQ(old.total, now.total);
    EXPECT_FALSE(now.survivors.empty());
    EXPECT_EQ(old.survivors, now.survivors);
  }
}

// A value that breaks a rule whatever the other fields are is judged by the families the space
// selects: STAGES 3 is the TMA ring's, never the warp-tiling template's, and BK 6 neither's.
TEST_F(SpaceFile, ImpossibleValuesAreThoseOfEverySelectedFamily) {
  auto j = base_space();
  j["parameters"]["STAGES"] = {2, 3};
  expect_error(j.dump(), {"STAGES", "3", "pipeline_stages"});
  j["parameters"]["family"] = {"ws_tma"};
  EXPECT_NO_THROW(load_space(write(j.dump())));
  j["parameters"]["STAGES"] = {1, 2};
  expect_error(j.dump(), {"STAGES", "1", "pipeline_stages"});
  j["parameters"]["family"] = {"warptile", "ws_tma"};
  j["parameters"]["STAGES"] = {1, 2, 3, 8};
  EXPECT_NO_THROW(load_space(write(j.dump())));
  j["parameters"]["STAGES"] = {9};
  expect_error(j.dump(), {"STAGES", "9", "pipeline_stages"});
}

TEST_F(SpaceFile, BadConstraintExpression) {
  auto j = base_space();
  j["constraints"] = {"BM >* 2"};
  expect_error(j.dump(), {"BM >* 2"});
}

TEST_F(SpaceFile, UnknownVariableInConstraint) {
  auto j = base_space();
  j["constraints"] = {"BQ >= 2"};
  expect_error(j.dump(), {"BQ >= 2"});
}

TEST_F(SpaceFile, UnknownLimit) {
  auto j = base_space();
  j["limits"]["max_warps"] = 4;
  expect_error(j.dump(), {"max_warps"});
}

TEST_F(SpaceFile, NonPositiveLimit) {
  auto j = base_space();
  j["limits"]["max_accumulators"] = 0;
  expect_error(j.dump(), {"max_accumulators"});
}

TEST_F(SpaceFile, ConstraintReducesSurvivorsAndIsCounted) {
  auto j = base_space();
  const auto without = enumerate(load_space(write(j.dump())));
  j["constraints"] = {"BM >= BN"};
  const auto with = enumerate(load_space(write(j.dump())));

  long long expected = 0;
  for (const auto& c : without.survivors) expected += c.BM >= c.BN;
  ASSERT_GT(expected, 0);
  ASSERT_LT(expected, static_cast<long long>(without.survivors.size()));
  EXPECT_EQ(static_cast<long long>(with.survivors.size()), expected);
  for (const auto& c : with.survivors) EXPECT_GE(c.BM, c.BN) << to_name(c);

  ASSERT_FALSE(with.rejections.empty());
  const auto& last = with.rejections.back();
  EXPECT_EQ(last.rule, "constraint[0]");
  EXPECT_EQ(last.first, static_cast<long long>(without.survivors.size()) - expected);
  long long first = 0;
  for (const auto& r : with.rejections) first += r.first;
  EXPECT_EQ(first, with.total - static_cast<long long>(with.survivors.size()));
}

TEST_F(SpaceFile, LimitsAreApplied) {
  auto j = base_space();
  const auto loose = enumerate(load_space(write(j.dump())));
  j["limits"]["max_accumulators"] = 32;
  const auto s = load_space(write(j.dump()));
  EXPECT_EQ(s.limits.max_accumulators, 32);
  const auto tight = enumerate(s);
  EXPECT_LT(tight.survivors.size(), loose.survivors.size());
  for (const auto& c : tight.survivors) EXPECT_LE(derive(c).ACCUMULATORS, 32) << to_name(c);
}

TEST(Space, UnknownNameListsTheBuiltins) {
  try {
    (void)load_space("no-such-space");
    ADD_FAILURE() << "loaded a space that does not exist";
  } catch (const InputError& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find("no-such-space"), std::string::npos) << msg;
    for (const auto& n : builtin_space_names()) {
      EXPECT_NE(msg.find(n), std::string::npos) << "'" << n << "' missing from: " << msg;
    }
  }
}

}  // namespace
}  // namespace sgt
