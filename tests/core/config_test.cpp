// WarpTileConfig: canonical names, JSON form, derived quantities and the completeness of check().
#include <gtest/gtest.h>

#include <algorithm>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "config.hpp"
#include "problem.hpp"
#include "index_sim.hpp"
#include "index_sim_test_util.hpp"
#include "tma_geometry.h"
#include "error.hpp"
#include "family.hpp"
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

using sim_test::rule_names;

TEST(ConfigName, SeedNameIsTheDocumentedSpelling) {
  EXPECT_EQ(to_name(seed()), "wt_128x64x16_w64x32_wn2_t4x4_n128_mb1");
  EXPECT_EQ(from_name("wt_128x64x16_w64x32_wn2_t4x4_n128_mb1"), seed());
}

TEST(ConfigName, SeedNamesMeanTheDefaults) {
  const auto c = from_name("wt_128x64x16_w64x32_wn2_t4x4_n128_mb1");
  ASSERT_TRUE(c.has_value());
  EXPECT_EQ(c->STAGES, 1);
  EXPECT_EQ(c->PAD_A, 0);
  EXPECT_EQ(c->GROUP_M, 1);
  EXPECT_EQ(c->SPLIT_K, 1);
  for (const auto& f : kConfigFields) {
    if (f.default_value != kRequired) {
      EXPECT_EQ(seed().*f.member, f.default_value) << f.name;
    }
  }
}

TEST(ConfigName, KnobSuffixesRoundTrip) {
  auto c = seed();
  c.MIN_BLOCKS = 2;
  c.STAGES = 2;
  c.PAD_A = 4;
  c.GROUP_M = 8;
  c.SPLIT_K = 4;
  EXPECT_EQ(to_name(c), "wt_128x64x16_w64x32_wn2_t4x4_n128_mb2_s2_p4_g8_k4");
  EXPECT_EQ(from_name("wt_128x64x16_w64x32_wn2_t4x4_n128_mb2_s2_p4_g8_k4"), c);
  // Only the knobs that differ from their defaults are written, in canonical order.
  auto some = seed();
  some.PAD_A = 8;
  some.SPLIT_K = 3;
  EXPECT_EQ(to_name(some), "wt_128x64x16_w64x32_wn2_t4x4_n128_mb1_p8_k3");
  EXPECT_EQ(from_name(to_name(some)), some);
  auto group = seed();
  group.GROUP_M = 16;
  EXPECT_EQ(to_name(group), "wt_128x64x16_w64x32_wn2_t4x4_n128_mb1_g16");
  EXPECT_EQ(from_name(to_name(group)), group);
}

