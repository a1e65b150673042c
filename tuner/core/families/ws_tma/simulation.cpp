// The TMA-fed kernel (sgemm_ws_tma.cuh, ws_tma) in the simulation: it gets no thread loads. Its
// producer warpgroup's copies and transposes are replayed into one model of the block's dynamic
// shared memory, every stage of the ring live at once. What the hardware does is stated here, not
// taken from tma_geometry.h: a copy brings the encoded box of the stored matrix, zeros outside it,
// row by row into shared memory, its 16-byte chunks swizzled by address bits where the map asks
// for a swizzle. Then the compute loop and the epilogue are the template's, read from the first
// stage's As and Bs (index_sim_warptile.cpp). For the launch, the slices each split's copies
// bring must take every k once.
#include <algorithm>

#include "index_sim_detail.hpp"

namespace sgt::sim_detail {

namespace {

// What a float of the block's shared memory holds besides an element code (k * tile_mn + mn of
// the operand's slice), kZero (a copy's fill outside the matrix) and kStale (written by nobody):
// an element of the matrix outside the block's tile or slice (a box too large or shifted).
constexpr std::int32_t kForeign = -4;

// The tensor copy's swizzle of a shared-memory byte address, from the hardware's definition (not
// from tma_staged_index): within each 1024-byte segment, address bits [4:6] are XORed with bits
// [7:9] (the 128-byte swizzle) or bits [4:5] with bits [7:8] (the 64-byte one).
long long hw_swizzle(long long byte, int span) {
  if (span == 128) return byte ^ (((byte >> 7) & 7) << 4);
  if (span == 64) return byte ^ (((byte >> 7) & 3) << 4);
  return byte;
}

// Shared-memory regions, for ownership and messages: region stage * 4 + one of these.
enum TmaRegion : int { kStagingA, kStagingB, kTileA, kTileB };

std::string region_name(int region) {
  constexpr const char* kNames[] = {"the A staging box", "the B staging box", "As", "Bs"};
  return fmt::format("{} of stage {}", kNames[region % 4], region / 4);
}

// One operand's side of the producer: what the host encodes (tma_maps.h's tma_encode_maps, stated
// here: the box tma_box_inner x tma_box_outer, a 128-byte swizzle for staged BK = 32 rows, 64-byte
// for other staged rows, none for a straight box) and where the kernel puts it (make_tma_layout).
struct TmaSide {
  const Operand* op = nullptr;
  bool staged = false;       // the kernel's path: make_tma_layout's STAGED_A / STAGED_B
  bool map_staged = false;   // what the host encodes: tma_staged_a / tma_staged_b
  int inner = 0, outer = 0;  // the box: stored columns, stored rows
  int span = 0;              // its swizzle, in bytes per row: 128, 64 or 0
  bool refused = false;      // the encoder refuses the box: the launch fails, nothing is copied
  int box_bytes = 0;         // what the kernel's barrier expects of the copy
  long long staging_offset = 0, staging_floats = 0;  // stage s at offset + s * floats
  long long tile_offset = 0, tile_stride = 0;
  int which = 0;        // 0: A, 1: B
  long long k_ext = 0;  // where the matrix ends in k, in the slice's coordinates (kOpen)
  // The rule an upstream defect of this operand comes back to (its box refused, or the staged
  // index not the hardware's), which the transpose's defects then inherit; nullptr: none.
  const char* cause = nullptr;
  // The rule the producer's defects come back to: the cause, else tma_transpose (whole float4s
  // for every producer thread).
  const char* rule() const { return cause ? cause : "tma_transpose"; }

