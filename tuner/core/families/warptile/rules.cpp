// The warp-tiling geometry's rules, shared by the families built on it.
#include "families/warptile/rules.hpp"

#include <algorithm>
#include <limits>
#include <stdexcept>
#include <string>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "kernel_source.hpp"
#include "tf32x3_wg_geometry.h"
#include "warptile_geometry.h"

namespace sgt::warptile {

namespace {

using sgt_kernel::kVec;
using sgt_kernel::kWarpSize;

void fail(std::vector<RuleViolation>& out, std::string_view rule, std::string reason) {
  out.push_back({std::string(rule), std::move(reason)});
}

// A function's static, not a namespace-scope one: the registry may be built during another
// translation unit's static initialisation (a test's constant config parses its name).
const std::vector<RuleInfo>& table() {
  static const std::vector<RuleInfo> kRules = {
      {"wmiter_divisibility", "WM*WN is a whole multiple of 32*TM*TN*WNITER (WMITER >= 1)", true},
      {"positive_values",
       "every parameter is an integer in its range (1..65536, the pads from 0), the family a "
       "registered one, and the tile products fit 32-bit index arithmetic",
       true},
      {"warp_tiles_cover_block", "warp tiles exactly tile the block tile (BM%WM, BN%WN)", true},
      {"thread_count", "NUM_THREADS == (BM/WM)*(BN/WN)*32", true},
      {"subtile_divisibility",
       "WSUBM = WM/WMITER and WSUBN = WN/WNITER are whole and divide by TM, TN", true},
      {"subtile_lane_grid", "a warp sub-tile holds exactly 32 thread tiles", true},
      {"load_stride_a",
       "the A slice's BM*BK/4 float4s are a whole multiple of NUM_THREADS (one or more passes)",
       true},
      {"load_stride_b",
       "the B slice's BK*BN/4 float4s are a whole multiple of NUM_THREADS (one or more passes)",
       true},
      {"float4_alignment",
       "BM, BN, BK, WN, TN are multiples of 4 (128-bit accesses); in family ws_tma also TM (its "
       "consumers read As as float4s only)",
       true},
      {"pad_alignment",
       "PAD_A and PAD_B are multiples of 4, so As and Bs rows start 16-byte aligned", true},
      {"pipeline_stages",
       "STAGES is 1 (single buffer) or 2 (double buffer, register prefetch); in family ws_tma, 2 "
       "to 8 ring stages",
       false},
      {"fma_order",
       "FMA_ORDER is 0 (thread-tile rows first), 1 (columns first), 2 or 3 (the same, serpentine)",
       false},
      {"pack_flag", "PACK is 0 (operands read in place) or 1 (packed into k-major panels first)",
       false},
      {"stage_c_flag",
       "STAGE_C is 0 (C stored from registers) or 1 (edge and unaligned tiles through shared "
       "memory)",
       false},
      {"tail_flag",
       "TAIL is 0 (every tile in one grid) or 1 (the wave-aware tail: the tiles past the last "
       "full wave of resident blocks run as a second launch split over K), and 1 only with "
       "SPLIT_K = 1",
       false},
      {"stage_c_buffer",
       "with STAGE_C = 1, As or Bs holds every warp's staged rows: NUM_THREADS*WNITER*TN floats",
       true},
      {"tma_flag",
       "family ws_tma (a producer warpgroup feeds the k-slices by TMA copies) takes STAGE_C = 0 "
       "(C is stored from registers)",
       false},
      {"max_threads_per_block",
       "NUM_THREADS (plus the producer warpgroup in family ws_tma) within the device's block "
       "limit",
       false},
      {"shared_memory",
       "STAGES*((BM+PAD_A)+(BN+PAD_B))*BK*4 bytes within the static shared-memory limit; in "
       "family ws_tma, the ring with both staging boxes and its barriers within the dynamic limit",
       false},
      {"accumulator_budget", "accumulators per thread within the stated budget", false},
      {"resident_threads",
       "MIN_BLOCKS*NUM_THREADS (each block with its producer warpgroup in family ws_tma) within "
       "the threads one SM holds",
       false},
      {"resident_blocks", "MIN_BLOCKS within the blocks one SM holds", false},
      {"register_cap", "the register cap implied by MIN_BLOCKS holds accumulators and fragments",
       false},
  };
  return kRules;
}

}  // namespace

const RuleInfo& rule(std::string_view name) {
  for (const auto& r : table())
    if (r.name == name) return r;
  throw std::logic_error("not a warp-tiling rule: " + std::string(name));
}

std::optional<std::string> impossible_value(std::string_view field, int v) {
  if ((field == "BM" || field == "BK" || field == "BN" || field == "WN" || field == "TN") &&
      v % kVec != 0) {
    return fmt::format("rule float4_alignment: {} must be a multiple of 4", field);
  }
  if ((field == "PAD_A" || field == "PAD_B") && v % kVec != 0) {
    return fmt::format("rule pad_alignment: {} must be a multiple of 4", field);
  }
  if (field == "PACK" && v != 0 && v != 1) return "rule pack_flag: PACK must be 0 or 1";
  if (field == "STAGE_C" && v != 0 && v != 1) return "rule stage_c_flag: STAGE_C must be 0 or 1";
  if (field == "TAIL" && v != 0 && v != 1) return "rule tail_flag: TAIL must be 0 or 1";
  if (field == "FMA_ORDER" && (v < 0 || v > 3)) {
    return "rule fma_order: FMA_ORDER must be 0, 1, 2 or 3";
  }
  if (field == "NUM_THREADS" && v % kWarpSize != 0) {
    return "rule thread_count: NUM_THREADS must be a multiple of the warp size 32";
  }
  return std::nullopt;
}

bool products_fit(const WarpTileConfig& c, std::initializer_list<long long> extra,
                  std::vector<RuleViolation>& out) {
  const long long products[] = {1LL * c.WM * c.WN, 1LL * kWarpSize * c.TM * c.TN * c.WNITER,
                                4LL * c.STAGES * (c.BM + c.PAD_A + c.BN + c.PAD_B) * c.BK,
                                1LL * c.BM * c.BN, 1LL * c.NUM_THREADS * kVec};
  const auto over = [](long long p) { return p > std::numeric_limits<int>::max(); };
  if (std::any_of(std::begin(products), std::end(products), over) ||
      std::any_of(extra.begin(), extra.end(), over)) {
    fail(out, "positive_values", "tile products overflow 32-bit index arithmetic");
    return false;
  }
  return true;
}

void check_tiling(const WarpTileConfig& c, std::vector<RuleViolation>& out) {
  const auto g = derive(c);
  const int per_pass = kWarpSize * c.TM * c.TN * c.WNITER;
  if (per_pass <= 0 || g.WMITER < 1 || g.WMITER * per_pass != c.WM * c.WN) {
    fail(out, "wmiter_divisibility",
         fmt::format("WM*WN = {} is not a whole multiple of 32*TM*TN*WNITER = {}: threads would "
                     "overlap or leave holes in C",
                     c.WM * c.WN, per_pass));
  }

  if (c.WM <= 0 || c.WN <= 0 || c.BM % c.WM != 0 || c.BN % c.WN != 0) {
    fail(out, "warp_tiles_cover_block",
         fmt::format("warp tile {}x{} does not tile block tile {}x{}", c.WM, c.WN, c.BM, c.BN));
  }

  const int warps = c.WM > 0 && c.WN > 0 ? (c.BM / c.WM) * (c.BN / c.WN) : 0;
  if (c.NUM_THREADS != warps * kWarpSize) {
    fail(out, "thread_count",
         fmt::format("NUM_THREADS = {} but (BM/WM)*(BN/WN)*32 = {}", c.NUM_THREADS,
                     warps * kWarpSize));
  }

  if (g.WMITER < 1 || c.WNITER <= 0 || c.WM % g.WMITER != 0 || c.WN % c.WNITER != 0 || c.TM <= 0 ||
      c.TN <= 0 || g.WSUBM % c.TM != 0 || g.WSUBN % c.TN != 0) {
    fail(out, "subtile_divisibility",
         fmt::format("sub-tile {}x{} (WM/WMITER = {}/{}, WN/WNITER = {}/{}) is not whole or not a "
                     "multiple of the thread tile {}x{}",
                     g.WSUBM, g.WSUBN, c.WM, g.WMITER, c.WN, c.WNITER, c.TM, c.TN));
  }

  const int lanes = sgt_kernel::safe_div(g.WSUBM, c.TM) * g.LANES_N;
  if (lanes != kWarpSize) {
    fail(out, "subtile_lane_grid",
         fmt::format("sub-tile {}x{} over thread tile {}x{} gives {} lanes, not 32", g.WSUBM,
                     g.WSUBN, c.TM, c.TN, lanes));
  }
}

void check_loaders(const WarpTileConfig& c, std::vector<RuleViolation>& out) {
  const auto g = derive(c);
  const long long per_pass_elems = 1LL * kVec * c.NUM_THREADS;
  if ((1LL * c.BM * c.BK) % per_pass_elems != 0 || g.A_PASSES < 1) {
    fail(out, "load_stride_a",
         fmt::format("A loader: the {}x{} slice is {} float4s, not a whole multiple of the {} "
                     "threads (the loop would load less than the tile, or beyond it)",
                     c.BM, c.BK, 1LL * c.BM * c.BK / kVec, c.NUM_THREADS));
  }
  if ((1LL * c.BK * c.BN) % per_pass_elems != 0 || g.B_PASSES < 1) {
    fail(out, "load_stride_b",
         fmt::format("B loader: the {}x{} slice is {} float4s, not a whole multiple of the {} "
                     "threads (the loop would load less than the tile, or beyond it)",
                     c.BK, c.BN, 1LL * c.BK * c.BN / kVec, c.NUM_THREADS));
  }
}

bool check_float4(const WarpTileConfig& c, std::vector<RuleViolation>& out) {
  if (c.BM % kVec != 0 || c.BK % kVec != 0 || c.BN % kVec != 0 || c.WN % kVec != 0 ||
      c.TN % kVec != 0) {
    fail(out, "float4_alignment",
         fmt::format("BM = {}, BN = {}, BK = {}, WN = {}, TN = {} must all be multiples of 4 for "
                     "128-bit loads and stores",
                     c.BM, c.BN, c.BK, c.WN, c.TN));
    return true;
  }
  return false;
}

void check_knobs(const WarpTileConfig& c, std::vector<RuleViolation>& out) {
  const auto g = derive(c);
  if (c.PAD_A % kVec != 0) {
    fail(out, "pad_alignment",
         fmt::format("PAD_A = {} would misalign the float4 accesses to As rows", c.PAD_A));
  }
  if (c.PAD_B % kVec != 0) {
    fail(out, "pad_alignment",
         fmt::format("PAD_B = {} would misalign the float4 accesses to Bs rows", c.PAD_B));
  }

  if (c.FMA_ORDER < 0 || c.FMA_ORDER > 3) {
    fail(out, "fma_order",
         fmt::format("FMA_ORDER = {}: the kernel knows orders 0 (rows first), 1 "
                     "(columns first), 2 and 3 (the same, serpentine)",
                     c.FMA_ORDER));
  }

  if (c.PACK != 0 && c.PACK != 1) {
    fail(
        out, "pack_flag",
        fmt::format("PACK = {}: operands are read in place (0) or packed into panels (1)", c.PACK));
  }

  if (c.STAGE_C != 0 && c.STAGE_C != 1) {
    fail(out, "stage_c_flag",
         fmt::format("STAGE_C = {}: C is stored from registers (0) or through shared memory (1)",
                     c.STAGE_C));
  }
  if (c.TAIL != 0 && c.TAIL != 1) {
    fail(out, "tail_flag",
         fmt::format("TAIL = {}: every tile in one grid (0) or the wave-aware tail (1)", c.TAIL));
  } else if (c.TAIL == 1 && c.SPLIT_K != 1) {
    fail(out, "tail_flag",
         fmt::format("TAIL = 1 with SPLIT_K = {}: the tail splits the tiles past the last full "
                     "wave over K itself, and takes an unsplit launch",
                     c.SPLIT_K));
  }
  if (c.STAGE_C == 1 && sgt_kernel::stage_buffer(g) == 0) {
    fail(out, "stage_c_buffer",
         fmt::format("STAGE_C = 1: the warps' staged rows need {} floats, more than As ({}) or "
                     "Bs ({}) holds",
                     c.NUM_THREADS / kWarpSize * sgt_kernel::stage_warp_floats(g),
                     g.STAGES * g.AS_SIZE, g.STAGES * g.BS_SIZE));
  }
}

void check_accumulators(const WarpTileConfig& c, const Limits& limits,
                        std::vector<RuleViolation>& out) {
  const auto g = derive(c);
  if (g.ACCUMULATORS > limits.max_accumulators) {
    fail(out, "accumulator_budget",
         fmt::format("{} accumulators per thread exceed the budget {}", g.ACCUMULATORS,
                     limits.max_accumulators));
  }
}

void check_resident_blocks(const WarpTileConfig& c, const Limits& limits,
                           std::vector<RuleViolation>& out) {
  if (c.MIN_BLOCKS > limits.max_blocks_per_sm) {
    fail(out, "resident_blocks",
         fmt::format("MIN_BLOCKS {} exceeds the {} blocks one SM holds", c.MIN_BLOCKS,
                     limits.max_blocks_per_sm));
  }
}

void check_block(const WarpTileConfig& c, const Limits& limits, bool prefetch,
                 std::vector<RuleViolation>& out) {
  const auto g = derive(c);
  if (c.NUM_THREADS > limits.max_threads_per_block) {
    fail(out, "max_threads_per_block",
         fmt::format("NUM_THREADS = {} exceeds the limit {}", c.NUM_THREADS,
                     limits.max_threads_per_block));
  }
  if (g.SMEM_BYTES > limits.max_static_shared_bytes) {
    fail(out, "shared_memory",
         fmt::format("STAGES*((BM+PAD_A)+(BN+PAD_B))*BK*4 = {} bytes exceeds the limit {}",
                     g.SMEM_BYTES, limits.max_static_shared_bytes));
  }
  check_accumulators(c, limits, out);
  const long long resident = static_cast<long long>(c.MIN_BLOCKS) * c.NUM_THREADS;
  if (resident > limits.max_threads_per_sm) {
    fail(out, "resident_threads",
         fmt::format("MIN_BLOCKS*NUM_THREADS = {} exceeds {} threads per SM", resident,
                     limits.max_threads_per_sm));
  }
  check_resident_blocks(c, limits, out);
  if (resident > 0) {
    // Registers are granted per thread in multiples of 8.
    const long long cap = std::min<long long>(limits.max_registers_per_thread,
                                              (limits.registers_per_sm / resident) / 8 * 8);
    const int staged = prefetch ? kVec * (g.A_PASSES + g.B_PASSES) : 0;
    const int need = g.ACCUMULATORS + g.FRAGMENTS + staged;
    if (cap < need) {
      fail(out, "register_cap",
           fmt::format("MIN_BLOCKS = {} caps registers at {} per thread, below the {} that "
                       "accumulators, fragments{} alone need",
                       c.MIN_BLOCKS, cap, need, prefetch ? " and prefetch" : ""));
    }
  }
}

void check_tail_shape(const WarpTileConfig& c, const Problem& p, std::vector<RuleViolation>& out) {
  if (c.TAIL == 0 || p.K <= 0 || c.BM <= 0 || c.BN <= 0 || c.BK <= 0) return;
  const auto d = sgt_kernel::launch_dims(p.M, p.N, p.K, c.BM, c.BN, c.BK, 1);
  const long long slices = (p.K + c.BK - 1) / c.BK;
  if (d.grid_x >= 2 && slices >= 2 * sgt_kernel::kTailMinSlices) return;
  out.push_back({std::string(kShapeTail),
                 fmt::format("TAIL 1 at {}x{}x{}: {} tile{} and {} slice{} of {}; a tail needs 2 "
                             "tiles and {} slices (two splits of {})",
                             p.M, p.N, p.K, d.grid_x, d.grid_x == 1 ? "" : "s", slices,
                             slices == 1 ? "" : "s", c.BK, 2 * sgt_kernel::kTailMinSlices,
                             sgt_kernel::kTailMinSlices)});
}

std::string template_arguments(const WarpTileConfig& c) {
  std::string args;
  for (const auto& f : kConfigFields) {
    // SPLIT_K is a launch parameter, TAIL another (the launch plan's tail): neither a template's.
    if (f.member == &WarpTileConfig::SPLIT_K || f.member == &WarpTileConfig::TAIL) continue;
    args += (args.empty() ? "" : ",") + std::to_string(c.*f.member);
  }
  return args;
}

std::string name_expression(const WarpTileConfig& c, std::string_view layout, bool vec) {
  auto flag = [](bool b) { return b ? "true" : "false"; };
  return fmt::format("{}<{},{},{},{}>", kKernelTemplateName, template_arguments(c),
                     flag(layout[0] == 'T'), flag(layout[1] == 'T'), flag(vec));
}

nlohmann::json derived_geometry(const WarpTileConfig& c) {
  const auto g = derive(c);
  return {{"WMITER", g.WMITER},         {"WSUBM", g.WSUBM},
          {"WSUBN", g.WSUBN},           {"A_PASSES", g.A_PASSES},
          {"B_PASSES", g.B_PASSES},     {"AS_LD", g.AS_LD},
          {"SMEM_BYTES", g.SMEM_BYTES}, {"ACCUMULATORS", g.ACCUMULATORS},
          {"FRAGMENTS", g.FRAGMENTS}};
}

std::string geometry_line(const WarpTileConfig& c) {
  const auto g = derive(c);
  return fmt::format(
      "WMITER {}  sub-tile {}x{}  load passes A {} B {}  AS_LD {}  shared {} B  accumulators {}  "
      "fragments {}",
      g.WMITER, g.WSUBM, g.WSUBN, g.A_PASSES, g.B_PASSES, g.AS_LD, g.SMEM_BYTES, g.ACCUMULATORS,
      g.FRAGMENTS);
}

}  // namespace sgt::warptile
