// Loading, validating and enumerating search spaces.
#include "space.hpp"

#include <algorithm>
#include <map>
#include <filesystem>
#include <limits>
#include <memory>
#include <set>

#include <fmt/format.h>
#include <muParser.h>
#include <nlohmann/json.hpp>

#include "error.hpp"
#include "family.hpp"
#include "file_util.hpp"

namespace sgt_embedded_spaces {
std::string_view get(std::string_view name);
std::size_t count();
std::string_view name_at(std::size_t i);
}  // namespace sgt_embedded_spaces

namespace sgt {

namespace {

struct LimitField {
  std::string_view key;
  int Limits::*member;
};
constexpr LimitField kLimitFields[] = {
    {"max_threads_per_block", &Limits::max_threads_per_block},
    {"max_static_shared_bytes", &Limits::max_static_shared_bytes},
    {"max_accumulators", &Limits::max_accumulators},
    {"registers_per_sm", &Limits::registers_per_sm},
    {"max_registers_per_thread", &Limits::max_registers_per_thread},
    {"max_threads_per_sm", &Limits::max_threads_per_sm},
    {"max_blocks_per_sm", &Limits::max_blocks_per_sm},
};

// A value that breaks a rule whatever the other parameters are is a mistake in the space file,
// not something to enumerate and count: one that every family the space selects refuses (the first
// one's reason).
std::optional<std::string> single_value_rule(const std::vector<const KernelFamily*>& fams,
                                             std::string_view field, int v) {
  std::optional<std::string> why;
  for (const auto* f : fams) {
    auto reason = f->impossible_value(field, v);
    if (!reason) return std::nullopt;
    if (!why) why = std::move(reason);
  }
  return why;
}

// The name a constraint reads a config's family by: the legacy field TMA (the family's
// legacy_tma(), -1 for a family without one), so constraints of earlier releases keep their sense.
constexpr std::string_view kLegacyTmaVar = "TMA";

// One muparser instance bound to a config's fields.
class ConstraintSet {
 public:
  ConstraintSet(const std::vector<std::string>& exprs, std::string_view origin) {
    for (const auto& e : exprs) {
      auto p = std::make_unique<mu::Parser>();
      for (size_t i = 0; i < kConfigFields.size(); ++i) {
        p->DefineVar(std::string(kConfigFields[i].name), &vars_[i]);
      }
      p->DefineVar(std::string(kLegacyTmaVar), &vars_[kConfigFields.size()]);
      try {
        p->SetExpr(e);
        p->Eval();  // parse errors surface at the first evaluation
      } catch (const mu::Parser::exception_type& ex) {
        throw InputError(fmt::format("{}: bad constraint '{}': {}", origin, e, ex.GetMsg()));
      }
      parsers_.push_back(std::move(p));
    }
  }
  // Indices of the constraints the config breaks.
  std::vector<size_t> broken(const WarpTileConfig& c) {
    for (size_t i = 0; i < kConfigFields.size(); ++i) vars_[i] = c.*kConfigFields[i].member;
    vars_[kConfigFields.size()] = family_of(c).legacy_tma().value_or(-1);
    std::vector<size_t> out;
    for (size_t i = 0; i < parsers_.size(); ++i) {
      if (parsers_[i]->Eval() == 0.0) out.push_back(i);
    }
    return out;
  }

