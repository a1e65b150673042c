// The L2 modes' names and the size of a rotation.
#include "timing.hpp"

#include <algorithm>

namespace sgt::eval {

std::string_view to_string(L2Mode m) {
  return m == L2Mode::rotate ? "rotate" : "flush";
}

std::optional<L2Mode> parse_l2_mode(std::string_view s) {
  if (s == "flush") return L2Mode::flush;
  if (s == "rotate") return L2Mode::rotate;
  return std::nullopt;
}

int rotation_copies(long long l2_bytes, long long set_bytes) {
  if (l2_bytes <= 0 || set_bytes <= 0) return 1;
  const long long need = kRotationL2Factor * l2_bytes;
  // One copy is in use; the others must cover `need` between two uses of any one.
  const long long others = (need + set_bytes - 1) / set_bytes;
  return static_cast<int>(std::max(2LL, others + 1));
}

}  // namespace sgt::eval
