// The --json documents commands print on stdout: each an object with "format_version", described
// by docs/schemas/<command>.schema.json.
#pragma once

#include <cstdio>

#include <nlohmann/json.hpp>

namespace sgt::cli {

// The version of every --json document on stdout. Bump it when a field is renamed, removed or
// changes meaning (adding one does not need it), and update docs/schemas in the same change.
inline constexpr int kJsonFormatVersion = 2;

// Prints `doc` (an object) with its "format_version" as one indented document. Invalid UTF-8
// (GPU names and paths are raw bytes) is replaced, not thrown.
inline void print_json(nlohmann::json doc) {
  doc["format_version"] = kJsonFormatVersion;
  const auto text = doc.dump(2, ' ', false, nlohmann::json::error_handler_t::replace);
  std::puts(text.c_str());
}

}  // namespace sgt::cli
