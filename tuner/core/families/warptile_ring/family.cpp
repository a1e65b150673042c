// The warp-tiling kernel fed by a ring of cp.async copies (sgemm_warptile_ring.cuh): the tiles,
// knobs and indexing of family warptile, with STAGES 3 or 4 shared-memory buffers that cp.async
// fills STAGES - 1 k-slices ahead, bypassing registers (issue 38: the narrow problems' double
// buffer waits on its global loads; docs/experiments/2026-12-07-cp-async-ring.md). cp.async
// cannot transpose, so every copy is straight: an operand stored k-major goes into k-major
// buffers, one stored with k contiguous (A of NN and NT, B of NT and TT) into k-contiguous ones
// (warptile_ring.h), so the float4 instance of every layout runs the ring (PACK's panels run the
// TN one). The instance for operands that refuse float4s is sgemm_warptile's double buffer with
// the same tiles (the STAGES 2 twin), from the same program, so a config serves any operands; the
// shape rule shape_warptile_ring keeps the tuner from measuring a config where it would run the
// twin. sm_80 and later (cp.async).
#include <algorithm>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "families/fixed_fields.hpp"
#include "families/warptile/rules.hpp"
#include "family.hpp"
#include "index_sim.hpp"
#include "problem.hpp"
#include "warptile_geometry.h"
#include "warptile_ring.h"

namespace sgt {

namespace {

constexpr int kMinArch = 80;

const std::vector<RuleInfo>& own_rules() {
  static const std::vector<RuleInfo> kOwnRules = {
      {"ring_stages",
       "in family warptile_ring, STAGES is 3 or 4: the ring's buffers (static_assert "
       "pipeline_stages)",
       false},
      {"ring_stage_c",
       "in family warptile_ring, STAGE_C is 0: the ring's kernel stores C from registers "
       "(static_assert stage_c_flag)",
       false},
      {"ring_architecture", "family warptile_ring only on sm_80 and later, which have cp.async",
       false},
      {"ring_shared_memory",
       "in family warptile_ring, the ring's buffers of every instance fit the static shared "
       "memory: STAGES * 4 * (max(BK*(BM+PAD_A), BM*BK+4*BM/TM) + max(BK*(BN+PAD_B), "
       "BN*BK+4*BN/TN)) bytes (k-major or k-contiguous buffers, by layout)",
       false},
  };
  return kOwnRules;
}

const RuleInfo& own(std::string_view name) {
  return find_rule(own_rules(), "warptile_ring", name);
}

// The config whose sgemm_warptile instance serves the calls the ring cannot: the same tiles
// double-buffered.
WarpTileConfig twin(const WarpTileConfig& c) {
  WarpTileConfig t = c;
  t.family = "warptile";
  t.STAGES = 2;
  return t;
}

// Whether a call runs the ring: PACK's panels always, else operands that take float4s (every
// copy straight, into k-major or k-contiguous buffers by layout).
bool runs_ring(const WarpTileConfig& c, std::string_view, bool vec) {
  return c.PACK == 1 || vec;
}

// The bytes of the ring's buffers in the instance for A, B stored transposed or not (PACK: TN).
long long ring_bytes(const WarpTileConfig& c, bool trans_a, bool trans_b) {
  const auto g = derive(c);
  const bool a_kc = !c.PACK && sgt_kernel::ring_a_kc(trans_a);
  const bool b_kc = !c.PACK && sgt_kernel::ring_b_kc(trans_b);
  const long long a = a_kc ? sgt_kernel::kc_size(c.BM, c.BK, c.TM) : g.AS_SIZE;
  const long long b = b_kc ? sgt_kernel::kc_size(c.BN, c.BK, c.TN) : g.BS_SIZE;
  return static_cast<long long>(c.STAGES) * (a + b) * static_cast<long long>(sizeof(float));
}
// The most any instance takes: NT's (both k-contiguous), TN's (both k-major), or a mix.
long long max_ring_bytes(const WarpTileConfig& c) {
  long long most = 0;
  for (bool ta : {false, true})
    for (bool tb : {false, true}) most = std::max(most, ring_bytes(c, ta, tb));
  return most;
}

class WarptileRing final : public KernelFamily {
 public:
  std::string_view id() const override { return "warptile_ring"; }
  std::string_view description() const override {
    return "warp-tiling template fed by a ring of cp.async copies (STAGES 3-4) into k-major or "
           "k-contiguous buffers by layout, on every float4 instance and PACK's panels; the "
           "double buffer for operands that refuse float4s (sgemm_warptile_ring.cuh, sm_80 and "
           "later)";
  }
  std::string_view name_prefix() const override { return "wr_"; }

  const std::vector<RuleInfo>& rules() const override {
    static const std::vector<RuleInfo> list = [] {
      std::vector<RuleInfo> r;
      for (const char* name :
           {"wmiter_divisibility", "positive_values", "warp_tiles_cover_block", "thread_count",
            "subtile_divisibility", "subtile_lane_grid", "load_stride_a", "load_stride_b",
            "float4_alignment", "pad_alignment", "fma_order", "pack_flag", "tail_flag"})
        r.push_back(warptile::rule(name));
      r.push_back(own("ring_stages"));
      r.push_back(own("ring_stage_c"));
      for (const char* name : {"max_threads_per_block", "shared_memory", "accumulator_budget",
                               "resident_threads", "resident_blocks", "register_cap"})
        r.push_back(warptile::rule(name));
      r.push_back(own("ring_shared_memory"));
      r.push_back(own("ring_architecture"));
      return r;
    }();
    return list;
  }
  std::optional<std::string> impossible_value(std::string_view field, int v) const override {
    if (auto why = warptile::impossible_value(field, v)) return why;
    if (field == "STAGES" && (v < sgt_kernel::kMinRingStages || v > sgt_kernel::kMaxRingStages))
      return "rule ring_stages: STAGES must be 3 or 4 in family warptile_ring";
    if (field == "STAGE_C" && v != 0)
      return "rule ring_stage_c: STAGE_C must be 0 in family warptile_ring";
    return std::nullopt;
  }

