// A candidate resolved once, for one problem, into what every later stage reads: which binary it
// is (family, the config that binary stands for, its instance layout and loads, the NVRTC
// template-id) and how it is launched (ABI, block, dynamic shared memory, tile step, split-K,
// padded rows, packing). The compiler, the cache key, the replay, the trial request and the CLI
// take it from resolve(); none re-derives these facts from the config.
#pragma once

#include <string>
#include <string_view>

#include "config.hpp"
#include "family.hpp"
#include "precision.hpp"

namespace sgt {

struct Problem;

// How one candidate's tile kernel is launched for a problem (the grid follows from the problem's
// M and N and the tile step).
struct LaunchDescriptor {
  LaunchAbi abi = LaunchAbi::pointers;
  int block_threads = 0;
  int dynamic_smem_bytes = 0;              // in the instance's layout; 0: static shared memory only
  long long block_smem_bytes = 0;          // all the shared memory one block holds, static included
  int tile_m = 0, tile_n = 0, tile_k = 0;  // BM, BN, BK
  int split_k = 1;
  int pad_a = 0, pad_b = 0;  // tensor_maps: the padded operand rows the maps' boxes span
  bool packed = false;       // the operands are packed first and read as the instance's layout
  // split_maps: the split prepass (the family's pack kernel) writes op(A) and op(B)^T as
  // k-contiguous TF32 panels, a workspace of 2 (M + N) Kp floats (Kp = K rounded up to 4;
  // tf32x3_wg_workspace_floats), and the tile kernel reads four tensor maps of them: any layout,
  // leading dimension and alignment; the instance's layout is the panels' (NT).
  bool split_panels = false;
  // The wave-aware tail (TAIL 1): the launch plan's second launch, of the tiles past the last full
  // wave split over K (split_maps: plan_split_call's split entry; pointers and tensor_maps:
  // plan_call's CallTail), found in the block order of group_m (GROUP_M).
  bool tail = false;
  int group_m = 1;
};

struct KernelInstance {
  const KernelFamily* family = nullptr;
  WarpTileConfig config;  // the candidate
  // The config its binary stands for: SPLIT_K is a launch parameter, so every split of a config
  // shares one binary (SPLIT_K 1 here), except where the family's split configs run an entry of
  // their own (KernelFamily::binary_split_k).
  WarpTileConfig binary_config;
  std::string layout = "NN";    // the instance's operand layout (TN for a packed config)
  bool vec = true;              // float4 main-loop loads
  std::string name_expression;  // the template-id NVRTC instantiates and lowers
  Precision precision = Precision::fp32;
  LaunchDescriptor launch;
  bool trans_a() const { return layout[0] == 'T'; }
  bool trans_b() const { return layout[1] == 'T'; }
};

// The instance `c` runs as for a problem in `layout` whose operands allow float4 loads or not
// (`vec`). Throws InputError for a layout other than NN, NT, TN, TT.
KernelInstance resolve(const WarpTileConfig& c, std::string_view layout, bool vec);
// The same for a problem (its layout, and kernel_vec_loads()).
KernelInstance resolve(const WarpTileConfig& c, const Problem& p);

}  // namespace sgt
