// The split-TF32 family on Hopper's warpgroup MMA (sgemm_tf32x3_wgmma.cuh): FP32 accuracy on the
// TF32 tensor cores, as family tf32x3, but a prepass splits op(A) and op(B)^T once into
// k-contiguous big and small TF32 panels, and the tile kernel runs three wgmma m64n128k8 per
// k-step on tiles that tensor copies (TMA) bring into a ring of stages. sm_90a only. Of the
// precision class fp32-accurate: tuned, served and exported only on request, after its error
// against FP64 is measured (precision.hpp). Launched as split_maps (family.hpp, launch_plan.h).
//
// The kernel's tile is fixed: BM = BN = 128, BK = 32 (rule tf32x3_wg_tile; its names still write
// them, so that a later kernel with other tiles names its configs in the same scheme), two
// consumer warpgroups of 64 x 128 (WM 64, WN 128) and a producer warpgroup (NUM_THREADS 384, the
// whole block). Its configs search STAGES (2 or 3), GROUP_M and the accumulation order, which
// the field FMA_ORDER names in this family (rule tf32x3_wg_accumulation): 0 the kernel's ACC 3
// (each k-step's three products into a zeroed partial, two partial sets in turn, added by FP32
// adds: within cuBLAS's error down to small K), 1 its ACC 6 (a slice's twelve products summed in
// the tensor core, slices summed by FP32 adds in groups of 8 before the running sum: 12 % faster,
// and more accurate from K = 512 on, above cuBLAS's error at K <= 256;
// docs/experiments/2026-12-04-tf32x3-wg-accumulation.md), 2 its ACC 7 (ACC 6 with each slice's
// cross products issued before its big x big ones: the same wgmmas, half ACC 6's error on uniform
// inputs in the emulation; docs/experiments/2026-12-04-tf32x3-wg-cross-first.md), 3 the BF16
// split (sgemm_bf16x6_wgmma.cuh: each operand as three BF16 parts, which hold an FP32 value
// exactly, six wgmma m64n128k16 products a k-step at the tensor-core time of the TF32 split's
// three, ACC 7's order; its slices are 64 BF16 values deep, BK 64, and its ring two stages of
// 96 KB; docs/experiments/2026-12-05-bf16x6-split.md). Which one may serve a problem is the
// accuracy check's: each is measured against FP64 on it.
// SPLIT_K splits K over the grid's z as the other families do (launch_dims: whole 32-float
// slices, k_chunk rounded up to them): its split configs run the kernel's entry
// sgemm_tf32x3_wgmma_splitk, which writes each split's raw partial product to a workspace of
// SPLIT_K M N floats for sgemm_splitk_reduce (binary_split_k: one binary for every SPLIT_K > 1),
// the unsplit ones sgemm_tf32x3_wgmma, whose machine code the split entry left as it was. For
// problems of few 128 x 128 tiles, which leave most of the last wave of 132 SMs idle
// (docs/experiments/2026-12-04-tf32x3-wg-split-k.md). Names write it as the other families do
// (_k2); SPLIT_K 1 is left out, so the names from before the knob name the same kernel.
// TAIL 1 (with SPLIT_K 1) is the wave-aware tail (launch_plan.h, wave_tail in
// tf32x3_wg_geometry.h): the split entry runs the tiles of the full waves of the device's SMs as
// one launch (grid z 1, into C) and the tiles left over, the last columns of the last GROUP_M
// group, as a second launch on their sub-problem split over K, whose partial products
// sgemm_splitk_reduce sums into that part of C. It shares the split configs' binary. For problems
// whose last wave is nearly empty (2560^3: 400 tiles, 3 waves of 132 and 4 left over;
// docs/experiments/2026-12-05-wave-tail.md). Names write it _v1.
// Every other field holds one value (implied(): its names leave them out; FMA_ORDER 0 too, so
// names from before the knob still parse and name the same kernel).
#include <string>
#include <utility>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "families/fixed_fields.hpp"
#include "families/tf32x3_wg/simulation.hpp"
#include "families/warptile/rules.hpp"
#include "family.hpp"
#include "index_sim.hpp"
#include "problem.hpp"
#include "tf32x3_wg_geometry.h"

