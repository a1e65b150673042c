// CPU index simulation of one block of the warp-tiling kernel: replays the kernel's loops with the
// very functions of warptile_geometry.h and reports every way its indexing goes wrong.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "config.hpp"

namespace sgt {

// One kind of defect, reported once per simulation with an example and a count.
struct SimDefect {
  // Stable name: degenerate_geometry, c_out_of_tile, c_hole, c_overlap, a_out_of_tile,
  // as_out_of_tile, as_hole, as_overlap, as_misplaced, b_out_of_tile, bs_out_of_tile, bs_hole,
  // bs_overlap, bs_misplaced, smem_read_out_of_tile, operand_mismatch, misaligned_vector.
  std::string kind;
  std::string detail;  // one concrete (thread, element) example, then how many in all
};

struct SimReport {
  std::vector<SimDefect> defects;  // at most one per kind, in the order of sim_defect_kinds()

  bool ok() const { return defects.empty(); }
  bool has(std::string_view kind) const;
  std::string summary() const;  // "kind: detail" lines, for messages
};

// Every kind simulate_block can report, in report order.
const std::vector<std::string_view>& sim_defect_kinds();

// Simulates every thread of one block for one k-step plus the epilogue. Global alignment is judged
// for K and N multiples of 4, as the shape rules guarantee. A degenerate or absurdly large geometry
// is reported as degenerate_geometry alone, without running the loops.
SimReport simulate_block(const WarpTileConfig& c);

}  // namespace sgt
