// A kernel family: the one place that knows what one kernel is. Its identity and names, which
// configs it claims, its named rules and shape rules, its sources and their hash, its NVRTC
// instance, the shape of its launch and its edge cases. The registry (families/registry.cpp) lists
// every family; a config names its family by id, and the rest of the tuner asks that family instead
// of testing knobs.
#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "config.hpp"
#include "kernel_source.hpp"
#include "precision.hpp"

namespace sgt {

struct Problem;
struct EdgeCheck;
struct SimReport;

// How the tile kernel of a family is launched: the argument list the worker and sgemm_tuned pass
// it. `pointers`: sgemm_warptile's (M, N, K, alpha, A, lda, B, ldb, beta, C, ldc, k_chunk,
// partial), static shared memory. `tensor_maps`: sgemm_ws_tma's (M, N, K, alpha, map_a, map_b,
// beta, C, ldc, k_chunk, partial), tensor maps of the operands encoded by the launcher from BK and
// the padded rows, and dynamic shared memory. `split_maps`: sgemm_tf32x3_wgmma's (M, N, K, alpha,
// a_big, a_small, b_big, b_small, beta, C, ldc; a SPLIT_K > 1 config's split entry takes k_chunk
// and partial after them, on grid_z splits) after a prepass: the launch plan splits op(A) and
// op(B)^T into four k-contiguous TF32 panels in a workspace (the family's pack kernel,
// tf32x3_split_operand, launched once per operand), encodes a tensor map of each panel (box 32 x
// 128, 128-byte swizzle) and launches the tile kernel with dynamic shared memory, then the
// split-K reduction where it splits; any operands (layout, alignment, leading dimension)
// (launch_plan.h: plan_split_call, run_split_call). A new family with one of these argument lists
// needs no launch code of its own; the launch plan around it (pack, split-K reduce, workspace) is
// shared.
enum class LaunchAbi { pointers, tensor_maps, split_maps };
// "pointers", "tensor_maps", "split_maps": the names the worker protocol carries (a worker that
// knows fewer refuses the others by name).
inline std::string_view to_string(LaunchAbi a) {
  switch (a) {
    case LaunchAbi::tensor_maps:
      return "tensor_maps";
    case LaunchAbi::split_maps:
      return "split_maps";
    case LaunchAbi::pointers:
      break;
  }
  return "pointers";
}
inline std::optional<LaunchAbi> parse_launch_abi(std::string_view s) {
  if (s == "pointers") return LaunchAbi::pointers;
  if (s == "tensor_maps") return LaunchAbi::tensor_maps;
  if (s == "split_maps") return LaunchAbi::split_maps;
  return std::nullopt;
}

class KernelFamily {
 public:
  virtual ~KernelFamily() = default;

  // Stable id, stored in databases, export tables and worker requests ("warptile", "ws_tma").
  virtual std::string_view id() const = 0;
  virtual std::string_view description() const = 0;

  // The precision class of the family's kernels (precision.hpp): fp32 for FFMA kernels that
  // compute what cuBLAS FP32 pedantic computes; fp32_accurate for kernels (split TF32) that are
  // only admitted by an opt-in request, after their error against FP64 is measured.
  virtual Precision precision() const { return Precision::fp32; }

  // Which configs are this family's: those that name it (WarpTileConfig::family).
  bool claims(const WarpTileConfig& c) const { return c.family == id(); }

  // The value of the field TMA that named this family in the names, JSON, search spaces and
  // databases of releases before configs named their family by id (warptile 0, ws_tma 1); nullopt
  // for a family those releases did not have. Readers take it as an alias of the id.
  virtual std::optional<int> legacy_tma() const { return std::nullopt; }

  // Canonical names begin with the prefix and end with the suffix (after the knob suffixes);
  // families that share a prefix differ in their suffix. Fields in implied() hold the given value
  // in every config of the family and are not written in its names (the prefix says them).
  virtual std::string_view name_prefix() const = 0;
  virtual std::string_view name_suffix() const { return {}; }
  virtual std::vector<std::pair<int WarpTileConfig::*, int>> implied() const { return {}; }

  // Every rule check() may report, in the order it reports them; rules() is their union over
  // the registry.
  virtual const std::vector<RuleInfo>& rules() const = 0;
  // Why a value of a field breaks one of the family's rules whatever the other fields are ("rule
  // float4_alignment: BM must be a multiple of 4"); nullopt when some config of the family may
  // have it. A search space refuses a value that every family it selects refuses.
  virtual std::optional<std::string> impossible_value(std::string_view field, int value) const {
    (void)field, (void)value;
    return std::nullopt;
  }
  // The violated rules of a config whose fields are all in range (check() has tested that).
  virtual void check(const WarpTileConfig& c, const Limits& limits,
                     std::vector<RuleViolation>& out) const = 0;
  // Names of the shape rules check_shape() may report, and the rules themselves for a problem
  // whose layout and data type are served at all.
  virtual std::vector<std::string_view> shape_rules() const { return {}; }
  virtual void check_shape(const WarpTileConfig&, const Problem&, const Limits&,
                           std::vector<RuleViolation>&) const {}

  // The kernel files, the main file first (it is the NVRTC program; the others are headers).
  virtual std::vector<KernelSourceFile> sources() const = 0;
  // SHA-256 over sources() (each file's name as included and its bytes): every trial and cache
  // entry records it, so an edit of these files makes exactly this family's trials stale.
  const std::string& source_hash() const;

