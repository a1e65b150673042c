// The split-TF32 wgmma family (tf32x3_wg, tuner/core/families/tf32x3_wg/) through the seams a
// family meets on the CPU: its registration, precision class and hash, its names, each of its
// named rules and the values no config of it may have, its search space under each precision
// class and in `auto`, the instance and launch resolve() gives it (LaunchAbi split_maps), the
// worker protocol's launch name, the export table and the dispatch library built from it by nvcc,
// and its index simulation (the prepass and the epilogue) against broken variants of the kernel's
// index functions.
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
#include "worker_protocol.hpp"

namespace sgt {
namespace {

namespace fs = std::filesystem;

const KernelFamily& tw3() {
  const auto* f = find_family("tf32x3_wg");
  if (!f) throw std::runtime_error("family tf32x3_wg is not registered");
  return *f;
}

// The config of the probe's measurement (docs/experiments/2026-12-04-tf32x3-wgmma.md).
WarpTileConfig probe_config() {
  const auto c = from_name("tw3_128x128x32_s3_g8");
  if (!c) throw std::runtime_error("tw3_128x128x32_s3_g8 is not a name");
  return *c;
}

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
  // A tail on a launch that is not split_maps, or a tail of 2, is a bad request.
  for (const auto& bad : {std::pair<std::string, int>{"pointers", 1}, {"split_maps", 2}}) {
    auto r = tail_req;
    r["launch"] = bad.first;
    r["tile"]["tail"] = bad.second;
    EXPECT_THROW((void)eval::launch_tile_from_json(r), Error) << bad.first << bad.second;
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

// --- The index simulation ----------------------------------------------------------------------

TEST(Tf32x3WgFamily, TheSpacesConfigsSimulateClean) {
  for (const auto& c : enumerate(load_space("tf32x3_wg"), {}, Precision::fp32_accurate).survivors) {
    const auto r = simulate_config(c);
    EXPECT_TRUE(r.ok()) << to_name(c) << ":\n" << r.summary();
  }
  EXPECT_NE(tw3().simulation_scope().find("prepass"), std::string::npos);
  // Every prepass case on its own, and the workspace of odd calls.
  for (const auto& pc : tf32x3_wg::prepass_cases()) {
    const auto r = tf32x3_wg::simulate_prepass(pc);
    EXPECT_TRUE(r.ok()) << tf32x3_wg::describe(pc) << ":\n" << r.summary();
  }
  for (const auto& [M, N, K] :
       {std::tuple{1, 1, 1}, std::tuple{1000, 7, 1001}, std::tuple{5, 3000, 4}}) {
    EXPECT_TRUE(tf32x3_wg::simulate_workspace(M, N, K).ok()) << M << "x" << N << "x" << K;
  }
}

// The K splits of every entry at edge shapes: K not a multiple of 32, fewer slices than SPLIT_K,
// a single k, odd M and N (single-float stores), and the H200 shapes the knob is for.
TEST(Tf32x3WgFamily, ItsSplitsSimulateCleanAtEdgeShapes) {
  for (const int s : {1, 2, 3, 4, 5}) {
    auto c = probe_config();
    c.SPLIT_K = s;
    for (const auto& [M, N] : {std::pair{130, 300}, std::pair{1, 1}, std::pair{129, 257}}) {
      for (const int K : {0, 1, 31, 32, 33, 40, 63, 100, 127, 1000, 1001, 6144}) {
        const auto r = tf32x3_wg::simulate_split(c, M, N, K);
        EXPECT_TRUE(r.ok()) << to_name(c) << " " << M << "x" << N << "x" << K << ":\n"
                            << r.summary();
      }
    }
    // The split grids hold K below SPLIT_K's slices and K % 32 != 0.
    bool fewer = false, ragged = false;
    for (const auto& g : tf32x3_wg::split_grids(c)) {
      fewer = fewer || (g.K + 31) / 32 < s;
      ragged = ragged || g.K % 32 != 0;
    }
    EXPECT_TRUE(ragged) << s;
    if (s > 1) EXPECT_TRUE(fewer) << s;
    EXPECT_TRUE(tf32x3_wg::simulate(c).ok()) << to_name(c);
  }
  // 1536 x 1536 x 6144 at SPLIT_K 2 (288 blocks) and 2560^3 at SPLIT_K 3 (27, 27, 26 slices).
  auto k2 = probe_config();
  k2.SPLIT_K = 2;
  EXPECT_TRUE(tf32x3_wg::simulate_split(k2, 1536, 1536, 6144).ok());
  auto k3 = probe_config();
  k3.SPLIT_K = 3;
  EXPECT_TRUE(tf32x3_wg::simulate_split(k3, 2560, 2560, 2560).ok());
  // A replay too large for the simulation says so rather than passing.
  EXPECT_TRUE(tf32x3_wg::simulate_split(k2, 1 << 14, 1 << 14, 64).has("degenerate_geometry"));
}

// The BF16 split's config (FMA_ORDER 3: BK 64, two stages), built field by field so that the
// simulation is tested whatever the family's rules accept.
WarpTileConfig bf16_config(int split_k) {
  auto c = probe_config();
  c.BK = sgt_kernel::kB6BK;
  c.STAGES = 2;
  c.FMA_ORDER = 3;
  c.SPLIT_K = split_k;
  return c;
}

// How many of a defect kind a report counts: the "(N units in all)" of its detail; 0 if absent.
long long defect_count(const SimReport& r, std::string_view kind) {
  for (const auto& d : r.defects) {
    if (d.kind != kind) continue;
    const auto end = d.detail.find(" in all)");
    const auto open = d.detail.rfind('(', end);
    if (end == std::string::npos || open == std::string::npos) return -1;
    return std::stoll(d.detail.substr(open + 1));
  }
  return 0;
}

TEST(Tf32x3WgFamily, TheBf16SplitsConfigsSimulateClean) {
  for (const int s : {1, 2, 3, 4}) {
    const auto c = bf16_config(s);
    ASSERT_TRUE(tf32x3_wg::bf16_split(c));
    const auto r = tf32x3_wg::simulate(c);
    EXPECT_TRUE(r.ok()) << "SPLIT_K " << s << ":\n" << r.summary();
    EXPECT_TRUE(tf32x3_wg::simulate_tile(c).ok()) << s;
    // The split grids hold K below SPLIT_K's 64-value slices and K % 64 != 0.
    bool fewer = false, ragged = false;
    for (const auto& g : tf32x3_wg::split_grids(c)) {
      fewer = fewer || (g.K + 63) / 64 < s;
      ragged = ragged || g.K % 64 != 0;
    }
    EXPECT_TRUE(ragged) << s;
    if (s > 2) EXPECT_TRUE(fewer) << s;
    for (const auto& [M, N] : {std::pair{130, 300}, std::pair{1, 1}, std::pair{129, 257}}) {
      for (const int K : {0, 1, 31, 32, 63, 64, 65, 100, 127, 128, 129, 1001, 6144}) {
        const auto rs = tf32x3_wg::simulate_split(c, M, N, K);
        EXPECT_TRUE(rs.ok()) << s << " " << M << "x" << N << "x" << K << ":\n" << rs.summary();
      }
    }
  }
  // The BF16 prepass cases: K on both sides of the 8-value rounding, every case clean.
  bool unrounded = false;
  for (const auto& pc : tf32x3_wg::prepass_cases(true)) {
    EXPECT_TRUE(pc.bf16);
    unrounded = unrounded || sgt_kernel::tf32x3_wg_kp(pc.K) != sgt_kernel::bf16x6_kp(pc.K);
    const auto r = tf32x3_wg::simulate_prepass(pc);
    EXPECT_TRUE(r.ok()) << tf32x3_wg::describe(pc) << ":\n" << r.summary();
  }
  EXPECT_TRUE(unrounded);
  for (const auto& [M, N, K] : {std::tuple{1, 1, 1}, std::tuple{1000, 7, 1001},
                                std::tuple{5, 3000, 4}, std::tuple{300, 129, 8}}) {
    const auto r = tf32x3_wg::simulate_workspace(M, N, K, {}, true);
    EXPECT_TRUE(r.ok()) << M << "x" << N << "x" << K << ":\n" << r.summary();
  }
  // The BF16 formats differ from TF32's where the simulation must tell them apart: the TF32
  // functions in the BF16 places are defects (Kp rounded to 4, two panels of floats an operand).
  tf32x3_wg::Indexing tf32_kp;
  tf32_kp.bf16_kp = sgt_kernel::tf32x3_wg_kp;
  EXPECT_TRUE(tf32x3_wg::simulate_workspace(5, 3, 4, tf32_kp, true).has("split_workspace"));
  EXPECT_TRUE(tf32x3_wg::simulate_workspace(5, 3, 4, tf32_kp, false).ok());
  EXPECT_TRUE(tf32x3_wg::simulate(probe_config(), tf32_kp).ok());
  EXPECT_TRUE(tf32x3_wg::simulate_split(bf16_config(1), 1536, 1536, 6144).ok());
  EXPECT_TRUE(tf32x3_wg::simulate_split(bf16_config(3), 2560, 2560, 2560).ok());
}

// Each way the kernel's index functions could go wrong shows as the defect that names it.
namespace broken {
int load_k_off_by_one(int k0, int ty, int i) {
  return k0 + ty + 8 * i + (i == 3 ? 1 : 0);
}
int store_k_doubled(int k0, int tx) {
  return k0 + (tx & ~1);  // two threads on one k, none on the next
}
long long src_transposed(int r, int k, int ldx, bool k_contig) {
  return sgt_kernel::tf32x3_split_src(r, k, ldx, !k_contig);
}
long long dst_short_rows(int r, int k, int kp) {
  return static_cast<long long>(r) * (kp - 1) + k;
}
long long kp_unrounded(long long K) {
  return K;
}
long long panels_overlapping(int p, long long M, long long N, long long K) {
  return p == 3 ? sgt_kernel::tf32x3_wg_panel_offset(2, M, N, K)
                : sgt_kernel::tf32x3_wg_panel_offset(p, M, N, K);
}
int acc_row_one_half(int tid, int acc) {
  return sgt_kernel::tf32x3_wg_acc_row(tid, acc) % 64;  // both warpgroups on the first 64 rows
}
int acc_col_swapped_pair(int tid, int acc) {
  return 8 * (acc / 4) + 2 * (tid % 4) + 1 - acc % 2;
}
int group_row_ignored(int bid, int grid_m, int grid_n, int) {
  return sgt_kernel::block_tile_row(bid, grid_m, grid_n, 1);
}
int first_slice_one_back(int z, int k_chunk) {
  return std::max(0, sgt_kernel::tf32x3_wg_split_first_slice(z, k_chunk) - 1);
}
int slices_one_more(int K, int z, int k_chunk) {
  return sgt_kernel::tf32x3_wg_split_slices(K, z, k_chunk) + 1;
}
int slices_one_fewer(int K, int z, int k_chunk) {
  return sgt_kernel::tf32x3_wg_split_slices(K, z, k_chunk) - 1;
}
int slices_of_unrounded_chunk(int K, int z, int k_chunk) {
  // k_chunk / 32 slices, forgetting a ragged last one.
  const int n = sgt_kernel::tf32x3_wg_split_slices(K, z, k_chunk);
  return n > 1 ? n - 1 : n;
}
int slice_k_half_slices(int first, int kb) {
  return first * 32 + kb * 16;
}
long long partial_planes_overlapping(int z, int M, int N) {
  return static_cast<long long>(z) * M * N - z;
}
long long partial_planes_padded(int z, int M, int N) {
  return static_cast<long long>(z) * M * (N + 1);
}
// The BF16 split's.
long long bf16_kp_to_4(long long K) {
  return (K + 3) / 4 * 4;
}
long long bf16_panels_overlapping(bool b, int j, long long M, long long N, long long K) {
  // B's part 0 on A's part 2.
  return b && j == 0 ? sgt_kernel::bf16x6_panel_offset(false, 2, M, N, K)
                     : sgt_kernel::bf16x6_panel_offset(b, j, M, N, K);
}
long long bf16_parts_swapped(bool b, int j, long long M, long long N, long long K) {
  // B's parts 1 and 2 in each other's place: disjoint, but part 2 not after part 1.
  return sgt_kernel::bf16x6_panel_offset(b, b && j > 0 ? 3 - j : j, M, N, K);
}
long long bf16_workspace_of_floats(long long M, long long N, long long K) {
  return 2 * (M + N) * sgt_kernel::bf16x6_kp(K);  // TF32's two panels an operand
}
// The wave-aware tail's: the last block row's last tiles whatever GROUP_M says (the row-major
// order's tail), and the tail one block column to the left of the grid's last.
sgt_kernel::WaveTail tail_row_major(long long gm, long long gn, int, int sms, long long slices) {
  return sgt_kernel::wave_tail(gm, gn, 1, sms, slices);
}
sgt_kernel::WaveTail tail_shifted_left(long long gm, long long gn, int g, int sms,
                                       long long slices) {
  auto w = sgt_kernel::wave_tail(gm, gn, g, sms, slices);
  if (w.splits > 0 && w.tile_col0 > 0) --w.tile_col0;
  return w;
}
int bf16_map_plane_unshifted(int) {
  return 0;  // part 2 read from part 1's plane
}
int bf16_map_plane_one_part_on(int j) {
  return j;  // part 1 from part 2's plane, part 2 past the map's two planes
}
int bf16_first_slice_one_back(int z, int k_chunk) {
  return std::max(0, sgt_kernel::bf16x6_split_first_slice(z, k_chunk) - 1);
}
int bf16_slices_of_32(int K, int z, int k_chunk) {
  return sgt_kernel::tf32x3_wg_split_slices(K, z, k_chunk);
}
int bf16_slice_k_of_32(int first, int kb) {
  return (first + kb) * 32;
}
}  // namespace broken

TEST(Tf32x3WgFamily, TheSimulationCatchesABrokenIndexFunction) {
  const auto c = probe_config();
  struct Case {
    void (*edit)(tf32x3_wg::Indexing&);
    const char* kind;
  };
  const Case cases[] = {
      {[](tf32x3_wg::Indexing& ix) { ix.load_k = broken::load_k_off_by_one; }, "split_tile_slot"},
      {[](tf32x3_wg::Indexing& ix) { ix.store_k = broken::store_k_doubled; }, "split_panel_hole"},
      {[](tf32x3_wg::Indexing& ix) { ix.src = broken::src_transposed; }, "split_panel_misplaced"},
      {[](tf32x3_wg::Indexing& ix) { ix.dst = broken::dst_short_rows; }, "split_panel_overlap"},
      {[](tf32x3_wg::Indexing& ix) { ix.kp = broken::kp_unrounded; }, "split_workspace"},
      {[](tf32x3_wg::Indexing& ix) { ix.panel_offset = broken::panels_overlapping; },
       "split_workspace"},
      {[](tf32x3_wg::Indexing& ix) { ix.acc_row = broken::acc_row_one_half; }, "c_overlap"},
      {[](tf32x3_wg::Indexing& ix) { ix.acc_col = broken::acc_col_swapped_pair; },
       "wg_acc_misplaced"},
      {[](tf32x3_wg::Indexing& ix) { ix.block_tile_row = broken::group_row_ignored; }, "c_hole"},
  };
  for (const auto& x : cases) {
    tf32x3_wg::Indexing ix;
    EXPECT_TRUE(ix.is_kernels());
    x.edit(ix);
    EXPECT_FALSE(ix.is_kernels());
    const auto r = tf32x3_wg::simulate(c, ix);
    EXPECT_TRUE(r.has(x.kind)) << x.kind << ":\n" << r.summary();
  }
  // The split entry's functions, on a split config; the unsplit config does not run them, except
  // slice_k, the body's (both entries copy slice kb of their first from it).
  auto split = c;
  split.SPLIT_K = 3;
  const Case split_cases[] = {
      {[](tf32x3_wg::Indexing& ix) { ix.split_first_slice = broken::first_slice_one_back; },
       "tma_k_overlap"},
      {[](tf32x3_wg::Indexing& ix) { ix.split_slices = broken::slices_one_more; }, "tma_k_overlap"},
      {[](tf32x3_wg::Indexing& ix) { ix.split_slices = broken::slices_one_fewer; }, "tma_k_hole"},
      {[](tf32x3_wg::Indexing& ix) { ix.split_slices = broken::slices_of_unrounded_chunk; },
       "tma_k_hole"},
      {[](tf32x3_wg::Indexing& ix) { ix.slice_k = broken::slice_k_half_slices; },
       "split_k_misaligned"},
      {[](tf32x3_wg::Indexing& ix) { ix.partial_offset = broken::partial_planes_overlapping; },
       "c_overlap"},
      {[](tf32x3_wg::Indexing& ix) { ix.partial_offset = broken::partial_planes_padded; },
       "split_k_workspace"},
  };
  for (const auto& x : split_cases) {
    tf32x3_wg::Indexing ix;
    x.edit(ix);
    EXPECT_FALSE(ix.is_kernels());
    const auto r = tf32x3_wg::simulate(split, ix);
    EXPECT_TRUE(r.has(x.kind)) << x.kind << ":\n" << r.summary();
    const bool body = ix.slice_k != tf32x3_wg::Indexing{}.slice_k;
    EXPECT_EQ(tf32x3_wg::simulate(c, ix).ok(), !body) << x.kind;
  }
  // The prepass reading past the stored operand (a transposed source on a non-square operand).
  tf32x3_wg::Indexing ix;
  ix.src = broken::src_transposed;
  EXPECT_TRUE(tf32x3_wg::simulate_prepass({5, 70, 70, true}, ix).has("split_read_out_of_matrix"));
  // A launch grid of tiles larger than the kernel's leaves C elements unwritten.
  auto wide = c;
  wide.BN = 256;
  EXPECT_TRUE(tf32x3_wg::simulate_epilogue(wide, 300, 600, true).has("c_hole"));
}

TEST(Tf32x3WgFamily, TheSimulationCatchesABrokenBf16IndexFunction) {
  const auto c = bf16_config(1), split = bf16_config(3);
  struct Case {
    void (*edit)(tf32x3_wg::Indexing&);
    const char* kind;
    bool body;  // run by the unsplit entry too
  };
  const Case cases[] = {
      {[](tf32x3_wg::Indexing& ix) { ix.bf16_kp = broken::bf16_kp_to_4; }, "split_workspace", true},
      {[](tf32x3_wg::Indexing& ix) { ix.bf16_panel_offset = broken::bf16_panels_overlapping; },
       "split_workspace", true},
      {[](tf32x3_wg::Indexing& ix) { ix.bf16_panel_offset = broken::bf16_parts_swapped; },
       "split_workspace", true},
      {[](tf32x3_wg::Indexing& ix) { ix.bf16_workspace_values = broken::bf16_workspace_of_floats; },
       "split_workspace", true},
      {[](tf32x3_wg::Indexing& ix) { ix.bf16_map_plane = broken::bf16_map_plane_unshifted; },
       "tma_copy_misplaced", true},
      {[](tf32x3_wg::Indexing& ix) { ix.bf16_map_plane = broken::bf16_map_plane_one_part_on; },
       "tma_copy_misplaced", true},
      {[](tf32x3_wg::Indexing& ix) { ix.bf16_slice_k = broken::bf16_slice_k_of_32; },
       "split_k_misaligned", true},
      {[](tf32x3_wg::Indexing& ix) {
         ix.bf16_split_first_slice = broken::bf16_first_slice_one_back;
       },
       "tma_k_overlap", false},
      {[](tf32x3_wg::Indexing& ix) { ix.bf16_split_slices = broken::bf16_slices_of_32; },
       "tma_k_overlap", false},
      // The prepass's block and thread indexing is the TF32 prepass's.
      {[](tf32x3_wg::Indexing& ix) { ix.load_k = broken::load_k_off_by_one; }, "split_tile_slot",
       true},
      {[](tf32x3_wg::Indexing& ix) { ix.store_k = broken::store_k_doubled; }, "split_panel_hole",
       true},
      {[](tf32x3_wg::Indexing& ix) { ix.dst = broken::dst_short_rows; }, "split_panel_overlap",
       true},
  };
  for (const auto& x : cases) {
    tf32x3_wg::Indexing ix;
    x.edit(ix);
    EXPECT_FALSE(ix.is_kernels()) << x.kind;
    const auto r = tf32x3_wg::simulate(split, ix);
    EXPECT_GT(defect_count(r, x.kind), 0) << x.kind << ":\n" << r.summary();
    EXPECT_EQ(tf32x3_wg::simulate(c, ix).ok(), !x.body) << x.kind;
    // The BF16 split's own functions leave the TF32 kernel's simulation alone.
    const bool shared = ix.load_k != tf32x3_wg::Indexing{}.load_k ||
                        ix.store_k != tf32x3_wg::Indexing{}.store_k ||
                        ix.dst != tf32x3_wg::Indexing{}.dst;
    EXPECT_EQ(tf32x3_wg::simulate(probe_config(), ix).ok(), !shared) << x.kind;
  }
  // The counts, where the broken function says how many: part 2 from the small map's first plane
  // misplaces every row of both operands' part 2 (130 + 300 rows of Kp = 40 values) and nothing
  // else; 4 on Kp for K = 1 is one defect; slices of 32 from 64-value boxes misalign every other
  // slice of K = 200 (kb 1 and 3) and leave k = 128..199 uncopied.
  tf32x3_wg::Indexing ix;
  ix.bf16_map_plane = broken::bf16_map_plane_unshifted;
  const auto maps = tf32x3_wg::simulate_workspace(130, 300, 40, ix, true);
  EXPECT_EQ(defect_count(maps, "tma_copy_misplaced"), (130 + 300) * 40) << maps.summary();
  EXPECT_EQ(maps.defects.size(), 1u) << maps.summary();
  ix = {};
  ix.bf16_kp = broken::bf16_kp_to_4;
  EXPECT_EQ(defect_count(tf32x3_wg::simulate_workspace(7, 9, 1, ix, true), "split_workspace"), 1);
  EXPECT_TRUE(tf32x3_wg::simulate_workspace(7, 9, 8, ix, true).ok());  // 8 is 8 either way
  ix = {};
  ix.bf16_slice_k = broken::bf16_slice_k_of_32;
  const auto sl = tf32x3_wg::simulate_split(c, 130, 300, 200, ix);
  EXPECT_EQ(defect_count(sl, "split_k_misaligned"), 2) << sl.summary();
  EXPECT_EQ(defect_count(sl, "tma_k_hole"), 200 - 128) << sl.summary();
  // Rows of Kp - 1 in the BF16 prepass: the same overlaps in each of its three panels.
  ix = {};
  ix.dst = broken::dst_short_rows;
  const auto pre = tf32x3_wg::simulate_prepass({33, 70, 70, false, true}, ix);
  EXPECT_GT(defect_count(pre, "split_panel_overlap"), 0) << pre.summary();
  EXPECT_EQ(defect_count(pre, "split_panel_overlap") % 3, 0) << pre.summary();
}

// The wave-aware tail: the space's TAIL configs replay their two launches clean on the tail grids;
// a tail that is not the last blocks of the block order leaves tiles to no launch and gives others
// to both, by count.
TEST(Tf32x3WgFamily, TheWaveAwareTailSimulatesCleanAndABrokenOneIsCaught) {
  auto c = *from_name("tw3_128x128x32_s3_g8_o2_v1");
  ASSERT_EQ(c.TAIL, 1);
  for (const auto& g : tf32x3_wg::tail_grids()) {
    const auto r = tf32x3_wg::simulate_tail(c, g.M, g.N, g.K, g.sm_count);
    EXPECT_TRUE(r.ok()) << g.M << "x" << g.N << "x" << g.K << " on " << g.sm_count << ":\n"
                        << r.summary();
  }
  EXPECT_TRUE(
      tf32x3_wg::simulate_tail(*from_name("tw3_128x128x64_s2_o3_v1"), 2560, 2560, 2560, 132).ok());
  EXPECT_NE(tw3().simulation_scope().find("wave-aware tail"), std::string::npos);
  // 2560^3 on 132 SMs, GROUP_M 8: the first launch's 396 blocks leave block column 19 of block
  // rows 16..19; a row-major tail (block row 19, columns 16..19) takes 3 of those tiles a second
  // time and leaves 3 to none.
  tf32x3_wg::Indexing ix;
  ix.wave_tail = broken::tail_row_major;
  EXPECT_FALSE(ix.is_kernels());
  const auto rm = tf32x3_wg::simulate_tail(c, 2560, 2560, 2560, 132, ix);
  EXPECT_EQ(defect_count(rm, "raster_hole"), 3) << rm.summary();
  EXPECT_EQ(defect_count(rm, "raster_overlap"), 3) << rm.summary();
  EXPECT_FALSE(tf32x3_wg::simulate(c, ix).ok());
  // GROUP_M 1 is row-major: the same tail, clean.
  auto rows = c;
  rows.GROUP_M = 1;
  EXPECT_TRUE(tf32x3_wg::simulate_tail(rows, 2560, 2560, 2560, 132, ix).ok());
  // One block column to the left: not the last columns of the grid, refused as such.
  ix.wave_tail = broken::tail_shifted_left;
  const auto sh = tf32x3_wg::simulate_tail(c, 2560, 2560, 2560, 132, ix);
  EXPECT_GT(defect_count(sh, "raster_out_of_grid"), 0) << sh.summary();
  // A config without a tail is not replayed with one.
  EXPECT_TRUE(tf32x3_wg::simulate(probe_config(), ix).ok());
}

TEST(Tf32x3WgFamily, ItsGeometryIsTheKernels) {
  using namespace sgt_kernel;
  EXPECT_EQ(kWgThreads, 384);
  EXPECT_EQ(kWgStageFloats * 4, 64 * 1024);
  EXPECT_LE(tf32x3_wg_smem_bytes(kWgMaxStages) + tf32x3_wg_static_smem_bytes(kWgMaxStages),
            227 * 1024);
  EXPECT_GT(tf32x3_wg_smem_bytes(kWgMaxStages + 1), 227 * 1024);
  // 2 x 128 x 232 + 128 x 40 registers after setmaxnreg fit the register file.
  EXPECT_LE(kWgConsumers * kWgConsumerRegs + kWgProducers * kWgProducerRegs, 65536);
  EXPECT_EQ(tf32x3_wg_kp(0), 0);
  EXPECT_EQ(tf32x3_wg_kp(1), 4);
  EXPECT_EQ(tf32x3_wg_kp(8), 8);
  EXPECT_EQ(tf32x3_wg_workspace_floats(3, 5, 9), 2 * 8 * 12);
  // The accumulators of thread 0 and of the last consumer thread.
  EXPECT_EQ(tf32x3_wg_acc_row(0, 0), 0);
  EXPECT_EQ(tf32x3_wg_acc_row(0, 2), 8);
  EXPECT_EQ(tf32x3_wg_acc_col(0, 63), 127 - 6);
  EXPECT_EQ(tf32x3_wg_acc_row(255, 63), 64 + 48 + 7 + 8);
  EXPECT_EQ(tf32x3_wg_acc_col(255, 63), 127);
  // The BF16 split: 96 KB stages, two of which fit and three of which do not; rows of 8 values.
  EXPECT_EQ(kB6StageBytes, 96 * 1024);
  EXPECT_EQ(kB6BK * 2, kWgBK * 4);  // the same 128-byte box rows
  EXPECT_LE(bf16x6_smem_bytes(kB6MaxStages) + tf32x3_wg_static_smem_bytes(kB6MaxStages),
            227 * 1024);
  EXPECT_GT(bf16x6_smem_bytes(kB6MaxStages + 1), 227 * 1024);
  EXPECT_EQ(bf16x6_kp(1), 8);
  EXPECT_EQ(bf16x6_kp(8), 8);
  EXPECT_EQ(bf16x6_kp(9), 16);
  EXPECT_EQ(bf16x6_workspace_values(3, 5, 9), 3 * 8 * 16);
  EXPECT_EQ(bf16x6_panel_offset(false, 2, 3, 5, 9), 2 * 3 * 16);
  EXPECT_EQ(bf16x6_panel_offset(true, 1, 3, 5, 9), (9 + 5) * 16);
  EXPECT_EQ(bf16x6_map_plane(0), 0);
  EXPECT_EQ(bf16x6_map_plane(2), 1);
  EXPECT_EQ(bf16x6_slice_k(3, 2), 320);
}

}  // namespace
}  // namespace sgt
