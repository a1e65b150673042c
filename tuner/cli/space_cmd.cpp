// `sgemm-tune space`: enumerate a search space and show what the rules keep and reject.
#include <chrono>
#include <cstdio>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "tune_store.hpp"
#include "commands.hpp"
#include "json_output.hpp"
#include "error.hpp"
#include "index_sim.hpp"
#include "space.hpp"

namespace sgt::cli {

namespace {

struct SpaceCli {
  std::string space = "auto";
  std::string shape, arch, layout, precision = "fp32";
  bool explain = false, list = false, json = false, simulate = false;
};

CLI::App& add_space_options(CLI::App& app, SpaceCli& o) {
  auto* sub = app.add_subcommand("space", "Enumerate a search space and prune it by named rules");
  sub->add_option(
         "--space", o.space,
         "Search space: a JSON file, a built-in name, spaces joined by '+' (default+tma), or "
         "auto (every built-in space)")
      ->capture_default_str();
  auto* shape_opt =
      sub->add_option("--shape", o.shape, "Also apply the shape rules for problem MxNxK")
          ->check(shape_validator());
  sub->add_option("--layout", o.layout,
                  "With --shape: the problem's operand layout, NN (default), NT, TN or TT (the TMA "
                  "configs' stages and copies depend on it)")
      ->needs(shape_opt);
  sub->add_option("--arch", o.arch,
                  "Prune for this GPU architecture's limits, e.g. sm_86 (RTX 30) or 8.9 (RTX 40): "
                  "threads and blocks per SM, shared memory per block, whether the TMA kernel "
                  "exists there (default: the limits the space states, Hopper's otherwise)");
  add_precision_option(*sub, o.precision,
                       "fp32 rejects the configs of families of another class by the rule "
                       "precision_class");
  sub->add_flag("--explain", o.explain, "Per-rule rejection counts with a sample reject per rule");
  sub->add_flag("--list", o.list, "List the canonical names of the survivors");
  sub->add_flag("--simulate", o.simulate,
                "Also replay the kernel's indexing on the CPU for every survivor, in every layout, "
                "for boundary blocks, and for the block order and split-K (the proof that the "
                "rules keep only correct configs); exit 1 if any survivor shows a defect");
  sub->add_flag("--json", o.json, "Machine-readable output on stdout");
  return *sub;
}

// The space enumerated (and, with --simulate, its survivors replayed).
struct SpaceResult {
  std::optional<Problem> problem;
  const ArchInfo* arch = nullptr;
  SpaceEnumeration space;
  double secs = 0;
  // Survivors the simulation finds a defect in: a rule is missing. Should never happen.
  std::vector<std::pair<std::string, std::string>> defective;
  double sim_secs = 0;
};

SpaceResult enumerate_space(const SpaceCli& o) {
  SpaceResult res;
  if (!o.shape.empty()) {
    res.problem = parse_shape(o.shape);
    if (!o.layout.empty()) res.problem->layout = parse_layout(o.layout);
  }
  const auto t0 = std::chrono::steady_clock::now();
  res.arch = o.arch.empty() ? nullptr : &parse_arch(o.arch);
  res.space = enumerate_spaces(o.space, res.problem, res.arch, parse_precision_option(o.precision));
  const auto& e = res.space.enumeration;
  res.secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  if (o.simulate) {
    const auto s0 = std::chrono::steady_clock::now();
    const auto reports = simulate_configs(e.survivors);
    for (size_t i = 0; i < reports.size(); ++i) {
      if (!reports[i].ok())
        res.defective.emplace_back(to_name(e.survivors[i]), reports[i].summary());
    }
    res.sim_secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - s0).count();
  }
  return res;
}

nlohmann::json space_json(const SpaceCli& o, const SpaceResult& res) {
  const auto& space = res.space;
  const auto& e = space.enumeration;
  nlohmann::json j = {{"space", space.name},
                      {"origin", space.origin},
                      {"combinations", e.total},
                      {"survivors", e.survivors.size()},
                      {"rejected", e.total - static_cast<long long>(e.survivors.size())},
                      {"seconds", res.secs}};
  if (res.problem) j["shape"] = res.problem->shape(), j["layout"] = res.problem->layout;
  if (o.explain) {
    auto& rj = j["rules"] = nlohmann::json::array();
    for (const auto& r : e.rejections) {
      rj.push_back({{"rule", r.rule},
                    {"violations", r.violations},
                    {"first", r.first},
                    {"sample", r.sample},
                    {"sample_reason", r.sample_reason}});
    }
  }
  if (o.simulate) {
    auto& sj = j["simulation"] = {{"simulated", e.survivors.size()},
                                  {"scope", simulate_config_scope()},
                                  {"seconds", res.sim_secs},
                                  {"defective", nlohmann::json::array()}};
    for (const auto& [n, why] : res.defective)
      sj["defective"].push_back({{"name", n}, {"defects", why}});
  }
  if (o.list) {
    auto& cj = j["configs"] = nlohmann::json::array();
    for (const auto& c : e.survivors) cj.push_back({{"name", to_name(c)}, {"params", c}});
  }
  return j;
}

// --explain: each rule's rejections, with a sample.
void print_rules(const Enumeration& e) {
  fmt::print("\n{:<24} {:>10} {:>10}  {}\n", "rule", "violations", "first", "sample reject");
  for (const auto& r : e.rejections) {
    fmt::print("{:<24} {:>10} {:>10}  {}\n", r.rule, r.violations, r.first,
               r.sample.empty() ? "-" : r.sample);
    if (!r.sample_reason.empty()) fmt::print("{:<47}  ({})\n", "", r.sample_reason);
  }
  fmt::print(
      "\n'violations' counts every config that breaks the rule; 'first' counts each "
      "rejected config once, under its first broken rule.\n");
}

void print_space(const SpaceCli& o, const SpaceResult& res) {
  const auto& space = res.space;
  const auto& e = space.enumeration;
  // With --list alone, stdout is the names, one per line (for `compile --configs`, scripts); the
  // summary line goes to stderr.
  const bool names_only = o.list && !o.explain && !o.simulate;
  fmt::print(names_only ? stderr : stdout,
             "space {} ({}): {} combinations, {} survivors, {} rejected ({:.3f} s){}{}\n",
             space.name, space.origin, e.total, e.survivors.size(),
             e.total - static_cast<long long>(e.survivors.size()), res.secs,
             res.problem ? " for shape " + res.problem->shape() + " " + res.problem->layout : "",
             res.arch ? " on " + res.arch->name() : "");
  if (o.explain) print_rules(e);
  if (o.list) {
    for (const auto& c : e.survivors) fmt::print("{}\n", to_name(c));
  }
  if (o.simulate) {
    fmt::print(
        "simulation: {} of {} survivors replay clean in {} ({:.3f} s): each C element inside "
        "the matrix written once and none outside, each As/Bs element loaded once per k-step "
        "(reads inside the matrix; zero beyond it in k), operands matched, float4 aligned, each "
        "tile and k taken "
        "once\n",
        e.survivors.size() - res.defective.size(), e.survivors.size(), simulate_config_scope(),
        res.sim_secs);
    for (const auto& [n, why] : res.defective) fmt::print("  DEFECT {}:\n{}\n", n, why);
  }
}

}  // namespace

void register_space(CLI::App& app) {
  auto o = std::make_shared<SpaceCli>();
  CLI::App& sub = add_space_options(app, *o);
  sub.callback([o] {
    const auto res = enumerate_space(*o);
    if (o->json) {
      print_json(space_json(*o, res));
    } else {
      print_space(*o, res);
    }
    if (!res.defective.empty()) throw Error("the index simulation found defects in survivors");
  });
}

}  // namespace sgt::cli
