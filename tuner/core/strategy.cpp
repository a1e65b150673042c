// The registry of search strategies.
#include "strategy.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "error.hpp"

namespace sgt {

std::unique_ptr<SearchStrategy> make_exhaustive_strategy();
std::unique_ptr<SearchStrategy> make_random_strategy();

namespace {

struct Entry {
  std::string_view name;
  std::unique_ptr<SearchStrategy> (*make)();
};

constexpr Entry kStrategies[] = {
    {"exhaustive", make_exhaustive_strategy},
    {"random", make_random_strategy},
};

}  // namespace

void FixedOrderStrategy::start(const std::vector<WarpTileConfig>& candidates, const Problem&,
                               const std::vector<std::optional<Trial>>& known, std::uint64_t seed) {
  order_.clear();
  next_ = 0;
  for (size_t i = 0; i < candidates.size(); ++i) {
    if (!known[i]) order_.push_back(i);
  }
  arrange(order_, seed);
}

std::vector<size_t> FixedOrderStrategy::ask(size_t n) {
  std::vector<size_t> out;
  while (out.size() < n && next_ < order_.size()) out.push_back(order_[next_++]);
  return out;
}

std::unique_ptr<SearchStrategy> make_strategy(std::string_view name) {
  for (const auto& e : kStrategies) {
    if (e.name == name) return e.make();
  }
  throw InputError(
      fmt::format("unknown strategy '{}' (known: {})", name, fmt::join(strategy_names(), ", ")));
}

std::vector<std::string> strategy_names() {
  std::vector<std::string> out;
  for (const auto& e : kStrategies) out.emplace_back(e.name);
  return out;
}

}  // namespace sgt