  long long staging_start(int stage) const { return staging_offset + stage * staging_floats; }
  long long tile_start(int stage) const { return tile_offset + stage * tile_stride; }
  int staging_region(int stage) const { return stage * 4 + kStagingA + which; }
  int tile_region(int stage) const { return stage * 4 + kTileA + which; }
};

// The block's dynamic shared memory from the aligned base: what each float holds and which
// region wrote it.
struct TmaSmem {
  long long floats = 0;
  std::vector<std::int32_t> content;
  std::vector<std::int16_t> owner;  // region, -1: none
  // Stage 0's writes: (region % 4, float offset from the region's start).
  std::vector<std::pair<int, long long>> trace;
};

template <typename Ix>
class TmaProducer {
 public:
  TmaProducer(const Geometry& g, const Ix& ix, const WarpTileConfig& c, const SimCase& sc,
              const Operand& a, const Operand& b, Tally& t)
      : g_(g),
        ix_(ix),
        c_(c),
        t_(t),
        L_(ix.make_tma_layout(g, sc.trans_a, sc.trans_b, c.MIN_BLOCKS)) {
    side_[0] = side(a, 0, L_.STAGED_A, ix.tma_staged_a(sc.trans_a), L_.A_BOX_BYTES, 0,
                    L_.STAGE_A_FLOATS, L_.AS_OFFSET, L_.AS_STRIDE, sc);
    side_[1] = side(b, 1, L_.STAGED_B, ix.tma_staged_b(sc.trans_b), L_.B_BOX_BYTES,
                    L_.STAGE_B_OFFSET, L_.STAGE_B_FLOATS, L_.BS_OFFSET, L_.BS_STRIDE, sc);
  }

  // Replays every stage and leaves the first one's As and Bs in `as`, `bs` for the consumers. A
  // stage that repeats stage 0 but for its offsets (repeats_stage_0) only takes its floats: its
  // copies' and transposes' defects are stage 0's, reported (and counted) once.
  void run(SmemState& as, SmemState& bs, TmaSmem& smem, std::vector<std::uint8_t> (&count)[2]) {
    check_warpgroups();
    for (auto& x : side_) check_box(x);
    check_barriers();
    for (auto& x : side_) {
      if (x.staged && x.map_staged && !x.refused) check_swizzle(x);
    }
    check_alignment();
    smem.floats =
        std::max(0LL, (static_cast<long long>(L_.SMEM_BYTES) - sgt_kernel::kTmaAlignBytes) / 4);
    smem.content.assign(static_cast<size_t>(smem.floats), kStale);
    smem.owner.assign(static_cast<size_t>(smem.floats), -1);
    smem.trace.clear();
    smem_ = &smem;
    for (int stage = 0; stage < c_.STAGES; ++stage) {
      tracing_ = stage == 0;
      if (stage > 0 && repeats_stage_0(stage)) {
        // The same copies and transposes as stage 0's, each swizzled box shifted by whole
        // 1024-byte patterns: what lands in the stage is stage 0's, only where it lands differs.
        long long start[4];
        for (int kind = 0; kind < 4; ++kind) start[kind] = region_start(stage * 4 + kind);
        for (const auto& [kind, rel] : smem.trace) claim(start[kind] + rel, stage * 4 + kind);
        continue;
      }
      for (int i = 0; i < 2; ++i) {
        count[i].assign(static_cast<size_t>(side_[i].op->size), 0);
        count_[i] = count[i].data();
      }
      for (const auto& x : side_) copy(x, stage);
      for (const auto& x : side_) {
        if (x.staged) transpose(x, stage);
      }
      for (const auto& x : side_) check_tile(x, stage);
      if (stage == 0) {
        snapshot(side_[0], as);
        snapshot(side_[1], bs);
      }
    }
  }

 private:
  TmaSide side(const Operand& op, int which, bool staged, bool map_staged, int box_bytes,
               long long staging_offset, long long staging_floats, long long tile_offset,
               long long tile_stride, const SimCase& sc) const {
    TmaSide x;
    x.op = &op;
    x.which = which;
    x.staged = staged;
    x.map_staged = map_staged;
    x.inner = ix_.tma_box_inner(g_, which == 0, map_staged);
    x.outer = ix_.tma_box_outer(g_, which == 0, map_staged);
    x.span = !map_staged ? 0 : g_.BK == 32 ? 128 : 64;
    x.box_bytes = box_bytes;
    x.staging_offset = staging_offset;
    x.staging_floats = staging_floats;
    x.tile_offset = tile_offset;
    x.tile_stride = tile_stride;
    x.k_ext = extent(sc.k_rem);
    return x;
  }

