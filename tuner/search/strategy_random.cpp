// Random search without replacement: the unmeasured candidates in an order drawn from the seed.
// The baseline every other strategy is judged against.
#include <algorithm>
#include <random>

#include "strategy.hpp"

namespace sgt {

namespace {

class RandomSearch final : public FixedOrderStrategy {
 public:
  std::string_view name() const override { return "random"; }

 protected:
  void arrange(std::vector<size_t>& order, std::uint64_t seed) override {
    std::mt19937_64 rng(seed);
    std::shuffle(order.begin(), order.end(), rng);
  }
};

}  // namespace

std::unique_ptr<SearchStrategy> make_random_strategy() {
  return std::make_unique<RandomSearch>();
}

}  // namespace sgt
