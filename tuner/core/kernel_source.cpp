// Access to the embedded kernel sources and their hashes.
#include "kernel_source.hpp"

#include <algorithm>

#include "config.hpp"
#include "family.hpp"

namespace sgt_embedded_kernels {
std::string_view get(std::string_view name);
}  // namespace sgt_embedded_kernels

namespace sgt {

KernelSourceFile embedded_kernel_file(std::string_view name) {
  return {name, sgt_embedded_kernels::get(name)};
}

std::vector<KernelSourceFile> kernel_sources() {
  std::vector<KernelSourceFile> out;
  for (const auto* f : families()) {
    for (const auto& s : f->sources()) {
      const bool seen = std::any_of(out.begin(), out.end(),
                                    [&](const KernelSourceFile& k) { return k.name == s.name; });
      if (!seen) out.push_back(s);
    }
  }
  return out;
}

const std::string& kernel_source_hash() {
  return families().front()->source_hash();
}

const std::string& kernel_source_hash(const WarpTileConfig& c) {
  return family_of(c).source_hash();
}

std::vector<std::string> kernel_source_hashes() {
  std::vector<std::string> out;
  for (const auto* f : families()) out.push_back(f->source_hash());
  return out;
}

}  // namespace sgt