  // The element a copy brings for stored (row, col) of the block's slice, the box's corner at
  // (0, 0): zero outside the matrix.
  std::int32_t code_of(const TmaSide& x, long long row, long long col) const {
    const Operand& op = *x.op;
    const long long k = op.col_is_k ? col : row;
    const long long mn = op.col_is_k ? row : col;
    if (k >= x.k_ext || mn >= op.mn_ext) return kZero;
    if (k < g_.BK && mn < op.tile_mn) return static_cast<std::int32_t>(k * op.tile_mn + mn);
    return kForeign;
  }
  std::int32_t expected(const TmaSide& x, int k, int mn) const {
    return k < x.k_ext && mn < x.op->mn_ext ? k * x.op->tile_mn + mn : kZero;
  }
  std::string show(const TmaSide& x, std::int32_t v) const {
    if (v == kZero) return "a zero";
    if (v == kStale) return "nothing written this slice";
    if (v == kForeign) return fmt::format("an element of {} outside the block's tile", x.op->name);
    return fmt::format("{}(k {}, {} {})", x.op->name, v / x.op->tile_mn, x.op->mn,
                       v % x.op->tile_mn);
  }

  // setmaxnreg is executed by whole warpgroups alike: every one of the block must be four whole
  // warps, all consumers (tid < NUM_THREADS) or all producers.
  void check_warpgroups() {
    const int threads = L_.THREADS, nt = g_.NUM_THREADS;
    for (int lo = 0; lo < threads; lo += 128) {
      const int hi = std::min(threads, lo + 128);
      const int consumers = std::clamp(nt - lo, 0, hi - lo), producers = hi - lo - consumers;
      if (hi - lo == 128 && (consumers == 0 || producers == 0)) continue;
      t_.note(kTmaWarpgroups, [&] {
        return fmt::format(
            "warpgroup {} (threads {}..{} of {}) holds {} consumer and {} producer threads: the "
            "consumers' setmaxnreg.inc and the producer's setmaxnreg.dec must each be executed "
            "by all four warps of a warpgroup (rule tma_warpgroups: NUM_THREADS a multiple of 128)",
            lo / 128, lo, hi - 1, threads, consumers, producers);
      });
    }
  }

  // The encoder's limits on a box: 1..256 elements each way, rows a multiple of 16 bytes and, when
  // swizzled, no wider than the swizzle.
  void check_box(TmaSide& x) {
    std::string why;
    if (x.inner < 1 || x.inner > 256 || x.outer < 1 || x.outer > 256) {
      why = "a box dimension is outside 1..256 (rule tma_box)";
      x.cause = "tma_box";
    } else if (x.inner * 4 % 16 != 0) {
      why = "its rows are not a multiple of 16 bytes (rules float4_alignment, pad_alignment)";
      x.cause = "float4_alignment";
    } else if (x.span > 0 && x.inner * 4 > x.span) {
      why = fmt::format("its {}-byte rows are wider than the {}-byte swizzle (rule tma_slice)",
                        x.inner * 4, x.span);
      x.cause = "tma_slice";
    }
    if (why.empty()) return;
    x.refused = true;
    t_.note(kTmaRefused, [&] {
      return fmt::format("the host cannot encode {}'s {} box of {} x {} floats: {}", x.op->name,
                         x.map_staged ? "staged" : "straight", x.inner, x.outer, why);
    });
  }

