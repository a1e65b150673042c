// What the tf32x3_wg family's tests share: the family and the probe's config.
#pragma once

#include <stdexcept>

#include "config.hpp"
#include "family.hpp"

namespace sgt::tw3_test {

inline const KernelFamily& tw3() {
  const auto* f = find_family("tf32x3_wg");
  if (!f) throw std::runtime_error("family tf32x3_wg is not registered");
  return *f;
}

// The config of the probe's measurement (docs/experiments/2026-12-04-tf32x3-wgmma.md).
inline WarpTileConfig probe_config() {
  const auto c = from_name("tw3_128x128x32_s3_g8");
  if (!c) throw std::runtime_error("tw3_128x128x32_s3_g8 is not a name");
  return *c;
}

}  // namespace sgt::tw3_test
