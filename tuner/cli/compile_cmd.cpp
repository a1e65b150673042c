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

}  // namespace

void register_compile(CLI::App& app) {
  struct Opts {
    std::string space = "auto", shape, arch = "sm_90", cache_dir, shard, layout = "NN",
                precision = "fp32", loads = "auto", configs;
    int jobs = 0;
    std::vector<std::string> nvrtc_options;
    bool json = false;
  };
  auto o = std::make_shared<Opts>();
  auto* sub = app.add_subcommand(
      "compile",
      "Compile every survivor of a space with NVRTC into the kernel cache (no GPU needed) and\n"
      "report registers, spills and throughput. A later tune for the same arch compiles nothing.\n"
      "An entry the cache cannot store (read-only directory, a directory in a file's place) is\n"
      "reported as cache_error with the reason and the others go on; the exit code is then 1.");
  sub->add_option(
         "--space", o->space,
         "Search space: a JSON file, a built-in name, spaces joined by '+' (default+tma), or "
         "auto (every built-in space)")
      ->capture_default_str();
  sub->add_option("--shape", o->shape, "Only configs valid for problem MxNxK");
  sub->add_option("--configs", o->configs,
                  "Compile these configs instead of a space: a file of canonical names, one per "
                  "line ('#' starts a comment)")
      ->check(CLI::ExistingFile);
  sub->add_option("--layout", o->layout,
                  "Operand layout to instantiate: NN, NT, TN or TT (op(A) op(B), row-major)")
      ->capture_default_str();
  sub->add_option(
         "--loads", o->loads,
         "Main-loop loads to instantiate: float4, scalar (for operands whose leading "
         "dimensions or pointers refuse 16-byte accesses), or auto: what a tune of --shape "
         "in --layout uses, float4 without --shape")
      ->check(CLI::IsMember({"auto", "float4", "scalar"}))
      ->capture_default_str();
  sub->add_option("--arch", o->arch, "Target architecture, e.g. sm_90 (H100/H200), sm_80 (A100)")
      ->capture_default_str();
  add_cache_dir_option(*sub, o->cache_dir);
  add_precision_option(*sub, o->precision, "the class of the configs compiled");
  sub->add_option("--nvrtc-option", o->nvrtc_options,
                  "Extra NVRTC option, repeatable (part of the compile-cache key), e.g. "
                  "-DSGT_K_UNROLL=4 to unroll the k loop 4x instead of fully");
  sub->add_option("-j,--jobs", o->jobs, "NVRTC threads (default: all cores)")
      ->check(CLI::Range(0, 1024));
  add_shard_option(*sub, o->shard, "The kernel binaries to compile (of equal cost: round-robin)",
                   "The split-K variants of a config share one binary, so they stay on one "
                   "shard; the shards share one --cache-dir");
  sub->add_flag("--json", o->json, "Machine-readable summary on stdout");
  sub->callback([o] {
    std::optional<Problem> problem;
    if (!o->shape.empty()) {
      problem = parse_shape(o->shape);
      problem->layout = parse_layout(o->layout);
    }
    SpaceEnumeration space;
    const ArchInfo& arch = parse_arch(o->arch);
    // Listed configs the architecture cannot run: reported, and the run then exits 2.
    nlohmann::json not_for_arch = nlohmann::json::array();
    if (o->configs.empty()) {
      space = enumerate_spaces(o->space, problem, &arch, parse_precision_option(o->precision));
    } else {
      space.name = o->configs;
      // A listed config the architecture cannot run is refused by its rule, not compiled.
      for (const auto& c : read_config_list(o->configs)) {
        const auto v = check(c, hardware_limits(arch));
        if (v.empty()) {
          space.enumeration.survivors.push_back(c);
        } else {
          spdlog::warn("{}: not for {}: rule {}: {}", to_name(c), arch.name(), v.front().rule,
                       v.front().reason);
          not_for_arch.push_back(
              {{"name", to_name(c)}, {"rule", v.front().rule}, {"reason", v.front().reason}});
        }
      }
    }
    const bool vec =
        o->loads == "auto" ? !problem || kernel_vec_loads(*problem) : o->loads == "float4";
    auto configs = space.enumeration.survivors;
    std::optional<ShardShare> share;
    if (const auto shard = resolve_shard(o->shard)) {
      // Binaries are dealt, each with every config it serves, at one cost each: no two shards
      // compile the same binary, and equal costs deal them round-robin in the space's order.
      std::map<std::string, size_t> binary_of;
      std::vector<size_t> binary(configs.size());
      for (size_t i = 0; i < configs.size(); ++i) {
        const auto name = resolve(configs[i], o->layout, vec).name_expression;
        binary[i] = binary_of.emplace(name, binary_of.size()).first->second;
      }
      share = share_of(*shard, std::vector<double>(binary_of.size(), 1.0));
      log_share(*share, "binaries", "binaries");
      std::vector<bool> mine(binary_of.size(), false);
      for (size_t b : share->mine) mine[b] = true;
      std::vector<WarpTileConfig> kept;
      for (size_t i = 0; i < configs.size(); ++i) {
        if (mine[binary[i]]) kept.push_back(configs[i]);
      }
      configs = std::move(kept);
    }
    gpu::KernelCompiler compiler(
        o->cache_dir.empty() ? gpu::default_cache_dir() : std::filesystem::path(o->cache_dir),
        gpu::CompileOptions{o->arch, o->nvrtc_options});
    const auto t0 = std::chrono::steady_clock::now();
    ProgressLine progress;
    size_t done = 0, ok = 0;
    const auto results = compiler.compile_all(
        configs, static_cast<unsigned>(o->jobs),
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
        o->layout, vec, /*keep_going=*/true);
    const double wall =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();

    // An entry the cache refused has no outcome: its row says cache_error and why.
    auto row_status = [](const eval::Compiled& r) {
      return r.cache_error.empty() ? std::string(to_string(r.status)) : "cache_error";
    };
    std::map<std::string, int> statuses;
    size_t hits = 0, refused = 0;
    for (const auto& r : results) {
      ++statuses[row_status(r)];
      hits += r.from_cache;
      refused += !r.cache_error.empty();
    }
    const size_t compiled = results.size() - hits - refused;
    const auto failed = [&] {
      return Error(fmt::format("{} of {} configs could not be stored in the kernel cache {}",
                               refused, results.size(), compiler.cache_dir().string()));
    };
    const double rate = wall > 0 ? static_cast<double>(compiled) / wall : 0;
    const auto check_listed = [&] {
      if (refused > 0) throw failed();
      if (!not_for_arch.empty()) {
        std::string names;
        for (const auto& n : not_for_arch)
          names += fmt::format("\n  {} (rule {})", n.at("name").get<std::string>(),
                               n.at("rule").get<std::string>());
        throw InputError(fmt::format(
            "{} of the listed configs cannot run on {} and were not compiled:{}\nlist only "
            "configs for {} (`sgemm-tune check --arch {}` explains each)",
            not_for_arch.size(), arch.name(), names, arch.name(), arch.name()));
      }
    };
    if (o->json) {
      nlohmann::json j = {
          {"space", space.name},
          {"arch", o->arch},
          {"configs", results.size()},
          {"layout", o->layout},
          {"loads", vec ? "float4" : "scalar"},
          {"compiled", compiled},
          {"cache_hits", hits},
          {"statuses", statuses},
          {"wall_s", wall},
          {"configs_per_s", rate},
          {"threads", o->jobs},
          {"cache_errors", refused},
          {"not_for_arch", not_for_arch},
          {"nvrtc", fmt::format("{}.{}", compiler.nvrtc_major(), compiler.nvrtc_minor())}};
      if (share) j["shard"] = share_json(*share);
      auto& rj = j["results"] = nlohmann::json::array();
      for (const auto& r : results) {
        rj.push_back(
            {{"name", r.config_name},
             {"status", row_status(r)},
             {"reason", r.cache_error.empty() ? r.reason : r.cache_error},
             {"registers", r.registers},
             {"spill_bytes", r.spill_store_bytes + r.spill_load_bytes},
             {"stack_bytes", r.stack_bytes},
             {"from_cache", r.from_cache},
             {"instance", fmt::format("{}/{}", r.layout, r.vec_loads ? "float4" : "scalar")},
             {"cubin", r.cubin_path.string()}});
      }
      print_json(std::move(j));
      check_listed();
      return;
    }
    for (const auto& r : results) {
      if (!r.cache_error.empty())
        fmt::print("{}: cache_error: {}\n", r.config_name, terminal_safe(r.cache_error));
    }
    std::string st;
    for (const auto& [k, v] : statuses) st += fmt::format(" {}={}", k, v);
    fmt::print(
        "{} configs for {} ({}, {} loads) in {:.1f} s: {} compiled ({:.1f} configs/s), {} from "
        "cache;{}\n",
        results.size(), o->arch, o->layout, vec ? "float4" : "scalar", wall, compiled, rate, hits,
        st);
    check_listed();
  });
}

}  // namespace sgt::cli