  // The stage's barriers: staged[s] expects the bytes of the staged copies, full[s] those of the
  // straight ones, plus the arrivals it was initialised with (1 for the straight copies' expect_tx,
  // 128 for the transposers) from the producer threads the launch has.
  void check_barriers() {
    int staged_expect = 0, staged_bring = 0, full_expect = 0, full_bring = 0;
    bool any_staged = false, any_straight = false;
    for (const auto& x : side_) {
      const int bytes = x.refused ? 0 : x.inner * x.outer * 4;
      (x.staged ? staged_expect : full_expect) += x.box_bytes;
      (x.staged ? staged_bring : full_bring) += bytes;
      (x.staged ? any_staged : any_straight) = true;
    }
    auto mismatch = [&](const char* bar, int expect, int bring) {
      if (expect == bring) return;
      t_.note(kTmaBarrier, [&] {
        return fmt::format("{}[s] expects {} bytes, the copies completing on it bring {}: it {}",
                           bar, expect, bring,
                           expect > bring ? "never completes" : "completes before they land");
      });
    };
    if (any_staged) mismatch("staged", staged_expect, staged_bring);
    if (any_straight) mismatch("full", full_expect, full_bring);
    const int init = (any_straight ? 1 : 0) + (any_staged ? sgt_kernel::kTmaProducerThreads : 0);
    const int arrivals = (any_straight ? 1 : 0) + (any_staged ? producers() : 0);
    if (init != arrivals) {
      t_.note(kTmaBarrier, [&] {
        return fmt::format("full[s] waits for {} arrivals, the {} producer threads make {}", init,
                           producers(), arrivals);
      });
    }
  }
  // Whether stage `stage` repeats stage 0 but for its offsets: every swizzled copy's destination
  // moved by whole 1024-byte swizzle patterns (an unswizzled copy or a transpose by anything).
  bool repeats_stage_0(int stage) const {
    for (const auto& x : side_) {
      if (x.span == 0 || x.refused) continue;
      const long long shift = stage * (x.staged ? x.staging_floats : x.tile_stride);
      if (shift % (sgt_kernel::kTmaAlignBytes / 4) != 0) return false;
    }
    return true;
  }
  long long region_start(int region) const {
    const TmaSide& x = side_[region % 2];
    return region % 4 < kTileA ? x.staging_start(region / 4) : x.tile_start(region / 4);
  }

  // The producer threads the launch has (a broken layout's absurd count capped).
  int producers() const {
    return static_cast<int>(
        std::clamp<long long>(1LL * L_.THREADS - g_.NUM_THREADS, 0, kMaxThreads));
  }
  static void bump(std::uint8_t& n) { n += n != 255; }

  // tma_staged_index against the hardware: in a box starting on a 1024-byte boundary, row r's
  // element k lies at byte (r * row + k) * 4, then swizzled.
  void check_swizzle(TmaSide& x) {
    for (int r = 0; r < x.outer; ++r) {
      for (int chunk = 0; chunk < g_.BK / kVec; ++chunk) {
        const int kernel = ix_.tma_staged_index(g_.BK, r, chunk);
        for (int e = 0; e < kVec; ++e) {
          const long long hw = hw_swizzle((1LL * r * x.inner + chunk * kVec + e) * 4, x.span) / 4;
          if (hw == kernel + e) continue;
          x.cause = "tma_slice";
          t_.note(kTmaSwizzle, [&] {
            return fmt::format(
                "the {}-byte swizzle puts element {} of row {} of {}'s staging box at float {}, "
                "tma_staged_index(BK = {}, {}, {}) + {} names {} (rule tma_slice)",
                x.span, chunk * kVec + e, r, x.op->name, hw, g_.BK, r, chunk, e, kernel + e);
          });
        }
      }
    }
  }

  // Staging boxes on 1024-byte boundaries (the swizzle pattern's), As and Bs stages on 128-byte
  // ones (a tensor copy's destination), from the aligned base.
  void check_alignment() {
    for (int stage = 0; stage < c_.STAGES; ++stage) {
      for (const auto& x : side_) {
        if (x.staged && (x.staging_start(stage) * 4) % sgt_kernel::kTmaAlignBytes != 0) {
          t_.note(kTmaSmemMisaligned, [&] {
            return fmt::format(
                "{} starts at byte {}, not on a 1024-byte boundary: the swizzle pattern is "
                "shifted (rule tma_transpose keeps staging boxes whole multiples of 2 KB)",
                region_name(x.staging_region(stage)), x.staging_start(stage) * 4);
          });
        }
        if ((x.tile_start(stage) * 4) % 128 != 0) {
          t_.note(kTmaSmemMisaligned, [&] {
            return fmt::format("{} starts at byte {}, not on a 128-byte boundary",
                               region_name(x.tile_region(stage)), x.tile_start(stage) * 4);
          });
        }
      }
    }
  }

