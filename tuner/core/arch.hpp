// What each GPU architecture holds, per SM and per block: the limits every rule reads, so a space
// is pruned for the GPU it will run on (an RTX 4090 keeps 1,536 threads per SM, an H200 2,048).
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "config.hpp"

namespace sgt {

struct ArchInfo {
  int major = 0, minor = 0;
  std::string_view gpus;  // examples, for messages
  int threads_per_sm = 0, blocks_per_sm = 0;
  int shared_per_sm = 0;         // bytes
  int shared_per_block = 0;      // bytes, the opt-in maximum of one block
  int registers_per_sm = 65536;  // 32-bit registers
  int registers_per_thread = 255;
  bool tma_hardware = false;  // the tensor memory accelerator exists (sm_90 and later)
  // The TMA kernel family is implemented here: its body is compiled for sm_90a only (setmaxnreg,
  // wgmma-era barriers); on any other target its image would only trap.
  bool tma_kernel = false;

  std::string name() const;  // "sm_86"
};

// Compute capabilities 7.0 to 12.x, oldest first.
const std::vector<ArchInfo>& arch_table();

// "sm_86", "sm_90a", "compute_90" or "8.6". InputError naming the known ones for anything else.
const ArchInfo& parse_arch(std::string_view text);
// The entry of a compute capability; nullptr when the table does not know it.
const ArchInfo* find_arch(int major, int minor);

// `space` (a search space's limits: its budgets and any hardware values it states) within what
// `arch` holds: every hardware limit is the smaller of the two, the TMA flag the architecture's.
Limits limits_on(const ArchInfo& arch, Limits space = {});
// The architecture's limits alone, no budget (the accumulator budget is a space's choice): what a
// config must fit to run there at all.
Limits hardware_limits(const ArchInfo& arch);

}  // namespace sgt
