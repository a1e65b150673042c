// Running helper programs from the CLI: the Python that draws plots, and the plot scripts.
#include "plot_util.hpp"

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>

#include <fmt/format.h>

#include "error.hpp"

extern char** environ;

namespace sgt::cli {

namespace fs = std::filesystem;

fs::path self_exe() {
  return fs::read_symlink("/proc/self/exe");
}

// Runs argv (argv[0] looked up on PATH), its stdout and stderr going to ours unless quiet. The exit
// status, or -1 when it could not be started (errno_out tells why).
int run_program(const std::vector<std::string>& args, bool quiet, int* errno_out) {
  std::vector<char*> argv;
  for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  if (quiet) {
    posix_spawn_file_actions_addopen(&fa, STDOUT_FILENO, "/dev/null", O_WRONLY, 0);
    posix_spawn_file_actions_addopen(&fa, STDERR_FILENO, "/dev/null", O_WRONLY, 0);
  } else {
    // Our stdout carries results only: the script's chatter goes to stderr.
    posix_spawn_file_actions_adddup2(&fa, STDERR_FILENO, STDOUT_FILENO);
  }
  std::fflush(stdout);
  std::fflush(stderr);
  pid_t pid = -1;
  const int rc = posix_spawnp(&pid, argv[0], &fa, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&fa);
  if (rc != 0) {
    if (errno_out) *errno_out = rc;
    return -1;
  }
  int status = 0;
  while (waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR) return -1;
  }
  if (WIFEXITED(status)) {
    // posix_spawnp reports a missing program through exit code 127 on some libcs.
    if (WEXITSTATUS(status) == 127 && errno_out) *errno_out = ENOENT;
    return WEXITSTATUS(status);
  }
  return 128 + (WIFSIGNALED(status) ? WTERMSIG(status) : 0);
}

// The Python that draws the plot: $SGT_PYTHON when set, else the first of `python3` on PATH and
// the system's /usr/bin/python3 that can import matplotlib (a virtual environment or pyenv first on
// PATH often lacks Debian's python3-matplotlib). nullopt, with why, when none can.
std::optional<std::string> find_python(std::string& why) {
  std::vector<std::string> candidates;
  if (const char* env = std::getenv("SGT_PYTHON"); env && *env) {
    candidates.push_back(env);
  } else {
    candidates = {"python3", "/usr/bin/python3"};
  }
  bool any_python = false;
  for (const auto& py : candidates) {
    int err = 0;
    const int rc = run_program({py, "-c", "import matplotlib"}, true, &err);
    if (rc == 0) return py;
    if (rc >= 0 && !(rc == 127 && err == ENOENT)) any_python = true;
  }
  why = any_python ? "python3 is there but cannot import matplotlib"
                   : "python3 was not found (set SGT_PYTHON to one)";
  why += " (on Debian/Ubuntu: apt-get install python3-matplotlib)";
  return std::nullopt;
}

fs::path find_plot_script(const std::string& given, const std::string& name) {
  std::error_code ec;
  if (!given.empty()) {
    if (!fs::is_regular_file(given, ec)) {
      throw InputError(fmt::format("--plot-script '{}': no such file", given));
    }
    return given;
  }
  std::vector<fs::path> tried = {self_exe().parent_path().parent_path() / "share" / "sgemm-tune" /
                                 name};
#ifdef SGT_SOURCE_DIR
  tried.push_back(fs::path(SGT_SOURCE_DIR) / "tools" / name);
#endif
  std::string list;
  for (const auto& p : tried) {
    if (fs::is_regular_file(p, ec)) return p;
    list += fmt::format(" '{}'", p.string());
  }
  throw InputError(
      fmt::format("cannot find the plot script {} (looked at{}); pass --plot-script "
                  "PATH (it is tools/{} in the source tree)",
                  name, list, name));
}

}  // namespace sgt::cli
