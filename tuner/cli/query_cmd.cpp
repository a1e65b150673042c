// `sgemm-tune query`: which config to run for a GPU and shape (exact winner, nearest tuned shape,
// or the documented default), with exit codes a script can branch on.
#include <cstdio>
#include <filesystem>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include "commands.hpp"
#include "json_output.hpp"
#include "db_gpu.hpp"
#include "error.hpp"
#include "file_util.hpp"
#include "store.hpp"
#include "tune_store.hpp"
#include "worker_client.hpp"

namespace sgt::cli {

namespace {

constexpr int kExitNearest = 3;
constexpr int kExitDefault = 4;

std::string stale_text(const db::StaleCounts& s) {
  std::vector<std::string> why;
  if (s.kernel_hash) why.push_back(fmt::format("{} from another kernel source", s.kernel_hash));
  if (s.driver) why.push_back(fmt::format("{} from another driver major", s.driver));
  if (s.nvrtc) why.push_back(fmt::format("{} from another NVRTC major", s.nvrtc));
  return fmt::format("skipped {} stale trial{} ({}); --allow-stale serves them", s.total,
                     s.total == 1 ? "" : "s", fmt::join(why, ", "));
}

std::string problem_text(const Problem& p) {
  return fmt::format("{} {} {}", p.shape(), p.layout, p.dtype);
}

struct QueryCli {
  std::string db, gpu = "auto", shape, layout = "NN", precision = "fp32";
  bool allow_stale = false, json = false;
};

CLI::App& add_query_options(CLI::App& app, QueryCli& o) {
  auto* sub = app.add_subcommand(
      "query",
      "Which config to run for a GPU and shape: the tuned winner, else the winner of the "
      "nearest tuned shape, else the default config");
  sub->add_option("--gpu", o.gpu,
                  "GPU name as `sgemm-tune list` shows it (case-insensitive), its "
                  "NAME@sm_XY/SMS key, a part of a name that names one ('h200'), a device index "
                  "(this machine's GPU of that index), or 'auto': this machine's GPU (without one: "
                  "the only GPU in the database)")
      ->capture_default_str();
  sub->add_option("--shape", o.shape, "Problem size MxNxK, e.g. 4096x4096x4096")->required();
  sub->add_option("--layout", o.layout,
                  "Operand layout op(A) op(B): NN, NT, TN or TT (N: stored as is, T: transposed)")
      ->capture_default_str();
  sub->add_flag("--allow-stale", o.allow_stale,
                "Also serve trials measured with another kernel source, driver major or NVRTC "
                "major (they are skipped by default, and the skipped count is reported)");
  add_precision_option(*sub, o.precision,
                       "the winner is the fastest of the admitted families' trials (fp32-accurate "
                       "admits fp32's too, so its winner is never slower)");
  sub->add_flag("--json", o.json, "Machine-readable result on stdout");
  sub->add_option("--db", o.db,
                  "Tuning database (default: $SGT_DB, else $XDG_CACHE_HOME/sgemm-tune/tuning.db, "
                  "else ~/.cache/sgemm-tune/tuning.db). Opened read-only, never created");
  sub->footer(fmt::format(
      "Exit codes:\n"
      "  0  exact winner for this GPU, shape, layout and dtype\n"
      "  3  no winner for this shape: the winner of the nearest tuned shape of this GPU (same "
      "layout and dtype),\n"
      "     distance sqrt(sum over M,N,K of log2(a/b)^2); the shape and distance are printed\n"
      "  4  nothing tuned for this GPU (or no database yet): the default config {},\n"
      "     the seed kernel-8 config, valid everywhere and tuned nowhere\n"
      "  1  database error (damaged, locked, newer schema)   2  bad input (shape, layout, unknown "
      "GPU)\n"
      "Winners are the ok trial with the lowest median; stale trials are kept but skipped.",
      db::kDefaultConfigName));
  return *sub;
}

// The query and its answer: what was asked, of which database, and what it served.
struct QueryAnswer {
  Problem problem;
  std::filesystem::path path;
  db::QueryOptions opts;
  db::QueryResult r;
  std::string note;  // which GPU was meant, or why there is no database or GPU to ask
};

// The default config, for a problem nothing tuned serves.
void answer_default(const Problem& problem, db::QueryResult& r) {
  r.requested = r.served = problem;
  r.config_name = std::string(db::kDefaultConfigName);
  r.config = *from_name(db::kDefaultConfigName);
  r.shape_violations = check_shape(r.config, problem);
}

// The GPU --gpu means among the database's; none when the database has no GPU yet.
std::optional<db::GpuIdentity> meant_gpu(const db::SqliteStore& store, const QueryCli& o,
                                         QueryAnswer& a) {
  if (store.gpus().empty()) {
    a.note = fmt::format("nothing tuned in '{}' yet", a.path.string());
    return std::nullopt;
  }
  auto meant = resolve_db_gpus(store, o.gpu);
  if (meant.gpus.size() > 1) {
    std::vector<db::GpuRecord> named;
    for (const auto& id : meant.gpus)
      if (auto g = store.gpu(id)) named.push_back(*g);
    throw InputError(fmt::format("several GPUs are named '{}' in '{}'; pass one key:{}", o.gpu,
                                 a.path.string(), db::describe_gpus(named)));
  }
  a.note = meant.note;
  return meant.gpus.front();
}

QueryAnswer answer_query(const QueryCli& o) {
  QueryAnswer a;
  a.problem = parse_shape(o.shape);
  a.problem.layout = parse_layout(o.layout);  // InputError: exit 2, naming the layout
  a.path = o.db.empty() ? db::default_db_path() : std::filesystem::path(o.db);
  a.opts.allow_stale = o.allow_stale;
  a.opts.precision = parse_precision_option(o.precision);
  std::error_code ec;
  if (!std::filesystem::exists(a.path, ec)) {
    answer_default(a.problem, a.r);
    a.note = fmt::format("no tuning database at '{}' yet", a.path.string());
    return a;
  }
  auto store = db::SqliteStore::open(a.path, db::OpenMode::read_only);
  if (const auto gpu = meant_gpu(store, o, a)) {
    a.r = store.query(*gpu, a.problem, a.opts);
  } else {
    answer_default(a.problem, a.r);
  }
  return a;
}

nlohmann::json query_json(const QueryAnswer& a, int code) {
  const auto& r = a.r;
  nlohmann::json j = r;
  j["exit_code"] = code;
  j["database"] = a.path.string();
  // The class asked for, and the served kernel's (its family's).
  j["precision"] = to_string(a.opts.precision);
  j["kernel_precision"] = to_string(family_of(r.config).precision());
  if (!a.note.empty()) j["note"] = a.note;
  if (r.gpu.name.empty()) j.erase("gpu");  // no GPU was resolved
  return j;
}

// Where the config came from: the exact winner, the nearest tuned shape's, or the default.
void print_source(const QueryAnswer& a) {
  const auto& r = a.r;
  const auto& problem = a.problem;
  const auto* w = r.winner ? &*r.winner : nullptr;
  switch (r.source) {
    case db::Source::exact:
      fmt::print("  exact winner for {} on {}, best of {} ok trial{}{}\n", problem_text(problem),
                 terminal_safe(r.gpu.label()), w->ok_trials, w->ok_trials == 1 ? "" : "s",
                 w->stale ? " (STALE trial, --allow-stale)" : "");
      break;
    case db::Source::nearest:
      fmt::print(
          "  nothing tuned for {} on {}: winner of the nearest tuned shape {} "
          "(distance {:.3f}){}\n",
          problem_text(problem), terminal_safe(r.gpu.label()), r.served.shape(), r.distance,
          w->stale ? " (STALE trial, --allow-stale)" : "");
      break;
    case db::Source::default_config:
      if (!r.skipped.empty()) {
        fmt::print(
            "  default config: none of the {} tuned winner{} on {} can run {}; this is the "
            "seed kernel-8 config, not tuned for any GPU\n",
            r.skipped.size(), r.skipped.size() == 1 ? "" : "s", terminal_safe(r.gpu.label()),
            problem_text(problem));
        break;
      }
      fmt::print(
          "  default config: nothing tuned for {}{}; this is the seed kernel-8 config, "
          "not tuned for any GPU\n",
          problem_text(problem),
          terminal_safe(a.note.empty() ? " on " + r.gpu.label() : " (" + a.note + ")"));
      break;
  }
}

// The winner's measurement: its time, its ratio to cuBLAS, its edge checks, its class.
void print_winner(const db::Winner& w, const db::QueryOptions& opts) {
  const auto& t = w.best.trial;
  fmt::print("  on {}: median {:.4f} ms, {:.0f} GFLOP/s", t.problem.shape(), t.time.median_ms,
             t.gflops);
  if (w.ratio() > 0) {
    fmt::print(", ratio {:.3f}x to cuBLAS ({:.4f} ms)", w.ratio(), t.cublas_median_ms);
  }
  fmt::print("; measured {} by sgemm-tune {}\n", terminal_safe(t.timestamp),
             terminal_safe(t.tuner_version));
  fmt::print("  {}\n", terminal_safe(edge_check_summary(t.edge_checks)));
  const auto& family = family_of(t.config);
  if (family.precision() != Precision::fp32)
    fmt::print("  precision class {} (family {}), admitted by --precision {}\n",
               to_string(family.precision()), family.id(), to_string(opts.precision));
}

// What was passed over on the way (stderr: stdout carries the answer).
void print_query_notes(const QueryAnswer& a) {
  const auto& r = a.r;
  const auto& problem = a.problem;
  if (r.source != db::Source::default_config && !a.note.empty()) {
    std::fprintf(stderr, "note: %s\n", terminal_safe(a.note).c_str());  // which GPU was meant
  }
  for (const auto& k : r.skipped) {
    std::vector<std::string> why;
    for (const auto& v : k.violations) why.push_back(v.reason);
    std::fprintf(stderr, "note: skipped %s, the winner of the nearer %s: it cannot run %s (%s)\n",
                 terminal_safe(k.config_name).c_str(), k.served.shape().c_str(),
                 problem.shape().c_str(),
                 terminal_safe(fmt::format("{}", fmt::join(why, "; "))).c_str());
  }
  if (r.stale_skipped.total > 0) {
    std::fprintf(stderr, "note: %s\n", stale_text(r.stale_skipped).c_str());
  }
  for (const auto& v : r.shape_violations) {
    std::fprintf(stderr, "warning: %s does not fit %s: %s\n", terminal_safe(r.config_name).c_str(),
                 problem.shape().c_str(), v.reason.c_str());
  }
}

// Every text from the database is escaped (terminal_safe): a shared file may hold anything.
void print_answer(const QueryAnswer& a) {
  fmt::print("{}\n", terminal_safe(a.r.config_name));
  print_source(a);
  if (a.r.winner) print_winner(*a.r.winner, a.opts);
  print_query_notes(a);
}

}  // namespace

void register_query(CLI::App& app) {
  auto o = std::make_shared<QueryCli>();
  CLI::App& sub = add_query_options(app, *o);
  sub.callback([o] {
    const QueryAnswer a = answer_query(*o);
    const int code = a.r.source == db::Source::exact     ? 0
                     : a.r.source == db::Source::nearest ? kExitNearest
                                                         : kExitDefault;
    if (o->json) {
      print_json(query_json(a, code));
    } else {
      print_answer(a);
    }
    std::fflush(stdout);
    // CLI11 returns a RuntimeError's code from app.exit() without printing anything.
    if (code != 0) throw CLI::RuntimeError(code);
  });
}

}  // namespace sgt::cli
