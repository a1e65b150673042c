// The kernel sources compiled into the binary: what NVRTC compiles, and the hashes that tie every
// compiled binary and stored trial to the exact source it came from.
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

// The two kernels a config can be built as: the warp-tiling template (TMA = 0) and its TMA-fed,
// warp-specialised instance (TMA = 1, sgemm_ws_tma.cuh). Both serve the one config model and
// kernel template name; each has its own source hash, so that editing one leaves the trials of
// the other current.
enum class KernelFamily { warptile, ws_tma };
KernelFamily kernel_family(const WarpTileConfig& c);

// Every embedded kernel file, the warp-tiling template first: what NVRTC is given.
std::vector<KernelSourceFile> kernel_sources();
// The files one family's kernel is built from, its main file first.
std::vector<KernelSourceFile> kernel_sources(KernelFamily f);
// SHA-256 over a family's files (names and contents); changes with any edit of them. Without an
// argument, the warp-tiling template's.
const std::string& kernel_source_hash(KernelFamily f = KernelFamily::warptile);
const std::string& kernel_source_hash(const WarpTileConfig& c);
// Every family's hash: what a trial must have been compiled from to be current.
std::vector<std::string> kernel_source_hashes();

}  // namespace sgt