  // Takes float idx for `region`: inside the shared memory, and no other region's.
  bool claim(long long idx, int region) {
    if (idx < 0 || idx >= smem_->floats) {
      t_.note(kTmaSmemOverflow, [&] {
        return fmt::format(
            "{} writes float {} of the shared memory, outside the {} floats "
            "SMEM_BYTES = {} leaves after the alignment slack",
            region_name(region), idx, smem_->floats, L_.SMEM_BYTES);
      });
      return false;
    }
    auto& owner = smem_->owner[static_cast<size_t>(idx)];
    if (owner >= 0 && owner != region) {
      t_.note(kTmaSmemOverlap, [&] {
        return fmt::format("float {} of the shared memory belongs to {} and to {}", idx,
                           region_name(owner), region_name(region));
      });
    }
    owner = static_cast<std::int16_t>(region);
    return true;
  }
  void write(long long idx, std::int32_t v, int region) {
    if (tracing_) smem_->trace.emplace_back(region % 4, idx - region_start(region));
    if (claim(idx, region)) smem_->content[static_cast<size_t>(idx)] = v;
  }
  std::int32_t read(long long idx, int region) const {
    if (idx < 0 || idx >= smem_->floats) return kStale;
    return smem_->owner[static_cast<size_t>(idx)] == region
               ? smem_->content[static_cast<size_t>(idx)]
               : kStale;
  }

  // Thread 0's copy of the slice: box element (row o, column i) of the stored slice lands at byte
  // (o * inner + i) * 4 from the destination, swizzled by its address.
  void copy(const TmaSide& x, int stage) {
    if (x.refused) return;
    const long long dst = x.staged ? x.staging_start(stage) : x.tile_start(stage);
    const long long room = x.staged ? x.staging_floats : x.op->size;
    const int region = x.staged ? x.staging_region(stage) : x.tile_region(stage);
    const char* what = x.staged ? "staging box" : "tile";
    for (int o = 0; o < x.outer; ++o) {
      for (int i = 0; i < x.inner; ++i) {
        const long long byte = dst * 4 + (1LL * o * x.inner + i) * 4;
        const long long idx = (byte < 0 ? byte : hw_swizzle(byte, x.span)) / 4;
        const long long rel = idx - dst;
        if (rel < 0 || rel >= room) {
          t_.note(kTmaCopyOut, [&] {
            return fmt::format(
                "{}'s copy puts element (row {}, column {}) of its {} x {} box at float {} of "
                "{}, a {} of {} floats",
                x.op->name, o, i, x.outer, x.inner, rel, region_name(region), what, room);
          });
        } else if (!x.staged) {
          bump(count_[x.which][rel]);
        }
        write(idx, code_of(x, o, i), region);
      }
    }
  }

