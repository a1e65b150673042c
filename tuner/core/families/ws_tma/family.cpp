// The warp-specialised TMA family (sgemm_ws_tma.cuh): a producer warpgroup feeds a ring of
// k-slices by tensor copies to consumer warps that compute the warp-tiling geometry's tiles.
// sm_90a only. Named TMA = 1 in earlier releases' names (_m1, still its name suffix), JSON, spaces
// and databases.
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "edge_cases.hpp"
#include "families/warptile/rules.hpp"
#include "family.hpp"
#include "index_sim.hpp"
#include "problem.hpp"
#include "tma_geometry.h"

namespace sgt {

long long tma_shared_bytes(const WarpTileConfig& c, bool trans_a, bool trans_b) {
  // The dynamic request plus the kernel's three static mbarriers per stage (full, empty, staged),
  // which count against the same per-block limit.
  return sgt_kernel::make_tma_layout(derive(c), trans_a, trans_b, c.MIN_BLOCKS).SMEM_BYTES +
         3LL * 8 * c.STAGES;
}

bool tma_operands(const Problem& p) {
  const bool ta = p.layout.size() == 2 && p.layout[0] == 'T';
  const bool tb = p.layout.size() == 2 && p.layout[1] == 'T';
  return (ta ? p.M : p.K) % sgt_kernel::kVec == 0 && (tb ? p.K : p.N) % sgt_kernel::kVec == 0;
}

namespace {

using sgt_kernel::kVec;

// A function's static: the registry may be built during another translation unit's static
// initialisation.
const std::vector<RuleInfo>& own_rules() {
  static const std::vector<RuleInfo> kOwnRules = {
      {"tma_slice", "in family ws_tma, BK is 16 or 32: staging rows of 64 or 128 bytes, swizzled",
       true},
      {"tma_transpose",
       "in family ws_tma, the BM x BK and BN x BK staging boxes are whole float4s for each of the "
       "128 "
       "producer threads",
       true},
      {"tma_box", "in family ws_tma, BM+PAD_A, BN+PAD_B, BM and BN are at most 256 (a copy's box)",
       true},
      {"tma_warpgroups",
       "in family ws_tma, NUM_THREADS is a multiple of 128: consumers and producer are whole "
       "warpgroups, as setmaxnreg needs",
       true},
      {"tma_registers",
       "in family ws_tma, (NUM_THREADS+128)*MIN_BLOCKS > 264, so that the launch bounds cap the "
       "registers setmaxnreg moves, and the launch leaves at least the producer's 40",
       false},
      {"tma_architecture",
       "family ws_tma only on an architecture its kernel is implemented for (sm_90): elsewhere its "
       "image "
       "would only trap",
       false},
  };
  return kOwnRules;
}

// The rules of the tensor copies: staging rows the swizzle takes, boxes of whole float4s for each
// producer thread and at most 256 along a dimension, consumers ending on a warpgroup.
void check_tma_copies(const WarpTileConfig& c, const sgt_kernel::Geometry& g,
                      std::vector<RuleViolation>& out) {
  if (c.BK != 16 && c.BK != 32) {
    out.push_back(
        {"tma_slice", fmt::format("ws_tma with BK = {}: the staging rows are 64 (BK 16) or 128 "
                                  "bytes (BK 32), as the copies' swizzle needs",
                                  c.BK)});
  }
  const long long box = 1LL * kVec * sgt_kernel::kTmaProducerThreads;
  if ((1LL * c.BM * c.BK) % box != 0 || (1LL * c.BN * c.BK) % box != 0) {
    out.push_back(
        {"tma_transpose",
         fmt::format("ws_tma: the {}x{} and {}x{} staging boxes are not whole float4s for each "
                     "of the {} producer threads (some would transpose less than the box)",
                     c.BM, c.BK, c.BN, c.BK, sgt_kernel::kTmaProducerThreads)});
  }
  if (g.AS_LD > 256 || g.BS_LD > 256) {
    out.push_back(
        {"tma_box", fmt::format("ws_tma: boxes of BM+PAD_A = {} and BN+PAD_B = {} floats; a "
                                "copy's box is at most 256 along each dimension",
                                g.AS_LD, g.BS_LD)});
  }
  if (c.NUM_THREADS % sgt_kernel::kTmaProducerThreads != 0) {
    out.push_back(
        {"tma_warpgroups",
         fmt::format("ws_tma with NUM_THREADS = {}: the consumers end inside a warpgroup that "
                     "the producer's first warps complete, and setmaxnreg must be executed by "
                     "all four warps of a warpgroup alike (NUM_THREADS a multiple of 128)",
                     c.NUM_THREADS)});
  }
}

void check_tma_registers(const WarpTileConfig& c, const sgt_kernel::TmaLayout& tl,
                         std::vector<RuleViolation>& out) {
  // The kernel's own derivation: the launch bounds' share of the register file, in multiples
  // of 8, below the 248 that would leave it uncapped, and no less than what the producer's
  // setmaxnreg.dec goes down to.
  if (tl.LAUNCH_REGS >= 248) {
    out.push_back(
        {"tma_registers",
         fmt::format("ws_tma: {} threads x MIN_BLOCKS {} leave the launch registers uncapped "
                     "(more than 264 are needed), so setmaxnreg has no budget to move",
                     tl.THREADS, c.MIN_BLOCKS)});
  } else if (tl.LAUNCH_REGS < sgt_kernel::kTmaProducerRegs) {
    out.push_back(
        {"tma_registers",
         fmt::format("ws_tma: {} threads x MIN_BLOCKS {} start each thread with {} registers, "
                     "fewer than the {} the producer's setmaxnreg.dec goes down to",
                     tl.THREADS, c.MIN_BLOCKS, tl.LAUNCH_REGS, sgt_kernel::kTmaProducerRegs)});
  }
}

class WsTma final : public KernelFamily {
 public:
  std::string_view id() const override { return "ws_tma"; }
  std::string_view description() const override {
    return "warp-specialised: a producer warpgroup feeds the k-slices by TMA copies "
           "(sgemm_ws_tma.cuh, sm_90a)";
  }
  std::optional<int> legacy_tma() const override { return 1; }
  // Its names are the warp-tiling ones with _m1, the suffix of TMA = 1 when a field named the
  // family: every name stored before the family had an id keeps meaning the same config.
  std::string_view name_prefix() const override { return "wt_"; }
  std::string_view name_suffix() const override { return "_m1"; }

