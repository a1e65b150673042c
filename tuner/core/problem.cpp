// Shape parsing and the shape filter.
#include "problem.hpp"

#include <charconv>
#include <climits>
#include <fmt/format.h>

#include "error.hpp"

namespace sgt {

std::string Problem::shape() const {
  return fmt::format("{}x{}x{}", M, N, K);
}

Problem parse_shape(std::string_view text) {
  auto bad = [&](std::string_view why) {
    return InputError(
        fmt::format("bad shape '{}': {} (expected MxNxK, e.g. 4096x4096x4096)", text, why));
  };
  long long dims[3] = {0, 0, 0};
  std::string_view rest = text;
  for (int i = 0; i < 3; ++i) {
    if (i > 0) {
      if (rest.empty() || (rest.front() != 'x' && rest.front() != 'X')) {
        throw bad("needs three sizes separated by 'x'");
      }
      rest.remove_prefix(1);
    }
    if (rest.empty() || rest.front() < '0' || rest.front() > '9') {
      throw bad("each size must be a positive decimal integer");
    }
    long long v = 0;
    auto [ptr, ec] = std::from_chars(rest.data(), rest.data() + rest.size(), v);
    if (ec == std::errc::result_out_of_range || v > INT_MAX) throw bad("a size is too large");
    if (ec != std::errc()) throw bad("each size must be a positive decimal integer");
    if (v < 1) throw bad("sizes must be at least 1");
    dims[i] = v;
    rest.remove_prefix(static_cast<size_t>(ptr - rest.data()));
  }
  if (!rest.empty()) throw bad("unexpected text after K");
  Problem p;
  p.M = dims[0];
  p.N = dims[1];
  p.K = dims[2];
  return p;
}

std::vector<RuleViolation> check_shape(const WarpTileConfig& c, const Problem& p) {
  std::vector<RuleViolation> out;
  if (c.BM <= 0 || c.BN <= 0 || c.BK <= 0) return out;  // check() reports those
  if (p.M % c.BM != 0 || p.N % c.BN != 0 || p.K % c.BK != 0) {
    out.push_back(
        {"shape_tile_multiple", fmt::format("shape {} is not a multiple of the block tile {}x{}x{}",
                                            p.shape(), c.BM, c.BN, c.BK)});
  }
  if (p.layout != "NN") {
    out.push_back(
        {"shape_layout", fmt::format("layout {} is not supported by this kernel", p.layout)});
  }
  return out;
}

}  // namespace sgt
