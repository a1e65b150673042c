// Validity rules, canonical names and JSON for WarpTileConfig.
#include "config.hpp"

#include <charconv>
#include <limits>
#include <utility>
#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "error.hpp"
#include "tma_geometry.h"

namespace sgt {

namespace {

using sgt_kernel::kVec;
using sgt_kernel::kWarpSize;

const std::vector<RuleInfo> kRules = {
    {"wmiter_divisibility", "WM*WN is a whole multiple of 32*TM*TN*WNITER (WMITER >= 1)", true},
    {"positive_values",
     "every parameter is an integer in its range (1..65536, the pads from 0) and the tile products "
     "fit 32-bit index arithmetic",
     true},
    {"warp_tiles_cover_block", "warp tiles exactly tile the block tile (BM%WM, BN%WN)", true},
    {"thread_count", "NUM_THREADS == (BM/WM)*(BN/WN)*32", true},
    {"subtile_divisibility",
     "WSUBM = WM/WMITER and WSUBN = WN/WNITER are whole and divide by TM, TN", true},
    {"subtile_lane_grid", "a warp sub-tile holds exactly 32 thread tiles", true},
    {"load_stride_a",
     "the A slice's BM*BK/4 float4s are a whole multiple of NUM_THREADS (one or more passes)",
     true},
    {"load_stride_b",
     "the B slice's BK*BN/4 float4s are a whole multiple of NUM_THREADS (one or more passes)",
     true},
    {"float4_alignment",
     "BM, BN, BK, WN, TN are multiples of 4 (128-bit accesses); with TMA = 1 also TM (its "
     "consumers read As as float4s only)",
     true},
    {"pad_alignment", "PAD_A and PAD_B are multiples of 4, so As and Bs rows start 16-byte aligned",
     true},
    {"pipeline_stages",
     "STAGES is 1 (single buffer) or 2 (double buffer, register prefetch); with TMA = 1, 2 to 8 "
     "ring stages",
     false},
    {"fma_order",
     "FMA_ORDER is 0 (thread-tile rows first), 1 (columns first), 2 or 3 (the same, serpentine)",
     false},
    {"pack_flag", "PACK is 0 (operands read in place) or 1 (packed into k-major panels first)",
     false},
    {"stage_c_flag",
     "STAGE_C is 0 (C stored from registers) or 1 (edge and unaligned tiles through shared memory)",
     false},
    {"stage_c_buffer",
     "with STAGE_C = 1, As or Bs holds every warp's staged rows: NUM_THREADS*WNITER*TN floats",
     true},
    {"tma_flag",
     "TMA is 0 (threads load the k-slices) or 1 (a producer warpgroup feeds them by TMA copies), "
     "and TMA = 1 takes STAGE_C = 0 (C is stored from registers)",
     false},
    {"tma_slice", "with TMA = 1, BK is 16 or 32: staging rows of 64 or 128 bytes, swizzled", true},
    {"tma_transpose",
     "with TMA = 1, the BM x BK and BN x BK staging boxes are whole float4s for each of the 128 "
     "producer threads",
     true},
    {"tma_box", "with TMA = 1, BM+PAD_A, BN+PAD_B, BM and BN are at most 256 (a copy's box)", true},
    {"tma_warpgroups",
     "with TMA = 1, NUM_THREADS is a multiple of 128: consumers and producer are whole "
     "warpgroups, as setmaxnreg needs",
     true},
    {"tma_registers",
     "with TMA = 1, (NUM_THREADS+128)*MIN_BLOCKS > 264, so that the launch bounds cap the "
     "registers setmaxnreg moves, and the launch leaves at least the producer's 40",
     false},
    {"tma_architecture",
     "TMA = 1 only on an architecture its kernel is implemented for (sm_90): elsewhere its image "
     "would only trap",
     false},
    {"max_threads_per_block",
     "NUM_THREADS (plus the producer warpgroup with TMA = 1) within the device's block limit",
     false},
    {"shared_memory",
     "STAGES*((BM+PAD_A)+(BN+PAD_B))*BK*4 bytes within the static shared-memory limit; with TMA "
     "= 1, the ring with both staging boxes and its barriers within the dynamic limit",
     false},
    {"accumulator_budget", "accumulators per thread within the stated budget", false},
    {"resident_threads",
     "MIN_BLOCKS*NUM_THREADS (each block with its producer warpgroup with TMA = 1) within the "
     "threads one SM holds",
     false},
    {"resident_blocks", "MIN_BLOCKS within the blocks one SM holds", false},
    {"register_cap", "the register cap implied by MIN_BLOCKS holds accumulators and fragments",
     false},
};

}  // namespace

const std::vector<RuleInfo>& rules() {
  return kRules;
}

long long tma_shared_bytes(const WarpTileConfig& c, bool trans_a, bool trans_b) {
  // The dynamic request plus the kernel's three static mbarriers per stage (full, empty, staged),
  // which count against the same per-block limit.
  return sgt_kernel::make_tma_layout(derive(c), trans_a, trans_b, c.MIN_BLOCKS).SMEM_BYTES +
         3LL * 8 * c.STAGES;
}

std::vector<RuleViolation> check(const WarpTileConfig& c, const Limits& limits) {
  std::vector<RuleViolation> out;
  auto fail = [&](std::string_view rule, std::string reason) {
    out.push_back({std::string(rule), std::move(reason)});
  };
  // Range first: the kernel's index arithmetic is 32-bit, and derive() must not overflow. Out of
  // range, no other rule can be evaluated meaningfully, so this is the only one reported.
  for (const auto& f : kConfigFields) {
    if (c.*f.member < f.min_value || c.*f.member > kMaxConfigValue) {
      fail("positive_values", fmt::format("{} = {} is not an integer in {}..{}", f.name,
                                          c.*f.member, f.min_value, kMaxConfigValue));
      return out;
    }
  }
  // With TMA = 1 the shared memory also holds both staging rings (each stage's As and Bs rounded up
  // to 32 floats), and the launch bounds multiply the block, producer included, by MIN_BLOCKS.
  const bool with_tma = c.TMA == 1;
  const long long products[] = {
      1LL * c.WM * c.WN,
      1LL * kWarpSize * c.TM * c.TN * c.WNITER,
      4LL * c.STAGES * (c.BM + c.PAD_A + c.BN + c.PAD_B) * c.BK,
      1LL * c.BM * c.BN,
      1LL * c.NUM_THREADS * kVec,
      with_tma ? 4LL * c.STAGES * ((2LL * c.BM + c.PAD_A + 2LL * c.BN + c.PAD_B) * c.BK + 64) +
                     sgt_kernel::kTmaAlignBytes
               : 0,
      with_tma ? (1LL * c.NUM_THREADS + sgt_kernel::kTmaProducerThreads) * c.MIN_BLOCKS : 0};
  for (long long p : products) {
    if (p > std::numeric_limits<int>::max()) {
      fail("positive_values", "tile products overflow 32-bit index arithmetic");
      return out;
    }
  }
  const auto g = derive(c);

  const int per_pass = kWarpSize * c.TM * c.TN * c.WNITER;
  if (per_pass <= 0 || g.WMITER < 1 || g.WMITER * per_pass != c.WM * c.WN) {
    fail("wmiter_divisibility",
         fmt::format("WM*WN = {} is not a whole multiple of 32*TM*TN*WNITER = {}: threads would "
                     "overlap or leave holes in C",
                     c.WM * c.WN, per_pass));
  }

  if (c.WM <= 0 || c.WN <= 0 || c.BM % c.WM != 0 || c.BN % c.WN != 0) {
    fail("warp_tiles_cover_block",
         fmt::format("warp tile {}x{} does not tile block tile {}x{}", c.WM, c.WN, c.BM, c.BN));
  }

  const int warps = c.WM > 0 && c.WN > 0 ? (c.BM / c.WM) * (c.BN / c.WN) : 0;
  if (c.NUM_THREADS != warps * kWarpSize) {
    fail("thread_count", fmt::format("NUM_THREADS = {} but (BM/WM)*(BN/WN)*32 = {}", c.NUM_THREADS,
                                     warps * kWarpSize));
  }

  if (g.WMITER < 1 || c.WNITER <= 0 || c.WM % g.WMITER != 0 || c.WN % c.WNITER != 0 || c.TM <= 0 ||
      c.TN <= 0 || g.WSUBM % c.TM != 0 || g.WSUBN % c.TN != 0) {
    fail("subtile_divisibility",
         fmt::format("sub-tile {}x{} (WM/WMITER = {}/{}, WN/WNITER = {}/{}) is not whole or not a "
                     "multiple of the thread tile {}x{}",
                     g.WSUBM, g.WSUBN, c.WM, g.WMITER, c.WN, c.WNITER, c.TM, c.TN));
  }

  const int lanes = sgt_kernel::safe_div(g.WSUBM, c.TM) * g.LANES_N;
  if (lanes != kWarpSize) {
    fail("subtile_lane_grid",
         fmt::format("sub-tile {}x{} over thread tile {}x{} gives {} lanes, not 32", g.WSUBM,
                     g.WSUBN, c.TM, c.TN, lanes));
  }

  // With TMA = 1 no thread loads a slice: the copies bring whole boxes (tma_transpose instead).
  const bool tma = c.TMA == 1;
  const long long per_pass_elems = 1LL * kVec * c.NUM_THREADS;
  if (!tma && ((1LL * c.BM * c.BK) % per_pass_elems != 0 || g.A_PASSES < 1)) {
    fail("load_stride_a",
         fmt::format("A loader: the {}x{} slice is {} float4s, not a whole multiple of the {} "
                     "threads (the loop would load less than the tile, or beyond it)",
                     c.BM, c.BK, 1LL * c.BM * c.BK / kVec, c.NUM_THREADS));
  }
  if (!tma && ((1LL * c.BK * c.BN) % per_pass_elems != 0 || g.B_PASSES < 1)) {
    fail("load_stride_b",
         fmt::format("B loader: the {}x{} slice is {} float4s, not a whole multiple of the {} "
                     "threads (the loop would load less than the tile, or beyond it)",
                     c.BK, c.BN, 1LL * c.BK * c.BN / kVec, c.NUM_THREADS));
  }

  if (c.BM % kVec != 0 || c.BK % kVec != 0 || c.BN % kVec != 0 || c.WN % kVec != 0 ||
      c.TN % kVec != 0) {
    fail("float4_alignment",
         fmt::format("BM = {}, BN = {}, BK = {}, WN = {}, TN = {} must all be multiples of 4 for "
                     "128-bit loads and stores",
                     c.BM, c.BN, c.BK, c.WN, c.TN));
  } else if (tma && c.TM % kVec != 0) {
    fail("float4_alignment",
         fmt::format("TMA = 1 with TM = {}: the TMA kernel's consumers read As as float4s only, "
                     "so TM must be a multiple of 4",
                     c.TM));
  }

  if (c.PAD_A % kVec != 0) {
    fail("pad_alignment",
         fmt::format("PAD_A = {} would misalign the float4 accesses to As rows", c.PAD_A));
  }
  if (c.PAD_B % kVec != 0) {
    fail("pad_alignment",
         fmt::format("PAD_B = {} would misalign the float4 accesses to Bs rows", c.PAD_B));
  }

  if (c.FMA_ORDER < 0 || c.FMA_ORDER > 3) {
    fail("fma_order", fmt::format("FMA_ORDER = {}: the kernel knows orders 0 (rows first), 1 "
                                  "(columns first), 2 and 3 (the same, serpentine)",
                                  c.FMA_ORDER));
  }

  if (c.PACK != 0 && c.PACK != 1) {
    fail(
        "pack_flag",
        fmt::format("PACK = {}: operands are read in place (0) or packed into panels (1)", c.PACK));
  }

  if (c.STAGE_C != 0 && c.STAGE_C != 1) {
    fail("stage_c_flag",
         fmt::format("STAGE_C = {}: C is stored from registers (0) or through shared memory (1)",
                     c.STAGE_C));
  }
  if (c.STAGE_C == 1 && sgt_kernel::stage_buffer(g) == 0) {
    fail("stage_c_buffer",
         fmt::format("STAGE_C = 1: the warps' staged rows need {} floats, more than As ({}) or "
                     "Bs ({}) holds",
                     c.NUM_THREADS / kWarpSize * sgt_kernel::stage_warp_floats(g),
                     g.STAGES * g.AS_SIZE, g.STAGES * g.BS_SIZE));
  }

  if (!tma && c.STAGES != 1 && c.STAGES != 2) {
    fail("pipeline_stages",
         fmt::format("STAGES = {}: the kernel has a single-buffer (1) and a double-buffer (2) loop",
                     c.STAGES));
  }
  if (tma && (c.STAGES < 2 || c.STAGES > 8)) {
    fail("pipeline_stages",
         fmt::format("STAGES = {}: with TMA = 1 the ring has 2 to 8 stages", c.STAGES));
  }

  if (c.TMA != 0 && c.TMA != 1) {
    fail("tma_flag",
         fmt::format("TMA = {}: threads load the slices (0) or TMA copies do (1)", c.TMA));
  }
  if (tma && c.STAGE_C != 0) {
    fail("tma_flag", fmt::format("TMA = 1 with STAGE_C = {}: the TMA kernel stores C from "
                                 "registers (STAGE_C must be 0)",
                                 c.STAGE_C));
  }
  // The TMA kernel's layout for the operand layout that stages nothing (TN), the smallest: a config
  // too large even there is invalid; the shape rule shape_tma_shared_memory checks the layout a
  // problem has (NN and TT stage one operand, NT both).
  const auto tl =
      tma ? sgt_kernel::make_tma_layout(g, true, false, c.MIN_BLOCKS) : sgt_kernel::TmaLayout{};
  if (tma) {
    if (c.BK != 16 && c.BK != 32) {
      fail("tma_slice", fmt::format("TMA = 1 with BK = {}: the staging rows are 64 (BK 16) or 128 "
                                    "bytes (BK 32), as the copies' swizzle needs",
                                    c.BK));
    }
    const long long box = 1LL * kVec * sgt_kernel::kTmaProducerThreads;
    if ((1LL * c.BM * c.BK) % box != 0 || (1LL * c.BN * c.BK) % box != 0) {
      fail("tma_transpose",
           fmt::format("TMA = 1: the {}x{} and {}x{} staging boxes are not whole float4s for each "
                       "of the {} producer threads (some would transpose less than the box)",
                       c.BM, c.BK, c.BN, c.BK, sgt_kernel::kTmaProducerThreads));
    }
    if (g.AS_LD > 256 || g.BS_LD > 256) {
      fail("tma_box", fmt::format("TMA = 1: boxes of BM+PAD_A = {} and BN+PAD_B = {} floats; a "
                                  "copy's box is at most 256 along each dimension",
                                  g.AS_LD, g.BS_LD));
    }
    if (c.NUM_THREADS % sgt_kernel::kTmaProducerThreads != 0) {
      fail("tma_warpgroups",
           fmt::format("TMA = 1 with NUM_THREADS = {}: the consumers end inside a warpgroup that "
                       "the producer's first warps complete, and setmaxnreg must be executed by "
                       "all four warps of a warpgroup alike (NUM_THREADS a multiple of 128)",
                       c.NUM_THREADS));
    }
    // The kernel's own derivation: the launch bounds' share of the register file, in multiples
    // of 8, below the 248 that would leave it uncapped, and no less than what the producer's
    // setmaxnreg.dec goes down to.
    if (tl.LAUNCH_REGS >= 248) {
      fail("tma_registers",
           fmt::format("TMA = 1: {} threads x MIN_BLOCKS {} leave the launch registers uncapped "
                       "(more than 264 are needed), so setmaxnreg has no budget to move",
                       tl.THREADS, c.MIN_BLOCKS));
    } else if (tl.LAUNCH_REGS < sgt_kernel::kTmaProducerRegs) {
      fail("tma_registers",
           fmt::format("TMA = 1: {} threads x MIN_BLOCKS {} start each thread with {} registers, "
                       "fewer than the {} the producer's setmaxnreg.dec goes down to",
                       tl.THREADS, c.MIN_BLOCKS, tl.LAUNCH_REGS, sgt_kernel::kTmaProducerRegs));
    }
  }
  if (tma && !limits.tma_kernel) {
    fail("tma_architecture",
         "TMA = 1: the warp-specialised TMA kernel is implemented for sm_90 only; on this "
         "architecture its image would only trap");
  }
  const int block_threads = tma ? tl.THREADS : c.NUM_THREADS;

  if (block_threads > limits.max_threads_per_block) {
    fail("max_threads_per_block",
         fmt::format("{} = {} exceeds the limit {}",
                     tma ? "NUM_THREADS + 128 producer threads" : "NUM_THREADS", block_threads,
                     limits.max_threads_per_block));
  }

  if (!tma && g.SMEM_BYTES > limits.max_static_shared_bytes) {
    fail("shared_memory",
         fmt::format("STAGES*((BM+PAD_A)+(BN+PAD_B))*BK*4 = {} bytes exceeds the limit {}",
                     g.SMEM_BYTES, limits.max_static_shared_bytes));
  }
  // The kernel's three mbarriers per stage (full, empty, staged) are static shared memory, which
  // counts against the same per-block limit as the dynamic request.
  const long long tma_block_bytes = tma_shared_bytes(c, true, false);
  if (tma && tma_block_bytes * c.MIN_BLOCKS > limits.max_dynamic_shared_bytes) {
    fail("shared_memory",
         fmt::format("TMA = 1: MIN_BLOCKS {} x {} bytes of stages (staging boxes, As and Bs) and "
                     "{} of barriers exceeds the dynamic limit {}",
                     c.MIN_BLOCKS, tl.SMEM_BYTES, 3 * 8 * c.STAGES,
                     limits.max_dynamic_shared_bytes));
  }

  if (g.ACCUMULATORS > limits.max_accumulators) {
    fail("accumulator_budget", fmt::format("{} accumulators per thread exceed the budget {}",
                                           g.ACCUMULATORS, limits.max_accumulators));
  }

  const long long resident = static_cast<long long>(c.MIN_BLOCKS) * block_threads;
  if (resident > limits.max_threads_per_sm) {
    fail("resident_threads", fmt::format("MIN_BLOCKS*{} = {} exceeds {} threads per SM",
                                         tma ? "(NUM_THREADS+128)" : "NUM_THREADS", resident,
                                         limits.max_threads_per_sm));
  }
  if (c.MIN_BLOCKS > limits.max_blocks_per_sm) {
    fail("resident_blocks", fmt::format("MIN_BLOCKS {} exceeds the {} blocks one SM holds",
                                        c.MIN_BLOCKS, limits.max_blocks_per_sm));
  }

  if (tma) {
    // The consumers hold no prefetch; their cap is what setmaxnreg.inc gives them.
    const int need = g.ACCUMULATORS + g.FRAGMENTS;
    if (tl.CONSUMER_REGS < need) {
      fail("register_cap",
           fmt::format("TMA = 1, MIN_BLOCKS = {}: the consumers get {} registers per thread, below "
                       "the {} that accumulators and fragments alone need",
                       c.MIN_BLOCKS, tl.CONSUMER_REGS, need));
    }
  } else if (resident > 0) {
    // Registers are granted per thread in multiples of 8.
    const long long cap = std::min<long long>(limits.max_registers_per_thread,
                                              (limits.registers_per_sm / resident) / 8 * 8);
    // The double-buffered loop also holds the next slice's float4s in registers.
    const int prefetch = c.STAGES > 1 ? kVec * (g.A_PASSES + g.B_PASSES) : 0;
    const int need = g.ACCUMULATORS + g.FRAGMENTS + prefetch;
    if (cap < need) {
      fail("register_cap",
           fmt::format("MIN_BLOCKS = {} caps registers at {} per thread, below the {} that "
                       "accumulators, fragments and prefetch alone need",
                       c.MIN_BLOCKS, cap, need));
    }
  }
  return out;
}

namespace {

// The optional name suffixes, in canonical order; each is written only when the knob differs from
// its default.
constexpr std::pair<std::string_view, int WarpTileConfig::*> kNameSuffixes[] = {
    {"_s", &WarpTileConfig::STAGES},    {"_p", &WarpTileConfig::PAD_A},
    {"_g", &WarpTileConfig::GROUP_M},   {"_k", &WarpTileConfig::SPLIT_K},
    {"_o", &WarpTileConfig::FMA_ORDER}, {"_b", &WarpTileConfig::PAD_B},
    {"_x", &WarpTileConfig::PACK},      {"_c", &WarpTileConfig::STAGE_C},
    {"_m", &WarpTileConfig::TMA},
};

int min_of(int WarpTileConfig::*member) {
  for (const auto& f : kConfigFields) {
    if (f.member == member) return f.min_value;
  }
  return 1;
}

int default_of(int WarpTileConfig::*member) {
  for (const auto& f : kConfigFields) {
    if (f.member == member) return f.default_value;
  }
  return kRequired;
}

// Reads a decimal number in 0..kMaxConfigValue without a leading zero (except "0" itself).
std::optional<int> take_number(std::string_view& s) {
  if (s.empty() || s.front() < '0' || s.front() > '9') return std::nullopt;
  if (s.front() == '0' && s.size() > 1 && s[1] >= '0' && s[1] <= '9') return std::nullopt;
  int v = 0;
  auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || v > kMaxConfigValue) return std::nullopt;
  s.remove_prefix(static_cast<size_t>(ptr - s.data()));
  return v;
}

}  // namespace