namespace sgt {

namespace {

using sgt_kernel::kWgBK;
using sgt_kernel::kWgBM;
using sgt_kernel::kWgBN;
using sgt_kernel::kWgMaxStages;
using sgt_kernel::kWgMinStages;
using sgt_kernel::kWgThreads;

// The kernel's accumulation across k-steps (its template parameter ACC) for each value of the field
// FMA_ORDER, which names it in this family; FMA_ORDER 3 (tf32x3_wg::bf16_split) is the BF16
// split's kernel, which sums in ACC 7's order.
constexpr int kAccOfOrder[] = {3, 6, 7, 7};
constexpr int kAccOrders = 4;
int acc_of(const WarpTileConfig& c) {
  return c.FMA_ORDER >= 0 && c.FMA_ORDER < kAccOrders ? kAccOfOrder[c.FMA_ORDER] : -1;
}
using tf32x3_wg::bf16_split;
// The slice depth (BK) and the ring the config's kernel takes.
int slice_k(const WarpTileConfig& c) {
  return bf16_split(c) ? sgt_kernel::kB6BK : kWgBK;
}
int min_stages(const WarpTileConfig& c) {
  return bf16_split(c) ? sgt_kernel::kB6MinStages : kWgMinStages;
}
int max_stages(const WarpTileConfig& c) {
  return bf16_split(c) ? sgt_kernel::kB6MaxStages : kWgMaxStages;
}
// The entry a config runs: the split one where SPLIT_K > 1 or it runs a tail.
bool split_entry(const WarpTileConfig& c) {
  return c.SPLIT_K > 1 || c.TAIL != 0;
}
std::string kernel_name(const WarpTileConfig& c) {
  return fmt::format("sgemm_{}_wgmma{}", bf16_split(c) ? "bf16x6" : "tf32x3",
                     split_entry(c) ? "_splitk" : "");
}
int dynamic_bytes(const WarpTileConfig& c) {
  return bf16_split(c) ? sgt_kernel::bf16x6_smem_bytes(c.STAGES)
                       : sgt_kernel::tf32x3_wg_smem_bytes(c.STAGES);
}
// Register sets of 64 a consumer thread holds besides its accumulators: two partials for ACC 3,
// a partial and the middle sum for ACC 6 and 7.
constexpr int kPartialSets = 2;
// The one architecture its kernel has a body for (wgmma, setmaxnreg, tensor copies: sm_90a).
constexpr int kArch = 90;
// The binary of every split config: the split entry, named by the smallest split.
constexpr int kSplitBinary = 2;

// The splits a launch of an M x N x K problem runs (launch_dims, as plan_split_call takes it).
int launched_splits(const WarpTileConfig& c, const Problem& p) {
  return sgt_kernel::launch_dims(p.M, p.N, p.K, kWgBM, kWgBN, slice_k(c), c.SPLIT_K).grid_z;
}

// The fields the kernel does not read or fixes, and the one value each holds: a consumer
// warpgroup's tile (WM x WN), the block's threads.
const FixedFields& fixed_fields() {
  static const FixedFields kFixed = {
      {&WarpTileConfig::WM, sgt_kernel::kWgWarpgroupRows},
      {&WarpTileConfig::WN, kWgBN},
      {&WarpTileConfig::WNITER, 1},
      {&WarpTileConfig::TM, 1},
      {&WarpTileConfig::TN, 1},
      {&WarpTileConfig::NUM_THREADS, kWgThreads},
      {&WarpTileConfig::MIN_BLOCKS, 1},
      {&WarpTileConfig::PAD_A, 0},
      {&WarpTileConfig::PAD_B, 0},
      {&WarpTileConfig::PACK, 0},
      {&WarpTileConfig::STAGE_C, 0},
  };
  return kFixed;
}

// The whole block's shared memory: the ring (dynamic, with its alignment slack) and the barriers.
long long shared_bytes(const WarpTileConfig& c) {
  return 1LL * dynamic_bytes(c) + sgt_kernel::tf32x3_wg_static_smem_bytes(c.STAGES);
}

// A function's static: the registry may be built during another translation unit's static
// initialisation.
const std::vector<RuleInfo>& own_rules() {
  static const std::vector<RuleInfo> kOwnRules = {
      {"tf32x3_wg_fixed_fields",
       "in family tf32x3_wg, the fields its kernel does not read hold one value: WM 64 and WN 128 "
       "(a consumer warpgroup's tile), NUM_THREADS 384 (two consumer warpgroups and a producer), "
       "WNITER, TM, TN and MIN_BLOCKS 1, PAD_A, PAD_B, PACK and STAGE_C 0 (its names leave them "
       "out)",
       false},
      {"tf32x3_wg_accumulation",
       "in family tf32x3_wg, FMA_ORDER names the accumulation across k-steps: 0 each k-step's "
       "products into zeroed partials added by FP32 adds (the kernel's ACC 3), 1 a slice's "
       "products summed in the tensor core, the slices by FP32 adds in groups of 8 before they "
       "join the running sum (ACC 6), 2 as 1 with each slice's cross products summed before its "
       "big x big ones (ACC 7), 3 the BF16 split: three BF16 parts an operand, six wgmma "
       "m64n128k16 products a k-step, summed in ACC 7's order (sgemm_bf16x6_wgmma.cuh)",
       false},
      {"tf32x3_wg_tile",
       "in family tf32x3_wg, the block tile is the kernel's: BM = BN = 128 (two wgmma m64n128 "
       "warpgroups, boxes of 128 panel rows), BK = 32 (one 128-byte swizzled row of a box: 32 "
       "TF32 values), 64 for FMA_ORDER 3 (the same row: 64 BF16 values)",
       false},
      {"tf32x3_wg_stages",
       "in family tf32x3_wg, STAGES is 2 or 3: a ring of 64 KB stages within 227 KB of shared "
       "memory (static_assert stages); 2 for FMA_ORDER 3, whose stages are 96 KB",
       false},
      {"tf32x3_wg_shared_memory",
       "in family tf32x3_wg, the ring of STAGES stages (four 16 KB tiles each, six for FMA_ORDER "
       "3; "
       "1024-byte aligned) and its barriers fit the dynamic shared memory of a block",
       false},
      {"tf32x3_wg_tail",
       "in family tf32x3_wg, TAIL is 0 or 1 (1: the tiles past the last full wave of the SMs run "
       "as a second launch of the split entry, split over K), and 1 only with SPLIT_K 1 (the "
       "tail splits K on its own)",
       false},
      {"tf32x3_wg_architecture",
       "family tf32x3_wg only on sm_90 (compiled for sm_90a: wgmma, setmaxnreg, tensor copies); "
       "elsewhere its image would be an empty stub",
       false},
  };
  return kOwnRules;
}

const RuleInfo& own(std::string_view name) {
  return find_rule(own_rules(), "tf32x3_wg", name);
}

class Tf32x3Wg final : public KernelFamily {
 public:
  std::string_view id() const override { return "tf32x3_wg"; }
  std::string_view description() const override {
    return "split TF32 (3xTF32) on wgmma: a prepass splits the operands into k-contiguous TF32 "
           "panels, three wgmma m64n128k8 per k-step on TMA-fed stages, FP32 accumulation, "
           "split-K reduced in a fixed order (sgemm_tf32x3_wgmma.cuh, sm_90a); FMA_ORDER 3 splits "
           "into three BF16 parts instead, six wgmma m64n128k16 per k-step "
           "(sgemm_bf16x6_wgmma.cuh)";
  }
  Precision precision() const override { return Precision::fp32_accurate; }
  std::string_view name_prefix() const override { return "tw3_"; }
  std::vector<std::pair<int WarpTileConfig::*, int>> implied() const override {
    return fixed_fields();
  }

