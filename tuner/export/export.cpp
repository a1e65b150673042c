// The embedded tuned-kernel table: default choice, config deduplication and the two renderings
// (C++ header for nvcc and plain C++, JSON for scripts).
#include "export.hpp"

#include <algorithm>
#include <charconv>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <system_error>
#include <utility>

#include <fmt/chrono.h>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "arch.hpp"
#include "error.hpp"
#include "family.hpp"
#include "instance.hpp"
#include "trial.hpp"

namespace sgt {

namespace {

// The families whose hashes tables of formats 1-8 named kernel_hash and tma_kernel_hash; those
// fields stay for older readers, and every family's hash is in kernel_hashes / kFamilyHashes.
constexpr std::string_view kLegacyFamilies[] = {"warptile", "ws_tma"};

std::string legacy_hash(const Table& t, std::string_view family) {
  const auto it = t.family_hashes.find(std::string(family));
  return it == t.family_hashes.end() ? std::string() : it->second;
}

std::string family_hash_list(const Table& t) {
  std::string out;
  for (const auto& [id, hash] : t.family_hashes)
    out += fmt::format("{}{} {}", out.empty() ? "" : ", ", id, hash);
  return out.empty() ? "(none)" : out;
}

// Finite and compact, always a valid C++ and JSON number.
std::string number(double v) {
  return std::isfinite(v) ? fmt::format("{:.9g}", v) : "0";
}

std::optional<std::size_t> config_index(const std::vector<WarpTileConfig>& configs,
                                        const WarpTileConfig& c) {
  const auto it = std::find(configs.begin(), configs.end(), c);
  if (it == configs.end()) return std::nullopt;
  return static_cast<std::size_t>(it - configs.begin());
}

std::string config_values(const WarpTileConfig& c) {
  std::string out;
  for (const auto& f : kConfigFields) {
    if (!out.empty()) out += ", ";
    out += std::to_string(c.*f.member);
  }
  return out;
}

std::string won_text(const TableShape& s) {
  if (s.ratio() > 0) {
    return fmt::format("{:.1f}% of cuBLAS on {}", 100.0 * s.ratio(), s.problem.shape());
  }
  return fmt::format("won {}; cuBLAS not timed", s.problem.shape());
}

std::string default_summary(const TableGpu& g) {
  if (g.layout_defaults.empty()) {
    return fmt::format("default {} (built-in, nothing tuned)", g.default_name);
  }
  std::string out;
  for (const auto& d : g.layout_defaults) {
    out += fmt::format("{}{} default {} ({})", out.empty() ? "" : "; ", d.layout, d.name,
                       won_text(g.shapes[d.shape]));
  }
  if (!g.default_shape) {
    out += fmt::format("; other layouts: {} (built-in)", g.default_name);
  } else if (g.layout_defaults.size() < kLayouts.size()) {
    out += "; other layouts: the NN default";
  }
  return out;
}

// How a shape's winner fared on its edge checks, for a comment of the C++ header. Labels come from
// the database: they go through cpp_string_literal.
std::string edge_comment(const std::vector<EdgeCheck>& checks) {
  if (checks.empty()) return "not verified on edge cases";
  const auto total = checks.size();
  const auto passed = static_cast<std::size_t>(edge_checks_passed(checks));
  std::string out =
      fmt::format("verified: {}/{} edge case{}", passed, total, total == 1 ? "" : "s");
  if (passed == total) return out;
  constexpr std::size_t kNamed = 4;
  std::size_t named = 0;
  out += ", failed:";
  for (const auto& c : checks) {
    if (c.passed) continue;
    if (named++ == kNamed) {
      out += fmt::format(" and {} more", total - passed - kNamed);
      break;
    }
    out += fmt::format("{} {} {} {}", named > 1 ? "," : "", cpp_string_literal(c.label),
                       c.problem.shape(), cpp_string_literal(c.problem.layout));
  }
  return out;
}

nlohmann::json edge_checks_json(const std::vector<EdgeCheck>& checks) {
  nlohmann::json out = nlohmann::json::array();
  for (const auto& c : checks) {
    out.push_back({{"label", c.label},
                   {"shape", c.problem.shape()},
                   {"M", c.problem.M},
                   {"N", c.problem.N},
                   {"K", c.problem.K},
                   {"layout", c.problem.layout},
                   {"dtype", c.problem.dtype},
                   {"lda", c.lda},
                   {"ldb", c.ldb},
                   {"ldc", c.ldc},
                   {"offset", c.offset},
                   {"alpha", c.alpha},
                   {"beta", c.beta},
                   {"passed", c.passed},
                   {"error", c.error},
                   {"reason", c.reason}});
  }
  return out;
}

}  // namespace

double TableShape::ratio() const {
  if (!(cublas_median_ms > 0) || !(median_ms > 0)) return 0;
  return cublas_median_ms / median_ms;
}

void choose_default(TableGpu& gpu, const WarpTileConfig& fallback, std::string_view fallback_name) {
  gpu.default_shape.reset();
  gpu.layout_defaults.clear();
  for (const auto layout : kLayouts) {
    std::optional<std::size_t> chosen;
    double best = -1;
    for (std::size_t i = 0; i < gpu.shapes.size(); ++i) {
      const auto& s = gpu.shapes[i];
      if (s.problem.layout != layout || s.problem.dtype != "f32") continue;
      // A non-strict winner serves only its own shape (its accuracy was measured there): never a
      // default for others.
      if (family_of(s.config).precision() != Precision::fp32) continue;
      if (s.ratio() > best) {
        best = s.ratio();
        chosen = i;
      }
    }
    if (!chosen) continue;
    const auto& s = gpu.shapes[*chosen];
    gpu.layout_defaults.push_back({std::string(layout), s.config, s.config_name, *chosen});
    if (layout == "NN") gpu.default_shape = chosen;
  }
  if (gpu.default_shape) {
    gpu.default_config = gpu.shapes[*gpu.default_shape].config;
    gpu.default_name = gpu.shapes[*gpu.default_shape].config_name;
  } else {
    gpu.default_config = fallback;
    gpu.default_name = std::string(fallback_name);
  }
}

// A launch ABI as the table's Launch::abi numbers it (0 pointers, 1 tensor_maps, 2 split_maps).
int abi_number(LaunchAbi a) {
  switch (a) {
    case LaunchAbi::tensor_maps:
      return 1;
    case LaunchAbi::split_maps:
      return 2;
    case LaunchAbi::pointers:
      break;
  }
  return 0;
}

// The four layouts in the table's order (layout_index: NN, NT, TN, TT).
constexpr const char* kTableLayouts[] = {"NN", "NT", "TN", "TT"};

// A config's kernel instance for a call in `layout` with float4 loads or not, as its family names
// it: the very name expression NVRTC compiles when the tuner measures it.
std::string instance_expression(const WarpTileConfig& c, const char* layout, bool vec) {
  return resolve(c, layout, vec).name_expression;
}

// The one compute capability (e.g. 90) a family has a kernel body for, or 0 when it has one for
// every architecture sgemm-tune knows.
int only_architecture(const KernelFamily& f) {
  std::vector<int> ok;
  for (const auto& a : arch_table())
    if (f.implemented_for(a.major * 10 + a.minor)) ok.push_back(a.major * 10 + a.minor);
  return ok.size() == 1 ? ok.front() : 0;
}

// The main kernel file of every family the configs use, the warp-tiling one first (its pack and
// split-K reduction kernels serve every family's launch plan).
std::vector<std::string> kernel_files(const std::vector<WarpTileConfig>& configs) {
  std::vector<std::string> files{std::string(families().front()->sources().front().name)};
  for (const auto& c : configs) {
    const auto name = std::string(family_of(c).sources().front().name);
    if (std::find(files.begin(), files.end(), name) == files.end()) files.push_back(name);
  }
  return files;
}

std::vector<WarpTileConfig> table_configs(const Table& t) {
  std::vector<WarpTileConfig> out;
  auto add = [&](const WarpTileConfig& c) {
    if (!config_index(out, c)) out.push_back(c);
  };
  for (const auto& g : t.gpus) {
    for (const auto& s : g.shapes) add(s.config);
    add(g.default_config);
    for (const auto& d : g.layout_defaults) add(d.config);  // shape winners: already there
  }
  return out;
}

std::string cpp_string_literal(std::string_view text) {
  std::string out = "\"";
  for (const char ch : text) {
    const auto b = static_cast<unsigned char>(ch);
    if (ch == '"' || ch == '\\' || ch == '?') {
      out += '\\';
      out += ch;
    } else if (b >= 0x20 && b < 0x7f) {
      out += ch;
    } else {
      out += fmt::format("\\{:03o}", b);
    }
  }
  out += '"';
  return out;
}

namespace {

// The lines of the generated header, one call each (the sections below write them in order).
class HeaderLines {
 public:
  void operator()(const std::string& s) {
    text_ += s;
    text_ += '\n';
  }
  std::string take() { return std::move(text_); }

