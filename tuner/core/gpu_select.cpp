#include "gpu_select.hpp"

#include <algorithm>
#include <cctype>
#include <charconv>

#include <fmt/format.h>

#include "error.hpp"

namespace sgt {

namespace {

std::string lower(std::string_view s) {
  std::string out(s);
  std::transform(out.begin(), out.end(), out.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return out;
}

}  // namespace

std::string GpuSelector::text() const {
  switch (kind) {
    case Kind::automatic:
      return "auto";
    case Kind::index:
      return std::to_string(index);
    case Kind::name:
      return name;
  }
  return {};
}

GpuSelector parse_gpu_selector(std::string_view text) {
  GpuSelector s;
  if (text.empty()) throw InputError("empty --gpu: expected 'auto', a device index or a GPU name");
  if (lower(text) == "auto") return s;
  const bool digits =
      std::all_of(text.begin(), text.end(), [](unsigned char c) { return std::isdigit(c); });
  if (digits) {
    int v = 0;
    const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
    if (ec != std::errc() || end != text.data() + text.size())
      throw InputError(fmt::format("bad --gpu '{}': not a device index", text));
    s.kind = GpuSelector::Kind::index;
    s.index = v;
    return s;
  }
  if (text.front() == '-' && text.size() > 1 &&
      std::all_of(text.begin() + 1, text.end(), [](unsigned char c) { return std::isdigit(c); }))
    throw InputError(fmt::format("bad --gpu '{}': a device index is 0 or more", text));
  s.kind = GpuSelector::Kind::name;
  s.name = std::string(text);
  return s;
}

std::vector<size_t> match_gpu_names(const std::vector<std::string>& names,
                                    const std::vector<std::string>& keys, std::string_view wanted) {
  const std::string w = lower(wanted);
  std::vector<size_t> exact, partial;
  for (size_t i = 0; i < names.size(); ++i) {
    const std::string n = lower(names[i]);
    if (n == w || (i < keys.size() && keys[i] == wanted)) {
      exact.push_back(i);
    } else if (!w.empty() && n.find(w) != std::string::npos) {
      partial.push_back(i);
    }
  }
  return exact.empty() ? partial : exact;
}

}  // namespace sgt
