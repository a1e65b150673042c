// The one config type of sgemm-tune: its fields, derived quantities, validity rules, canonical name
// and JSON form. Adding a knob means adding one line to SGT_CONFIG_FIELDS.
#pragma once

#include <array>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "warptile_geometry.h"

namespace sgt {

// X(field, smallest value, default, description). The order is the canonical order: enumeration,
// JSON, DB columns, headers. A default of kRequired marks a field every config must state; the
// knobs added after the seed's ten have defaults that reproduce the seed kernel, so names, JSON and
// databases written before a knob existed still mean the same config.
#define SGT_CONFIG_FIELDS(X)                                                                      \
  X(BM, 1, kRequired, "block tile rows")                                                          \
  X(BN, 1, kRequired, "block tile columns")                                                       \
  X(BK, 1, kRequired, "k-slice depth loaded into shared memory per step")                         \
  X(WM, 1, kRequired, "warp tile rows")                                                           \
  X(WN, 1, kRequired, "warp tile columns")                                                        \
  X(WNITER, 1, kRequired, "warp sub-tiles along N")                                               \
  X(TM, 1, kRequired, "thread tile rows")                                                         \
  X(TN, 1, kRequired, "thread tile columns")                                                      \
  X(NUM_THREADS, 1, kRequired, "threads per block")                                               \
  X(MIN_BLOCKS, 1, kRequired, "second __launch_bounds__ argument: blocks the compiler must fit")  \
  X(STAGES, 1, 1, "shared-memory buffers; 2 fetches the next k-slice while computing this one")   \
  X(PAD_A, 0, 0, "floats of padding per k-row of the As tile (shared-memory bank conflicts)")     \
  X(GROUP_M, 1, 1, "block rows walked together for L2 reuse (1 = row-major block order)")         \
  X(SPLIT_K, 1, 1, "k-range splits, reduced in a fixed order by a second kernel (deterministic)") \
  X(FMA_ORDER, 0, 0,                                                                              \
    "outer-product order: 0 rows first, 1 columns first, 2/3 the same serpentine")                \
  X(PAD_B, 0, 0, "floats of padding per k-row of the Bs tile (bank conflicts of the B^T store)")  \
  X(PACK, 0, 0, "1 = copy the operands into k-major float4 panels first (odd sizes, transposes)") \
  X(STAGE_C, 0, 0, "1 = C tiles without float4 stores go through shared memory as whole rows")    \
  X(TAIL, 0, 0,                                                                                   \
    "1 = the tiles past the last full wave of the SMs run as a second launch split over K")

inline constexpr int kRequired = -1;

// The kernel family a config names when it names none: the one of every config written before
// configs named their family (the warp-tiling template's). Names, JSON, search spaces and
// databases of those releases told the two built-in families apart by a field TMA (0 or 1), which
// is now an alias of the family id (KernelFamily::legacy_tma(), family.hpp).
inline constexpr std::string_view kDefaultFamily = "warptile";

struct WarpTileConfig {
#define SGT_DECLARE_FIELD(name, lo, def, desc) int name = (def) == kRequired ? 0 : (def);
  SGT_CONFIG_FIELDS(SGT_DECLARE_FIELD)
#undef SGT_DECLARE_FIELD
  // The id of the config's kernel family (family.hpp): which kernel the fields parameterise. The
  // registry resolves it (family_of); a family registered at run time is named the same way.
  std::string family{kDefaultFamily};

  friend bool operator==(const WarpTileConfig&, const WarpTileConfig&) = default;
};

struct FieldInfo {
  std::string_view name;
  std::string_view description;
  int WarpTileConfig::*member;
  int min_value;
  int default_value;  // kRequired when the field has none
};

inline constexpr std::array kConfigFields = {
#define SGT_FIELD_INFO(name, lo, def, desc) FieldInfo{#name, desc, &WarpTileConfig::name, lo, def},
    SGT_CONFIG_FIELDS(SGT_FIELD_INFO)
#undef SGT_FIELD_INFO
};

// Derived quantities: the kernel's own derivation, so the two can never disagree.
constexpr sgt_kernel::Geometry derive(const WarpTileConfig& c) {
  return sgt_kernel::make_geometry(c.BM, c.BN, c.BK, c.WM, c.WN, c.WNITER, c.TM, c.TN,
                                   c.NUM_THREADS, c.STAGES, c.PAD_A, c.PAD_B);
}

// Every parameter lies in its min_value..kMaxConfigValue (space files, JSON, names and check()
// agree).
constexpr int kMaxConfigValue = 65536;

// Device and budget limits that make a config impossible rather than slow.
struct Limits {
  int max_threads_per_block = 1024;
  int max_static_shared_bytes = 48 * 1024;    // static __shared__ arrays cap at 48 KB
  int max_dynamic_shared_bytes = 227 * 1024;  // opt-in dynamic shared memory per block
  int max_accumulators = 128;                 // per thread; more cannot stay in 255 registers
  int registers_per_sm = 65536;
  int max_registers_per_thread = 255;
  int max_threads_per_sm = 2048;
  int max_blocks_per_sm = 32;
  // The TMA-fed kernel family (ws_tma) has an implementation for the target (sm_90 only;
  // arch.hpp).
  bool tma_kernel = true;
  // The target's compute capability (major * 10 + minor), for the architecture rules of families
  // written for some architectures only (KernelFamily::implemented_for); limits_on() sets it.
  int compute_capability = 90;
};

struct RuleViolation {
  std::string rule;    // stable name, e.g. "wmiter_divisibility"
  std::string reason;  // human sentence with the numbers
};

// A named validity rule. Structural rules are the ones the index simulation can confirm.
struct RuleInfo {
  std::string_view name;
  std::string_view summary;
  bool structural;
};
const std::vector<RuleInfo>& rules();  // every family's rules, each once (families/registry.cpp)

// Every violated rule: out of range or naming no registered family (positive_values) alone, else
// those of the config's family (family.hpp: family_of(c).check()), in the order it checks them.
// Empty means the config is valid.
std::vector<RuleViolation> check(const WarpTileConfig& c, const Limits& limits = {});

// Family ws_tma: the shared memory one block of the TMA kernel takes in a layout (trans_a,
// trans_b), dynamic stages and static barriers together. Defined with its family
// (families/ws_tma/).
long long tma_shared_bytes(const WarpTileConfig& c, bool trans_a, bool trans_b);

// Canonical name: family prefix, e.g. wt_128x64x16_w64x32_wn2_t4x4_n128_mb1, _s<STAGES> _p<PAD_A>
// _g<GROUP_M> _k<SPLIT_K> _o<FMA_ORDER> _b<PAD_B> _x<PACK> _c<STAGE_C> for each knob off its
// default the prefix does not imply (so the seed's names stay valid and mean the same), then the
// family's name suffix (ws_tma: _m1, the TMA field's suffix of earlier releases). A group of the
// body (_wn<WNITER>, _t<TM>x<TN>, _mb<MIN_BLOCKS>) whose fields the family implies all is left
// out too: tc3_128x128x32_w64x64_n128_s3_g8 (family tf32x3).
std::string to_name(const WarpTileConfig& c);
// Parses a canonical name; nullopt when the text is not one.
std::optional<WarpTileConfig> from_name(std::string_view name);

// Every field, and the family: "family": id, or for a family that has a legacy TMA value
// "TMA": that value, as releases before family ids wrote it (so they read it too). from_json reads
// either; neither is the default family.
void to_json(nlohmann::json& j, const WarpTileConfig& c);
void from_json(const nlohmann::json& j, WarpTileConfig& c);  // throws sgt::InputError

}  // namespace sgt