  const std::vector<RuleInfo>& rules() const override {
    static const std::vector<RuleInfo> list = {
        warptile::rule("positive_values"),
        own("tf32x3_wg_fixed_fields"),
        own("tf32x3_wg_tile"),
        own("tf32x3_wg_stages"),
        own("tf32x3_wg_accumulation"),
        own("tf32x3_wg_tail"),
        warptile::rule("max_threads_per_block"),
        own("tf32x3_wg_shared_memory"),
        own("tf32x3_wg_architecture"),
    };
    return list;
  }

  std::optional<std::string> impossible_value(std::string_view field, int v) const override {
    if (auto why = fixed_field_refusal(fixed_fields(), id(), field, v)) return why;
    if ((field == "BM" && v != kWgBM) || (field == "BN" && v != kWgBN))
      return fmt::format("rule tf32x3_wg_tile: {} is {} in family tf32x3_wg", field,
                         field == "BM" ? kWgBM : kWgBN);
    if (field == "BK" && v != kWgBK && v != sgt_kernel::kB6BK)
      return fmt::format("rule tf32x3_wg_tile: BK is {} (64 for FMA_ORDER 3) in family tf32x3_wg",
                         kWgBK);
    if (field == "STAGES" && (v < kWgMinStages || v > kWgMaxStages))
      return "rule tf32x3_wg_stages: STAGES must be 2 or 3 in family tf32x3_wg";
    if (field == "FMA_ORDER" && (v < 0 || v >= kAccOrders))
      return "rule tf32x3_wg_accumulation: FMA_ORDER must be 0 (ACC 3), 1 (ACC 6), 2 (ACC 7) or 3 "
             "(the BF16 split) in family tf32x3_wg";
    if (field == "TAIL" && v != 0 && v != 1)
      return "rule tf32x3_wg_tail: TAIL must be 0 or 1 in family tf32x3_wg";
    return std::nullopt;
  }

