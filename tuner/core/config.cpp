// Validity rules, canonical names and JSON for WarpTileConfig.
#include "config.hpp"

#include <charconv>
#include <iterator>
#include <limits>
#include <utility>
#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "error.hpp"
#include "family.hpp"

namespace sgt {

std::vector<RuleViolation> check(const WarpTileConfig& c, const Limits& limits) {
  std::vector<RuleViolation> out;
  // Range first: the kernel's index arithmetic is 32-bit, and derive() must not overflow. Out of
  // range, no other rule can be evaluated meaningfully, so this is the only one reported.
  for (const auto& f : kConfigFields) {
    if (c.*f.member < f.min_value || c.*f.member > kMaxConfigValue) {
      out.push_back({"positive_values", fmt::format("{} = {} is not an integer in {}..{}", f.name,
                                                    c.*f.member, f.min_value, kMaxConfigValue)});
      return out;
    }
  }
  if (!find_family(c.family)) {
    out.push_back({"positive_values", fmt::format("family '{}' is not a registered kernel family "
                                                  "({})",
                                                  c.family, family_id_list())});
    return out;
  }
  family_of(c).check(c, limits, out);
  return out;
}

namespace {

// The optional name suffixes, in canonical order; each is written only when the knob differs from
// its default.
constexpr std::pair<std::string_view, int WarpTileConfig::*> kNameSuffixes[] = {
    {"_s", &WarpTileConfig::STAGES},    {"_p", &WarpTileConfig::PAD_A},
    {"_g", &WarpTileConfig::GROUP_M},   {"_k", &WarpTileConfig::SPLIT_K},
    {"_o", &WarpTileConfig::FMA_ORDER}, {"_b", &WarpTileConfig::PAD_B},
    {"_x", &WarpTileConfig::PACK},      {"_c", &WarpTileConfig::STAGE_C},
    {"_v", &WarpTileConfig::TAIL},
};

int min_of(int WarpTileConfig::*member) {
  for (const auto& f : kConfigFields) {
    if (f.member == member) return f.min_value;
  }
  return 1;
}

int default_of(int WarpTileConfig::*member) {
  for (const auto& f : kConfigFields) {
    if (f.member == member) return f.default_value;
  }
  return kRequired;
}

// Reads a decimal number in 0..kMaxConfigValue without a leading zero (except "0" itself).
std::optional<int> take_number(std::string_view& s) {
  if (s.empty() || s.front() < '0' || s.front() > '9') return std::nullopt;
  if (s.front() == '0' && s.size() > 1 && s[1] >= '0' && s[1] <= '9') return std::nullopt;
  int v = 0;
  auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || v > kMaxConfigValue) return std::nullopt;
  s.remove_prefix(static_cast<size_t>(ptr - s.data()));
  return v;
}

}  // namespace

namespace {

// The fields a family's names leave to its prefix, and their values (KernelFamily::implied()).
using Implied = std::vector<std::pair<int WarpTileConfig::*, int>>;

const std::pair<int WarpTileConfig::*, int>* find_implied(const Implied& imp,
                                                          int WarpTileConfig::*member) {
  for (const auto& p : imp)
    if (p.first == member) return &p;
  return nullptr;
}

// The name's body after the family's prefix: a fixed sequence of literal separators and decimal
// numbers in groups (BMxBNxBK, _wWMxWN, _wnWNITER, _tTMxTN, _nNUM_THREADS, _mbMIN_BLOCKS; a part
// whose separator is "x" continues the group before it), then the optional knob suffixes.
struct BodyPart {
  std::string_view lit;
  int WarpTileConfig::*member;
};
constexpr BodyPart kBody[] = {
    {"", &WarpTileConfig::BM},
    {"x", &WarpTileConfig::BN},
    {"x", &WarpTileConfig::BK},
    {"_w", &WarpTileConfig::WM},
    {"x", &WarpTileConfig::WN},
    {"_wn", &WarpTileConfig::WNITER},
    {"_t", &WarpTileConfig::TM},
    {"x", &WarpTileConfig::TN},
    {"_n", &WarpTileConfig::NUM_THREADS},
    {"_mb", &WarpTileConfig::MIN_BLOCKS},
};
constexpr size_t kBodyParts = std::size(kBody);

// Whether a family's names leave out the group that body part i belongs to: every field of the
// group is implied. A group with only some of its fields implied is written whole.
bool group_left_out(const Implied& imp, size_t i) {
  if (imp.empty()) return false;
  size_t first = i;
  while (first > 0 && kBody[first].lit == "x") --first;
  for (size_t k = first; k < kBodyParts && (k == first || kBody[k].lit == "x"); ++k)
    if (!find_implied(imp, kBody[k].member)) return false;
  return true;
}

// The name after a family's prefix, read into c (whose implied fields the caller has set).
bool parse_body(std::string_view s, const Implied& imp, WarpTileConfig& c) {
  for (size_t i = 0; i < kBodyParts; ++i) {
    if (group_left_out(imp, i)) continue;
    const auto& [lit, member] = kBody[i];
    if (!s.starts_with(lit)) return false;
    s.remove_prefix(lit.size());
    const auto v = take_number(s);
    if (!v || *v < 1) return false;
    // An implied field in a group that is written must state its one value.
    if (const auto* p = find_implied(imp, member); p && *v != p->second) return false;
    c.*member = *v;
  }
  for (const auto& [lit, member] : kNameSuffixes) {
    if (find_implied(imp, member) || !s.starts_with(lit)) continue;
    s.remove_prefix(lit.size());
    const auto v = take_number(s);
    // A suffix that restates the default is not canonical: one config, one name. Below the knob's
    // smallest value it is not a config at all (from_json refuses the same values).
    if (!v || *v == default_of(member) || *v < min_of(member)) return false;
    c.*member = *v;
  }
  return s.empty();
}

}  // namespace

