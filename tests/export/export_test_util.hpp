// Helpers of the export tests: files and the system C++ compiler (run_shell and sh_quote are in
// test_support.hpp), hex dumps for byte-exact comparisons, and a Table built by hand for the
// rendering tests.
#pragma once

#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <string_view>

#include "export.hpp"
#include "test_support.hpp"

namespace sgt::test {

inline std::string read_file(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

inline void write_file(const std::filesystem::path& p, std::string_view text) {
  std::ofstream out(p, std::ios::binary | std::ios::trunc);
  out << text;
}

inline bool contains(std::string_view s, std::string_view needle) {
  return s.find(needle) != std::string_view::npos;
}

// The C++ compiler this build uses (a plain C++ compiler, not nvcc).
inline std::string cxx() {
  return SGT_CXX_COMPILER;
}

inline std::string hex(std::string_view s) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string out;
  for (const char ch : s) {
    const auto b = static_cast<unsigned char>(ch);
    out += kDigits[b >> 4];
    out += kDigits[b & 15];
  }
  return out;
}

// A config's values in kConfigFields order, ", "-separated: how the header writes a Config.
inline std::string field_values(const WarpTileConfig& c) {
  std::string out;
  for (const auto& f : kConfigFields) {
    if (!out.empty()) out += ", ";
    out += std::to_string(c.*f.member);
  }
  return out;
}

inline TableShape table_shape(long long M, long long N, long long K, const std::string& config,
                              double median_ms, double cublas_ms,
                              const std::string& layout = "NN") {
  TableShape s;
  s.problem.M = M;
  s.problem.N = N;
  s.problem.K = K;
  s.problem.layout = layout;
  s.config = *from_name(config);
  s.config_name = config;
  s.median_ms = median_ms;
  s.cublas_median_ms = cublas_ms;
  return s;
}

}  // namespace sgt::test
