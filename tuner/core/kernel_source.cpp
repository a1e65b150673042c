// Access to the embedded kernel sources and their hash.
#include "kernel_source.hpp"

#include "sha256.hpp"

namespace sgt_embedded_kernels {
std::string_view get(std::string_view name);
}  // namespace sgt_embedded_kernels

namespace sgt {

std::vector<KernelSourceFile> kernel_sources() {
  return {{kKernelMainFile, sgt_embedded_kernels::get(kKernelMainFile)},
          {"warptile_geometry.h", sgt_embedded_kernels::get("warptile_geometry.h")}};
}

const std::string& kernel_source_hash() {
  static const std::string hash = [] {
    std::string all;
    for (const auto& f : kernel_sources()) {
      all += f.name;
      all += '\0';
      all += f.text;
      all += '\0';
    }
    return sha256_hex(all);
  }();
  return hash;
}

}  // namespace sgt
