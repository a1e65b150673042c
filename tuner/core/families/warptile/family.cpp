// The warp-tiling family (sgemm_warptile.cuh): threads load each k-slice into shared memory, warps
// compute their tiles from it. The family of configs that name none, and of TMA = 0 in earlier
// releases' names, JSON, spaces and databases.
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "families/warptile/rules.hpp"
#include "family.hpp"
#include "index_sim.hpp"
#include "warptile_geometry.h"

namespace sgt {

namespace {

class Warptile final : public KernelFamily {
 public:
  std::string_view id() const override { return "warptile"; }
  std::string_view description() const override {
    return "warp-tiling template: threads load the k-slices (sgemm_warptile.cuh)";
  }
  std::optional<int> legacy_tma() const override { return 0; }
  std::string_view name_prefix() const override { return "wt_"; }

  const std::vector<RuleInfo>& rules() const override {
    static const std::vector<RuleInfo> list = [] {
      std::vector<RuleInfo> r;
      for (const char* name :
           {"wmiter_divisibility", "positive_values",       "warp_tiles_cover_block",
            "thread_count",        "subtile_divisibility",  "subtile_lane_grid",
            "load_stride_a",       "load_stride_b",         "float4_alignment",
            "pad_alignment",       "pipeline_stages",       "fma_order",
            "pack_flag",           "stage_c_flag",          "tail_flag",
            "stage_c_buffer",      "max_threads_per_block", "shared_memory",
            "accumulator_budget",  "resident_threads",      "resident_blocks",
            "register_cap"})
        r.push_back(warptile::rule(name));
      return r;
    }();
    return list;
  }
  std::optional<std::string> impossible_value(std::string_view field, int v) const override {
    if (auto why = warptile::impossible_value(field, v)) return why;
    if (field == "STAGES" && v != 1 && v != 2) return "rule pipeline_stages: STAGES must be 1 or 2";
    return std::nullopt;
  }

  void check(const WarpTileConfig& c, const Limits& limits,
             std::vector<RuleViolation>& out) const override {
    if (!warptile::products_fit(c, {}, out)) return;
    warptile::check_tiling(c, out);
    warptile::check_loaders(c, out);
    warptile::check_float4(c, out);
    warptile::check_knobs(c, out);
    if (c.STAGES != 1 && c.STAGES != 2) {
      out.push_back(
          {"pipeline_stages",
           fmt::format("STAGES = {}: the kernel has a single-buffer (1) and a double-buffer (2) "
                       "loop",
                       c.STAGES)});
    }
    // The double-buffered loop also holds the next slice's float4s in registers.
    warptile::check_block(c, limits, c.STAGES > 1, out);
  }

  std::vector<std::string_view> shape_rules() const override { return {warptile::kShapeTail}; }
  void check_shape(const WarpTileConfig& c, const Problem& p, const Limits&,
                   std::vector<RuleViolation>& out) const override {
    warptile::check_tail_shape(c, p, out);
  }

  std::vector<KernelSourceFile> sources() const override {
    return {embedded_kernel_file(kKernelMainFile), embedded_kernel_file("warptile_geometry.h")};
  }

  std::string name_expression(const WarpTileConfig& c, std::string_view layout,
                              bool vec) const override {
    return warptile::name_expression(c, layout, vec);
  }
  std::pair<std::string_view, bool> instance(const WarpTileConfig& c, std::string_view layout,
                                             bool vec) const override {
    // PACK runs the TN float4 instance on the packed panels, whatever the problem's layout.
    if (c.PACK) return {"TN", true};
    return {layout, vec};
  }

  int block_threads(const WarpTileConfig& c) const override { return c.NUM_THREADS; }
  long long block_shared_bytes(const WarpTileConfig& c, bool, bool) const override {
    return derive(c).SMEM_BYTES;
  }

  nlohmann::json derived(const WarpTileConfig& c) const override {
    return warptile::derived_geometry(c);
  }
  std::string derived_line(const WarpTileConfig& c) const override {
    return warptile::geometry_line(c);
  }

  std::optional<SimReport> simulate(const WarpTileConfig& c) const override {
    return simulate_warptile_config(c);
  }
  std::string simulation_scope() const override { return simulate_config_scope(); }
};

}  // namespace

std::unique_ptr<KernelFamily> make_warptile_family() {
  return std::make_unique<Warptile>();
}

}  // namespace sgt
