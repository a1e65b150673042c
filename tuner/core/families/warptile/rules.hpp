// The rules of the warp-tiling geometry (warptile_geometry.h), shared by every family whose kernel
// is built on it: its block, warp and thread tiles, its loaders, alignment and knobs.
#pragma once

#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "config.hpp"
#include "problem.hpp"

namespace sgt::warptile {

// The rule's entry (name, summary, structural) from the warp-tiling rule table; the name must be
// one of it.
const RuleInfo& rule(std::string_view name);

// Why a value of a field breaks a rule of the geometry whatever the other fields are
// (float4_alignment, pad_alignment, pack_flag, stage_c_flag, fma_order, thread_count); the
// families' impossible_value().
std::optional<std::string> impossible_value(std::string_view field, int v);

// The tile products, and any a family adds, fit the kernels' 32-bit index arithmetic; otherwise
// positive_values is reported, alone.
bool products_fit(const WarpTileConfig& c, std::initializer_list<long long> extra,
                  std::vector<RuleViolation>& out);
// wmiter_divisibility, warp_tiles_cover_block, thread_count, subtile_divisibility,
// subtile_lane_grid.
void check_tiling(const WarpTileConfig& c, std::vector<RuleViolation>& out);
// load_stride_a, load_stride_b: the threads' float4 loaders cover each slice.
void check_loaders(const WarpTileConfig& c, std::vector<RuleViolation>& out);
// float4_alignment; true when it failed.
bool check_float4(const WarpTileConfig& c, std::vector<RuleViolation>& out);
// pad_alignment, fma_order, pack_flag, stage_c_flag, stage_c_buffer.
void check_knobs(const WarpTileConfig& c, std::vector<RuleViolation>& out);
// accumulator_budget.
void check_accumulators(const WarpTileConfig& c, const Limits& limits,
                        std::vector<RuleViolation>& out);
// resident_blocks.
void check_resident_blocks(const WarpTileConfig& c, const Limits& limits,
                           std::vector<RuleViolation>& out);

// What the block asks of an SM: max_threads_per_block, shared_memory (STAGES buffers of As and
// Bs, static), accumulator_budget, resident_threads, resident_blocks, register_cap (accumulators
// and fragments, and with `prefetch` the next slice's float4s staged in registers).
void check_block(const WarpTileConfig& c, const Limits& limits, bool prefetch,
                 std::vector<RuleViolation>& out);

// shape_ffma_tail: a TAIL 1 config's problem can have a tail on some device (two tiles or more,
// and K slices for two tail splits of kTailMinSlices, wave_tail); otherwise the config would
// measure its TAIL 0 twin's launch again under its name. Every FFMA family's check_shape.
inline constexpr std::string_view kShapeTail = "shape_ffma_tail";
void check_tail_shape(const WarpTileConfig& c, const Problem& p, std::vector<RuleViolation>& out);

// The template arguments of a config's kernel: every field but SPLIT_K and TAIL (launch
// parameters), in the fields' order.
std::string template_arguments(const WarpTileConfig& c);
// The name expression of sgemm_warptile<...> for an instance: its template arguments, then the
// layout and the loads.
std::string name_expression(const WarpTileConfig& c, std::string_view layout, bool vec);

// The geometry `check` shows (WMITER, sub-tile, load passes, AS_LD, shared bytes, accumulators,
// fragments), as JSON and as its text line.
nlohmann::json derived_geometry(const WarpTileConfig& c);
std::string geometry_line(const WarpTileConfig& c);

}  // namespace sgt::warptile
