// The split-TF32 ("3xTF32") family (sgemm_tf32x3.cuh): FP32 accuracy on the TF32 tensor cores,
// each operand split into a big and a small TF32 part and three mma.sync products per k-step, the
// k-slices copied into a ring of shared-memory stages by cp.async. sm_80 and later. Of the
// precision class fp32-accurate: tuned, served and exported only on request, after its error
// against FP64 is measured (precision.hpp).
//
// Its configs read BM, BN, BK, WM, WN, STAGES, GROUP_M, SPLIT_K and NUM_THREADS; every other field
// holds one value (implied(): its names leave them out). The kernel's ACC is not a field: the name
// expression fixes it at 1 (each k-step's three products summed apart, then added to the
// accumulator by an FP32 add); ACC = 0 had 25x cuBLAS FP32's error at 4096^3 on the H200
// (docs/experiments/2026-12-03-tf32x3-kernel.md), so it is a measurement, not a knob to search.
#include <algorithm>
#include <climits>
#include <utility>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "edge_cases.hpp"
#include "families/fixed_fields.hpp"
#include "families/tf32x3/simulation.hpp"
#include "families/warptile/rules.hpp"
#include "family.hpp"
#include "index_sim.hpp"
#include "problem.hpp"
#include "tf32x3_geometry.h"

namespace sgt {

namespace {

using sgt_kernel::kMmaK;
using sgt_kernel::kMmaM;
using sgt_kernel::kMmaN;
using sgt_kernel::make_tf32x3_geometry;
using sgt_kernel::Tf32x3Geometry;

// The kernel's accumulation across k-steps (its template parameter ACC): 1, in FP32 adds.
constexpr int kAcc = 1;
// The kernel's ring depth (static_assert stages) and warp width.
constexpr int kMinStages = 2;
constexpr int kMaxStages = 8;
constexpr int kWarp = 32;
// The block tile's multiple that keeps the padded fragment reads conflict-free (static_assert
// block_tile: row length BM + 8 with BM a multiple of 32).
constexpr int kBlockMultiple = 32;
// The architecture its kernel needs: mma.sync on TF32 and cp.async (sm_80).
constexpr int kMinArch = 80;

const char* const kLayouts[] = {"NN", "NT", "TN", "TT"};

Tf32x3Geometry geometry(const WarpTileConfig& c, bool trans_a, bool trans_b) {
  return make_tf32x3_geometry(c.BM, c.BN, c.BK, c.WM, c.WN, c.STAGES, trans_a, trans_b);
}

// The kernel's thread count for the config's tiles: (BM/WM)(BN/WN)32, as its template derives it.
int kernel_threads(const WarpTileConfig& c) {
  return geometry(c, false, false).NUM_THREADS;
}

// The fields the kernel does not read, and the one value each holds.
const FixedFields& fixed_fields() {
  static const FixedFields kFixed = {
      {&WarpTileConfig::WNITER, 1},  {&WarpTileConfig::TM, 1},
      {&WarpTileConfig::TN, 1},      {&WarpTileConfig::MIN_BLOCKS, 1},
      {&WarpTileConfig::PAD_A, 0},   {&WarpTileConfig::FMA_ORDER, 0},
      {&WarpTileConfig::PAD_B, 0},   {&WarpTileConfig::PACK, 0},
      {&WarpTileConfig::STAGE_C, 0}, {&WarpTileConfig::TAIL, 0},
  };
  return kFixed;
}

// A function's static: the registry may be built during another translation unit's static
// initialisation.
const std::vector<RuleInfo>& own_rules() {
  static const std::vector<RuleInfo> kOwnRules = {
      {"tf32x3_fixed_fields",
       "in family tf32x3, the fields its kernel does not read hold one value: WNITER, TM, TN and "
       "MIN_BLOCKS 1, PAD_A, PAD_B, FMA_ORDER, PACK, STAGE_C and TAIL 0 (its names leave them "
       "out)",
       false},
      {"tf32x3_warp_grid",
       "in family tf32x3, warp tiles exactly tile the block tile: BM % WM == 0, BN % WN == 0 (the "
       "kernel's static_assert warp_grid)",
       true},
      {"tf32x3_warp_tile",
       "in family tf32x3, WM is a multiple of 16 and WN of 8: whole m16n8k8 mma tiles "
       "(static_assert warp_tile)",
       true},
      {"tf32x3_bk", "in family tf32x3, BK is a multiple of 8: whole mma k-steps (static_assert bk)",
       true},
      {"tf32x3_block_tile",
       "in family tf32x3, BM and BN are multiples of 32, which keeps the padded rows' fragment "
       "reads free of bank conflicts (static_assert block_tile)",
       false},
      {"tf32x3_copy_mapping",
       "in family tf32x3, in every layout and with 16-byte and 4-byte copies, the kernel's threads "
       "cover whole stored rows of each A and B slice and each slice in whole passes "
       "(static_asserts copy_width, copy_mapping)",
       true},
      {"tf32x3_stages",
       "in family tf32x3, STAGES is 2 to 8: a ring of cp.async stages (static_assert stages)",
       false},
      {"tf32x3_shared_memory",
       "in family tf32x3, the ring of STAGES padded A and B slices fits the dynamic shared memory "
       "of a block in the layout that needs least (the problem's layout: shape rule "
       "shape_tf32x3_shared_memory)",
       false},
      {"tf32x3_register_cap",
       "in family tf32x3, the registers the launch bounds leave each thread (NUM_THREADS, one "
       "block per SM) hold its accumulators and one k-step's split fragments",
       false},
      {"tf32x3_architecture",
       "family tf32x3 only on sm_80 and later, which have mma.sync on TF32 and cp.async", false},
  };
  return kOwnRules;
}

const RuleInfo& own(std::string_view name) {
  return find_rule(own_rules(), "tf32x3", name);
}

class Tf32x3 final : public KernelFamily {
 public:
  std::string_view id() const override { return "tf32x3"; }
  std::string_view description() const override {
    return "split TF32 (3xTF32) on the tensor cores: three mma.sync products per k-step, FP32 "
           "accumulation, cp.async stages (sgemm_tf32x3.cuh, sm_80 and later)";
  }
  Precision precision() const override { return Precision::fp32_accurate; }
  std::string_view name_prefix() const override { return "tc3_"; }
  std::vector<std::pair<int WarpTileConfig::*, int>> implied() const override {
    return fixed_fields();
  }