TEST(ConfigName, RejectsNonCanonicalSuffixes) {
  const std::string base = "wt_128x64x16_w64x32_wn2_t4x4_n128_mb1";
  for (const char* bad : {
           "_s1",     // restates the default: one config, one name
           "_p0",     // likewise
           "_g1",     // likewise
           "_k1",     // likewise
           "_s2_s2",  // repeated
           "_p4_s2",  // out of order
           "_k4_g8",  // out of order
           "_s",      // number missing
           "_s02",    // leading zero
           "_p4x",    // trailing text
           "_q2",     // unknown knob
           "_s2_",    // dangling separator
           "_p-4",    // sign
           "_s0",     // below the knob's smallest value
           "_g0",     // likewise
           "_k0",     // likewise
           "_o0",     // restates the default
       }) {
    EXPECT_FALSE(from_name(base + bad).has_value()) << base + bad;
  }
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

TEST(ConfigJson, RoundTripsWithOneKeyPerFieldAndTheFamily) {
  const nlohmann::json j = seed();
  ASSERT_TRUE(j.is_object());
  EXPECT_EQ(j.size(), kConfigFields.size() + 1);
  EXPECT_EQ(j.at("TMA"), 0);  // the warp-tiling family, as releases before family ids wrote it
  for (const auto& f : kConfigFields) {
    ASSERT_TRUE(j.contains(std::string(f.name))) << f.name;
    EXPECT_EQ(j.at(std::string(f.name)).get<int>(), seed().*f.member) << f.name;
  }
  EXPECT_EQ(j.get<WarpTileConfig>(), seed());
  EXPECT_EQ(nlohmann::json::parse(j.dump()).get<WarpTileConfig>(), seed());
}

TEST(ConfigJson, MissingKnobsTakeTheirDefaults) {
  nlohmann::json j = seed();
  for (const char* knob : {"STAGES", "PAD_A", "GROUP_M", "SPLIT_K"}) j.erase(knob);
  EXPECT_EQ(j.get<WarpTileConfig>(), seed());
  j["STAGES"] = 2;
  j["PAD_A"] = 0;
  auto expected = seed();
  expected.STAGES = 2;
  EXPECT_EQ(j.get<WarpTileConfig>(), expected);
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
  {
    auto j = good;
    j["STAGES"] = 0;
    expect_input_error(j, "STAGES");
  }
  {
    auto j = good;
    j["PAD_A"] = -4;
    expect_input_error(j, "PAD_A");
  }
  {
    auto j = good;
    j["SPLIT_K"] = "4";
    expect_input_error(j, "SPLIT_K");
  }
  expect_input_error(nlohmann::json::array({128, 64}), "object");
  expect_input_error(nlohmann::json("wt_128x64x16_w64x32_wn2_t4x4_n128_mb1"), "object");
}

TEST(ConfigDerive, SeedQuantitiesMatchTheArticle) {
  // WMITER = (64*32)/(32*4*4*2) = 2; the 128x16 A slice is 512 float4s, 4 per thread; the 16x64
  // B slice 256, 2 per thread. The knobs keep their defaults: one buffer, no padding.
  constexpr auto g = derive(WarpTileConfig{128, 64, 16, 64, 32, 2, 4, 4, 128, 1});
  static_assert(g.WMITER == 2, "derive() must stay usable at compile time, as in the kernel");
  EXPECT_EQ(g.WMITER, 2);
  EXPECT_EQ(g.WSUBM, 32);
  EXPECT_EQ(g.WSUBN, 16);
  EXPECT_EQ(g.LANES_N, 4);
  EXPECT_EQ(g.WARPS_N, 2);
  EXPECT_EQ(g.A_PASSES, 4);
  EXPECT_EQ(g.B_PASSES, 2);
  EXPECT_EQ(g.STAGES, 1);
  EXPECT_EQ(g.PAD_A, 0);
  EXPECT_EQ(g.AS_LD, 128);
  EXPECT_EQ(g.AS_SIZE, 128 * 16);
  EXPECT_EQ(g.BS_SIZE, 16 * 64);
  EXPECT_EQ(g.SMEM_BYTES, (128 + 64) * 16 * 4);
  EXPECT_EQ(g.SMEM_BYTES, 12288);
  EXPECT_EQ(g.ACCUMULATORS, 64);
  EXPECT_EQ(g.FRAGMENTS, 2 * 4 + 2 * 4);
}

TEST(ConfigDerive, StagesAndPaddingScaleSharedMemory) {
  auto c = seed();
  c.STAGES = 2;
  c.PAD_A = 4;
  c.GROUP_M = 8;
  c.SPLIT_K = 4;
  const auto g = derive(c);
  EXPECT_EQ(g.AS_LD, 132);
  EXPECT_EQ(g.AS_SIZE, 16 * 132);
  EXPECT_EQ(g.BS_SIZE, 16 * 64);
  // Two buffers of ((BM + PAD_A) + BN) * BK floats.
  EXPECT_EQ(g.SMEM_BYTES, 2 * (132 + 64) * 16 * 4);
  // Passes, tiles and registers do not depend on the knobs.
  const auto g1 = derive(seed());
  EXPECT_EQ(g.A_PASSES, g1.A_PASSES);
  EXPECT_EQ(g.B_PASSES, g1.B_PASSES);
  EXPECT_EQ(g.ACCUMULATORS, g1.ACCUMULATORS);
  EXPECT_EQ(g.FRAGMENTS, g1.FRAGMENTS);
}

TEST(ConfigCheck, SeedPassesEveryRule) {
  const auto v = check(seed());
  EXPECT_TRUE(v.empty()) << v.front().rule << ": " << v.front().reason;
}

TEST(ConfigCheck, ReportsEveryViolatedRuleInRuleOrder) {
  // BK = 6: the 128x6 A slice is 192 float4s and the 6x64 B slice 96, neither a whole number of
  // passes of 128 threads, and 6 is not a float4 multiple. Nothing else changes.
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

  // The knobs' rules take their place in rule order.
  c.PAD_A = 2;
  c.STAGES = 3;
  EXPECT_EQ(rule_names(check(c)),
            (std::vector<std::string>{"load_stride_a", "load_stride_b", "float4_alignment",
                                      "pad_alignment", "pipeline_stages", "resident_threads",
                                      "register_cap"}));
}

TEST(ConfigCheck, LoadStrideMeansWholePassesOfFloat4s) {
  // BK = 12: A is 128*12 = 1536 floats, exactly 3 passes of 128 float4s; B is 12*64 = 768
  // floats, one and a half passes. Only B's rule breaks.
  auto c = seed();
  c.BK = 12;
  EXPECT_EQ(rule_names(check(c)), (std::vector<std::string>{"load_stride_b"}));
  EXPECT_EQ(derive(c).A_PASSES, 3);
  // BM*BK = 64*8 = 512 floats is half a pass of 256 threads: no pass at all is a violation too.
  const auto half = from_name("wt_64x128x8_w32x32_wn1_t4x8_n256_mb1");
  ASSERT_TRUE(half.has_value());
  EXPECT_EQ(derive(*half).A_PASSES, 0);
  EXPECT_EQ(rule_names(check(*half)), (std::vector<std::string>{"load_stride_a"}));
}

TEST(ConfigCheck, Float4AlignmentCoversBm) {
  // A stored transposed is read as float4s along M, so BM must be a multiple of 4 as well. In
  // this config every other rule holds.
  const auto c = from_name("wt_6x64x64_w6x64_wn1_t3x4_n32_mb1");
  ASSERT_TRUE(c.has_value());
  const auto v = check(*c);
  ASSERT_EQ(rule_names(v), (std::vector<std::string>{"float4_alignment"}));
  EXPECT_NE(v.front().reason.find("BM = 6"), std::string::npos) << v.front().reason;
}

// PAD_B: its own name suffix after FMA_ORDER's, and shared memory that counts it (its alignment:
// PadAlignmentAndPipelineStages).
TEST(ConfigCheck, PadBIsNamedAndCounted) {
  auto c = seed();
  c.PAD_B = 4;
  EXPECT_EQ(derive(c).SMEM_BYTES, derive(seed()).SMEM_BYTES + c.BK * 4 * 4);
  const std::string name = "wt_64x128x16_w64x16_wn2_t4x4_n256_mb1_s2_p4_g8_o1_b4";
  const auto parsed = from_name(name);
  ASSERT_TRUE(parsed.has_value());
  EXPECT_EQ(parsed->PAD_B, 4);
  EXPECT_EQ(parsed->PAD_A, 4);
  EXPECT_EQ(to_name(*parsed), name);
  c.PAD_B = 0;
  EXPECT_EQ(to_name(c).find("_b"), std::string::npos) << to_name(c);
}

// FMA_ORDER: four orders of the outer product, named by the suffix _o (order 0, the seed's, has
// none); past 3 the fma_order rule alone breaks, and its reason names the value. No order changes
// shared memory.
TEST(ConfigCheck, FmaOrderTakesFourOrders) {
  for (int order = 1; order <= 3; ++order) {
    const std::string name =
        "wt_128x256x8_w64x64_wn4_t8x4_n256_mb1_s2_p4_g8_o" + std::to_string(order);
    const auto parsed = from_name(name);
    ASSERT_TRUE(parsed.has_value()) << name;
    EXPECT_EQ(parsed->FMA_ORDER, order);
    EXPECT_EQ(to_name(*parsed), name);
    EXPECT_TRUE(check(*parsed).empty()) << name;
    EXPECT_EQ(derive(*parsed).SMEM_BYTES,
              derive(*from_name("wt_128x256x8_w64x64_wn4_t8x4_n256_mb1_s2_p4_g8")).SMEM_BYTES);
  }
  auto c = seed();
  EXPECT_EQ(to_name(c).find("_o"), std::string::npos) << to_name(c);
  c.FMA_ORDER = 4;
  const auto v = check(c);
  ASSERT_EQ(rule_names(v), (std::vector<std::string>{"fma_order"}));
  EXPECT_NE(v.front().reason.find("FMA_ORDER = 4"), std::string::npos) << v.front().reason;
}

// A 0/1 knob: `name` sets it (and parses back to itself), the seed's name has no `suffix`, the
// value 1 leaves shared memory as it is, and 2 breaks `rule` alone, whose reason names the value.
void expect_flag_knob(const std::string& name, int WarpTileConfig::*flag, std::string_view field,
                      std::string_view suffix, std::string_view rule) {
  const auto parsed = from_name(name);
  ASSERT_TRUE(parsed.has_value()) << name;
  EXPECT_EQ((*parsed).*flag, 1);
  EXPECT_EQ(to_name(*parsed), name);
  EXPECT_TRUE(check(*parsed).empty());
  auto c = seed();
  EXPECT_EQ(to_name(c).find(suffix), std::string::npos) << to_name(c);
  c.*flag = 1;
  EXPECT_EQ(derive(c).SMEM_BYTES, derive(seed()).SMEM_BYTES);
  c.*flag = 2;
  const auto v = check(c);
  ASSERT_EQ(rule_names(v), (std::vector<std::string>{std::string(rule)}));
  EXPECT_NE(v.front().reason.find(std::string(field) + " = 2"), std::string::npos)
      << v.front().reason;
}

// PACK: a flag with its own name suffix, last, and its own rule. Packing changes what the kernel
// reads, not its tiles: shared memory and registers alike.
TEST(ConfigCheck, PackIsAFlagWithItsOwnSuffixAndRule) {
  const std::string name = "wt_64x128x16_w32x64_wn1_t4x4_n128_mb2_s2_p4_g8_k3_o1_x1";
  expect_flag_knob(name, &WarpTileConfig::PACK, "PACK", "_x", "pack_flag");
  EXPECT_EQ(from_name(name)->SPLIT_K, 3);
}

// STAGE_C: a flag with its own name suffix, after PACK's, and two rules: the flag's values, and a
// shared-memory buffer that holds every warp's staged rows (it reuses As or Bs).
TEST(ConfigCheck, StageCIsAFlagWithItsOwnSuffixAndRules) {
  const std::string name = "wt_256x128x8_w64x64_wn4_t8x4_n256_mb1_s2_p4_g8_k2_o1_x1_c1";
  expect_flag_knob(name, &WarpTileConfig::STAGE_C, "STAGE_C", "_c", "stage_c_flag");
  EXPECT_EQ(from_name(name)->PACK, 1);
  auto c = seed();
  c.STAGE_C = 1;
  EXPECT_TRUE(check(c).empty());
  // Single-buffered 128x256x8: 8 warps x 8 rows x 64 columns = 4096 floats, As holds 1056, Bs
  // 2048. Double-buffered, Bs holds them.
  auto big = *from_name("wt_128x256x8_w64x64_wn4_t8x4_n256_mb1_p4_c1");
  const auto v = check(big);
  ASSERT_EQ(rule_names(v), (std::vector<std::string>{"stage_c_buffer"}));
  EXPECT_NE(v.front().reason.find("4096 floats"), std::string::npos) << v.front().reason;
  big.STAGES = 2;
  EXPECT_TRUE(check(big).empty());
}

TEST(ConfigCheck, PadAlignmentAndPipelineStages) {
  for (int WarpTileConfig::*pad : {&WarpTileConfig::PAD_A, &WarpTileConfig::PAD_B}) {
    auto p = seed();
    p.*pad = 2;
    EXPECT_EQ(rule_names(check(p)), (std::vector<std::string>{"pad_alignment"}));
    p.*pad = 4;
    EXPECT_TRUE(check(p).empty());
  }
  auto c = seed();
  c.PAD_A = 4;
  c.STAGES = 3;
  const auto v = check(c);
  ASSERT_EQ(rule_names(v), (std::vector<std::string>{"pipeline_stages"}));
  EXPECT_NE(v.front().reason.find("STAGES = 3"), std::string::npos) << v.front().reason;
  c.STAGES = 2;
  EXPECT_TRUE(check(c).empty());
  // pad_alignment is structural (the simulation sees it), pipeline_stages is not.
  for (const auto& r : rules()) {
    if (r.name == "pad_alignment") {
      EXPECT_TRUE(r.structural);
    }
    if (r.name == "pipeline_stages") {
      EXPECT_FALSE(r.structural);
    }
  }
}

TEST(ConfigCheck, SharedMemoryCountsStagesAndPadding) {
  auto c = seed();
  c.STAGES = 2;
  c.PAD_A = 4;
  const int bytes = 2 * ((128 + 4) + 64) * 16 * 4;  // 25088
  Limits exact;
  exact.max_static_shared_bytes = bytes;
  EXPECT_TRUE(check(c, exact).empty());
  Limits short_by_one;
  short_by_one.max_static_shared_bytes = bytes - 1;
  const auto v = check(c, short_by_one);
  ASSERT_EQ(rule_names(v), (std::vector<std::string>{"shared_memory"}));
  EXPECT_NE(v.front().reason.find(std::to_string(bytes)), std::string::npos) << v.front().reason;
  // The seed's single unpadded buffer needs half of it and less.
  EXPECT_TRUE(check(seed(), short_by_one).empty());
}

TEST(ConfigCheck, DoubleBufferPrefetchCountsTowardsTheRegisterCap) {
  // MIN_BLOCKS = 5 of 128 threads caps registers at 65536/640 -> 96. The seed needs 64
  // accumulators + 16 fragments = 80; double-buffered, another 4*(4+2) = 24 for the prefetched
  // float4s: 104.
  auto c = seed();
  c.MIN_BLOCKS = 5;
  EXPECT_TRUE(check(c).empty());
  c.STAGES = 2;
  const auto v = check(c);
  ASSERT_EQ(rule_names(v), (std::vector<std::string>{"register_cap"}));
  EXPECT_NE(v.front().reason.find("104"), std::string::npos) << v.front().reason;
}

// Every pad counts in the overflow guard: BK = PAD_B = 65536 would overflow Bs's 32-bit size.
TEST(ConfigCheck, PadBCountsInTheOverflowGuard) {
  auto c = seed();
  c.BK = 65536;
  c.PAD_B = 65536;
  EXPECT_EQ(rule_names(check(c)), (std::vector<std::string>{"positive_values"}));
  EXPECT_FALSE(sgt::simulate_block(c).ok());
}

TEST(ConfigCheck, PositiveValuesAcceptsPadZeroButNotStagesZero) {
  auto c = seed();
  c.PAD_A = 0;
  EXPECT_TRUE(check(c).empty());
  for (auto member : {&WarpTileConfig::STAGES, &WarpTileConfig::GROUP_M, &WarpTileConfig::SPLIT_K,
                      &WarpTileConfig::PAD_A}) {
    auto bad = seed();
    bad.*member = member == &WarpTileConfig::PAD_A ? -4 : 0;
    const auto v = check(bad);
    ASSERT_EQ(rule_names(v), (std::vector<std::string>{"positive_values"}));
  }
  for (const auto& f : kConfigFields) {
    if (f.name == "PAD_A") {
      EXPECT_EQ(f.min_value, 0);
      EXPECT_EQ(f.default_value, 0);
    } else if (f.name == "STAGES" || f.name == "GROUP_M" || f.name == "SPLIT_K") {
      EXPECT_EQ(f.min_value, 1) << f.name;
      EXPECT_EQ(f.default_value, 1) << f.name;
    } else if (f.default_value == kRequired) {
      EXPECT_EQ(f.min_value, 1) << f.name;
    }
  }
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

// --- TMA = 1 ---------------------------------------------------------------------------------
// The warp-specialised, TMA-fed kernel (sgemm_ws_tma.cuh): its own name suffix, last, and its own
// rules, each broken alone below by a config that keeps every other one.

// 64x128 tiles, 3 stages, PAD_A 4: A staged (NN, NT) through a 64 x 32 box, B through 128 x 32.
const std::string kTma64 = "wt_64x128x32_w64x16_wn2_t4x4_n256_mb1_s3_p4_g8_o1_m1";
// 128x256 tiles at BK = 16 (64-byte staging rows), 4 stages; BN + PAD_B is the largest box, 256.
const std::string kTma128 = "wt_128x256x16_w64x64_wn4_t8x4_n256_mb1_s4_p4_g8_o3_m1";

WarpTileConfig named(const std::string& name) {
  const auto c = from_name(name);
  EXPECT_TRUE(c.has_value()) << name;
  return c.value_or(WarpTileConfig{});
}

// Shared memory out of the way, for the rules that are not about it.
Limits roomy() {
  Limits l;
  l.max_static_shared_bytes = 1 << 30;
  l.max_dynamic_shared_bytes = 1 << 30;
  return l;
}

// `name` breaks `rule` alone (under `limits`), with a reason that contains `needle`.
void expect_only_rule(const std::string& name, const std::string& rule, const std::string& needle,
                      const Limits& limits = {}) {
  const auto v = check(named(name), limits);
  ASSERT_EQ(rule_names(v), (std::vector<std::string>{rule})) << name;
  EXPECT_NE(v.front().reason.find(needle), std::string::npos) << v.front().reason;
}

TEST(ConfigTma, ValidConfigsPassEveryRule) {
  for (const auto& name : {kTma64, kTma128}) {
    const auto c = named(name);
    EXPECT_EQ(c.family, "ws_tma");
    const auto v = check(c);
    EXPECT_TRUE(v.empty()) << name << ": " << v.front().rule << ": " << v.front().reason;
  }
  // The fields as the brief states them: the 64x128 config in full.
  WarpTileConfig c = seed();
  c.BM = 64;
  c.BN = 128;
  c.BK = 32;
  c.WM = 64;
  c.WN = 16;
  c.WNITER = 2;
  c.TM = 4;
  c.TN = 4;
  c.NUM_THREADS = 256;
  c.STAGES = 3;
  c.PAD_A = 4;
  c.GROUP_M = 8;
  c.FMA_ORDER = 1;
  c.family = "ws_tma";
  EXPECT_EQ(c, named(kTma64));
}

TEST(ConfigTma, NamesTakeTheMSuffixLastAndRoundTrip) {
  auto c = named(kTma64);
  EXPECT_EQ(to_name(c), kTma64);
  c.SPLIT_K = 4;
  c.PAD_B = 4;
  EXPECT_EQ(to_name(c), "wt_64x128x32_w64x16_wn2_t4x4_n256_mb1_s3_p4_g8_k4_o1_b4_m1");
  EXPECT_EQ(from_name(to_name(c)), c);
  // After PACK's and STAGE_C's suffixes (a name, not a valid config: tma_flag).
  const std::string all = "wt_64x128x32_w64x16_wn2_t4x4_n256_mb1_s3_x1_c1_m1";
  ASSERT_TRUE(from_name(all).has_value());
  EXPECT_EQ(from_name(all)->family, "ws_tma");
  EXPECT_EQ(to_name(*from_name(all)), all);
  const std::string base = "wt_64x128x32_w64x16_wn2_t4x4_n256_mb1_s3";
  for (const char* bad : {"_m0", "_m2", "_m1_c1", "_m1_x1", "_m1_m1", "_m", "_m01"}) {
    EXPECT_FALSE(from_name(base + bad).has_value()) << base + bad;
  }
  // The seed's names have no suffix and are the warp-tiling family's.
  EXPECT_EQ(to_name(seed()).find("_m1"), std::string::npos);
  EXPECT_EQ(named("wt_128x64x16_w64x32_wn2_t4x4_n128_mb1").family, "warptile");
}

// The family is the config's id, not a knob: _m1 is the TMA family's name suffix (what TMA = 1
// wrote when a field named the family), and the JSON of the two built-in families keeps the key
// TMA that releases before ids wrote, so they and older readers read the same config.
TEST(ConfigTma, TheFamilyIsAnIdThatOldNamesAndJsonStillSpell) {
  const auto tma = named(kTma64);
  EXPECT_EQ(&family_of(tma), find_family("ws_tma"));
  EXPECT_EQ(find_family("ws_tma")->name_suffix(), "_m1");
  EXPECT_EQ(find_family("ws_tma")->legacy_tma(), 1);
  EXPECT_EQ(find_family("warptile")->legacy_tma(), 0);
  EXPECT_EQ(family_of_legacy_tma(1), find_family("ws_tma"));
  EXPECT_EQ(family_of_legacy_tma(2), nullptr);
  // The same fields under the other id: the warp-tiling config, whose name has no _m1.
  auto wt = tma;
  wt.family = "warptile";
  EXPECT_EQ(to_name(wt), kTma64.substr(0, kTma64.size() - 3));
  EXPECT_EQ(from_name(to_name(wt)), wt);

  // JSON as earlier releases wrote it: "TMA": 1, "TMA": 0 or no key.
  nlohmann::json j = tma;
  EXPECT_EQ(j.at("TMA").get<int>(), 1);
  EXPECT_FALSE(j.contains("family"));
  EXPECT_EQ(j.get<WarpTileConfig>(), tma);
  j.erase("TMA");
  EXPECT_EQ(j.get<WarpTileConfig>(), wt);
  j["TMA"] = 0;
  EXPECT_EQ(j.get<WarpTileConfig>(), wt);
  // By id, and both when they agree.
  j.erase("TMA");
  j["family"] = "ws_tma";
  EXPECT_EQ(j.get<WarpTileConfig>(), tma);
  j["TMA"] = 1;
  EXPECT_EQ(j.get<WarpTileConfig>(), tma);
  j["TMA"] = 0;
  EXPECT_THROW((void)j.get<WarpTileConfig>(), InputError);
  j.erase("TMA");
  for (const auto bad : {nlohmann::json("nope"), nlohmann::json(1)}) {
    j["family"] = bad;
    EXPECT_THROW((void)j.get<WarpTileConfig>(), InputError) << bad;
  }
  j.erase("family");
  for (const auto bad : {nlohmann::json(2), nlohmann::json(-1), nlohmann::json("1")}) {
    j["TMA"] = bad;
    EXPECT_THROW((void)j.get<WarpTileConfig>(), InputError) << bad;
  }
}

// The TMA kernel stores C from registers (STAGE_C = 0); with PACK it runs on the panels, which any
// operands give (the shape rule then asks nothing of lda and ldb).
TEST(ConfigTma, TmaFlagRefusesTheStagedEpilogueAndTakesPack) {
  auto c = named(kTma64);
  c.STAGE_C = 1;
  const auto v = check(c);
  ASSERT_EQ(rule_names(v), (std::vector<std::string>{"tma_flag"}));
  EXPECT_NE(v.front().reason.find("STAGE_C = 1"), std::string::npos) << v.front().reason;
  auto p = named(kTma64);
  p.PACK = 1;
  EXPECT_TRUE(check(p).empty());
  Problem odd = parse_shape("1023x777x513");
  odd.layout = "NT";
  EXPECT_TRUE(check_shape(p, odd).empty());
  EXPECT_EQ(check_shape(named(kTma64), odd).size(), 1u);
  // In every layout it needs only the TN instance's shared memory.
  Limits tn_only;
  tn_only.max_dynamic_shared_bytes = static_cast<int>(tma_shared_bytes(p, true, false));
  EXPECT_TRUE(check_shape(p, odd, tn_only).empty());
  EXPECT_FALSE(check_shape(named(kTma64), parse_shape("1024x1024x1024"), tn_only).empty());
}

TEST(ConfigTma, SliceIsSixteenOrThirtyTwo) {
  // BK = 8 (32-byte rows) and BK = 64 (256-byte rows): no swizzle of the copies fits.
  expect_only_rule("wt_64x128x8_w64x16_wn2_t4x4_n256_mb1_s3_p4_g8_o1_m1", "tma_slice", "BK = 8");
  expect_only_rule("wt_64x128x64_w64x16_wn2_t4x4_n256_mb1_s2_p4_g8_o1_m1", "tma_slice", "BK = 64");
  for (int bk : {16, 32}) {
    auto c = named(kTma64);
    c.BK = bk;
    EXPECT_TRUE(check(c).empty()) << bk;
  }
}

TEST(ConfigTma, TransposeNeedsWholeFloat4sPerProducerThread) {
  // A 16 x 16 staging box is 64 float4s for 128 producer threads.
  expect_only_rule("wt_16x128x16_w16x32_wn1_t4x4_n128_mb2_s3_m1", "tma_transpose", "16x16");
  // With TMA = 0 the same tile is loaded by its threads: 256 floats of A, half a pass.
  auto c = named("wt_16x128x16_w16x32_wn1_t4x4_n128_mb2_s3_m1");
  c.family = "warptile";
  c.STAGES = 2;
  EXPECT_EQ(rule_names(check(c)), (std::vector<std::string>{"load_stride_a"}));
}

TEST(ConfigTma, BoxesAreAtMost256) {
  // BN + PAD_B = 260: B's straight box (NN, TN) would be 260 floats wide.
  expect_only_rule("wt_128x256x16_w64x64_wn4_t8x4_n256_mb1_s4_p4_g8_o3_b4_m1", "tma_box", "260");
  // PAD_A = 0 on a 256-row tile: 256, the largest box, is fine.
  EXPECT_TRUE(check(named("wt_256x128x16_w64x64_wn2_t8x4_n256_mb1_s3_g8_m1")).empty());
  expect_only_rule("wt_256x128x16_w64x64_wn2_t8x4_n256_mb1_s3_p4_g8_m1", "tma_box", "260");
}

TEST(ConfigTma, ConsumersAndProducerAreWholeWarpgroups) {
  // Two consumer warps: the producer's first two warps share warpgroup 0 with them.
  expect_only_rule("wt_64x64x32_w64x32_wn1_t4x4_n64_mb2_s3_m1", "tma_warpgroups",
                   "NUM_THREADS = 64");
  // Six warps: warpgroup 1 is half consumer, half producer.
  expect_only_rule("wt_96x64x32_w32x32_wn1_t4x4_n192_mb1_s3_m1", "tma_warpgroups",
                   "NUM_THREADS = 192");
  // The template has no producer: 64 threads are fine there.
  auto c = named("wt_64x64x32_w64x32_wn1_t4x4_n64_mb2_s3_m1");
  c.family = "warptile";
  c.STAGES = 1;
  EXPECT_TRUE(check(c).empty()) << check(c).front().rule;
}

TEST(ConfigTma, LaunchBoundsMustCapTheRegistersBetweenTheProducersAnd248) {
  // 128 + 128 threads once: 65536 / 256 = 256 registers each, uncapped.
  expect_only_rule("wt_64x64x32_w32x32_wn1_t4x4_n128_mb1_s3_m1", "tma_registers", "uncapped");
  // Twice resident: 128 each, capped.
  EXPECT_TRUE(check(named("wt_64x64x32_w32x32_wn1_t4x4_n128_mb2_s3_m1")).empty());
  // 512 threads x 4 blocks leave 32 registers per thread: the producer's setmaxnreg.dec to 40
  // would raise them (shared memory set aside).
  expect_only_rule("wt_48x128x32_w16x32_wn1_t4x4_n384_mb4_s2_m1", "tma_registers",
                   "with 32 registers", roomy());
  const auto tl = sgt_kernel::make_tma_layout(
      derive(named("wt_48x128x32_w16x32_wn1_t4x4_n384_mb4_s2_m1")), false, true, 4);
  EXPECT_EQ(tl.LAUNCH_REGS, 32);
  // The rule is the kernel's static_assert: LAUNCH_REGS < 248 exactly when threads x blocks > 264.
  for (int threads = 1; threads <= 600; ++threads) {
    const auto g = sgt_kernel::make_geometry(64, 64, 32, 32, 32, 1, 4, 4, threads);
    EXPECT_EQ(sgt_kernel::make_tma_layout(g, false, true, 1)
                  .LAUNCH_REGS<248, threads + sgt_kernel::kTmaProducerThreads> 264)
        << threads;
  }
}

TEST(ConfigTma, StagesAreTwoToEightAndCountInSharedMemory) {
  for (int stages : {1, 9}) {
    auto c = named(kTma64);
    c.STAGES = stages;
    const auto v = check(c, roomy());
    ASSERT_EQ(rule_names(v), (std::vector<std::string>{"pipeline_stages"})) << stages;
    EXPECT_NE(v.front().reason.find("2 to 8"), std::string::npos) << v.front().reason;
  }
  for (int stages = 2; stages <= 8; ++stages) {
    auto c = named(kTma64);
    c.STAGES = stages;
    EXPECT_TRUE(check(c, roomy()).empty()) << stages;
  }
  // Without TMA, 3 stages is the template's pipeline_stages.
  auto c = named(kTma64);
  c.family = "warptile";
  EXPECT_EQ(rule_names(check(c, roomy())), (std::vector<std::string>{"pipeline_stages"}));
}

// check() holds the layout that stages nothing (TN) plus three 8-byte mbarriers per stage to the
// dynamic limit; the shape rule shape_tma_shared_memory holds each problem's own layout (NN and TT
// stage one operand, NT both).
TEST(ConfigTma, SharedMemoryIsTheSmallestLayoutPlusBarriersThenEachLayoutByShape) {
  const auto c = named(kTma64);
  const auto tn = sgt_kernel::make_tma_layout(derive(c), true, false, c.MIN_BLOCKS);
  EXPECT_EQ(tn.SMEM_BYTES, (3 * (32 * 68 + 32 * 128)) * 4 + 1024);
  const int bytes = tn.SMEM_BYTES + 3 * 8 * c.STAGES;
  EXPECT_EQ(tma_shared_bytes(c, true, false), bytes);
  Limits exact;
  exact.max_dynamic_shared_bytes = bytes;
  EXPECT_TRUE(check(c, exact).empty());
  Limits short_by_one;
  short_by_one.max_dynamic_shared_bytes = bytes - 1;
  const auto v = check(c, short_by_one);
  ASSERT_EQ(rule_names(v), (std::vector<std::string>{"shared_memory"}));
  EXPECT_NE(v.front().reason.find(std::to_string(tn.SMEM_BYTES)), std::string::npos)
      << v.front().reason;
  // Twice resident, twice as much.
  auto two = c;
  two.MIN_BLOCKS = 2;
  exact.max_dynamic_shared_bytes = 2 * bytes;
  EXPECT_TRUE(check(two, exact).empty());
  short_by_one.max_dynamic_shared_bytes = 2 * bytes - 1;
  EXPECT_EQ(rule_names(check(two, short_by_one)), (std::vector<std::string>{"shared_memory"}));
  // Each layout by the shape rule: NN stages A (64 x 32), TT B^T (128 x 32), NT both.
  const int nt = (3 * (64 * 32 + 128 * 32 + 32 * 68 + 32 * 128)) * 4 + 1024 + 3 * 8 * 3;
  EXPECT_EQ(tma_shared_bytes(c, false, true), nt);
  Problem p = parse_shape("1024x1024x1024");
  Limits fits_nn;
  fits_nn.max_dynamic_shared_bytes = tma_shared_bytes(c, false, false);
  for (const auto& [layout, ok] : std::vector<std::pair<std::string, bool>>{
           {"TN", true}, {"NN", true}, {"TT", false}, {"NT", false}}) {
    p.layout = layout;
    const auto sv = check_shape(c, p, fits_nn);
    EXPECT_EQ(sv.empty(), ok) << layout;
    if (!ok) {
      ASSERT_EQ(sv.size(), 1u);
      EXPECT_EQ(sv[0].rule, "shape_tma_shared_memory");
      const int need = tma_shared_bytes(c, layout[0] == 'T', layout[1] == 'T');
      EXPECT_NE(sv[0].reason.find(std::to_string(need)), std::string::npos) << sv[0].reason;
    }
  }
  // The static 48 KB of the template does not apply: 75264 bytes of As and Bs alone.
  EXPECT_GT(derive(c).SMEM_BYTES, Limits{}.max_static_shared_bytes);
}

TEST(ConfigTma, ThreadLimitsCountTheProducerWarpgroup) {
  const auto c = named(kTma64);
  auto plain = c;  // the template's twin: one stage, no producer
  plain.family = "warptile";
  plain.STAGES = 1;
  ASSERT_TRUE(check(plain).empty()) << check(plain).front().rule;
  Limits block;
  block.max_threads_per_block = 256;
  const auto v = check(c, block);
  ASSERT_EQ(rule_names(v), (std::vector<std::string>{"max_threads_per_block"}));
  EXPECT_NE(v.front().reason.find("384"), std::string::npos) << v.front().reason;
  EXPECT_TRUE(check(plain, block).empty());
  Limits sm;
  sm.max_threads_per_sm = 383;
  EXPECT_EQ(rule_names(check(c, sm)), (std::vector<std::string>{"resident_threads"}));
  EXPECT_TRUE(check(plain, sm).empty());
  sm.max_threads_per_sm = 384;
  EXPECT_TRUE(check(c, sm).empty());
}

TEST(ConfigTma, ConsumerRegistersAreWhatSetmaxnregGivesThem) {
  // Twice resident, 768 threads: 80 registers at launch, 96 for the consumers after the producer's
  // surplus, below the 128 accumulators and 24 fragments.
  auto c = named(kTma128);
  c.MIN_BLOCKS = 2;
  const auto v = check(c, roomy());
  ASSERT_EQ(rule_names(v), (std::vector<std::string>{"register_cap"}));
  EXPECT_NE(v.front().reason.find("96"), std::string::npos) << v.front().reason;
  EXPECT_NE(v.front().reason.find("152"), std::string::npos) << v.front().reason;
  // Once resident: 168 at launch, 232 for the consumers.
  EXPECT_EQ(sgt_kernel::make_tma_layout(derive(named(kTma128)), false, true, 1).CONSUMER_REGS, 232);
}

TEST(ConfigTma, FourByFourThreadTilesOnly) {
  // TM = 2: the template reads As element by element, the TMA kernel as float4s only.
  const std::string name = "wt_64x128x32_w64x16_wn2_t2x4_n256_mb1_s3_p4_g8_o1_m1";
  expect_only_rule(name, "float4_alignment", "TM = 2");
  auto plain = named(name);
  plain.family = "warptile";
  plain.STAGES = 1;
  EXPECT_TRUE(check(plain).empty()) << check(plain).front().rule;
}

// No thread loads a slice with TMA = 1: the load-stride rules do not apply.
TEST(ConfigTma, NoLoadPassesAreNeeded) {
  const auto c = named("wt_32x256x16_w32x32_wn1_t4x4_n256_mb1_s2_m1");
  EXPECT_EQ(derive(c).A_PASSES, 0);
  EXPECT_TRUE(check(c).empty()) << check(c).front().rule;
  auto plain = c;
  plain.family = "warptile";
  EXPECT_EQ(rule_names(check(plain)), (std::vector<std::string>{"load_stride_a"}));
}

// TMA = 0 configs see none of the TMA rules, whatever their values: every combination of the
// default space, and its survivors unchanged.
TEST(ConfigTma, TmaZeroConfigsAreUnaffected) {
  const auto e = enumerate(load_space("default"));
  ASSERT_FALSE(e.survivors.empty());
  for (const auto& r : e.rejections) {
    if (r.rule.rfind("tma_", 0) == 0) {
      EXPECT_EQ(r.violations, 0) << r.rule << ": " << r.sample << " " << r.sample_reason;
    }
  }
  for (const auto& c : e.survivors) {
    EXPECT_EQ(c.family, "warptile");
  }
  // Configs that break TMA rules' conditions as TMA = 0 keep their TMA = 0 verdicts.
  for (const char* name :
       {"wt_128x64x16_w64x32_wn2_t4x4_n128_mb1", "wt_128x64x16_w64x32_wn2_t2x4_n128_mb1",
        "wt_128x64x8_w64x32_wn2_t4x4_n128_mb1", "wt_64x64x16_w64x32_wn1_t4x4_n64_mb1",
        "wt_128x64x16_w64x32_wn2_t4x4_n128_mb1_s2"}) {
    const auto v = check(named(name));
    EXPECT_TRUE(v.empty()) << name << ": " << v.front().rule;
  }
}

TEST(ConfigTma, TmaRulesAreStructuralWhereTheSimulationSeesThem) {
  const std::set<std::string> structural = {"tma_slice", "tma_transpose", "tma_box",
                                            "tma_warpgroups"};
  int seen = 0;
  for (const auto& r : rules()) {
    if (r.name.rfind("tma_", 0) != 0) continue;
    ++seen;
    EXPECT_EQ(r.structural, structural.count(std::string(r.name)) == 1) << r.name;
  }
  EXPECT_EQ(seen, 7);  // tma_architecture is about the device, not the indexing
}

}  // namespace
}  // namespace sgt
