// File helpers shared by the tuner, the kernel cache and the database (see file_util.hpp).
#include "file_util.hpp"

#include <atomic>
#include <cerrno>
#include <fstream>
#include <sstream>
#include <system_error>

#include <unistd.h>
#include <zlib.h>

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

std::string terminal_safe(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (char ch : text) {
    const auto b = static_cast<unsigned char>(ch);
    if (b >= 0x20 && b < 0x7f) {
      out += ch;
    } else {
      out += fmt::format("\\x{:02x}", b);
    }
  }
  return out;
}

std::string terminal_safe_lines(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  const auto escape = [&](unsigned char b) { out += fmt::format("\\x{:02x}", b); };
  for (size_t i = 0; i < text.size();) {
    const auto b = static_cast<unsigned char>(text[i]);
    if (b == '\n' || b == '\t' || (b >= 0x20 && b < 0x7f)) {
      out += text[i++];
      continue;
    }
    // A UTF-8 sequence: its length from the lead byte, then continuation bytes 10xxxxxx.
    const size_t len = b >= 0xc2 && b < 0xe0   ? 2
                       : b >= 0xe0 && b < 0xf0 ? 3
                       : b >= 0xf0 && b < 0xf5 ? 4
                                               : 0;
    bool ok = len > 0 && i + len <= text.size();
    for (size_t k = 1; ok && k < len; ++k)
      ok = (static_cast<unsigned char>(text[i + k]) & 0xc0) == 0x80;
    // U+0080..U+009F (C1 controls, e.g. CSI) are encoded as C2 80..C2 9F.
    if (ok && len == 2 && b == 0xc2 && static_cast<unsigned char>(text[i + 1]) < 0xa0) ok = false;
    if (!ok) {
      escape(b);
      ++i;
      continue;
    }
    out.append(text.substr(i, len));
    i += len;
  }
  return out;
}

bool is_gzip(std::string_view bytes) {
  return bytes.size() >= 2 && static_cast<unsigned char>(bytes[0]) == 0x1f &&
         static_cast<unsigned char>(bytes[1]) == 0x8b;
}

std::string gzip_compress(std::string_view bytes) {
  z_stream z{};
  // windowBits 15 + 16: a gzip header and trailer rather than zlib's.
  if (deflateInit2(&z, Z_BEST_COMPRESSION, Z_DEFLATED, 15 + 16, 9, Z_DEFAULT_STRATEGY) != Z_OK)
    throw Error("zlib: cannot start a gzip stream");
  std::string out(deflateBound(&z, static_cast<uLong>(bytes.size())), '\0');
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(bytes.data()));
  z.avail_in = static_cast<uInt>(bytes.size());
  z.next_out = reinterpret_cast<Bytef*>(out.data());
  z.avail_out = static_cast<uInt>(out.size());
  const int rc = deflate(&z, Z_FINISH);
  out.resize(z.total_out);
  deflateEnd(&z);
  if (rc != Z_STREAM_END) throw Error("zlib: gzip compression did not finish");
  return out;
}

std::string gzip_decompress(std::string_view bytes, std::string_view origin) {
  z_stream z{};
  if (inflateInit2(&z, 15 + 16) != Z_OK) throw Error("zlib: cannot start a gzip stream");
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(bytes.data()));
  z.avail_in = static_cast<uInt>(bytes.size());
  std::string out;
  char buf[1 << 16];
  int rc = Z_OK;
  while (rc == Z_OK) {
    z.next_out = reinterpret_cast<Bytef*>(buf);
    z.avail_out = sizeof buf;
    rc = inflate(&z, Z_NO_FLUSH);
    out.append(buf, sizeof buf - z.avail_out);
    if (rc == Z_BUF_ERROR && z.avail_in == 0) break;  // input ended before the stream did
  }
  inflateEnd(&z);
  if (rc != Z_STREAM_END) {
    throw InputError(fmt::format("'{}' is a damaged or truncated gzip file", origin));
  }
  return out;
}

std::optional<std::string> read_file_maybe_gzip(const std::filesystem::path& path) {
  auto bytes = read_file(path);
  if (!bytes || !is_gzip(*bytes)) return bytes;
  return gzip_decompress(*bytes, path.string());
}

void write_file_atomically_maybe_gzip(const std::filesystem::path& path, std::string_view content) {
  if (path.extension() == ".gz") {
    write_file_atomically(path, gzip_compress(content));
  } else {
    write_file_atomically(path, content);
  }
}

}  // namespace sgt
