// `sgemm-tune compile`: compile a space's survivors with NVRTC into the kernel cache, without a
// GPU. Warms the cache on a build machine and measures compile throughput.
#include <chrono>
#include <cctype>
#include <cstdio>
#include <map>

#include <fmt/format.h>
#include <spdlog/spdlog.h>
#include <nlohmann/json.hpp>

#include "commands.hpp"
#include "instance.hpp"
#include "json_output.hpp"
#include "error.hpp"
#include "nvrtc_compiler.hpp"
#include "progress.hpp"
#include "shard.hpp"
#include "file_util.hpp"
#include "space.hpp"
#include "tune_store.hpp"

namespace sgt::cli {

namespace {

// Canonical config names, one per line; blank lines and '#' comments skipped. InputError naming
// the file and line for anything else.
std::vector<WarpTileConfig> read_config_list(const std::string& path) {
  const auto text = read_file(path);
  if (!text) throw InputError(fmt::format("cannot read --configs '{}'", path));
  std::vector<WarpTileConfig> out;
  size_t line_no = 0, start = 0;
  while (start <= text->size()) {
    const size_t end = std::min(text->find('\n', start), text->size());
    std::string line = text->substr(start, end - start);
    ++line_no;
    start = end + 1;
    if (const auto hash = line.find('#'); hash != std::string::npos) line.resize(hash);
    while (!line.empty() && std::isspace(static_cast<unsigned char>(line.back()))) line.pop_back();
    if (line.empty()) continue;
    const auto c = from_name(line);
    if (!c) {
      throw InputError(fmt::format("--configs '{}' line {}: '{}' is not a config name", path,
                                   line_no, terminal_safe(line)));
    }
    out.push_back(*c);
  }
  return out;
}

struct CompileCli {
  std::string space = "auto", shape, arch = "sm_90", cache_dir, shard, layout = "NN",
              precision = "fp32", loads = "auto", configs;
  int jobs = 0;
  std::vector<std::string> nvrtc_options;
  bool json = false;
};

CLI::App& add_compile_options(CLI::App& app, CompileCli& o) {
  auto* sub = app.add_subcommand(
      "compile",
      "Compile every survivor of a space with NVRTC into the kernel cache (no GPU needed) and\n"
      "report registers, spills and throughput. A later tune for the same arch compiles nothing.\n"
      "An entry the cache cannot store (read-only directory, a directory in a file's place) is\n"
      "reported as cache_error with the reason and the others go on; the exit code is then 1.");
  sub->add_option(
         "--space", o.space,
         "Search space: a JSON file, a built-in name, spaces joined by '+' (default+tma), or "
         "auto (every built-in space)")
      ->capture_default_str();
  sub->add_option("--shape", o.shape, "Only configs valid for problem MxNxK");
  sub->add_option("--configs", o.configs,
                  "Compile these configs instead of a space: a file of canonical names, one per "
                  "line ('#' starts a comment)")
      ->check(CLI::ExistingFile);
  sub->add_option("--layout", o.layout,
                  "Operand layout to instantiate: NN, NT, TN or TT (op(A) op(B), row-major)")
      ->capture_default_str();
  sub->add_option(
         "--loads", o.loads,
         "Main-loop loads to instantiate: float4, scalar (for operands whose leading "
         "dimensions or pointers refuse 16-byte accesses), or auto: what a tune of --shape "
         "in --layout uses, float4 without --shape")
      ->check(CLI::IsMember({"auto", "float4", "scalar"}))
      ->capture_default_str();
  sub->add_option("--arch", o.arch, "Target architecture, e.g. sm_90 (H100/H200), sm_80 (A100)")
      ->capture_default_str();
  add_cache_dir_option(*sub, o.cache_dir);
  add_precision_option(*sub, o.precision, "the class of the configs compiled");
  sub->add_option("--nvrtc-option", o.nvrtc_options,
                  "Extra NVRTC option, repeatable (part of the compile-cache key), e.g. "
                  "-DSGT_K_UNROLL=4 to unroll the k loop 4x instead of fully");
  sub->add_option("-j,--jobs", o.jobs, "NVRTC threads (default: all cores)")
      ->check(CLI::Range(0, 1024));
  add_shard_option(*sub, o.shard, "The kernel binaries to compile (of equal cost: round-robin)",
                   "The split-K variants of a config that share one binary stay on one shard "
                   "(tf32x3_wg's split configs share one, apart from its unsplit one); the "
                   "shards share one --cache-dir");
  sub->add_flag("--json", o.json, "Machine-readable summary on stdout");
  return *sub;
}

// What the options resolve to: the configs to compile (this shard's), before any is compiled.
struct CompilePlan {
  std::optional<Problem> problem;
  SpaceEnumeration space;
  const ArchInfo* arch = nullptr;
  // Listed configs the architecture cannot run: reported, and the run then exits 2.
  nlohmann::json not_for_arch = nlohmann::json::array();
  bool vec = true;  // the instance's main-loop loads: float4, else scalar (--loads)
  std::vector<WarpTileConfig> configs;
  std::optional<ShardShare> share;
};

// --configs: a listed config the architecture cannot run is refused by its rule, not compiled.
void plan_listed(const std::string& path, CompilePlan& plan) {
  const ArchInfo& arch = *plan.arch;
  plan.space.name = path;
  for (const auto& c : read_config_list(path)) {
    const auto v = check(c, hardware_limits(arch));
    if (v.empty()) {
      plan.space.enumeration.survivors.push_back(c);
    } else {
      spdlog::warn("{}: not for {}: rule {}: {}", to_name(c), arch.name(), v.front().rule,
                   v.front().reason);
      plan.not_for_arch.push_back(
          {{"name", to_name(c)}, {"rule", v.front().rule}, {"reason", v.front().reason}});
    }
  }
}

// Binaries are dealt, each with every config it serves, at one cost each: no two shards compile
// the same binary, and equal costs deal them round-robin in the space's order.
void keep_shard(const Shard& shard, const std::string& layout, CompilePlan& plan) {
  auto& configs = plan.configs;
  std::map<std::string, size_t> binary_of;
  std::vector<size_t> binary(configs.size());
  for (size_t i = 0; i < configs.size(); ++i) {
    const auto name = resolve(configs[i], layout, plan.vec).name_expression;
    binary[i] = binary_of.emplace(name, binary_of.size()).first->second;
  }
  plan.share = share_of(shard, std::vector<double>(binary_of.size(), 1.0));
  log_share(*plan.share, "binaries", "binaries");
  std::vector<bool> mine(binary_of.size(), false);
  for (size_t b : plan.share->mine) mine[b] = true;
  std::vector<WarpTileConfig> kept;
  for (size_t i = 0; i < configs.size(); ++i) {
    if (mine[binary[i]]) kept.push_back(configs[i]);
  }
  configs = std::move(kept);
}

// Reads and checks the options and picks the configs; bad input throws here, before NVRTC.
CompilePlan plan_compile(const CompileCli& o) {
  CompilePlan plan;
  if (!o.shape.empty()) {
    plan.problem = parse_shape(o.shape);
    plan.problem->layout = parse_layout(o.layout);
  }
  plan.arch = &parse_arch(o.arch);
  if (o.configs.empty()) {
    plan.space =
        enumerate_spaces(o.space, plan.problem, plan.arch, parse_precision_option(o.precision));
  } else {
    plan_listed(o.configs, plan);
  }
  plan.vec =
      o.loads == "auto" ? !plan.problem || kernel_vec_loads(*plan.problem) : o.loads == "float4";
  plan.configs = plan.space.enumeration.survivors;
  if (const auto shard = resolve_shard(o.shard)) keep_shard(*shard, o.layout, plan);
  return plan;
}

// An entry the cache refused has no outcome: its row says cache_error and why.
std::string row_status(const eval::Compiled& r) {
  return r.cache_error.empty() ? std::string(to_string(r.status)) : "cache_error";
}

// What the compiler did with the planned configs, counted.
struct CompileResults {
  std::vector<eval::Compiled> rows;
  double wall = 0;
  std::map<std::string, int> statuses;
  size_t hits = 0, refused = 0, compiled = 0;
  double rate() const { return wall > 0 ? static_cast<double>(compiled) / wall : 0; }
};

CompileResults compile_planned(gpu::KernelCompiler& compiler, const CompileCli& o,
                               const CompilePlan& plan) {
  const auto& configs = plan.configs;
  const auto t0 = std::chrono::steady_clock::now();
  ProgressLine progress;
  size_t done = 0, ok = 0;
  CompileResults out;
  out.rows = compiler.compile_all(
      configs, static_cast<unsigned>(o.jobs),
      [&](const eval::Compiled& r) {
        ++done;
        ok += r.cache_error.empty() && r.status == TrialStatus::ok;
        const double elapsed =
            std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        const double eta =
            elapsed / static_cast<double>(done) * static_cast<double>(configs.size() - done);
        const auto note = fmt::format("{} ok, {} not", ok, done - ok);
        progress(done, configs.size(), elapsed, eta, "configs", note, note);
      },
      o.layout, plan.vec, /*keep_going=*/true);
  out.wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  for (const auto& r : out.rows) {
    ++out.statuses[row_status(r)];
    out.hits += r.from_cache;
    out.refused += !r.cache_error.empty();
  }
  out.compiled = out.rows.size() - out.hits - out.refused;
  return out;
}

nlohmann::json compile_json(const CompileCli& o, const CompilePlan& plan, const CompileResults& res,
                            const gpu::KernelCompiler& compiler) {
  nlohmann::json j = {
      {"space", plan.space.name},
      {"arch", o.arch},
      {"configs", res.rows.size()},
      {"layout", o.layout},
      {"loads", plan.vec ? "float4" : "scalar"},
      {"compiled", res.compiled},
      {"cache_hits", res.hits},
      {"statuses", res.statuses},
      {"wall_s", res.wall},
      {"configs_per_s", res.rate()},
      {"threads", o.jobs},
      {"cache_errors", res.refused},
      {"not_for_arch", plan.not_for_arch},
      {"nvrtc", fmt::format("{}.{}", compiler.nvrtc_major(), compiler.nvrtc_minor())}};
  if (plan.share) j["shard"] = share_json(*plan.share);
  auto& rj = j["results"] = nlohmann::json::array();
  for (const auto& r : res.rows) {
    rj.push_back({{"name", r.config_name},
                  {"status", row_status(r)},
                  {"reason", r.cache_error.empty() ? r.reason : r.cache_error},
                  {"registers", r.registers},
                  {"spill_bytes", r.spill_store_bytes + r.spill_load_bytes},
                  {"stack_bytes", r.stack_bytes},
                  {"from_cache", r.from_cache},
                  {"instance", fmt::format("{}/{}", r.layout, r.vec_loads ? "float4" : "scalar")},
                  {"cubin", r.cubin_path.string()}});
  }
  return j;
}

void print_compile(const CompileCli& o, const CompilePlan& plan, const CompileResults& res) {
  for (const auto& r : res.rows) {
    if (!r.cache_error.empty())
      fmt::print("{}: cache_error: {}\n", r.config_name, terminal_safe(r.cache_error));
  }
  std::string st;
  for (const auto& [k, v] : res.statuses) st += fmt::format(" {}={}", k, v);
  fmt::print(
      "{} configs for {} ({}, {} loads) in {:.1f} s: {} compiled ({:.1f} configs/s), {} from "
      "cache;{}\n",
      res.rows.size(), o.arch, o.layout, plan.vec ? "float4" : "scalar", res.wall, res.compiled,
      res.rate(), res.hits, st);
}

// Once the summary is out: an entry the cache could not store fails the run (exit 1), a listed
// config the architecture cannot run is bad input (exit 2).
void check_listed(const CompilePlan& plan, const CompileResults& res,
                  const gpu::KernelCompiler& compiler) {
  if (res.refused > 0) {
    throw Error(fmt::format("{} of {} configs could not be stored in the kernel cache {}",
                            res.refused, res.rows.size(), compiler.cache_dir().string()));
  }
  if (plan.not_for_arch.empty()) return;
  const auto& arch = *plan.arch;
  std::string names;
  for (const auto& n : plan.not_for_arch)
    names += fmt::format("\n  {} (rule {})", n.at("name").get<std::string>(),
                         n.at("rule").get<std::string>());
  throw InputError(
      fmt::format("{} of the listed configs cannot run on {} and were not compiled:{}\nlist only "
                  "configs for {} (`sgemm-tune check --arch {}` explains each)",
                  plan.not_for_arch.size(), arch.name(), names, arch.name(), arch.name()));
}

}  // namespace

void register_compile(CLI::App& app) {
  auto o = std::make_shared<CompileCli>();
  CLI::App& sub = add_compile_options(app, *o);
  sub.callback([o] {
    const auto plan = plan_compile(*o);
    gpu::KernelCompiler compiler(
        o->cache_dir.empty() ? gpu::default_cache_dir() : std::filesystem::path(o->cache_dir),
        gpu::CompileOptions{o->arch, o->nvrtc_options});
    const auto res = compile_planned(compiler, *o, plan);
    if (o->json) {
      print_json(compile_json(*o, plan, res, compiler));
    } else {
      print_compile(*o, plan, res);
    }
    check_listed(plan, res, compiler);
  });
}

}  // namespace sgt::cli