  const std::vector<RuleInfo>& rules() const override {
    static const std::vector<RuleInfo> list = [] {
      std::vector<RuleInfo> r;
      for (const char* name :
           {"wmiter_divisibility", "positive_values", "warp_tiles_cover_block", "thread_count",
            "subtile_divisibility", "subtile_lane_grid", "float4_alignment", "pad_alignment",
            "pipeline_stages", "fma_order", "pack_flag", "stage_c_flag", "tail_flag",
            "stage_c_buffer", "tma_flag"})
        r.push_back(warptile::rule(name));
      r.insert(r.end(), own_rules().begin(), own_rules().end());
      for (const char* name : {"max_threads_per_block", "shared_memory", "accumulator_budget",
                               "resident_threads", "resident_blocks", "register_cap"})
        r.push_back(warptile::rule(name));
      return r;
    }();
    return list;
  }
  std::optional<std::string> impossible_value(std::string_view field, int v) const override {
    if (auto why = warptile::impossible_value(field, v)) return why;
    if (field == "STAGES" && (v < 2 || v > 8))
      return "rule pipeline_stages: STAGES must be 2 to 8 in family ws_tma";
    return std::nullopt;
  }

  void check(const WarpTileConfig& c, const Limits& limits,
             std::vector<RuleViolation>& out) const override {
    auto fail = [&](std::string_view rule, std::string reason) {
      out.push_back({std::string(rule), std::move(reason)});
    };
    // The shared memory also holds both staging rings (each stage's As and Bs rounded up to 32
    // floats), and the launch bounds multiply the block, producer included, by MIN_BLOCKS.
    if (!warptile::products_fit(
            c,
            {4LL * c.STAGES * ((2LL * c.BM + c.PAD_A + 2LL * c.BN + c.PAD_B) * c.BK + 64) +
                 sgt_kernel::kTmaAlignBytes,
             (1LL * c.NUM_THREADS + sgt_kernel::kTmaProducerThreads) * c.MIN_BLOCKS},
            out))
      return;
    const auto g = derive(c);
    warptile::check_tiling(c, out);
    // No thread loads a slice: the copies bring whole boxes (tma_transpose instead).
    if (!warptile::check_float4(c, out) && c.TM % kVec != 0) {
      fail("float4_alignment",
           fmt::format("ws_tma with TM = {}: the TMA kernel's consumers read As as float4s only, "
                       "so TM must be a multiple of 4",
                       c.TM));
    }
    warptile::check_knobs(c, out);
    if (c.STAGES < 2 || c.STAGES > 8) {
      fail("pipeline_stages",
           fmt::format("STAGES = {}: in family ws_tma the ring has 2 to 8 stages", c.STAGES));
    }
    if (c.STAGE_C != 0) {
      fail("tma_flag", fmt::format("ws_tma with STAGE_C = {}: the TMA kernel stores C from "
                                   "registers (STAGE_C must be 0)",
                                   c.STAGE_C));
    }
    // The layout for the operand layout that stages nothing (TN), the smallest: a config too
    // large even there is invalid; the shape rule shape_tma_shared_memory checks the layout a
    // problem has (NN and TT stage one operand, NT both).
    const auto tl = sgt_kernel::make_tma_layout(g, true, false, c.MIN_BLOCKS);
    check_tma_copies(c, g, out);
    check_tma_registers(c, tl, out);
    if (!limits.tma_kernel) {
      fail("tma_architecture",
           "ws_tma: the warp-specialised TMA kernel is implemented for sm_90 only; on this "
           "architecture its image would only trap");
    }
    if (tl.THREADS > limits.max_threads_per_block) {
      fail("max_threads_per_block",
           fmt::format("NUM_THREADS + 128 producer threads = {} exceeds the limit {}", tl.THREADS,
                       limits.max_threads_per_block));
    }
    // The kernel's three mbarriers per stage (full, empty, staged) are static shared memory,
    // which counts against the same per-block limit as the dynamic request.
    if (tma_shared_bytes(c, true, false) * c.MIN_BLOCKS > limits.max_dynamic_shared_bytes) {
      fail("shared_memory",
           fmt::format("ws_tma: MIN_BLOCKS {} x {} bytes of stages (staging boxes, As and Bs) "
                       "and {} of barriers exceeds the dynamic limit {}",
                       c.MIN_BLOCKS, tl.SMEM_BYTES, 3 * 8 * c.STAGES,
                       limits.max_dynamic_shared_bytes));
    }
    warptile::check_accumulators(c, limits, out);
    const long long resident = static_cast<long long>(c.MIN_BLOCKS) * tl.THREADS;
    if (resident > limits.max_threads_per_sm) {
      fail("resident_threads", fmt::format("MIN_BLOCKS*(NUM_THREADS+128) = {} exceeds {} threads "
                                           "per SM",
                                           resident, limits.max_threads_per_sm));
    }
    warptile::check_resident_blocks(c, limits, out);
    // The consumers hold no prefetch; their cap is what setmaxnreg.inc gives them.
    const int need = g.ACCUMULATORS + g.FRAGMENTS;
    if (tl.CONSUMER_REGS < need) {
      fail("register_cap",
           fmt::format("ws_tma, MIN_BLOCKS = {}: the consumers get {} registers per thread, below "
                       "the {} that accumulators and fragments alone need",
                       c.MIN_BLOCKS, tl.CONSUMER_REGS, need));
    }
  }

