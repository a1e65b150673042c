// What families whose kernels read only some of the config fields share: the fields they fix
// (KernelFamily::implied()), the rule <id>_fixed_fields that holds them to their one value, and
// the lookup of a family's own rules by name.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "config.hpp"

namespace sgt {

// The fields a family's kernel does not read, or fixes, and the one value each holds.
using FixedFields = std::vector<std::pair<int WarpTileConfig::*, int>>;

// A config field's name ("?" for a member that is no field).
std::string_view field_name(int WarpTileConfig::*member);

// Rule <family>_fixed_fields for one value of a space's list: why `v` can never be valid for
// `field` in the family, or nothing.
std::optional<std::string> fixed_field_refusal(const FixedFields& fixed, std::string_view family,
                                               std::string_view field, int v);

// The fixed fields c holds another value in, "NAME = v (not w), ...", or "" when none.
std::string fixed_field_mismatches(const FixedFields& fixed, const WarpTileConfig& c);

// The rule `name` of a family's own rules; a logic error (a name mistyped in the family's source)
// otherwise.
const RuleInfo& find_rule(const std::vector<RuleInfo>& rules, std::string_view family,
                          std::string_view name);

}  // namespace sgt