  const std::vector<RuleInfo>& rules() const override {
    static const std::vector<RuleInfo> list = [] {
      return std::vector<RuleInfo>{
          warptile::rule("positive_values"),
          own("tf32x3_fixed_fields"),
          own("tf32x3_warp_grid"),
          warptile::rule("thread_count"),
          own("tf32x3_warp_tile"),
          own("tf32x3_bk"),
          own("tf32x3_block_tile"),
          own("tf32x3_copy_mapping"),
          own("tf32x3_stages"),
          warptile::rule("max_threads_per_block"),
          own("tf32x3_shared_memory"),
          warptile::rule("accumulator_budget"),
          own("tf32x3_register_cap"),
          own("tf32x3_architecture"),
      };
    }();
    return list;
  }

  std::optional<std::string> impossible_value(std::string_view field, int v) const override {
    if (auto why = fixed_field_refusal(fixed_fields(), id(), field, v)) return why;
    if ((field == "BM" || field == "BN") && v % kBlockMultiple != 0)
      return fmt::format("rule tf32x3_block_tile: {} must be a multiple of 32", field);
    if (field == "BK" && v % kMmaK != 0) return "rule tf32x3_bk: BK must be a multiple of 8";
    if (field == "WM" && v % kMmaM != 0)
      return "rule tf32x3_warp_tile: WM must be a multiple of 16";
    if (field == "WN" && v % kMmaN != 0) return "rule tf32x3_warp_tile: WN must be a multiple of 8";
    if (field == "STAGES" && (v < kMinStages || v > kMaxStages))
      return "rule tf32x3_stages: STAGES must be 2 to 8 in family tf32x3";
    if (field == "NUM_THREADS" && v % kWarp != 0)
      return "rule thread_count: NUM_THREADS must be a multiple of the warp size 32";
    return std::nullopt;
  }

