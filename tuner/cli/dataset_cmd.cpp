// `sgemm-tune dataset ...`: replay datasets, the recorded trials of every candidate of one problem
// on one GPU (db/dataset.hpp): write one from a tuning database, and describe one.
#include <cstdio>
#include <filesystem>
#include <map>
#include <set>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "commands.hpp"
#include "json_output.hpp"
#include "dataset.hpp"
#include "error.hpp"
#include "file_util.hpp"
#include "space.hpp"
#include "db_gpu.hpp"
#include "store.hpp"
#include "tune_store.hpp"

namespace sgt::cli {

namespace {

// The GPU of a database that a command names by --gpu (name or key), or its only one.
db::GpuIdentity pick_gpu(const db::SqliteStore& store, const std::string& gpu) {
  const auto all = store.gpus();
  if (gpu.empty()) {
    if (all.size() == 1) return all.front().identity();
    throw InputError(fmt::format("'{}' holds {} GPUs; say which with --gpu:{}",
                                 store.path().string(), all.size(), db::describe_gpus(all)));
  }
  const auto meant = resolve_db_gpus(store, gpu);
  if (meant.gpus.size() == 1 && store.gpu(meant.gpus.front())) return meant.gpus.front();
  throw InputError(fmt::format("--gpu '{}' names {} of the GPUs in '{}':{}", gpu,
                               meant.gpus.size() == 1 ? 0 : meant.gpus.size(),
                               store.path().string(), db::describe_gpus(all)));
}

struct Summary {
  std::map<std::string, long long> statuses;
  long long screened = 0, cut = 0;
  long long measured = 0;  // distinct configs screened, counted in the file (not the header's)
  const db::StoredTrial* best = nullptr;
  double compile_s = 0, measure_s = 0;
};

Summary summarize(const db::Dataset& ds) {
  Summary s;
  std::set<std::string> configs;
  for (const auto& st : ds.trials) {
    const auto& t = st.trial;
    if (t.phase == TrialPhase::final) continue;
    ++s.screened;
    configs.insert(t.config_name);
    ++s.statuses[std::string(to_string(t.status))];
    s.cut += t.cut_early ? 1 : 0;
    s.compile_s += t.compile_s;
    s.measure_s += t.measure_s;
    if (t.status == TrialStatus::ok && !t.cut_early &&
        (!s.best || t.time.median_ms < s.best->trial.time.median_ms)) {
      s.best = &st;
    }
  }
  s.measured = static_cast<long long>(configs.size());
  return s;
}

// The coverage the trials show, and whether the header (written with them) still says so: a file
// edited since has other counts than its header claims.
bool counted_complete(const db::Dataset& ds, const Summary& s) {
  return ds.header.candidates > 0 && s.measured >= ds.header.candidates;
}
bool header_agrees(const db::Dataset& ds, const Summary& s) {
  return ds.header.measured == s.measured && ds.header.complete == counted_complete(ds, s);
}

nlohmann::json info_json(const db::Dataset& ds) {
  const auto s = summarize(ds);
  nlohmann::json j = {{"file", ds.path.string()},
                      {"dataset", ds.header},
                      {"gpu", ds.gpu.fingerprint},
                      {"trials", ds.trials.size()},
                      {"screened", s.screened},
                      {"statuses", s.statuses},
                      {"cut_early", s.cut},
                      {"compile_s", s.compile_s},
                      {"measure_s", s.measure_s},
                      {"measured", s.measured},
                      {"complete", counted_complete(ds, s)},
                      {"header_agrees", header_agrees(ds, s)}};
  if (s.best) {
    const auto& t = s.best->trial;
    j["best"] = {{"config", t.config_name},
                 {"median_ms", t.time.median_ms},
                 {"cublas_median_ms", t.cublas_median_ms},
                 {"ratio", t.time.median_ms > 0 ? t.cublas_median_ms / t.time.median_ms : 0.0}};
  }
  return j;
}

void print_info(const db::Dataset& ds) {
  const auto s = summarize(ds);
  const auto& h = ds.header;
  fmt::print("{}\n", terminal_safe(ds.path.string()));
  fmt::print("  problem    {} {} ({})\n", h.problem.shape(), terminal_safe(h.problem.layout),
             terminal_safe(h.problem.dtype));
  fmt::print("  GPU        {} ({} SMs, driver {}, NVRTC {}.{})\n",
             terminal_safe(ds.gpu.fingerprint.name), ds.gpu.fingerprint.sm_count,
             ds.gpu.fingerprint.driver_version, ds.gpu.fingerprint.nvrtc_major,
             ds.gpu.fingerprint.nvrtc_minor);
  fmt::print("  measured   {} of {} candidates of '{}'{}{}\n", s.measured, h.candidates,
             terminal_safe(h.space),
             h.precision == Precision::fp32 ? "" : fmt::format(" ({})", to_string(h.precision)),
             counted_complete(ds, s) ? " (complete)" : " (INCOMPLETE)");
  if (!header_agrees(ds, s)) {
    fmt::print(
        "  WARNING    the header says {} of {}{}, but the file holds screening trials of "
        "{} configs: it was changed after it was written; write it again with `sgemm-tune "
        "dataset write`\n",
        h.measured, h.candidates, h.complete ? " (complete)" : "", s.measured);
  }
  std::string st;
  for (const auto& [k, v] : s.statuses) st += fmt::format(" {}={}", k, v);
  fmt::print("  statuses  {}; {} cut early (censored)\n", st, s.cut);
  fmt::print("  cost       {:.0f} s compiling (one thread each), {:.0f} s measuring\n", s.compile_s,
             s.measure_s);
  fmt::print("  cuBLAS     {:.4f} ms (same run)\n", h.cublas_median_ms);
  if (s.best) {
    const auto& t = s.best->trial;
    fmt::print("  best       {} {:.4f} ms = {:.3f}x cuBLAS\n", terminal_safe(t.config_name),
               t.time.median_ms, t.time.median_ms > 0 ? t.cublas_median_ms / t.time.median_ms : 0);
  }
  fmt::print("  created    {} by: {}\n", terminal_safe(h.created), terminal_safe(h.command));
  if (!h.notes.empty()) fmt::print("  notes      {}\n", terminal_safe(h.notes));
}

// One function per `dataset` subcommand: its options and what it runs.

void add_dataset_write(CLI::App& dsc) {
  struct Opts {
    std::string db, gpu, shape, layout = "NN", space = std::string(kAutoSpace), out, command, notes,
                                precision = "fp32";
    bool json = false;
  };
  auto o = std::make_shared<Opts>();
  auto* sub = dsc.add_subcommand(
      "write",
      "Write the trials of one GPU and problem from a tuning database as a dataset file, and\n"
      "count how many of the space's survivors they cover");
  add_db_option(*sub, o->db);
  sub->add_option(
      "--gpu", o->gpu,
      "GPU: a name or key as `sgemm-tune list` shows it, a part of a name that names one, 'auto' "
      "or a device index (this machine's GPU); default: the database's only GPU");
  sub->add_option("--shape", o->shape, "Problem MxNxK")->required();
  sub->add_option("--layout", o->layout, "NN, NT, TN or TT")->capture_default_str();
  sub->add_option("--space", o->space,
                  "The candidate set the recording covers (auto: every built-in space)")
      ->capture_default_str();
  add_precision_option(*sub, o->precision,
                       "whose candidates the recording covers (a replay of it takes the class)");
  sub->add_option("-o,--output", o->out, "Dataset file (.json, or .json.gz compressed)")
      ->required();
  sub->add_option("--command", o->command, "The command that measured it (stored)");
  sub->add_option("--notes", o->notes, "Free text stored in the header");
  sub->add_flag("--json", o->json, "Print the header as JSON");
  sub->callback([o] {
    Problem p = parse_shape(o->shape);
    p.layout = parse_layout(o->layout);
    const Precision precision = parse_precision_option(o->precision);
    const auto plan = plan_suite({SuiteEntry{p, ""}}, o->space, "", precision);
    db::DatasetSpec spec;
    spec.problem = p;
    spec.space = o->space;
    spec.precision = precision;
    for (const auto& c : plan.front().enumeration.survivors) spec.candidates.push_back(to_name(c));
    spec.command = o->command;
    spec.notes = o->notes;
    const auto path = o->db.empty() ? db::default_db_path() : std::filesystem::path(o->db);
    auto store = db::SqliteStore::open(path, db::OpenMode::read_only);
    spec.gpu = pick_gpu(store, o->gpu);
    const auto h = db::write_dataset(store, spec, o->out);
    if (o->json) {
      print_json(nlohmann::json(h));
    } else {
      fmt::print("wrote {}: {} {} on {}, {} of {} candidates measured{}\n", terminal_safe(o->out),
                 p.shape(), p.layout, terminal_safe(spec.gpu.label()), h.measured, h.candidates,
                 h.complete ? "" : " (incomplete)");
    }
  });
}

void add_dataset_info(CLI::App& dsc) {
  struct Opts {
    std::vector<std::string> files;
    bool json = false;
  };
  auto o = std::make_shared<Opts>();
  auto* sub = dsc.add_subcommand(
      "info", "Describe dataset files: problem, GPU, coverage, statuses, cost, best candidate");
  sub->add_option("files", o->files, "Dataset files")->required();
  sub->add_flag("--json", o->json, "Machine-readable output on stdout");
  sub->callback([o] {
    nlohmann::json all = nlohmann::json::array();  // an object's member, beside format_version
    for (const auto& f : o->files) {
      const auto ds = db::read_dataset(f);
      if (o->json) {
        all.push_back(info_json(ds));
      } else {
        print_info(ds);
      }
    }
    if (o->json) print_json({{"datasets", std::move(all)}});
  });
}

}  // namespace

void register_dataset(CLI::App& app) {
  auto* dsc = app.add_subcommand(
      "dataset",
      "Replay datasets: every candidate of one problem recorded on one GPU (for tune --replay,\n"
      "strategy benchmarks and the cost model). Files are JSON, gzip when named *.gz.");
  dsc->require_subcommand(1);
  add_dataset_write(*dsc);
  add_dataset_info(*dsc);
}

}  // namespace sgt::cli
