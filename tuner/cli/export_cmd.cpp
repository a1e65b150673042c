// `sgemm-tune export`: the winners of a tuning database as a generated C++ header (or JSON) that a
// build embeds, so an application dispatches to its tuned kernels without the database.
#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <optional>
#include <set>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "commands.hpp"
#include "db_gpu.hpp"
#include "error.hpp"
#include "export.hpp"
#include "file_util.hpp"
#include "family.hpp"
#include "kernel_source.hpp"
#include "store.hpp"
#include "tune_store.hpp"

namespace sgt::cli {

namespace {

// nvcc's static_asserts refuse a config that breaks a structural rule, so one such winner (only
// an imported or hand-edited database can hold it) would break every build that embeds the table.
// A family's kernel may assert more of its rules (KernelFamily::asserted_rules: the TMA kernel its
// ring depth, box and register rules, and tma_flag, as the dispatch library instantiates it).
std::vector<RuleViolation> structural_violations(const WarpTileConfig& c) {
  std::set<std::string_view> structural;
  for (const auto& r : rules()) {
    if (r.structural) structural.insert(r.name);
  }
  for (const auto rule : family_of(c).asserted_rules()) structural.insert(rule);
  auto v = check(c);
  std::erase_if(v, [&](const RuleViolation& r) { return !structural.count(r.rule); });
  return v;
}

std::vector<db::GpuIdentity> select_gpus(const db::SqliteStore& store,
                                         const std::vector<std::string>& wanted,
                                         const std::filesystem::path& path) {
  const auto all = store.gpus();
  std::vector<db::GpuIdentity> out;
  auto add = [&](const db::GpuIdentity& id) {
    if (std::find(out.begin(), out.end(), id) == out.end()) out.push_back(id);
  };
  if (wanted.empty()) {
    for (const auto& g : all) add(g.identity());
    return out;
  }
  for (const auto& name : wanted) {
    // A name shared by several identities (say, a full GPU and a partition) exports them all.
    const auto meant = resolve_db_gpus(store, name);
    if (!meant.note.empty()) spdlog::info("{}", terminal_safe(meant.note));
    for (const auto& id : meant.gpus) {
      if (!store.gpu(id)) {
        throw InputError(fmt::format("{}: nothing tuned for it in '{}'; known GPUs:{}", meant.note,
                                     path.string(), db::describe_gpus(all)));
      }
      add(id);
    }
  }
  return out;
}

struct ExportCli {
  std::string db, format = "cpp", output, precision = "fp32";
  std::vector<std::string> gpus;
  bool allow_stale = false;
};

CLI::App& add_export_options(CLI::App& app, ExportCli& o) {
  auto* sub = app.add_subcommand(
      "export",
      "Write the tuned winners of a database as a generated C++ header (or JSON) that builds "
      "embed: per GPU, the winning config of every tuned shape (every layout), a default config "
      "per layout, and how each winner fared on its edge checks");
  sub->add_option("--format", o.format,
                  "cpp: a header for the sgemm_tuned dispatch library and any C++ code; json: "
                  "the same table for scripts")
      ->check(CLI::IsMember({"cpp", "json"}))
      ->capture_default_str();
  sub->add_option("--db", o.db,
                  "Tuning database (default: $SGT_DB, else $XDG_CACHE_HOME/sgemm-tune/tuning.db, "
                  "else ~/.cache/sgemm-tune/tuning.db). Opened read-only, never created");
  sub->add_option("--gpu", o.gpus,
                  "Only these GPUs (repeatable): a name as `sgemm-tune list` shows it "
                  "(case-insensitive), its NAME@sm_XY/SMS key, a part of a name that names one "
                  "('h200'), 'auto' or a device index (this machine's GPU). Default: every GPU");
  sub->add_flag("--allow-stale", o.allow_stale,
                "Also export winners measured with another kernel source, driver major or NVRTC "
                "major (skipped by default)");
  add_precision_option(*sub, o.precision,
                       "the table's winners are chosen in that class and the table states it (a "
                       "dispatch library builds an fp32-accurate table only when its build asks "
                       "for that class)");
  sub->add_option("-o,--output", o.output, "Output file ('-' for stdout); replaced atomically")
      ->required();
  sub->footer(fmt::format(
      "Every layout (NN, NT, TN, TT) is exported. Per layout, a GPU's default config is its winner "
      "with the best % of cuBLAS across that layout's shapes; the GPU's overall default (for "
      "layouts with no tuned shape) is the NN default, or {} when no NN shape is tuned. Each "
      "shape carries its winner's edge checks (in the header: a comment, verified passed/run).\n"
      "Set SOURCE_DATE_EPOCH for a reproducible header. Exit codes: 0 written, 1 database or "
      "I/O error, 2 bad input (unknown GPU).",
      db::kDefaultConfigName));
  return *sub;
}

// The row of GPU id's winner w; none for another GPU's winner or another template or dtype, and
// none with a warning for a winner the dispatch library could not build (layout, structure).
std::optional<TableShape> table_shape(const db::Winner& w, const db::GpuIdentity& id) {
  const auto& tr = w.best.trial;
  // The dispatch library instantiates this template for f32 only.
  if (!(w.best.gpu == id) || tr.kernel_template != kKernelTemplateName ||
      tr.problem.dtype != "f32") {
    return std::nullopt;
  }
  if (!is_layout(tr.problem.layout)) {
    std::fprintf(stderr, "warning: skipping the winner %s of %s on %s: unknown layout '%s'\n",
                 tr.config_name.c_str(), tr.problem.shape().c_str(), id.label().c_str(),
                 tr.problem.layout.c_str());
    return std::nullopt;
  }
  if (const auto bad = structural_violations(tr.config); !bad.empty()) {
    std::fprintf(stderr, "warning: skipping the winner %s of %s on %s: %s\n",
                 tr.config_name.c_str(), tr.problem.shape().c_str(), id.label().c_str(),
                 bad.front().reason.c_str());
    return std::nullopt;
  }
  TableShape s;
  s.problem = tr.problem;
  s.config = tr.config;
  s.config_name = to_name(tr.config);
  s.median_ms = tr.time.median_ms;
  s.cublas_median_ms = tr.cublas_median_ms;
  s.gflops = tr.gflops;
  s.ok_trials = w.ok_trials;
  s.stale = w.stale;
  s.measured = tr.timestamp;
  s.tuner_version = tr.tuner_version;
  s.edge_checks = tr.edge_checks;
  if (edge_checks_passed(s.edge_checks) < static_cast<int>(s.edge_checks.size())) {
    std::fprintf(stderr, "warning: the winner %s of %s %s on %s %s\n", s.config_name.c_str(),
                 tr.problem.shape().c_str(), tr.problem.layout.c_str(), id.label().c_str(),
                 edge_check_summary(s.edge_checks).c_str());
  }
  return s;
}

// One GPU's part of the table: its winners' rows in shape order, and its default configs.
TableGpu table_gpu(const db::SqliteStore& store, const db::GpuIdentity& id,
                   const std::vector<db::Winner>& winners, const WarpTileConfig& fallback,
                   bool allow_stale) {
  TableGpu g;
  g.name = id.name;
  g.cc_major = id.cc_major;
  g.cc_minor = id.cc_minor;
  g.sm_count = id.sm_count;
  for (const auto& w : winners) {
    if (auto s = table_shape(w, id)) g.shapes.push_back(std::move(*s));
  }
  std::sort(g.shapes.begin(), g.shapes.end(), [](const TableShape& a, const TableShape& b) {
    return std::tie(a.problem.M, a.problem.N, a.problem.K, a.problem.layout, a.problem.dtype) <
           std::tie(b.problem.M, b.problem.N, b.problem.K, b.problem.layout, b.problem.dtype);
  });
  choose_default(g, fallback, db::kDefaultConfigName);
  if (g.shapes.empty()) {
    std::fprintf(stderr, "note: nothing tuned for %s: it gets the default config %s\n",
                 id.label().c_str(), g.default_name.c_str());
  }
  if (!allow_stale) {
    if (const auto stale = store.stale_trials(id, std::nullopt); stale.total > 0) {
      std::fprintf(stderr, "note: skipped %lld stale trial%s of %s; --allow-stale exports them\n",
                   stale.total, stale.total == 1 ? "" : "s", id.label().c_str());
    }
  }
  return g;
}

void run_export(const ExportCli& o) {
  const std::filesystem::path path =
      o.db.empty() ? db::default_db_path() : std::filesystem::path(o.db);
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) {
    throw Error(fmt::format(
        "no tuning database at '{}' (nothing tuned yet? run `sgemm-tune tune`, or point --db "
        "at one)",
        path.string()));
  }
  const auto store = db::SqliteStore::open(path, db::OpenMode::read_only);
  const auto gpus = select_gpus(store, o.gpus, path);
  const Precision precision = parse_precision_option(o.precision);
  const auto winners = store.winners(o.allow_stale, precision);
  const auto fallback = *from_name(db::kDefaultConfigName);
  // The diagnostics go to stderr; stdout carries the table when writing to '-'.
  std::FILE* info = o.output == "-" ? stderr : stdout;