  void check(const WarpTileConfig& c, const Limits& limits,
             std::vector<RuleViolation>& out) const override {
    if (!warptile::products_fit(c, {}, out)) return;
    warptile::check_tiling(c, out);
    warptile::check_loaders(c, out);
    warptile::check_float4(c, out);
    warptile::check_knobs(c, out);
    if (c.STAGES < sgt_kernel::kMinRingStages || c.STAGES > sgt_kernel::kMaxRingStages) {
      out.push_back({"ring_stages",
                     fmt::format("STAGES = {}: the ring has 3 or 4 buffers (STAGES 1 and 2 are "
                                 "family warptile's)",
                                 c.STAGES)});
    }
    if (c.STAGE_C != 0) {
      out.push_back(
          {"ring_stage_c",
           fmt::format("STAGE_C = {}: the ring's kernel stores C from registers", c.STAGE_C)});
    }
    // The ring's copies bypass registers: no prefetch held there (the twin's double buffer,
    // which does hold it, serves only calls the tuner does not measure it on).
    warptile::check_block(c, limits, false, out);
    if (const long long bytes = max_ring_bytes(c); bytes > limits.max_static_shared_bytes) {
      out.push_back({"ring_shared_memory",
                     fmt::format("the ring's buffers take {} bytes in the instance of some layout "
                                 "(k-contiguous rows of BK floats, {} of pad every TM or TN "
                                 "rows), over the limit {}",
                                 bytes, sgt_kernel::kKcPad, limits.max_static_shared_bytes)});
    }
    if (!implemented_for(limits.compute_capability)) {
      out.push_back({"ring_architecture",
                     fmt::format("warptile_ring needs sm_{} or later (cp.async), not sm_{}",
                                 kMinArch, limits.compute_capability)});
    }
  }

  // shape_warptile_ring: the problem's instance runs the ring (operands that take float4s, in any
  // layout, or PACK 1); otherwise the config would measure its double-buffered twin again.
  std::vector<std::string_view> shape_rules() const override {
    return {"shape_warptile_ring", warptile::kShapeTail};
  }
  void check_shape(const WarpTileConfig& c, const Problem& p, const Limits&,
                   std::vector<RuleViolation>& out) const override {
    warptile::check_tail_shape(c, p, out);
    if (runs_ring(c, p.layout, kernel_vec_loads(p))) return;
    out.push_back(
        {"shape_warptile_ring",
         fmt::format("{} {} runs no ring: its operands refuse float4s (alignment, leading "
                     "dimensions or an odd extent along a float4), which cp.async needs, and "
                     "PACK is 0; the call would run the double buffer",
                     p.shape(), p.layout)});
  }

  // The ring's kernel, the template it includes (its helpers, the double-buffered twin, the pack
  // and split-K reduction kernels) and both headers.
  std::vector<KernelSourceFile> sources() const override {
    return {embedded_kernel_file("sgemm_warptile_ring.cuh"), embedded_kernel_file(kKernelMainFile),
            embedded_kernel_file("warptile_geometry.h"), embedded_kernel_file("warptile_ring.h")};
  }

  std::string name_expression(const WarpTileConfig& c, std::string_view layout,
                              bool vec) const override {
    if (runs_ring(c, layout, vec)) {
      const bool ta = c.PACK || layout[0] == 'T', tb = !c.PACK && layout[1] == 'T';
      return fmt::format("sgemm_warptile_ring<{},{},{}>", warptile::template_arguments(c),
                         ta ? 1 : 0, tb ? 1 : 0);
    }
    return warptile::name_expression(twin(c), layout, vec);
  }
  std::pair<std::string_view, bool> instance(const WarpTileConfig& c, std::string_view layout,
                                             bool vec) const override {
    // PACK runs the TN float4 instance on the packed panels, whatever the problem's layout.
    if (c.PACK) return {"TN", true};
    return {layout, vec};
  }
  bool implemented_for(int arch_number) const override { return arch_number >= kMinArch; }
  std::string_view architecture_rule() const override { return "ring_architecture"; }
  std::string refusal_on(std::string_view arch) const override {
    return fmt::format("rule ring_architecture: the cp.async ring needs sm_80 or later, not {}",
                       arch);
  }

  int block_threads(const WarpTileConfig& c) const override { return c.NUM_THREADS; }
  // The ring's buffers in the layout's instance (its twin, on the calls it serves, takes less).
  long long block_shared_bytes(const WarpTileConfig& c, bool trans_a, bool trans_b) const override {
    return ring_bytes(c, trans_a, trans_b);
  }

  nlohmann::json derived(const WarpTileConfig& c) const override {
    return warptile::derived_geometry(c);
  }
  std::string derived_line(const WarpTileConfig& c) const override {
    return warptile::geometry_line(c);
  }

  // The warp-tiling replay (the ring's kernel and its twin index with the same functions), and the
  // ring's schedule.
  std::optional<SimReport> simulate(const WarpTileConfig& c) const override {
    return simulate_warptile_config(c);
  }
  std::string simulation_scope() const override {
    return simulate_config_scope() +
           "; the cp.async ring over 1 to 2*STAGES+1 slices (copies into computed buffers only, "
           "computes after their group landed)";
  }
};

}  // namespace

std::unique_ptr<KernelFamily> make_warptile_ring_family() {
  return std::make_unique<WarptileRing>();
}

}  // namespace sgt
