// The kernel sources compiled into the binary: what NVRTC compiles, and the hash that ties every
// compiled binary and stored trial to the exact source it came from.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace sgt {

struct KernelSourceFile {
  std::string_view name;  // as included, e.g. "warptile_geometry.h"
  std::string_view text;
};

constexpr std::string_view kKernelTemplateName = "sgemm_warptile";
constexpr std::string_view kKernelMainFile = "sgemm_warptile.cuh";

// The main kernel file first, then the headers it includes.
std::vector<KernelSourceFile> kernel_sources();
// SHA-256 over every kernel source file (names and contents); changes with any edit.
const std::string& kernel_source_hash();

}  // namespace sgt