  void check(const WarpTileConfig& c, const Limits& limits,
             std::vector<RuleViolation>& out) const override {
    auto fail = [&](std::string_view rule, std::string reason) {
      out.push_back({std::string(rule), std::move(reason)});
    };
    // The geometry's int arithmetic: the largest stage, the tile and the thread count.
    const long long stage_bytes =
        4LL * c.STAGES * (c.BK + 8LL) * (1LL * c.BM + c.BN + 2 * sgt_kernel::kPadMn);
    if (stage_bytes > INT_MAX || 1LL * c.BM * c.BN > INT_MAX ||
        1LL * c.NUM_THREADS * kWarp > INT_MAX) {
      fail("positive_values", "tile products overflow 32-bit index arithmetic");
      return;
    }
    const std::string fixed = fixed_field_mismatches(fixed_fields(), c);
    if (!fixed.empty()) {
      fail("tf32x3_fixed_fields",
           fmt::format("tf32x3 reads none of these fields, which hold one value in the family: {}",
                       fixed));
    }
    if (c.BM % c.WM != 0 || c.BN % c.WN != 0) {
      fail("tf32x3_warp_grid",
           fmt::format("warp tile {}x{} does not tile block tile {}x{}", c.WM, c.WN, c.BM, c.BN));
    }
    const int nt = kernel_threads(c);
    if (c.NUM_THREADS != nt) {
      fail("thread_count",
           fmt::format("NUM_THREADS = {} but (BM/WM)*(BN/WN)*32 = {}", c.NUM_THREADS, nt));
    }
    if (c.WM % kMmaM != 0 || c.WN % kMmaN != 0) {
      fail("tf32x3_warp_tile",
           fmt::format("warp tile {}x{} is not whole 16x8 mma tiles (WM a multiple of 16, WN of 8)",
                       c.WM, c.WN));
    }
    if (c.BK % kMmaK != 0) {
      fail("tf32x3_bk", fmt::format("BK = {} is not whole k-steps of 8", c.BK));
    }
    if (c.BM % kBlockMultiple != 0 || c.BN % kBlockMultiple != 0) {
      fail("tf32x3_block_tile",
           fmt::format("block tile {}x{}: BM and BN must be multiples of 32 (the kernel's "
                       "conflict-free padding)",
                       c.BM, c.BN));
    }
    if (auto why = copy_mapping_failure(c, nt)) fail("tf32x3_copy_mapping", *why);
    if (c.STAGES < kMinStages || c.STAGES > kMaxStages) {
      fail("tf32x3_stages",
           fmt::format("STAGES = {}: the kernel's ring has 2 to 8 stages", c.STAGES));
    }
    if (c.NUM_THREADS > limits.max_threads_per_block) {
      fail("max_threads_per_block", fmt::format("NUM_THREADS = {} exceeds the limit {}",
                                                c.NUM_THREADS, limits.max_threads_per_block));
    }
    // The layout that needs least: a config too large even there is invalid; the shape rule
    // shape_tf32x3_shared_memory checks the problem's.
    const auto [least, least_layout] = least_shared_bytes(c);
    if (least > limits.max_dynamic_shared_bytes) {
      fail("tf32x3_shared_memory",
           fmt::format("{} stages of padded slices take {} bytes even in {}, over the dynamic "
                       "limit {}",
                       c.STAGES, least, least_layout, limits.max_dynamic_shared_bytes));
    }
    const auto g = geometry(c, false, false);
    if (g.ACCUMULATORS > limits.max_accumulators) {
      fail("accumulator_budget", fmt::format("{} accumulators per thread exceed the budget {}",
                                             g.ACCUMULATORS, limits.max_accumulators));
    }
    if (auto why = register_cap_failure(c, limits)) fail("tf32x3_register_cap", *why);
    if (!implemented_for(limits.compute_capability)) {
      fail("tf32x3_architecture",
           fmt::format("tf32x3 needs sm_{} or later (mma.sync on TF32, cp.async), not sm_{}",
                       kMinArch, limits.compute_capability));
    }
  }

  std::vector<std::string_view> shape_rules() const override {
    return {"shape_tf32x3_shared_memory"};
  }
  void check_shape(const WarpTileConfig& c, const Problem& p, const Limits& limits,
                   std::vector<RuleViolation>& out) const override {
    // check() holds the layout that needs least to the limit; a k-contiguous slice pads its rows
    // by 4 floats, an m- or n-contiguous one by 8, so the layouts differ.
    const long long bytes = geometry(c, p.layout[0] == 'T', p.layout[1] == 'T').SMEM_BYTES;
    if (bytes > limits.max_dynamic_shared_bytes)
      out.push_back({"shape_tf32x3_shared_memory",
                     fmt::format("tf32x3 in {}: {} stages of padded slices take {} bytes, over the "
                                 "dynamic limit {}",
                                 p.layout, c.STAGES, bytes, limits.max_dynamic_shared_bytes)});
  }

