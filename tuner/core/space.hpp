// Search spaces as data: value lists per config field, user constraints, device limits; and the
// enumeration that turns a space into survivors plus per-rule rejection counts.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "arch.hpp"
#include "config.hpp"
#include "precision.hpp"
#include "problem.hpp"

namespace sgt {

struct SearchSpace {
  std::string name;
  std::string description;
  std::string origin;  // file path, or "built-in:<name>"
  // One value list per config field, in kConfigFields order.
  std::vector<std::vector<int>> values;
  // The kernel families the space selects, by id ("family": [...] in its parameters, or the legacy
  // "TMA": [0, 1]); enumerated after the fields, so it varies fastest. The default family alone
  // when the space names none.
  std::vector<std::string> families{std::string(kDefaultFamily)};
  // muparser expressions over the field names; a config is kept where every one is non-zero.
  std::vector<std::string> constraints;
  Limits limits;

  long long combinations() const;  // the product of the value lists' and families' sizes
                                   // (saturating)
};

// The largest product of value lists a space may have: enumerating it takes seconds (about two
// million combinations a second), the built-in spaces are at most 36,864.
inline constexpr long long kMaxSpaceCombinations = 20'000'000;

// Names of the spaces compiled into the binary ("default", "quick", ...).
std::vector<std::string> builtin_space_names();

// Loads a space from a file path, or a built-in space by name. Throws InputError naming the
// file, field and value on anything wrong.
SearchSpace load_space(std::string_view path_or_name);
SearchSpace parse_space(const nlohmann::json& j, std::string_view origin);

struct RuleCount {
  std::string rule;
  long long violations = 0;  // configs violating this rule (a config may violate several)
  long long first = 0;       // configs for which this was the first violated rule
  std::string sample;        // canonical name of one rejected config
  std::string sample_reason;
};

struct Enumeration {
  long long total = 0;
  std::vector<WarpTileConfig> survivors;
  std::vector<RuleCount> rejections;  // rules(), then shape rules, then constraints, in order
};

// Enumerates the space; a problem, when given, also applies the shape rules. A config whose
// family's precision class the request does not admit (precision.hpp) is rejected by the rule
// kPrecisionRule, listed only for a space that selects such a family.
inline constexpr std::string_view kPrecisionRule = "precision_class";
Enumeration enumerate(const SearchSpace& space, const std::optional<Problem>& problem = {},
                      Precision precision = Precision::fp32);

// Every built-in space joined: the candidate set that covers every kernel family the tuner has.
inline constexpr std::string_view kAutoSpace = "auto";

// A union of spaces, written "default+tma": the names (files or built-ins) it joins, in order. A
// path that exists as a file is one space even with a '+' in it. The name `auto` (unless a file
// of that name exists) stands for every built-in space, in builtin_space_names() order. InputError
// for an empty part.
std::vector<std::string> split_space_union(std::string_view arg);
// The enumerations of a union's spaces (name, enumeration) as one: totals added, survivors in
// order with repeats dropped, rejections added rule by rule; each space's constraints keep its
// name ("tma:constraint[0]").
Enumeration merge_enumerations(const std::vector<std::pair<std::string, Enumeration>>& parts);

// A space argument as `--space` takes it (a file, a built-in name, a join "a+b", or auto),
// enumerated as one: its joined name ("default+tma"), where it came from, and the enumeration.
struct SpaceEnumeration {
  std::string name, origin;
  Enumeration enumeration;
};
// With `arch`, every part's limits are those of that architecture (limits_on).
SpaceEnumeration enumerate_spaces(std::string_view arg, const std::optional<Problem>& problem = {},
                                  const ArchInfo* arch = nullptr,
                                  Precision precision = Precision::fp32);

}  // namespace sgt