std::string to_name(const WarpTileConfig& c) {
  std::string name = fmt::format("wt_{}x{}x{}_w{}x{}_wn{}_t{}x{}_n{}_mb{}", c.BM, c.BN, c.BK, c.WM,
                                 c.WN, c.WNITER, c.TM, c.TN, c.NUM_THREADS, c.MIN_BLOCKS);
  for (const auto& [lit, member] : kNameSuffixes) {
    if (c.*member != default_of(member)) name += fmt::format("{}{}", lit, c.*member);
  }
  return name;
}

std::optional<WarpTileConfig> from_name(std::string_view s) {
  WarpTileConfig c;
  // The name is a fixed sequence of literal separators and decimal numbers, then the optional
  // knob suffixes in canonical order.
  const std::pair<std::string_view, int WarpTileConfig::*> parts[] = {
      {"wt_", &WarpTileConfig::BM},         {"x", &WarpTileConfig::BN},
      {"x", &WarpTileConfig::BK},           {"_w", &WarpTileConfig::WM},
      {"x", &WarpTileConfig::WN},           {"_wn", &WarpTileConfig::WNITER},
      {"_t", &WarpTileConfig::TM},          {"x", &WarpTileConfig::TN},
      {"_n", &WarpTileConfig::NUM_THREADS}, {"_mb", &WarpTileConfig::MIN_BLOCKS},
  };
  for (const auto& [lit, member] : parts) {
    if (!s.starts_with(lit)) return std::nullopt;
    s.remove_prefix(lit.size());
    const auto v = take_number(s);
    if (!v || *v < 1) return std::nullopt;
    c.*member = *v;
  }
  for (const auto& [lit, member] : kNameSuffixes) {
    if (!s.starts_with(lit)) continue;
    s.remove_prefix(lit.size());
    const auto v = take_number(s);
    // A suffix that restates the default is not canonical: one config, one name. Below the knob's
    // smallest value it is not a config at all (from_json refuses the same values).
    if (!v || *v == default_of(member) || *v < min_of(member)) return std::nullopt;
    c.*member = *v;
  }
  if (!s.empty()) return std::nullopt;
  return c;
}

