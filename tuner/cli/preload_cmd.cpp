// `sgemm-tune capture -- APP ARGS` and `sgemm-tune serve -- APP ARGS`: run an application with
// libsgemm_tune_preload.so in front of its cuBLAS, recording its GEMMs or serving them from the
// tuned winners (docs/preload.md). `serve` first prepares a serve plan: the winners of a table
// (or a database, exported on the way) for each GPU, each compiled through the kernel cache.
// The application's exit status is passed through.
#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>
#include <spdlog/spdlog.h>

#include "commands.hpp"
#include "instance.hpp"
#include "config.hpp"
#include "error.hpp"
#include "family.hpp"
#include "file_util.hpp"
#include "nvrtc_compiler.hpp"
#include "problem.hpp"
#include "serve_plan.hpp"
#include "tune.hpp"

namespace sgt::cli {

namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;

constexpr const char* kPreloadName = "libsgemm_tune_preload.so";
constexpr const char* kServeName = "libsgemm_tune_serve.so";

fs::path own_executable() {
  std::error_code ec;
  auto p = fs::read_symlink("/proc/self/exe", ec);
  return ec ? fs::path() : p;
}

// The preload library: --preload-lib, else $SGT_PRELOAD_LIB, else beside this executable (an
// install's lib/, or a build tree's preload/).
fs::path find_preload(const std::string& given) {
  std::vector<fs::path> tried;
  auto check = [&](const fs::path& p) {
    std::error_code ec;
    tried.push_back(p);
    return fs::is_regular_file(p, ec);
  };
  if (!given.empty()) {
    if (!check(given)) throw InputError(fmt::format("--preload-lib '{}' is not a file", given));
    return fs::absolute(given);
  }
  if (const char* env = std::getenv("SGT_PRELOAD_LIB"); env && *env) {
    if (!check(env)) throw Error(fmt::format("SGT_PRELOAD_LIB='{}' is not a file", env));
    return fs::absolute(env);
  }
  const auto exe = own_executable();
  if (!exe.empty()) {
    const auto dir = exe.parent_path();
    for (const auto& p : {dir / ".." / "lib" / kPreloadName, dir / ".." / "preload" / kPreloadName,
                          dir / kPreloadName}) {
      if (check(p)) return fs::weakly_canonical(p);
    }
  }
  std::string where;
  for (const auto& p : tried) where += "\n  " + p.string();
  throw Error(fmt::format(
      "cannot find {} (looked at:{}); install sgemm-tune with it, or give --preload-lib or "
      "SGT_PRELOAD_LIB",
      kPreloadName, where));
}

// Runs argv with `env` set on top of this process's environment; returns its exit status (128 +
// the signal that killed it), or 127 (not found) / 126 (not runnable) after saying why.
int run_app(const std::vector<std::string>& argv, const std::map<std::string, std::string>& env,
            const char* command) {
  if (argv.empty()) throw InputError(fmt::format("{}: no application given after --", command));
  int pipe_fd[2];
  if (::pipe2(pipe_fd, O_CLOEXEC) != 0) throw Error("pipe: " + std::string(std::strerror(errno)));
  std::fflush(stdout);
  std::fflush(stderr);
  // The application gets Ctrl-C itself (the terminal sends it to the whole group); this process
  // waits for it and reports its status.
  struct sigaction ignore {
  }, old_int{}, old_quit{};
  ignore.sa_handler = SIG_IGN;
  sigemptyset(&ignore.sa_mask);
  sigaction(SIGINT, &ignore, &old_int);
  sigaction(SIGQUIT, &ignore, &old_quit);
  const pid_t pid = ::fork();
  if (pid < 0) {
    sigaction(SIGINT, &old_int, nullptr);
    sigaction(SIGQUIT, &old_quit, nullptr);
    throw Error("fork: " + std::string(std::strerror(errno)));
  }
  if (pid == 0) {
    sigaction(SIGINT, &old_int, nullptr);
    sigaction(SIGQUIT, &old_quit, nullptr);
    ::close(pipe_fd[0]);
    for (const auto& [k, v] : env) ::setenv(k.c_str(), v.c_str(), 1);
    std::vector<char*> args;
    for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    ::execvp(args[0], args.data());
    const int e = errno;
    (void)!::write(pipe_fd[1], &e, sizeof e);
    ::_exit(127);
  }
  ::close(pipe_fd[1]);
  int exec_errno = 0;
  ssize_t got;
  do {
    got = ::read(pipe_fd[0], &exec_errno, sizeof exec_errno);
  } while (got < 0 && errno == EINTR);
  ::close(pipe_fd[0]);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  sigaction(SIGINT, &old_int, nullptr);
  sigaction(SIGQUIT, &old_quit, nullptr);
  if (got == static_cast<ssize_t>(sizeof exec_errno)) {
    std::fprintf(stderr, "sgemm-tune %s: error: cannot run '%s': %s\n", command,
                 terminal_safe(argv[0]).c_str(), std::strerror(exec_errno));
    return exec_errno == ENOENT ? 127 : 126;
  }
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
  return 1;
}

// Our library first in LD_PRELOAD, after nothing: what was there stays, after it.
std::string preload_value(const fs::path& lib) {
  const char* old = std::getenv("LD_PRELOAD");
  return old && *old ? lib.string() + " " + old : lib.string();
}

// The application's status as ours: CLI11's RuntimeError carries it to main's return.
void exit_with(int rc) {
  if (rc != 0) throw CLI::RuntimeError(rc);
}

std::string read_text(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  if (!in) throw InputError(fmt::format("cannot read '{}'", p.string()));
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// ---------------------------------------------------------------------------------------------
// The serve plan.

struct PlanOptions {
  std::vector<std::string> gpus;  // names (case-insensitive); empty: every GPU of the table
  fs::path cache_dir;
  double min_ratio = 1.0;  // winners slower than this against cuBLAS when tuned are not served
};

bool wanted(const std::vector<std::string>& gpus, const std::string& name) {
  if (gpus.empty()) return true;
  auto lower = [](std::string s) {
    for (auto& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return s;
  };
  for (const auto& g : gpus) {
    if (lower(g) == lower(name)) return true;
  }
  return false;
}

// The compiled kernel of the plan: the winner's binary and its launch, as the worker timed it.
preload::PlanKernel plan_kernel(const eval::Compiled& comp, const WarpTileConfig& config,
                                const KernelFamily& family, const std::string& arch,
                                const std::string& config_name) {
  const auto req = tune::make_trial_request(comp, config);
  preload::PlanKernel k;
  k.config_name = config_name;
  k.family = req.family;
  k.tensor_maps = req.launch == "tensor_maps";
  k.arch = family.target_arch(arch);
  k.instance = comp.layout;
  k.vec = comp.vec_loads;
  k.cubin = fs::absolute(req.cubin_path).string();
  k.sha256 = req.cubin_sha256;
  k.kernel = req.kernel;
  k.reduce = req.reduce_kernel;
  k.pack = req.pack_kernel;
  k.BM = req.tile.BM;
  k.BN = req.tile.BN;
  k.BK = req.tile.BK;
  k.split_k = req.tile.split_k;
  k.pad_a = req.tile.pad_a;
  k.pad_b = req.tile.pad_b;
  k.smem = req.tile.smem_bytes;
  k.block = static_cast<int>(req.block);
  k.tail = req.tile.tail != 0;
  k.group_m = req.tile.group_m;
  return k;
}

// A serve plan, built GPU by GPU (prepare_plan): one kernel per architecture, config, instance
// and split-K, compiled once and shared by every problem it won.
class PlanBuilder {
 public:
  PlanBuilder(const json& table, const std::string& source, const PlanOptions& o);
  // A GPU of the table (unless --gpu leaves it out), with each of its f32 problems.
  void add_gpu(const json& g);
  // The plan, round-tripped through the reader the library uses; InputError when it has no GPU.
  preload::ServePlan finish();

 private:
  void add_problem(const json& s, preload::PlanGpu& pg, const std::string& arch);
  // Why the winner is not served (empty: it is, once compiled).
  std::string refusal(const KernelFamily& family, const preload::PlanProblem& pp) const;
  void add_kernel(preload::PlanProblem& pp, const WarpTileConfig& config,
                  const KernelFamily& family, const std::string& arch);

  const std::string& source_;
  const PlanOptions& o_;
  const std::map<std::string, std::string> hashes_;  // each family's kernel source now
  const json tuned_hashes_;                          // ... and when the table was exported
  preload::ServePlan plan_;
  std::map<std::string, int> kernel_index_;  // arch, config, instance -> plan kernel
  std::map<std::string, std::unique_ptr<gpu::KernelCompiler>> compilers_;
  size_t compiled_ = 0, refused_ = 0, gpus_seen_ = 0;
};

PlanBuilder::PlanBuilder(const json& table, const std::string& source, const PlanOptions& o)
    : source_(source),
      o_(o),
      hashes_(current_family_hashes()),
      tuned_hashes_(table.value("kernel_hashes", json::object())) {
  plan_.writer = std::string("sgemm-tune ") + SGT_VERSION;
  plan_.source = source;
  plan_.min_ratio = o.min_ratio;
}

void PlanBuilder::add_gpu(const json& g) {
  const std::string name = g.at("name").get<std::string>();
  ++gpus_seen_;
  if (!wanted(o_.gpus, name)) return;
  preload::PlanGpu pg;
  pg.name = name;
  pg.cc_major = g.at("cc_major").get<int>();
  pg.cc_minor = g.at("cc_minor").get<int>();
  pg.sm_count = g.at("sm_count").get<int>();
  const std::string arch = fmt::format("sm_{}{}", pg.cc_major, pg.cc_minor);
  for (const auto& s : g.at("shapes")) {
    if (s.value("dtype", "f32") != "f32") continue;
    add_problem(s, pg, arch);
  }
  plan_.gpus.push_back(std::move(pg));
}

void PlanBuilder::add_problem(const json& s, preload::PlanGpu& pg, const std::string& arch) {
  preload::PlanProblem pp;
  pp.M = s.at("M").get<long long>();
  pp.N = s.at("N").get<long long>();
  pp.K = s.at("K").get<long long>();
  pp.layout = parse_layout(s.at("layout").get<std::string>());
  pp.align = preload::tuned_align(pp.M, pp.N, pp.K, pp.layout);
  pp.config_name = s.at("config_name").get<std::string>();
  pp.median_ms = s.value("median_ms", 0.0);
  pp.ratio = s.value("ratio", 0.0);
  const auto config = s.at("config").get<WarpTileConfig>();
  const auto& family = family_of(config);
  pp.refused = refusal(family, pp);
  if (pp.refused.empty()) add_kernel(pp, config, family, arch);
  if (pp.kernel < 0) {
    ++refused_;
    spdlog::warn("{} {} on {}: its winner {} has no kernel and goes to cuBLAS: {}",
                 fmt::format("{}x{}x{}", pp.M, pp.N, pp.K), pp.layout, terminal_safe(pg.name),
                 pp.config_name, terminal_safe(pp.refused));
  }
  pg.problems.push_back(std::move(pp));
}

std::string PlanBuilder::refusal(const KernelFamily& family, const preload::PlanProblem& pp) const {
  const std::string fam(family.id());
  const auto now = hashes_.find(fam);
  if (family.precision() != Precision::fp32) {
    // An FP32 cuBLAS call is answered by what cuBLAS FP32 computes (FFMA), never by a
    // kernel of another precision class, however accurate it was measured to be.
    return fmt::format(
        "family {} is {}: the preload serves FP32 calls with fp32-class (FFMA) kernels only", fam,
        to_string(family.precision()));
  }
  if (pp.ratio > 0 && pp.ratio < o_.min_ratio) {
    // cuBLAS answers it (FallThrough::Slower): nothing to compile.
    return fmt::format("slower than cuBLAS when tuned (ratio {:.3f}, --min-ratio {})", pp.ratio,
                       o_.min_ratio);
  }
  if (!tuned_hashes_.contains(fam) || now == hashes_.end() ||
      tuned_hashes_[fam].get<std::string>() != now->second) {
    return fmt::format("the {} kernel's source changed since the table was exported: tune again",
                       fam);
  }
  return {};
}

void PlanBuilder::add_kernel(preload::PlanProblem& pp, const WarpTileConfig& config,
                             const KernelFamily& family, const std::string& arch) {
  const Problem problem{pp.M, pp.N, pp.K, pp.layout, "f32"};
  const bool vec = kernel_vec_loads(problem);
  const KernelInstance in = resolve(config, pp.layout, vec);
  const std::string key =
      fmt::format("{} {} {} {} {}", arch, to_name(config), in.layout, in.vec, config.SPLIT_K);
  if (auto it = kernel_index_.find(key); it != kernel_index_.end()) {
    pp.kernel = it->second;
    return;
  }
  auto& compiler = compilers_[arch];
  if (!compiler)
    compiler = std::make_unique<gpu::KernelCompiler>(o_.cache_dir, gpu::CompileOptions{arch, {}});
  spdlog::info("compiling {} for {} {} on {} (or taking it from the kernel cache)", pp.config_name,
               problem.shape(), pp.layout, arch);
  const auto comp = compiler->compile(config, pp.layout, vec);
  if (comp.status != TrialStatus::ok) {
    pp.refused = fmt::format("compilation: {}: {}", to_string(comp.status), comp.reason);
    return;
  }
  auto k = plan_kernel(comp, config, family, arch, pp.config_name);
  pp.kernel = static_cast<int>(plan_.kernels.size());
  kernel_index_.emplace(key, pp.kernel);
  plan_.kernels.push_back(std::move(k));
  ++compiled_;
}

preload::ServePlan PlanBuilder::finish() {
  if (plan_.gpus.empty()) {
    throw InputError(gpus_seen_ == 0
                         ? fmt::format("'{}' holds no GPUs: nothing to serve", source_)
                         : fmt::format("'{}' holds none of the GPUs asked for (--gpu)", source_));
  }
  size_t problems = 0;
  for (const auto& g : plan_.gpus) problems += g.problems.size();
  spdlog::info("serve plan: {} GPU{}, {} tuned problem{}, {} kernel{}{}", plan_.gpus.size(),
               plan_.gpus.size() == 1 ? "" : "s", problems, problems == 1 ? "" : "s", compiled_,
               compiled_ == 1 ? "" : "s",
               refused_ ? fmt::format(", {} without a kernel", refused_) : std::string());
  // A plan round-trips through the reader the library uses: what it would refuse, refuse now.
  return preload::ServePlan::parse(plan_.render());
}

// Every f32 winner of the table's GPUs, compiled (or found in the kernel cache) for its GPU's
// architecture as the tuner compiled it: the instance its problem runs as, with its launch as the
// worker timed it. A winner whose family's kernel source changed since it was tuned, or whose
// compilation fails, stays in the plan without a kernel, its reason said.
preload::ServePlan prepare_plan(const json& table, const std::string& source,
                                const PlanOptions& o) {
  if (!table.is_object() || table.value("format", "") != "sgemm-tune-table")
    throw InputError(
        fmt::format("'{}' is not a table written by `sgemm-tune export --format json`", source));
  const int version = table.value("format_version", 0);
  if (version < 7)
    throw InputError(fmt::format(
        "'{}' is a table of format {}; serve reads format 7 and later (export it again)", source,
        version));
  PlanBuilder builder(table, source, o);
  for (const auto& g : table.at("gpus")) builder.add_gpu(g);
  return builder.finish();
}

// A temporary file removed when this goes out of scope (the plan of one run).
struct TempFile {
  fs::path path;
  ~TempFile() {
    std::error_code ec;
    if (!path.empty()) fs::remove(path, ec);
  }
};

struct ServeCli {
  std::string table, db, plan, write_plan, lib, serve_lib, log, cache_dir;
  std::vector<std::string> gpus;
  bool dry_run = false, verify = false, prepare_only = false;
  double min_ratio = 1.0;
  std::vector<std::string> command;
  // Whether --min-ratio was given: a --plan keeps the bound it was prepared with.
  const CLI::Option* min_ratio_opt = nullptr;
};

CLI::App& add_serve_options(CLI::App& app, ServeCli& o) {
  auto* sub = app.add_subcommand(
      "serve",
      "Run an application with libsgemm_tune_preload.so answering its FP32 cuBLAS GEMMs from "
      "tuned kernels: each call whose problem (shape, layout, operand alignment) has a winner "
      "for this GPU runs that winner; cuBLAS runs everything else");
  auto* source = sub->add_option_group("source", "Where the winners come from (one of)");
  source->add_option("--table", o.table, "A table from `sgemm-tune export --format json`");
  source->add_option("--db", o.db, "A tuning database (exported on the way)");
  source->add_option("--plan", o.plan, "A serve plan written before by --write-plan");
  source->require_option(1);
  sub->add_option("--gpu", o.gpus,
                  "Only the winners of these GPUs (repeatable; name as the table gives it). "
                  "Default: every GPU of the table");
  o.min_ratio_opt =
      sub->add_option("--min-ratio", o.min_ratio,
                      "Serve a winner only if it ran at least this fast against cuBLAS when it was "
                      "tuned (its ratio, timed in the same run; default 1: never serve a kernel "
                      "cuBLAS beat; 0: every winner). Calls of the others go to cuBLAS, counted as "
                      "'slower than cuBLAS when tuned'")
          ->check(CLI::Range(0.0, 100.0))
          ->capture_default_str();
  sub->add_option("--write-plan", o.write_plan,
                  "Keep the serve plan in this file (SGT_SERVE=FILE serves from it without "
                  "this command)");
  sub->add_flag("--prepare-only", o.prepare_only,
                "Prepare the plan (needs --write-plan) and run nothing");
  sub->add_option("--cache-dir", o.cache_dir,
                  "Compiled-kernel cache (default: $SGT_CACHE_DIR, else the user cache dir)");
  sub->add_flag("--dry-run", o.dry_run,
                "Decide and count what would be served, but let cuBLAS run every call "
                "(SGT_SERVE_DRY_RUN)");
  sub->add_flag("--verify", o.verify,
                "Compare every served call with cuBLAS's result (slow: synchronises each call; "
                "SGT_SERVE_VERIFY)");
  sub->add_option("--preload-lib", o.lib,
                  "The library (default: $SGT_PRELOAD_LIB, else beside sgemm-tune: ../lib)");
  sub->add_option("--serve-lib", o.serve_lib,
                  "libsgemm_tune_serve.so (default: beside the preload library)");
  sub->add_option("--preload-log", o.log,
                  "SGT_PRELOAD_LOG: quiet, summary (default: one line at exit), info, debug "
                  "(each problem's decision)")
      ->check(CLI::IsMember({"quiet", "summary", "info", "debug"}));
  sub->add_option("command", o.command, "The application and its arguments, after --");
  sub->footer(
      "Example: sgemm-tune serve --table winners.json -- ./app --steps 10\n"
      "The plan holds, per GPU of the table, every tuned problem with its winner compiled for "
      "that GPU (from the kernel cache, else by NVRTC now, before the application starts). The "
      "application runs with LD_PRELOAD and SGT_SERVE set; at exit the library says how many "
      "calls it served and why the others went to cuBLAS (docs/preload.md). Exit status: the "
      "application's (128 + N when signal N killed it); before it runs: 1 when a library is "
      "missing or the plan cannot be prepared, 2 for bad arguments, 126/127 when the "
      "application cannot be run / is not found.");
  return *sub;
}

// The options that contradict each other, refused before anything is looked for.
void check_serve_options(const ServeCli& o) {
  if (o.prepare_only && o.write_plan.empty())
    throw InputError("--prepare-only needs --write-plan FILE");
  if (!o.prepare_only && o.command.empty())
    throw InputError("serve: no application given after --");
  if (!o.plan.empty() && !o.gpus.empty())
    throw InputError("--gpu selects from a table or database, not from --plan");
  if (!o.plan.empty() && o.min_ratio_opt->count() > 0)
    throw InputError(
        "--min-ratio applies when a plan is prepared (--table, --db); a plan "
        "keeps the bound it was prepared with");
}

// The two libraries the application is run with (none with --prepare-only).
struct ServeLibs {
  fs::path preload, serve;
};

ServeLibs find_serve_libs(const ServeCli& o) {
  ServeLibs libs;
  if (o.prepare_only) return libs;
  libs.preload = find_preload(o.lib);
  libs.serve =
      o.serve_lib.empty() ? libs.preload.parent_path() / kServeName : fs::path(o.serve_lib);
  std::error_code ec;
  if (!fs::is_regular_file(libs.serve, ec))
    throw Error(fmt::format("cannot find {} (looked at {}); give --serve-lib", kServeName,
                            libs.serve.string()));
  libs.serve = fs::absolute(libs.serve);
  return libs;
}

// --plan, checked here, so that a bad plan stops before the application runs.
fs::path checked_plan(const std::string& plan) {
  try {
    (void)preload::ServePlan::parse(read_text(plan));
  } catch (const std::runtime_error& e) {
    throw InputError(fmt::format("serve plan '{}': {}", plan, e.what()));
  }
  return fs::absolute(plan);
}

// A new empty file named after mkstemp's template (ending in XXXXXX), for the caller to remove.
fs::path make_temp_file(std::string tmpl) {
  const int fd = ::mkstemp(tmpl.data());
  if (fd < 0) throw Error("cannot create a temporary file: " + std::string(std::strerror(errno)));
  ::close(fd);
  return tmpl;
}

// --db: the database's winners exactly as `export` writes them.
json exported_table(const ServeCli& o) {
  TempFile exported;
  exported.path = make_temp_file("/tmp/sgemm-tune-table-XXXXXX");
  std::vector<std::string> argv = {
      own_executable().string(), "-q", "export", "--format", "json", "--db", o.db, "-o",
      exported.path.string()};
  for (const auto& g : o.gpus) argv.insert(argv.end(), {"--gpu", g});
  if (const int rc = run_app(argv, {}, "serve"); rc != 0)
    throw Error(fmt::format("exporting the winners of '{}' failed (exit {})", o.db, rc));
  try {
    return json::parse(read_text(exported.path));
  } catch (const json::exception& e) {
    throw Error(fmt::format("the table exported from '{}' does not parse: {}", o.db, e.what()));
  }
}

json read_table(const ServeCli& o) {
  if (!o.db.empty()) return exported_table(o);
  try {
    return json::parse(read_text(o.table));
  } catch (const json::exception& e) {
    throw InputError(fmt::format("'{}' is not JSON: {}", o.table, e.what()));
  }
}

// --table or --db: the plan prepared now and written to --write-plan, else to a temporary file
// (`temp`, removed once the application has run).
fs::path write_prepared_plan(const ServeCli& o, TempFile& temp) {
  const json table = read_table(o);
  PlanOptions po;
  po.gpus = o.gpus;
  po.cache_dir = o.cache_dir.empty() ? gpu::default_cache_dir() : fs::path(o.cache_dir);
  po.min_ratio = o.min_ratio;
  const auto plan = prepare_plan(table, o.db.empty() ? o.table : o.db, po);
  fs::path plan_path;
  if (!o.write_plan.empty()) {
    plan_path = fs::absolute(o.write_plan);
  } else {
    temp.path = make_temp_file("/tmp/sgemm-tune-plan-XXXXXX");
    plan_path = temp.path;
  }
  write_file_atomically(plan_path, plan.render());
  return plan_path;
}

// The application, with the preload serving from the plan at plan_path.
void run_served(const ServeCli& o, const ServeLibs& libs, const fs::path& plan_path) {
  std::map<std::string, std::string> env = {
      {"LD_PRELOAD", preload_value(libs.preload)},
      {"SGT_SERVE", plan_path.string()},
      {"SGT_SERVE_LIB", libs.serve.string()},
  };
  if (o.dry_run) env["SGT_SERVE_DRY_RUN"] = "1";
  if (o.verify) env["SGT_SERVE_VERIFY"] = "1";
  if (!o.log.empty()) env["SGT_PRELOAD_LOG"] = o.log;
  exit_with(run_app(o.command, env, "serve"));
}

}  // namespace

void register_capture(CLI::App& app) {
  struct Opts {
    std::string out = "captured.json", lib, log;
    bool timing = false;
    double interval = -1;
    std::vector<std::string> command;
  };
  auto o = std::make_shared<Opts>();
  auto* sub = app.add_subcommand(
      "capture",
      "Run an application with libsgemm_tune_preload.so recording the FP32 GEMMs it asks cuBLAS "
      "and cuBLASLt for (every call still runs in cuBLAS, untouched); then `sgemm-tune tune "
      "--shapes FILE` tunes them");
  sub->add_option("-o,--out", o->out,
                  "Capture file (merged into when it exists; %p becomes the process id)")
      ->capture_default_str();
  sub->add_flag("--timing", o->timing, "Time each call with CUDA events (SGT_CAPTURE_TIMING)");
  sub->add_option("--interval", o->interval,
                  "Write the capture at most this often, in seconds (SGT_CAPTURE_INTERVAL; "
                  "default 30, 0: after every call)")
      ->check(CLI::Range(0.0, 1e9));
  sub->add_option("--preload-lib", o->lib,
                  "The library (default: $SGT_PRELOAD_LIB, else beside sgemm-tune: ../lib)");
  sub->add_option("--preload-log", o->log, "SGT_PRELOAD_LOG: quiet, summary, info, debug")
      ->check(CLI::IsMember({"quiet", "summary", "info", "debug"}));
  sub->add_option("command", o->command, "The application and its arguments, after --")->required();
  sub->footer(
      "Example: sgemm-tune capture --out captured.json -- ./app --steps 10\n"
      "The application runs with LD_PRELOAD and SGT_CAPTURE set (docs/preload.md); its exit "
      "status is this command's (128 + N when signal N killed it). Before it runs: 1 when the "
      "library is missing, 2 for bad arguments, 126/127 when the application cannot be run / is "
      "not found.");
  sub->callback([o] {
    const auto lib = find_preload(o->lib);
    std::map<std::string, std::string> env = {
        {"LD_PRELOAD", preload_value(lib)},
        {"SGT_CAPTURE", fs::absolute(o->out).string()},
    };
    if (o->timing) env["SGT_CAPTURE_TIMING"] = "1";
    if (o->interval >= 0) env["SGT_CAPTURE_INTERVAL"] = fmt::format("{}", o->interval);
    if (!o->log.empty()) env["SGT_PRELOAD_LOG"] = o->log;
    const int rc = run_app(o->command, env, "capture");
    if (rc != 126 && rc != 127) {
      spdlog::info("capture in '{}'; next: sgemm-tune tune --shapes {}",
                   terminal_safe(env["SGT_CAPTURE"]), terminal_safe(o->out));
    }
    exit_with(rc);
  });
}

void register_serve(CLI::App& app) {
  auto o = std::make_shared<ServeCli>();
  CLI::App& sub = add_serve_options(app, *o);
  sub.callback([o] {
    check_serve_options(*o);
    const auto libs = find_serve_libs(*o);
    TempFile temp;
    fs::path plan_path;
    if (!o->plan.empty()) {
      plan_path = checked_plan(o->plan);
    } else {
      plan_path = write_prepared_plan(*o, temp);
      if (o->prepare_only) {
        spdlog::info(
            "serve plan written to '{}'; serve with SGT_SERVE={} LD_PRELOAD=<prefix>/lib/{}",
            terminal_safe(plan_path.string()), terminal_safe(plan_path.string()), kPreloadName);
        return;
      }
    }
    run_served(*o, libs, plan_path);
  });
}

}  // namespace sgt::cli
