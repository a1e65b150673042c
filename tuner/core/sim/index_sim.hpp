// CPU index simulation of the warp-tiling kernel: replays the kernel's loops with the very
// functions of warptile_geometry.h, for every operand layout, for boundary blocks (whose whole
// k-slices the kernel reads unguarded, loads past the matrix in M or N clamped back inside it) and
// for both instances of the kernel (VEC: float4 main-loop loads, taken where the operands allow
// them, else every slice through the guarded edge loop; or single-float main-loop loads), and
// reports every way its indexing goes wrong. Also checks the block order and the split-K ranges,
// and the boundary blocks of a launch with the instance the tuner picks for its M, N and K. A TMA =
// 1 config runs its one instance, the TMA-fed kernel (sgemm_ws_tma.cuh): the simulation replays
// tma_geometry.h's copies, swizzle, transposing producer and shared-memory layout instead of the
// thread loads, then the same compute loop and epilogue.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "config.hpp"
#include "launch_tail.h"
#include "problem.hpp"
#include "tma_geometry.h"
#include "warptile_ring.h"

namespace sgt {

// One kind of defect, reported once per simulation with an example and a count.
struct SimDefect {
  // Stable name, one of sim_defect_kinds(): degenerate_geometry, c_out_of_tile, c_out_of_matrix,
  // c_hole, c_overlap, c_stage_slot, c_stage_out_of_buffer, c_stage_misplaced, a_out_of_tile,
  // a_out_of_matrix, as_out_of_tile, as_pad_written, as_hole, as_overlap, as_misplaced,
  // b_out_of_tile, b_out_of_matrix, bs_out_of_tile, bs_hole, bs_overlap, bs_misplaced,
  // smem_read_out_of_tile, as_pad_read, operand_mismatch, k_tail_not_zeroed, misaligned_vector,
  // raster_out_of_grid, raster_hole, raster_overlap, split_k_misaligned, split_k_empty,
  // split_k_hole, split_k_overlap, split_k_workspace, fma_step_coverage; for ws_tma:
  // tma_copy_refused, tma_barrier, tma_copy_out_of_stage, tma_copy_hole, tma_copy_misplaced,
  // tma_swizzle_mismatch, tma_transpose_read_out_of_box, tma_transpose_out_of_stage,
  // tma_transpose_hole, tma_transpose_overlap, tma_transpose_misplaced, tma_smem_overlap,
  // tma_smem_misaligned, tma_smem_overflow, tma_warpgroups, tma_k_hole, tma_k_overlap; for
  // tf32x3 (which reports the shared kinds above where they apply: its stage slices are As and
  // Bs): bs_pad_written, bs_pad_read, smem_overflow, pipeline_not_landed, pipeline_overwrite; for
  // tf32x3_wg (which reports the shared c_*, misaligned_vector, raster_*, tma_* kinds where they
  // apply): split_read_out_of_matrix, split_tile_slot, split_panel_out_of_bounds,
  // split_panel_hole, split_panel_overlap, split_panel_misplaced, split_workspace,
  // wg_acc_misplaced; and not_simulated for a config of a kernel family that has no simulation
  // (family.hpp). Where a validity rule guards against the defect, its detail names the rule ("rule
  // tma_transpose").
  std::string kind;
  std::string detail;  // one concrete (thread, element) example, then how many in all
};

struct SimReport {
  std::vector<SimDefect> defects;  // at most one per kind, in the order of sim_defect_kinds()

  bool ok() const { return defects.empty(); }
  bool has(std::string_view kind) const;
  std::string summary() const;  // "kind: detail" lines, for messages
};

// Every kind the simulations can report, in report order.
const std::vector<std::string_view>& sim_defect_kinds();

// Which block simulate_block replays, and with which instance of the kernel. Layout: A is stored
// M x K (trans_a: K x M, op(A) = A^T), B is stored K x N (trans_b: N x K). The remainders place the
// block: 0 means the matrix goes on past the tile in that direction (an interior block, or a
// k-slice with more after it); 1..tile means the matrix (or the split's k range) ends after that
// many rows (m_rem), columns (n_rem) or k (k_rem) of the block's tile and of the simulated k-slice.
//
// vec_kernel is the template's VEC, vec_loads the kernel's runtime check that the operands allow
// float4s (aligned pointers and leading dimensions; where a float4 runs along M or N, legal only
// for a remainder there that is 0 or a multiple of 4). A whole k-slice (k_rem 0 or BK) runs the
// main loop, edge blocks included, when !vec_kernel || vec_loads: no guard, the pass pointers
// clamped into the matrix in M and N. With vec_kernel its loads are float4s from clamp_mn (rows
// along m, n) or clamp_mn_vec (start columns along m, n); without, single floats, element j from
// the pointer + j (columns along k, row clamp_mn) or the pointer + min(j, clamp_last) (columns
// along m, n, start clamp_mn). A partial slice takes the guarded edge loop through the same
// pointers, and a VEC instance whose operands refuse float4s takes it for every slice through
// unclamped ones. The epilogue stores float4s where the tile is whole in M and N.
//
// A TMA-fed config has one instance, whatever the operands: vec_loads, vec_kernel and panel are
// ignored. Every slice, whole or partial, edge block or not, takes the same loop: the copies fill
// what lies outside the matrix with zeros.
struct SimCase {
  bool trans_a = false;
  bool trans_b = false;
  int m_rem = 0;
  int n_rem = 0;
  int k_rem = 0;
  bool vec_loads = true;   // runtime: the operands allow float4 main-loop loads
  bool vec_kernel = true;  // the template's VEC: float4 main-loop loads, else single floats
  // PACK = 1 on packed panels: rows run on in zeros to the next multiple of 4 in m (n), where a
  // float4 may read, and pass pointers start at clamp_mn_panel (the TN float4 instance only).
  bool panel = false;

