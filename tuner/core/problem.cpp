// Shape parsing and the shape filter.
#include "problem.hpp"

#include <charconv>
#include <climits>
#include <fmt/format.h>

#include <fstream>
#include <set>
#include <sstream>

#include <nlohmann/json.hpp>

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

std::vector<Problem> load_shape_list(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw InputError(fmt::format("cannot read shape list '{}'", path));
  std::stringstream ss;
  ss << in.rdbuf();
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(ss.str());
  } catch (const nlohmann::json::parse_error& e) {
    throw InputError(fmt::format("{}: invalid JSON: {}", path, e.what()));
  }
  if (j.is_object()) {
    if (!j.contains("shapes") || j.size() != 1) {
      throw InputError(
          fmt::format("{}: expected a list of shapes, or an object with only the key "
                      "'shapes'",
                      path));
    }
    j = j.at("shapes");
  }
  if (!j.is_array() || j.empty()) {
    throw InputError(fmt::format("{}: expected a non-empty list of shapes", path));
  }
  static const std::set<std::string> kLayouts = {"NN"};
  std::vector<Problem> out;
  for (size_t i = 0; i < j.size(); ++i) {
    const auto& e = j[i];
    auto where = [&](const std::string& what) {
      return InputError(fmt::format("{}: shape #{} {}: {}", path, i, e.dump(), what));
    };
    auto parse = [&](const std::string& text) {
      try {
        return parse_shape(text);
      } catch (const InputError& err) {
        throw InputError(fmt::format("{}: shape #{}: {}", path, i, err.what()));
      }
    };
    Problem p;
    if (e.is_string()) {
      p = parse(e.get<std::string>());
    } else if (e.is_object() && e.contains("shape") && e.at("shape").is_string()) {
      for (const auto& [k, v] : e.items()) {
        if (k != "shape" && k != "layout") throw where("unknown key '" + k + "'");
      }
      p = parse(e.at("shape").get<std::string>());
      if (e.contains("layout")) {
        if (!e.at("layout").is_string() || !kLayouts.contains(e.at("layout").get<std::string>())) {
          throw where("layout must be \"NN\" (the only layout the kernel serves so far)");
        }
        p.layout = e.at("layout").get<std::string>();
      }
    } else {
      throw where("expected \"MxNxK\" or {\"shape\": \"MxNxK\", \"layout\": \"NN\"}");
    }
    for (const auto& q : out) {
      if (q == p) throw where("listed twice");
    }
    out.push_back(p);
  }
  return out;
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
