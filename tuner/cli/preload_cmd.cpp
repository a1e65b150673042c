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
  const auto hashes = current_family_hashes();
  const json tuned_hashes = table.value("kernel_hashes", json::object());
  preload::ServePlan plan;
  plan.writer = std::string("sgemm-tune ") + SGT_VERSION;
  plan.source = source;
  plan.min_ratio = o.min_ratio;
  std::map<std::string, int> kernel_index;  // arch, config, instance -> plan kernel
  std::map<std::string, std::unique_ptr<gpu::KernelCompiler>> compilers;
  size_t compiled = 0, refused = 0, gpus_seen = 0;
  for (const auto& g : table.at("gpus")) {
    const std::string name = g.at("name").get<std::string>();
    ++gpus_seen;
    if (!wanted(o.gpus, name)) continue;
    preload::PlanGpu pg;
    pg.name = name;
    pg.cc_major = g.at("cc_major").get<int>();
    pg.cc_minor = g.at("cc_minor").get<int>();
    pg.sm_count = g.at("sm_count").get<int>();
    const std::string arch = fmt::format("sm_{}{}", pg.cc_major, pg.cc_minor);
    for (const auto& s : g.at("shapes")) {
      if (s.value("dtype", "f32") != "f32") continue;
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
      const std::string fam(family.id());
      const auto now = hashes.find(fam);
      if (family.precision() != Precision::fp32) {
        // An FP32 cuBLAS call is answered by what cuBLAS FP32 computes (FFMA), never by a
        // kernel of another precision class, however accurate it was measured to be.
        pp.refused = fmt::format(
            "family {} is {}: the preload serves FP32 calls with fp32-class (FFMA) kernels only",
            fam, to_string(family.precision()));
      } else if (pp.ratio > 0 && pp.ratio < o.min_ratio) {
        // cuBLAS answers it (FallThrough::Slower): nothing to compile.
        pp.refused = fmt::format("slower than cuBLAS when tuned (ratio {:.3f}, --min-ratio {})",
                                 pp.ratio, o.min_ratio);
      } else if (!tuned_hashes.contains(fam) || now == hashes.end() ||
                 tuned_hashes[fam].get<std::string>() != now->second) {
        pp.refused = fmt::format(
            "the {} kernel's source changed since the table was exported: tune again", fam);
      } else {
        const Problem problem{pp.M, pp.N, pp.K, pp.layout, "f32"};
        const bool vec = kernel_vec_loads(problem);
        const KernelInstance in = resolve(config, pp.layout, vec);
        const std::string key =
            fmt::format("{} {} {} {} {}", arch, to_name(config), in.layout, in.vec, config.SPLIT_K);
        if (auto it = kernel_index.find(key); it != kernel_index.end()) {
          pp.kernel = it->second;
        } else {
          auto& compiler = compilers[arch];
          if (!compiler)
            compiler =
                std::make_unique<gpu::KernelCompiler>(o.cache_dir, gpu::CompileOptions{arch, {}});
          spdlog::info("compiling {} for {} {} on {} (or taking it from the kernel cache)",
                       pp.config_name, problem.shape(), pp.layout, arch);
          const auto comp = compiler->compile(config, pp.layout, vec);
          if (comp.status != TrialStatus::ok) {
            pp.refused = fmt::format("compilation: {}: {}", to_string(comp.status), comp.reason);
          } else {
            const auto req = tune::make_trial_request(comp, config);
            preload::PlanKernel k;
            k.config_name = pp.config_name;
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
            pp.kernel = static_cast<int>(plan.kernels.size());
            kernel_index.emplace(key, pp.kernel);
            plan.kernels.push_back(std::move(k));
            ++compiled;
          }
        }
      }
      if (pp.kernel < 0) {
        ++refused;
        spdlog::warn("{} {} on {}: its winner {} has no kernel and goes to cuBLAS: {}",
                     fmt::format("{}x{}x{}", pp.M, pp.N, pp.K), pp.layout, terminal_safe(name),
                     pp.config_name, terminal_safe(pp.refused));
      }
      pg.problems.push_back(std::move(pp));
    }
    plan.gpus.push_back(std::move(pg));
  }
  if (plan.gpus.empty()) {
    throw InputError(gpus_seen == 0
                         ? fmt::format("'{}' holds no GPUs: nothing to serve", source)
                         : fmt::format("'{}' holds none of the GPUs asked for (--gpu)", source));
  }
  size_t problems = 0;
  for (const auto& g : plan.gpus) problems += g.problems.size();
  spdlog::info("serve plan: {} GPU{}, {} tuned problem{}, {} kernel{}{}", plan.gpus.size(),
               plan.gpus.size() == 1 ? "" : "s", problems, problems == 1 ? "" : "s", compiled,
               compiled == 1 ? "" : "s",
               refused ? fmt::format(", {} without a kernel", refused) : std::string());
  // A plan round-trips through the reader the library uses: what it would refuse, refuse now.
  return preload::ServePlan::parse(plan.render());
}

