// Replays the warp-tiling kernel's index arithmetic on the CPU, thread by thread, and checks it
// against an independent statement of what the block must do: load each element of a k-slice once
// into the slot where the compute loop expects it, never reading outside the matrix, multiply the
// right operands, write each C element inside the matrix once, with aligned float4 accesses; and,
// for the launch, take every block tile and every k exactly once.
//
// This file holds the public API (index_sim.hpp) and the cases the whole-config proof runs; the
// replay is split by concern over the files index_sim_detail.hpp names: the operands' loads and
// fragments, the block of the warp-tiling kernel, the TMA producer, and the launch.
#include "index_sim.hpp"

#include <algorithm>

#include "family.hpp"
#include "index_sim_detail.hpp"
#include "parallel.hpp"

namespace sgt {

using sim_detail::kKinds;
using sim_detail::kMaxGridBlocks;
using sim_detail::kMaxK;
using sim_detail::kVec;
using sim_detail::launch_cases;
using sim_detail::Merger;
using sim_detail::run_block;
using sim_detail::run_grid;

namespace {

std::string grid_label(int M, int N, int K) {
  return fmt::format("grid {}x{}x{}", M, N, K);
}

}  // namespace

bool SimReport::has(std::string_view kind) const {
  for (const auto& d : defects) {
    if (d.kind == kind) return true;
  }
  return false;
}

std::string SimReport::summary() const {
  std::string out;
  for (const auto& d : defects) out += fmt::format("{}: {}\n", d.kind, d.detail);
  return out;
}

const std::vector<std::string_view>& sim_defect_kinds() {
  static const std::vector<std::string_view> kinds = [] {
    std::vector<std::string_view> v;
    for (const auto& k : kKinds) v.push_back(k.name);
    return v;
  }();
  return kinds;
}

std::string describe(const SimCase& sc) {
  std::string out = fmt::format("{}{}", sc.trans_a ? 'T' : 'N', sc.trans_b ? 'T' : 'N');
  if (sc.m_rem > 0 || sc.n_rem > 0 || sc.k_rem > 0) {
    auto show = [](int v) { return v > 0 ? std::to_string(v) : std::string("-"); };
    out += fmt::format(" edge {}x{} k{}", show(sc.m_rem), show(sc.n_rem), show(sc.k_rem));
  }
  if (!sc.vec_kernel) {
    out += " scalar-kernel";
  } else if (!sc.vec_loads) {
    out += " edge-only";
  }
  if (sc.panel) out += " panel";
  return out;
}

SimReport simulate_block(const WarpTileConfig& c, const SimCase& sc) {
  return run_block(c, sc, SimIndexing{});
}

SimReport simulate_block_with(const WarpTileConfig& c, const SimCase& sc, const SimIndexing& ix) {
  return run_block(c, sc, ix);
}

SimReport simulate_grid(const WarpTileConfig& c, int M, int N, int K) {
  return run_grid(c, M, N, K, SimIndexing{});
}

SimReport simulate_grid_with(const WarpTileConfig& c, int M, int N, int K, const SimIndexing& ix) {
  return run_grid(c, M, N, K, ix);
}

SimReport simulate_launch(const WarpTileConfig& c, int M, int N, int K) {
  return sim_detail::run_launch(c, M, N, K, SimIndexing{});
}

std::vector<SimCase> grid_cases(const WarpTileConfig& c, int M, int N, int K) {
  return launch_cases(c, M, N, K, SimIndexing{});
}

namespace {

// A remainder v of a tile, within 1..tile.
int rem(int tile, int v) {
  return std::clamp(v, 1, std::max(1, tile));
}
// A multiple of 4 at most v, for float4 loads along the dimension (the tile, if below 4).
int rem4(int tile, int v) {
  const int hi = std::max(1, tile);
  return std::clamp(v - v % kVec, std::min(kVec, hi), hi);
}

// TMA: one instance, every slice through the same loop, the copies filling zeros outside the
// matrix: the four layouts whole, then odd and even remainders in M, N and K in each.
std::vector<SimCase> tma_cases(const WarpTileConfig& c) {
  const int BM = c.BM, BN = c.BN, BK = c.BK;
  // With PACK the TMA kernel runs as its TN instance on the panels, whatever the layout.
  const auto runs = [&](bool ta, bool tb) { return !c.PACK || (ta && !tb); };
  std::vector<SimCase> out;
  for (const bool ta : {false, true}) {
    for (const bool tb : {false, true})
      if (runs(ta, tb)) out.push_back({ta, tb, 0, 0, 0});
  }
  for (const bool ta : {false, true}) {
    for (const bool tb : {false, true}) {
      if (!runs(ta, tb)) continue;
      out.push_back({ta, tb, 1, 1, 1});
      out.push_back({ta, tb, rem(BM, BM - 3), rem(BN, BN / 2 + 1), 0});
      out.push_back({ta, tb, rem(BM, BM / 2 + 1), rem(BN, BN - 1), rem(BK, BK - 3)});
      out.push_back({ta, tb, rem(BM, BM - 1), 0, rem(BK, BK / 2 + 1)});
      out.push_back({ta, tb, 0, rem(BN, BN - 3), rem(BK, BK - 1)});
    }
  }
  return out;
}

// PACK: the TN float4 instance on panels, the only way it runs, at odd remainders (a float4
// running into the padding, or starting past the matrix and clamped back) and partial slices.
std::vector<SimCase> pack_cases(const WarpTileConfig& c) {
  const int BM = c.BM, BN = c.BN, BK = c.BK;
  auto panel = [](int m, int n, int k) { return SimCase{true, false, m, n, k, true, true, true}; };
  return {
      panel(0, 0, 0),
      panel(1, 1, 0),
      panel(rem(BM, BM - 3), rem(BN, BN - 3), 0),
      panel(rem(BM, BM / 2 + 1), rem(BN, BN - 1), 0),
      panel(rem(BM, BM - 1), rem(BN, BN / 2 + 2), BK),
      panel(rem(BM, BM - 3), rem(BN, BN / 2 + 1), rem(BK, BK - 1)),
      panel(1, 0, rem(BK, BK - 3)),
      panel(0, rem(BN, BN - 1), 1),
  };
}

// The warp-tiling kernel: both instances, every layout whole and at the edges.
std::vector<SimCase> warptile_cases(const WarpTileConfig& c) {
  const int BM = c.BM, BN = c.BN, BK = c.BK;
  // The float4 instance with operands that refuse float4s.
  constexpr bool kEdgeOnly = false;
  // The scalar-load instance (VEC = false), for operands that refuse float4s.
  auto scalar = [](bool ta, bool tb, int m, int n, int k) {
    return SimCase{ta, tb, m, n, k, false, false};
  };
  return {
      {false, false, 0, 0, 0},
      {false, true, 0, 0, 0},
      {true, false, 0, 0, 0},
      {true, true, 0, 0, 0},
      // Edge blocks of operands that do not allow float4s, on the float4 instance: every slice
      // through the edge loop.
      {false, false, 1, 1, 0, kEdgeOnly},
      {false, true, rem(BM, BM - 3), rem(BN, BN - 3), 0, kEdgeOnly},
      {true, false, rem(BM, BM / 2 + 1), rem(BN, BN - 1), 0, kEdgeOnly},
      {true, true, rem(BM, BM - 1), rem(BN, BN / 2 + 1), 0, kEdgeOnly},
      // ... with float4 loads: multiples of 4 where they run along M (A^T) or N (B).
      {false, false, rem(BM, BM - 1), rem4(BN, BN - 4), 0},
      {false, true, rem(BM, BM / 2 + 1), 1, 0},
      {true, false, rem4(BM, BM - 4), rem4(BN, 4), 0},
      {true, true, rem4(BM, BM / 2), rem(BN, BN - 3), 0},
      // The edge loop: a partial k-slice, through clamped (float4) and unclamped pointers.
      {false, false, 0, rem(BN, BN / 2 + 1), rem(BK, BK - 1), kEdgeOnly},
      {false, true, rem(BM, BM - 1), 0, rem(BK, BK - 3), kEdgeOnly},
      {true, false, rem4(BM, BM / 2), rem4(BN, BN - 4), 1},
      {true, true, 1, 1, rem(BK, BK / 2 + 1), kEdgeOnly},
      // ... the partial slice of a float4 problem's edge block, through clamped pointers, in the
      // other three layouts.
      {false, false, rem(BM, BM - 3), rem4(BN, BN / 2), rem(BK, BK - 3)},
      {false, true, rem(BM, BM / 2 + 1), rem(BN, BN - 1), rem(BK, BK / 2 + 1)},
      {true, true, rem4(BM, 4), rem(BN, BN - 3), rem(BK, BK - 1)},
      // The scalar instance: whole slices through the main loop with clamped single-float loads,
      // at remainders tile-3 and 1, where a pass's four elements straddle the end of the matrix
      // in M and N (the tile's last four with one inside, or its first four), both ways round and
      // ending the slice or not; then a partial slice through the same clamped pointers.
      scalar(false, false, rem(BM, BM - 3), 1, 0),
      scalar(false, false, 1, rem(BN, BN - 3), BK),
      scalar(false, false, 0, rem(BN, BN / 2 + 1), rem(BK, BK - 1)),
      scalar(false, true, 1, rem(BN, BN - 3), 0),
      scalar(false, true, rem(BM, BM - 3), 1, BK),
      scalar(false, true, rem(BM, BM / 2 + 1), 0, rem(BK, BK - 3)),
      scalar(true, false, rem(BM, BM - 3), 1, 0),
      scalar(true, false, 1, rem(BN, BN - 3), BK),
      scalar(true, false, rem(BM, BM - 1), rem(BN, BN / 2 + 1), 1),
      scalar(true, true, 1, rem(BN, BN - 3), 0),
      scalar(true, true, rem(BM, BM - 3), 1, BK),
      scalar(true, true, rem(BM, BM / 2 + 1), rem(BN, BN - 1), rem(BK, BK / 2 + 1)),
  };
}

}  // namespace

std::vector<SimCase> standard_cases(const WarpTileConfig& c) {
  if (sim_detail::tma_fed(c)) return tma_cases(c);
  if (c.PACK) return pack_cases(c);
  return warptile_cases(c);
}

std::vector<SimGrid> standard_grids(const WarpTileConfig& c) {
  const long long BM = std::max(1, c.BM), BN = std::max(1, c.BN), BK = std::max(1, c.BK);
  const long long G = std::max(1, c.GROUP_M), S = std::max(1, c.SPLIT_K);
  // Partial last tiles in M and N (the launch still counts them as whole blocks): odd, or a
  // multiple of 4 (for tiles that are) so that the kernel reads float4s along them.
  const long long m_odd = std::max(1LL, BM - 3), n_odd = std::max(1LL, BN / 2 + 1);
  const long long m_4 = std::max(std::min(4LL, BM), BM - 4);
  const long long n_4 = std::max(std::min(4LL, BN), BN / 2 - BN / 2 % 4);
  struct Spec {
    long long grid_m, grid_n, K, m_rem, n_rem;
  };
  const Spec specs[] = {
      // One block, one partial slice; all odd: the scalar instance.
      {1, 1, 1, m_odd, n_odd},
      // A last group of one row; splits of up to 3 slices, the last one partial; M, N, K
      // multiples of 4: the float4 instance in every layout.
      {G + 1, 3, BK * S * 2 + 4, m_4, n_4},
      // A partial last group; the last split a single k; all odd: the scalar instance.
      {2 * G + 3, 5, BK * (S - 1) + 1, m_odd, n_odd},
      // Fewer slices than SPLIT_K; M odd: the float4 instance only where A is read along K (NN,
      // NT).
      {7, 2 * G + 1, 3 * BK + 4, m_odd, n_4},
      // SPLIT_K splits of two slices, the last one a whole slice and one k; all odd, the last
      // block's remainders tile-1 and 1: the scalar instance's main loop in every layout, a float4
      // straddling the end of the matrix in M and N.
      {3, 2, BK * (2 * S - 1) + 1, std::max(1LL, BM - 1), 1},
  };
  std::vector<SimGrid> out;
  for (const auto& s : specs) {
    const long long M = (s.grid_m - 1) * BM + s.m_rem;
    const long long N = (s.grid_n - 1) * BN + s.n_rem;
    if (M > INT_MAX || N > INT_MAX || s.K > kMaxK || s.grid_m * s.grid_n > kMaxGridBlocks) {
      continue;
    }
    out.push_back({static_cast<int>(M), static_cast<int>(N), static_cast<int>(s.K)});
  }
  return out;
}

namespace sim_detail {

void replay_ring(Tally& t, const RingSchedule& r, int ntiles) {
  const int S = r.stages;
  std::vector<int> slice_of(static_cast<size_t>(S), -1), group_of(static_cast<size_t>(S), -1);
  std::vector<char> computed(static_cast<size_t>(ntiles), 0);
  std::vector<int> open;
  int committed = 0, landed = 0;  // groups [0, landed) have landed
  auto load = [&](int st, int slice) {
    if (st < 0 || st >= S) {
      t.note(kSmemOverflow, [&] {
        return fmt::format("{} slices: slice {} is copied into stage {} of {}", ntiles, slice, st,
                           S);
      });
      return;
    }
    const int held = slice_of[static_cast<size_t>(st)];
    if (held >= 0 && !computed[static_cast<size_t>(held)]) {
      t.note(kPipelineOverwrite, [&] {
        return fmt::format(
            "{} slices, STAGES = {}: slice {} is copied into stage {} while its "
            "slice {} is still to be computed (rule {})",
            ntiles, S, slice, st, held, r.rule);
      });
    }
    slice_of[static_cast<size_t>(st)] = slice;
    group_of[static_cast<size_t>(st)] = -1;
    open.push_back(st);
  };
  auto commit = [&] {
    for (const int st : open) group_of[static_cast<size_t>(st)] = committed;
    open.clear();
    ++committed;
  };
  auto compute = [&](int st, int slice) {
    if (st < 0 || st >= S) {
      t.note(kSmemOverflow, [&] {
        return fmt::format("{} slices: slice {} is computed from stage {} of {}", ntiles, slice, st,
                           S);
      });
      return;
    }
    const int held = slice_of[static_cast<size_t>(st)];
    const int group = group_of[static_cast<size_t>(st)];
    if (held != slice || group < 0 || group >= landed) {
      t.note(kPipelineNotLanded, [&] {
        return held != slice ? fmt::format(
                                   "{} slices, STAGES = {}: slice {} is computed from stage {}, "
                                   "which holds slice {}",
                                   ntiles, S, slice, st, held)
                             : fmt::format(
                                   "{} slices, STAGES = {}: slice {} is computed before its "
                                   "copies have landed (rule {})",
                                   ntiles, S, slice, r.rule);
      });
    }
    computed[static_cast<size_t>(slice)] = 1;
  };
  for (int s = 0; s < r.lead; ++s) {
    if (s < ntiles) load(r.buffer(s, S), s);
    commit();
  }
  for (int tt = 0; tt < ntiles; ++tt) {
    if (r.wait >= 0) landed = std::max(landed, committed - r.wait);
    // __syncthreads(): every compute of an earlier slice is done.
    const int next = tt + r.lead;
    if (next < ntiles) load(r.buffer(next, S), next);
    commit();
    compute(r.buffer(tt, S), tt);
  }
}

}  // namespace sim_detail

SimReport simulate_config(const WarpTileConfig& c) {
  const auto& family = family_of(c);
  if (auto r = family.simulate(c)) return std::move(*r);
  SimReport r;
  r.defects.push_back({std::string(kKinds[sim_detail::kNotSimulated].name),
                       fmt::format("kernel family {} has no index simulation: its indexing is "
                                   "not checked on the CPU",
                                   family.id())});
  return r;
}

SimReport simulate_ring(const WarpTileConfig& c, const SimIndexing& ix) {
  sim_detail::Tally t;
  if (c.family != "warptile_ring") return t.report();
  // The replay is quadratic in STAGES; the kernel's ring has at most kMaxRingStages.
  if (c.STAGES > 64) {
    t.add(sim_detail::kDegenerate, 1,
          fmt::format("STAGES = {}: too many ring stages to simulate", c.STAGES));
    return t.report();
  }
  const sim_detail::RingSchedule ring{c.STAGES, ix.ring_lead(c.STAGES), ix.ring_wait(c.STAGES),
                                      ix.ring_buffer, "ring_stages"};
  for (int ntiles = 1; ntiles <= 2 * c.STAGES + 1; ++ntiles) replay_ring(t, ring, ntiles);
  return t.report();
}

SimReport simulate_warptile_config(const WarpTileConfig& c) {
  Merger merged;
  const SimIndexing ix;
  std::vector<SimCase> done;
  for (const auto& sc : standard_cases(c)) {
    const auto r = run_block(c, sc, ix);
    merged.add(describe(sc), r);
    // A degenerate geometry is degenerate in every case: once is enough.
    if (r.has("degenerate_geometry")) return merged.report();
    done.push_back(sc);
  }
  if (c.family == "warptile_ring") merged.add("ring", simulate_ring(c, ix));
  for (const auto& gr : standard_grids(c)) {
    run_grid(c, gr.M, gr.N, gr.K, ix, grid_label(gr.M, gr.N, gr.K), merged, done);
  }
  if (c.TAIL == 1) {
    for (const auto& g : tail_grids())
      merged.add(fmt::format("tail {}x{}x{} on {} slots", g.M, g.N, g.K, g.slots),
                 simulate_tail_launch(c, g, ix));
  }
  return merged.report();
}

std::vector<SimReport> simulate_configs(const std::vector<WarpTileConfig>& configs,
                                        unsigned threads) {
  std::vector<SimReport> out(configs.size());
  parallel_for(configs.size(), threads, [&](size_t i) { out[i] = simulate_config(configs[i]); });
  return out;
}

std::string simulate_config_scope() {
  return "layouts NN NT TN TT with whole tiles, 27 boundary blocks over the layouts and both "
         "kernel instances (whole k-slices read unguarded, float4 or single-float loads clamped "
         "into the matrix; partial ones, and every slice of operands that refuse float4s on the "
         "float4 instance, through the guarded edge loop; remainders 1, tile-3, tile/2+1, tile-1 "
         "in M, N and K), and the block order, split-K ranges and last blocks (every layout, the "
         "instance the tuner picks) of 5 launch grids; a PACK config as it runs, its TN float4 "
         "instance on zero-padded panels; a STAGE_C config's edge blocks through the staged "
         "epilogue (each warp's slots stored once, in the buffer, read back to the accumulator's "
         "C element); a TMA config as it runs, its TMA-fed kernel in every layout, whole and at 20 "
         "boundary blocks: every stage's copies (encoded boxes, the hardware swizzle, zeros "
         "outside "
         "the matrix), the producer warpgroup's transpose, the shared-memory layout, barriers and "
         "warpgroups, then the consumers' reads and the epilogue, and the slices each split "
         "copies; a TAIL config's wave-aware tail on 9 problems and waves (the first launch and "
         "the tail take every tile once, the tail's split launch of its sub-problem)";
}

}  // namespace sgt