  std::vector<std::string_view> shape_rules() const override {
    return {"shape_tma_operands", "shape_tma_shared_memory", warptile::kShapeTail};
  }
  void check_shape(const WarpTileConfig& c, const Problem& p, const Limits& limits,
                   std::vector<RuleViolation>& out) const override {
    warptile::check_tail_shape(c, p, out);
    // Only operands its tensor copies can read (PACK reads panels, which always allow them); a
    // data type not served is shape_layout's alone.
    if (p.dtype == "f32" && c.PACK == 0 && !tma_operands(p)) {
      const bool ta = p.layout[0] == 'T', tb = p.layout[1] == 'T';
      out.push_back(
          {"shape_tma_operands",
           fmt::format("ws_tma copies rows that are whole 16-byte units: lda = {} and ldb = {} "
                       "(the stored rows of {}) must be multiples of 4",
                       ta ? p.M : p.K, tb ? p.K : p.N, p.layout)});
    }
    // check() holds the layout that stages nothing to the limit; NN and TT stage one operand
    // through shared memory, NT both. With PACK the kernel is the TN instance on the panels.
    const long long bytes = c.PACK ? tma_shared_bytes(c, true, false)
                                   : tma_shared_bytes(c, p.layout[0] == 'T', p.layout[1] == 'T');
    if (bytes * c.MIN_BLOCKS > limits.max_dynamic_shared_bytes)
      out.push_back({"shape_tma_shared_memory",
                     fmt::format("ws_tma in {}: MIN_BLOCKS {} x {} bytes of stages (with the "
                                 "staging boxes this layout needs) exceeds the dynamic limit {}",
                                 p.layout, c.MIN_BLOCKS, bytes, limits.max_dynamic_shared_bytes)});
  }