  bool operator==(const SimCase&) const = default;
};
// "NN", "TN", ... and, for a boundary block, e.g. "NT edge 61x61 k13" ("-" for 0); then
// " scalar-kernel" for the VEC = false instance, or " edge-only" for the VEC instance with
// operands that refuse float4s (every slice through the edge loop), or " panel" for packed panels.
std::string describe(const SimCase& sc);

// The kernel index functions the simulation replays. The defaults are warptile_geometry.h's; tests
// swap one for a broken variant to prove the simulation notices.
struct SimIndexing {
  int (*a_slice_cols)(const sgt_kernel::Geometry&, bool) = sgt_kernel::a_slice_cols;
  int (*b_slice_cols)(const sgt_kernel::Geometry&, bool) = sgt_kernel::b_slice_cols;
  int (*load_row)(const sgt_kernel::Geometry&, int, int, int) = sgt_kernel::load_row;
  int (*load_col)(const sgt_kernel::Geometry&, int, int, int) = sgt_kernel::load_col;
  int (*slice_k)(bool, bool, int, int) = sgt_kernel::slice_k;
  int (*slice_mn)(bool, bool, int, int) = sgt_kernel::slice_mn;
  int (*as_index)(const sgt_kernel::Geometry&, int, int) = sgt_kernel::as_index;
  int (*bs_index)(const sgt_kernel::Geometry&, int, int) = sgt_kernel::bs_index;
  int (*tile_row)(const sgt_kernel::Geometry&, int, int, int) = sgt_kernel::tile_row;
  int (*tile_col)(const sgt_kernel::Geometry&, int, int, int) = sgt_kernel::tile_col;
  int (*clamp_mn)(int, int) = sgt_kernel::clamp_mn;
  int (*clamp_mn_vec)(int, int) = sgt_kernel::clamp_mn_vec;
  int (*clamp_mn_panel)(int, int) = sgt_kernel::clamp_mn_panel;
  int (*clamp_last)(int, int) = sgt_kernel::clamp_last;
  int (*stage_slot)(const sgt_kernel::Geometry&, int, int, int) = sgt_kernel::stage_slot;
  int (*stage_tile_row)(const sgt_kernel::Geometry&, int, int, int,
                        int) = sgt_kernel::stage_tile_row;
  int (*stage_tile_col)(const sgt_kernel::Geometry&, int, int) = sgt_kernel::stage_tile_col;
  int (*block_tile_row)(int, int, int, int) = sgt_kernel::block_tile_row;
  int (*block_tile_col)(int, int, int, int) = sgt_kernel::block_tile_col;
  sgt_kernel::FmaStep (*fma_step)(const sgt_kernel::Geometry&, int, int) = sgt_kernel::fma_step;
  sgt_kernel::LaunchDims (*launch_dims)(long long, long long, long long, int, int, int,
                                        int) = sgt_kernel::launch_dims;
  // The cp.async ring of family warptile_ring (warptile_ring.h).
  int (*ring_lead)(int) = sgt_kernel::ring_lead;
  int (*ring_wait)(int) = sgt_kernel::ring_wait;
  int (*ring_buffer)(int, int) = sgt_kernel::ring_buffer;
  int (*kc_index)(int, int, int, int) = sgt_kernel::kc_index;
  int (*kc_group_index)(int, int, int, int, int) = sgt_kernel::kc_group_index;
  // The wave-aware tail of a TAIL 1 config (launch_tail.h).
  sgt_kernel::CallTail (*plan_tail)(int, int, int, int, long long, long long, long long,
                                    long long) = sgt_kernel::plan_tail;
  // ws_tma (tma_geometry.h).
  bool (*tma_staged_a)(bool) = sgt_kernel::tma_staged_a;
  bool (*tma_staged_b)(bool) = sgt_kernel::tma_staged_b;
  int (*tma_staged_index)(int, int, int) = sgt_kernel::tma_staged_index;
  int (*tma_transpose_row)(int, int, int) = sgt_kernel::tma_transpose_row;
  int (*tma_transpose_chunk)(int, int, int) = sgt_kernel::tma_transpose_chunk;
  int (*tma_transpose_passes)(int, int) = sgt_kernel::tma_transpose_passes;
  int (*tma_box_inner)(const sgt_kernel::Geometry&, bool, bool) = sgt_kernel::tma_box_inner;
  int (*tma_box_outer)(const sgt_kernel::Geometry&, bool, bool) = sgt_kernel::tma_box_outer;
  sgt_kernel::TmaLayout (*make_tma_layout)(const sgt_kernel::Geometry&, bool, bool,
                                           int) = sgt_kernel::make_tma_layout;
};

// Simulates every thread of one block for one k-slice plus the epilogue, in the given layout, as
// the kernel instance runs it. A whole slice takes the main loop where it runs (see SimCase): no
// guard, float4 or single-float loads from pointers clamped into the matrix in M and N; every read
// must lie inside the matrix (and, for float4s, be 16-byte aligned), and what a clamped read brings
// in (an element of another m or n) may reach only accumulators whose C elements lie outside the
// matrix. A partial slice, and every slice of a float4 instance whose operands refuse float4s,
// takes the guarded edge loop (an element outside the matrix is stored as 0, never read; the guard
// tests the unclamped coordinates, the reads go through the pass pointers). Then the compute
// loop's shared-memory reads (float4 where TM, TN allow) and the epilogue (float4 stores where the
// tile is whole, else each C element only inside the matrix). Global float4 alignment is judged
// for leading dimensions and pointers that allow 16-byte accesses. A degenerate or absurdly large
// geometry, or a remainder outside 0..tile, is reported as degenerate_geometry alone, without
// running the loops.
//
// A TMA-fed config replaces the loads by the kernel's producer, for every stage of the ring at
// once (the steady state, every stage live), in one model of the block's dynamic shared memory
// (make_tma_layout's offsets from the 1024-byte aligned base). Each copy is the box the host
// encodes (tma_box_inner x tma_box_outer, 16-byte chunks swizzled for a staged operand as the
// hardware does: bits [4:6] ^= bits [7:9] of the shared-memory address for 128-byte rows, [4:5] ^=
// [7:8] for 64-byte ones), started at the block's (m or n, k) corner of the operand as stored,
// zeros outside the matrix; the encoder's box limits hold. A straight copy must fill the stage's
// As (Bs) tile, every (k, m) with op(A)'s element, nothing past it; tma_staged_index must name
// where the hardware puts each staged element; the producer warpgroup's tma_transpose passes must
// write every element of the tile exactly once, with the staged value for its (m, k), nothing
// outside the tile's rows. Staging rings, As and Bs rings must not overlap, staging boxes start
// 1024-byte and As/Bs stages 128-byte aligned, all within SMEM_BYTES - kTmaAlignBytes; the
// barriers expect the bytes the copies bring and the arrivals the producer makes; consumers and
// producer are whole warpgroups (setmaxnreg). Then the consumers' compute loop (float4 reads of
// As and Bs) and the direct epilogue, from the first stage's tile.
SimReport simulate_block(const WarpTileConfig& c, const SimCase& sc = {});
SimReport simulate_block_with(const WarpTileConfig& c, const SimCase& sc, const SimIndexing& ix);

// The launch of an M x N x K problem (launch_dims): the block order over the ceil(M/BM) x
// ceil(N/BN) grid with GROUP_M must visit every tile exactly once, and the SPLIT_K ranges must
// cover every k in [0, K) exactly once, none empty, each starting on a whole BK slice, with a
// workspace that holds every split's partial product; for ws_tma, the slices each split's copies
// bring (whole BK boxes, zeros only past K) must also take every k exactly once. Then, in every
// layout, the launch's last
// block (the corner of the grid, in the last split) through simulate_block, on the kernel instance
// the tuner picks for the problem (kernel_vec_loads: vec_kernel = vec_loads, the float4 instance
// where both operands allow float4s, else the scalar one): its last whole k-slice, or its partial
// one if it has no whole one (grid_cases); for ws_tma, its last slice in every layout, partial
// where K leaves one. Defects of a block name its case.
SimReport simulate_grid(const WarpTileConfig& c, int M, int N, int K);
// The launch alone, without its blocks: the block order and the split-K ranges (the checks
// simulate_grid makes before it replays blocks), for a family whose blocks are simulated by a
// replay of its own (tf32x3).
SimReport simulate_launch(const WarpTileConfig& c, int M, int N, int K);
SimReport simulate_grid_with(const WarpTileConfig& c, int M, int N, int K, const SimIndexing& ix);
// The blocks simulate_grid replays for an M x N x K launch (none for an empty problem or launch).
std::vector<SimCase> grid_cases(const WarpTileConfig& c, int M, int N, int K);

// The cases simulate_config runs: the four layouts with whole tiles (float4 instance), then
// boundary blocks in every layout with remainders 1, tile-3, tile/2+1 and tile-1 spread over M, N
// and K, each dimension also left whole in one of them: on the float4 instance with operands that
// refuse float4s (edge loop only); on the float4 instance with float4 loads, whose remainders are
// multiples of 4 where a float4 runs along M or N (operands refuse float4s otherwise); and on the
// scalar instance, three per layout: whole slices at remainders tile-3 and 1 in M and N (a float4
// straddling the end of the matrix), both ways round, and a partial slice. A PACK config instead
// gets the one instance it runs, TN float4 on panels (SimCase::panel), at odd remainders in M and
// N and partial slices. A TMA-fed config: the four layouts whole, then five boundary blocks per
// layout with remainders 1, tile-3, tile/2+1 and tile-1 over M, N and K.
std::vector<SimCase> standard_cases(const WarpTileConfig& c);
// The grids (M, N, K) simulate_config runs: grids with partial tiles, a partial last group of
// GROUP_M rows, and K values that leave the last split short, a single k, or fewer splits than
// SPLIT_K; three with odd M, N and K (the scalar instance in every layout; in the last one its
// main loop, the last split holding a whole slice), one with M, N and K multiples of 4 (the float4
// instance in every layout), one with only M odd (the float4 instance where A is read along K).
struct SimGrid {
  int M, N, K;
};
std::vector<SimGrid> standard_grids(const WarpTileConfig& c);

// The problems and waves (SMs x resident blocks) a TAIL 1 config's wave-aware tail is replayed
// on: last waves nearly empty, partial tiles at the edges, a tail of more than one block row, and
// tiles that fill whole waves (no tail).
struct TailGrid {
  int M, N, K;
  long long slots;
};
std::vector<TailGrid> tail_grids();
// A TAIL 1 config's call on `g` (launch_tail.h's plan, through ix.plan_tail): the first launch's
// blocks 0 .. tiles - tail - 1 in the whole grid's block order and the tail's blocks in its
// sub-problem's, from its first row and column, compute every tile of C exactly once (raster_*),
// the tail starts on whole tiles and covers the grid's last rows and columns, and its launch is
// replayed as the split launch of its sub-problem (simulate_grid_with); no tail: nothing to check.
SimReport simulate_tail_launch(const WarpTileConfig& c, const TailGrid& g, const SimIndexing& ix);

// The cp.async ring of a family warptile_ring config (ring_lead, ring_wait and ring_buffer of
// warptile_ring.h) over 1 to 2 * STAGES + 1 whole k-slices: every slice copied into a buffer of
// the ring whose slice was computed, and computed from the buffer that holds it after its commit
// group landed (pipeline_overwrite, pipeline_not_landed, smem_overflow). An empty report for a
// config of another family.
SimReport simulate_ring(const WarpTileConfig& c, const SimIndexing& ix = {});

// Everything at once, as the config's kernel family simulates it (KernelFamily::simulate); a
// family without a simulation gives the one defect not_simulated.
SimReport simulate_config(const WarpTileConfig& c);
// The simulation of the two built-in families (the warp-tiling template and the TMA-fed kernel):
// standard_cases() through simulate_block and standard_grids() through simulate_grid (a grid's
// block that equals one already simulated runs once). Each defect's detail names the case it was
// found in ("[TN edge 65x1 k1 scalar-kernel] ...") and how many other cases show the same kind.
SimReport simulate_warptile_config(const WarpTileConfig& c);
// simulate_config for many configs, on up to `threads` threads (0: one per hardware thread);
// report i belongs to configs[i].
std::vector<SimReport> simulate_configs(const std::vector<WarpTileConfig>& configs,
                                        unsigned threads = 0);
// One line saying what simulate_warptile_config covers, for command output; the scope of a
// config's simulation is its family's simulation_scope().
std::string simulate_config_scope();

}  // namespace sgt