  Table t;
  t.tool_version = SGT_VERSION;
  t.database = path.string();
  t.generated_utc = export_timestamp();
  t.kernel_template = std::string(kKernelTemplateName);
  t.family_hashes = current_family_hashes();
  t.allow_stale = o.allow_stale;
  t.precision = precision;
  std::size_t shapes = 0;
  for (const auto& id : gpus) {
    t.gpus.push_back(table_gpu(store, id, winners, fallback, o.allow_stale));
    shapes += t.gpus.back().shapes.size();
  }
  if (t.gpus.empty()) {
    std::fprintf(stderr,
                 "note: '%s' holds no GPUs: the table is empty (still a valid %s), and the "
                 "dispatch library will call cuBLAS for everything\n",
                 path.string().c_str(), o.format == "cpp" ? "header" : "JSON table");
  }

  const std::string text = o.format == "cpp" ? render_cpp(t) : render_json(t);
  if (o.output == "-") {
    std::fwrite(text.data(), 1, text.size(), stdout);
  } else {
    write_file_atomically(o.output, text);
  }
  const auto configs = table_configs(t).size();
  fmt::print(info, "exported {} GPU{}, {} tuned shape{}, {} config{} from {} to {}\n",
             t.gpus.size(), t.gpus.size() == 1 ? "" : "s", shapes, shapes == 1 ? "" : "s", configs,
             configs == 1 ? "" : "s", path.string(), o.output);
}

}  // namespace

void register_export(CLI::App& app) {
  auto o = std::make_shared<ExportCli>();
  CLI::App& sub = add_export_options(app, *o);
  sub.callback([o] { run_export(*o); });
}

}  // namespace sgt::cli
