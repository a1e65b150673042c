// sgemm-tune's entry point: builds the CLI, runs the chosen subcommand, and turns the exceptions
// that stop a run into one message and an exit code (2: bad input, 1: the run failed).
#include <cstdio>
#include <exception>

#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

#include "commands.hpp"
#include "error.hpp"
#include "file_util.hpp"
#include "log_tag.hpp"

namespace {

// Logs go to stderr; stdout carries only results (tables, JSON).
void set_up_logging() {
  auto logger = spdlog::stderr_color_mt("sgemm-tune");
  spdlog::set_default_logger(logger);
  // %*: the thread's tag ("[GPU 2] ") where work runs on several GPUs at once (log_tag.hpp).
  auto pattern = std::make_unique<spdlog::pattern_formatter>();
  pattern->add_flag<sgt::LogTagFlag>('*').set_pattern("[%H:%M:%S.%e] [%^%l%$] %*%v");
  spdlog::set_formatter(std::move(pattern));
}

void register_commands(CLI::App& app) {
  sgt::cli::register_space(app);
  sgt::cli::register_check(app);
  sgt::cli::register_tune(app);
  sgt::cli::register_bench(app);
  sgt::cli::register_compile(app);
  sgt::cli::register_worker(app);
  sgt::cli::register_query(app);
  sgt::cli::register_list(app);
  sgt::cli::register_db(app);
  sgt::cli::register_export(app);
  sgt::cli::register_dataset(app);
  sgt::cli::register_strategy_bench(app);
  sgt::cli::register_capture(app);
  sgt::cli::register_serve(app);
}

// A first word that is neither an option nor a command: named, with the commands, on stderr
// (CLI11 would only say that a command is required). Returns whether it was one.
bool unknown_command(const CLI::App& app, const char* word) {
  bool known = false;
  std::string names;
  for (const auto* sub : app.get_subcommands([](const CLI::App*) { return true; })) {
    known = known || sub->check_name(word);
    if (!sub->get_group().empty()) names += (names.empty() ? "" : ", ") + sub->get_name();
  }
  if (!known) {
    std::fprintf(stderr, "sgemm-tune: error: unknown command '%s'; the commands are: %s\n",
                 sgt::terminal_safe(word).c_str(), names.c_str());
    return true;
  }
  return false;
}

}  // namespace

int main(int argc, char** argv) {
  set_up_logging();
  CLI::App app{
      "sgemm-tune: autotuner for CUDA SGEMM warp-tiling kernels.\n"
      "Enumerates a search space, prunes invalid configs by named rules, compiles the\n"
      "survivors with NVRTC, verifies and times them against cuBLAS FP32 on the GPU."};
  app.set_version_flag("--version", std::string("sgemm-tune ") + SGT_VERSION);
  app.require_subcommand(1);
  std::string level = "info";
  bool verbose = false, quiet = false;
  app.add_option("--log-level", level, "trace, debug, info, warn, error, off")
      ->check(CLI::IsMember({"trace", "debug", "info", "warn", "error", "off"}));
  app.add_flag("-v,--verbose", verbose, "Log debug messages too (--log-level debug)");
  app.add_flag("-q,--quiet", quiet, "Log warnings and errors only (--log-level warn)");
  // The logging options are accepted after the subcommand too (sgemm-tune tune -q ...).
  app.fallthrough();
  app.parse_complete_callback([&] {
    if (verbose && quiet) throw CLI::ValidationError("-v and -q", "give one of them, not both");
    spdlog::set_level(spdlog::level::from_str(verbose ? "debug" : quiet ? "warn" : level));
  });

  register_commands(app);

  // Whole-number options parse with strtoull, which takes "-1" and wraps it, and clamps a number
  // too long for 64 bits to the largest: both are refused here for every such option, before any
  // range check (each option states its own range in --help).
  sgt::cli::refuse_wrapping_numbers(app);
  if (argc > 1 && argv[1][0] != '-' && unknown_command(app, argv[1])) return 2;
  try {
    app.parse(argc, argv);
  } catch (const CLI::RuntimeError& e) {
    // A subcommand's own documented exit code (query: 3 nearest shape, 4 default config).
    return e.get_exit_code();
  } catch (const CLI::ParseError& e) {
    // --help and --version exit 0; every other parse error is bad input, exit code 2.
    return app.exit(e) == 0 ? 0 : 2;
  } catch (const sgt::InputError& e) {
    // Messages quote files, databases and arguments: nothing in them reaches the terminal raw.
    std::fprintf(stderr, "sgemm-tune: error: %s\n", sgt::terminal_safe_lines(e.what()).c_str());
    return 2;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "sgemm-tune: error: %s\n", sgt::terminal_safe_lines(e.what()).c_str());
    return 1;
  }
  return 0;
}