  void check(const WarpTileConfig& c, const Limits& limits,
             std::vector<RuleViolation>& out) const override {
    auto fail = [&](std::string_view rule, std::string reason) {
      out.push_back({std::string(rule), std::move(reason)});
    };
    const std::string fixed = fixed_field_mismatches(fixed_fields(), c);
    if (!fixed.empty()) {
      fail("tf32x3_wg_fixed_fields",
           fmt::format("tf32x3_wg fixes these fields, which hold one value in the family: {}",
                       fixed));
    }
    if (c.BM != kWgBM || c.BN != kWgBN || c.BK != slice_k(c)) {
      fail("tf32x3_wg_tile",
           fmt::format("block tile {}x{}x{}: the kernel's is {}x{}x{}{}", c.BM, c.BN, c.BK, kWgBM,
                       kWgBN, slice_k(c), bf16_split(c) ? " (FMA_ORDER 3, BF16 values)" : ""));
    }
    const bool stages_ok = c.STAGES >= min_stages(c) && c.STAGES <= max_stages(c);
    if (!stages_ok) {
      fail("tf32x3_wg_stages",
           bf16_split(c)
               ? fmt::format("STAGES = {}: the BF16 split's ring has 2 stages of 96 KB", c.STAGES)
               : fmt::format("STAGES = {}: the kernel's ring has 2 or 3 stages", c.STAGES));
    }
    if (acc_of(c) < 0) {
      fail("tf32x3_wg_accumulation",
           fmt::format("FMA_ORDER = {}: the family's accumulation orders are 0 (ACC 3), 1 "
                       "(ACC 6), 2 (ACC 7) and 3 (the BF16 split)",
                       c.FMA_ORDER));
    }
    if (c.TAIL != 0 && c.TAIL != 1) {
      fail("tf32x3_wg_tail",
           fmt::format("TAIL = {}: the tiles are launched in one grid (0) or with a wave-aware "
                       "tail (1)",
                       c.TAIL));
    } else if (c.TAIL == 1 && c.SPLIT_K > 1) {
      fail("tf32x3_wg_tail",
           fmt::format("TAIL = 1 with SPLIT_K = {}: the tail splits K on its own, the first launch "
                       "runs whole K",
                       c.SPLIT_K));
    }
    if (kWgThreads > limits.max_threads_per_block) {
      fail("max_threads_per_block", fmt::format("{} threads per block exceed the limit {}",
                                                kWgThreads, limits.max_threads_per_block));
    }
    // A ring the kernel would not even take is tf32x3_wg_stages's alone.
    if (stages_ok && shared_bytes(c) > limits.max_dynamic_shared_bytes) {
      fail("tf32x3_wg_shared_memory",
           fmt::format("{} stages of {} KB, the alignment slack and the barriers take {} bytes, "
                       "over the dynamic limit {}",
                       c.STAGES, bf16_split(c) ? sgt_kernel::kB6StageBytes / 1024 : 64,
                       shared_bytes(c), limits.max_dynamic_shared_bytes));
    }
    if (!implemented_for(limits.compute_capability)) {
      fail("tf32x3_wg_architecture",
           fmt::format("tf32x3_wg runs only on sm_{} (wgmma, setmaxnreg, tensor copies), not "
                       "sm_{}",
                       kArch, limits.compute_capability));
    }
  }