// A temporary file removed when this goes out of scope (the plan of one run).
struct TempFile {
  fs::path path;
  ~TempFile() {
    std::error_code ec;
    if (!path.empty()) fs::remove(path, ec);
  }
};

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
  struct Opts {
    std::string table, db, plan, write_plan, lib, serve_lib, log, cache_dir;
    std::vector<std::string> gpus;
    bool dry_run = false, verify = false, prepare_only = false;
    double min_ratio = 1.0;
    std::vector<std::string> command;
  };
  auto o = std::make_shared<Opts>();
  auto* sub = app.add_subcommand(
      "serve",
      "Run an application with libsgemm_tune_preload.so answering its FP32 cuBLAS GEMMs from "
      "tuned kernels: each call whose problem (shape, layout, operand alignment) has a winner "
      "for this GPU runs that winner; cuBLAS runs everything else");
  auto* source = sub->add_option_group("source", "Where the winners come from (one of)");
  source->add_option("--table", o->table, "A table from `sgemm-tune export --format json`");
  source->add_option("--db", o->db, "A tuning database (exported on the way)");
  source->add_option("--plan", o->plan, "A serve plan written before by --write-plan");
  source->require_option(1);
  sub->add_option("--gpu", o->gpus,
                  "Only the winners of these GPUs (repeatable; name as the table gives it). "
                  "Default: every GPU of the table");
  auto* min_ratio =
      sub->add_option("--min-ratio", o->min_ratio,
                      "Serve a winner only if it ran at least this fast against cuBLAS when it was "
                      "tuned (its ratio, timed in the same run; default 1: never serve a kernel "
                      "cuBLAS beat; 0: every winner). Calls of the others go to cuBLAS, counted as "
                      "'slower than cuBLAS when tuned'")
          ->check(CLI::Range(0.0, 100.0))
          ->capture_default_str();
  sub->add_option("--write-plan", o->write_plan,
                  "Keep the serve plan in this file (SGT_SERVE=FILE serves from it without "
                  "this command)");
  sub->add_flag("--prepare-only", o->prepare_only,
                "Prepare the plan (needs --write-plan) and run nothing");
  sub->add_option("--cache-dir", o->cache_dir,
                  "Compiled-kernel cache (default: $SGT_CACHE_DIR, else the user cache dir)");
  sub->add_flag("--dry-run", o->dry_run,
                "Decide and count what would be served, but let cuBLAS run every call "
                "(SGT_SERVE_DRY_RUN)");
  sub->add_flag("--verify", o->verify,
                "Compare every served call with cuBLAS's result (slow: synchronises each call; "
                "SGT_SERVE_VERIFY)");
  sub->add_option("--preload-lib", o->lib,
                  "The library (default: $SGT_PRELOAD_LIB, else beside sgemm-tune: ../lib)");
  sub->add_option("--serve-lib", o->serve_lib,
                  "libsgemm_tune_serve.so (default: beside the preload library)");
  sub->add_option("--preload-log", o->log,
                  "SGT_PRELOAD_LOG: quiet, summary (default: one line at exit), info, debug "
                  "(each problem's decision)")
      ->check(CLI::IsMember({"quiet", "summary", "info", "debug"}));
  sub->add_option("command", o->command, "The application and its arguments, after --");
  sub->footer(
      "Example: sgemm-tune serve --table winners.json -- ./app --steps 10\n"
      "The plan holds, per GPU of the table, every tuned problem with its winner compiled for "
      "that GPU (from the kernel cache, else by NVRTC now, before the application starts). The "
      "application runs with LD_PRELOAD and SGT_SERVE set; at exit the library says how many "
      "calls it served and why the others went to cuBLAS (docs/preload.md). Exit status: the "
      "application's (128 + N when signal N killed it); before it runs: 1 when a library is "
      "missing or the plan cannot be prepared, 2 for bad arguments, 126/127 when the "
      "application cannot be run / is not found.");
  sub->callback([o, min_ratio] {
    if (o->prepare_only && o->write_plan.empty())
      throw InputError("--prepare-only needs --write-plan FILE");
    if (!o->prepare_only && o->command.empty())
      throw InputError("serve: no application given after --");
    if (!o->plan.empty() && !o->gpus.empty())
      throw InputError("--gpu selects from a table or database, not from --plan");
    if (!o->plan.empty() && min_ratio->count() > 0)
      throw InputError(
          "--min-ratio applies when a plan is prepared (--table, --db); a plan "
          "keeps the bound it was prepared with");
    const auto lib = o->prepare_only ? fs::path() : find_preload(o->lib);
    fs::path serve_lib;
    if (!o->prepare_only) {
      serve_lib = o->serve_lib.empty() ? lib.parent_path() / kServeName : fs::path(o->serve_lib);
      std::error_code ec;
      if (!fs::is_regular_file(serve_lib, ec))
        throw Error(fmt::format("cannot find {} (looked at {}); give --serve-lib", kServeName,
                                serve_lib.string()));
      serve_lib = fs::absolute(serve_lib);
    }

    TempFile temp;
    fs::path plan_path;
    if (!o->plan.empty()) {
      // Checked here, so that a bad plan stops before the application runs.
      try {
        (void)preload::ServePlan::parse(read_text(o->plan));
      } catch (const std::runtime_error& e) {
        throw InputError(fmt::format("serve plan '{}': {}", o->plan, e.what()));
      }
      plan_path = fs::absolute(o->plan);
    } else {
      json table;
      std::string source = o->table;
      TempFile exported;
      if (!o->db.empty()) {
        // The database's winners exactly as `export` writes them.
        char tmpl[] = "/tmp/sgemm-tune-table-XXXXXX";
        const int fd = ::mkstemp(tmpl);
        if (fd < 0)
          throw Error("cannot create a temporary file: " + std::string(std::strerror(errno)));
        ::close(fd);
        exported.path = tmpl;
        std::vector<std::string> argv = {own_executable().string(),
                                         "-q",
                                         "export",
                                         "--format",
                                         "json",
                                         "--db",
                                         o->db,
                                         "-o",
                                         tmpl};
        for (const auto& g : o->gpus) argv.insert(argv.end(), {"--gpu", g});
        if (const int rc = run_app(argv, {}, "serve"); rc != 0)
          throw Error(fmt::format("exporting the winners of '{}' failed (exit {})", o->db, rc));
        source = o->db;
        try {
          table = json::parse(read_text(exported.path));
        } catch (const json::exception& e) {
          throw Error(
              fmt::format("the table exported from '{}' does not parse: {}", o->db, e.what()));
        }
      } else {
        try {
          table = json::parse(read_text(o->table));
        } catch (const json::exception& e) {
          throw InputError(fmt::format("'{}' is not JSON: {}", o->table, e.what()));
        }
      }
      PlanOptions po;
      po.gpus = o->gpus;
      po.cache_dir = o->cache_dir.empty() ? gpu::default_cache_dir() : fs::path(o->cache_dir);
      po.min_ratio = o->min_ratio;
      const auto plan = prepare_plan(table, source, po);
      if (!o->write_plan.empty()) {
        plan_path = fs::absolute(o->write_plan);
      } else {
        char tmpl[] = "/tmp/sgemm-tune-plan-XXXXXX";
        const int fd = ::mkstemp(tmpl);
        if (fd < 0)
          throw Error("cannot create a temporary file: " + std::string(std::strerror(errno)));
        ::close(fd);
        temp.path = tmpl;
        plan_path = tmpl;
      }
      write_file_atomically(plan_path, plan.render());
      if (o->prepare_only) {
        spdlog::info(
            "serve plan written to '{}'; serve with SGT_SERVE={} LD_PRELOAD=<prefix>/lib/{}",
            terminal_safe(plan_path.string()), terminal_safe(plan_path.string()), kPreloadName);
        return;
      }
    }
    std::map<std::string, std::string> env = {
        {"LD_PRELOAD", preload_value(lib)},
        {"SGT_SERVE", plan_path.string()},
        {"SGT_SERVE_LIB", serve_lib.string()},
    };
    if (o->dry_run) env["SGT_SERVE_DRY_RUN"] = "1";
    if (o->verify) env["SGT_SERVE_VERIFY"] = "1";
    if (!o->log.empty()) env["SGT_PRELOAD_LOG"] = o->log;
    exit_with(run_app(o->command, env, "serve"));
  });
}

}  // namespace sgt::cli