std::string to_name(const WarpTileConfig& c) {
  const KernelFamily& f = family_of(c);
  const Implied imp = f.implied();
  std::string name(f.name_prefix());
  for (size_t i = 0; i < kBodyParts; ++i) {
    if (!group_left_out(imp, i)) name += fmt::format("{}{}", kBody[i].lit, c.*kBody[i].member);
  }
  for (const auto& [lit, member] : kNameSuffixes) {
    if (!find_implied(imp, member) && c.*member != default_of(member))
      name += fmt::format("{}{}", lit, c.*member);
  }
  name += f.name_suffix();
  return name;
}

std::optional<WarpTileConfig> from_name(std::string_view s) {
  // The family is the one whose prefix and suffix the name has and whose fields the rest is;
  // families may share a prefix (the TMA family's names are warp-tiling ones with _m1).
  for (const auto* f : families()) {
    if (!s.starts_with(f->name_prefix())) continue;
    auto body = s.substr(f->name_prefix().size());
    if (!body.ends_with(f->name_suffix())) continue;
    body.remove_suffix(f->name_suffix().size());
    WarpTileConfig c;
    c.family = f->id();
    const Implied imp = f->implied();
    for (const auto& [member, value] : imp) c.*member = value;
    if (parse_body(body, imp, c)) return c;
  }
  return std::nullopt;
}

namespace {

constexpr std::string_view kFamilyKey = "family";
constexpr std::string_view kLegacyTmaKey = "TMA";

}  // namespace

void to_json(nlohmann::json& j, const WarpTileConfig& c) {
  j = nlohmann::json::object();
  for (const auto& f : kConfigFields) j[std::string(f.name)] = c.*f.member;
  const auto* family = find_family(c.family);
  if (family && family->legacy_tma())
    j[std::string(kLegacyTmaKey)] = *family->legacy_tma();
  else
    j[std::string(kFamilyKey)] = c.family;
}

void from_json(const nlohmann::json& j, WarpTileConfig& c) {
  if (!j.is_object()) throw InputError("a config must be a JSON object");
  for (const auto& [key, value] : j.items()) {
    bool known = key == kFamilyKey || key == kLegacyTmaKey;
    for (const auto& f : kConfigFields) known = known || f.name == key;
    if (!known) throw InputError(fmt::format("unknown config field '{}'", key));
  }
  const KernelFamily* family = find_family(kDefaultFamily);
  if (auto it = j.find(std::string(kFamilyKey)); it != j.end()) {
    if (!it->is_string())
      throw InputError(
          fmt::format("config field 'family' must be a kernel family id, got {}", it->dump()));
    family = find_family(it->get<std::string>());
    if (!family)
      throw InputError(
          fmt::format("config field 'family' = {} is not a registered kernel family "
                      "({})",
                      it->dump(), family_id_list()));
  }
  if (auto it = j.find(std::string(kLegacyTmaKey)); it != j.end()) {
    // The field that named the family before ids did: 0 the warp-tiling family, 1 the TMA one.
    if (!it->is_number_integer())
      throw InputError(fmt::format("config field 'TMA' must be an integer, got {}", it->dump()));
    const auto v = it->get<long long>();
    const auto* named =
        v >= 0 && v <= kMaxConfigValue ? family_of_legacy_tma(static_cast<int>(v)) : nullptr;
    if (!named)
      throw InputError(
          fmt::format("config field 'TMA' = {} names no kernel family (0 is {}, 1 "
                      "is {}; or give \"family\")",
                      v, family_of_legacy_tma(0) ? family_of_legacy_tma(0)->id() : "-",
                      family_of_legacy_tma(1) ? family_of_legacy_tma(1)->id() : "-"));
    if (j.contains(std::string(kFamilyKey)) && named != family)
      throw InputError(
          fmt::format("config fields 'family' = \"{}\" and 'TMA' = {} name different "
                      "kernel families",
                      family->id(), v));
    family = named;
  }
  if (!family) throw InputError("no kernel family is registered");
  c.family = family->id();
  for (const auto& f : kConfigFields) {
    auto it = j.find(std::string(f.name));
    if (it == j.end()) {
      if (f.default_value != kRequired) {
        c.*f.member = f.default_value;
        continue;
      }
      throw InputError(fmt::format("config field '{}' is missing", f.name));
    }
    if (!it->is_number_integer()) {
      throw InputError(
          fmt::format("config field '{}' must be an integer, got {}", f.name, it->dump()));
    }
    const auto v = it->get<long long>();
    if (v < f.min_value || v > kMaxConfigValue) {
      throw InputError(fmt::format("config field '{}' = {} is out of range", f.name, v));
    }
    c.*f.member = static_cast<int>(v);
  }
}

}  // namespace sgt