  // One shape rule, of SPLIT_K; none of the operands: the prepass reads any layout, leading
  // dimension and alignment, and the tile kernel reads only the panels it wrote.
  // shape_tf32x3_wg_split_k: the problem's launch runs every one of SPLIT_K's splits. Its K
  // slices (K / 32 rounded up) go to the splits in runs of slices / SPLIT_K rounded up, and
  // launch_dims leaves out the splits that would get none (K = 100 is 4 slices: SPLIT_K 3 runs
  // 2 splits of 2); a config whose launch runs fewer splits than it names would measure a smaller
  // SPLIT_K's launch under its name. It implies SPLIT_K <= the slices. No rule of the config
  // alone bounds SPLIT_K: the kernel takes any split of whole slices, and grid_z past a grid's
  // 65535 is the launch plan's too_large.
  // shape_tf32x3_wg_tail: a TAIL config's problem can have a tail on some device: two tiles or
  // more, and K slices for two tail splits of kTailMinSlices (wave_tail). Where it has none on the
  // device at hand (the tiles fill whole waves), the launch is the split entry on every tile.
  std::vector<std::string_view> shape_rules() const override {
    return {"shape_tf32x3_wg_split_k", "shape_tf32x3_wg_tail"};
  }
  void check_shape(const WarpTileConfig& c, const Problem& p, const Limits&,
                   std::vector<RuleViolation>& out) const override {
    if (c.TAIL != 0 && p.K > 0) {
      const auto d = sgt_kernel::launch_dims(p.M, p.N, p.K, kWgBM, kWgBN, slice_k(c), 1);
      const long long slices = (p.K + slice_k(c) - 1) / slice_k(c);
      if (d.grid_x < 2 || slices < 2 * sgt_kernel::kTailMinSlices)
        out.push_back({"shape_tf32x3_wg_tail",
                       fmt::format("tf32x3_wg TAIL 1 at {}x{}x{}: {} tile{} and {} slice{} of {}; "
                                   "a tail needs 2 tiles and {} slices (two splits of {})",
                                   p.M, p.N, p.K, d.grid_x, d.grid_x == 1 ? "" : "s", slices,
                                   slices == 1 ? "" : "s", slice_k(c),
                                   2 * sgt_kernel::kTailMinSlices, sgt_kernel::kTailMinSlices)});
    }
    if (c.SPLIT_K <= 1 || p.K <= 0) return;  // K = 0: nothing to split, C = beta C
    const int runs = launched_splits(c, p);
    if (runs == c.SPLIT_K) return;
    const long long slices = (p.K + slice_k(c) - 1) / slice_k(c);
    out.push_back(
        {"shape_tf32x3_wg_split_k",
         fmt::format("tf32x3_wg at K = {}: {} slice{} of {} in splits of {} run {} split{}, not "
                     "SPLIT_K = {}",
                     p.K, slices, slices == 1 ? "" : "s", slice_k(c),
                     (slices + c.SPLIT_K - 1) / c.SPLIT_K, runs, runs == 1 ? "" : "s", c.SPLIT_K)});
  }

  // The kernel files (the BF16 split's includes the TF32 one's), the TMA kernel's (its mbarrier and
  // copy helpers), the warp-tiling template that includes (block order), and the geometry headers.
  std::vector<KernelSourceFile> sources() const override {
    return {embedded_kernel_file("sgemm_bf16x6_wgmma.cuh"),
            embedded_kernel_file("sgemm_tf32x3_wgmma.cuh"),
            embedded_kernel_file("sgemm_ws_tma.cuh"),
            embedded_kernel_file(kKernelMainFile),
            embedded_kernel_file("warptile_geometry.h"),
            embedded_kernel_file("tma_geometry.h"),
            embedded_kernel_file("tf32x3_wg_geometry.h")};
  }

  // The split configs run the split entry (k_chunk and the partial products' workspace besides
  // the unsplit entry's arguments), the others the unsplit one.
  std::string name_expression(const WarpTileConfig& c, std::string_view, bool) const override {
    if (bf16_split(c)) return fmt::format("{}<{},{}>", kernel_name(c), c.STAGES, c.GROUP_M);
    return fmt::format("{}<{},{},{}>", kernel_name(c), acc_of(c), c.STAGES, c.GROUP_M);
  }
  // One instance for every layout and alignment: it reads the panels, op(A) stored M x Kp and
  // op(B)^T N x Kp, i.e. the NT layout, always with whole boxes.
  std::pair<std::string_view, bool> instance(const WarpTileConfig&, std::string_view,
                                             bool) const override {
    return {"NT", true};
  }
  bool implemented_for(int arch_number) const override { return arch_number == kArch; }
  std::string_view architecture_rule() const override { return "tf32x3_wg_architecture"; }
  std::string refusal_on(std::string_view arch) const override {
    return fmt::format(
        "rule tf32x3_wg_architecture: the split-TF32 wgmma kernel is implemented for sm_90 only "
        "(sm_90a: wgmma, setmaxnreg, tensor copies), not {}",
        arch);
  }
  std::string target_arch(const std::string& arch) const override {
    // The architecture-specific target of the same GPU (sm_90 -> sm_90a).
    const bool plain = !arch.empty() && arch.back() >= '0' && arch.back() <= '9';
    return plain ? arch + "a" : arch;
  }
  // The program holds sgemm_splitk_reduce (its sources include sgemm_warptile.cuh), which sums the
  // split entry's partial products; its pack kernel is the split prepass.
  bool has_split_k_reduce() const override { return true; }
  int binary_split_k(const WarpTileConfig& c) const override {
    return split_entry(c) ? kSplitBinary : 1;
  }
  std::string pack_expression(const WarpTileConfig& c) const override {
    return bf16_split(c) ? "bf16x6_split_operand<3>" : "tf32x3_split_operand";
  }