  // The kernel, the warp-tiling template it includes for sgemm_splitk_reduce (the split-K
  // reduction of the launch plan), and both geometry headers.
  std::vector<KernelSourceFile> sources() const override {
    return {embedded_kernel_file("sgemm_tf32x3.cuh"), embedded_kernel_file(kKernelMainFile),
            embedded_kernel_file("warptile_geometry.h"), embedded_kernel_file("tf32x3_geometry.h")};
  }

  std::string name_expression(const WarpTileConfig& c, std::string_view layout,
                              bool vec) const override {
    auto flag = [](bool b) { return b ? "true" : "false"; };
    // ACC is fixed at 1 (see kAcc): not a field, not searched.
    return fmt::format("sgemm_tf32x3<{},{},{},{},{},{},{},{},{},{},{}>", c.BM, c.BN, c.BK, c.WM,
                       c.WN, c.STAGES, c.GROUP_M, kAcc, flag(layout[0] == 'T'),
                       flag(layout[1] == 'T'), flag(vec));
  }
  // One instance per layout and copy width. The 16-byte copies need tf32x3_vec_ok: both operands
  // 16-byte aligned with leading dimensions that are multiples of 4 (any extents). The `vec` the
  // tuner asks with (kernel_vec_loads, for operands at their row lengths from aligned
  // allocations) is exactly that: it asks lda and ldb to be multiples of 4, and where a float4
  // would run along M or N, that extent, which is then the leading dimension itself.
  std::pair<std::string_view, bool> instance(const WarpTileConfig&, std::string_view layout,
                                             bool vec) const override {
    return {layout, vec};
  }
  bool implemented_for(int arch_number) const override { return arch_number >= kMinArch; }
  std::string_view architecture_rule() const override { return "tf32x3_architecture"; }
  std::string refusal_on(std::string_view arch) const override {
    return fmt::format(
        "rule tf32x3_architecture: the split-TF32 kernel needs sm_80 or later (mma.sync on TF32, "
        "cp.async), not {}",
        arch);
  }

  int block_threads(const WarpTileConfig& c) const override { return c.NUM_THREADS; }
  // All of it dynamic: the ring of stages in the layout's padding.
  long long block_shared_bytes(const WarpTileConfig& c, bool trans_a, bool trans_b) const override {
    return geometry(c, trans_a, trans_b).SMEM_BYTES;
  }
  int dynamic_shared_bytes(const WarpTileConfig& c, bool trans_a, bool trans_b) const override {
    return geometry(c, trans_a, trans_b).SMEM_BYTES;
  }
  // Its ring depth and block-tile multiple are static_asserts of the kernel too (the structural
  // rules are asserted by it as well).
  std::vector<std::string_view> asserted_rules() const override {
    return {"tf32x3_block_tile", "tf32x3_stages"};
  }

  // The 16-byte instance runs only on operands whose rows are whole 16-byte units from an aligned
  // start, and the edge cases run the instance of the tuned problem: A's and B's leading
  // dimensions rounded up to multiples of 4 and offsets to whole float4s (C keeps its odd rows,
  // so the single-float epilogue is still exercised), as ws_tma's are.
  void adjust_edge_case(const WarpTileConfig&, EdgeCheck& e) const override {
    const auto up = [](long long v) { return (v + 3) / 4 * 4; };
    e.lda = up(e.lda);
    e.ldb = up(e.ldb);
    e.offset *= 4;
  }

  ThreadWork thread_work(const WarpTileConfig& c) const override {
    const auto g = geometry(c, false, false);
    // Multiply-adds per shared-memory word read: a k-step reads 4 MI + 2 NI fragment words per
    // thread and gives each of its MI NI tiles 16 * 8 * 8 / 32 multiply-adds per product.
    const int words = 4 * g.MI + 2 * g.NI;
    return {g.ACCUMULATORS, g.FRAGMENTS, g.MI,
            words > 0 ? 32.0 * g.MI * g.NI / static_cast<double>(words) : 0.0};
  }

