// The split-TF32 wgmma family (tf32x3_wg, tuner/core/families/tf32x3_wg/) through the seams a
// family meets on the CPU: its registration, precision class and hash, its names, each of its
// named rules and the values no config of it may have, its search space under each precision
// class and in `auto`, the instance and launch resolve() gives it (LaunchAbi split_maps), the
// worker protocol's launch name, and the export table and the dispatch library built from it by
// nvcc. Its index simulation and geometry: tf32x3_wg_simulation_test.cpp.
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <set>
#include <string>
#include <string_view>
#include <tuple>
#include <vector>

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "arch.hpp"
#include "config.hpp"
#include "error.hpp"
#include "export.hpp"
#include "families/tf32x3_wg/simulation.hpp"
#include "family.hpp"
#include "index_sim.hpp"
#include "instance.hpp"
#include "kernel_source.hpp"
#include "problem.hpp"
#include "space.hpp"
#include "test_support.hpp"
#include "tf32x3_wg_geometry.h"
#include "tf32x3_wg_test_util.hpp"
#include "worker_protocol.hpp"

namespace sgt {
namespace {

namespace fs = std::filesystem;
using tw3_test::probe_config;
using tw3_test::tw3;

std::set<std::string> rule_names(const std::vector<RuleViolation>& v) {
  std::set<std::string> out;
  for (const auto& r : v) out.insert(r.rule);
  return out;
}

TEST(Tf32x3WgFamily, IsRegisteredInThePrecisionClassFp32AccurateWithItsOwnHash) {
  const auto& all = families();
  ASSERT_GE(all.size(), 4u);
  EXPECT_EQ(all[3]->id(), "tf32x3_wg");
  EXPECT_EQ(tw3().precision(), Precision::fp32_accurate);
  EXPECT_FALSE(tw3().legacy_tma());
  EXPECT_EQ(tw3().name_prefix(), "tw3_");
  EXPECT_EQ(tw3().launch_abi(), LaunchAbi::split_maps);
  // Its program holds sgemm_splitk_reduce, and its split configs share one binary of their own.
  EXPECT_TRUE(tw3().has_split_k_reduce());
  EXPECT_EQ(tw3().binary_split_k(probe_config()), 1);
  for (const int s : {2, 3, 4, 16}) {
    auto c = probe_config();
    c.SPLIT_K = s;
    EXPECT_EQ(tw3().binary_split_k(c), 2) << s;
  }
  EXPECT_EQ(tw3().pack_expression(probe_config()), "tf32x3_split_operand");
  // The BF16 split's prepass writes three BF16 parts.
  EXPECT_EQ(tw3().pack_expression(*from_name("tw3_128x128x64_s2_g8_o3")),
            "bf16x6_split_operand<3>");
  // Its program is the BF16 split's kernel file, which includes the TF32 one; every file it
  // includes is among its sources.
  const auto src = tw3().sources();
  ASSERT_FALSE(src.empty());
  EXPECT_EQ(src.front().name, "sgemm_bf16x6_wgmma.cuh");
  std::set<std::string> names;
  for (const auto& s : src) {
    EXPECT_FALSE(s.text.empty()) << s.name;
    names.insert(std::string(s.name));
  }
  EXPECT_EQ(names, (std::set<std::string>{"sgemm_bf16x6_wgmma.cuh", "sgemm_tf32x3_wgmma.cuh",
                                          "sgemm_ws_tma.cuh", std::string(kKernelMainFile),
                                          "warptile_geometry.h", "tma_geometry.h",
                                          "tf32x3_wg_geometry.h"}));
  for (const auto& s : src) {
    for (size_t at = s.text.find("#include \""); at != std::string::npos;
         at = s.text.find("#include \"", at + 1)) {
      const auto end = s.text.find('"', at + 10);
      EXPECT_TRUE(names.contains(std::string(s.text.substr(at + 10, end - at - 10))))
          << s.name << " includes a file outside the family's sources";
    }
  }
  // Freshness: its trials are stale exactly when its own files change.
  EXPECT_EQ(current_family_hashes().at("tf32x3_wg"), tw3().source_hash());
  EXPECT_EQ(kernel_source_hash(probe_config()), tw3().source_hash());
  for (const char* other : {"warptile", "ws_tma", "tf32x3"})
    EXPECT_NE(tw3().source_hash(), find_family(other)->source_hash()) << other;
  auto files = src;
  const std::string edited = std::string(files.back().text) + "\n// edited\n";
  files.back().text = edited;
  EXPECT_NE(hash_sources(files), tw3().source_hash());
}

TEST(Tf32x3WgFamily, NamesLeaveTheImpliedFieldsOutAndRoundTrip) {
  const auto c = probe_config();
  EXPECT_EQ(c.family, "tf32x3_wg");
  EXPECT_EQ(c.BM, 128);
  EXPECT_EQ(c.BN, 128);
  EXPECT_EQ(c.BK, 32);
  EXPECT_EQ(c.WM, 64);
  EXPECT_EQ(c.WN, 128);
  EXPECT_EQ(c.NUM_THREADS, 384);
  EXPECT_EQ(c.STAGES, 3);
  EXPECT_EQ(c.GROUP_M, 8);
  EXPECT_EQ(c.SPLIT_K, 1);
  EXPECT_EQ(to_name(c), "tw3_128x128x32_s3_g8");
  auto g1 = c;
  g1.GROUP_M = 1;
  g1.STAGES = 2;
  EXPECT_EQ(to_name(g1), "tw3_128x128x32_s2");
  EXPECT_EQ(from_name("tw3_128x128x32_s2"), g1);
  const nlohmann::json j = c;
  EXPECT_EQ(j.at("family"), "tf32x3_wg");
  EXPECT_EQ(j.get<WarpTileConfig>(), c);
  // One config, one name: implied fields written out, a suffix of an implied knob, or a default
  // restated are no names of the family.
  for (const char* bad :
       {"tw3_128x128x32_w64x128_s3", "tw3_128x128x32_n384_s3", "tw3_128x128x32_s3_k1",
        "tw3_128x128x32_s3_g1", "tw3_128x128x32_s3_p4", "tw3_128x128_s3", "tw3__s3", "tw3_s3_g8"}) {
    EXPECT_FALSE(from_name(bad)) << bad;
  }
  // SPLIT_K is a knob: written as the other families write it (_k<SPLIT_K>, after _g, before _o).
  auto k4 = c;
  k4.SPLIT_K = 4;
  EXPECT_EQ(to_name(k4), "tw3_128x128x32_s3_g8_k4");
  EXPECT_EQ(from_name("tw3_128x128x32_s3_g8_k4"), k4);
  k4.FMA_ORDER = 1;
  EXPECT_EQ(to_name(k4), "tw3_128x128x32_s3_g8_k4_o1");
  EXPECT_EQ(from_name("tw3_128x128x32_s3_g8_k4_o1"), k4);
  const nlohmann::json jk = k4;
  EXPECT_EQ(jk.at("SPLIT_K"), 4);
  EXPECT_EQ(jk.get<WarpTileConfig>(), k4);
  // The other families' names are as they were.
  for (const char* name : {test::kSeed, "tc3_128x128x32_w64x64_n128_s3_g8_k4",
                           "wt_128x128x16_w64x64_wn2_t8x4_n128_mb1_s3_p4_g8_m1"}) {
    const auto w = from_name(name);
    ASSERT_TRUE(w) << name;
    EXPECT_EQ(to_name(*w), name);
  }
}

TEST(Tf32x3WgFamily, EachRuleFiresByItsNameForItsCondition) {
  EXPECT_TRUE(check(probe_config()).empty());
  struct Case {
    void (*edit)(WarpTileConfig&);
    const char* rule;
  };
  const Case cases[] = {
      {[](WarpTileConfig& c) { c.NUM_THREADS = 256; }, "tf32x3_wg_fixed_fields"},
      {[](WarpTileConfig& c) { c.WM = 32; }, "tf32x3_wg_fixed_fields"},
      {[](WarpTileConfig& c) { c.PACK = 1; }, "tf32x3_wg_fixed_fields"},
      {[](WarpTileConfig& c) { c.BN = 64; }, "tf32x3_wg_tile"},
      {[](WarpTileConfig& c) { c.BK = 16; }, "tf32x3_wg_tile"},
      {[](WarpTileConfig& c) { c.STAGES = 4; }, "tf32x3_wg_stages"},
      {[](WarpTileConfig& c) { c.STAGES = 1; }, "tf32x3_wg_stages"},
      {[](WarpTileConfig& c) { c.TAIL = 2; }, "tf32x3_wg_tail"},
      {[](WarpTileConfig& c) { c.TAIL = 1, c.SPLIT_K = 2; }, "tf32x3_wg_tail"},
  };
  for (const auto& x : cases) {
    auto c = probe_config();
    x.edit(c);
    const auto v = check(c);
    EXPECT_EQ(rule_names(v), std::set<std::string>{x.rule}) << to_name(c);
  }
  // The shared memory: 3 stages fit the H200's 227 KB, not a 160 KB limit; 2 stages do.
  Limits small;
  small.max_dynamic_shared_bytes = 160 * 1024;
  EXPECT_EQ(rule_names(check(probe_config(), small)),
            std::set<std::string>{"tf32x3_wg_shared_memory"});
  auto two = probe_config();
  two.STAGES = 2;
  EXPECT_TRUE(check(two, small).empty());
  // Threads.
  Limits few;
  few.max_threads_per_block = 256;
  EXPECT_EQ(rule_names(check(probe_config(), few)), std::set<std::string>{"max_threads_per_block"});
  // The architecture: sm_90 only, a named rule (never a stub).
  for (const char* arch : {"sm_80", "sm_89", "sm_75"}) {
    const auto l = limits_on(parse_arch(arch), Limits{});
    EXPECT_TRUE(rule_names(check(probe_config(), l)).contains("tf32x3_wg_architecture")) << arch;
  }
  EXPECT_TRUE(check(probe_config(), limits_on(parse_arch("sm_90"), Limits{})).empty());
  EXPECT_TRUE(tw3().implemented_for(90));
  EXPECT_FALSE(tw3().implemented_for(80));
  EXPECT_EQ(tw3().architecture_rule(), "tf32x3_wg_architecture");
  EXPECT_EQ(tw3().refusal_on("sm_80").rfind("rule tf32x3_wg_architecture:", 0), 0u);
  EXPECT_EQ(tw3().target_arch("sm_90"), "sm_90a");
  // Every rule it reports is documented in its list, and the list is in the registry's union.
  std::set<std::string> listed;
  for (const auto& r : tw3().rules()) listed.insert(std::string(r.name));
  for (const char* r :
       {"tf32x3_wg_fixed_fields", "tf32x3_wg_tile", "tf32x3_wg_stages", "tf32x3_wg_shared_memory",
        "tf32x3_wg_architecture", "tf32x3_wg_tail", "max_threads_per_block"}) {
    EXPECT_TRUE(listed.contains(r)) << r;
    EXPECT_TRUE(std::any_of(rules().begin(), rules().end(), [&](const RuleInfo& i) {
      return i.name == r;
    })) << r;
  }
  // SPLIT_K is a knob: any split passes the config's rules (its limit is the problem's K).
  for (const int s : {2, 3, 4, 64}) {
    auto split = probe_config();
    split.SPLIT_K = s;
    EXPECT_TRUE(check(split).empty()) << s;
  }
  // TAIL 1 with SPLIT_K 1 passes; the FFMA families take it too, unsplit only (tail_flag).
  auto tail = probe_config();
  tail.TAIL = 1;
  EXPECT_TRUE(check(tail).empty());
  auto ffma = *from_name(test::kSeed);
  ffma.TAIL = 1;
  EXPECT_TRUE(check(ffma).empty());
  ffma.SPLIT_K = 2;
  EXPECT_EQ(rule_names(check(ffma)), std::set<std::string>{"tail_flag"});
  // Two shape rules, of SPLIT_K and of TAIL (the prepass serves every layout and alignment).
  EXPECT_EQ(tw3().shape_rules(),
            (std::vector<std::string_view>{"shape_tf32x3_wg_split_k", "shape_tf32x3_wg_tail"}));
  EXPECT_EQ(tw3().asserted_rules(), std::vector<std::string_view>{"tf32x3_wg_stages"});
}

TEST(Tf32x3WgFamily, ImpossibleValuesNameTheirRule) {
  EXPECT_FALSE(tw3().impossible_value("SPLIT_K", 4));  // a knob
  EXPECT_FALSE(tw3().impossible_value("TAIL", 1));
  EXPECT_EQ(tw3().impossible_value("TAIL", 2)->rfind("rule tf32x3_wg_tail", 0), 0u);
  EXPECT_EQ(tw3().impossible_value("PACK", 1)->rfind("rule tf32x3_wg_fixed_fields", 0), 0u);
  EXPECT_EQ(tw3().impossible_value("NUM_THREADS", 256)->rfind("rule tf32x3_wg_fixed_fields", 0),
            0u);
  EXPECT_EQ(tw3().impossible_value("BM", 64)->rfind("rule tf32x3_wg_tile", 0), 0u);
  EXPECT_EQ(tw3().impossible_value("BK", 16)->rfind("rule tf32x3_wg_tile", 0), 0u);
  EXPECT_FALSE(tw3().impossible_value("BK", 64));  // the BF16 split's
  EXPECT_EQ(tw3().impossible_value("STAGES", 4)->rfind("rule tf32x3_wg_stages", 0), 0u);
  EXPECT_FALSE(tw3().impossible_value("STAGES", 2));
  EXPECT_FALSE(tw3().impossible_value("GROUP_M", 8));
  EXPECT_FALSE(tw3().impossible_value("NUM_THREADS", 384));
  // FMA_ORDER names the accumulation order here: 0 (ACC 3), 1 (ACC 6), 2 (ACC 7), 3 (the BF16
  // split).
  EXPECT_FALSE(tw3().impossible_value("FMA_ORDER", 1));
  EXPECT_FALSE(tw3().impossible_value("FMA_ORDER", 2));
  EXPECT_FALSE(tw3().impossible_value("FMA_ORDER", 3));
  EXPECT_EQ(tw3().impossible_value("FMA_ORDER", 4)->rfind("rule tf32x3_wg_accumulation", 0), 0u);
  // A space of the family alone refuses a value every config would break.
  const nlohmann::json space = {{"parameters",
                                 {{"BM", {128}},
                                  {"BN", {128}},
                                  {"BK", {32}},
                                  {"WM", {64}},
                                  {"WN", {128}},
                                  {"WNITER", {1}},
                                  {"TM", {1}},
                                  {"TN", {1}},
                                  {"NUM_THREADS", {384}},
                                  {"MIN_BLOCKS", {1}},
                                  {"STAGES", {3}},
                                  {"SPLIT_K", {1, 2}},
                                  {"PACK", {0, 1}},
                                  {"family", {"tf32x3_wg"}}}}};
  try {
    (void)parse_space(space, "test");
    ADD_FAILURE() << "PACK 1 accepted";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("tf32x3_wg_fixed_fields"), std::string::npos) << e.what();
  }
}

// The space's names: STAGES 2, 3 x GROUP_M 1, 8 x SPLIT_K 1-4 x FMA_ORDER 0, 1, 2, and the BF16
// split (FMA_ORDER 3, BK 64, STAGES 2) x GROUP_M 1, 8 x SPLIT_K 1-4; with SPLIT_K 1 also TAIL 1.
std::set<std::string> space_names() {
  std::set<std::string> out;
  for (const char* g : {"", "_g8"}) {
    for (const char* k : {"", "_k2", "_k3", "_k4", "_v1"}) {
      for (const char* s : {"_s2", "_s3"})
        for (const char* o : {"", "_o1", "_o2"})
          out.insert(std::string("tw3_128x128x32") + s + g + (k[1] == 'v' ? "" : k) + o +
                     (k[1] == 'v' ? k : ""));
      out.insert(std::string("tw3_128x128x64_s2") + g + (k[1] == 'v' ? "" : k) + "_o3" +
                 (k[1] == 'v' ? k : ""));
    }
  }
  return out;
}

// Enumerated only for a request that admits fp32-accurate, and then as part of `auto`.
TEST(Tf32x3WgFamily, ItsSpaceIsEnumeratedOnlyUnderFp32Accurate) {
  const auto space = load_space("tf32x3_wg");
  EXPECT_EQ(space.families, (std::vector<std::string>{"tf32x3_wg"}));
  // BK 32, 64 x STAGES 2, 3 x GROUP_M 1, 8 x FMA_ORDER 0-3 x SPLIT_K 1-4 x TAIL 0, 1; the
  // space's constraints keep BK 64 and STAGES 2 for FMA_ORDER 3 and BK 32 for the others, and
  // TAIL 1 for SPLIT_K 1: 48 + 8 configs, and 12 + 2 with a tail.
  EXPECT_EQ(space.combinations(), 256);
  EXPECT_TRUE(enumerate(space).survivors.empty());
  const auto accurate = enumerate(space, {}, Precision::fp32_accurate);
  ASSERT_EQ(accurate.survivors.size(), 70u);
  std::set<std::string> seen;
  for (const auto& c : accurate.survivors) {
    EXPECT_TRUE(check(c, space.limits).empty()) << to_name(c);
    seen.insert(to_name(c));
  }
  EXPECT_EQ(seen, space_names());
  // The name expression carries the accumulation the field names, and the split configs name
  // the split entry.
  EXPECT_EQ(tw3().name_expression(*from_name("tw3_128x128x32_s3_g8"), "NT", true),
            "sgemm_tf32x3_wgmma<3,3,8>");
  EXPECT_EQ(tw3().name_expression(*from_name("tw3_128x128x32_s2_o1"), "NT", true),
            "sgemm_tf32x3_wgmma<6,2,1>");
  EXPECT_EQ(tw3().name_expression(*from_name("tw3_128x128x32_s3_g8_o2"), "TN", true),
            "sgemm_tf32x3_wgmma<7,3,8>");
  EXPECT_EQ(tw3().name_expression(*from_name("tw3_128x128x32_s3_g8_k3"), "NT", true),
            "sgemm_tf32x3_wgmma_splitk<3,3,8>");
  EXPECT_EQ(tw3().name_expression(*from_name("tw3_128x128x32_s2_k2_o1"), "NN", false),
            "sgemm_tf32x3_wgmma_splitk<6,2,1>");
  EXPECT_EQ(tw3().name_expression(*from_name("tw3_128x128x64_s2_g8_o3"), "TT", true),
            "sgemm_bf16x6_wgmma<2,8>");
  EXPECT_EQ(tw3().name_expression(*from_name("tw3_128x128x64_s2_k4_o3"), "NT", true),
            "sgemm_bf16x6_wgmma_splitk<2,1>");
  // A tail config runs the split entry, and shares the split configs' binary.
  EXPECT_EQ(tw3().name_expression(*from_name("tw3_128x128x32_s3_g8_o2_v1"), "NT", true),
            "sgemm_tf32x3_wgmma_splitk<7,3,8>");
  EXPECT_EQ(resolve(*from_name("tw3_128x128x32_s3_g8_o2_v1"), "TT", true).binary_config,
            resolve(*from_name("tw3_128x128x32_s3_g8_k3_o2"), "NN", true).binary_config);
  EXPECT_EQ(tw3().name_expression(*from_name("tw3_128x128x64_s2_o3_v1"), "NT", true),
            "sgemm_bf16x6_wgmma_splitk<2,1>");
  // Every layout and leading dimension: a K of 32 slices takes every split.
  for (const char* layout : {"NN", "NT", "TN", "TT"}) {
    const Problem p{1001, 999, 1003, layout, "f32"};
    EXPECT_EQ(enumerate(space, p, Precision::fp32_accurate).survivors.size(), 70u) << layout;
  }
  // `auto` holds the space: its configs under fp32-accurate, none under fp32.
  const auto count = [](const Enumeration& e) {
    return std::count_if(e.survivors.begin(), e.survivors.end(),
                         [](const WarpTileConfig& c) { return c.family == "tf32x3_wg"; });
  };
  const auto h200 = parse_arch("sm_90");
  EXPECT_EQ(count(enumerate_spaces("auto", {}, &h200, Precision::fp32_accurate).enumeration), 70);
  EXPECT_EQ(count(enumerate_spaces("auto", {}, &h200, Precision::fp32).enumeration), 0);
  // On an sm_80 GPU none.
  const auto a100 = parse_arch("sm_80");
  EXPECT_EQ(count(enumerate_spaces("tf32x3_wg", {}, &a100, Precision::fp32_accurate).enumeration),
            0);
}

// shape_tf32x3_wg_split_k: a problem's launch runs every split the config names, else the config
// is refused for it by name, with the numbers.
TEST(Tf32x3WgFamily, TheSplitKShapeRuleRefusesSplitsTheProblemCannotFill) {
  const auto split = [](int s) {
    auto c = probe_config();
    c.SPLIT_K = s;
    return c;
  };
  const auto rule_for = [&](int s, long long K) {
    return rule_names(check_shape(split(s), Problem{1536, 1536, K, "NT", "f32"}));
  };
  const std::set<std::string> none, refused{"shape_tf32x3_wg_split_k"};
  // 1536 x 1536 x 6144: 192 slices, every split of the space runs.
  for (const int s : {1, 2, 3, 4}) EXPECT_EQ(rule_for(s, 6144), none) << s;
  // K = 100 is 4 slices: 2 and 4 splits run, 3 would run 2 of 2 slices.
  EXPECT_EQ(rule_for(2, 100), none);
  EXPECT_EQ(rule_for(4, 100), none);
  EXPECT_EQ(rule_for(3, 100), refused);
  // Fewer slices than SPLIT_K: K = 40 (2 slices) at SPLIT_K 3 and 4; K = 32 (one) at 2.
  EXPECT_EQ(rule_for(3, 40), refused);
  EXPECT_EQ(rule_for(4, 40), refused);
  EXPECT_EQ(rule_for(2, 32), refused);
  EXPECT_EQ(rule_for(2, 33), none);
  // Unsplit, and K = 0 (nothing to split: C = beta C), are never refused.
  EXPECT_EQ(rule_for(1, 1), none);
  EXPECT_EQ(rule_for(4, 0), none);
  const auto v = check_shape(split(3), Problem{64, 64, 100, "NN", "f32"});
  ASSERT_EQ(v.size(), 1u);
  EXPECT_NE(
      v[0].reason.find("K = 100: 4 slices of 32 in splits of 2 run 2 splits, not SPLIT_K = 3"),
      std::string::npos)
      << v[0].reason;
  // In a space enumerated for such a problem the rule rejects exactly those configs.
  const auto space = load_space("tf32x3_wg");
  const auto e = enumerate(space, Problem{1536, 1536, 100, "NT", "f32"}, Precision::fp32_accurate);
  // SPLIT_K 3's twelve TF32 configs refused, and the BF16 split's SPLIT_K 3 and 4 (2 slices of
  // 64: two splits of one), two configs each.
  EXPECT_EQ(e.survivors.size(), 40u);
  for (const auto& c : e.survivors) {
    EXPECT_NE(c.SPLIT_K, 3) << to_name(c);
    if (c.FMA_ORDER == 3) EXPECT_LE(c.SPLIT_K, 2) << to_name(c);
  }
  const auto rc = std::find_if(e.rejections.begin(), e.rejections.end(),
                               [](const auto& r) { return r.rule == "shape_tf32x3_wg_split_k"; });
  ASSERT_NE(rc, e.rejections.end());
  // The rule's count is over the space's combinations, before its constraint drops those of no
  // kernel: SPLIT_K 3 with the three TF32 orders at both BK (24) and the BF16 split's SPLIT_K 3
  // and 4 (16), each with TAIL 0 and 1.
  EXPECT_EQ(rc->violations, 80);
  auto b3 = *from_name("tw3_128x128x64_s2_g8_k3_o3");
  const auto vb = check_shape(b3, Problem{64, 64, 100, "NN", "f32"});
  ASSERT_EQ(vb.size(), 1u);
  EXPECT_NE(
      vb[0].reason.find("K = 100: 2 slices of 64 in splits of 1 run 2 splits, not SPLIT_K = 3"),
      std::string::npos)
      << vb[0].reason;
}

// resolve(): one binary for every layout and alignment (the panels' NT), launched as split_maps
// with the whole block's threads and the ring as dynamic shared memory.
TEST(Tf32x3WgFamily, ResolveGivesTheSplitMapsLaunch) {
  const auto c = probe_config();
  for (const char* layout : {"NN", "NT", "TN", "TT"}) {
    for (const bool vec : {true, false}) {
      const auto in = resolve(c, layout, vec);
      EXPECT_EQ(in.layout, "NT");
      EXPECT_TRUE(in.vec);
      EXPECT_EQ(in.name_expression, "sgemm_tf32x3_wgmma<3,3,8>");
      EXPECT_EQ(in.precision, Precision::fp32_accurate);
      EXPECT_EQ(in.launch.abi, LaunchAbi::split_maps);
      EXPECT_TRUE(in.launch.split_panels);
      EXPECT_FALSE(in.launch.packed);
      EXPECT_EQ(in.launch.block_threads, 384);
      EXPECT_EQ(in.launch.dynamic_smem_bytes, 3 * 64 * 1024 + 1024);
      EXPECT_EQ(in.launch.block_smem_bytes, 3 * 64 * 1024 + 1024 + 1024);
      EXPECT_EQ(in.launch.tile_m, 128);
      EXPECT_EQ(in.launch.tile_n, 128);
      EXPECT_EQ(in.launch.tile_k, 32);
      EXPECT_EQ(in.launch.split_k, 1);
      EXPECT_EQ(in.launch.pad_a, 0);
    }
  }
  auto two = c;
  two.STAGES = 2;
  EXPECT_EQ(resolve(two, "TT", true).launch.dynamic_smem_bytes, 2 * 64 * 1024 + 1024);
  EXPECT_LE(resolve(c, "NN", true).launch.block_smem_bytes, Limits{}.max_dynamic_shared_bytes);
  // The unsplit binary is the one of SPLIT_K 1; every split config runs the split entry, one
  // binary (named by SPLIT_K 2) for all of them, with its own SPLIT_K as the launch's.
  EXPECT_EQ(resolve(c, "NN", true).binary_config, c);
  for (const int s : {2, 3, 4}) {
    auto split = c;
    split.SPLIT_K = s;
    const auto in = resolve(split, "TN", true);
    EXPECT_EQ(in.name_expression, "sgemm_tf32x3_wgmma_splitk<3,3,8>");
    EXPECT_EQ(in.binary_config.SPLIT_K, 2);
    EXPECT_EQ(to_name(in.binary_config), "tw3_128x128x32_s3_g8_k2");
    EXPECT_EQ(in.launch.split_k, s);
    EXPECT_EQ(in.launch.abi, LaunchAbi::split_maps);
    EXPECT_EQ(in.launch.block_threads, 384);
    EXPECT_EQ(in.launch.dynamic_smem_bytes, 3 * 64 * 1024 + 1024);
    EXPECT_EQ(in.layout, "NT");
  }
}

// The worker protocol names the launch; older launch names still read as before, an unknown one
// is refused by name.
TEST(Tf32x3WgFamily, TheWorkerProtocolCarriesTheSplitMapsLaunch) {
  EXPECT_EQ(to_string(LaunchAbi::split_maps), "split_maps");
  EXPECT_EQ(parse_launch_abi("split_maps"), LaunchAbi::split_maps);
  EXPECT_EQ(parse_launch_abi("pointers"), LaunchAbi::pointers);
  EXPECT_EQ(parse_launch_abi("tensor_maps"), LaunchAbi::tensor_maps);
  EXPECT_FALSE(parse_launch_abi("split"));
  nlohmann::json req = {{"family", "tf32x3_wg"},
                        {"launch", "split_maps"},
                        {"tile", {{"BM", 128}, {"BN", 128}, {"BK", 32}, {"smem", 197632}}}};
  const auto t = eval::launch_tile_from_json(req);
  EXPECT_EQ(t.split_maps, 1);
  EXPECT_EQ(t.tma, 0);
  EXPECT_EQ(t.smem_bytes, 197632);
  EXPECT_EQ(t.tail, 0);
  EXPECT_EQ(t.group_m, 1);
  // A tail config's request carries the tail and its block order, from resolve() to the worker.
  auto tail_req = req;
  tail_req["tile"]["tail"] = 1;
  tail_req["tile"]["group_m"] = 8;
  const auto tt = eval::launch_tile_from_json(tail_req);
  EXPECT_EQ(tt.tail, 1);
  EXPECT_EQ(tt.group_m, 8);
  const auto in = resolve(*from_name("tw3_128x128x32_s3_g8_o2_v1"), "NN", true);
  EXPECT_TRUE(in.launch.tail);
  EXPECT_EQ(in.launch.group_m, 8);
  EXPECT_FALSE(resolve(probe_config(), "NN", true).launch.tail);
  // A tail of 2, or a block order of 0, is a bad request on any launch; the FFMA families' tail
  // comes on the pointers and tensor_maps launches
  // (ConfigTail.ATailConfigsRequestReachesTheWorker).
  for (const std::string launch : {"split_maps", "pointers", "tensor_maps"}) {
    auto r = tail_req;
    r["launch"] = launch;
    EXPECT_EQ(eval::launch_tile_from_json(r).tail, 1) << launch;
    r["tile"]["tail"] = 2;
    EXPECT_THROW((void)eval::launch_tile_from_json(r), Error) << launch;
    r["tile"]["tail"] = 1;
    r["tile"]["group_m"] = 0;
    EXPECT_THROW((void)eval::launch_tile_from_json(r), Error) << launch;
  }
  req["launch"] = "tensor_maps";
  EXPECT_EQ(eval::launch_tile_from_json(req).split_maps, 0);
  EXPECT_EQ(eval::launch_tile_from_json(req).tma, 1);
  req["launch"] = "pointers";
  EXPECT_EQ(eval::launch_tile_from_json(req).split_maps, 0);
  req["launch"] = "split_panels";
  try {
    (void)eval::launch_tile_from_json(req);
    ADD_FAILURE() << "an unknown launch was read";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("split_panels"), std::string::npos) << e.what();
  }
}