 private:
  std::array<double, kConfigFields.size() + 1> vars_{};  // the fields, then TMA
  std::vector<std::unique_ptr<mu::Parser>> parsers_;
};

}  // namespace

long long SearchSpace::combinations() const {
  // Saturates instead of overflowing: a product past kMaxSpaceCombinations is refused anyway.
  long long n = 1;
  std::vector<size_t> sizes;
  for (const auto& v : values) sizes.push_back(v.size());
  sizes.push_back(families.size());
  for (const auto size : sizes) {
    const auto k = static_cast<long long>(size);
    if (k != 0 && n > std::numeric_limits<long long>::max() / k) {
      return std::numeric_limits<long long>::max();
    }
    n *= k;
  }
  return n;
}

std::vector<std::string> builtin_space_names() {
  std::vector<std::string> out;
  for (size_t i = 0; i < sgt_embedded_spaces::count(); ++i) {
    out.emplace_back(sgt_embedded_spaces::name_at(i));
  }
  return out;
}

namespace {

constexpr std::string_view kFamilyParameter = "family";

// The families a space's parameters select: "family", a list of ids, or the legacy "TMA", a list
// of the values that named the two built-in families (0 warptile, 1 ws_tma); the default family
// when neither is given.
template <class Err>
std::vector<const KernelFamily*> parse_families(const nlohmann::json& params, const Err& err) {
  const auto by_id = params.find(std::string(kFamilyParameter));
  const auto by_tma = params.find(std::string(kLegacyTmaVar));
  std::vector<const KernelFamily*> out;
  auto add = [&](const KernelFamily* f, const std::string& shown) {
    if (std::find(out.begin(), out.end(), f) != out.end())
      throw err(fmt::format("parameter '{}': value {} is listed twice",
                            by_id != params.end() ? kFamilyParameter : kLegacyTmaVar, shown));
    out.push_back(f);
  };
  if (by_id != params.end() && by_tma != params.end())
    throw err("parameters 'family' and 'TMA' both select kernel families: give 'family' alone");
  if (by_id != params.end()) {
    if (!by_id->is_array() || by_id->empty())
      throw err(fmt::format("parameter 'family' must be a non-empty list of kernel family ids ({})",
                            family_id_list()));
    for (const auto& v : *by_id) {
      const auto* f = v.is_string() ? find_family(v.get<std::string>()) : nullptr;
      if (!f)
        throw err(fmt::format("parameter 'family': {} is not a registered kernel family ({})",
                              v.dump(), family_id_list()));
      add(f, v.dump());
    }
  } else if (by_tma != params.end()) {
    if (!by_tma->is_array() || by_tma->empty())
      throw err("parameter 'TMA' must be a list of integers");
    for (const auto& v : *by_tma) {
      if (!v.is_number_integer())
        throw err(fmt::format("parameter 'TMA': value {} is not an integer", v.dump()));
      const auto x = v.get<long long>();
      const auto* f =
          x >= 0 && x <= kMaxConfigValue ? family_of_legacy_tma(static_cast<int>(x)) : nullptr;
      if (!f)
        throw err(
            fmt::format("parameter 'TMA': value {} can never be valid (rule tma_flag: TMA, "
                        "the family's legacy name, must be 0 or 1; or list 'family' ids)",
                        x));
      add(f, v.dump());
    }
  } else {
    const auto* f = find_family(kDefaultFamily);
    if (!f) throw err("the default kernel family is not registered");
    out.push_back(f);
  }
  return out;
}

// An error in a space, prefixed with where the space came from.
struct SpaceError {
  std::string_view origin;
  InputError operator()(const std::string& what) const {
    return InputError(fmt::format("{}: {}", origin, what));
  }
};

// The value list of every config field: the space's, checked, or the field's default.
void parse_value_lists(const nlohmann::json& params, const std::vector<const KernelFamily*>& fams,
                       SearchSpace& s, const SpaceError& err) {
  for (const auto& f : kConfigFields) {
    const std::string key(f.name);
    auto it = params.find(key);
    if (it == params.end()) {
      // A knob the space does not mention stays at its default (the seed kernel's behaviour).
      if (f.default_value != kRequired) {
        s.values.push_back({f.default_value});
        continue;
      }
      throw err(fmt::format("parameter '{}' is missing", key));
    }
    if (!it->is_array()) throw err(fmt::format("parameter '{}' must be a list of integers", key));
    if (it->empty()) throw err(fmt::format("parameter '{}' has an empty value list", key));
    std::vector<int> vals;
    for (const auto& v : *it) {
      if (!v.is_number_integer()) {
        throw err(fmt::format("parameter '{}': value {} is not an integer", key, v.dump()));
      }
      const auto x = v.get<long long>();
      if (x < f.min_value || x > kMaxConfigValue) {
        throw err(fmt::format("parameter '{}': value {} is out of range ({}..{})", key, x,
                              f.min_value, kMaxConfigValue));
      }
      if (auto why = single_value_rule(fams, key, static_cast<int>(x))) {
        throw err(fmt::format("parameter '{}': value {} can never be valid ({})", key, x, *why));
      }
      if (std::find(vals.begin(), vals.end(), x) != vals.end()) {
        throw err(fmt::format("parameter '{}': value {} is listed twice", key, x));
      }
      vals.push_back(static_cast<int>(x));
    }
    s.values.push_back(std::move(vals));
  }
}

// The space's own limits (shared memory, accumulator budget, ...), each a positive integer.
void parse_limits(const nlohmann::json& j, SearchSpace& s, const SpaceError& err) {
  if (auto it = j.find("limits"); it != j.end()) {
    if (!it->is_object()) throw err("'limits' must be an object");
    for (const auto& [k, v] : it->items()) {
      auto f = std::find_if(std::begin(kLimitFields), std::end(kLimitFields),
                            [&](const LimitField& lf) { return lf.key == k; });
      if (f == std::end(kLimitFields)) throw err(fmt::format("unknown limit '{}'", k));
      if (!v.is_number_integer() || v.get<long long>() < 1 || v.get<long long>() > (1 << 30)) {
        throw err(fmt::format("limit '{}' must be a positive integer, got {}", k, v.dump()));
      }
      s.limits.*(f->member) = v.get<int>();
    }
  }
}

// Enumeration walks the whole product (constraints are judged per combination), so a space far
// larger than any tune could search would run for hours: refused here, with the product named.
void refuse_oversized(const SearchSpace& s, const SpaceError& err) {
  if (s.combinations() > kMaxSpaceCombinations) {
    std::string factors;
    for (size_t i = 0; i < s.values.size(); ++i) {
      if (s.values[i].size() < 2) continue;
      factors += fmt::format("{}{} {}", factors.empty() ? "" : " x ", kConfigFields[i].name,
                             s.values[i].size());
    }
    if (s.families.size() > 1)
      factors += fmt::format("{}family {}", factors.empty() ? "" : " x ", s.families.size());
    throw err(fmt::format(
        "the value lists span {} combinations ({}), more than the {} one space may enumerate; "
        "shorten the lists, or split the space into several joined with '+'",
        s.combinations() == std::numeric_limits<long long>::max()
            ? std::string("over 9.2e18")
            : std::to_string(s.combinations()),
        factors, kMaxSpaceCombinations));
  }
}

}  // namespace

SearchSpace parse_space(const nlohmann::json& j, std::string_view origin) {
  const SpaceError err{origin};
  if (!j.is_object()) throw err("a search space must be a JSON object");
  static const std::set<std::string> kKeys = {"name", "description", "parameters", "constraints",
                                              "limits"};
  for (const auto& [k, v] : j.items()) {
    if (!kKeys.contains(k)) {
      throw err(
          fmt::format("unknown key '{}' (expected name, description, parameters, "
                      "constraints, limits)",
                      k));
    }
  }
  SearchSpace s;
  s.origin = std::string(origin);
  if (auto it = j.find("name"); it != j.end()) {
    if (!it->is_string()) throw err("'name' must be a string");
    s.name = it->get<std::string>();
  }
  if (auto it = j.find("description"); it != j.end()) {
    if (!it->is_string()) throw err("'description' must be a string");
    s.description = it->get<std::string>();
  }

  auto params = j.find("parameters");
  if (params == j.end() || !params->is_object()) {
    throw err("'parameters' must be an object of value lists");
  }
  for (const auto& [k, v] : params->items()) {
    if (k != kFamilyParameter && k != kLegacyTmaVar &&
        std::none_of(kConfigFields.begin(), kConfigFields.end(),
                     [&](const FieldInfo& f) { return f.name == k; })) {
      throw err(fmt::format("unknown parameter '{}'", k));
    }
  }
  const auto fams = parse_families(*params, err);
  s.families.clear();
  for (const auto* f : fams) s.families.emplace_back(f->id());
  parse_value_lists(*params, fams, s, err);

  if (auto it = j.find("constraints"); it != j.end()) {
    if (!it->is_array()) throw err("'constraints' must be a list of expression strings");
    for (const auto& c : *it) {
      if (!c.is_string()) throw err(fmt::format("constraint {} is not a string", c.dump()));
      s.constraints.push_back(c.get<std::string>());
    }
    ConstraintSet check_parse(s.constraints, origin);  // throws on a bad expression
  }

  parse_limits(j, s, err);
  refuse_oversized(s, err);
  return s;
}

SearchSpace load_space(std::string_view path_or_name) {
  const std::string arg(path_or_name);
  std::string text, origin;
  std::error_code ec;
  if (std::filesystem::is_directory(arg, ec)) {
    throw InputError(fmt::format("search space '{}' is a directory, not a space file", arg));
  }
  if (auto file = read_file(arg)) {
    text = std::move(*file);
    origin = arg;
  } else if (auto builtin = sgt_embedded_spaces::get(arg); !builtin.empty()) {
    text = std::string(builtin);
    origin = "built-in:" + arg;
  } else {
    std::string names;
    for (const auto& n : builtin_space_names()) names += (names.empty() ? "" : ", ") + n;
    throw InputError(
        fmt::format("cannot read search space '{}': no such file, and no built-in "
                    "space of that name (built-ins: {})",
                    arg, names));
  }
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(text);
  } catch (const nlohmann::json::parse_error& e) {
    throw InputError(fmt::format("{}: invalid JSON: {}", origin, e.what()));
  }
  return parse_space(j, origin);
}

