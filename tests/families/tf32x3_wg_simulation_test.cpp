// The split-TF32 wgmma family's index simulation (tuner/core/families/tf32x3_wg/simulation.cpp):
// the prepass, the tile, the epilogue, the splits, the BF16 split and the wave-aware tail on the
// space's configs and at edge shapes, each against broken variants of the kernel's index
// functions; and the geometry constants the kernel and the host share.
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

#include "tf32x3_wg_test_util.hpp"

namespace sgt {
namespace {

using tw3_test::probe_config;
using tw3_test::tw3;

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
