// Whole-number options that cannot wrap: CLI11 reads them with strtoull/strtoll, which take "-1"
// for an unsigned option (wrapping it to 2^64 - 1) and clamp a number too long for 64 bits.
#include <charconv>
#include <cstdint>
#include <string>

#include "commands.hpp"

namespace sgt::cli {

namespace {

// The option's type as CLI11 names it (before the validators' descriptions).
std::string base_type(const CLI::Option& opt) {
  const auto full = opt.get_type_name();
  return full.substr(0, full.find(':'));
}

// Empty when `text` is a decimal whole number that fits 64 bits (signed when `is_signed`), else
// why not.
std::string whole_number_error(const std::string& text, bool is_signed) {
  const char* first = text.data();
  const char* last = first + text.size();
  if (first != last && *first == '-' && !is_signed) {
    return "'" + text + "' is negative; this option takes a whole number, 0 or more";
  }
  if (first != last && *first == '+') ++first;
  bool ok = false;
  std::from_chars_result r{};
  if (is_signed) {
    std::int64_t v = 0;
    r = std::from_chars(first, last, v);
  } else {
    std::uint64_t v = 0;
    r = std::from_chars(first, last, v);
  }
  ok = r.ec == std::errc() && r.ptr == last && first != last;
  if (r.ec == std::errc::result_out_of_range) {
    return "'" + text + "' is too large for a whole number of 64 bits";
  }
  return ok ? std::string() : "'" + text + "' is not a whole number (decimal digits only)";
}

void guard(CLI::App& app) {
  for (auto* opt : app.get_options()) {
    const auto type = base_type(*opt);
    if (type != "UINT" && type != "INT") continue;
    const bool is_signed = type == "INT";
    opt->check(CLI::Validator(
        [is_signed](std::string& text) { return whole_number_error(text, is_signed); }, "",
        "whole_number"));
  }
  for (auto* sub : app.get_subcommands([](CLI::App*) { return true; })) guard(*sub);
}

}  // namespace

void refuse_wrapping_numbers(CLI::App& app) {
  guard(app);
}

}  // namespace sgt::cli
