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
#include "family.hpp"
#include "index_sim.hpp"
#include "space.hpp"

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

struct CheckCli {
  std::string config, shape, space = "default", arch, layout;
  bool json = false;
};

CLI::App& add_check_options(CLI::App& app, CheckCli& o) {
  auto* sub = app.add_subcommand(
      "check",
      "Check one config by hand: derived quantities, every violated rule with its reason, and\n"
      "the CPU simulation of the kernel's indexing (every layout, boundary blocks, block order\n"
      "and split-K). Exit 0 valid, 2 invalid.");
  sub->add_option("config", o.config,
                  "Canonical name (wt_128x64x16_w64x32_wn2_t4x4_n128_mb1) or a JSON object")
      ->required();
  auto* shape_opt =
      sub->add_option("--shape", o.shape, "Also apply the shape rules for problem MxNxK")
          ->check(shape_validator());
  sub->add_option("--layout", o.layout,
                  "With --shape: the problem's operand layout, NN (default), NT, TN or TT")
      ->needs(shape_opt);
  sub->add_option("--space", o.space,
                  "Space whose limits (shared memory, accumulator budget, ...) apply")
      ->capture_default_str();
  sub->add_option("--arch", o.arch,
                  "Check against this GPU architecture's limits, e.g. sm_86 or 8.9 (default: the "
                  "space's, Hopper's otherwise)");
  sub->add_flag("--json", o.json, "Machine-readable output on stdout");
  return *sub;
}

// The config and everything found about it.
struct CheckResult {
  WarpTileConfig c;
  std::vector<RuleViolation> violations;
  SimReport sim;
  const KernelFamily* family = nullptr;
  bool in_range = false;  // no value out of range: the derived quantities mean something
};

CheckResult check_config(const CheckCli& o) {
  CheckResult res;
  res.c = parse_config(o.config);
  const auto& c = res.c;
  const auto space = load_space(o.space);
  const auto limits = o.arch.empty() ? space.limits : limits_on(parse_arch(o.arch), space.limits);
  auto& violations = res.violations = check(c, limits);
  if (!o.shape.empty()) {
    auto problem = parse_shape(o.shape);
    if (!o.layout.empty()) problem.layout = parse_layout(o.layout);
    const auto sv = check_shape(c, problem, limits);
    violations.insert(violations.end(), sv.begin(), sv.end());
  }
  res.sim = simulate_config(c);
  res.family = &family_of(c);
  res.in_range = violations.empty() || violations.front().rule != "positive_values";
  return res;
}

nlohmann::json check_json(const CheckResult& res) {
  const auto& c = res.c;
  const auto& family = *res.family;
  nlohmann::json j = {{"name", to_name(c)},
                      {"family", family.id()},
                      {"params", c},
                      {"valid", res.violations.empty()}};
  if (res.in_range) {
    j["derived"] = family.derived(c);
    // The knobs past the seed's ten (STAGES, PAD_A, GROUP_M, SPLIT_K, ...).
    for (const auto& f : kConfigFields) {
      if (f.default_value != kRequired) j["derived"][std::string(f.name)] = c.*f.member;
    }
  }
  auto& vj = j["violations"] = nlohmann::json::array();
  for (const auto& v : res.violations) vj.push_back({{"rule", v.rule}, {"reason", v.reason}});
  j["simulation_scope"] = family.simulation_scope();
  auto& sj = j["simulation"] = nlohmann::json::array();
  for (const auto& d : res.sim.defects) sj.push_back({{"kind", d.kind}, {"detail", d.detail}});
  return j;
}

void print_check(const CheckCli& o, const CheckResult& res) {
  const auto& c = res.c;
  const auto& family = *res.family;
  fmt::print("{}\n", to_name(c));
  if (res.in_range) {
    if (const auto line = family.derived_line(c); !line.empty()) fmt::print("  {}\n", line);
    std::string knobs;
    for (const auto& f : kConfigFields) {
      if (f.default_value != kRequired) knobs += fmt::format("  {} {}", f.name, c.*f.member);
    }
    fmt::print("{}  family {}\n", knobs, c.family);
  }
  if (res.violations.empty()) {
    fmt::print(
        "  valid: passes every rule{}\n",
        o.shape.empty() ? "" : " and fits " + o.shape + (o.layout.empty() ? "" : " " + o.layout));
  }
  for (const auto& v : res.violations) fmt::print("  rule {}: {}\n", v.rule, v.reason);
  if (res.sim.ok()) {
    fmt::print(
        "  simulation: clean in {}: every C element inside the matrix written once and none "
        "outside, every As/Bs element loaded once (reads inside the matrix; zero beyond it in "
        "k), operands matched, "
        "float4 accesses aligned, every tile and every k taken once\n",
        family.simulation_scope());
  } else {
    fmt::print("  simulation of {} finds:\n", family.simulation_scope());
  }
  for (const auto& d : res.sim.defects) fmt::print("  simulation {}: {}\n", d.kind, d.detail);
}

}  // namespace

void register_check(CLI::App& app) {
  auto o = std::make_shared<CheckCli>();
  CLI::App& sub = add_check_options(app, *o);
  sub.callback([o] {
    const auto res = check_config(*o);
    if (o->json) {
      print_json(check_json(res));
    } else {
      print_check(*o, res);
    }
    if (!res.violations.empty()) throw CLI::RuntimeError(2);
  });
}

}  // namespace sgt::cli
