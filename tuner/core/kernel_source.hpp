// The kernel sources compiled into the binary: what NVRTC compiles, and the hashes that tie every
// compiled binary and stored trial to the exact source it came from. Which files make up which
// kernel is each family's (family.hpp).
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace sgt {

struct WarpTileConfig;

struct KernelSourceFile {
  std::string_view name;  // as included, e.g. "warptile_geometry.h"
  std::string_view text;
};

constexpr std::string_view kKernelTemplateName = "sgemm_warptile";
constexpr std::string_view kKernelMainFile = "sgemm_warptile.cuh";

// An embedded kernel file by its name as included; an empty text when none is embedded.
KernelSourceFile embedded_kernel_file(std::string_view name);

// Every registered family's files, each once, the first family's first: what NVRTC is given as
// headers.
std::vector<KernelSourceFile> kernel_sources();
// The source hash of the registry's first family (the warp-tiling template).
const std::string& kernel_source_hash();
// The source hash of the config's family.
const std::string& kernel_source_hash(const WarpTileConfig& c);
// Every family's hash, in registry order: what a trial must have been compiled from to be current.
std::vector<std::string> kernel_source_hashes();

}  // namespace sgt