  // tma_transpose: producer thread p's pass j takes the float4 at tma_staged_index(BK, row,
  // chunk) of the staging box and stores its element e at ((chunk * 4 + e) * ld + row) of As (Bs).
  void transpose(const TmaSide& x, int stage) {
    const Operand& op = *x.op;
    const int rows = op.tile_mn;
    // More passes than float4s of the box cannot be right; one more than that shows it.
    const int passes =
        std::clamp(ix_.tma_transpose_passes(rows, g_.BK), 0, rows * g_.BK / kVec + 1);
    for (int p = 0; p < producers(); ++p) {
      for (int j = 0; j < passes; ++j) {
        const int row = ix_.tma_transpose_row(rows, p, j);
        const int chunk = ix_.tma_transpose_chunk(rows, p, j);
        const int src = ix_.tma_staged_index(g_.BK, row, chunk);
        if (src < 0 || src + kVec > x.staging_floats) {
          t_.note(kTmaTransposeRead, [&] {
            return fmt::format(
                "producer thread {} pass {} (row {}, chunk {}) reads floats {}..{} of {}, which "
                "holds {} (rule {})",
                p, j, row, chunk, src, src + kVec - 1, region_name(x.staging_region(stage)),
                x.staging_floats, x.rule());
          });
          continue;
        }
        if (src % kVec != 0) {
          t_.note(kMisaligned, [&] {
            return fmt::format(
                "producer thread {} reads a float4 at float {} of {}, not 16-byte "
                "aligned",
                p, src, region_name(x.staging_region(stage)));
          });
        }
        for (int e = 0; e < kVec; ++e) {
          const std::int32_t v = read(x.staging_start(stage) + src + e, x.staging_region(stage));
          const int k = chunk * kVec + e;
          if (row < 0 || row >= rows || k < 0 || k >= g_.BK) {
            t_.note(kTmaTransposeOut, [&] {
              return fmt::format(
                  "producer thread {} pass {} stores element {} of row {}, chunk {} at k {}, {} "
                  "{}: outside the {} x {} tile of {} (rule {})",
                  p, j, e, row, chunk, k, op.mn, row, g_.BK, rows,
                  region_name(x.tile_region(stage)), x.rule());
            });
            continue;
          }
          const int slot = k * op.ld + row;
          bump(count_[x.which][slot]);
          write(x.tile_start(stage) + slot, v, x.tile_region(stage));
        }
      }
    }
  }

  // Every element (k, m) of the stage's tile, k < BK, m < BM (n < BN), written once this slice,
  // with op(A)'s element (op(B)'s) there, or a zero outside the matrix.
  void check_tile(const TmaSide& x, int stage) {
    const Operand& op = *x.op;
    const Kind hole = x.staged ? kTmaTransposeHole : kTmaCopyHole;
    const Kind misplaced = x.staged ? kTmaTransposeMisplaced : kTmaCopyMisplaced;
    // Holes and overlaps of the transpose come back to tma_transpose (or its cause), a misplaced
    // element only to a cause; a straight copy's defects only to a refused box.
    const std::string rule =
        x.staged || x.cause ? fmt::format(" (rule {})", x.rule()) : std::string();
    const std::string cause = x.cause ? fmt::format(" (rule {})", x.cause) : std::string();
    const std::uint8_t* const count = count_[x.which];
    for (int k = 0; k < g_.BK; ++k) {
      for (int mn = 0; mn < op.tile_mn; ++mn) {
        const int slot = k * op.ld + mn;
        const int n = count[slot];
        const std::int32_t v = read(x.tile_start(stage) + slot, x.tile_region(stage));
        const std::int32_t want = expected(x, k, mn);
        if (n == 1 && v == want) continue;
        auto where = [&] {
          return fmt::format("{}[{}] (k {}, {} {}) of stage {}", op.smem, slot, k, op.mn, mn,
                             stage);
        };
        if (n == 0) {
          t_.note(hole, [&] {
            return fmt::format("{} is written by no {}{}", where(),
                               x.staged ? "producer thread" : "copy", rule);
          });
        } else if (n > 1) {
          t_.note(x.staged ? kTmaTransposeOverlap : kTmaCopyMisplaced,
                  [&] { return fmt::format("{} is written {} times{}", where(), n, rule); });
        } else {
          t_.note(misplaced, [&] {
            return fmt::format("{} holds {}, not {}{}", where(), show(x, v), show(x, want), cause);
          });
        }
      }
    }
  }

  // The consumers' view of the first stage: As (Bs) as the thread-loaded replay leaves it.
  void snapshot(const TmaSide& x, SmemState& st) const {
    const int size = x.op->size;
    st.count.assign(count_[x.which], count_[x.which] + size);
    st.content.resize(static_cast<size_t>(size));
    for (int slot = 0; slot < size; ++slot) {
      const std::int32_t v = read(x.tile_start(0) + slot, x.tile_region(0));
      // An element from outside the tile is reported where it landed.
      st.content[static_cast<size_t>(slot)] = v == kForeign ? kFromOutside : v;
    }
  }

