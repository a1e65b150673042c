// The CPU index simulation of the split-TF32 kernel (sgemm_tf32x3.cuh, family tf32x3): replays the
// kernel's own index functions (tf32x3_geometry.h) for every thread of a block and checks them
// against an independent statement of what the block must do. What mma.sync computes is stated
// here from the PTX ISA's fragment layouts of m16n8k8 (tf32), not taken from the header.
#pragma once

#include <string>
#include <vector>

#include "config.hpp"
#include "index_sim.hpp"
#include "tf32x3_geometry.h"

namespace sgt::tf32x3 {

using sgt_kernel::Tf32x3Geometry;

// The kernel's index functions the simulation replays. The defaults are tf32x3_geometry.h's;
// tests swap one for a broken variant to prove the simulation notices.
struct Indexing {
  Tf32x3Geometry (*make_geometry)(int, int, int, int, int, int, bool,
                                  bool) = sgt_kernel::make_tf32x3_geometry;
  int (*a_slot)(const Tf32x3Geometry&, bool, int, int) = sgt_kernel::tf32x3_a_slot;
  int (*b_slot)(const Tf32x3Geometry&, bool, int, int) = sgt_kernel::tf32x3_b_slot;
  int (*warp_m0)(const Tf32x3Geometry&, int) = sgt_kernel::tf32x3_warp_m0;
  int (*warp_n0)(const Tf32x3Geometry&, int) = sgt_kernel::tf32x3_warp_n0;
  int (*lane_group)(int) = sgt_kernel::tf32x3_lane_group;
  int (*lane_thread)(int) = sgt_kernel::tf32x3_lane_thread;
  int (*a_frag_m)(int, int) = sgt_kernel::tf32x3_a_frag_m;
  int (*a_frag_k)(int, int) = sgt_kernel::tf32x3_a_frag_k;
  int (*b_frag_k)(int, int) = sgt_kernel::tf32x3_b_frag_k;
  int (*b_frag_n)(int) = sgt_kernel::tf32x3_b_frag_n;
  int (*acc_m)(int, int) = sgt_kernel::tf32x3_acc_m;
  int (*acc_n)(int, int) = sgt_kernel::tf32x3_acc_n;
  int (*copy_width)(bool) = sgt_kernel::tf32x3_copy_width;
  int (*copy_passes)(int, int, bool, int) = sgt_kernel::tf32x3_copy_passes;
  int (*copy_row_step)(int, bool, int) = sgt_kernel::tf32x3_copy_row_step;
  int (*copy_row)(int, bool, int) = sgt_kernel::tf32x3_copy_row;
  int (*copy_col)(int, bool, int) = sgt_kernel::tf32x3_copy_col;

  bool is_kernels() const;  // every function is tf32x3_geometry.h's own
};

// One block of a config: the instance (layout, 16-byte or 4-byte copies) and where the matrix
// ends. The remainders place the block as in SimCase (index_sim.hpp): 0, the matrix goes on past
// the tile; 1..tile, it ends after that many rows (m_rem), columns (n_rem), or k of the last
// stage's slice (k_rem).
struct BlockCase {
  bool trans_a = false, trans_b = false;
  bool vec = true;
  int m_rem = 0, n_rem = 0, k_rem = 0;
  // What the case replays besides the copies: the fragment reads (which depend on the layout and
  // the remainders, not on the copy width, once every slot holds its element) and the epilogue
  // (which depends on the remainders in M and N alone).
  bool fragments = true, epilogue = true;
};
std::string describe(const BlockCase& bc);

// Every thread of one block with every stage of the ring filled (stage t holding slice t, the last
// one partial by k_rem): each stage's A and B slices written exactly once by the cp.async copies
// (every element of the slice inside the matrix, zeros outside it), only inside the padded rows
// of their stage and the block's dynamic shared memory, 16-byte copies aligned at both ends, reads
// only inside the matrix and the block's slice; every mma fragment read (from the first and the
// last stage) inside the stored tile, not from padding, holding the element of op(A) (op(B)) that
// the m16n8k8 fragment layout puts in that register (zero past k), the k-steps taking each k of a
// slice once; and the epilogue storing each accumulator at the C element its mma computes, each C
// element of the block tile inside the matrix once, none outside, pairs aligned.
SimReport simulate_block(const WarpTileConfig& c, const BlockCase& bc, const Indexing& ix = {});
// The cases simulate() runs: the four layouts with both copy widths, whole and at five boundary
// blocks (remainders 1, tile-3, tile/2+1, tile-1 over M, N and K); the fragment reads with the
// 16-byte copies, the epilogue in NN.
std::vector<BlockCase> block_cases(const WarpTileConfig& c);
// The kernel's ring of stages, as sgemm_tf32x3.cuh writes it (STAGES - 1 slices copied ahead,
// wait_group STAGES - 2, slice t in stage t % STAGES), for 1 to 2 STAGES + 1 slices: every slice
// computed from its stage after its copies have landed, and no copy into a stage whose slice is
// still to be computed.
SimReport simulate_pipeline(const WarpTileConfig& c);
// Everything: block_cases() through simulate_block, the pipeline, and the launch (block order,
// split-K ranges) of standard_grids(c). Each defect's detail names the case it was found in.
SimReport simulate(const WarpTileConfig& c, const Indexing& ix = {});
std::string simulation_scope();

}  // namespace sgt::tf32x3