  // The NVRTC instance. The kernel's name expression for an instance (layout, float4 loads).
  virtual std::string name_expression(const WarpTileConfig& c, std::string_view layout,
                                      bool vec) const = 0;
  // The instance a problem in `layout` with float4-capable operands (`vec`) runs.
  virtual std::pair<std::string_view, bool> instance(const WarpTileConfig& c,
                                                     std::string_view layout, bool vec) const {
    (void)c;
    return {layout, vec};
  }
  // Whether the kernel has a body for an architecture ("sm_90" -> 90); a family without one is
  // refused by a named rule rather than compiled into a stub.
  virtual bool implemented_for(int arch_number) const {
    (void)arch_number;
    return true;
  }
  // The named rule a config of the family breaks on an architecture it is not implemented for,
  // and the reason a compile for one fails with, led by that rule's name.
  virtual std::string_view architecture_rule() const { return "architecture"; }
  virtual std::string refusal_on(std::string_view arch) const {
    return "rule " + std::string(architecture_rule()) + ": kernel family " + std::string(id()) +
           " is not implemented for " + std::string(arch);
  }
  // The NVRTC target for a GPU's plain architecture ("sm_90" -> "sm_90a" for a family that
  // needs the architecture-specific features).
  virtual std::string target_arch(const std::string& arch) const { return arch; }
  // The split-K reduction kernel lives in the family's sources (SPLIT_K > 1 can be served).
  virtual bool has_split_k_reduce() const { return true; }
  // The SPLIT_K of the binary a config runs (KernelInstance::binary_config, its name expression
  // and cache entry): 1 where SPLIT_K is a launch parameter alone, so that every split of a config
  // shares one binary (the default); a family whose split configs run a kernel entry of their
  // own says so here (tf32x3_wg: 2 for every SPLIT_K > 1, the one split entry that serves them).
  virtual int binary_split_k(const WarpTileConfig& c) const {
    (void)c;
    return 1;
  }
  // The kernel the launch plan runs before the tile kernel, as an NVRTC name expression of the
  // same program (its lowered name is the trial request's pack_kernel); empty when none runs.
  // PACK's packing kernel by default; a split_maps family's prepass.
  virtual std::string pack_expression(const WarpTileConfig& c) const {
    return c.PACK ? "sgemm_pack<0>" : "";
  }

  // The block one launch runs: threads (with any producer warps) and shared memory in a layout.
  virtual int block_threads(const WarpTileConfig& c) const = 0;
  virtual long long block_shared_bytes(const WarpTileConfig& c, bool trans_a,
                                       bool trans_b) const = 0;

  // How its tile kernel is launched, and the dynamic shared memory one launch asks for in a
  // layout (0 for a kernel with static shared memory only).
  virtual LaunchAbi launch_abi() const { return LaunchAbi::pointers; }
  virtual int dynamic_shared_bytes(const WarpTileConfig& c, bool trans_a, bool trans_b) const {
    (void)c, (void)trans_a, (void)trans_b;
    return 0;
  }

  // Rules besides the structural ones (RuleInfo::structural) that the kernel's own static_asserts
  // enforce: a winner breaking one would break every build of sgemm_tuned that embeds it, so
  // `export` refuses it.
  virtual std::vector<std::string_view> asserted_rules() const { return {}; }

  // What the cost model's features (features.cpp) read of a config's work per thread: its
  // accumulators, the fragment registers of one step, its register tiles along M, and the
  // multiply-adds per shared-memory word it reads. The default is the warp-tiling geometry's
  // (derive(): ACCUMULATORS, FRAGMENTS, WMITER, TM*TN/(TM+TN)); a family with another geometry
  // states its own, so that no generic code reads derive() of a config it does not describe.
  struct ThreadWork {
    int accumulators = 0;
    int fragments = 0;
    int m_tiles = 0;
    double intensity = 0;
  };
  virtual ThreadWork thread_work(const WarpTileConfig& c) const;

  // Adjusts one edge case to what the family's kernel is served (leading dimensions, offsets).
  virtual void adjust_edge_case(const WarpTileConfig&, EdgeCheck&) const {}

  // What `check` shows of a config whose fields are in range: derived quantities (a JSON object)
  // and one line of them for the text output. Empty when the family derives nothing.
  virtual nlohmann::json derived(const WarpTileConfig& c) const;
  virtual std::string derived_line(const WarpTileConfig& c) const {
    (void)c;
    return {};
  }

  // The CPU simulation of the kernel's indexing (index_sim.hpp) for one config, and one line
  // saying what it covers. nullopt: the family has no simulation, and `check` and `space
  // --verify` say so rather than call it clean.
  virtual std::optional<SimReport> simulate(const WarpTileConfig& c) const;
  virtual std::string simulation_scope() const { return "no index simulation for this family"; }

 private:
  mutable std::once_flag hash_once_;
  mutable std::string hash_;
};

// The registered families, in registry order.
const std::vector<const KernelFamily*>& families();
// The family with this id; nullptr when none is registered.
const KernelFamily* find_family(std::string_view id);
// The family a config names; when it names none that is registered, the registry's first (check()
// reports such a config under positive_values).
const KernelFamily& family_of(const WarpTileConfig& c);
// The family whose legacy_tma() is `tma`: what the field TMA of an earlier release's config names;
// nullptr when no registered family had that value.
const KernelFamily* family_of_legacy_tma(int tma);
// "warptile, ws_tma": the registered ids, for messages.
std::string family_id_list();
// Registers a family defined outside the registry (a test's, a plugin's) after the built-in ones.
// Ids must be unique; the family must outlive every use.
void register_family(std::unique_ptr<KernelFamily> family);

// Every registered family's id and current source hash: what "fresh" means for a stored trial.
std::map<std::string, std::string> current_family_hashes();

// SHA-256 over files as a family's source_hash() computes it.
std::string hash_sources(const std::vector<KernelSourceFile>& files);

}  // namespace sgt
