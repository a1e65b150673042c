#include "gpu_select.hpp"

#include <algorithm>
#include <cctype>
#include <charconv>

#include <fmt/format.h>
#include <fmt/ranges.h>

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
  if (lower(text) == "all" || text.find(',') != std::string_view::npos)
    throw InputError(
        fmt::format("--gpu '{}' names several GPUs; this command runs on one (only `tune` and "
                    "`bench` take 'all' or a "
                    "list of device indices)",
                    text));
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

std::string GpuSet::text() const {
  switch (kind) {
    case Kind::one:
      return one.text();
    case Kind::all:
      return "all";
    case Kind::list:
      return fmt::format("{}", fmt::join(indices, ","));
  }
  return {};
}

GpuSet parse_gpu_set(std::string_view text) {
  GpuSet s;
  if (lower(text) == "all") {
    s.kind = GpuSet::Kind::all;
    return s;
  }
  if (text.find(',') == std::string_view::npos) {
    s.one = parse_gpu_selector(text);
    return s;
  }
  s.kind = GpuSet::Kind::list;
  size_t start = 0;
  while (start <= text.size()) {
    const size_t end = std::min(text.find(',', start), text.size());
    const std::string_view item = text.substr(start, end - start);
    int v = -1;
    const auto [p, ec] = std::from_chars(item.data(), item.data() + item.size(), v);
    if (item.empty() || ec != std::errc() || p != item.data() + item.size() || v < 0)
      throw InputError(fmt::format(
          "bad --gpu '{}': '{}' is not a device index (a list holds indices 0, 1, ...: '0,2,3')",
          text, item));
    if (std::find(s.indices.begin(), s.indices.end(), v) != s.indices.end())
      throw InputError(fmt::format("bad --gpu '{}': device {} is listed twice", text, v));
    s.indices.push_back(v);
    start = end + 1;
  }
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