  std::vector<KernelSourceFile> sources() const override {
    return {embedded_kernel_file("sgemm_ws_tma.cuh"), embedded_kernel_file(kKernelMainFile),
            embedded_kernel_file("warptile_geometry.h"), embedded_kernel_file("tma_geometry.h")};
  }

  std::string name_expression(const WarpTileConfig& c, std::string_view layout,
                              bool) const override {
    auto flag = [](bool b) { return b ? "true" : "false"; };
    // The template's parameters up to PAD_B (PACK, STAGE_C are 0; loads are TMA).
    return fmt::format("sgemm_ws_tma<{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{}>", c.BM,
                       c.BN, c.BK, c.WM, c.WN, c.WNITER, c.TM, c.TN, c.NUM_THREADS, c.MIN_BLOCKS,
                       c.STAGES, c.PAD_A, c.GROUP_M, c.FMA_ORDER, c.PAD_B, flag(layout[0] == 'T'),
                       flag(layout[1] == 'T'));
  }
  std::pair<std::string_view, bool> instance(const WarpTileConfig& c, std::string_view layout,
                                             bool) const override {
    if (c.PACK) return {"TN", true};
    // One instance per layout: its copies take any operands it is served with.
    return {layout, true};
  }
  // Its body (tensor copies, setmaxnreg) exists for sm_90a only: elsewhere NVRTC would compile
  // the trapping stub and ptxas report a few registers, an "ok" for a kernel that does nothing.
  bool implemented_for(int arch_number) const override { return arch_number == 90; }
  std::string_view architecture_rule() const override { return "tma_architecture"; }
  std::string refusal_on(std::string_view arch) const override {
    return fmt::format(
        "rule tma_architecture: the TMA kernel is implemented for sm_90 only, not {} (its image "
        "there would only trap)",
        arch);
  }
  std::string target_arch(const std::string& arch) const override {
    // The architecture-specific target of the same GPU (sm_90 -> sm_90a).
    const bool plain = !arch.empty() && arch.back() >= '0' && arch.back() <= '9';
    return plain ? arch + "a" : arch;
  }

