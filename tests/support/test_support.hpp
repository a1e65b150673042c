// Helpers shared by the test suites: run shell commands and the CLI built beside the test binary,
// temporary directories and scoped environment variables.
#pragma once

#include <array>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>
#include <sys/wait.h>
#include <unistd.h>

#include "config.hpp"

namespace sgt::test {

// The rows of a CSV text (RFC 4180 quoting: a quoted field may hold commas and doubled quotes),
// each a vector of its fields; one row per line.
inline std::vector<std::vector<std::string>> csv_rows(const std::string& text) {
  std::vector<std::vector<std::string>> rows;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    std::vector<std::string> out(1);
    bool quoted = false;
    for (size_t i = 0; i < line.size(); ++i) {
      const char c = line[i];
      if (quoted && c == '"' && i + 1 < line.size() && line[i + 1] == '"') {
        out.back() += '"';
        ++i;
      } else if (c == '"') {
        quoted = !quoted;
      } else if (c == ',' && !quoted) {
        out.emplace_back();
      } else {
        out.back() += c;
      }
    }
    rows.push_back(std::move(out));
  }
  return rows;
}

// Seed kernel 8's config: valid everywhere, the tests' reference point.
constexpr const char* kSeed = "wt_128x64x16_w64x32_wn2_t4x4_n128_mb1";

// A config from its canonical name; a typo in a test is a test failure, not a crash.
inline WarpTileConfig config(const std::string& name) {
  const auto c = from_name(name);
  if (!c) throw std::runtime_error("not a config name: " + name);
  return *c;
}

// The sgemm-tune binary built beside this test binary.
inline std::filesystem::path cli_path() {
  return std::filesystem::read_symlink("/proc/self/exe").parent_path() / "sgemm-tune";
}

// Single-quoted for sh; the test paths hold no single quote.
inline std::string sh_quote(const std::filesystem::path& p) {
  return "'" + p.string() + "'";
}

struct RunResult {
  int exit_code = -1;
  std::string out;
};

// Runs `cmd` through the shell. With merge_stderr the output holds stdout and stderr; without,
// stdout alone (stderr goes to the test's own stderr).
inline RunResult run_shell(const std::string& cmd, bool merge_stderr = true) {
  RunResult r;
  FILE* p = popen((merge_stderr ? cmd + " 2>&1" : cmd).c_str(), "r");
  if (!p) return r;
  std::array<char, 4096> buf{};
  size_t n;
  while ((n = fread(buf.data(), 1, buf.size(), p)) > 0) r.out.append(buf.data(), n);
  const int status = pclose(p);
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
}

// Runs `sgemm-tune <args>` through the shell; args are passed verbatim. With merge_stderr the
// output holds stdout and stderr; without, stdout alone (stderr is discarded), e.g. for --json.
inline RunResult run_cli(const std::string& args, bool merge_stderr = true) {
  const std::string cmd = "'" + cli_path().string() + "' " + args;
  return merge_stderr ? run_shell(cmd) : run_shell(cmd + " 2>/dev/null", false);
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

// Sets an environment variable (or, with std::nullopt, unsets it) for one scope; a CLI run
// meanwhile inherits it.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const std::optional<std::string>& value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old;
    if (value) {
      setenv(name, value->c_str(), 1);
    } else {
      unsetenv(name);
    }
  }
  ~ScopedEnv() {
    if (old_) {
      setenv(name_, old_->c_str(), 1);
    } else {
      unsetenv(name_);
    }
  }

 private:
  const char* name_;
  std::optional<std::string> old_;
};

}  // namespace sgt::test