Enumeration enumerate(const SearchSpace& space, const std::optional<Problem>& problem,
                      Precision precision) {
  Enumeration out;
  std::map<std::string, size_t> slot;
  // Fixed order in the report: every rule appears, even at zero.
  auto add_slot = [&](const std::string& rule) {
    slot.try_emplace(rule, out.rejections.size());
    out.rejections.push_back({rule, 0, 0, "", ""});
  };
  for (const auto& r : rules()) add_slot(std::string(r.name));
  if (problem) {
    add_slot("shape_layout");
    for (const auto* f : families()) {
      for (const auto r : f->shape_rules())
        if (!slot.contains(std::string(r))) add_slot(std::string(r));
    }
  }
  for (size_t i = 0; i < space.constraints.size(); ++i) {
    add_slot(fmt::format("constraint[{}]", i));
  }
  // Families of the space the request's precision class does not admit: their configs are
  // rejected before any rule is checked.
  std::set<std::string> refused;
  for (const auto& id : space.families) {
    const auto* f = find_family(id);
    if (f && !admits(precision, f->precision())) refused.insert(id);
  }
  if (!refused.empty()) add_slot(std::string(kPrecisionRule));
  auto note = [&](const RuleViolation& v, const WarpTileConfig& c, bool first) {
    auto& rc = out.rejections[slot.at(v.rule)];
    if (rc.sample.empty()) {
      rc.sample = to_name(c);
      rc.sample_reason = v.reason;
    }
    ++rc.violations;
    if (first) ++rc.first;
  };

  ConstraintSet constraints(space.constraints, space.origin);
  const size_t nf = kConfigFields.size();
  // The fields' value lists, then the families (where the legacy field TMA was, last).
  std::vector<size_t> sizes;
  for (const auto& v : space.values) sizes.push_back(v.size());
  sizes.push_back(space.families.size());
  std::vector<size_t> idx(sizes.size(), 0);
  out.total = space.combinations();
  for (long long n = 0; n < out.total; ++n) {
    WarpTileConfig c;
    for (size_t f = 0; f < nf; ++f) c.*kConfigFields[f].member = space.values[f][idx[f]];
    c.family = space.families[idx[nf]];
    // Advance the odometer: the last dimension varies fastest.
    for (size_t f = sizes.size(); f-- > 0;) {
      if (++idx[f] < sizes[f]) break;
      idx[f] = 0;
    }

    if (refused.contains(c.family)) {
      note({std::string(kPrecisionRule),
            fmt::format("family {} is {}: a {} request does not admit it (--precision {} does)",
                        c.family, to_string(family_of(c).precision()), to_string(precision),
                        to_string(Precision::fp32_accurate))},
           c, true);
      continue;
    }
    auto violations = check(c, space.limits);
    if (problem) {
      auto sv = check_shape(c, *problem, space.limits);
      violations.insert(violations.end(), sv.begin(), sv.end());
    }
    for (size_t cf : constraints.broken(c)) {
      violations.push_back({fmt::format("constraint[{}]", cf),
                            fmt::format("constraint '{}' is false", space.constraints[cf])});
    }
    for (size_t v = 0; v < violations.size(); ++v) note(violations[v], c, v == 0);
    if (violations.empty()) out.survivors.push_back(c);
  }
  return out;
}

