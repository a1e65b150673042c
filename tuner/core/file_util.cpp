// File helpers shared by the tuner, the kernel cache and the database (see file_util.hpp).
#include "file_util.hpp"

#include <atomic>
#include <cerrno>
#include <fstream>
#include <sstream>
#include <system_error>

#include <unistd.h>

#include <fmt/format.h>

#include "error.hpp"

namespace sgt {

std::optional<std::string> read_file(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return std::nullopt;
  std::stringstream ss;
  ss << in.rdbuf();
  if (in.bad()) return std::nullopt;
  return ss.str();
}

void write_file_atomically(const std::filesystem::path& path, std::string_view content) {
  static std::atomic<unsigned long> counter{0};
  auto tmp = path;
  tmp += fmt::format(".tmp.{}.{}", ::getpid(), counter++);
  auto discard_tmp = [&] {
    std::error_code ignored;
    std::filesystem::remove(tmp, ignored);
  };
  {
    errno = 0;
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    out.write(content.data(), static_cast<std::streamsize>(content.size()));
    out.close();
    if (!out) {
      // iostreams do not report why; errno from the failed open/write/close is the best guess.
      const int err = errno;
      discard_tmp();
      throw Error(fmt::format("cannot write '{}': {}", path.string(),
                              err ? std::generic_category().message(err) : "I/O error"));
    }
  }
  std::error_code ec;
  std::filesystem::rename(tmp, path, ec);
  if (ec) {
    discard_tmp();
    throw Error(fmt::format("cannot write '{}': {}", path.string(), ec.message()));
  }
}

}  // namespace sgt