  int block_threads(const WarpTileConfig&) const override { return kWgThreads; }
  long long block_shared_bytes(const WarpTileConfig& c, bool, bool) const override {
    return shared_bytes(c);
  }
  LaunchAbi launch_abi() const override { return LaunchAbi::split_maps; }
  int dynamic_shared_bytes(const WarpTileConfig& c, bool, bool) const override {
    return dynamic_bytes(c);
  }
  // The ring's depth is a static_assert of the kernel too.
  std::vector<std::string_view> asserted_rules() const override { return {"tf32x3_wg_stages"}; }

  ThreadWork thread_work(const WarpTileConfig&) const override {
    // A consumer thread holds 64 accumulators and two more sets of 64 (kPartialSets); wgmma
    // reads both operands from shared memory (no fragment registers), a 64 x 128 tile per
    // warpgroup.
    constexpr int rows = sgt_kernel::kWgWarpgroupRows;
    return {sgt_kernel::kWgAccumulators, kPartialSets * sgt_kernel::kWgAccumulators, 1,
            static_cast<double>(rows) * kWgBN / (rows + kWgBN)};
  }

  nlohmann::json derived(const WarpTileConfig& c) const override {
    const std::string panels = bf16_split(c) ? "3 (M + N) Kp BF16 values, Kp = K rounded up to 8"
                                             : "2 (M + N) Kp floats, Kp = K rounded up to 4";
    return {
        {"THREADS", kWgThreads},
        {"CONSUMER_WARPGROUPS", sgt_kernel::kWgConsumers / 128},
        {"ACCUMULATORS", sgt_kernel::kWgAccumulators},
        {"PARTIAL_SETS", kPartialSets},
        {"ACC", acc_of(c)},
        {"OPERAND_SPLIT", bf16_split(c) ? "3 BF16 parts, 6 products" : "2 TF32 parts, 3 products"},
        {"DYNAMIC_SHARED_BYTES", dynamic_bytes(c)},
        {"SHARED_BYTES", shared_bytes(c)},
        {"WORKSPACE",
         c.SPLIT_K > 1 ? panels + ", and SPLIT_K M N floats for the partial products"
         : c.TAIL != 0 ? panels + ", and the tail's partial products: at most 128 x 128 floats a SM"
                       : panels},
        {"TAIL", c.TAIL != 0 ? "the tiles past the last full wave as a second launch split over "
                               "K (wave_tail)"
                             : "none"},
        {"KERNEL", kernel_name(c)}};
  }
  std::string derived_line(const WarpTileConfig& c) const override {
    return fmt::format(
        "threads {} (2 consumer warpgroups + 1 producer)  accumulators {} + {} partial sets  ACC "
        "{}  {}  shared {} B ({} dynamic)  workspace {} (M + N) Kp {}{}",
        kWgThreads, sgt_kernel::kWgAccumulators, kPartialSets, acc_of(c),
        bf16_split(c) ? "BF16 split (3 parts)" : "TF32 split (2 parts)", shared_bytes(c),
        dynamic_bytes(c), bf16_split(c) ? 3 : 2, bf16_split(c) ? "BF16 values" : "floats",
        c.SPLIT_K > 1 ? fmt::format(" + {} M N (split-K partial products)", c.SPLIT_K)
        : c.TAIL != 0 ? " + the wave-aware tail's partial products"
                      : "");
  }

  std::optional<SimReport> simulate(const WarpTileConfig& c) const override {
    return tf32x3_wg::simulate(c);
  }
  std::string simulation_scope() const override { return tf32x3_wg::simulation_scope(); }
};

}  // namespace

std::unique_ptr<KernelFamily> make_tf32x3_wg_family() {
  return std::make_unique<Tf32x3Wg>();
}

}  // namespace sgt