std::vector<std::string> split_space_union(std::string_view arg) {
  // A file of that very name is one space, '+' or not.
  if (std::filesystem::exists(std::string(arg))) return {std::string(arg)};
  if (arg.find('+') == std::string_view::npos) {
    if (arg == kAutoSpace) return builtin_space_names();
    return {std::string(arg)};
  }
  std::vector<std::string> parts;
  size_t start = 0;
  while (true) {
    const size_t plus = arg.find('+', start);
    const auto part =
        arg.substr(start, plus == std::string_view::npos ? arg.size() - start : plus - start);
    if (part.empty())
      throw InputError(
          fmt::format("space '{}': an empty name around '+' (expected e.g. "
                      "default+tma)",
                      arg));
    if (part == kAutoSpace && !std::filesystem::exists(std::string(part))) {
      for (auto& n : builtin_space_names()) parts.push_back(std::move(n));
    } else {
      parts.emplace_back(part);
    }
    if (plus == std::string_view::npos) break;
    start = plus + 1;
  }
  return parts;
}

Enumeration merge_enumerations(const std::vector<std::pair<std::string, Enumeration>>& parts) {
  Enumeration out;
  std::map<std::string, size_t> slot;
  std::set<std::string> seen;
  for (const auto& [name, e] : parts) {
    out.total += e.total;
    for (const auto& c : e.survivors) {
      if (seen.insert(to_name(c)).second) out.survivors.push_back(c);
    }
    for (const auto& r : e.rejections) {
      // Constraints belong to their space; rules are the same everywhere.
      const std::string rule = r.rule.starts_with("constraint[") ? name + ":" + r.rule : r.rule;
      auto [it, fresh] = slot.try_emplace(rule, out.rejections.size());
      if (fresh) out.rejections.push_back({rule, 0, 0, "", ""});
      auto& rc = out.rejections[it->second];
      rc.violations += r.violations;
      rc.first += r.first;
      if (rc.sample.empty()) {
        rc.sample = r.sample;
        rc.sample_reason = r.sample_reason;
      }
    }
  }
  return out;
}

SpaceEnumeration enumerate_spaces(std::string_view arg, const std::optional<Problem>& problem,
                                  const ArchInfo* arch, Precision precision) {
  const auto names = split_space_union(arg);
  std::vector<std::pair<std::string, Enumeration>> parts;
  SpaceEnumeration out;
  for (const auto& part : names) {
    auto space = load_space(part);
    if (arch) space.limits = limits_on(*arch, space.limits);
    parts.emplace_back(space.name, enumerate(space, problem, precision));
    out.name += (out.name.empty() ? "" : "+") + space.name;
    out.origin += (out.origin.empty() ? "" : "+") + space.origin;
  }
  out.enumeration = parts.size() == 1 ? std::move(parts[0].second) : merge_enumerations(parts);
  return out;
}

}  // namespace sgt