// A table of one H200 whose shapes' winners are `configs`: the first at 4096^3 TN, the next at
// 1536 x 1536 x 6144 NT (few tiles, where a split config wins).
Table table_with(const std::vector<WarpTileConfig>& configs) {
  Table t;
  t.tool_version = "test";
  t.database = "tw3.db";
  t.generated_utc = "2026-01-01T00:00:00Z";
  t.kernel_template = "sgemm_warptile";
  t.family_hashes = current_family_hashes();
  t.precision = Precision::fp32_accurate;
  TableGpu g;
  g.name = "NVIDIA H200";
  g.cc_major = 9;
  g.sm_count = 132;
  for (size_t i = 0; i < configs.size(); ++i) {
    TableShape s;
    s.problem.M = s.problem.N = i == 0 ? 4096 : 1536;
    s.problem.K = i == 0 ? 4096 : 6144;
    s.problem.layout = i == 0 ? "TN" : "NT";
    s.config = configs[i];
    s.config_name = to_name(configs[i]);
    s.median_ms = 1.2;
    s.cublas_median_ms = 2.6;
    s.ok_trials = 1;
    g.shapes.push_back(s);
  }
  choose_default(g, *from_name(test::kSeed), test::kSeed);
  t.gpus = {g};
  return t;
}

