// Helpers shared by the test suites: locate the CLI beside the test binary and run it.
#pragma once

#include <array>
#include <cstdio>
#include <filesystem>
#include <string>
#include <sys/wait.h>
#include <unistd.h>

namespace sgt::test {

// The sgemm-tune binary built beside this test binary.
inline std::filesystem::path cli_path() {
  return std::filesystem::read_symlink("/proc/self/exe").parent_path() / "sgemm-tune";
}

struct RunResult {
  int exit_code = -1;
  std::string out;
};

// Runs `sgemm-tune <args>` through the shell; args are passed verbatim. With merge_stderr the
// output holds stdout and stderr; without, stdout alone (stderr is discarded), e.g. for --json.
inline RunResult run_cli(const std::string& args, bool merge_stderr = true) {
  const std::string cmd =
      "'" + cli_path().string() + "' " + args + (merge_stderr ? " 2>&1" : " 2>/dev/null");
  RunResult r;
  FILE* p = popen(cmd.c_str(), "r");
  if (!p) return r;
  std::array<char, 4096> buf{};
  size_t n;
  while ((n = fread(buf.data(), 1, buf.size(), p)) > 0) r.out.append(buf.data(), n);
  const int status = pclose(p);
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
}

// A fresh temporary directory, removed when the object goes.
class TempDir {
 public:
  TempDir() {
    std::string tmpl = (std::filesystem::temp_directory_path() / "sgt-test-XXXXXX").string();
    path_ = mkdtemp(tmpl.data());
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

}  // namespace sgt::test
