// Exhaustive search: every candidate the store has no trial of, in the space's order.
#include "strategy.hpp"

namespace sgt {

namespace {

class Exhaustive final : public FixedOrderStrategy {
 public:
  std::string_view name() const override { return "exhaustive"; }

 protected:
  void arrange(std::vector<size_t>&, std::uint64_t) override {}
};

}  // namespace

std::unique_ptr<SearchStrategy> make_exhaustive_strategy() {
  return std::make_unique<Exhaustive>();
}

}  // namespace sgt
