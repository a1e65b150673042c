// WarpTileConfig: canonical names, JSON form, derived quantities and the completeness of check().
#include <gtest/gtest.h>

#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "config.hpp"
#include "error.hpp"
#include "space.hpp"

namespace sgt {
namespace {

// Kernel 8 of the seed article, written out field by field so the name parser is not involved.
WarpTileConfig seed() {
  WarpTileConfig c;
  c.BM = 128;
  c.BN = 64;
  c.BK = 16;
  c.WM = 64;
  c.WN = 32;
  c.WNITER = 2;
  c.TM = 4;
  c.TN = 4;
  c.NUM_THREADS = 128;
  c.MIN_BLOCKS = 1;
  return c;
}

std::vector<std::string> rule_names(const std::vector<RuleViolation>& v) {
  std::vector<std::string> out;
  for (const auto& r : v) out.push_back(r.rule);
  return out;
}

TEST(ConfigName, SeedNameIsTheDocumentedSpelling) {
  EXPECT_EQ(to_name(seed()), "wt_128x64x16_w64x32_wn2_t4x4_n128_mb1");
  EXPECT_EQ(from_name("wt_128x64x16_w64x32_wn2_t4x4_n128_mb1"), seed());
}

TEST(ConfigName, RoundTripsEveryDefaultSurvivor) {
  const auto e = enumerate(load_space("default"));
  ASSERT_FALSE(e.survivors.empty());
  std::set<std::string> names;
  for (const auto& c : e.survivors) {
    const auto name = to_name(c);
    EXPECT_TRUE(names.insert(name).second) << "two survivors share the name " << name;
    const auto back = from_name(name);
    ASSERT_TRUE(back.has_value()) << name;
    EXPECT_EQ(*back, c) << name;
  }
}

TEST(ConfigName, RoundTripsTheLargestValuesAndRejectsBeyond) {
  auto c = seed();
  c.MIN_BLOCKS = kMaxConfigValue;
  c.BM = kMaxConfigValue;
  const auto back = from_name(to_name(c));
  ASSERT_TRUE(back.has_value());
  EXPECT_EQ(*back, c);
  // Names, JSON and space files share one range, so a name cannot smuggle in what a file can't.
  c.BM = kMaxConfigValue + 1;
  EXPECT_FALSE(from_name(to_name(c)).has_value());
}

TEST(ConfigName, RejectsMalformedNames) {
  const std::vector<std::string> bad = {
      "",
      "wt_",
      "wt_128x64x16_w64x32_wn2_t4x4_n128",              // MIN_BLOCKS missing
      "wt_128x64x16_w64x32_wn2_t4x4_n128_mb",           // number missing
      "wt_0128x64x16_w64x32_wn2_t4x4_n128_mb1",         // leading zero
      "wt_128x64x16_w64x32_wn2_t4x4_n128_mb01",         // leading zero in the last field
      "wt_128x64x16_w64x32_wn2_t4x4_n128_mb0",          // zero
      "wt_128x64x16_w64x32_wn2_t4x4_n128_mb1x",         // trailing text
      "wt_128x64x16_w64x32_wn2_t4x4_n128_mb1 ",         // trailing space
      " wt_128x64x16_w64x32_wn2_t4x4_n128_mb1",         // leading space
      "wt_128x64x16_w64x32_wn2_t4x4_n128_mb1_mb1",      // repeated field
      "wt_99999999999x64x16_w64x32_wn2_t4x4_n128_mb1",  // overflows int
      "wt_128x64x16_w64x32_wn2_t4x4_n2147483648_mb1",   // INT_MAX + 1
      "wt_-128x64x16_w64x32_wn2_t4x4_n128_mb1",
      "wt_+128x64x16_w64x32_wn2_t4x4_n128_mb1",
      "WT_128x64x16_w64x32_wn2_t4x4_n128_mb1",
      "wt_128X64x16_w64x32_wn2_t4x4_n128_mb1",
      "wt_128x64x16_w64x32_t4x4_wn2_n128_mb1",  // fields out of order
      "wt_128x64_w64x32_wn2_t4x4_n128_mb1",     // BK missing
  };
  for (const auto& s : bad) EXPECT_FALSE(from_name(s).has_value()) << "'" << s << "'";
}

TEST(ConfigJson, RoundTripsWithOneKeyPerField) {
  const nlohmann::json j = seed();
  ASSERT_TRUE(j.is_object());
  EXPECT_EQ(j.size(), kConfigFields.size());
  for (const auto& f : kConfigFields) {
    ASSERT_TRUE(j.contains(std::string(f.name))) << f.name;
    EXPECT_EQ(j.at(std::string(f.name)).get<int>(), seed().*f.member) << f.name;
  }
  EXPECT_EQ(j.get<WarpTileConfig>(), seed());
  EXPECT_EQ(nlohmann::json::parse(j.dump()).get<WarpTileConfig>(), seed());
}

void expect_input_error(const nlohmann::json& j, const std::string& needle) {
  try {
    (void)j.get<WarpTileConfig>();
    ADD_FAILURE() << "accepted " << j.dump();
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find(needle), std::string::npos)
        << "message '" << e.what() << "' lacks '" << needle << "'";
  } catch (const std::exception& e) {
    ADD_FAILURE() << "wrong exception type for " << j.dump() << ": " << e.what();
  }
}

TEST(ConfigJson, FromJsonErrorsAreInputErrorsNamingTheField) {
  const nlohmann::json good = seed();
  {
    auto j = good;
    j["COLOUR"] = 3;
    expect_input_error(j, "COLOUR");
  }
  {
    auto j = good;
    j.erase("TN");
    expect_input_error(j, "TN");
  }
  {
    auto j = good;
    j["BK"] = "16";
    expect_input_error(j, "BK");
  }
  {
    auto j = good;
    j["BK"] = 16.5;
    expect_input_error(j, "BK");
  }
  {
    auto j = good;
    j["BM"] = true;
    expect_input_error(j, "BM");
  }
  {
    auto j = good;
    j["WM"] = 0;
    expect_input_error(j, "WM");
  }
  {
    auto j = good;
    j["WN"] = -32;
    expect_input_error(j, "WN");
  }
  {
    auto j = good;
    j["NUM_THREADS"] = (1LL << 20) + 1;
    expect_input_error(j, "NUM_THREADS");
  }
  {
    auto j = good;
    j["MIN_BLOCKS"] = 1LL << 40;
    expect_input_error(j, "MIN_BLOCKS");
  }
  expect_input_error(nlohmann::json::array({128, 64}), "object");
  expect_input_error(nlohmann::json("wt_128x64x16_w64x32_wn2_t4x4_n128_mb1"), "object");
}

TEST(ConfigDerive, SeedQuantitiesMatchTheArticle) {
  // WMITER = (64*32)/(32*4*4*2) = 2; ROW_STRIDE_A = 128*4/16 = 32; ROW_STRIDE_B = 128/(64/4) = 8.
  constexpr auto g = derive(WarpTileConfig{128, 64, 16, 64, 32, 2, 4, 4, 128, 1});
  static_assert(g.WMITER == 2, "derive() must stay usable at compile time, as in the kernel");
  EXPECT_EQ(g.WMITER, 2);
  EXPECT_EQ(g.WSUBM, 32);
  EXPECT_EQ(g.WSUBN, 16);
  EXPECT_EQ(g.LANES_N, 4);
  EXPECT_EQ(g.WARPS_N, 2);
  EXPECT_EQ(g.ROW_STRIDE_A, 32);
  EXPECT_EQ(g.ROW_STRIDE_B, 8);
  EXPECT_EQ(g.SMEM_BYTES, (128 + 64) * 16 * 4);
  EXPECT_EQ(g.SMEM_BYTES, 12288);
  EXPECT_EQ(g.ACCUMULATORS, 64);
  EXPECT_EQ(g.FRAGMENTS, 2 * 4 + 2 * 4);
}

TEST(ConfigCheck, SeedPassesEveryRule) {
  const auto v = check(seed());
  EXPECT_TRUE(v.empty()) << v.front().rule << ": " << v.front().reason;
}

TEST(ConfigCheck, ReportsEveryViolatedRuleInRuleOrder) {
  // BK = 6: 128*4/6 = 85 rows per A pass (no divisor of 128), 128/16 = 8 rows per B pass (more
  // than 6), and not a float4 multiple. Nothing else changes.
  auto c = seed();
  c.BK = 6;
  EXPECT_EQ(rule_names(check(c)),
            (std::vector<std::string>{"load_stride_a", "load_stride_b", "float4_alignment"}));

  // 32 blocks of 128 threads cannot be resident (4096 > 2048), and 65536/4096 = 16 registers
  // per thread cannot hold 64 accumulators and 16 fragments.
  c.MIN_BLOCKS = 32;
  EXPECT_EQ(rule_names(check(c)),
            (std::vector<std::string>{"load_stride_a", "load_stride_b", "float4_alignment",
                                      "resident_threads", "register_cap"}));
}

TEST(ConfigCheck, EveryReportedRuleIsListedOnceWithAReason) {
  std::set<std::string> known;
  for (const auto& r : rules()) EXPECT_TRUE(known.insert(std::string(r.name)).second) << r.name;
  auto c = seed();
  c.BM = 0;
  c.BN = -4;
  c.TN = 0;
  const auto v = check(c);
  std::set<std::string> seen;
  for (const auto& r : v) {
    EXPECT_TRUE(known.count(r.rule)) << r.rule;
    EXPECT_TRUE(seen.insert(r.rule).second) << "reported twice: " << r.rule;
    EXPECT_FALSE(r.reason.empty()) << r.rule;
  }
  EXPECT_TRUE(seen.count("positive_values"));
}

TEST(ConfigCheck, LimitsComeFromTheCaller) {
  Limits tight;
  tight.max_threads_per_block = 64;
  tight.max_static_shared_bytes = 12287;  // one byte short of the seed's 12288
  tight.max_accumulators = 63;
  EXPECT_EQ(
      rule_names(check(seed(), tight)),
      (std::vector<std::string>{"max_threads_per_block", "shared_memory", "accumulator_budget"}));
  Limits exact;
  exact.max_threads_per_block = 128;
  exact.max_static_shared_bytes = 12288;
  exact.max_accumulators = 64;
  EXPECT_TRUE(check(seed(), exact).empty());
}

}  // namespace
}  // namespace sgt
