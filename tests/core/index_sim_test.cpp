// The CPU index simulation against the named rules: every survivor must simulate clean in every
// layout and at the edges of the matrix, every structural reject must show a defect, a wide sweep
// pins down where the two may differ, and broken variants of the kernel's index functions (swapped
// in through SimIndexing) must be caught.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <map>
#include <set>
#include <tuple>
#include <string>
#include <vector>

#include "config.hpp"
#include "index_sim.hpp"
#include "space.hpp"

namespace sgt {
namespace {

WarpTileConfig named(const std::string& name) {
  auto c = from_name(name);
  EXPECT_TRUE(c.has_value()) << name;
  return c.value_or(WarpTileConfig{});
}

const std::string kSeed = "wt_128x64x16_w64x32_wn2_t4x4_n128_mb1";

bool is_structural(const std::string& rule) {
  for (const auto& r : rules()) {
    if (r.name == rule) return r.structural;
  }
  ADD_FAILURE() << "check() reported a rule missing from rules(): " << rule;
  return false;
}

std::vector<std::string> structural_violations(const WarpTileConfig& c) {
  std::vector<std::string> out;
  for (const auto& v : check(c)) {
    if (is_structural(v.rule)) out.push_back(v.rule);
  }
  return out;
}

std::string joined(const std::vector<std::string>& v) {
  std::string out;
  for (const auto& s : v) out += (out.empty() ? "" : " ") + s;
  return out;
}

// Calls f for every combination of per-field value lists (kConfigFields order).
template <typename F>
void for_each_combo(const std::vector<std::vector<int>>& values, F&& f) {
  std::vector<size_t> idx(values.size(), 0);
  for (;;) {
    WarpTileConfig c;
    for (size_t i = 0; i < values.size(); ++i) c.*kConfigFields[i].member = values[i][idx[i]];
    f(c);
    size_t i = values.size();
    while (i > 0) {
      --i;
      if (++idx[i] < values[i].size()) break;
      idx[i] = 0;
      if (i == 0) return;
    }
  }
}

// Whether two configs place every accumulator of every thread at the same C element.
bool same_indexing(const WarpTileConfig& a, const WarpTileConfig& b) {
  const auto ga = derive(a), gb = derive(b);
  if (ga.WMITER != gb.WMITER || ga.WNITER != gb.WNITER || ga.TM != gb.TM || ga.TN != gb.TN ||
      a.NUM_THREADS != b.NUM_THREADS) {
    return false;
  }
  for (int tid = 0; tid < a.NUM_THREADS; ++tid) {
    for (int ws = 0; ws < ga.WMITER; ++ws) {
      for (int i = 0; i < ga.TM; ++i) {
        if (sgt_kernel::tile_row(ga, tid, ws, i) != sgt_kernel::tile_row(gb, tid, ws, i)) {
          return false;
        }
      }
    }
    for (int ws = 0; ws < ga.WNITER; ++ws) {
      for (int i = 0; i < ga.TN; ++i) {
        if (sgt_kernel::tile_col(ga, tid, ws, i) != sgt_kernel::tile_col(gb, tid, ws, i)) {
          return false;
        }
      }
    }
  }
  return true;
}

void expect_all_clean(const std::vector<WarpTileConfig>& configs) {
  const auto reports = simulate_configs(configs);
  ASSERT_EQ(reports.size(), configs.size());
  int bad = 0;
  for (size_t i = 0; i < configs.size(); ++i) {
    if (!reports[i].ok() && ++bad <= 5) {
      ADD_FAILURE() << to_name(configs[i]) << ":\n" << reports[i].summary();
    }
  }
  EXPECT_EQ(bad, 0) << "survivors with defects";
}

SimCase layout(bool trans_a, bool trans_b) {
  SimCase sc;
  sc.trans_a = trans_a;
  sc.trans_b = trans_b;
  return sc;
}

const SimCase kLayouts[] = {layout(false, false), layout(false, true), layout(true, false),
                            layout(true, true)};

// Whether the kernel could read this case's whole slices as float4s: where a float4 runs along M
// (A^T) or N (B), the matrix must go on past the tile or end on a multiple of 4 there.
bool vec_legal(const SimCase& sc) {
  return (!sc.trans_a || sc.m_rem % 4 == 0) && (sc.trans_b || sc.n_rem % 4 == 0);
}

// The layout's boundary block with the given remainders, on the float4 instance (vec_loads: with
// operands that allow float4s, else edge loop only) or, with vec_kernel false, the scalar one.
SimCase edge(const SimCase& lay, int m_rem, int n_rem, int k_rem, bool vec_loads,
             bool vec_kernel = true) {
  SimCase sc = lay;
  sc.m_rem = m_rem;
  sc.n_rem = n_rem;
  sc.k_rem = k_rem;
  sc.vec_loads = vec_loads;
  sc.vec_kernel = vec_kernel;
  return sc;
}
// The layout's boundary block on the scalar instance (VEC = false), which the tuner picks for
// operands that refuse float4s.
SimCase scalar_kernel(const SimCase& lay, int m_rem, int n_rem, int k_rem) {
  return edge(lay, m_rem, n_rem, k_rem, false, false);
}

// The ways a block's main-loop loads can go: {vec_kernel, vec_loads}. The float4 instance with
// float4 loads, the float4 instance whose operands refuse them (the edge loop only), the scalar
// instance.
constexpr std::pair<bool, bool> kInstances[] = {{true, true}, {true, false}, {false, false}};

TEST(IndexSim, SeedConfigIsClean) {
  const auto r = simulate_block(named(kSeed));
  EXPECT_TRUE(r.ok()) << r.summary();
}

TEST(IndexSim, EveryLayoutOfTheSeedIsClean) {
  for (const auto& sc : kLayouts) {
    const auto r = simulate_block(named(kSeed), sc);
    EXPECT_TRUE(r.ok()) << describe(sc) << "\n" << r.summary();
  }
  EXPECT_TRUE(simulate_config(named(kSeed)).ok());
}

// Boundary blocks: every remainder of M, N and K the seed's tile can leave, in every layout, on
// the scalar instance, on the float4 instance with operands that refuse float4s and, where the
// kernel could take them, with float4 loads.
TEST(IndexSim, BoundaryBlocksOfTheSeedAreClean) {
  const auto c = named(kSeed);
  const int ms[] = {0, 1, 2, 3, 4, 5, 8, 63, 64, 65, 124, 125, 127, 128};
  const int ns[] = {0, 1, 2, 3, 4, 5, 12, 33, 60, 61, 63, 64};
  int runs = 0, vec_runs = 0, vec_main_runs = 0, scalar_main_runs = 0;
  for (const auto& lay : kLayouts) {
    for (int m : ms) {
      for (int n : ns) {
        for (int k = 0; k <= c.BK; ++k) {
          // Every k with a few (m, n), every (m, n) with a few k.
          if (k > 1 && k < c.BK - 1 && m != 1 && m != 4 && m != 65 && n != 3 && n != 60) continue;
          for (const auto& [vec_kernel, vec] : kInstances) {
            const SimCase sc = edge(lay, m, n, k, vec, vec_kernel);
            if (vec && !vec_legal(sc)) continue;
            const auto r = simulate_block(c, sc);
            ++runs;
            vec_runs += vec;
            const bool main = (m % c.BM != 0 || n % c.BN != 0) && k % c.BK == 0;
            vec_main_runs += vec && main;
            scalar_main_runs += !vec_kernel && main;
            ASSERT_TRUE(r.ok()) << describe(sc) << "\n" << r.summary();
          }
        }
      }
    }
  }
  EXPECT_GT(runs, 3000);
  // Float4 loads clamped at the edge, in the main loop, in every layout.
  EXPECT_GT(vec_runs, 500);
  EXPECT_GT(vec_main_runs, 100);
  // Single-float loads clamped at the edge, at every remainder.
  EXPECT_GT(scalar_main_runs, 500);
}

// The scalar instance (VEC = false) at odd remainders: a float4's worth of elements straddles the
// end of the matrix in M and N, element j read from clamp_mn(col + j); whole slices through the
// main loop (no guard, no alignment needed), partial ones through the edge loop with the same
// clamped pointers. Every layout of the seed is clean.
TEST(IndexSim, ScalarInstanceBoundaryBlocksWithOddRemaindersAreClean) {
  const auto c = named(kSeed);
  const int ms[] = {0, 1, 2, 3, 5, 6, 7, 9, 61, 63, 65, 67, 121, 125, 126, 127};
  const int ns[] = {0, 1, 2, 3, 5, 7, 29, 31, 33, 57, 61, 62, 63};
  int runs = 0;
  for (const auto& lay : kLayouts) {
    for (int m : ms) {
      for (int n : ns) {
        for (int k : {0, 1, 3, 13, 15, 16}) {
          const SimCase sc = scalar_kernel(lay, m, n, k);
          const auto r = simulate_block(c, sc);
          ++runs;
          ASSERT_TRUE(r.ok()) << describe(sc) << "\n" << r.summary();
        }
      }
    }
  }
  EXPECT_EQ(runs, 4 * 16 * 13 * 6);
  // The same blocks' float4 loads would read past the end of the matrix where they run along it.
  EXPECT_TRUE(simulate_block(c, edge(layout(true, false), 65, 33, 0, true)).has("a_out_of_matrix"));
}

// The scalar instance's element j of a pass along m (n) is read at the pointer clamp_mn(col, ext)
// + min(j, clamp_last(col, ext)): exactly element clamp_mn(col + j, ext), the last inside the
// matrix for each element past it, never one before the pointer or past the end.
TEST(IndexSim, ClampLastReadsClampMnOfEachElement) {
  for (int ext = 1; ext <= 40; ++ext) {
    for (int col = 0; col <= 48; col += 4) {
      const int last = sgt_kernel::clamp_last(col, ext);
      const int p = sgt_kernel::clamp_mn(col, ext);
      EXPECT_GE(last, 0);
      EXPECT_LE(last, 3);
      for (int j = 0; j < 4; ++j) {
        EXPECT_EQ(p + std::min(j, last), sgt_kernel::clamp_mn(col + j, ext))
            << "col " << col << " ext " << ext << " j " << j;
      }
    }
  }
  EXPECT_EQ(sgt_kernel::clamp_last(60, 61), 0);
  EXPECT_EQ(sgt_kernel::clamp_last(56, 61), 3);
  EXPECT_EQ(sgt_kernel::clamp_last(64, 61), 0);
  EXPECT_EQ(sgt_kernel::clamp_last(0, 2), 1);
}

// The kernel's condition for float4 loads is needed: where a float4 runs along M (A^T) or N (B)
// and the matrix ends inside one, an unguarded float4 read crosses the end of the matrix. The
// scalar instance (which the tuner picks there) and the float4 one's edge loop are clean.
TEST(IndexSim, Float4LoadsAcrossTheEndOfTheMatrixReadOutsideIt) {
  const auto c = named(kSeed);
  const struct {
    SimCase sc;
    const char* kind;
  } cases[] = {
      {edge(layout(true, false), 65, 0, 0, true), "a_out_of_matrix"},
      {edge(layout(true, true), 127, 33, 0, true), "a_out_of_matrix"},
      {edge(layout(false, false), 0, 33, 0, true), "b_out_of_matrix"},
      {edge(layout(true, false), 64, 61, 0, true), "b_out_of_matrix"},
  };
  for (const auto& [sc, kind] : cases) {
    ASSERT_FALSE(vec_legal(sc)) << describe(sc);
    const auto r = simulate_block(c, sc);
    EXPECT_TRUE(r.has(kind)) << describe(sc) << "\n" << r.summary();
    SimCase edge_only = sc;
    edge_only.vec_loads = false;
    EXPECT_TRUE(simulate_block(c, edge_only).ok()) << describe(edge_only);
    SimCase scalar = edge_only;
    scalar.vec_kernel = false;
    EXPECT_TRUE(simulate_block(c, scalar).ok()) << describe(scalar);
  }
  // Along K nothing is clamped: NT reads float4s at any remainder of M and N.
  EXPECT_TRUE(simulate_block(c, edge(layout(false, true), 65, 33, 0, true)).ok());
}

// Which main-loop loads the kernel takes: float4s where both leading dimensions (the stored row
// lengths) are multiples of 4, and M (N) too where A^T's (B's) float4s run along it.
TEST(IndexSim, KernelVecLoadsFollowsTheLayout) {
  // {trans_a, trans_b, M, N, K, vec}
  const std::tuple<bool, bool, int, int, int, bool> rows[] = {
      {false, false, 8, 8, 8, true},  {false, false, 7, 8, 8, true},  // M is free in NN
      {false, false, 8, 7, 8, false}, {false, false, 8, 8, 7, false},
      {false, true, 7, 7, 8, true},   {false, true, 8, 8, 7, false},  // NT: K alone
      {true, false, 8, 8, 7, true},   {true, false, 7, 8, 8, false},  // TN: M and N
      {true, false, 8, 7, 8, false},  {true, true, 8, 7, 8, true},    // TT: M and K
      {true, true, 7, 8, 8, false},   {true, true, 8, 8, 7, false},
  };
  for (const auto& [ta, tb, m, n, k, vec] : rows) {
    EXPECT_EQ(kernel_vec_loads(ta, tb, m, n, k), vec)
        << describe(layout(ta, tb)) << " " << m << "x" << n << "x" << k;
  }
}

// simulate_grid replays the launch's last block in every layout on the instance the tuner picks
// (kernel_vec_loads); the standard grids reach both instances in every layout, each with a whole
// k-slice through the main loop, and float4 loads only where they are legal.
TEST(IndexSimGrid, GridCasesTakeTheTunersInstance) {
  const auto c = named(kSeed);
  std::set<std::string> seen, main_loop;
  for (const auto& gr : standard_grids(c)) {
    const auto cases = grid_cases(c, gr.M, gr.N, gr.K);
    EXPECT_EQ(cases.size(), 4u) << gr.M << "x" << gr.N << "x" << gr.K;
    for (const auto& sc : cases) {
      EXPECT_EQ(sc.vec_loads, kernel_vec_loads(sc.trans_a, sc.trans_b, gr.M, gr.N, gr.K));
      EXPECT_EQ(sc.vec_kernel, sc.vec_loads) << describe(sc);
      if (sc.vec_loads) {
        EXPECT_TRUE(vec_legal(sc)) << describe(sc);
      }
      EXPECT_EQ(sc.m_rem, gr.M - (gr.M - 1) / c.BM * c.BM) << describe(sc);
      EXPECT_EQ(sc.n_rem, gr.N - (gr.N - 1) / c.BN * c.BN) << describe(sc);
      const std::string label =
          describe(layout(sc.trans_a, sc.trans_b)) + (sc.vec_kernel ? " vec" : " scalar");
      seen.insert(label);
      if (sc.k_rem == 0 || sc.k_rem == c.BK) main_loop.insert(label);
    }
  }
  EXPECT_EQ(seen.size(), 8u);
  EXPECT_EQ(main_loop.size(), 8u);
  for (auto knobs : {std::pair{1, 1}, {8, 2}, {3, 5}, {1, 32}}) {
    auto k = c;
    k.GROUP_M = knobs.first;
    k.SPLIT_K = knobs.second;
    const auto grids = standard_grids(k);
    ASSERT_EQ(grids.size(), 5u);
    // The last grid: odd M, N and K, the scalar instance's main loop at the corner.
    for (const auto& sc : grid_cases(k, grids[4].M, grids[4].N, grids[4].K)) {
      EXPECT_FALSE(sc.vec_kernel) << describe(sc);
      EXPECT_EQ(sc.k_rem, 0) << to_name(k) << " " << describe(sc);
      EXPECT_EQ(sc.m_rem % 4, 3) << describe(sc);
      EXPECT_EQ(sc.n_rem, 1) << describe(sc);
    }
  }
  // 200 x 100 x 40 with BK 16: the last block is 72 x 36, its last whole slice has a partial one
  // after it; float4s everywhere (M, N, K multiples of 4).
  auto cases = grid_cases(c, 200, 100, 40);
  ASSERT_EQ(cases.size(), 4u);
  EXPECT_EQ(describe(cases[2]), "TN edge 72x36 k-");
  // K = 7: no whole slice, the partial one; K is odd, so scalars where A or B^T is read along K.
  cases = grid_cases(c, 200, 100, 7);
  ASSERT_EQ(cases.size(), 4u);
  EXPECT_EQ(describe(cases[0]), "NN edge 72x36 k7 scalar-kernel");
  EXPECT_EQ(describe(cases[2]), "TN edge 72x36 k7");
  // K = 32: the last whole slice ends the matrix.
  EXPECT_EQ(describe(grid_cases(c, 200, 100, 32)[1]), "NT edge 72x36 k16");
  EXPECT_TRUE(simulate_grid(c, 200, 100, 40).ok());
  EXPECT_TRUE(grid_cases(c, 0, 100, 40).empty());
}

// The knobs that change indexing (PAD_A, STAGES, thread tiles read as float4 or not) at the edges.
TEST(IndexSim, BoundaryBlocksOfKnobConfigsAreClean) {
  for (const char* name : {
           "wt_128x64x16_w64x32_wn2_t4x4_n128_mb1_s2_p4",
           "wt_128x64x16_w64x32_wn2_t2x4_n128_mb1_p8",  // TM = 2: scalar As reads
           "wt_64x256x16_w64x32_wn4_t4x4_n256_mb2_s2_p4",
           "wt_128x128x8_w64x64_wn4_t8x4_n128_mb1_p4_g8_k4",
           "wt_64x128x16_w32x64_wn2_t4x8_n128_mb1_s2_p12_g3_k3",
       }) {
    const auto c = named(name);
    ASSERT_TRUE(check(c).empty()) << name << ": " << check(c).front().reason;
    for (const auto& lay : kLayouts) {
      for (int rem : {0, 1, 3, 4, 5, 8}) {
        for (int k_rem : {0, std::min(c.BK, rem + 2)}) {
          for (const auto& [vec_kernel, vec] : kInstances) {
            const SimCase sc =
                edge(lay, rem == 0 ? 0 : std::min(c.BM, c.BM - rem), rem, k_rem, vec, vec_kernel);
            if (vec && !vec_legal(sc)) continue;
            const auto r = simulate_block(c, sc);
            EXPECT_TRUE(r.ok()) << name << " " << describe(sc) << "\n" << r.summary();
          }
        }
      }
    }
    const auto all = simulate_config(c);
    EXPECT_TRUE(all.ok()) << name << "\n" << all.summary();
  }
}

TEST(IndexSim, StandardCasesCoverEveryLayoutWholeAndAtTheEdges) {
  const auto c = named(kSeed);
  const auto cases = standard_cases(c);
  const std::set<std::string> all = {"NN", "NT", "TN", "TT"};
  std::set<std::string> whole, main_vec, edge_only, partial, scalar_main, scalar_partial;
  std::set<std::string> scalar_straddle_m, scalar_straddle_n;
  std::set<int> m_rems, n_rems, k_rems;
  for (const auto& sc : cases) {
    const std::string lay = describe(layout(sc.trans_a, sc.trans_b));
    // Every float4 case is one the kernel could run.
    EXPECT_TRUE(!sc.vec_kernel || !sc.vec_loads || vec_legal(sc)) << describe(sc);
    if (!sc.vec_kernel) {
      // The scalar instance is picked for operands that refuse float4s.
      EXPECT_FALSE(sc.vec_loads) << describe(sc);
      EXPECT_TRUE(sc.m_rem > 0 || sc.n_rem > 0) << describe(sc);
      if (sc.k_rem == 0 || sc.k_rem == c.BK) {
        scalar_main.insert(lay);
        // A float4's worth of elements straddles the end of the matrix: tile-3 and 1.
        if (sc.m_rem == c.BM - 3 && sc.n_rem == 1) scalar_straddle_m.insert(lay);
        if (sc.m_rem == 1 && sc.n_rem == c.BN - 3) scalar_straddle_n.insert(lay);
      } else {
        scalar_partial.insert(lay);
      }
    } else if (sc.m_rem == 0 && sc.n_rem == 0 && sc.k_rem == 0) {
      EXPECT_TRUE(sc.vec_loads) << describe(sc);
      whole.insert(lay);
    } else if (sc.k_rem == 0) {
      // The main loop at the edge of the matrix in M and N: loads clamped.
      EXPECT_TRUE(sc.m_rem > 0 && sc.n_rem > 0) << describe(sc);
      (sc.vec_loads ? main_vec : edge_only).insert(lay);
    } else {
      partial.insert(lay);
    }
    m_rems.insert(sc.m_rem);
    n_rems.insert(sc.n_rem);
    k_rems.insert(sc.k_rem);
  }
  EXPECT_EQ(whole, all);
  EXPECT_EQ(main_vec, all);
  EXPECT_EQ(edge_only, all);
  EXPECT_EQ(partial, all);
  EXPECT_EQ(scalar_main, all);
  EXPECT_EQ(scalar_partial, all);
  EXPECT_EQ(scalar_straddle_m, all);
  EXPECT_EQ(scalar_straddle_n, all);
  // Remainders 1 and tile-1 and a few between, and each dimension also whole at an edge.
  for (const auto& [rems, tile] : {std::pair{m_rems, c.BM}, {n_rems, c.BN}, {k_rems, c.BK}}) {
    EXPECT_TRUE(rems.count(0) && rems.count(1) && rems.count(tile - 1) && rems.count(tile - 3))
        << tile;
  }
  EXPECT_EQ(describe(cases[12]), "NN edge -x33 k15 edge-only");
  EXPECT_EQ(describe(cases[10]), "TN edge 124x4 k-");
  EXPECT_EQ(describe(cases[19]), "NN edge 125x1 k- scalar-kernel");
  EXPECT_EQ(describe(cases[23]), "NT edge 125x1 k16 scalar-kernel");
  EXPECT_EQ(cases.size(), 31u);
  EXPECT_EQ(standard_grids(c).size(), 5u);
  EXPECT_NE(simulate_config_scope().find("NN NT TN TT"), std::string::npos);
  EXPECT_NE(simulate_config_scope().find("clamped"), std::string::npos);
  EXPECT_NE(simulate_config_scope().find("single-float"), std::string::npos);
  EXPECT_NE(simulate_config_scope().find("27 boundary blocks"), std::string::npos);
  EXPECT_NE(simulate_config_scope().find("5 launch grids"), std::string::npos);
}

TEST(IndexSim, RemaindersOutsideTheTileAreDegenerate) {
  const auto c = named(kSeed);
  for (auto [m, n, k] : {std::tuple{129, 0, 0}, {0, 65, 0}, {0, 0, 17}, {-1, 0, 0}, {0, 0, -3}}) {
    SimCase sc;
    sc.m_rem = m;
    sc.n_rem = n;
    sc.k_rem = k;
    const auto r = simulate_block(c, sc);
    EXPECT_TRUE(r.has("degenerate_geometry")) << m << " " << n << " " << k << "\n" << r.summary();
    EXPECT_EQ(r.defects.size(), 1u);
  }
}

TEST(IndexSim, DefaultSpaceSurvivorsAreClean) {
  const auto e = enumerate(load_space("default"));
  ASSERT_GT(e.survivors.size(), 100u);
  // Each survivor's cases include the scalar instance's boundary blocks in every layout.
  for (const auto& c : e.survivors) {
    std::set<std::pair<bool, bool>> scalar_layouts;
    for (const auto& sc : standard_cases(c)) {
      if (!sc.vec_kernel) scalar_layouts.insert({sc.trans_a, sc.trans_b});
    }
    ASSERT_EQ(scalar_layouts.size(), 4u) << to_name(c);
  }
  // Every layout, the boundary blocks and the launch grids of each survivor. (How long that takes
  // is for `space --simulate` to show, not for a unit test on a shared machine to assert.)
  expect_all_clean(e.survivors);
}

TEST(IndexSim, QuickSpaceSurvivorsAreClean) {
  const auto e = enumerate(load_space("quick"));
  ASSERT_FALSE(e.survivors.empty());
  expect_all_clean(e.survivors);
}

// The spaces users tune the shipped suite with (suite, skinny, small, ...): every survivor clean.
TEST(IndexSim, EveryOtherBuiltinSpaceSurvivorIsClean) {
  int spaces = 0;
  for (const auto& name : builtin_space_names()) {
    if (name == "default" || name == "quick") continue;  // the tests above
    SCOPED_TRACE(name);
    const auto e = enumerate(load_space(name));
    ASSERT_FALSE(e.survivors.empty());
    expect_all_clean(e.survivors);
    ++spaces;
  }
  EXPECT_GE(spaces, 3);
}

TEST(IndexSim, SimulateConfigsMatchesOneByOne) {
  auto configs = enumerate(load_space("quick")).survivors;
  for (const char* broken :
       {"wt_96x64x16_w48x32_wn2_t4x4_n128_mb1", "wt_6x64x64_w6x64_wn1_t3x4_n32_mb1",
        "wt_128x64x16_w64x32_wn2_t4x4_n128_mb1_p2"}) {
    configs.push_back(named(broken));
  }
  const auto reports = simulate_configs(configs, 2);
  ASSERT_EQ(reports.size(), configs.size());
  for (size_t i = 0; i < configs.size(); ++i) {
    EXPECT_EQ(reports[i].summary(), simulate_config(configs[i]).summary()) << to_name(configs[i]);
  }
  EXPECT_FALSE(reports.back().ok());
  EXPECT_TRUE(simulate_configs({}).empty());
}

// One hand-made config per structural rule that breaks it (alone where the rules allow), for the
// rules a search space rarely or never rejects.
const std::map<std::string, std::string> kBreaks = {
    {"wmiter_divisibility", "wt_96x64x16_w48x32_wn2_t4x4_n128_mb1"},
    {"positive_values", "wt_128x64x16_w64x32_wn2_t4x4_n128_mb1_g0"},  // parsed, then checked
    {"warp_tiles_cover_block", "wt_64x64x8_w48x16_wn1_t2x4_n128_mb1"},
    {"thread_count", "wt_32x32x8_w32x32_wn1_t4x4_n64_mb1"},
    {"subtile_divisibility", "wt_128x32x8_w128x16_wn4_t2x8_n64_mb1"},
    {"subtile_lane_grid", "wt_96x32x8_w48x32_wn1_t4x8_n64_mb1"},
    {"load_stride_a", "wt_64x128x8_w32x32_wn1_t4x8_n256_mb1"},
    {"load_stride_b", "wt_128x64x12_w64x32_wn2_t4x4_n128_mb1"},
    {"float4_alignment", "wt_6x64x64_w6x64_wn1_t3x4_n32_mb1"},
    {"pad_alignment", "wt_128x64x16_w64x32_wn2_t4x4_n128_mb1_p2"},
    {"stage_c_buffer", "wt_128x256x8_w64x64_wn4_t8x4_n256_mb1_p4_c1"},
    {"tma_slice", "wt_64x128x8_w64x16_wn2_t4x4_n256_mb1_s3_p4_g8_o1_m1"},
    {"tma_transpose", "wt_16x128x16_w16x32_wn1_t4x4_n128_mb2_s3_m1"},
    {"tma_box", "wt_128x256x16_w64x64_wn4_t8x4_n256_mb1_s4_p4_g8_o3_b4_m1"},
    {"tma_warpgroups", "wt_64x64x32_w64x32_wn1_t4x4_n64_mb2_s3_m1"},
};

// Every structural rule must break the kernel: each hand-made example, and every reject of the
// default space (sampled), must show a defect. Otherwise the rule prunes configs the kernel could
// run, or (worse) the rule's reason is not the kernel's.
TEST(IndexSim, StructuralRejectsHaveDefects) {
  for (const auto& rule : rules()) {
    if (!rule.structural) continue;
    const auto it = kBreaks.find(std::string(rule.name));
    ASSERT_NE(it, kBreaks.end()) << "no example breaks the structural rule " << rule.name;
    auto c = from_name(it->second);
    if (!c) {
      // GROUP_M = 0 is not a name; build it.
      c = named(kSeed);
      c->GROUP_M = 0;
    }
    const auto names = structural_violations(*c);
    EXPECT_NE(std::find(names.begin(), names.end(), rule.name), names.end())
        << it->second << " does not break " << rule.name << " but " << joined(names);
    const auto r = simulate_config(*c);
    EXPECT_FALSE(r.ok()) << rule.name << ": " << it->second << " simulates clean";
  }

  const auto space = load_space("default");
  std::map<std::string, std::vector<WarpTileConfig>> by_rule;
  for_each_combo(space.values, [&](const WarpTileConfig& c) {
    for (const auto& v : check(c, space.limits)) {
      if (is_structural(v.rule)) by_rule[v.rule].push_back(c);
    }
  });
  constexpr size_t kSamples = 100;
  size_t sampled = 0;
  for (const auto& [rule, rejects] : by_rule) {
    // Spread the samples over the whole enumeration rather than its first corner.
    const size_t step = std::max<size_t>(1, rejects.size() / kSamples);
    for (size_t i = 0; i < rejects.size(); i += step, ++sampled) {
      const auto r = simulate_config(rejects[i]);
      EXPECT_FALSE(r.ok()) << rule << ": " << to_name(rejects[i]) << " simulates clean";
    }
  }
  EXPECT_GT(sampled, 0u);
}

TEST(IndexSim, NonPositiveValuesAreDegenerate) {
  const auto seed = named(kSeed);
  for (const auto& f : kConfigFields) {
    for (int v : {f.min_value - 1, -1, -128}) {
      auto c = seed;
      c.*f.member = v;
      const auto names = structural_violations(c);
      ASSERT_NE(std::find(names.begin(), names.end(), "positive_values"), names.end())
          << f.name << " = " << v;
      const auto r = simulate_block(c);
      EXPECT_TRUE(r.has("degenerate_geometry")) << f.name << " = " << v << "\n" << r.summary();
    }
  }
}

TEST(IndexSim, Float4AlignmentViolationsHaveDefects) {
  const std::vector<std::string> configs = {
      "wt_128x64x16_w64x32_wn2_t4x2_n128_mb1",  // TN = 2: the epilogue's float4 spills over
      "wt_192x64x6_w64x64_wn2_t8x4_n96_mb1",    // BK = 6: every other rule holds
      "wt_128x64x6_w64x32_wn2_t4x4_n128_mb1",   // BK = 6 in the seed
      "wt_128x60x16_w64x30_wn2_t4x4_n128_mb1",  // BN = 60, WN = 30
      "wt_128x48x16_w64x24_wn2_t4x6_n128_mb1",  // TN = 6
      "wt_64x64x12_w32x32_wn2_t2x2_n128_mb1",   // TN = 2, BK = 12
  };
  for (const auto& n : configs) {
    const auto c = named(n);
    const auto names = structural_violations(c);
    ASSERT_NE(std::find(names.begin(), names.end(), "float4_alignment"), names.end()) << n;
    const auto r = simulate_block(c);
    EXPECT_FALSE(r.ok()) << n;
    EXPECT_FALSE(r.has("degenerate_geometry")) << n << ": the sample should exercise the loops";
  }
}

TEST(IndexSim, Bk6IsTheOnlyBrokenRuleAndTheKernelStillBreaks) {
  // 96 threads over BK/4 = 1 float4 column load 64 rows of A per pass: BM = 192 divides, and
  // 96 threads over 16 float4 columns of B give 6 rows = BK. Only the alignment rule is left.
  const auto c = named("wt_192x64x6_w64x64_wn2_t8x4_n96_mb1");
  EXPECT_EQ(joined(structural_violations(c)), "float4_alignment");
  const auto r = simulate_block(c);
  // Columns 4 and 5 of every A row are never loaded, and k-step 1 starts at column 6.
  EXPECT_TRUE(r.has("as_hole")) << r.summary();
  EXPECT_TRUE(r.has("misaligned_vector")) << r.summary();
}

TEST(IndexSim, Tn2OverlapsNeighboursAndMixesOperands) {
  const auto c = named("wt_128x64x16_w64x32_wn2_t4x2_n128_mb1");
  EXPECT_EQ(joined(structural_violations(c)), "float4_alignment");
  const auto r = simulate_block(c);
  EXPECT_TRUE(r.has("c_overlap")) << r.summary();
  EXPECT_TRUE(r.has("operand_mismatch")) << r.summary();
  EXPECT_TRUE(r.has("misaligned_vector")) << r.summary();
  EXPECT_FALSE(r.has("as_hole"));
  EXPECT_FALSE(r.has("bs_hole"));
}

TEST(IndexSim, WmiterViolationLeavesHolesOrOverlapsInC) {
  // WM*WN = 1536 is 1.5 warp passes of 32*4*4*2 = 1024: WMITER truncates to 1.
  const auto c = named("wt_96x64x16_w48x32_wn2_t4x4_n128_mb1");
  const auto names = structural_violations(c);
  ASSERT_NE(std::find(names.begin(), names.end(), "wmiter_divisibility"), names.end());
  const auto r = simulate_block(c);
  EXPECT_TRUE(r.has("c_hole") || r.has("c_overlap")) << r.summary();
  // The loaders are fine: 32 rows of A per pass divide 96, 8 rows of B per pass divide 16.
  EXPECT_FALSE(r.has("as_hole") || r.has("bs_hole") || r.has("as_overlap")) << r.summary();
}

TEST(IndexSim, LoadStrideViolationLeavesAsEmpty) {
  // 256 threads over BK/4 = 2 float4 columns would load 128 rows per pass: more than BM = 64, so
  // the seed's loop bound skips the A load entirely.
  const auto c = named("wt_64x128x8_w32x32_wn1_t4x8_n256_mb1");
  EXPECT_EQ(joined(structural_violations(c)), "load_stride_a");
  const auto r = simulate_block(c);
  ASSERT_TRUE(r.has("as_hole")) << r.summary();
  for (const auto& d : r.defects) {
    if (d.kind == "as_hole") {
      EXPECT_NE(d.detail.find("512"), std::string::npos) << d.detail;
    }
  }
  EXPECT_FALSE(r.has("bs_hole")) << r.summary();
  EXPECT_FALSE(r.has("c_hole")) << r.summary();
}

TEST(IndexSim, PartialLoadPassLeavesHoles) {
  // The 12x64 B slice is 192 float4s: one pass of 128 threads and a half. The kernel runs whole
  // passes only, so the last 64 float4s (256 elements) of Bs are never loaded.
  const auto c = named("wt_128x64x12_w64x32_wn2_t4x4_n128_mb1");
  EXPECT_EQ(joined(structural_violations(c)), "load_stride_b");
  for (const auto& sc : kLayouts) {
    const auto r = simulate_block(c, sc);
    ASSERT_TRUE(r.has("bs_hole")) << describe(sc) << "\n" << r.summary();
    for (const auto& d : r.defects) {
      if (d.kind == "bs_hole") {
        EXPECT_NE(d.detail.find("(256 elements"), std::string::npos) << d.detail;
      }
    }
    // A's 3 passes are exact.
    EXPECT_FALSE(r.has("as_hole") || r.has("as_overlap")) << describe(sc) << "\n" << r.summary();
  }
}

// BM = 6 breaks only float4_alignment: harmless while A is read along K (NN), fatal when A^T is
// read along M as float4s (6 is one float4 and a half).
TEST(IndexSim, Bm6BreaksOnlyTheTransposedALayouts) {
  const auto c = named("wt_6x64x64_w6x64_wn1_t3x4_n32_mb1");
  ASSERT_EQ(joined(structural_violations(c)), "float4_alignment");
  EXPECT_TRUE(simulate_block(c, layout(false, false)).ok());
  EXPECT_TRUE(simulate_block(c, layout(false, true)).ok());
  for (const auto& sc : {layout(true, false), layout(true, true)}) {
    const auto r = simulate_block(c, sc);
    EXPECT_TRUE(r.has("as_hole")) << describe(sc) << "\n" << r.summary();
    EXPECT_TRUE(r.has("a_out_of_tile")) << describe(sc) << "\n" << r.summary();
  }
  const auto all = simulate_config(c);
  ASSERT_FALSE(all.ok());
  // The merged report names the case each defect was first seen in.
  EXPECT_EQ(all.defects.front().detail.rfind("[T", 0), 0u) << all.summary();
}

// PAD_A = 2 misaligns every As row but the first. With TM = 2 the compute loop reads As element by
// element, so only the layouts that store A^T into As as float4s break.
TEST(IndexSim, PadA2MisalignsTheFloat4AccessesOfAs) {
  const auto scalar = named("wt_128x64x16_w64x32_wn2_t2x4_n128_mb1_p2");
  ASSERT_EQ(joined(structural_violations(scalar)), "pad_alignment");
  EXPECT_TRUE(simulate_block(scalar, layout(false, false)).ok());
  EXPECT_TRUE(simulate_block(scalar, layout(false, true)).ok());
  for (const auto& sc : {layout(true, false), layout(true, true)}) {
    const auto r = simulate_block(scalar, sc);
    ASSERT_TRUE(r.has("misaligned_vector")) << describe(sc) << "\n" << r.summary();
    EXPECT_NE(r.summary().find("stores a float4 to As"), std::string::npos) << r.summary();
    // Everything else is in place: only the alignment is wrong.
    EXPECT_EQ(r.defects.size(), 1u) << r.summary();
  }
  EXPECT_TRUE(simulate_config(scalar).has("misaligned_vector"));
  // With TM = 4 the compute loop's float4 reads of As break even in NN.
  const auto vector = named("wt_128x64x16_w64x32_wn2_t4x4_n128_mb1_p2");
  const auto r = simulate_block(vector, layout(false, false));
  ASSERT_TRUE(r.has("misaligned_vector")) << r.summary();
  EXPECT_NE(r.summary().find("reads a float4 from As"), std::string::npos) << r.summary();
  // PAD_A = 4 is fine everywhere.
  EXPECT_TRUE(simulate_config(named("wt_128x64x16_w64x32_wn2_t4x4_n128_mb1_p4")).ok());
}

// On the last, partial k-slice the slots past K must hold zeros: a loader that leaves them holds
// the previous slice's data, which the compute loop would add into C.
TEST(IndexSim, KTailMustBeZeroFilled) {
  // A_PASSES = 0: As is never written at all.
  const auto c = named("wt_64x128x8_w32x32_wn1_t4x8_n256_mb1");
  SimCase whole;
  const auto r0 = simulate_block(c, whole);
  EXPECT_TRUE(r0.has("as_hole"));
  EXPECT_FALSE(r0.has("k_tail_not_zeroed")) << "a whole slice has no tail\n" << r0.summary();
  SimCase tail;
  tail.k_rem = 3;
  const auto r = simulate_block(c, tail);
  ASSERT_TRUE(r.has("k_tail_not_zeroed")) << r.summary();
  for (const auto& d : r.defects) {
    if (d.kind == "k_tail_not_zeroed") {
      EXPECT_NE(d.detail.find("stale data of an earlier slice"), std::string::npos) << d.detail;
    }
  }
  // The real loader zero-fills: every k_rem of the seed is clean (BoundaryBlocksOfTheSeedAreClean)
  // and no tail defect appears in the boundary cases of the default space.
}

TEST(IndexSim, ReportsEachKindOnceWithExampleAndCount) {
  const auto r = simulate_block(named("wt_128x60x16_w64x30_wn2_t4x4_n128_mb1"));
  ASSERT_FALSE(r.ok());
  std::set<std::string> seen;
  const auto& kinds = sim_defect_kinds();
  size_t last = 0;
  for (const auto& d : r.defects) {
    EXPECT_TRUE(seen.insert(d.kind).second) << "reported twice: " << d.kind;
    const auto pos = std::find(kinds.begin(), kinds.end(), d.kind);
    ASSERT_NE(pos, kinds.end()) << "undocumented kind " << d.kind;
    const size_t at = static_cast<size_t>(pos - kinds.begin());
    EXPECT_GE(at, last) << "defects out of order";
    last = at;
    EXPECT_NE(d.detail.find("in all"), std::string::npos) << d.detail;
    EXPECT_TRUE(d.kind == "degenerate_geometry" || d.detail.find("thread") != std::string::npos ||
                d.detail.find('[') != std::string::npos)
        << d.detail;
  }
}

TEST(IndexSim, AbsurdOrZeroStrideGeometriesReturnPromptly) {
  const auto seed = named(kSeed);
  auto huge = seed;
  huge.BM = 1 << 20;
  huge.WM = 1 << 20;
  auto threads = seed;
  threads.NUM_THREADS = 1 << 16;
  auto no_lanes = seed;  // TN > WSUBN: LANES_N = 0
  no_lanes.TN = 32;
  auto wide_warp = seed;  // WN > BN: WARPS_N = 0
  wide_warp.WN = 128;
  auto no_float4 = seed;  // BK = 2: not one whole float4 in a row of the A slice
  no_float4.BK = 2;
  auto overflow = seed;
  overflow.WM = 1 << 19;
  overflow.WN = 1 << 19;
  for (const auto& c : {huge, threads, no_lanes, wide_warp, no_float4, overflow}) {
    // Refused before any loop runs: a simulation that tried would not end within ctest's timeout.
    const auto r = simulate_block(c);
    EXPECT_TRUE(r.has("degenerate_geometry")) << to_name(c) << "\n" << r.summary();
    EXPECT_EQ(r.defects.size(), 1u) << to_name(c) << "\n" << r.summary();
    const auto all = simulate_config(c);
    EXPECT_TRUE(all.has("degenerate_geometry")) << to_name(c) << "\n" << all.summary();
    EXPECT_EQ(all.defects.size(), 1u) << to_name(c) << "\n" << all.summary();
  }
  // A deep slice (the seed with BK = 1024: 256 A passes) is no problem, only slow on a GPU.
  auto deep = seed;
  deep.BK = 1024;
  const auto r = simulate_config(deep);
  EXPECT_TRUE(r.ok()) << r.summary();
}

// A wide sweep, with non-power-of-two values, partial warps and float4-breaking sizes, compared
// both ways. Rules that pass must mean a clean kernel. A clean kernel is expected to pass the
// rules too, except for two classes where the rules are deliberately stricter than the index
// arithmetic; each is recognised by an exact predicate so that any other disagreement fails.
TEST(IndexSim, WideSweepRulesAndSimulationAgree) {
  const std::vector<std::vector<int>> values = {
      {16, 32, 48, 64},       // BM
      {8, 16, 24, 32, 64},    // BN
      {4, 6, 8},              // BK
      {8, 16, 24, 32, 64},    // WM
      {4, 8, 16, 24, 32},     // WN
      {1, 2, 3},              // WNITER
      {1, 2, 3, 4},           // TM
      {2, 4, 8},              // TN
      {32, 48, 64, 96, 128},  // NUM_THREADS
      {1},                    // MIN_BLOCKS
  };
  long long total = 0, both_ok = 0, partial_warp = 0, oversized_warp_tile = 0, unexplained = 0;
  long long rules_ok_sim_bad = 0;
  std::map<std::string, long long> rejects_with_defects;
  for_each_combo(values, [&](const WarpTileConfig& c) {
    ++total;
    const auto names = structural_violations(c);
    // A valid config must be clean in every layout and at the edges; a reject only needs one
    // defect, usually found in the first layout already.
    auto r = names.empty() ? simulate_config(c) : simulate_block(c);
    if (!names.empty() && r.ok()) r = simulate_config(c);
    if (names.empty()) {
      if (!r.ok() && ++rules_ok_sim_bad <= 5) {
        ADD_FAILURE() << to_name(c) << " passes the rules but:\n" << r.summary();
      }
      if (r.ok()) ++both_ok;
      return;
    }
    if (!r.ok()) {
      for (const auto& n : names) ++rejects_with_defects[n];
      return;
    }
    // The kernel's static_assert(thread_count) refuses a trailing partial warp, even where its
    // lanes happen to cover the rows the full warps leave.
    if (c.NUM_THREADS % 32 != 0 &&
        std::all_of(names.begin(), names.end(), [](const std::string& n) {
          return n == "warp_tiles_cover_block" || n == "thread_count";
        })) {
      ++partial_warp;
      return;
    }
    // WM > BM with a single warp row only acts through WMITER and WSUBM: the same kernel as the
    // config whose warp tile is the block's height, which the rules accept. Pruning the duplicate
    // spelling keeps the search from timing one kernel twice.
    if (c.WM > c.BM) {
      auto canonical = c;
      canonical.WM = c.BM;
      if (structural_violations(canonical).empty() && same_indexing(c, canonical)) {
        ++oversized_warp_tile;
        return;
      }
    }
    if (++unexplained <= 10) {
      ADD_FAILURE() << to_name(c) << " simulates clean but breaks " << joined(names)
                    << ": a rule is stricter than the kernel needs";
    }
  });
  EXPECT_EQ(rules_ok_sim_bad, 0);
  EXPECT_EQ(unexplained, 0);
  // The sweep must actually reach valid configs and rejects of every structural rule but the
  // knobs' (KnobSweepRulesAndSimulationAgree).
  EXPECT_GT(both_ok, 100);
  // (The TMA rules: TmaSweepRulesAndSimulationAgree.)
  for (const auto& rule : rules()) {
    if (rule.structural && rule.name != "positive_values" && rule.name != "pad_alignment" &&
        rule.name != "stage_c_buffer" && rule.name.rfind("tma_", 0) != 0) {
      EXPECT_GT(rejects_with_defects[std::string(rule.name)], 0) << rule.name;
    }
  }
  RecordProperty("combinations", std::to_string(total));
  RecordProperty("partial_warp", std::to_string(partial_warp));
  RecordProperty("oversized_warp_tile", std::to_string(oversized_warp_tile));
}

// The knobs over a few tile configs (one with scalar As reads): the structural rules and the
// simulation of every layout, edge and launch grid must agree exactly.
TEST(IndexSim, KnobSweepRulesAndSimulationAgree) {
  long long valid = 0, rejected = 0;
  for (const char* base :
       {"wt_128x64x16_w64x32_wn2_t4x4_n128_mb1", "wt_128x64x16_w64x32_wn2_t2x4_n128_mb1",
        "wt_64x256x16_w64x32_wn4_t4x4_n256_mb2", "wt_256x128x8_w128x64_wn4_t8x4_n128_mb1"}) {
    for (int stages : {1, 2, 3}) {
      for (int pad : {0, 1, 2, 4, 6, 8}) {
        for (int group : {1, 3, 8}) {
          for (int split : {1, 2, 5}) {
            auto c = named(base);
            c.STAGES = stages;
            c.PAD_A = pad;
            c.GROUP_M = group;
            c.SPLIT_K = split;
            // The staged epilogue where the split leaves the tiles whole and where it does not.
            c.STAGE_C = split == 2 ? 1 : 0;
            const auto names = structural_violations(c);
            const auto r = simulate_config(c);
            if (names.empty()) {
              ++valid;
              EXPECT_TRUE(r.ok()) << to_name(c) << " passes the rules but:\n" << r.summary();
            } else {
              ++rejected;
              EXPECT_EQ(joined(names), "pad_alignment") << to_name(c);
              EXPECT_TRUE(r.has("misaligned_vector")) << to_name(c) << "\n" << r.summary();
            }
          }
        }
      }
    }
  }
  EXPECT_GT(valid, 100);
  EXPECT_GT(rejected, 100);
}

// --- Broken index functions ------------------------------------------------------------------
// The simulation replays warptile_geometry.h. A change there that breaks the kernel must show up
// as a defect: each test swaps one function for a plausible mistake.

int slice_k_ignoring_trans(bool, bool is_a, int row, int col) {
  return sgt_kernel::slice_k(false, is_a, row, col);
}
int slice_mn_ignoring_trans(bool, bool is_a, int row, int col) {
  return sgt_kernel::slice_mn(false, is_a, row, col);
}

TEST(IndexSimMutation, IgnoringTheTransposeIsCaughtInTheTransposedLayoutsOnly) {
  SimIndexing ix;
  ix.slice_k = slice_k_ignoring_trans;
  ix.slice_mn = slice_mn_ignoring_trans;
  const auto c = named(kSeed);
  EXPECT_TRUE(simulate_block_with(c, layout(false, false), ix).ok());
  for (const auto& sc : {layout(true, false), layout(false, true), layout(true, true)}) {
    const auto r = simulate_block_with(c, sc, ix);
    EXPECT_FALSE(r.ok()) << describe(sc);
    EXPECT_TRUE(r.has("as_misplaced") || r.has("bs_misplaced") || r.has("as_out_of_tile") ||
                r.has("bs_out_of_tile"))
        << describe(sc) << "\n"
        << r.summary();
  }
}

// Every FMA_ORDER updates each accumulator once per k-step, the serpentine orders included.
TEST(IndexSim, EveryFmaOrderCoversTheThreadTileOnce) {
  for (const char* tile :
       {"wt_128x256x8_w64x64_wn4_t8x4_n256_mb1_s2_p4_g8",
        "wt_128x128x16_w64x64_wn2_t4x4_n128_mb1_s2_p4_g8", "wt_64x64x8_w32x32_wn1_t4x4_n128_mb1"}) {
    for (int order = 0; order <= 3; ++order) {
      auto c = named(tile);
      c.FMA_ORDER = order;
      const auto r = simulate_block(c);
      EXPECT_TRUE(r.ok()) << tile << " o" << order << "\n" << r.summary();
    }
  }
}

// A serpentine order that turns back one step too early: the last column of every other row is
// updated twice and its first never.
sgt_kernel::FmaStep fma_step_off_by_one(const sgt_kernel::Geometry& g, int order, int s) {
  auto f = sgt_kernel::fma_step(g, order, s);
  const int cols = g.WNITER * g.TN;
  if (order == 2 && f.i % 2 == 1) f.j = std::min(f.j + 1, cols - 1);
  return f;
}

TEST(IndexSimMutation, AnFmaOrderThatSkipsAnAccumulatorIsCaught) {
  SimIndexing ix;
  ix.fma_step = fma_step_off_by_one;
  auto c = named("wt_128x256x8_w64x64_wn4_t8x4_n256_mb1_s2_p4_g8_o2");
  const auto r = simulate_block_with(c, {}, ix);
  EXPECT_TRUE(r.has("fma_step_coverage")) << r.summary();
  c.FMA_ORDER = 3;  // the mutation leaves the other orders alone
  EXPECT_TRUE(simulate_block_with(c, {}, ix).ok()) << simulate_block_with(c, {}, ix).summary();
}

// An order whose last step runs one row past the thread tile.
sgt_kernel::FmaStep fma_step_past_the_tile(const sgt_kernel::Geometry& g, int order, int s) {
  auto f = sgt_kernel::fma_step(g, order, s);
  if (s == g.ACCUMULATORS - 1) f.i = g.WMITER * g.TM;
  return f;
}

TEST(IndexSimMutation, AnFmaStepOutsideTheThreadTileIsCaught) {
  SimIndexing ix;
  ix.fma_step = fma_step_past_the_tile;
  const auto r =
      simulate_block_with(named("wt_128x256x8_w64x64_wn4_t8x4_n256_mb1_s2_p4_g8_o3"), {}, ix);
  ASSERT_TRUE(r.has("fma_step_coverage")) << r.summary();
  EXPECT_NE(r.summary().find("outside the 8 x 16 tile"), std::string::npos) << r.summary();
}

int load_row_ignoring_pass(const sgt_kernel::Geometry& g, int cols, int tid, int) {
  return sgt_kernel::load_row(g, cols, tid, 0);
}

TEST(IndexSimMutation, ALoaderThatRepeatsItsFirstPassIsCaught) {
  SimIndexing ix;
  ix.load_row = load_row_ignoring_pass;
  for (const auto& sc : kLayouts) {
    const auto r = simulate_block_with(named(kSeed), sc, ix);
    EXPECT_TRUE(r.has("as_hole") && r.has("as_overlap")) << describe(sc) << "\n" << r.summary();
  }
}

// The seed's last k (15) stored as k 14: slot 15 keeps the previous slice's data.
int slice_k_clamped(bool trans, bool is_a, int row, int col) {
  return std::min(sgt_kernel::slice_k(trans, is_a, row, col), 14);
}

TEST(IndexSimMutation, AStaleKTailIsCaught) {
  SimIndexing ix;
  ix.slice_k = slice_k_clamped;
  SimCase sc;
  sc.k_rem = 13;
  const auto r = simulate_block_with(named(kSeed), sc, ix);
  EXPECT_TRUE(r.has("k_tail_not_zeroed")) << r.summary();
  EXPECT_TRUE(r.has("as_hole") && r.has("bs_hole")) << r.summary();
}

// A compute loop that reads the pad instead of the tile: As column tile_row + PAD_A.
int as_index_shifted(const sgt_kernel::Geometry& g, int k, int m) {
  return sgt_kernel::as_index(g, k, m) + g.PAD_A;
}

TEST(IndexSimMutation, ReadingOrWritingThePadIsCaught) {
  SimIndexing ix;
  ix.as_index = as_index_shifted;
  const auto r = simulate_block_with(named("wt_128x64x16_w64x32_wn2_t4x4_n128_mb1_p4"), {}, ix);
  EXPECT_TRUE(r.has("as_pad_written")) << r.summary();
  EXPECT_TRUE(r.has("as_misplaced")) << r.summary();
  EXPECT_TRUE(r.has("as_pad_read")) << r.summary();
}

// Bs indexed as if it were never padded: with PAD_B the stores and reads land in the wrong rows,
// in every layout (the B^T ones, which the pad is for, included).
int bs_index_unpadded(const sgt_kernel::Geometry& g, int k, int n) {
  return k * g.BN + n;
}

// PAD_B = 2 breaks pad_alignment, and the simulation sees why: Bs rows no longer start 16-byte
// aligned, so the float4 accesses to them are misaligned.
TEST(IndexSim, MisalignedPadBIsADefect) {
  const auto c = named("wt_128x64x16_w64x32_wn2_t4x4_n128_mb1_b2");
  EXPECT_EQ(joined(structural_violations(c)), "pad_alignment");
  EXPECT_FALSE(simulate_config(c).ok());
  EXPECT_TRUE(simulate_config(named("wt_128x64x16_w64x32_wn2_t4x4_n128_mb1_b4")).ok());
}

TEST(IndexSimMutation, BsIndexThatIgnoresPadBIsCaught) {
  SimIndexing ix;
  ix.bs_index = bs_index_unpadded;
  const auto padded = named("wt_128x64x16_w64x32_wn2_t4x4_n128_mb1_p4_b4");
  ASSERT_EQ(padded.PAD_B, 4);
  EXPECT_EQ(sgt::derive(padded).BS_LD, 64 + 4);
  for (const bool trans_b : {false, true}) {
    SimCase sc;
    sc.trans_b = trans_b;
    const auto r = simulate_block_with(padded, sc, ix);
    EXPECT_TRUE(r.has("bs_misplaced")) << trans_b << ": " << r.summary();
    // The kernel's own bs_index is right, and the mutation is harmless where there is no pad.
    EXPECT_TRUE(simulate_block(padded, sc).ok()) << trans_b;
    EXPECT_TRUE(simulate_block_with(named(kSeed), sc, ix).ok()) << trans_b;
  }
}

// The last group of block rows treated as a whole group.
int block_tile_row_whole_groups(int bid, int, int grid_n, int group_m) {
  const int per_group = group_m * grid_n;
  return bid / per_group * group_m + bid % per_group % group_m;
}
int block_tile_col_whole_groups(int bid, int, int grid_n, int group_m) {
  return bid % (group_m * grid_n) / group_m;
}

TEST(IndexSimMutation, ARasterThatForgetsThePartialGroupIsCaught) {
  SimIndexing ix;
  ix.block_tile_row = block_tile_row_whole_groups;
  ix.block_tile_col = block_tile_col_whole_groups;
  auto c = named(kSeed);
  c.GROUP_M = 3;
  // 6 block rows: whole groups, the mistake is invisible.
  EXPECT_TRUE(simulate_grid_with(c, 6 * 128, 5 * 64, 64, ix).ok());
  // 7 block rows: the last group has one row.
  const auto r = simulate_grid_with(c, 7 * 128 - 5, 5 * 64 - 1, 64, ix);
  EXPECT_TRUE(r.has("raster_out_of_grid")) << r.summary();
  EXPECT_TRUE(r.has("raster_hole")) << r.summary();
}

sgt_kernel::LaunchDims unrounded_chunk(long long M, long long N, long long K, int BM, int BN,
                                       int BK, int splits) {
  auto d = sgt_kernel::launch_dims(M, N, K, BM, BN, BK, splits);
  if (d.grid_z > 1) {
    d.k_chunk = static_cast<int>((K + splits - 1) / splits);  // not whole BK slices
    d.grid_z = static_cast<int>((K + d.k_chunk - 1) / d.k_chunk);
    d.workspace_floats = d.grid_z * M * N;
  }
  return d;
}
sgt_kernel::LaunchDims every_split(long long M, long long N, long long K, int BM, int BN, int BK,
                                   int splits) {
  auto d = sgt_kernel::launch_dims(M, N, K, BM, BN, BK, splits);
  if (splits > 1) {
    d.k_chunk = sgt_kernel::split_k_chunk(static_cast<int>(K), BK, splits);
    d.grid_z = splits;  // even those past K
    d.workspace_floats = d.grid_z * M * N;
  }
  return d;
}
sgt_kernel::LaunchDims floor_splits(long long M, long long N, long long K, int BM, int BN, int BK,
                                    int splits) {
  auto d = sgt_kernel::launch_dims(M, N, K, BM, BN, BK, splits);
  if (d.grid_z > 1) d.grid_z = static_cast<int>(K / d.k_chunk);  // drops a short last split
  return d;
}
sgt_kernel::LaunchDims one_workspace(long long M, long long N, long long K, int BM, int BN, int BK,
                                     int splits) {
  auto d = sgt_kernel::launch_dims(M, N, K, BM, BN, BK, splits);
  d.workspace_floats = M * N;
  return d;
}

TEST(IndexSimMutation, SplitKMistakesAreCaught) {
  auto c = named(kSeed);
  c.SPLIT_K = 4;
  const std::pair<sgt_kernel::LaunchDims (*)(long long, long long, long long, int, int, int, int),
                  const char*>
      mutations[] = {{unrounded_chunk, "split_k_misaligned"},
                     {every_split, "split_k_empty"},
                     {floor_splits, "split_k_hole"},
                     {one_workspace, "split_k_workspace"}};
  for (const auto& [fn, kind] : mutations) {
    SimIndexing ix;
    ix.launch_dims = fn;
    // K = 3 slices and a bit: 4 splits of one slice each, the last one short; with every_split
    // a fifth... none, but 4 splits of 16 over K = 35 leave the fourth empty.
    bool caught = false;
    for (int K : {3 * 16 + 5, 35, 2 * 16 + 1}) {
      const auto r = simulate_grid_with(c, 200, 100, K, ix);
      caught = caught || r.has(kind);
    }
    EXPECT_TRUE(caught) << kind;
  }
}

// --- Clamped loads at the edge ---------------------------------------------------------------
// The main loop reads edge blocks unguarded, loads past the matrix in M or N moved back inside it
// by clamp_mn / clamp_mn_vec. Broken clamps must show up.

// One past the end: the last element plus one.
int clamp_one_past(int mn, int ext) {
  return mn < ext ? mn : ext;
}
// The scalar clamp where a float4 needs a whole aligned one: starts at the last element.
int clamp_vec_as_scalar(int mn, int ext) {
  return sgt_kernel::clamp_mn(mn, ext);
}
// Clamps too early: the last element (float4) inside the matrix is read from its neighbour.
int clamp_too_early(int mn, int ext) {
  return std::min(mn, ext - 2);
}
int clamp_vec_too_early(int mn, int ext) {
  return std::min(mn, ext - 8);
}

// Boundary blocks of every layout with whole slices: on the float4 instance with float4 loads (the
// main loop) and without (the edge loop), at remainders that are multiples of 4; on the scalar
// instance at remainders one past a multiple of 4 (a float4's worth of elements straddling the
// end of the matrix with one inside), with float4s starting past the end.
std::vector<SimCase> main_loop_edges(const WarpTileConfig& c) {
  std::vector<SimCase> out;
  for (const auto& lay : kLayouts) {
    for (const bool vec : {false, true}) {
      out.push_back(edge(lay, c.BM - 4, c.BN - 8, 0, vec));
      out.push_back(edge(lay, 4, 4, c.BK, vec));
    }
    out.push_back(scalar_kernel(lay, c.BM - 7, c.BN - 7, 0));
    out.push_back(scalar_kernel(lay, 5, 9, c.BK));
  }
  return out;
}

// Whether the kernel's main loop runs for the case's operands, and so clamps its pointers.
bool clamps(const SimCase& sc) {
  return !sc.vec_kernel || sc.vec_loads;
}

// The block of `sc` reads outside the matrix through A exactly when `a`, through B when `b`.
void expect_reads_outside(const SimReport& r, const SimCase& sc, bool a, bool b) {
  EXPECT_EQ(r.has("a_out_of_matrix"), a) << describe(sc) << "\n" << r.summary();
  EXPECT_EQ(r.has("b_out_of_matrix"), b) << describe(sc) << "\n" << r.summary();
}

TEST(IndexSimMutation, AClampOnePastTheEndReadsOutsideTheMatrix) {
  SimIndexing ix;
  ix.clamp_mn = clamp_one_past;
  const auto c = named(kSeed);
  for (const auto& sc : main_loop_edges(c)) {
    const auto r = simulate_block_with(c, sc, ix);
    // With float4 loads clamp_mn moves A's rows in NN and NT and B^T's in NT and TT; the scalar
    // instance moves every pass with it (rows, or start columns along M and N); without float4
    // loads the float4 instance clamps nothing (the edge loop's guard reads nothing outside).
    const bool a = clamps(sc) && (!sc.vec_kernel || !sc.trans_a);
    const bool b = clamps(sc) && (!sc.vec_kernel || sc.trans_b);
    expect_reads_outside(r, sc, a, b);
  }
  // Inside the matrix nothing is clamped: whole tiles are clean.
  for (const auto& sc : kLayouts) {
    EXPECT_TRUE(simulate_block_with(c, sc, ix).ok()) << describe(sc);
    EXPECT_TRUE(simulate_block_with(c, scalar_kernel(sc, 0, 0, 0), ix).ok()) << describe(sc);
  }
}

TEST(IndexSimMutation, AScalarClampOnTheFloat4PathIsCaught) {
  SimIndexing ix;
  ix.clamp_mn_vec = clamp_vec_as_scalar;
  const auto c = named(kSeed);
  for (const auto& sc : main_loop_edges(c)) {
    const auto r = simulate_block_with(c, sc, ix);
    // Only float4s along M (A^T) or N (B) use clamp_mn_vec, in the main loop of the float4
    // instance.
    if (!sc.vec_kernel || !sc.vec_loads || (!sc.trans_a && sc.trans_b)) {
      EXPECT_TRUE(r.ok()) << describe(sc) << "\n" << r.summary();
      continue;
    }
    EXPECT_TRUE(r.has("misaligned_vector")) << describe(sc) << "\n" << r.summary();
    EXPECT_TRUE(r.has(sc.trans_a ? "a_out_of_matrix" : "b_out_of_matrix")) << describe(sc) << "\n"
                                                                           << r.summary();
  }
}

TEST(IndexSimMutation, AClampThatMovesElementsInsideTheMatrixIsCaught) {
  const auto c = named(kSeed);
  for (const bool vec_mutation : {false, true}) {
    SimIndexing ix;
    if (vec_mutation) {
      ix.clamp_mn_vec = clamp_vec_too_early;
    } else {
      ix.clamp_mn = clamp_too_early;
    }
    for (const auto& sc : main_loop_edges(c)) {
      const auto r = simulate_block_with(c, sc, ix);
      // With 4 left in M and N there is no other float4 inside the matrix to move to.
      if (vec_mutation && sc.m_rem == 4) continue;
      // The float4 clamp acts on float4s along M (A^T) or N (B), the other on rows along M (A) or
      // N (B^T) on the float4 instance (TN uses no clamp_mn, NT none of clamp_mn_vec), and on
      // every pass on the scalar one, which never uses clamp_mn_vec.
      const bool tn = sc.trans_a && !sc.trans_b, nt = !sc.trans_a && sc.trans_b;
      const bool used = vec_mutation ? sc.vec_kernel && sc.vec_loads && !nt
                                     : !sc.vec_kernel || (sc.vec_loads && !tn);
      if (!used) {
        EXPECT_TRUE(r.ok()) << describe(sc) << "\n" << r.summary();
        continue;
      }
      // Every read stays inside the matrix and the slice: only the data is wrong, and it reaches
      // C elements inside the matrix.
      EXPECT_TRUE(r.has("operand_mismatch")) << describe(sc) << "\n" << r.summary();
      EXPECT_FALSE(r.has("a_out_of_matrix") || r.has("b_out_of_matrix")) << r.summary();
      EXPECT_NE(r.summary().find("read from a clamped position"), std::string::npos) << r.summary();
    }
  }
  // The edge loop reads a partial slice through the same clamped pointers, its guard on the
  // unclamped coordinates: it catches it too, on the float4 instance (except in TN, which has no
  // rows along M or N to clamp) and on the scalar one in every layout (the last element inside
  // the matrix, at 60 of 61 and 32 of 33, read from its neighbour).
  SimIndexing ix;
  ix.clamp_mn = clamp_too_early;
  for (const auto& lay : kLayouts) {
    auto r = simulate_block_with(c, edge(lay, 60, 32, 5, true), ix);
    const bool tn = lay.trans_a && !lay.trans_b;
    EXPECT_EQ(r.has("operand_mismatch"), !tn) << describe(lay) << "\n" << r.summary();
    const SimCase sc = scalar_kernel(lay, 61, 33, 5);
    r = simulate_block_with(c, sc, ix);
    EXPECT_TRUE(r.has("operand_mismatch")) << describe(sc) << "\n" << r.summary();
    EXPECT_FALSE(r.has("a_out_of_matrix") || r.has("b_out_of_matrix")) << r.summary();
  }
  // Whole tiles never clamp.
  for (const auto& sc : kLayouts) {
    EXPECT_TRUE(simulate_block_with(c, sc, ix).ok()) << describe(sc);
    EXPECT_TRUE(simulate_block_with(c, scalar_kernel(sc, 0, 0, 0), ix).ok()) << describe(sc);
  }
}

// The real clamps put other elements' data only where no C element inside the matrix reads it:
// with the clamp removed, the edge blocks read outside the matrix; with it, they are clean.
int no_clamp(int mn, int) {
  return mn;
}

TEST(IndexSimMutation, WithoutTheClampEdgeBlocksReadOutsideTheMatrix) {
  SimIndexing ix;
  ix.clamp_mn = no_clamp;
  ix.clamp_mn_vec = no_clamp;
  const auto c = named(kSeed);
  for (const auto& sc : main_loop_edges(c)) {
    const auto r = simulate_block_with(c, sc, ix);
    // The float4 instance without float4 loads guards every slice and clamps nothing.
    EXPECT_EQ(r.has("a_out_of_matrix") && r.has("b_out_of_matrix"), clamps(sc))
        << describe(sc) << "\n"
        << r.summary();
    EXPECT_TRUE(simulate_block(c, sc).ok()) << describe(sc);
  }
  // The partial slice is guarded: the clamp does not matter there, on either instance.
  for (const auto& lay : kLayouts) {
    EXPECT_TRUE(simulate_block_with(c, edge(lay, 61, 33, 5, false), ix).ok()) << describe(lay);
    EXPECT_TRUE(simulate_block_with(c, scalar_kernel(lay, 61, 33, 5), ix).ok()) << describe(lay);
  }
}

// A grid's last block takes the instance the tuner picks, and a broken clamp shows there.
TEST(IndexSimMutation, ABrokenClampShowsInTheLastBlockOfAGrid) {
  const auto c = named(kSeed);
  SimIndexing ix;
  ix.clamp_mn_vec = clamp_vec_as_scalar;
  // M, N, K multiples of 4: float4 loads, and the scalar clamp misaligns them.
  auto r = simulate_grid_with(c, 200, 100, 40, ix);
  EXPECT_TRUE(r.has("misaligned_vector")) << r.summary();
  EXPECT_NE(r.summary().find("[TN edge 72x36 k-]"), std::string::npos) << r.summary();
  // K odd: the scalar instance where A or B^T is read along K, and TN reads float4s.
  r = simulate_grid_with(c, 200, 100, 41, ix);
  EXPECT_TRUE(r.has("misaligned_vector")) << r.summary();
  // M and N odd: the scalar instance in every layout, clamp_mn_vec unused.
  EXPECT_TRUE(simulate_grid_with(c, 201, 101, 40, ix).ok());
  ix = SimIndexing{};
  ix.clamp_mn = clamp_too_early;
  r = simulate_grid_with(c, 201, 101, 40, ix);
  EXPECT_TRUE(r.has("operand_mismatch")) << r.summary();
  EXPECT_NE(r.summary().find("scalar-kernel]"), std::string::npos) << r.summary();
}

// --- The scalar instance's loads ---------------------------------------------------------------
// VEC = false reads a pass along M (N) from clamp_mn(col) + min(j, clamp_last(col)): element j
// from clamp_mn(col + j). Broken variants of clamp_last, or the float4 clamp in its place, must
// show up.

int clamp_last_all_four(int, int) {
  return sgt_kernel::kVec - 1;
}
int clamp_last_first_only(int, int) {
  return 0;
}

// The scalar instance's boundary blocks with whole slices, a float4's worth of elements
// straddling the end of the matrix in M and N (and others starting past it).
std::vector<SimCase> scalar_edges(const WarpTileConfig& c) {
  std::vector<SimCase> out;
  for (const auto& lay : kLayouts) {
    out.push_back(scalar_kernel(lay, c.BM - 3, 1, 0));
    out.push_back(scalar_kernel(lay, 1, c.BN - 3, c.BK));
    out.push_back(scalar_kernel(lay, 66, 31, 0));
  }
  return out;
}

TEST(IndexSimMutation, AClampLastThatReadsAllFourReadsPastTheEnd) {
  SimIndexing ix;
  ix.clamp_last = clamp_last_all_four;
  const auto c = named(kSeed);
  for (const auto& sc : scalar_edges(c)) {
    const auto r = simulate_block_with(c, sc, ix);
    // clamp_last only acts where the stored columns run along M (A^T) or N (B).
    expect_reads_outside(r, sc, sc.trans_a, !sc.trans_b);
    EXPECT_EQ(r.ok(), !sc.trans_a && sc.trans_b) << describe(sc) << "\n" << r.summary();
  }
  // Whole tiles read all four anyway; the float4 instance never calls it; the edge loop reads a
  // partial slice element by element under its guard.
  for (const auto& lay : kLayouts) {
    EXPECT_TRUE(simulate_block_with(c, scalar_kernel(lay, 0, 0, 0), ix).ok()) << describe(lay);
    EXPECT_TRUE(simulate_block_with(c, scalar_kernel(lay, 61, 33, 5), ix).ok()) << describe(lay);
  }
  for (const auto& sc : main_loop_edges(c)) {
    if (sc.vec_kernel) EXPECT_TRUE(simulate_block_with(c, sc, ix).ok()) << describe(sc);
  }
  // The last block of an odd grid runs the scalar instance: caught there too.
  const auto r = simulate_grid_with(c, 201, 101, 40, ix);
  EXPECT_TRUE(r.has("a_out_of_matrix") && r.has("b_out_of_matrix")) << r.summary();
}

TEST(IndexSimMutation, AClampLastOfZeroFeedsTheFirstElementToAllFour) {
  SimIndexing ix;
  ix.clamp_last = clamp_last_first_only;
  const auto c = named(kSeed);
  // Elements 1..3 of every pass along M (N) read from element 0, inside the matrix: whole tiles
  // and boundary blocks alike, every read inside the matrix, the data of another m (n) reaching
  // C elements inside it. Where the matrix ends one element into the block, 0 is the right
  // answer (the real clamp_last gives it too) and nothing is wrong; NT reads both operands along
  // K and never calls it.
  std::vector<SimCase> cases = scalar_edges(c);
  for (const auto& lay : kLayouts) cases.push_back(scalar_kernel(lay, 0, 0, 0));
  int caught = 0;
  for (const auto& sc : cases) {
    const auto r = simulate_block_with(c, sc, ix);
    const bool along_mn = (sc.trans_a && sc.m_rem != 1) || (!sc.trans_b && sc.n_rem != 1);
    caught += along_mn;
    EXPECT_EQ(r.has("operand_mismatch"), along_mn) << describe(sc) << "\n" << r.summary();
    EXPECT_EQ(r.ok(), !along_mn) << describe(sc) << "\n" << r.summary();
    EXPECT_FALSE(r.has("a_out_of_matrix") || r.has("b_out_of_matrix")) << r.summary();
    if (along_mn) {
      EXPECT_NE(r.summary().find("read from a clamped position"), std::string::npos) << r.summary();
    }
  }
  EXPECT_EQ(caught, 10);
  // The float4 instance never calls it; the edge loop does not use it.
  for (const auto& sc : main_loop_edges(c)) {
    if (sc.vec_kernel) EXPECT_TRUE(simulate_block_with(c, sc, ix).ok()) << describe(sc);
  }
  for (const auto& lay : kLayouts) {
    EXPECT_TRUE(simulate_block_with(c, scalar_kernel(lay, 61, 33, 5), ix).ok()) << describe(lay);
  }
}

// clamp_mn_vec in place of clamp_mn on the scalar instance: it moves a pass that lies wholly past
// the end of the matrix to ext - 4 instead of ext - 1. Where the matrix ends less than a float4
// into the block (remainder 1..3) that is before the block's first m (n): outside the matrix in
// the first block of the row (column), and caught. Where it ends later, ext - 4 is inside the
// matrix and the pass's four elements all lie past its end, so they reach only C elements the
// epilogue never stores: harmless, and the simulation does not report it.
TEST(IndexSimMutation, TheFloat4ClampOnTheScalarInstanceIsCaughtBelowOneFloat4) {
  SimIndexing ix;
  ix.clamp_mn = sgt_kernel::clamp_mn_vec;
  const auto c = named(kSeed);
  for (const auto& lay : kLayouts) {
    for (int rem : {1, 2, 3}) {
      for (int k : {0, c.BK}) {
        const SimCase sc = scalar_kernel(lay, rem, rem, k);
        const auto r = simulate_block_with(c, sc, ix);
        EXPECT_TRUE(r.has("a_out_of_matrix") && r.has("b_out_of_matrix")) << describe(sc) << "\n"
                                                                          << r.summary();
        EXPECT_TRUE(simulate_block(c, sc).ok()) << describe(sc);
      }
      // Only M, or only N, that short.
      auto r = simulate_block_with(c, scalar_kernel(lay, rem, 0, 0), ix);
      EXPECT_TRUE(r.has("a_out_of_matrix") && !r.has("b_out_of_matrix")) << r.summary();
      r = simulate_block_with(c, scalar_kernel(lay, 0, rem, 0), ix);
      EXPECT_TRUE(!r.has("a_out_of_matrix") && r.has("b_out_of_matrix")) << r.summary();
    }
    for (const auto& [m, n] : {std::pair{5, 6}, {61, 33}, {127, 63}, {66, 7}}) {
      const SimCase sc = scalar_kernel(lay, m, n, 0);
      EXPECT_TRUE(simulate_block_with(c, sc, ix).ok()) << describe(sc);
    }
  }
  // The odd grids' last blocks leave at least 4 in M and N; a grid whose last block leaves 3 in N
  // catches it.
  EXPECT_TRUE(simulate_grid_with(c, 201, 101, 40, ix).ok());
  const auto r = simulate_grid_with(c, 201, 67, 41, ix);
  EXPECT_TRUE(r.has("b_out_of_matrix")) << r.summary();
}

// --- Block order and split-K -------------------------------------------------------------------

TEST(IndexSimGrid, BlockOrderIsABijectionForEveryGroupSize) {
  for (int group : {1, 2, 3, 8}) {
    auto c = named(kSeed);
    c.GROUP_M = group;
    for (int gm : {1, 2, 3, 5, 7, 9, 17}) {
      for (int gn : {1, 3, 5, 11}) {
        // Partial last tiles: the grid still counts them.
        const auto r = simulate_grid(c, gm * c.BM - 7, gn * c.BN - 1, 64);
        EXPECT_TRUE(r.ok()) << "GROUP_M " << group << " grid " << gm << "x" << gn << "\n"
                            << r.summary();
      }
    }
  }
  // GROUP_M = 1 is plain row-major order.
  for (int bid = 0; bid < 35; ++bid) {
    EXPECT_EQ(sgt_kernel::block_tile_row(bid, 7, 5, 1), bid / 5);
    EXPECT_EQ(sgt_kernel::block_tile_col(bid, 7, 5, 1), bid % 5);
  }
  // GROUP_M = 3 walks three block rows column by column.
  EXPECT_EQ(sgt_kernel::block_tile_row(1, 7, 5, 3), 1);
  EXPECT_EQ(sgt_kernel::block_tile_col(1, 7, 5, 3), 0);
  EXPECT_EQ(sgt_kernel::block_tile_row(3, 7, 5, 3), 0);
  EXPECT_EQ(sgt_kernel::block_tile_col(3, 7, 5, 3), 1);
}

TEST(IndexSimGrid, SplitKCoversEveryKOnceWithWholeSlices) {
  for (int splits : {1, 2, 3, 4, 7, 16}) {
    auto c = named(kSeed);
    c.SPLIT_K = splits;
    for (int K : {1, 15, 16, 17, 49, 64, 1607}) {
      const auto r = simulate_grid(c, 300, 100, K);
      EXPECT_TRUE(r.ok()) << "SPLIT_K " << splits << " K " << K << "\n" << r.summary();
      const auto d = sgt_kernel::launch_dims(300, 100, K, c.BM, c.BN, c.BK, splits);
      EXPECT_LE(d.grid_z, splits);
      EXPECT_GE(d.grid_z, 1);
      if (d.grid_z > 1) {
        EXPECT_EQ(d.k_chunk % c.BK, 0);
      }
    }
  }
}

TEST(IndexSimGrid, StandardGridsOfTheKnobsAreClean) {
  for (int group : {1, 3, 8, 64}) {
    for (int splits : {1, 2, 5, 32}) {
      auto c = named(kSeed);
      c.GROUP_M = group;
      c.SPLIT_K = splits;
      const auto grids = standard_grids(c);
      EXPECT_EQ(grids.size(), 5u);
      for (const auto& gr : grids) {
        const auto r = simulate_grid(c, gr.M, gr.N, gr.K);
        EXPECT_TRUE(r.ok()) << to_name(c) << " " << gr.M << "x" << gr.N << "x" << gr.K << "\n"
                            << r.summary();
      }
    }
  }
}

TEST(IndexSimGrid, EmptyOrAbsurdProblemsAreDegenerate) {
  const auto c = named(kSeed);
  for (auto [m, n, k] : {std::tuple{0, 64, 64}, {64, 0, 64}, {64, 64, 0}, {-1, 64, 64}}) {
    const auto r = simulate_grid(c, m, n, k);
    EXPECT_TRUE(r.has("degenerate_geometry")) << m << "x" << n << "x" << k;
    EXPECT_EQ(r.defects.size(), 1u);
  }
  auto bad = c;
  bad.GROUP_M = 0;
  EXPECT_TRUE(simulate_grid(bad, 64, 64, 64).has("degenerate_geometry"));
}

// --- PACK: the TN float4 instance on panels
// -------------------------------------------------------

// A PACK config is simulated as it runs: its TN float4 instance on panels, at remainders that are
// not multiples of 4 (a float4 running into the padding, one clamped back to the last float4 that
// starts inside the matrix), whatever the problem's layout.
TEST(IndexSim, PackRunsItsTnInstanceOnPanelsAtOddRemainders) {
  const auto c = named("wt_64x128x16_w32x64_wn1_t4x4_n128_mb2_s2_p4_g8_k3_o1_x1");
  const auto cases = standard_cases(c);
  ASSERT_FALSE(cases.empty());
  bool odd_m = false, odd_n = false;
  for (const auto& sc : cases) {
    EXPECT_TRUE(sc.panel && sc.trans_a && !sc.trans_b && sc.vec_kernel && sc.vec_loads)
        << describe(sc);
    odd_m = odd_m || sc.m_rem % 4 != 0;
    odd_n = odd_n || sc.n_rem % 4 != 0;
  }
  EXPECT_TRUE(odd_m && odd_n);
  EXPECT_TRUE(simulate_config(c).ok()) << simulate_config(c).summary();
  for (const auto& layout_free : grid_cases(c, 1023, 777, 513)) {
    EXPECT_TRUE(layout_free.panel && layout_free.trans_a && !layout_free.trans_b)
        << describe(layout_free);
  }
  EXPECT_TRUE(simulate_grid(c, 1023, 777, 513).ok()) << simulate_grid(c, 1023, 777, 513).summary();
}

// Without the panel's padding the same float4s read past the matrix: the panel is what makes them
// legal, and the simulation knows the difference.
TEST(IndexSim, PanelFloat4sPastTheMatrixNeedThePanel) {
  const auto c = named("wt_64x128x16_w32x64_wn1_t4x4_n128_mb2_s2_p4_g8_o1_x1");
  SimCase sc{true, false, 61, 125, 0, true, true, true};
  EXPECT_TRUE(simulate_block(c, sc).ok()) << simulate_block(c, sc).summary();
  sc.panel = false;
  const auto r = simulate_block(c, sc);
  EXPECT_TRUE(r.has("a_out_of_matrix")) << r.summary();
  EXPECT_TRUE(r.has("b_out_of_matrix")) << r.summary();
}

// What the worker and the dispatch library pack, and where: only the operands the TN float4
// instance cannot read in place, both panels in one workspace, each 16-byte aligned.
TEST(PackPlan, PacksWhatTheTnInstanceCannotReadInPlace) {
  const float* A = reinterpret_cast<const float*>(0x1000);
  const float* B = reinterpret_cast<const float*>(0x2000);
  // TN, aligned, extents multiples of 4: nothing to do.
  auto tn = sgt_kernel::plan_pack(true, false, 64, 128, 33, A, true, 64, B, true, 128);
  EXPECT_EQ(tn.floats, 0);
  EXPECT_EQ(tn.a.src, nullptr);
  EXPECT_EQ(tn.b.src, nullptr);
  // NN: A (M x K) is transposed, B (K x N) read in place.
  auto nn = sgt_kernel::plan_pack(false, false, 1023, 128, 513, A, true, 513, B, true, 128);
  EXPECT_EQ(nn.a.src, A);
  EXPECT_EQ(nn.a.rows_major, 1);
  EXPECT_EQ(nn.a.ext, 1023);
  EXPECT_EQ(nn.a.panel_ld, 1024);
  EXPECT_EQ(nn.b.src, nullptr);
  EXPECT_EQ(nn.floats, 513LL * 1024);
  EXPECT_EQ(nn.grid_x, 1024 / sgt_kernel::kPackTile);
  EXPECT_EQ(nn.grid_y, (513 + sgt_kernel::kPackTile - 1) / sgt_kernel::kPackTile);
  // NT with an odd N: both, B^T (N x K) transposed into a panel padded to 780.
  auto nt = sgt_kernel::plan_pack(false, true, 1023, 777, 513, A, true, 513, B, true, 513);
  EXPECT_EQ(nt.b.src, B);
  EXPECT_EQ(nt.b.rows_major, 1);
  EXPECT_EQ(nt.b.panel_ld, 780);
  EXPECT_EQ(nt.b_offset, 513LL * 1024);
  EXPECT_EQ(nt.floats, 513LL * 1024 + 513LL * 780);
  // TN but B misaligned: B alone is copied, not transposed.
  auto tn_b = sgt_kernel::plan_pack(true, false, 64, 128, 8, A, true, 64, B, false, 128);
  EXPECT_EQ(tn_b.a.src, nullptr);
  EXPECT_EQ(tn_b.b.rows_major, 0);
  EXPECT_EQ(tn_b.b_offset, 0);
  EXPECT_EQ(tn_b.floats, 8LL * 128);

  std::vector<float> work(static_cast<size_t>(nt.floats));
  const float* a = A;
  const float* b = B;
  int lda = 513, ldb = 513;
  sgt_kernel::bind_pack(nt, work.data(), a, lda, b, ldb);
  EXPECT_EQ(a, work.data());
  EXPECT_EQ(b, work.data() + nt.b_offset);
  EXPECT_EQ(nt.a.panel, a);
  EXPECT_EQ(nt.b.panel, b);
  EXPECT_EQ(lda, 1024);
  EXPECT_EQ(ldb, 780);
  EXPECT_EQ(nt.b_offset % sgt_kernel::kVec, 0);
  // An operand read in place keeps its pointer and leading dimension.
  a = A;
  lda = 513;
  b = B;
  ldb = 128;
  sgt_kernel::bind_pack(nn, work.data(), a, lda, b, ldb);
  EXPECT_EQ(a, work.data());
  EXPECT_EQ(b, B);
  EXPECT_EQ(ldb, 128);
}

// A panel clamp that moves a float4 past the matrix back to ext - 4 (clamp_mn_vec's rule, right
// only for extents that are multiples of 4) misaligns it.
TEST(IndexSimMutation, PanelClampThatIgnoresOddExtentsIsCaught) {
  SimIndexing ix;
  ix.clamp_mn_panel = sgt_kernel::clamp_mn_vec;
  const auto c = named("wt_64x128x16_w32x64_wn1_t4x4_n128_mb2_s2_p4_g8_o1_x1");
  bool caught = false;
  for (const auto& sc : standard_cases(c)) {
    caught = caught || simulate_block_with(c, sc, ix).has("misaligned_vector");
  }
  EXPECT_TRUE(caught);
  EXPECT_TRUE(simulate_config(c).ok());
}

}  // namespace

// --- The staged epilogue -----------------------------------------------------------------------

TEST(StagedEpilogue, BufferIsWhicheverOfAsAndBsHoldsEveryWarpsBlock) {
  // 8 warps x (32 / 4 lanes along N) rows x 64 columns = 4096 floats.
  auto g = sgt_kernel::make_geometry(256, 128, 8, 64, 64, 4, 8, 4, 256, 2, 4, 0);
  EXPECT_EQ(sgt_kernel::stage_warp_floats(g), 32 * 4 * 4);
  EXPECT_EQ(sgt_kernel::stage_buffer(g), 1);  // As: 2 x 8 x 260 = 4160 floats
  g = sgt_kernel::make_geometry(128, 256, 8, 64, 64, 4, 8, 4, 256, 2, 4, 0);
  EXPECT_EQ(sgt_kernel::stage_buffer(g), 2);  // As 2112 floats, Bs 4096
  g = sgt_kernel::make_geometry(128, 256, 8, 64, 64, 4, 8, 4, 256, 1, 4, 0);
  EXPECT_EQ(sgt_kernel::stage_buffer(g), 0);  // one buffer: 1056 and 2048 floats
}

TEST(StagedEpilogue, EdgeBlocksOfStagedConfigsAreClean) {
  for (const auto* n : {"wt_256x128x8_w64x64_wn4_t8x4_n256_mb1_s2_p4_g8_o1_c1",
                        "wt_128x256x8_w64x64_wn4_t8x4_n256_mb1_s2_p4_g8_o1_c1",
                        "wt_64x128x16_w16x64_wn1_t8x4_n256_mb1_s2_p4_g8_o1_b4_c1",
                        "wt_64x128x16_w32x64_wn1_t4x4_n128_mb1_s2_p4_g8_o1_x1_c1",
                        "wt_128x128x8_w64x32_wn2_t8x4_n256_mb2_s2_g8_k4_o1_x1_c1"}) {
    const auto c = named(n);
    ASSERT_NE(sgt_kernel::stage_buffer(derive(c)), 0) << n;
    const auto r = simulate_config(c);
    EXPECT_TRUE(r.ok()) << n << "\n" << r.summary();
  }
}

namespace {
int slot_without_lane_col(const sgt_kernel::Geometry& g, int tid, int ws, int n) {
  return sgt_kernel::lane_row(g, tid) * g.WN + ws * g.WSUBN + n;
}
int slot_one_off(const sgt_kernel::Geometry& g, int tid, int ws, int n) {
  return sgt_kernel::stage_slot(g, tid, ws, n) + 1;
}
int stage_row_without_tm(const sgt_kernel::Geometry& g, int tid, int ws, int m, int s) {
  return sgt_kernel::warp_row(g, tid) * g.WM + ws * g.WSUBM + s / g.WN + m;
}
int stage_col_within_the_subtile(const sgt_kernel::Geometry& g, int tid, int s) {
  return sgt_kernel::warp_col(g, tid) * g.WN + s % g.WSUBN;
}
}  // namespace

TEST(StagedEpilogueMutation, EveryBrokenStagingFunctionIsCaughtAtTheEdgeOnly) {
  auto c = named("wt_256x128x8_w64x64_wn4_t8x4_n256_mb1_s2_p4_g8_o1_c1");
  SimCase edge;
  edge.m_rem = 61;
  edge.n_rem = 76;  // B's float4s run along N: a multiple of 4 keeps the float4 instance legal
  SimCase whole;
  struct Mutation {
    const char* what;
    SimIndexing ix;
    std::vector<std::string> kinds;
  };
  std::vector<Mutation> mutations(4);
  mutations[0] = {"slot without the lane's column", {}, {"c_stage_slot"}};
  mutations[0].ix.stage_slot = slot_without_lane_col;
  mutations[1] = {"slot one float late", {}, {"c_stage_out_of_buffer", "misaligned_vector"}};
  mutations[1].ix.stage_slot = slot_one_off;
  mutations[2] = {"read-back row without TM", {}, {"c_stage_misplaced"}};
  mutations[2].ix.stage_tile_row = stage_row_without_tm;
  mutations[3] = {"read-back column within one sub-tile", {}, {"c_stage_misplaced"}};
  mutations[3].ix.stage_tile_col = stage_col_within_the_subtile;
  for (const auto& mu : mutations) {
    const auto r = simulate_block_with(c, edge, mu.ix);
    for (const auto& k : mu.kinds) EXPECT_TRUE(r.has(k)) << mu.what << ": " << r.summary();
    // A whole tile stores float4s directly: the staging functions are not used there; nor by
    // STAGE_C = 0.
    EXPECT_TRUE(simulate_block_with(c, whole, mu.ix).ok()) << mu.what;
    c.STAGE_C = 0;
    EXPECT_TRUE(simulate_block_with(c, edge, mu.ix).ok()) << mu.what;
    c.STAGE_C = 1;
  }
}

TEST(StagedEpilogue, WithoutABufferForEveryWarpTheRuleAndTheSimulationAgree) {
  // One buffer of As (132 x 8) and Bs (256 x 8) against 8 warps x 512 floats.
  const auto c = named("wt_128x256x8_w64x64_wn4_t8x4_n256_mb1_p4_c1");
  EXPECT_EQ(joined(structural_violations(c)), "stage_c_buffer");
  const auto r = simulate_config(c);
  EXPECT_TRUE(r.has("c_stage_out_of_buffer")) << r.summary();
  auto direct = c;
  direct.STAGE_C = 0;
  EXPECT_TRUE(simulate_config(direct).ok());
}

// --- TMA = 1 ---------------------------------------------------------------------------------
// The TMA-fed kernel (sgemm_ws_tma.cuh): the producer's copies, the hardware swizzle, the
// transposing warpgroup and the shared-memory layout replayed from tma_geometry.h, then the
// consumers and the epilogue. Each rule's break is simulated directly, never through check().

namespace {

// 64x128 tiles, 3 stages, PAD_A 4; 128x256 at BK = 16 (64-byte staging rows), BN + PAD_B = 256.
const std::string kTma64 = "wt_64x128x32_w64x16_wn2_t4x4_n256_mb1_s3_p4_g8_o1_m1";
const std::string kTma128 = "wt_128x256x16_w64x64_wn4_t8x4_n256_mb1_s4_p4_g8_o3_m1";

std::string detail_of(const SimReport& r, const std::string& kind) {
  for (const auto& d : r.defects) {
    if (d.kind == kind) return d.detail;
  }
  return {};
}

// Which operands a layout stages: A where it is stored m-major (NN, NT), B where n-major (NT, TT).
std::set<std::string> staging_a() {
  return {"NN", "NT"};
}
std::set<std::string> staging_b() {
  return {"NT", "TT"};
}
const std::set<std::string> kAllLayouts = {"NN", "NT", "TN", "TT"};

// Simulates `c` in every layout with `ix`: the layouts in `broken` must show every kind in
// `kinds`, the others none at all.
void expect_broken_in(const WarpTileConfig& c, const SimIndexing& ix,
                      const std::set<std::string>& broken, const std::vector<std::string>& kinds,
                      const std::string& what) {
  for (const auto& sc : kLayouts) {
    const auto r = simulate_block_with(c, sc, ix);
    if (broken.count(describe(sc)) == 0) {
      EXPECT_TRUE(r.ok()) << what << " " << describe(sc) << "\n" << r.summary();
      continue;
    }
    for (const auto& k : kinds) {
      EXPECT_TRUE(r.has(k)) << what << " " << describe(sc) << " lacks " << k << "\n" << r.summary();
    }
  }
}

TEST(IndexSimTma, ValidConfigsAreCleanInEveryLayout) {
  for (const auto& name : {kTma64, kTma128}) {
    const auto c = named(name);
    ASSERT_TRUE(check(c).empty()) << name;
    for (const auto& sc : kLayouts) {
      const auto r = simulate_block(c, sc);
      EXPECT_TRUE(r.ok()) << name << " " << describe(sc) << "\n" << r.summary();
    }
    const auto all = simulate_config(c);
    EXPECT_TRUE(all.ok()) << name << "\n" << all.summary();
  }
}

// A TMA config with PACK runs as its TN instance on the panels, whatever the layout: that is the
// only instance the whole-config proof replays, and it is clean.
TEST(IndexSimTma, PackedConfigsRunTheirTnInstanceOnly) {
  auto c = named(kTma64);
  c.PACK = 1;
  ASSERT_TRUE(check(c).empty());
  const auto all = simulate_config(c);
  EXPECT_TRUE(all.ok()) << all.summary();
  EXPECT_TRUE(simulate_block(c, {true, false, 0, 0, 0}).ok());
}

// Boundary blocks: remainders in M and N from 1 to the tile, every k remainder; the copies fill
// zeros outside the matrix, and every slice, edge or not, runs the one loop.
TEST(IndexSimTma, BoundaryBlocksAreCleanAtEveryRemainder) {
  int runs = 0;
  for (const auto& name : {kTma64, kTma128}) {
    const auto c = named(name);
    const int ms[] = {0, 1, 3, 4, c.BM / 2 + 1, c.BM - 3, c.BM};
    const int ns[] = {0, 1, 5, 8, c.BN / 2 + 1, c.BN - 1};
    for (const auto& lay : kLayouts) {
      for (int m : ms) {
        for (int n : ns) {
          for (int k = 0; k <= c.BK; ++k) {
            // Every k with a few (m, n), every (m, n) with a few k.
            if (k > 1 && k < c.BK - 1 && k != c.BK / 2 && m != 1 && n != 5) continue;
            const SimCase sc = edge(lay, m, n, k, true);
            const auto r = simulate_block(c, sc);
            ++runs;
            ASSERT_TRUE(r.ok()) << name << " " << describe(sc) << "\n" << r.summary();
          }
        }
      }
    }
  }
  EXPECT_GT(runs, 1000);
}

TEST(IndexSimTma, LaunchGridsAndSplitKAreClean) {
  for (const auto& name : {kTma64, kTma128}) {
    for (int splits : {1, 2, 3, 7}) {
      for (int group : {1, 8}) {
        auto c = named(name);
        c.SPLIT_K = splits;
        c.GROUP_M = group;
        for (const auto& gr : standard_grids(c)) {
          const auto r = simulate_grid(c, gr.M, gr.N, gr.K);
          EXPECT_TRUE(r.ok()) << to_name(c) << " " << gr.M << "x" << gr.N << "x" << gr.K << "\n"
                              << r.summary();
        }
        for (int K : {1, c.BK - 1, c.BK, c.BK + 1, 1000, 3999, 4000}) {
          const auto r = simulate_grid(c, 300, 200, K);
          EXPECT_TRUE(r.ok()) << to_name(c) << " K " << K << "\n" << r.summary();
        }
      }
    }
  }
}

// One instance, every layout: standard_cases and the launch's last blocks.
TEST(IndexSimTma, CasesRunTheOneInstanceInEveryLayout) {
  const auto c = named(kTma64);
  const auto cases = standard_cases(c);
  EXPECT_EQ(cases.size(), 24u);
  std::set<std::string> whole, edges, partial;
  std::set<int> m_rems, n_rems, k_rems;
  for (const auto& sc : cases) {
    EXPECT_TRUE(sc.vec_kernel && sc.vec_loads && !sc.panel) << describe(sc);
    const std::string lay = describe(layout(sc.trans_a, sc.trans_b));
    if (sc.m_rem == 0 && sc.n_rem == 0 && sc.k_rem == 0) {
      whole.insert(lay);
    } else {
      edges.insert(lay);
    }
    if (sc.k_rem > 0 && sc.k_rem < c.BK) partial.insert(lay);
    m_rems.insert(sc.m_rem);
    n_rems.insert(sc.n_rem);
    k_rems.insert(sc.k_rem);
  }
  EXPECT_EQ(whole, kAllLayouts);
  EXPECT_EQ(edges, kAllLayouts);
  EXPECT_EQ(partial, kAllLayouts);
  for (const auto& [rems, tile] : {std::pair{m_rems, c.BM}, {n_rems, c.BN}, {k_rems, c.BK}}) {
    EXPECT_TRUE(rems.count(0) && rems.count(1) && rems.count(tile - 1) && rems.count(tile - 3))
        << tile;
  }
  EXPECT_NE(simulate_config_scope().find("TMA"), std::string::npos);
  // The launch's last block in every layout, at its last slice: 300 = 4 * 64 + 44, 200 = 128 + 72,
  // 100 = 3 * 32 + 4.
  auto grid = grid_cases(c, 300, 200, 100);
  ASSERT_EQ(grid.size(), 4u);
  std::set<std::string> lays;
  for (const auto& sc : grid) {
    lays.insert(describe(layout(sc.trans_a, sc.trans_b)));
    EXPECT_EQ(describe(sc).substr(2), " edge 44x72 k4") << describe(sc);
  }
  EXPECT_EQ(lays, kAllLayouts);
  // Four splits of 1024 over K = 4000 leave the last one 29 whole slices; 3999, a partial one.
  auto split = c;
  split.SPLIT_K = 4;
  EXPECT_EQ(grid_cases(split, 256, 256, 4000).front().k_rem, c.BK);
  EXPECT_EQ(grid_cases(split, 256, 256, 3999).front().k_rem, 31);
}

// No thread loads a slice: a tile whose A slice is less than a pass of its threads is fine.
TEST(IndexSimTma, NeedsNoThreadLoadPasses) {
  const auto c = named("wt_32x256x16_w32x32_wn1_t4x4_n256_mb1_s2_m1");
  ASSERT_EQ(derive(c).A_PASSES, 0);
  ASSERT_TRUE(structural_violations(c).empty());
  const auto r = simulate_config(c);
  EXPECT_TRUE(r.ok()) << r.summary();
  auto plain = c;
  plain.TMA = 0;
  EXPECT_EQ(joined(structural_violations(plain)), "load_stride_a");
  EXPECT_TRUE(simulate_block(plain).has("as_hole"));
}

// Every structural rule a TMA config can break alone, simulated directly: the layouts that use
// what it guards break, with defects that name it; the others are clean.
TEST(IndexSimTma, EachRuleBreakIsCaughtWhereTheKernelBreaks) {
  struct Break {
    std::string rule, name;
    std::set<std::string> layouts;
    std::vector<std::string> kinds;
  };
  const Break breaks[] = {
      // A's 16 x 16 staging box is 64 float4s for 128 producer threads: no pass at all.
      {"tma_transpose",
       "wt_16x128x16_w16x32_wn1_t4x4_n128_mb2_s3_m1",
       staging_a(),
       {"tma_transpose_hole"}},
      // 32-byte staging rows under the 64-byte swizzle.
      {"tma_slice",
       "wt_64x128x8_w64x16_wn2_t4x4_n256_mb1_s3_p4_g8_o1_m1",
       {"NN", "NT", "TT"},
       {"tma_swizzle_mismatch", "tma_transpose_misplaced"}},
      // 256-byte staging rows: wider than any swizzle, the host cannot encode the box.
      {"tma_slice",
       "wt_64x128x64_w64x16_wn2_t4x4_n256_mb1_s2_p4_g8_o1_m1",
       {"NN", "NT", "TT"},
       {"tma_copy_refused"}},
      // BN + PAD_B = 260: B's straight box (NN, TN).
      {"tma_box",
       "wt_128x256x16_w64x64_wn4_t8x4_n256_mb1_s4_p4_g8_o3_b4_m1",
       {"NN", "TN"},
       {"tma_copy_refused"}},
      // Two consumer warps share warpgroup 0 with the producer's first two.
      {"tma_warpgroups",
       "wt_64x64x32_w64x32_wn1_t4x4_n64_mb2_s3_m1",
       kAllLayouts,
       {"tma_warpgroups"}},
      // TM = 2: the consumers' float4 reads of As take two rows of the next sub-tile.
      {"float4_alignment",
       "wt_64x128x32_w64x16_wn2_t2x4_n256_mb1_s3_p4_g8_o1_m1",
       kAllLayouts,
       {"operand_mismatch", "misaligned_vector"}},
  };
  for (const auto& b : breaks) {
    const auto c = named(b.name);
    EXPECT_EQ(joined(structural_violations(c)), b.rule) << b.name;
    expect_broken_in(c, SimIndexing{}, b.layouts, b.kinds, b.name);
    for (const auto& sc : kLayouts) {
      if (b.layouts.count(describe(sc)) == 0) continue;
      const auto r = simulate_block(c, sc);
      for (const auto& k : b.kinds) {
        if (k.rfind("tma_", 0) != 0) continue;
        EXPECT_NE(detail_of(r, k).find("rule " + b.rule), std::string::npos)
            << k << ": " << detail_of(r, k);
      }
    }
    const auto all = simulate_config(c);
    EXPECT_FALSE(all.ok()) << b.name;
    EXPECT_FALSE(all.has("degenerate_geometry")) << all.summary();
  }
  // The same tiles with TMA = 0 where the template runs them: the TMA rules were the reason.
  auto tm2 = named("wt_64x128x32_w64x16_wn2_t2x4_n256_mb1_s3_p4_g8_o1_m1");
  tm2.TMA = 0;
  tm2.STAGES = 1;
  EXPECT_TRUE(simulate_config(tm2).ok());
  auto wg = named("wt_64x64x32_w64x32_wn1_t4x4_n64_mb2_s3_m1");
  wg.TMA = 0;
  wg.STAGES = 1;
  EXPECT_TRUE(simulate_config(wg).ok());
}

// The hardware swizzle is stated independently of tma_staged_index: element (r, k) of a box on a
// 1024-byte boundary at byte (r * BK + k) * 4, bits [4:6] ^= [7:9] (BK 32) or [4:5] ^= [7:8] (16).
TEST(IndexSimTma, StagedIndexIsTheHardwareSwizzle) {
  for (int bk : {16, 32}) {
    for (int r = 0; r < 64; ++r) {
      for (int chunk = 0; chunk < bk / 4; ++chunk) {
        const int byte = (r * bk + chunk * 4) * 4;
        const int swizzled =
            bk == 32 ? byte ^ (((byte >> 7) & 7) << 4) : byte ^ (((byte >> 7) & 3) << 4);
        EXPECT_EQ(sgt_kernel::tma_staged_index(bk, r, chunk) * 4, swizzled) << bk << " " << r;
      }
    }
  }
}

// --- Broken TMA functions ------------------------------------------------------------------

int staged_index_unswizzled(int bk, int row, int chunk) {
  return row * bk + chunk * sgt_kernel::kVec;
}
int transpose_row_of_pass_0(int rows, int p, int) {
  return sgt_kernel::tma_transpose_row(rows, p, 0);
}
int transpose_chunk_of_pass_0(int rows, int p, int) {
  return sgt_kernel::tma_transpose_chunk(rows, p, 0);
}
int transpose_passes_one_short(int rows, int bk) {
  return sgt_kernel::tma_transpose_passes(rows, bk) - 1;
}
int transpose_passes_one_more(int rows, int bk) {
  return sgt_kernel::tma_transpose_passes(rows, bk) + 1;
}
int box_inner_unpadded(const sgt_kernel::Geometry& g, bool is_a, bool staged) {
  return staged ? g.BK : (is_a ? g.BM : g.BN);
}
int box_outer_one_short(const sgt_kernel::Geometry& g, bool is_a, bool staged) {
  return sgt_kernel::tma_box_outer(g, is_a, staged) - 1;
}
bool staged_a_backwards(bool trans_a) {
  return trans_a;
}
// As placed where B's staging ring starts: the layout forgets that ring.
sgt_kernel::TmaLayout layout_without_staging_b(const sgt_kernel::Geometry& g, bool ta, bool tb,
                                               int mb) {
  auto t = sgt_kernel::make_tma_layout(g, ta, tb, mb);
  const int lost = t.AS_OFFSET - t.STAGE_B_OFFSET;
  t.AS_OFFSET -= lost;
  t.BS_OFFSET -= lost;
  t.SMEM_BYTES -= 4 * lost;
  return t;
}
// No alignment slack: the last floats of the Bs ring lie past what the launch can count on.
sgt_kernel::TmaLayout layout_without_slack(const sgt_kernel::Geometry& g, bool ta, bool tb,
                                           int mb) {
  auto t = sgt_kernel::make_tma_layout(g, ta, tb, mb);
  t.SMEM_BYTES -= sgt_kernel::kTmaAlignBytes;
  return t;
}
// B's staging ring 128 bytes later (everything after it too): off the swizzle's 1024 bytes.
sgt_kernel::TmaLayout layout_staging_b_shifted(const sgt_kernel::Geometry& g, bool ta, bool tb,
                                               int mb) {
  auto t = sgt_kernel::make_tma_layout(g, ta, tb, mb);
  t.STAGE_B_OFFSET += 32;
  t.AS_OFFSET += 32;
  t.BS_OFFSET += 32;
  t.SMEM_BYTES += 128;
  return t;
}
// A's barrier expects the bytes of the padded tile even where A is staged.
sgt_kernel::TmaLayout layout_a_bytes_of_the_tile(const sgt_kernel::Geometry& g, bool ta, bool tb,
                                                 int mb) {
  auto t = sgt_kernel::make_tma_layout(g, ta, tb, mb);
  t.A_BOX_BYTES = g.AS_SIZE * 4;
  return t;
}
// A producer of three warps.
sgt_kernel::TmaLayout layout_96_producers(const sgt_kernel::Geometry& g, bool ta, bool tb, int mb) {
  auto t = sgt_kernel::make_tma_layout(g, ta, tb, mb);
  t.THREADS -= 32;
  return t;
}

TEST(IndexSimTmaMutation, EveryBrokenTmaFunctionIsCaughtWhereItIsUsed) {
  struct Mutation {
    std::string what;
    SimIndexing ix;
    std::set<std::string> layouts;
    std::vector<std::string> kinds;
  };
  std::vector<Mutation> mutations(12);
  mutations[0] = {"staged index without the swizzle",
                  {},
                  {"NN", "NT", "TT"},
                  {"tma_swizzle_mismatch", "tma_transpose_misplaced", "operand_mismatch"}};
  mutations[0].ix.tma_staged_index = staged_index_unswizzled;
  mutations[1] = {"every transpose pass repeats the first",
                  {},
                  {"NN", "NT", "TT"},
                  {"tma_transpose_hole", "tma_transpose_overlap"}};
  mutations[1].ix.tma_transpose_row = transpose_row_of_pass_0;
  mutations[1].ix.tma_transpose_chunk = transpose_chunk_of_pass_0;
  mutations[2] = {"one transpose pass short", {}, {"NN", "NT", "TT"}, {"tma_transpose_hole"}};
  mutations[2].ix.tma_transpose_passes = transpose_passes_one_short;
  mutations[3] = {"one transpose pass too many",
                  {},
                  {"NN", "NT", "TT"},
                  {"tma_transpose_out_of_stage", "tma_transpose_read_out_of_box"}};
  mutations[3].ix.tma_transpose_passes = transpose_passes_one_more;
  mutations[4] = {"straight box without PAD_A",
                  {},
                  {"TN", "TT"},
                  {"tma_copy_misplaced", "tma_barrier", "operand_mismatch"}};
  mutations[4].ix.tma_box_inner = box_inner_unpadded;
  mutations[5] = {"boxes one row short", {}, kAllLayouts, {"tma_barrier"}};
  mutations[5].ix.tma_box_outer = box_outer_one_short;
  mutations[6] = {
      "A staged where it is k-major", {}, kAllLayouts, {"tma_barrier", "operand_mismatch"}};
  mutations[6].ix.tma_staged_a = staged_a_backwards;
  mutations[7] = {"As over B's staging ring", {}, staging_b(), {"tma_smem_overlap"}};
  mutations[7].ix.make_tma_layout = layout_without_staging_b;
  mutations[8] = {"no alignment slack", {}, kAllLayouts, {"tma_smem_overflow"}};
  mutations[8].ix.make_tma_layout = layout_without_slack;
  mutations[9] = {"B's staging ring off 1024 bytes",
                  {},
                  staging_b(),
                  {"tma_smem_misaligned", "tma_transpose_misplaced"}};
  mutations[9].ix.make_tma_layout = layout_staging_b_shifted;
  mutations[10] = {"A's staged bytes of the padded tile", {}, staging_a(), {"tma_barrier"}};
  mutations[10].ix.make_tma_layout = layout_a_bytes_of_the_tile;
  mutations[11] = {"a producer of three warps", {}, kAllLayouts, {"tma_warpgroups"}};
  mutations[11].ix.make_tma_layout = layout_96_producers;
  const auto c = named(kTma64);
  for (const auto& mu : mutations) {
    expect_broken_in(c, mu.ix, mu.layouts, mu.kinds, mu.what);
    // The template never calls them: a TMA = 0 config is clean under every one.
    auto plain = c;
    plain.TMA = 0;
    plain.STAGES = 1;
    EXPECT_TRUE(simulate_config(plain).ok()) << mu.what;
  }
  // Where the producer is short of threads, the staged layouts also lose arrivals and rows.
  SimIndexing short_producer;
  short_producer.make_tma_layout = layout_96_producers;
  expect_broken_in(c, short_producer, kAllLayouts, {"tma_warpgroups"}, "three producer warps");
  const auto r = simulate_block_with(c, layout(false, false), short_producer);
  EXPECT_TRUE(r.has("tma_barrier") && r.has("tma_transpose_hole")) << r.summary();
}

// Split-K with TMA: the copies fill zeros only past K, so a split whose range is not whole slices
// copies the next split's first k again.
TEST(IndexSimTmaMutation, ASplitOfPartialSlicesCopiesKTwice) {
  auto c = named(kTma64);
  c.SPLIT_K = 3;
  SimIndexing ix;
  ix.launch_dims = unrounded_chunk;
  const auto r = simulate_grid_with(c, 300, 200, 1000, ix);
  EXPECT_TRUE(r.has("tma_k_overlap")) << r.summary();
  EXPECT_TRUE(r.has("split_k_misaligned")) << r.summary();
  EXPECT_NE(detail_of(r, "tma_k_overlap").find("zeros only past K"), std::string::npos)
      << r.summary();
  // The template reads only its own split's k: no TMA defect there.
  c.TMA = 0;
  c.STAGES = 1;
  const auto plain = simulate_grid_with(c, 300, 200, 1000, ix);
  EXPECT_FALSE(plain.has("tma_k_overlap")) << plain.summary();
  EXPECT_TRUE(plain.has("split_k_misaligned"));
}

// Refused as degenerate before any loop runs (a simulation that tried would outlast ctest's
// timeout).
TEST(IndexSimTma, AbsurdTmaGeometriesAreRefusedAsDegenerate) {
  auto stages = named(kTma64);
  stages.STAGES = 1000;
  auto blocks = named(kTma64);
  blocks.NUM_THREADS = 4096;
  blocks.MIN_BLOCKS = 1 << 20;
  for (const auto& c : {stages, blocks}) {
    const auto r = simulate_config(c);
    EXPECT_TRUE(r.has("degenerate_geometry")) << r.summary();
    EXPECT_EQ(r.defects.size(), 1u) << r.summary();
  }
}

// TMA tiles around the valid ones, through the values the TMA rules test (BK, the pads, a
// thread count that ends inside a warpgroup, boxes past 256, staging boxes below a float4 per
// producer thread): the structural rules and the simulation must agree exactly.
TEST(IndexSimTma, TmaSweepRulesAndSimulationAgree) {
  long long valid = 0, rejected = 0;
  std::map<std::string, long long> caught;
  for (const char* base :
       {"wt_64x128x32_w64x16_wn2_t4x4_n256_mb1_s3_g8_o1_m1",
        "wt_128x256x16_w64x64_wn4_t8x4_n256_mb1_s2_g8_o3_m1",
        "wt_16x128x16_w16x32_wn1_t4x4_n128_mb2_s2_m1", "wt_64x64x32_w64x32_wn1_t4x4_n64_mb2_s2_m1",
        "wt_48x128x32_w16x32_wn1_t4x4_n384_mb1_s2_m1",
        "wt_256x128x16_w64x64_wn2_t8x4_n256_mb1_s2_m1"}) {
    for (int bk : {8, 16, 32, 64}) {
      for (int pad_a : {0, 4}) {
        for (int pad_b : {0, 4}) {
          for (int split : {1, 3}) {
            auto c = named(base);
            c.BK = bk;
            c.PAD_A = pad_a;
            c.PAD_B = pad_b;
            c.SPLIT_K = split;
            const auto names = structural_violations(c);
            const auto r = simulate_config(c);
            if (names.empty()) {
              ++valid;
              EXPECT_TRUE(r.ok()) << to_name(c) << " passes the rules but:\n" << r.summary();
            } else {
              ++rejected;
              EXPECT_FALSE(r.ok())
                  << to_name(c) << " breaks " << joined(names) << " but simulates clean";
              EXPECT_FALSE(r.has("degenerate_geometry")) << to_name(c) << "\n" << r.summary();
              for (const auto& n : names) caught[n] += !r.ok();
            }
          }
        }
      }
    }
  }
  EXPECT_GT(valid, 20);
  EXPECT_GT(rejected, 50);
  for (const char* rule : {"tma_slice", "tma_transpose", "tma_box", "tma_warpgroups"}) {
    EXPECT_GT(caught[rule], 0) << rule;
  }
}

}  // namespace
}  // namespace sgt
