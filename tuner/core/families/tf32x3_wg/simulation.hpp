// The CPU index simulation of the split-TF32 kernel on wgmma (sgemm_tf32x3_wgmma.cuh, family
// tf32x3_wg) and of its BF16 split (FMA_ORDER 3: sgemm_bf16x6_wgmma.cuh): replays the kernels' own
// index functions (tf32x3_wg_geometry.h) for the prepass (tf32x3_split_operand or
// bf16x6_split_operand, every thread of every block) and the epilogue (every consumer thread of
// every block of a launch), and checks them against an independent statement of what each must
// do. The tile kernel's operands arrive by tensor copies of whole boxes, so what is left to prove
// there is the arithmetic around them: the panel workspace (and, for the BF16 split, which map row
// each part's rows are copied from), the k-slices the copies take (each split's, for split-K), the
// ring's shared memory, the barriers' byte counts and where a split writes its partial product.
//
// The two formats: TF32 (FMA_ORDER 0-2) splits an operand into two parts of 4-byte floats, in
// panels with rows of Kp = K rounded up to 4, slices of kWgBK = 32 k and stages of four boxes;
// the BF16 split (FMA_ORDER 3) into three parts of 2-byte BF16 values, Kp = K rounded up to 8
// (rows still whole 16-byte units), slices of kB6BK = 64 k (the same 128-byte box rows) and
// stages of six boxes. Everything else (the prepass's blocks and threads, the block order, the
// epilogue, the partial products' placement) is the same functions for both.
#pragma once

#include <string>
#include <vector>

#include "config.hpp"
#include "index_sim.hpp"
#include "tf32x3_wg_geometry.h"

namespace sgt::tf32x3_wg {

// Whether a config of the family runs the BF16 split (sgemm_bf16x6_wgmma.cuh) rather than split
// TF32.
inline bool bf16_split(const WarpTileConfig& c) {
  return c.FMA_ORDER == 3;
}

// The kernel's index functions the simulation replays. The defaults are tf32x3_wg_geometry.h's
// (and warptile_geometry.h's block order); tests swap one for a broken variant to prove the
// simulation notices.
struct Indexing {
  int (*load_k)(int, int, int) = sgt_kernel::tf32x3_split_load_k;
  int (*load_r)(int, int) = sgt_kernel::tf32x3_split_load_r;
  int (*store_r)(int, int, int) = sgt_kernel::tf32x3_split_store_r;
  int (*store_k)(int, int) = sgt_kernel::tf32x3_split_store_k;
  long long (*src)(int, int, int, bool) = sgt_kernel::tf32x3_split_src;
  long long (*dst)(int, int, int) = sgt_kernel::tf32x3_split_dst;
  long long (*kp)(long long) = sgt_kernel::tf32x3_wg_kp;
  long long (*grid_x)(long long) = sgt_kernel::tf32x3_split_grid_x;
  long long (*grid_y)(long long) = sgt_kernel::tf32x3_split_grid_y;
  long long (*workspace_floats)(long long, long long,
                                long long) = sgt_kernel::tf32x3_wg_workspace_floats;
  long long (*panel_offset)(int, long long, long long,
                            long long) = sgt_kernel::tf32x3_wg_panel_offset;
  int (*acc_row)(int, int) = sgt_kernel::tf32x3_wg_acc_row;
  int (*acc_col)(int, int) = sgt_kernel::tf32x3_wg_acc_col;
  int (*block_tile_row)(int, int, int, int) = sgt_kernel::block_tile_row;
  int (*block_tile_col)(int, int, int, int) = sgt_kernel::block_tile_col;
  int (*split_first_slice)(int, int) = sgt_kernel::tf32x3_wg_split_first_slice;
  int (*split_slices)(int, int, int) = sgt_kernel::tf32x3_wg_split_slices;
  int (*slice_k)(int, int) = sgt_kernel::tf32x3_wg_slice_k;
  long long (*partial_offset)(int, int, int) = sgt_kernel::tf32x3_wg_partial_offset;
  // The BF16 split's own (its prepass, block order, epilogue and partials use the ones above).
  long long (*bf16_kp)(long long) = sgt_kernel::bf16x6_kp;
  long long (*bf16_workspace_values)(long long, long long,
                                     long long) = sgt_kernel::bf16x6_workspace_values;
  long long (*bf16_panel_offset)(bool, int, long long, long long,
                                 long long) = sgt_kernel::bf16x6_panel_offset;
  int (*bf16_map_plane)(int) = sgt_kernel::bf16x6_map_plane;
  // The wave-aware tail's (TAIL 1).
  sgt_kernel::WaveTail (*wave_tail)(long long, long long, int, int,
                                    long long) = sgt_kernel::wave_tail;
  int (*bf16_split_first_slice)(int, int) = sgt_kernel::bf16x6_split_first_slice;
  int (*bf16_split_slices)(int, int, int) = sgt_kernel::bf16x6_split_slices;
  int (*bf16_slice_k)(int, int) = sgt_kernel::bf16x6_slice_k;

