// Fixed fields and rule lookup shared by the families (fixed_fields.hpp).
#include "families/fixed_fields.hpp"

#include <stdexcept>

#include <fmt/format.h>

namespace sgt {

std::string_view field_name(int WarpTileConfig::*member) {
  for (const auto& f : kConfigFields)
    if (f.member == member) return f.name;
  return "?";
}

std::optional<std::string> fixed_field_refusal(const FixedFields& fixed, std::string_view family,
                                               std::string_view field, int v) {
  for (const auto& [member, value] : fixed) {
    if (field == field_name(member) && v != value)
      return fmt::format("rule {}_fixed_fields: {} is {} in family {}", family, field, value,
                         family);
  }
  return std::nullopt;
}

std::string fixed_field_mismatches(const FixedFields& fixed, const WarpTileConfig& c) {
  std::string out;
  for (const auto& [member, value] : fixed) {
    if (c.*member != value)
      out += fmt::format("{}{} = {} (not {})", out.empty() ? "" : ", ", field_name(member),
                         c.*member, value);
  }
  return out;
}

const RuleInfo& find_rule(const std::vector<RuleInfo>& rules, std::string_view family,
                          std::string_view name) {
  for (const auto& r : rules)
    if (r.name == name) return r;
  throw std::logic_error(fmt::format("not a {} rule: {}", family, name));
}

}  // namespace sgt
