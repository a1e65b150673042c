// The FFMA families' wave-aware tail (TAIL 1; launch_tail.h, plan_call): the rules that admit it
// (tail_flag, shape_ffma_tail), its name and binary, and the index simulation of its launch plan,
// which a broken plan fails.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "compiled.hpp"
#include "config.hpp"
#include "family.hpp"
#include "index_sim.hpp"
#include "index_sim_test_util.hpp"
#include "instance.hpp"
#include "problem.hpp"
#include "tune.hpp"
#include "worker_protocol.hpp"

namespace sgt {
namespace {

using sim_test::named;
using sim_test::rule_names;

// One config of each FFMA family: warptile (double-buffered), ws_tma on PACK's panels (the
// mid-size squares' winners on the H200) and warptile_ring.
const std::vector<std::string> kFfma = {"wt_64x128x16_w32x64_wn2_t4x4_n128_mb2_s2_p4_g8_o1",
                                        "wt_64x128x16_w64x32_wn2_t4x4_n128_mb3_s3_p4_g8_o1_x1_m1",
                                        "wr_128x64x16_w32x64_wn2_t4x4_n128_mb1_s3_p4_g8_o1"};

TEST(ConfigTail, TheFfmaFamiliesTakeTailOneOnAnUnsplitLaunch) {
  for (const auto& name : kFfma) {
    auto c = named(name);
    c.TAIL = 1;
    EXPECT_TRUE(check(c).empty()) << name;
    // The name says it (_v1), and reads back as the same config.
    const std::string tail_name = to_name(c);
    EXPECT_NE(tail_name.find("_v1"), std::string::npos) << tail_name;
    const auto back = from_name(tail_name);
    ASSERT_TRUE(back.has_value()) << tail_name;
    EXPECT_EQ(to_name(*back), tail_name);
    EXPECT_EQ(back->TAIL, 1);
    // A launch parameter: the tail config runs its twin's binary, with the tail in its launch.
    const auto twin = named(name);
    for (const char* layout : {"NN", "NT", "TN", "TT"}) {
      const auto t = resolve(c, layout, true);
      const auto z = resolve(twin, layout, true);
      EXPECT_EQ(t.name_expression, z.name_expression) << name << " " << layout;
      EXPECT_EQ(to_name(t.binary_config), to_name(z.binary_config)) << name;
      EXPECT_TRUE(t.launch.tail) << name;
      EXPECT_FALSE(z.launch.tail) << name;
      EXPECT_EQ(t.launch.group_m, c.GROUP_M);
    }
    // The tail splits K itself: SPLIT_K must be 1. TAIL is 0 or 1.
    c.SPLIT_K = 4;
    const auto split = check(c);
    ASSERT_EQ(rule_names(split), std::vector<std::string>{"tail_flag"}) << name;
    EXPECT_NE(split.front().reason.find("SPLIT_K = 4"), std::string::npos);
    c.SPLIT_K = 1;
    c.TAIL = 2;
    EXPECT_EQ(rule_names(check(c)), std::vector<std::string>{"tail_flag"}) << name;
    const KernelFamily& f = family_of(c);
    EXPECT_FALSE(f.impossible_value("TAIL", 1)) << name;
    ASSERT_TRUE(f.impossible_value("TAIL", 2)) << name;
    EXPECT_EQ(f.impossible_value("TAIL", 2)->rfind("rule tail_flag", 0), 0u);
    // The shape rule is each family's, and documented in the registry's union.
    const auto shapes = f.shape_rules();
    EXPECT_NE(std::find(shapes.begin(), shapes.end(), "shape_ffma_tail"), shapes.end()) << name;
  }
}

// A TAIL config's trial request, as the tuner makes it and the worker reads it, in every layout:
// the tail and the block order reach the worker on each FFMA family's launch (pointers for
// warptile and warptile_ring, tensor maps for ws_tma, on PACK's panels too), and the rest of the
// tile is its TAIL 0 twin's. (The worker refused every one of them as a bad launch tile until
// the tail's request check admitted launches other than tf32x3_wg's.)
TEST(ConfigTail, ATailConfigsRequestReachesTheWorker) {
  for (const char* name : {"wt_64x128x16_w32x64_wn2_t4x4_n128_mb2_s2_p4_g8_o1_v1",
                           "wr_128x64x16_w32x64_wn2_t4x4_n128_mb1_s3_p4_g8_o1_v1",
                           "wt_64x128x16_w64x32_wn2_t4x4_n128_mb3_s3_p4_g8_o1_x1_v1_m1",
                           "wt_128x128x32_w64x32_wn2_t8x4_n256_mb1_s4_p4_g8_o3_v1_m1"}) {
    const auto c = from_name(name);
    ASSERT_TRUE(c) << name;
    auto twin = *c;
    twin.TAIL = 0;
    for (const char* layout : {"NN", "NT", "TN", "TT"}) {
      SCOPED_TRACE(std::string(name) + " " + layout);
      eval::Compiled comp;
      comp.config_name = name;
      comp.layout = layout;
      const auto req = tune::make_trial_request(comp, *c);
      const auto got = eval::trial_request_from_json(eval::trial_request_json(req));
      EXPECT_EQ(got.tile.tail, 1);
      EXPECT_EQ(got.tile.group_m, 8);
      EXPECT_EQ(got.tile.split_k, 1);
      comp.config_name = to_name(twin);
      const auto twin_req = eval::trial_request_from_json(
          eval::trial_request_json(tune::make_trial_request(comp, twin)));
      EXPECT_EQ(twin_req.tile.tail, 0);
      EXPECT_EQ(got.launch, twin_req.launch);
      EXPECT_EQ(got.tile.BM, twin_req.tile.BM);
      EXPECT_EQ(got.tile.BN, twin_req.tile.BN);
      EXPECT_EQ(got.tile.smem_bytes, twin_req.tile.smem_bytes);
      EXPECT_EQ(got.tile.tma, twin_req.tile.tma);
    }
  }
}

// A problem of one tile, or of fewer K slices than two tail splits of kTailMinSlices take, has no
// tail on any device: the config would measure its TAIL 0 twin's launch again.
TEST(ConfigTail, TheShapeRuleRefusesProblemsThatNoDeviceGivesATail) {
  for (const auto& name : kFfma) {
    auto c = named(name);
    c.TAIL = 1;
    const auto shape = [&](long long M, long long N, long long K) {
      Problem p;
      p.M = M;
      p.N = N;
      p.K = K;
      p.layout = "TN";
      std::vector<std::string> out;
      for (const auto& r : check_shape(c, p, Limits{}))
        if (r.rule == "shape_ffma_tail") out.push_back(r.rule);
      return out;
    };
    const std::vector<std::string> none, refused{"shape_ffma_tail"};
    EXPECT_EQ(shape(2560, 2560, 2560), none) << name;
    EXPECT_EQ(shape(c.BM, c.BN, 2560), refused) << name;       // one tile
    EXPECT_EQ(shape(c.BM + 1, c.BN, 2560), none) << name;      // two
    EXPECT_EQ(shape(2560, 2560, 7 * c.BK), refused) << name;   // 7 slices
    EXPECT_EQ(shape(2560, 2560, 7 * c.BK + 1), none) << name;  // 8
    // TAIL 0 is never refused by it.
    c.TAIL = 0;
    EXPECT_EQ(shape(c.BM, c.BN, 16), none) << name;
  }
}

TEST(IndexSimTail, TheTailLaunchTakesEveryTileOnceOnEveryGrid) {
  for (const auto& name : kFfma) {
    auto c = named(name);
    c.TAIL = 1;
    const SimIndexing ix;
    int tails = 0;
    for (const auto& g : tail_grids()) {
      const auto r = simulate_tail_launch(c, g, ix);
      EXPECT_TRUE(r.ok()) << name << " " << g.M << "x" << g.N << "x" << g.K << " on " << g.slots
                          << ": " << r.summary();
      tails += ix.plan_tail(c.BM, c.BN, c.BK, c.GROUP_M, g.M, g.N, g.K, g.slots).dims.grid_x > 0;
    }
    EXPECT_GE(tails, 5) << name;  // the grids exercise a tail, not only whole waves
    EXPECT_TRUE(simulate_config(c).ok()) << name << ": " << simulate_config(c).summary();
  }
}

// Broken tail plans, each caught by the replay: a row-major tail under GROUP_M 8 (the last block
// row instead of the last group's last columns), a tail launch one block short, and splits whose
// k ranges are not the sub-problem's.
sgt_kernel::CallTail row_major_tail(int BM, int BN, int BK, int g, long long M, long long N,
                                    long long K, long long slots) {
  auto t = sgt_kernel::plan_tail(BM, BN, BK, g, M, N, K, slots);
  if (t.dims.grid_x == 0) return t;
  const long long grid_m = (M + BM - 1) / BM, grid_n = (N + BN - 1) / BN;
  const long long n = std::min<long long>(t.dims.grid_x, grid_n);
  t.row0 = static_cast<int>((grid_m - 1) * BM);
  t.col0 = static_cast<int>((grid_n - n) * BN);
  t.M = static_cast<int>(M - t.row0);
  t.N = static_cast<int>(N - t.col0);
  t.dims = sgt_kernel::launch_dims(t.M, t.N, K, BM, BN, BK, t.dims.grid_z);
  return t;
}
sgt_kernel::CallTail short_tail(int BM, int BN, int BK, int g, long long M, long long N,
                                long long K, long long slots) {
  auto t = sgt_kernel::plan_tail(BM, BN, BK, g, M, N, K, slots);
  if (t.dims.grid_x > 1) --t.dims.grid_x;
  return t;
}
sgt_kernel::CallTail short_splits(int BM, int BN, int BK, int g, long long M, long long N,
                                  long long K, long long slots) {
  auto t = sgt_kernel::plan_tail(BM, BN, BK, g, M, N, K, slots);
  if (t.dims.grid_z > 1) t.dims.k_chunk -= BK;
  return t;
}

TEST(IndexSimMutation, ABrokenTailPlanIsCaught) {
  auto c = named(kFfma.front());
  c.TAIL = 1;
  for (const auto broken : {&row_major_tail, &short_tail, &short_splits}) {
    SimIndexing ix;
    ix.plan_tail = broken;
    int caught = 0;
    for (const auto& g : tail_grids()) caught += !simulate_tail_launch(c, g, ix).ok();
    EXPECT_GE(caught, 3);
  }
}

}  // namespace
}  // namespace sgt