  int block_threads(const WarpTileConfig& c) const override {
    return c.NUM_THREADS + sgt_kernel::kTmaProducerThreads;
  }
  long long block_shared_bytes(const WarpTileConfig& c, bool trans_a, bool trans_b) const override {
    return tma_shared_bytes(c, trans_a, trans_b);
  }
  LaunchAbi launch_abi() const override { return LaunchAbi::tensor_maps; }
  // The shared-memory layout depends on the layout only through which operands are staged.
  int dynamic_shared_bytes(const WarpTileConfig& c, bool trans_a, bool trans_b) const override {
    return sgt_kernel::make_tma_layout(derive(c), trans_a, trans_b, c.MIN_BLOCKS).SMEM_BYTES;
  }
  // Its ring depth, box and register rules are static_asserts of the kernel too.
  std::vector<std::string_view> asserted_rules() const override {
    return {"tma_flag", "pipeline_stages", "tma_box", "tma_registers"};
  }

  nlohmann::json derived(const WarpTileConfig& c) const override {
    auto j = warptile::derived_geometry(c);
    const auto tl = sgt_kernel::make_tma_layout(derive(c), false, false, c.MIN_BLOCKS);
    j["TMA_THREADS"] = tl.THREADS;
    j["TMA_CONSUMER_REGS"] = tl.CONSUMER_REGS;
    j["TMA_SHARED_BYTES"] = {{"TN", tma_shared_bytes(c, true, false)},
                             {"NN", tma_shared_bytes(c, false, false)},
                             {"TT", tma_shared_bytes(c, true, true)},
                             {"NT", tma_shared_bytes(c, false, true)}};
    return j;
  }
  // No load passes; dynamic shared memory by layout (what each stages).
  std::string derived_line(const WarpTileConfig& c) const override {
    const auto g = derive(c);
    const auto tl = sgt_kernel::make_tma_layout(g, false, false, c.MIN_BLOCKS);
    return fmt::format(
        "WMITER {}  sub-tile {}x{}  AS_LD {}  threads {} ({} consumers + {} producers)  "
        "registers {} -> {} consumers  shared TN {} B, NN/TT {} B, NT {} B  accumulators {}  "
        "fragments {}",
        g.WMITER, g.WSUBM, g.WSUBN, g.AS_LD, tl.THREADS, c.NUM_THREADS,
        sgt_kernel::kTmaProducerThreads, tl.LAUNCH_REGS, tl.CONSUMER_REGS,
        tma_shared_bytes(c, true, false), tma_shared_bytes(c, false, false),
        tma_shared_bytes(c, false, true), g.ACCUMULATORS, g.FRAGMENTS);
  }

  std::optional<SimReport> simulate(const WarpTileConfig& c) const override {
    return simulate_warptile_config(c);
  }
  std::string simulation_scope() const override { return simulate_config_scope(); }

  void adjust_edge_case(const WarpTileConfig& c, EdgeCheck& e) const override {
    if (c.PACK != 0) return;  // the kernel reads panels, which any operands give
    // The cases its kernel is served (tma_operand, tma_maps.h): A's and B's rows rounded up to
    // whole 16-byte units, offsets to whole float4s. C keeps its odd rows, so the single-float
    // epilogue is still exercised; other operands go to another winner.
    const auto up = [](long long v) { return (v + 3) / 4 * 4; };
    e.lda = up(e.lda);
    e.ldb = up(e.ldb);
    e.offset *= 4;
  }
};

}  // namespace

std::unique_ptr<KernelFamily> make_ws_tma_family() {
  return std::make_unique<WsTma>();
}

}  // namespace sgt
