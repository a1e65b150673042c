// The tuned-kernel table that `sgemm-tune export` embeds into builds: its model (per GPU, the
// winner of every tuned shape and a default config) and its two renderings, a C++ header and JSON.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "config.hpp"
#include "problem.hpp"
#include "precision.hpp"
#include "trial.hpp"

namespace sgt {

// Version of the generated header's layout and of the JSON table (format "sgemm-tune-table").
// 2: knob fields, layouts served, edge checks; 3: PAD_B; 4: PACK; 5: STAGE_C; 6: TMA, with the
// TMA kernel's source hash; 7: each config's kernel family id (kConfigFamilies, "family"), every
// family's source hash ("kernel_hashes"), and the JSON's shapes give `ratio` (cuBLAS time / winner
// time) instead of `pct_of_cublas`, defaults the source `best_ratio`; 8: the header gives each
// config's kernel instances as its family names them (SGT_TUNED_INSTANCES), the files that
// declare them (SGT_TUNED_KERNEL_FILE_i) and how it is launched (kConfigLaunch), so the dispatch
// library serves any registered family without code of its own; 9: a config no longer has the
// field TMA (kConfigs, SGT_TUNED_CONFIGS, "fields"): its family is its id (kConfigFamilies,
// "family"), and the JSON's config objects write it as their config JSON does; 10: the table's
// precision class (kPrecision, kPrecisionFp32Accurate, "precision"; precision.hpp), which a
// dispatch library must accept before it builds a table of class fp32-accurate; 11: the field
// TAIL (a tf32x3_wg config's wave-aware tail), which a format-10 table's configs hold as 0
constexpr int kTableFormatVersion = 11;

// The winner of one tuned shape, as measured.
struct TableShape {
  Problem problem;
  WarpTileConfig config;
  std::string config_name;
  double median_ms = 0;
  double cublas_median_ms = 0;  // 0 when cuBLAS was not timed
  double gflops = 0;
  long long ok_trials = 0;  // ok trials the winner was chosen from
  bool stale = false;       // only with --allow-stale
  std::string measured;     // ISO 8601 UTC of the winning trial
  std::string tuner_version;
  std::vector<EdgeCheck> edge_checks;  // the winner's verification on edge shapes; empty: none

  // cuBLAS median / winner median (above 1: faster than cuBLAS); 0 when unknown.
  double ratio() const;
};

// The default config of one layout of a GPU: the winner with the best ratio to cuBLAS among that
// layout's tuned f32 shapes.
struct TableDefault {
  std::string layout;
  WarpTileConfig config;
  std::string name;
  std::size_t shape = 0;  // index into TableGpu::shapes of the shape it won
};

struct TableGpu {
  std::string name;
  int cc_major = 0, cc_minor = 0;
  int sm_count = 0;
  std::vector<TableShape> shapes;  // ordered by M, N, K, layout, dtype
  // Set by choose_default(). What the dispatcher runs when no tuned shape's winner fits a call:
  // the default of the call's layout when layout_defaults has one, else default_config, which is
  // the NN default or, when no NN shape is tuned, the built-in fallback.
  WarpTileConfig default_config;
  std::string default_name;
  std::optional<std::size_t> default_shape;   // the shape it won; empty: the built-in fallback
  std::vector<TableDefault> layout_defaults;  // one per layout with tuned shapes, kLayouts order
};

struct Table {
  std::string tool_version;   // sgemm-tune's SGT_VERSION
  std::string database;       // the database it was exported from, as given
  std::string generated_utc;  // ISO 8601 UTC
  std::string kernel_template;
  // Family id -> the source hash its winners were compiled from (the registry's current hashes
  // when exported without --allow-stale): one entry per registered family.
  std::map<std::string, std::string> family_hashes;
  bool allow_stale = false;
  // The class its winners were chosen in (export --precision): fp32 holds FFMA kernels only.
  Precision precision = Precision::fp32;
  std::vector<TableGpu> gpus;
};

// Per layout, the default is the winner with the best % of cuBLAS across the GPU's f32 shapes of
// that layout (ties to the earlier shape), since it is the config that held up best against the
// baseline; each layout with tuned shapes of a strict (fp32) winner gets one (layout_defaults): a
// non-strict winner serves only its own shape. default_config is the NN default, or `fallback`
// when the GPU has no such NN shape.
void choose_default(TableGpu& gpu, const WarpTileConfig& fallback, std::string_view fallback_name);

// Every config the table serves (shape winners and defaults), deduplicated, in order of first use:
// the dispatch library instantiates exactly these.
std::vector<WarpTileConfig> table_configs(const Table& t);

// `text` as a C++ string literal, quotes included. Quotes, backslashes, '?' (trigraphs) and every
// byte outside printable ASCII are escaped (the latter as three-digit octal, which cannot run into
// a following digit the way \x can), so any byte string round-trips through any C++ compiler.
std::string cpp_string_literal(std::string_view text);

// The C++17 header (plain constexpr structs and arrays plus an X-macro list of configs) that the
// dispatch library and user code include; usable from nvcc and from any C++ compiler.
std::string render_cpp(const Table& t);

nlohmann::json table_json(const Table& t);
std::string render_json(const Table& t);

// $SOURCE_DATE_EPOCH as ISO 8601 UTC when set (reproducible builds), else the current time.
// Throws InputError on a value that is not a non-negative integer.
std::string export_timestamp();

}  // namespace sgt
