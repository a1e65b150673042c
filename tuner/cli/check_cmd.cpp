// `sgemm-tune check`: everything the tuner knows about one config without a GPU — derived
// quantities, every violated rule, the index simulation's verdict, and (with --shape) whether it
// can serve a problem. For engineers who still want to pick tile constants by hand.
#include <cstdio>
#include <string>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "commands.hpp"
#include "json_output.hpp"
#include "error.hpp"
#include "index_sim.hpp"
#include "space.hpp"
#include "tma_geometry.h"

namespace sgt::cli {

namespace {

// A canonical name, or a JSON object of the fields.
WarpTileConfig parse_config(const std::string& text) {
  if (auto c = from_name(text)) return *c;
  if (!text.empty() && text.front() == '{') {
    try {
      return nlohmann::json::parse(text).get<WarpTileConfig>();
    } catch (const nlohmann::json::exception& e) {
      throw InputError(fmt::format("bad config JSON '{}': {}", text, e.what()));
    }
  }
  throw InputError(fmt::format(
      "'{}' is neither a canonical config name (e.g. wt_128x64x16_w64x32_wn2_t4x4_n128_mb1) nor "
      "a JSON object of the fields",
      text));
}

}  // namespace

void register_check(CLI::App& app) {
  struct Opts {
    std::string config, shape, space = "default", arch, layout;
    bool json = false;
  };
  auto o = std::make_shared<Opts>();
  auto* sub = app.add_subcommand(
      "check",
      "Check one config by hand: derived quantities, every violated rule with its reason, and\n"
      "the CPU simulation of the kernel's indexing (every layout, boundary blocks, block order\n"
      "and split-K). Exit 0 valid, 2 invalid.");
  sub->add_option("config", o->config,
                  "Canonical name (wt_128x64x16_w64x32_wn2_t4x4_n128_mb1) or a JSON object")
      ->required();
  auto* shape_opt =
      sub->add_option("--shape", o->shape, "Also apply the shape rules for problem MxNxK")
          ->check(shape_validator());
  sub->add_option("--layout", o->layout,
                  "With --shape: the problem's operand layout, NN (default), NT, TN or TT")
      ->needs(shape_opt);
  sub->add_option("--space", o->space,
                  "Space whose limits (shared memory, accumulator budget, ...) apply")
      ->capture_default_str();
  sub->add_option("--arch", o->arch,
                  "Check against this GPU architecture's limits, e.g. sm_86 or 8.9 (default: the "
                  "space's, Hopper's otherwise)");
  sub->add_flag("--json", o->json, "Machine-readable output on stdout");
  sub->callback([o] {
    const auto c = parse_config(o->config);
    const auto space = load_space(o->space);
    const auto limits =
        o->arch.empty() ? space.limits : limits_on(parse_arch(o->arch), space.limits);
    auto violations = check(c, limits);
    if (!o->shape.empty()) {
      auto problem = parse_shape(o->shape);
      if (!o->layout.empty()) problem.layout = parse_layout(o->layout);
      const auto sv = check_shape(c, problem, limits);
      violations.insert(violations.end(), sv.begin(), sv.end());
    }
    const auto sim = simulate_config(c);
    const auto g = derive(c);
    const bool in_range = violations.empty() || violations.front().rule != "positive_values";

    if (o->json) {
      nlohmann::json j = {{"name", to_name(c)}, {"params", c}, {"valid", violations.empty()}};
      if (in_range) {
        j["derived"] = {{"WMITER", g.WMITER},         {"WSUBM", g.WSUBM},
                        {"WSUBN", g.WSUBN},           {"A_PASSES", g.A_PASSES},
                        {"B_PASSES", g.B_PASSES},     {"AS_LD", g.AS_LD},
                        {"SMEM_BYTES", g.SMEM_BYTES}, {"ACCUMULATORS", g.ACCUMULATORS},
                        {"FRAGMENTS", g.FRAGMENTS}};
        if (c.TMA == 1) {
          const auto tl = sgt_kernel::make_tma_layout(g, false, false, c.MIN_BLOCKS);
          j["derived"]["TMA_THREADS"] = tl.THREADS;
          j["derived"]["TMA_CONSUMER_REGS"] = tl.CONSUMER_REGS;
          j["derived"]["TMA_SHARED_BYTES"] = {{"TN", tma_shared_bytes(c, true, false)},
                                              {"NN", tma_shared_bytes(c, false, false)},
                                              {"TT", tma_shared_bytes(c, true, true)},
                                              {"NT", tma_shared_bytes(c, false, true)}};
        }
        // The knobs past the seed's ten (STAGES, PAD_A, GROUP_M, SPLIT_K, ...).
        for (const auto& f : kConfigFields) {
          if (f.default_value != kRequired) j["derived"][std::string(f.name)] = c.*f.member;
        }
      }
      auto& vj = j["violations"] = nlohmann::json::array();
      for (const auto& v : violations) vj.push_back({{"rule", v.rule}, {"reason", v.reason}});
      j["simulation_scope"] = simulate_config_scope();
      auto& sj = j["simulation"] = nlohmann::json::array();
      for (const auto& d : sim.defects) sj.push_back({{"kind", d.kind}, {"detail", d.detail}});
      print_json(std::move(j));
    } else {
      fmt::print("{}\n", to_name(c));
      if (in_range && c.TMA == 1) {
        // The TMA kernel: no load passes; dynamic shared memory by layout (what each stages).
        const auto tl = sgt_kernel::make_tma_layout(g, false, false, c.MIN_BLOCKS);
        fmt::print(
            "  WMITER {}  sub-tile {}x{}  AS_LD {}  threads {} ({} consumers + {} producers)  "
            "registers {} -> {} consumers  shared TN {} B, NN/TT {} B, NT {} B  accumulators {}  "
            "fragments {}\n",
            g.WMITER, g.WSUBM, g.WSUBN, g.AS_LD, tl.THREADS, c.NUM_THREADS,
            sgt_kernel::kTmaProducerThreads, tl.LAUNCH_REGS, tl.CONSUMER_REGS,
            tma_shared_bytes(c, true, false), tma_shared_bytes(c, false, false),
            tma_shared_bytes(c, false, true), g.ACCUMULATORS, g.FRAGMENTS);
      } else if (in_range) {
        fmt::print(
            "  WMITER {}  sub-tile {}x{}  load passes A {} B {}  AS_LD {}  shared {} B  "
            "accumulators {}  fragments {}\n",
            g.WMITER, g.WSUBM, g.WSUBN, g.A_PASSES, g.B_PASSES, g.AS_LD, g.SMEM_BYTES,
            g.ACCUMULATORS, g.FRAGMENTS);
        std::string knobs;
        for (const auto& f : kConfigFields) {
          if (f.default_value != kRequired) knobs += fmt::format("  {} {}", f.name, c.*f.member);
        }
        fmt::print("{}\n", knobs);
      }
      if (violations.empty()) {
        fmt::print("  valid: passes every rule{}\n",
                   o->shape.empty()
                       ? ""
                       : " and fits " + o->shape + (o->layout.empty() ? "" : " " + o->layout));
      }
      for (const auto& v : violations) fmt::print("  rule {}: {}\n", v.rule, v.reason);
      if (sim.ok()) {
        fmt::print(
            "  simulation: clean in {}: every C element inside the matrix written once and none "
            "outside, every As/Bs element loaded once (reads inside the matrix; zero beyond it in "
            "k), operands matched, "
            "float4 accesses aligned, every tile and every k taken once\n",
            simulate_config_scope());
      } else {
        fmt::print("  simulation of {} finds:\n", simulate_config_scope());
      }
      for (const auto& d : sim.defects) fmt::print("  simulation {}: {}\n", d.kind, d.detail);
    }
    if (!violations.empty()) throw CLI::RuntimeError(2);
  });
}

}  // namespace sgt::cli