void to_json(nlohmann::json& j, const WarpTileConfig& c) {
  j = nlohmann::json::object();
  for (const auto& f : kConfigFields) j[std::string(f.name)] = c.*f.member;
}

void from_json(const nlohmann::json& j, WarpTileConfig& c) {
  if (!j.is_object()) throw InputError("a config must be a JSON object");
  for (const auto& [key, value] : j.items()) {
    bool known = false;
    for (const auto& f : kConfigFields) known = known || f.name == key;
    if (!known) throw InputError(fmt::format("unknown config field '{}'", key));
  }
  for (const auto& f : kConfigFields) {
    auto it = j.find(std::string(f.name));
    if (it == j.end()) {
      if (f.default_value != kRequired) {
        c.*f.member = f.default_value;
        continue;
      }
      throw InputError(fmt::format("config field '{}' is missing", f.name));
    }
    if (!it->is_number_integer()) {
      throw InputError(
          fmt::format("config field '{}' must be an integer, got {}", f.name, it->dump()));
    }
    const auto v = it->get<long long>();
    if (v < f.min_value || v > kMaxConfigValue) {
      throw InputError(fmt::format("config field '{}' = {} is out of range", f.name, v));
    }
    c.*f.member = static_cast<int>(v);
  }
}

}  // namespace sgt