// The export names its launch (split_maps, Launch::abi 2) and kernel file; the dispatch library
// built from it by nvcc instantiates the tile kernel, a split or tail config's split entry and the
// split prepass with no code of the family's own.
TEST(Tf32x3WgFamily, TheExportAndTheDispatchLibraryTakeItsWinner) {
  const auto c = probe_config();
  auto split = c;
  split.SPLIT_K = 4;
  split.STAGES = 2;
  const auto bf16 = *from_name("tw3_128x128x64_s2_g8_o3");
  // A tail config: the split entry, its TAIL in the table's fields (format 11), which the
  // dispatch library reads for its launch plan.
  const auto tail = *from_name("tw3_128x128x32_s2_g8_o1_v1");
  const auto h = render_cpp(table_with({c, split, bf16, tail}));
  EXPECT_NE(h.find("split_maps, (sgemm_tf32x3_wgmma_splitk<6,2,8>)"), std::string::npos) << h;
  EXPECT_NE(h.find("#define SGT_TUNED_TABLE_FORMAT_VERSION 11"), std::string::npos) << h;
  EXPECT_NE(h.find("split_maps, (sgemm_tf32x3_wgmma<3,3,8>)"), std::string::npos) << h;
  EXPECT_NE(h.find("split_maps, (sgemm_tf32x3_wgmma_splitk<3,2,8>)"), std::string::npos) << h;
  EXPECT_NE(h.find("split_maps, (sgemm_bf16x6_wgmma<2,8>)"), std::string::npos) << h;
  EXPECT_NE(h.find("\"sgemm_bf16x6_wgmma.cuh\""), std::string::npos) << h;
  EXPECT_NE(h.find("{2, 384, {197632, 197632, 197632, 197632}, {198656, 198656, 198656, 198656}, "
                   "90, true}"),
            std::string::npos)
      << h;
  const std::string nvcc = SGT_NVCC;
  if (nvcc.empty()) GTEST_SKIP() << "no nvcc in this build";
  test::TempDir dir;
  const auto inc = dir.path() / "include";
  fs::create_directories(inc);
  std::ofstream(inc / "sgemm_tuned_table.hpp", std::ios::binary) << h;
  const fs::path src(SGT_TEST_SOURCE_DIR);
  const auto obj = dir.path() / "dispatch.o";
  const auto r = test::run_shell(
      test::sh_quote(nvcc) +
      " -std=c++17 -gencode arch=compute_90a,code=sm_90a -Werror all-warnings "
      "-Xcompiler=-Wall,-Wextra -c "
      "-DSGT_TUNED_ACCEPT_FP32_ACCURATE -DSGT_TUNED_SM90A=1 -I " +
      test::sh_quote(inc) + " -I " + test::sh_quote(src / "sgemm_tuned" / "include") + " -I " +
      test::sh_quote(src / "sgemm_tuned" / "src") + " -I " +
      test::sh_quote(src / "kernel_templates") + " " +
      test::sh_quote(src / "sgemm_tuned" / "src" / "dispatch.cu") + " -o " + test::sh_quote(obj));
  ASSERT_EQ(r.exit_code, 0) << r.out;
  const auto syms = test::run_shell("nm " + test::sh_quote(obj));
  ASSERT_EQ(syms.exit_code, 0) << syms.out;
  EXPECT_NE(syms.out.find("_Z18sgemm_tf32x3_wgmmaILi3ELi3ELi8EEviiifN10sgt_kernel6TmaMapE"),
            std::string::npos)
      << syms.out;
  EXPECT_NE(syms.out.find("_Z25sgemm_tf32x3_wgmma_splitkILi3ELi2ELi8EEviiifN10sgt_kernel6TmaMapE"),
            std::string::npos)
      << syms.out;
  EXPECT_NE(syms.out.find("sgemm_splitk_reduce"), std::string::npos) << syms.out;
  EXPECT_NE(syms.out.find("tf32x3_split_operand"), std::string::npos) << syms.out;
  EXPECT_NE(syms.out.find("_Z18sgemm_bf16x6_wgmmaILi2ELi8EEviiifN10sgt_kernel6TmaMapE"),
            std::string::npos)
      << syms.out;
  EXPECT_NE(syms.out.find("_Z20bf16x6_split_operandILi3EE"), std::string::npos) << syms.out;
}

}  // namespace
}  // namespace sgt
