// A GEMM problem (shape, layout, data type) and the shape rules that decide whether a config's
// kernel can serve it.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "config.hpp"

namespace sgt {

struct Problem {
  long long M = 0, N = 0, K = 0;
  std::string layout = "NN";  // op(A) op(B) in our row-major API; only NN until transposes land
  std::string dtype = "f32";

  std::string shape() const;  // "MxNxK"
  double flops() const { return 2.0 * static_cast<double>(M) * N * K; }
  friend bool operator==(const Problem&, const Problem&) = default;
};

// Parses "MxNxK" (each 1 .. 2^31-1). Throws InputError naming the text on anything else.
Problem parse_shape(std::string_view text);

// Reads a list of problems from a JSON file: either an array or {"shapes": [...]}, each entry
// "MxNxK" or {"shape": "MxNxK", "layout": "NN"}. Throws InputError naming the file and entry.
std::vector<Problem> load_shape_list(const std::string& path);

// Shape rules of the current kernel: it has no edge path, so the tile must divide the problem.
std::vector<RuleViolation> check_shape(const WarpTileConfig& c, const Problem& p);

}  // namespace sgt