  const Geometry& g_;
  const Ix& ix_;
  const WarpTileConfig& c_;
  Tally& t_;
  const sgt_kernel::TmaLayout L_;
  TmaSide side_[2];
  TmaSmem* smem_ = nullptr;
  bool tracing_ = false;
  std::uint8_t* count_[2] = {nullptr, nullptr};
};

// One per thread, reused by every TMA block it simulates.
struct TmaScratch {
  TmaSmem smem;
  std::vector<std::uint8_t> count[2];
};
TmaScratch& tma_scratch() {
  thread_local TmaScratch s;
  return s;
}

}  // namespace

template <typename Ix>
void run_tma_producer(const Geometry& g, const Ix& ix, const WarpTileConfig& c, const SimCase& sc,
                      const Operand& a, const Operand& b, SmemState& as, SmemState& bs, Tally& t) {
  TmaScratch& ts = tma_scratch();
  TmaProducer<Ix>(g, ix, c, sc, a, b, t).run(as, bs, ts.smem, ts.count);
}

template void run_tma_producer(const Geometry&, const KernelIndexing&, const WarpTileConfig&,
                               const SimCase&, const Operand&, const Operand&, SmemState&,
                               SmemState&, Tally&);
template void run_tma_producer(const Geometry&, const SimIndexing&, const WarpTileConfig&,
                               const SimCase&, const Operand&, const Operand&, SmemState&,
                               SmemState&, Tally&);

// ws_tma: split z's producer copies slices t = 0..ceil((kend - kbeg) / BK) - 1 of BK k each from
// k0 = kbeg + t * BK, kbeg = z * k_chunk, kend = min(K, kbeg + k_chunk), as the kernel counts
// them; a copy fills zeros only past K, never past the split's kend. Every k in [0, K) must come
// from exactly one slice of one split.
void check_tma_slices(const WarpTileConfig& c, int K, const sgt_kernel::LaunchDims& d, Tally& t) {
  const long long chunk = d.k_chunk, BK = c.BK;
  const long long splits = std::clamp<long long>(d.grid_z, 0, 1LL * K + 1);
  std::vector<int> diff(static_cast<size_t>(K) + 1, 0);
  std::string past_split;
  for (long long z = 0; z < splits; ++z) {
    const long long kbeg = z * chunk;
    const long long kend = std::min<long long>(K, kbeg + chunk);
    if (kbeg < 0 || kend <= kbeg) continue;
    const long long slices = (kend - kbeg + BK - 1) / BK;
    for (long long s = 0; s < slices; ++s) {
      const long long lo = kbeg + s * BK, hi = std::min<long long>(K, lo + BK);
      if (hi > kend && past_split.empty()) {
        past_split = fmt::format(
            "split {}'s slice {} copies k = {}..{}, past the split's end at {}: the copies fill "
            "zeros only past K = {} (k_chunk {} is not a multiple of BK = {})",
            z, s, lo, hi - 1, kend, K, chunk, BK);
      }
      ++diff[static_cast<size_t>(lo)];
      --diff[static_cast<size_t>(hi)];
    }
  }
  const KCoverage cov = k_coverage(diff, K);
  if (cov.holes > 0) {
    t.add(kTmaKHole, cov.holes,
          fmt::format("k = {} of K = {} is copied by no slice ({} splits of {})", cov.first_hole, K,
                      d.grid_z, chunk));
  }
  if (cov.overlaps > 0) {
    t.add(kTmaKOverlap, cov.overlaps,
          !past_split.empty()
              ? past_split
              : fmt::format("k = {} of K = {} is copied by {} slices ({} splits of {})",
                            cov.first_overlap, K, cov.overlap_n, d.grid_z, chunk));
  }
}

}  // namespace sgt::sim_detail
