// The CPU index simulation of the split-TF32 kernel on wgmma (sgemm_tf32x3_wgmma.cuh, family
// tf32x3_wg): replays the kernel's own index functions (tf32x3_wg_geometry.h) for its prepass
// (tf32x3_split_operand, every thread of every block) and its epilogue (every consumer thread of
// every block of a launch), and checks them against an independent statement of what each must
// do. The tile kernel's operands arrive by tensor copies of whole boxes, so what is left to prove
// there is the arithmetic around them: the panel workspace, the k-slices the copies take (each
// split's, for split-K), the ring's shared memory, the barriers' byte counts and where a split
// writes its partial product.
#pragma once

#include <string>
#include <vector>

#include "config.hpp"
#include "index_sim.hpp"
#include "tf32x3_wg_geometry.h"

namespace sgt::tf32x3_wg {

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

  bool is_kernels() const;  // every function is the kernel's own
};

// One launch of the prepass on an operand X of R rows (op(A): M, op(B)^T: N) and K columns,
// stored k-contiguous (R rows of ldx floats) or not (K rows of ldx floats).
struct PrepassCase {
  int R = 1, K = 1, ldx = 1;
  bool k_contig = true;
};
std::string describe(const PrepassCase& pc);

// Every thread of every block of the prepass's grid: every read inside the stored matrix (and
// only of the R x K elements of op(X)), every slot of the transposing tile written once before it
// is read and read with the element the store asks for, every element of both panels (R rows of
// Kp floats) written exactly once, nothing outside them, with X(r, k) for k < K and zero for
// K <= k < Kp.
SimReport simulate_prepass(const PrepassCase& pc, const Indexing& ix = {});
// The cases simulate() runs: R and K around the 32 x 32 tile and the 4-float row rounding, both
// storages, at the smallest leading dimension and a padded one.
std::vector<PrepassCase> prepass_cases();
// The workspace of an M x N x K call: Kp a multiple of 4 in K..K+3, the four panels inside the
// workspace, disjoint, each starting on a 16-byte unit (as a tensor map's base must).
SimReport simulate_workspace(int M, int N, int K, const Indexing& ix = {});
// Every consumer thread of every block of an M x N launch (the launch plan's grid from the
// config's BM and BN, the kernel's block order with its GROUP_M): each accumulator stored at the
// C element that the wgmma D fragment layout gives it (row 16 warp + lane / 4 + 8 ((i / 2) % 2)
// of its warpgroup's 64, column 8 (i / 4) + 2 (lane % 4) + i % 2), only inside the block tile and
// the matrix, each C element written exactly once; pairs (`pairs`: C 8-byte aligned, ldc even)
// stored as aligned float2s.
SimReport simulate_epilogue(const WarpTileConfig& c, int M, int N, bool pairs,
                            const Indexing& ix = {});
// The tile kernel's ring and copies: each stage's four boxes (kWgBK x kWgBM floats, as the maps
// are encoded) within the encoder's limits and 1024-byte aligned in the ring, the ring within the
// dynamic shared memory, the full barrier expecting the bytes the four copies bring, and the
// k-slices of a K taking each k < K exactly once.
SimReport simulate_tile(const WarpTileConfig& c);
// The K of an M x N x K launch as the config's entry takes it (launch_dims with the kernel's
// kWgBK and SPLIT_K, as plan_split_call plans it). The unsplit entry (SPLIT_K 1): slices 0 ..
// ceil(K / 32) - 1 into C. The split entry (SPLIT_K > 1), split z of grid_z: the slices its
// first-slice and slice-count functions give, each copied from k = slice_k(first, kb). Every k < K
// copied by exactly one slice of one split, every copy starting on a whole slice, no split empty,
// and no copy reading a k < K outside its split's range [z k_chunk, min(K, (z + 1) k_chunk))
// (only past K, where the panels' padding and TMA's fill give zeros). With grid_z > 1 every
// consumer thread of every block of every split: its accumulators stored at partial_offset(z) +
// row N + col (the placement simulate_epilogue checks), inside the workspace of grid_z M N floats
// that the launch plan allocates, every float of it written exactly once (the splits' writes
// disjoint), float2 pairs (N even, the split's offset even) aligned.
SimReport simulate_split(const WarpTileConfig& c, int M, int N, int K, const Indexing& ix = {});
// The split launches simulate() runs besides standard_grids(c): a few tiles with partial edges at
// K around SPLIT_K's slices: a single k, K not a multiple of 32, fewer slices than SPLIT_K, ragged
// last splits, and a deep K of 192 slices.
std::vector<SimGrid> split_grids(const WarpTileConfig& c);
// Everything: the prepass cases, the workspace, the tile and, over standard_grids(c), the launch
// (block order: simulate_launch), the epilogue and the K splits; over split_grids(c) the K
// splits.
SimReport simulate(const WarpTileConfig& c, const Indexing& ix = {});
std::string simulation_scope();

}  // namespace sgt::tf32x3_wg