  nlohmann::json derived(const WarpTileConfig& c) const override {
    const auto g = geometry(c, false, false);
    nlohmann::json shared = nlohmann::json::object();
    for (const char* l : kLayouts) shared[l] = geometry(c, l[0] == 'T', l[1] == 'T').SMEM_BYTES;
    return {{"WARPS_M", g.WARPS_M},     {"WARPS_N", g.WARPS_N}, {"MMA_TILES_M", g.MI},
            {"MMA_TILES_N", g.NI},      {"KSTEPS", g.KSTEPS},   {"ACCUMULATORS", g.ACCUMULATORS},
            {"FRAGMENTS", g.FRAGMENTS}, {"ACC", kAcc},          {"SHARED_BYTES", shared}};
  }
  std::string derived_line(const WarpTileConfig& c) const override {
    const auto g = geometry(c, false, false);
    std::string shared;
    for (const char* l : kLayouts)
      shared += fmt::format("{}{} {}", shared.empty() ? "" : ", ", l,
                            geometry(c, l[0] == 'T', l[1] == 'T').SMEM_BYTES);
    return fmt::format(
        "warps {}x{}  mma tiles {}x{} per warp  k-steps {} per slice  accumulators {}  fragments "
        "{}  ACC {}  shared (dynamic) {} B",
        g.WARPS_M, g.WARPS_N, g.MI, g.NI, g.KSTEPS, g.ACCUMULATORS, g.FRAGMENTS, kAcc, shared);
  }

  std::optional<SimReport> simulate(const WarpTileConfig& c) const override {
    return tf32x3::simulate(c);
  }
  std::string simulation_scope() const override { return tf32x3::simulation_scope(); }

 private:
  // The dynamic shared memory of the layout that needs least, and that layout.
  static std::pair<long long, const char*> least_shared_bytes(const WarpTileConfig& c) {
    long long least = LLONG_MAX;
    const char* least_layout = "";
    for (const char* l : kLayouts) {
      const long long b = geometry(c, l[0] == 'T', l[1] == 'T').SMEM_BYTES;
      if (b < least) least = b, least_layout = l;
    }
    return {least, least_layout};
  }

  // Why the registers the launch bounds leave a thread cannot hold its accumulators and one
  // k-step's fragments, or nullopt.
  static std::optional<std::string> register_cap_failure(const WarpTileConfig& c,
                                                         const Limits& limits) {
    if (c.NUM_THREADS <= 0) return std::nullopt;
    const auto g = geometry(c, false, false);
    // __launch_bounds__(NUM_THREADS, 1): registers are granted per thread in multiples of 8.
    const long long cap = std::min<long long>(limits.max_registers_per_thread,
                                              (limits.registers_per_sm / c.NUM_THREADS) / 8 * 8);
    const int need = g.ACCUMULATORS + g.FRAGMENTS;
    if (cap >= need) return std::nullopt;
    return fmt::format(
        "{} threads per block leave {} registers per thread, below the {} that "
        "{} accumulators and {} fragment registers alone need",
        c.NUM_THREADS, cap, need, g.ACCUMULATORS, g.FRAGMENTS);
  }

  // Why the kernel's copies of some slice cannot be mapped onto its threads, or nullopt: every
  // layout's A and B slice with both copy widths, as tf32x3_copy_slice's static_asserts test them.
  static std::optional<std::string> copy_mapping_failure(const WarpTileConfig& c, int nt) {
    int failing = 0;
    std::string first;
    for (const char* l : kLayouts) {
      const bool ta = l[0] == 'T', tb = l[1] == 'T';
      const struct {
        const char* name;
        int rows, cols;
      } slices[] = {{"A", ta ? c.BK : c.BM, ta ? c.BM : c.BK},
                    {"B", tb ? c.BN : c.BK, tb ? c.BK : c.BN}};
      for (const auto& s : slices) {
        for (const bool vec : {true, false}) {
          if (sgt_kernel::tf32x3_copy_width_ok(s.cols, vec) &&
              sgt_kernel::tf32x3_copy_mapping_ok(s.rows, s.cols, vec, nt))
            continue;
          if (failing++ == 0)
            first = fmt::format(
                "in {} the {}-byte copies of the {} slice ({} x {} stored, {} per row, {} in all) "
                "do not map onto {} threads in whole rows and passes",
                l, vec ? 16 : 4, s.name, s.rows, s.cols,
                sgt_kernel::tf32x3_copy_per_row(s.cols, vec),
                sgt_kernel::tf32x3_copies(s.rows, s.cols, vec), nt);
        }
      }
    }
    if (failing == 0) return std::nullopt;
    return failing == 1 ? first : fmt::format("{} (and {} more instances)", first, failing - 1);
  }
};

}  // namespace

std::unique_ptr<KernelFamily> make_tf32x3_family() {
  return std::make_unique<Tf32x3>();
}

}  // namespace sgt
