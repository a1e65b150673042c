// Shape parsing and the shape filter.
#include "problem.hpp"

#include <charconv>
#include <climits>
#include <filesystem>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "error.hpp"
#include "family.hpp"
#include "file_util.hpp"

namespace sgt {

bool is_layout(std::string_view text) {
  for (const auto l : kLayouts) {
    if (l == text) return true;
  }
  return false;
}

std::string parse_layout(std::string_view text) {
  if (!is_layout(text)) {
    throw InputError(fmt::format(
        "bad layout '{}': expected NN, NT, TN or TT (op(A) op(B) of C = alpha*op(A)*op(B) + "
        "beta*C; N: as stored row-major, T: transposed)",
        text));
  }
  return std::string(text);
}

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

std::vector<SuiteEntry> load_suite(const std::string& path, std::string_view default_layout) {
  const std::string fallback_layout = parse_layout(default_layout);
  const auto text = read_file(path);
  if (!text) throw InputError(fmt::format("cannot read shape list '{}'", path));
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(*text);
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
  std::vector<SuiteEntry> out;
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
    std::string space;
    if (e.is_string()) {
      p = parse(e.get<std::string>());
      p.layout = fallback_layout;
    } else if (e.is_object() && e.contains("shape") && e.at("shape").is_string()) {
      for (const auto& [k, v] : e.items()) {
        if (k != "shape" && k != "layout" && k != "space") {
          throw where("unknown key '" + k + "' (expected shape, layout, space)");
        }
      }
      if (e.contains("space")) {
        const auto& sp = e.at("space");
        if (!sp.is_string() || sp.get<std::string>().empty()) {
          throw where("space must be a non-empty string: a search-space file or a built-in name");
        }
        space = sp.get<std::string>();
        // A relative path is read beside the suite file when such a file is there, so that a
        // suite and its spaces move together; anything else is a built-in name or a path from
        // the current directory, as for --space.
        const std::filesystem::path beside = std::filesystem::path(path).parent_path() / space;
        std::error_code ec;
        if (std::filesystem::path(space).is_relative() &&
            std::filesystem::is_regular_file(beside, ec)) {
          space = beside.string();
        }
      }
      p = parse(e.at("shape").get<std::string>());
      p.layout = fallback_layout;
      if (e.contains("layout")) {
        const auto& l = e.at("layout");
        if (!l.is_string()) throw where("layout must be a string: NN, NT, TN or TT");
        try {
          p.layout = parse_layout(l.get<std::string>());
        } catch (const InputError& err) {
          throw where(err.what());
        }
      }
    } else {
      throw where(
          "expected \"MxNxK\" or {\"shape\": \"MxNxK\", \"layout\": \"NN\", \"space\": "
          "\"default\"}");
    }
    for (const auto& q : out) {
      if (q.problem == p) throw where("listed twice");
    }
    out.push_back({p, std::move(space)});
  }
  return out;
}

std::vector<Problem> load_shape_list(const std::string& path, std::string_view default_layout) {
  std::vector<Problem> out;
  for (auto& e : load_suite(path, default_layout)) out.push_back(std::move(e.problem));
  return out;
}

bool kernel_vec_loads(bool trans_a, bool trans_b, long long M, long long N, long long K) {
  // Only the remainders mod 4 matter, and narrowing keeps them.
  const auto i = [](long long v) { return static_cast<int>(v & 0xffff); };
  return sgt_kernel::float4_operand(true, i(trans_a ? M : K), !trans_a, i(M)) &&
         sgt_kernel::float4_operand(true, i(trans_b ? K : N), trans_b, i(N));
}

bool kernel_vec_loads(const Problem& p) {
  return kernel_vec_loads(p.layout.size() == 2 && p.layout[0] == 'T',
                          p.layout.size() == 2 && p.layout[1] == 'T', p.M, p.N, p.K);
}

std::vector<RuleViolation> check_shape(const WarpTileConfig& c, const Problem& p,
                                       const Limits& limits) {
  // Every valid config of a family without shape rules serves every shape of a supported layout;
  // the TMA family's only operands its tensor copies can read.
  std::vector<RuleViolation> out;
  if (!is_layout(p.layout)) {
    out.push_back(
        {"shape_layout", fmt::format("layout '{}' is not one of NN, NT, TN, TT", p.layout)});
  } else if (p.dtype != "f32") {
    out.push_back({"shape_layout",
                   fmt::format("data type '{}' is not served by this kernel (f32 only)", p.dtype)});
  }
  if (is_layout(p.layout)) family_of(c).check_shape(c, p, limits, out);
  return out;
}

}  // namespace sgt
