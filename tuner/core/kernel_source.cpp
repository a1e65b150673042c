// Access to the embedded kernel sources and their hashes.
#include "kernel_source.hpp"

#include "config.hpp"
#include "sha256.hpp"

namespace sgt_embedded_kernels {
std::string_view get(std::string_view name);
}  // namespace sgt_embedded_kernels

namespace sgt {

namespace {

KernelSourceFile file(std::string_view name) {
  return {name, sgt_embedded_kernels::get(name)};
}

std::string hash_of(const std::vector<KernelSourceFile>& files) {
  std::string all;
  for (const auto& f : files) {
    all += f.name;
    all += '\0';
    all += f.text;
    all += '\0';
  }
  return sha256_hex(all);
}

}  // namespace

KernelFamily kernel_family(const WarpTileConfig& c) {
  return c.TMA == 1 ? KernelFamily::ws_tma : KernelFamily::warptile;
}

std::vector<KernelSourceFile> kernel_sources() {
  return {file(kKernelMainFile), file("warptile_geometry.h"), file("sgemm_ws_tma.cuh"),
          file("tma_geometry.h")};
}

std::vector<KernelSourceFile> kernel_sources(KernelFamily f) {
  if (f == KernelFamily::ws_tma)
    return {file("sgemm_ws_tma.cuh"), file(kKernelMainFile), file("warptile_geometry.h"),
            file("tma_geometry.h")};
  return {file(kKernelMainFile), file("warptile_geometry.h")};
}

const std::string& kernel_source_hash(KernelFamily f) {
  static const std::string warptile = hash_of(kernel_sources(KernelFamily::warptile));
  static const std::string ws_tma = hash_of(kernel_sources(KernelFamily::ws_tma));
  return f == KernelFamily::ws_tma ? ws_tma : warptile;
}

const std::string& kernel_source_hash(const WarpTileConfig& c) {
  return kernel_source_hash(kernel_family(c));
}

std::vector<std::string> kernel_source_hashes() {
  return {kernel_source_hash(KernelFamily::warptile), kernel_source_hash(KernelFamily::ws_tma)};
}

}  // namespace sgt
