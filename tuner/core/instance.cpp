// A candidate resolved into its binary and launch (instance.hpp).
#include "instance.hpp"

#include <fmt/format.h>

#include "error.hpp"
#include "problem.hpp"

namespace sgt {

KernelInstance resolve(const WarpTileConfig& c, std::string_view layout, bool vec) {
  if (layout.size() != 2 || (layout[0] != 'N' && layout[0] != 'T') ||
      (layout[1] != 'N' && layout[1] != 'T'))
    throw InputError(fmt::format("layout '{}' is not one of NN, NT, TN, TT", layout));
  const KernelFamily& family = family_of(c);
  KernelInstance in;
  in.family = &family;
  in.config = c;
  in.binary_config = c;
  in.binary_config.SPLIT_K = family.binary_split_k(c);
  in.binary_config.TAIL = 0;  // a launch parameter too: a tail config runs a split binary
  const auto [inst_layout, inst_vec] = family.instance(c, layout, vec);
  in.layout = std::string(inst_layout);
  in.vec = inst_vec;
  in.name_expression = family.name_expression(in.binary_config, in.layout, in.vec);
  in.precision = family.precision();
  LaunchDescriptor& l = in.launch;
  l.abi = family.launch_abi();
  l.block_threads = family.block_threads(c);
  l.dynamic_smem_bytes = family.dynamic_shared_bytes(c, in.trans_a(), in.trans_b());
  l.block_smem_bytes = family.block_shared_bytes(c, in.trans_a(), in.trans_b());
  l.tile_m = c.BM;
  l.tile_n = c.BN;
  l.tile_k = c.BK;
  l.split_k = c.SPLIT_K;
  if (l.abi == LaunchAbi::tensor_maps) {
    l.pad_a = c.PAD_A;
    l.pad_b = c.PAD_B;
  }
  l.packed = c.PACK != 0;
  l.split_panels = l.abi == LaunchAbi::split_maps;
  l.tail = c.TAIL != 0;
  l.group_m = c.GROUP_M;
  return in;
}

KernelInstance resolve(const WarpTileConfig& c, const Problem& p) {
  return resolve(c, p.layout, kernel_vec_loads(p));
}

}  // namespace sgt