 private:
  std::string text_;
};

// The opening comment: where the table comes from, its GPUs and shapes; the format version.
void cpp_preamble(HeaderLines& line, const Table& t, const std::vector<WarpTileConfig>& configs,
                  std::size_t shape_count) {
  // Every text from the database goes through cpp_string_literal, also inside comments: a raw
  // newline or a trailing backslash there would end or splice the comment into code.
  line(fmt::format(
      "// Tuned SGEMM kernel table, generated by sgemm-tune {} (`sgemm-tune export --format cpp`)",
      t.tool_version));
  line(fmt::format("// from the tuning database {} on {}.", cpp_string_literal(t.database),
                   t.generated_utc));
  line("// DO NOT EDIT: this file is generated; regenerate it with `sgemm-tune export`.");
  line("//");
  line(fmt::format("// Kernel template {}, kernel source hashes {}; stale trials {}.",
                   t.kernel_template, family_hash_list(t),
                   t.allow_stale ? "included (--allow-stale)" : "excluded"));
  line(fmt::format("// {} GPU{}, {} tuned shape{}, {} config{}{}", t.gpus.size(),
                   t.gpus.size() == 1 ? "" : "s", shape_count, shape_count == 1 ? "" : "s",
                   configs.size(), configs.size() == 1 ? "" : "s", t.gpus.empty() ? "." : ":"));
  for (const auto& g : t.gpus) {
    line(fmt::format("//   {} sm_{}{}, {} SMs: {} shape{}, {}", cpp_string_literal(g.name),
                     g.cc_major, g.cc_minor, g.sm_count, g.shapes.size(),
                     g.shapes.size() == 1 ? "" : "s", default_summary(g)));
  }
  line("//");
  line("// Plain C++17 with no includes (constexpr arrays of plain structs), so nvcc-compiled .cu");
  line("// files and any C++ compiler can read it. Use the counts (kGpuCount, kShapeCount,");
  line("// kConfigCount): an empty list still holds one zeroed placeholder, since C++ has no");
  line("// zero-length arrays.");
  line("#pragma once");
  line("");
  line(fmt::format("#define SGT_TUNED_TABLE_FORMAT_VERSION {}", kTableFormatVersion));
  line("");
}

// The X-lists of the configs and their kernel instances, and the kernel files they are in.
void cpp_config_macros(HeaderLines& line, const std::vector<WarpTileConfig>& configs) {
  std::string field_list;
  for (const auto& f : kConfigFields) field_list += fmt::format(", {}", f.name);
  line(fmt::format("// X(index{}):", field_list));
  line(
      "// every config of kConfigs, in the kernel template's parameter order (the dispatch "
      "library");
  line("// checks kConfigs against it).");
  if (configs.empty()) {
    line("#define SGT_TUNED_CONFIGS(X)");
  } else {
    line("#define SGT_TUNED_CONFIGS(X) \\");
    for (std::size_t i = 0; i < configs.size(); ++i) {
      line(fmt::format("  X({}, {}){}", i, config_values(configs[i]),
                       i + 1 < configs.size() ? " \\" : ""));
    }
  }
  line("");
  line("// X(index, launch, NN, NT, TN, TT, NN_scalar, NT_scalar, TN_scalar, TT_scalar): each");
  line(
      "// config's kernel instances as its family names them (the expressions NVRTC compiles when");
  line("// the tuner measures it) for calls in each layout, with float4 loads and without, by the");
  line("// launch ABI of its family: pointers (sgemm_warptile's arguments), tensor_maps");
  line("// (sgemm_ws_tma's) or split_maps (sgemm_tf32x3_wgmma's, after its split prepass). The");
  line("// dispatch library instantiates exactly these.");
  if (configs.empty()) {
    line("#define SGT_TUNED_INSTANCES(X)");
  } else {
    line("#define SGT_TUNED_INSTANCES(X) \\");
    for (std::size_t i = 0; i < configs.size(); ++i) {
      std::string args;
      for (const bool vec : {true, false})
        for (const char* layout : kTableLayouts)
          args += fmt::format(", ({})", instance_expression(configs[i], layout, vec));
      line(fmt::format("  X({}, {}{}){}", i, to_string(family_of(configs[i]).launch_abi()), args,
                       i + 1 < configs.size() ? " \\" : ""));
    }
  }
  line("// The kernel files those instances are declared in, on the dispatch library's include");
  line("// path (kernel_templates/, or a family's own folder).");
  const auto files = kernel_files(configs);
  for (std::size_t i = 0; i < files.size(); ++i)
    line(fmt::format("#define SGT_TUNED_KERNEL_FILE_{} {}", i, cpp_string_literal(files[i])));
  line(fmt::format("#define SGT_TUNED_KERNEL_FILE_COUNT {}", files.size()));
  line("");
}

// The structs of the table: Config, Launch, Shape, Gpu, LayoutDefault.
void cpp_structs(HeaderLines& line) {
  line("struct Config {");
  for (const auto& f : kConfigFields) line(fmt::format("  int {};  // {}", f.name, f.description));
  line("};");
  line("");
  line("constexpr bool operator==(const Config& a, const Config& b) {");
  for (std::size_t i = 0; i < kConfigFields.size(); ++i) {
    const auto name = kConfigFields[i].name;
    line(fmt::format("  {}a.{} == b.{}{}", i == 0 ? "return " : "       && ", name, name,
                     i + 1 == kConfigFields.size() ? ";" : ""));
  }
  line("}");
  line("");
  line("// How a config's kernel is launched, as its family says (family.hpp).");
  line("struct Launch {");
  line(
      "  int abi;      // 0: pointers (sgemm_warptile's arguments), 1: tensor_maps "
      "(sgemm_ws_tma's),");
  line("                // 2: split_maps (sgemm_tf32x3_wgmma's, after its split prepass)");
  line("  int threads;  // threads of one block (with any producer warps)");
  line("  int dynamic_smem[4];       // dynamic shared memory of one launch, per call layout (NN,");
  line(
      "                             // NT, TN, TT); 0 for a kernel with static shared memory only");
  line("  long long block_bytes[4];  // all the shared memory one block holds, per call layout");
  line("  int arch_only;       // the one compute capability (e.g. 90) it has a body for; 0: any");
  line("  bool arch_specific;  // its body is in the architecture-specific image only (sm_90a)");
  line("};");
  line("");
  line("// The winner of one tuned shape. Its comment says on how many edge cases (shapes off the");
  line("// tile, primes, K not a multiple of BK, padded leading dimensions, offset pointers) the");
  line("// winner was verified when it was tuned, and which failed.");
  line("struct Shape {");
  line("  long long M, N, K;");
  line("  const char* layout;    // op(A) op(B) of the row-major product: NN, NT, TN or TT");
  line("  int config;            // index into kConfigs");
  line("  double median_ms;      // the winner's median when it was tuned");
  line("  double pct_of_cublas;  // cuBLAS median / winner median x 100; 0 when not timed");
  line("};");
  line("");
  line("struct Gpu {");
  line("  const char* name;  // as cudaGetDeviceProperties reports it");
  line("  int cc_major, cc_minor, sm_count;");
  line("  int first_shape, shape_count;  // this GPU's slice of kShapes");
  line("  int default_config;  // index into kConfigs: served when no tuned shape fits and the");
  line("                      // call's layout has no kLayoutDefaults entry; the NN default");
  line("  int default_shape;  // index into kShapes of the shape it won; -1: built-in default");
  line("};");
  line("");
  line(
      "// The default of each layout that has tuned shapes on a GPU: its winner with the best % "
      "of");
  line("// cuBLAS across that layout's shapes. Ordered by GPU, then NN, NT, TN, TT.");
  line("struct LayoutDefault {");
  line("  int gpu;             // index into kGpus");
  line("  const char* layout;  // NN, NT, TN or TT");
  line("  int config;          // index into kConfigs");
  line("  int shape;           // index into kShapes of the shape it won");
  line("};");
  line("");
}

// The table's provenance: versions, database, hashes, stale and precision, the field names.
void cpp_constants(HeaderLines& line, const Table& t) {
  line(fmt::format("inline constexpr int kFormatVersion = {};", kTableFormatVersion));
  line(fmt::format("inline constexpr const char* kToolVersion = {};",
                   cpp_string_literal(t.tool_version)));
  line(fmt::format("inline constexpr const char* kDatabase = {};", cpp_string_literal(t.database)));
  line(fmt::format("inline constexpr const char* kGeneratedUtc = {};",
                   cpp_string_literal(t.generated_utc)));
  line(fmt::format("inline constexpr const char* kKernelTemplate = {};",
                   cpp_string_literal(t.kernel_template)));
  // The first two families' hashes under the names tables of earlier formats gave them; the
  // family tables below hold every family's.
  line(fmt::format("inline constexpr const char* kKernelHash = {};",
                   cpp_string_literal(legacy_hash(t, kLegacyFamilies[0]))));
  line(fmt::format("inline constexpr const char* kTmaKernelHash = {};",
                   cpp_string_literal(legacy_hash(t, kLegacyFamilies[1]))));
  line(fmt::format("inline constexpr int kFamilyCount = {};", t.family_hashes.size()));
  std::string ids, hashes;
  for (const auto& [id, hash] : t.family_hashes) {
    ids += fmt::format("{}{}", ids.empty() ? "" : ", ", cpp_string_literal(id));
    hashes += fmt::format("{}{}", hashes.empty() ? "" : ", ", cpp_string_literal(hash));
  }
  if (!t.family_hashes.empty()) {
    line(fmt::format("inline constexpr const char* kFamilyIds[] = {{{}}};", ids));
    line(fmt::format("inline constexpr const char* kFamilyHashes[] = {{{}}};", hashes));
  }
  line(fmt::format("inline constexpr bool kAllowStale = {};", t.allow_stale ? "true" : "false"));
  line(fmt::format(
      "// The precision class the winners were chosen in (sgemm-tune export --precision)."));
  line(fmt::format("inline constexpr const char* kPrecision = {};",
                   cpp_string_literal(std::string(to_string(t.precision)))));
  line(fmt::format("inline constexpr bool kPrecisionFp32Accurate = {};",
                   t.precision == Precision::fp32_accurate ? "true" : "false"));
  line("");
  line(fmt::format("inline constexpr int kFieldCount = {};", kConfigFields.size()));
  std::string names;
  for (const auto& f : kConfigFields) {
    names += fmt::format("{}{}", names.empty() ? "" : ", ", cpp_string_literal(f.name));
  }
  line(fmt::format("inline constexpr const char* kFieldNames[] = {{{}}};", names));
  line("");
}

// kConfigs and what the dispatch library reads beside it: names, families, launches.
void cpp_config_arrays(HeaderLines& line, const std::vector<WarpTileConfig>& configs) {
  line(fmt::format("inline constexpr int kConfigCount = {};", configs.size()));
  if (configs.empty()) {
    line("inline constexpr Config kConfigs[1] = {};");
    line("inline constexpr const char* kConfigNames[1] = {};");
    line("inline constexpr const char* kConfigFamilies[1] = {};");
    line("inline constexpr bool kConfigNonStrict[1] = {};");
    line("inline constexpr Launch kConfigLaunch[1] = {};");
  } else {
    line("inline constexpr Config kConfigs[] = {");
    for (const auto& c : configs)
      line(fmt::format("    {{{}}},  // {}", config_values(c), to_name(c)));
    line("};");
    line("inline constexpr const char* kConfigNames[] = {");
    for (const auto& c : configs) line(fmt::format("    {},", cpp_string_literal(to_name(c))));
    line("};");
    line("// The kernel family of each config (its id in sgemm-tune's registry): which kernel the");
    line("// dispatch library launches it as.");
    line("inline constexpr const char* kConfigFamilies[] = {");
    for (const auto& c : configs)
      line(fmt::format("    {},", cpp_string_literal(family_of(c).id())));
    line("};");
    line("// Whether its family is of a precision class other than fp32 (format 10): its accuracy");
    line("// was measured at its tuned shape, and it is served at no other.");
    line("inline constexpr bool kConfigNonStrict[] = {");
    for (const auto& c : configs)
      line(fmt::format("    {},", family_of(c).precision() != Precision::fp32 ? "true" : "false"));
    line("};");
    line("inline constexpr Launch kConfigLaunch[] = {");
    for (const auto& c : configs) {
      const auto& f = family_of(c);
      std::string smem, bytes;
      LaunchDescriptor launch;
      for (const char* layout : kTableLayouts) {
        launch = resolve(c, layout, true).launch;
        smem += fmt::format("{}{}", smem.empty() ? "" : ", ", launch.dynamic_smem_bytes);
        bytes += fmt::format("{}{}", bytes.empty() ? "" : ", ", launch.block_smem_bytes);
      }
      line(fmt::format("    {{{}, {}, {{{}}}, {{{}}}, {}, {}}},  // {}", abi_number(launch.abi),
                       launch.block_threads, smem, bytes, only_architecture(f),
                       f.target_arch("sm_90") != "sm_90" ? "true" : "false", to_name(c)));
    }
    line("};");
  }
  line("");
}

// kShapes, grouped by GPU.
void cpp_shapes(HeaderLines& line, const Table& t, const std::vector<WarpTileConfig>& configs,
                std::size_t shape_count) {
  line(fmt::format("inline constexpr int kShapeCount = {};", shape_count));
  if (shape_count == 0) {
    line("inline constexpr Shape kShapes[1] = {};");
  } else {
    line("inline constexpr Shape kShapes[] = {");
    for (const auto& g : t.gpus) {
      if (!g.shapes.empty()) line(fmt::format("    // {}", cpp_string_literal(g.name)));
      for (const auto& s : g.shapes) {
        line(fmt::format("    {{{}, {}, {}, {}, {}, {}, {}}},  // {}; {}", s.problem.M, s.problem.N,
                         s.problem.K, cpp_string_literal(s.problem.layout),
                         *config_index(configs, s.config), number(s.median_ms),
                         number(100.0 * s.ratio()), s.config_name, edge_comment(s.edge_checks)));
      }
    }
    line("};");
  }
  line("");
}

// kGpus, each with its slice of kShapes and its default.
void cpp_gpus(HeaderLines& line, const Table& t, const std::vector<WarpTileConfig>& configs) {
  line(fmt::format("inline constexpr int kGpuCount = {};", t.gpus.size()));
  if (t.gpus.empty()) {
    line("inline constexpr Gpu kGpus[1] = {};");
  } else {
    line("inline constexpr Gpu kGpus[] = {");
    std::size_t first = 0;
    for (const auto& g : t.gpus) {
      const long long default_shape =
          g.default_shape ? static_cast<long long>(first + *g.default_shape) : -1;
      line(fmt::format("    {{{}, {}, {}, {}, {}, {}, {}, {}}},", cpp_string_literal(g.name),
                       g.cc_major, g.cc_minor, g.sm_count, first, g.shapes.size(),
                       *config_index(configs, g.default_config), default_shape));
      first += g.shapes.size();
    }
    line("};");
  }
  line("");
}

// kLayoutDefaults, by GPU and layout.
void cpp_layout_defaults(HeaderLines& line, const Table& t,
                         const std::vector<WarpTileConfig>& configs,
                         std::size_t layout_default_count) {
  line(fmt::format("inline constexpr int kLayoutDefaultCount = {};", layout_default_count));
  if (layout_default_count == 0) {
    line("inline constexpr LayoutDefault kLayoutDefaults[1] = {};");
  } else {
    line("inline constexpr LayoutDefault kLayoutDefaults[] = {");
    std::size_t first = 0;
    for (std::size_t gi = 0; gi < t.gpus.size(); ++gi) {
      const auto& g = t.gpus[gi];
      for (const auto& d : g.layout_defaults) {
        line(fmt::format("    {{{}, {}, {}, {}}},  // {}", gi, cpp_string_literal(d.layout),
                         *config_index(configs, d.config), first + d.shape, d.name));
      }
      first += g.shapes.size();
    }
    line("};");
  }
  line("");
}

}  // namespace

std::string render_cpp(const Table& t) {
  const auto configs = table_configs(t);
  std::size_t shape_count = 0, layout_default_count = 0;
  for (const auto& g : t.gpus) {
    shape_count += g.shapes.size();
    layout_default_count += g.layout_defaults.size();
  }

  HeaderLines line;
  cpp_preamble(line, t, configs, shape_count);
  cpp_config_macros(line, configs);
  line("namespace sgt_tuned_table {");
  line("");
  cpp_structs(line);
  cpp_constants(line, t);
  cpp_config_arrays(line, configs);
  cpp_shapes(line, t, configs, shape_count);
  cpp_gpus(line, t, configs);
  cpp_layout_defaults(line, t, configs, layout_default_count);
  line("}  // namespace sgt_tuned_table");
  return line.take();
}

nlohmann::json table_json(const Table& t) {
  const auto configs = table_configs(t);
  nlohmann::json fields = nlohmann::json::array();
  for (const auto& f : kConfigFields) fields.push_back(std::string(f.name));
  nlohmann::json cfgs = nlohmann::json::array();
  for (const auto& c : configs)
    cfgs.push_back({{"name", to_name(c)}, {"family", family_of(c).id()}, {"config", c}});
  nlohmann::json hashes = t.family_hashes;

  nlohmann::json gpus = nlohmann::json::array();
  for (const auto& g : t.gpus) {
    nlohmann::json shapes = nlohmann::json::array();
    for (const auto& s : g.shapes) {
      shapes.push_back({{"M", s.problem.M},
                        {"N", s.problem.N},
                        {"K", s.problem.K},
                        {"layout", s.problem.layout},
                        {"dtype", s.problem.dtype},
                        {"config_name", s.config_name},
                        {"config_index", *config_index(configs, s.config)},
                        {"family", family_of(s.config).id()},
                        {"config", s.config},
                        {"median_ms", s.median_ms},
                        {"cublas_median_ms", s.cublas_median_ms},
                        {"ratio", s.ratio()},
                        {"gflops", s.gflops},
                        {"ok_trials", s.ok_trials},
                        {"stale", s.stale},
                        {"measured", s.measured},
                        {"tuner_version", s.tuner_version},
                        {"edge_check_summary", edge_check_tally_json(s.edge_checks)},
                        {"edge_checks", edge_checks_json(s.edge_checks)}});
    }
    nlohmann::json layout_defaults = nlohmann::json::array();
    for (const auto& d : g.layout_defaults) {
      layout_defaults.push_back({{"layout", d.layout},
                                 {"config_name", d.name},
                                 {"config_index", *config_index(configs, d.config)},
                                 {"config", d.config},
                                 {"source", "best_ratio"},
                                 {"shape", d.shape}});
    }
    nlohmann::json def = {{"config_name", g.default_name},
                          {"config_index", *config_index(configs, g.default_config)},
                          {"config", g.default_config},
                          {"source", g.default_shape ? "best_ratio" : "builtin"},
                          {"shape", nullptr}};
    if (g.default_shape) def["shape"] = *g.default_shape;
    gpus.push_back({{"name", g.name},
                    {"cc_major", g.cc_major},
                    {"cc_minor", g.cc_minor},
                    {"sm_count", g.sm_count},
                    {"arch", fmt::format("sm_{}{}", g.cc_major, g.cc_minor)},
                    {"default", std::move(def)},
                    {"layout_defaults", std::move(layout_defaults)},
                    {"shapes", std::move(shapes)}});
  }
  return {{"format", "sgemm-tune-table"},
          {"format_version", kTableFormatVersion},
          {"generated_by", "sgemm-tune " + t.tool_version},
          {"tool_version", t.tool_version},
          {"database", t.database},
          {"generated_utc", t.generated_utc},
          {"kernel_template", t.kernel_template},
          // The two families' hashes under the names formats 1-8 gave them, for older readers;
          // kernel_hashes holds every family's.
          {"kernel_hash", legacy_hash(t, kLegacyFamilies[0])},
          {"tma_kernel_hash", legacy_hash(t, kLegacyFamilies[1])},
          {"kernel_hashes", std::move(hashes)},
          {"allow_stale", t.allow_stale},
          {"precision", to_string(t.precision)},
          {"fields", std::move(fields)},
          {"configs", std::move(cfgs)},
          {"gpus", std::move(gpus)}};
}

std::string render_json(const Table& t) {
  // Replacement, not an exception, for invalid UTF-8: GPU names and paths are raw bytes.
  return table_json(t).dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
}

std::string export_timestamp() {
  const char* env = std::getenv("SOURCE_DATE_EPOCH");
  if (!env || !*env) return utc_timestamp();
  long long v = 0;
  const std::string_view s(env);
  const auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || ptr != s.data() + s.size() || v < 0) {
    throw InputError(
        fmt::format("SOURCE_DATE_EPOCH='{}' is not a number of seconds since 1970", s));
  }
  return fmt::format("{:%Y-%m-%dT%H:%M:%SZ}", std::chrono::sys_seconds{std::chrono::seconds{v}});
}

}  // namespace sgt