  bool is_kernels() const;  // every function is the kernel's own
};

// One launch of the prepass on an operand X of R rows (op(A): M, op(B)^T: N) and K columns,
// stored k-contiguous (R rows of ldx floats) or not (K rows of ldx floats); bf16: the BF16
// split's prepass (bf16x6_split_operand) rather than tf32x3_split_operand.
struct PrepassCase {
  int R = 1, K = 1, ldx = 1;
  bool k_contig = true;
  bool bf16 = false;
};
std::string describe(const PrepassCase& pc);

// Every thread of every block of the prepass's grid (grid_x(K) x grid_y(R) blocks; Kp from kp, or
// bf16_kp for the BF16 split): every read inside the stored matrix (and only of the R x K elements
// of op(X)), every slot of the transposing tile written once before it is read and read with the
// element the store asks for, every element of each panel (R rows of Kp values) written exactly
// once, nothing outside it, with its part of X(r, k) for k < K and zero for K <= k < Kp. TF32: the
// big and the small panel (both written at the same dst, one model stands for both). BF16: part 0
// into the panel at `big`, part 1 into the panel at `small` and part 2 into the panel after it
// (small + R Kp), each write recorded as (element, part) and checked against its panel's part.
SimReport simulate_prepass(const PrepassCase& pc, const Indexing& ix = {});
// The cases simulate() runs: R and K around the 32 x 32 tile and the row rounding (4 floats; for
// bf16, 8 BF16 values), both storages, at the smallest leading dimension and a padded one.
std::vector<PrepassCase> prepass_cases(bool bf16 = false);
// The workspace of an M x N x K call. TF32: Kp a multiple of 4 in K..K+3, the four panels inside
// the workspace (workspace_floats), disjoint, each starting on a 16-byte unit (as a tensor map's
// base must). bf16: Kp a multiple of 8 in K..K+7, the six panels (bf16_panel_offset: A's parts 0,
// 1, 2 of M rows, B's of N rows) inside the workspace of bf16_workspace_values, disjoint, each on
// a 16-byte unit; each operand's part 2 right after its part 1 (the prepass writes it at small +
// R Kp, the "small" map's second plane); and the maps' rows: for each part j and each block row
// bm0 (a multiple of 128 below R), the box the kernel copies from plane bf16_map_plane(j), rows
// bm0.., of map j == 0 ? big (one plane at part 0) : small (two planes of R rows at part 1, R Kp
// values apart) holds, in its rows i with bm0 + i < R, part j's row bm0 + i, inside the map (not
// TMA's zero fill).
SimReport simulate_workspace(int M, int N, int K, const Indexing& ix = {}, bool bf16 = false);
// Every consumer thread of every block of an M x N launch (the launch plan's grid from the
// config's BM and BN, the kernel's block order with its GROUP_M): each accumulator stored at the
// C element that the wgmma D fragment layout gives it (row 16 warp + lane / 4 + 8 ((i / 2) % 2)
// of its warpgroup's 64, column 8 (i / 4) + 2 (lane % 4) + i % 2), only inside the block tile and
// the matrix, each C element written exactly once; pairs (`pairs`: C 8-byte aligned, ldc even)
// stored as aligned float2s.
SimReport simulate_epilogue(const WarpTileConfig& c, int M, int N, bool pairs,
                            const Indexing& ix = {});
// The tile kernel's ring and copies: each stage's boxes (TF32: four of kWgBK x kWgBM floats; the
// BF16 split: six of kB6BK x kWgBM BF16 values, kB6TileBytes each, as the maps are encoded)
// within the encoder's limits (128-byte inner rows for the 128-byte swizzle) and 1024-byte aligned
// in the ring, the ring (STAGES stages of kWgStageFloats floats or kB6StageBytes) within the
// dynamic shared memory less its alignment slack, the full barrier expecting the bytes the copies
// bring, and the k-slices (32 or 64 k) of a K taking each k < K exactly once.
SimReport simulate_tile(const WarpTileConfig& c);
// The wave-aware tail (TAIL 1) of an M x N x K launch on sm_count SMs, as plan_split_call plans it
// (launch_plan.h): wave_tail's rectangle the last block rows and columns of the grid, every tile
// of C computed by exactly one of the two launches (the first launch's blocks 0 .. tiles - r c - 1
// in the whole grid's block order, the tail's blocks in its sub-problem's, offset by its first
// block row and column), and the tail's sub-problem as simulate_split replays the split entry
// with SPLIT_K the tail's splits (each k once, each partial product once). No tail: nothing.
SimReport simulate_tail(const WarpTileConfig& c, int M, int N, int K, int sm_count,
                        const Indexing& ix = {});
struct TailGrid {
  int M, N, K, sm_count;
};
// The problems and SM counts simulate() replays a TAIL config's tail on.
std::vector<TailGrid> tail_grids();
// The K of an M x N x K launch as the config's entry takes it (launch_dims with the kernel's
// slice, kWgBK or for the BF16 split kB6BK, and SPLIT_K, as plan_split_call plans it). The unsplit
// entry (SPLIT_K 1): slices 0 .. ceil(K / BK) - 1 into C. The split entry (SPLIT_K > 1), split z
// of grid_z: the slices its first-slice and slice-count functions give (split_first_slice,
// split_slices; bf16_split_first_slice, bf16_split_slices), each copied from k = slice_k(first,
// kb) (bf16_slice_k). Every k < K
// copied by exactly one slice of one split, every copy starting on a whole slice, no split empty,
// and no copy reading a k < K outside its split's range [z k_chunk, min(K, (z + 1) k_chunk))
// (only past K, where the panels' padding and TMA's fill give zeros). With grid_z > 1 every
// consumer thread of every block of every split: its accumulators stored at partial_offset(z) +
// row N + col (the placement simulate_epilogue checks), inside the workspace of grid_z M N floats
// that the launch plan allocates, every float of it written exactly once (the splits' writes
// disjoint), float2 pairs (N even, the split's offset even) aligned.
SimReport simulate_split(const WarpTileConfig& c, int M, int N, int K, const Indexing& ix = {});
// The split launches simulate() runs besides standard_grids(c): a few tiles with partial edges at
// K around SPLIT_K's slices (of 32 k, or 64 for the BF16 split): a single k, K not a multiple of
// the slice, fewer slices than SPLIT_K, ragged last splits, and a deep K of 6144.
std::vector<SimGrid> split_grids(const WarpTileConfig& c);
// Everything, in the config's format (bf16_split(c)): the prepass cases, the workspace, the tile
// and, over standard_grids(c), the launch (block order: simulate_launch), the epilogue and the K
// splits; over split_grids(c) the K splits.
SimReport simulate(const WarpTileConfig& c, const Indexing& ix = {});
std::string simulation_scope();

}  // namespace sgt::tf32x3_wg
