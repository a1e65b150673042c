// One block of the warp-tiling kernel, replayed thread by thread and checked against an
// independent statement of what it must do: load each element of a k-slice once into the slot
// where the compute loop expects it (index_sim_loads.cpp), multiply the right operands, write each
// C element inside the matrix once, with aligned float4 accesses; a TMA-fed config fills As and Bs
// through its producer instead (index_sim_tma.cpp), then runs the same compute loop and epilogue.
#include <algorithm>

#include "index_sim_detail.hpp"

namespace sgt::sim_detail {

std::optional<std::string> field_out_of_range(const WarpTileConfig& c) {
  for (const auto& f : kConfigFields) {
    const int v = c.*f.member;
    if (v < f.min_value)
      return fmt::format("{} = {} is below its minimum {}", f.name, v, f.min_value);
    if (v > kMaxParam) return fmt::format("{} = {} is absurdly large", f.name, v);
  }
  return std::nullopt;
}

namespace {

// Whether every function a block's replay calls is warptile_geometry.h's own.
bool is_kernel_indexing(const SimIndexing& ix) {
  const SimIndexing k;
  return ix.a_slice_cols == k.a_slice_cols && ix.b_slice_cols == k.b_slice_cols &&
         ix.load_row == k.load_row && ix.load_col == k.load_col && ix.slice_k == k.slice_k &&
         ix.slice_mn == k.slice_mn && ix.as_index == k.as_index && ix.bs_index == k.bs_index &&
         ix.tile_row == k.tile_row && ix.tile_col == k.tile_col && ix.clamp_mn == k.clamp_mn &&
         ix.clamp_mn_vec == k.clamp_mn_vec && ix.clamp_mn_panel == k.clamp_mn_panel &&
         ix.clamp_last == k.clamp_last && ix.stage_slot == k.stage_slot &&
         ix.stage_tile_row == k.stage_tile_row && ix.stage_tile_col == k.stage_tile_col &&
         ix.fma_step == k.fma_step && ix.tma_staged_a == k.tma_staged_a &&
         ix.tma_staged_b == k.tma_staged_b && ix.tma_staged_index == k.tma_staged_index &&
         ix.tma_transpose_row == k.tma_transpose_row &&
         ix.tma_transpose_chunk == k.tma_transpose_chunk &&
         ix.tma_transpose_passes == k.tma_transpose_passes && ix.tma_box_inner == k.tma_box_inner &&
         ix.tma_box_outer == k.tma_box_outer && ix.make_tma_layout == k.make_tma_layout &&
         ix.kc_index == k.kc_index && ix.kc_group_index == k.kc_group_index;
}

// --- Why a block cannot be simulated ------------------------------------------------------------
// Checked before make_geometry runs, since its int products could overflow on absurd inputs.

// Sizes of the config itself that are absurd, or too many for the simulation to replay.
std::optional<std::string> absurd_config(const WarpTileConfig& c) {
  if (auto why = field_out_of_range(c)) return why;
  const long long BM = c.BM, BN = c.BN, BK = c.BK;
  if (c.NUM_THREADS > kMaxThreads) {
    return fmt::format("NUM_THREADS = {} is absurdly large", c.NUM_THREADS);
  }
  if (BM * BN > kMaxTileElems || BK * (BM + c.PAD_A) > kMaxTileElems ||
      BK * (BN + c.PAD_B) > kMaxTileElems) {
    return fmt::format("tile {}x{}x{} (PAD_A = {}, PAD_B = {}) is absurdly large", BM, BN, BK,
                       c.PAD_A, c.PAD_B);
  }
  if (4LL * c.STAGES * BK * (BM + c.PAD_A + BN + c.PAD_B) > INT_MAX) {
    return fmt::format("STAGES = {} buffers of the tile are absurdly large", c.STAGES);
  }
  const long long wmwn = static_cast<long long>(c.WM) * c.WN;
  // One factor at a time: TM*TN*WNITER alone could overflow long long.
  long long per_pass = kWarpSize;
  for (int v : {c.TM, c.TN, c.WNITER}) per_pass = std::min<long long>(per_pass * v, 1LL << 40);
  if (wmwn > INT_MAX || per_pass > INT_MAX) {
    return fmt::format("warp tile {}x{} with thread tile {}x{} and WNITER = {} is absurdly large",
                       c.WM, c.WN, c.TM, c.TN, c.WNITER);
  }
  const bool tma = tma_fed(c);
  if (tma && c.STAGES > kMaxTmaStages) {
    return fmt::format("TMA = 1 with STAGES = {}: too many stages to simulate", c.STAGES);
  }
  if (tma && (1LL * c.NUM_THREADS + sgt_kernel::kTmaProducerThreads) * c.MIN_BLOCKS > INT_MAX) {
    return fmt::format(
        "TMA = 1: (NUM_THREADS + 128) * MIN_BLOCKS = ({} + 128) * {} is absurdly "
        "large",
        c.NUM_THREADS, c.MIN_BLOCKS);
  }
  return std::nullopt;
}

std::optional<std::string> remainder_outside_tile(const WarpTileConfig& c, const SimCase& sc) {
  const std::pair<std::string_view, std::pair<int, long long>> rems[] = {
      {"m_rem", {sc.m_rem, c.BM}}, {"n_rem", {sc.n_rem, c.BN}}, {"k_rem", {sc.k_rem, c.BK}}};
  for (const auto& [name, vt] : rems) {
    if (vt.first < 0 || vt.first > vt.second) {
      return fmt::format("{} = {} is outside 0..{} (0: the matrix goes on)", name, vt.first,
                         vt.second);
    }
  }
  return std::nullopt;
}

template <typename Ix>
std::optional<std::string> derived_not_positive(const Geometry& g, const Ix& ix,
                                                const SimCase& sc) {
  const std::pair<std::string_view, int> must_be_positive[] = {
      {"WMITER", g.WMITER},
      {"WSUBM", g.WSUBM},
      {"WSUBN", g.WSUBN},
      {"LANES_N", g.LANES_N},
      {"WARPS_N", g.WARPS_N},
      {"float4 columns of the stored A slice", ix.a_slice_cols(g, sc.trans_a) / kVec},
      {"float4 columns of the stored B slice", ix.b_slice_cols(g, sc.trans_b) / kVec},
  };
  for (const auto& [name, v] : must_be_positive) {
    // Zero here is a divisor that safe_div hides: every thread would land on one row or column.
    if (v <= 0) return fmt::format("derived {} = {} is not positive", name, v);
  }
  return std::nullopt;
}

template <typename Ix>
std::optional<std::string> too_much_work(const WarpTileConfig& c, const Geometry& g, const Ix& ix,
                                         const SimCase& sc) {
  const long long BM = c.BM, BN = c.BN, BK = c.BK;
  const long long nt = c.NUM_THREADS;
  long long work = nt * (static_cast<long long>(g.FRAGMENTS) * g.BK + kVec * g.ACCUMULATORS) +
                   kVec * nt * (1LL + g.A_PASSES + g.B_PASSES);
  if (tma_fed(c)) {
    const auto L = ix.make_tma_layout(g, sc.trans_a, sc.trans_b, c.MIN_BLOCKS);
    if (L.SMEM_BYTES < 0 || L.SMEM_BYTES > kMaxTmaSmemBytes) {
      return fmt::format("TMA = 1: {} bytes of shared memory are too many to simulate",
                         L.SMEM_BYTES);
    }
    // Every stage's copies and transposes.
    work += 3LL * c.STAGES * (1LL * g.AS_SIZE + g.BS_SIZE + 1LL * (BM + BN) * BK);
  }
  if (work > kMaxWork) {
    return fmt::format("one block does about {} index steps, too many to simulate", work);
  }
  return std::nullopt;
}

// Why the block cannot be simulated, or nullopt.
template <typename Ix>
std::optional<std::string> degenerate(const WarpTileConfig& c, const SimCase& sc, const Ix& ix) {
  if (auto why = absurd_config(c)) return why;
  if (auto why = remainder_outside_tile(c, sc)) return why;
  const Geometry g = derive(c);
  if (auto why = derived_not_positive(g, ix, sc)) return why;
  return too_much_work(c, g, ix, sc);
}

// --- The staged epilogue (STAGE_C = 1) ----------------------------------------------------------

// The staged epilogue of STAGE_C = 1 (stage_slot in warptile_geometry.h), taken where the direct
// one would store single floats: per warp and step (wm, m), the lanes' float4 stores must fill
// every slot of the warp's block once, inside the block and the buffer (As or Bs), 16-byte aligned;
// and what lane s % 32 reads back from slot s must go to the C element the direct epilogue gives
// the accumulator stored there (tile_row, tile_col of the lane that stored it), whose placement the
// rest of the replay checks.
template <typename Ix>
class StagedEpilogue {
 public:
  StagedEpilogue(const Geometry& g, const Ix& ix, Tally& t)
      : g_(g),
        ix_(ix),
        t_(t),
        per_warp_(sgt_kernel::stage_warp_floats(g)),
        // Without a buffer that holds every warp's block (rule stage_c_buffer), the larger of
        // the two.
        which_(sgt_kernel::stage_buffer(g) != 0 ? sgt_kernel::stage_buffer(g)
                                                : (g.AS_SIZE >= g.BS_SIZE ? 1 : 2)),
        buffer_(g.STAGES * (which_ == 1 ? g.AS_SIZE : g.BS_SIZE)),
        name_(which_ == 1 ? "As" : "Bs"),
        regs_n_(g.WNITER * g.TN),
        writer_(static_cast<size_t>(per_warp_)),
        reg_(static_cast<size_t>(per_warp_)),
        writes_(static_cast<size_t>(per_warp_)) {}

  void run() {
    for (int w = 0; w < g_.NUM_THREADS / kWarpSize; ++w) {
      for (int wm = 0; wm < g_.WMITER; ++wm) {
        for (int m = 0; m < g_.TM; ++m) {
          store_step(w, wm, m);
          read_step(w, wm, m);
        }
      }
    }
  }

 private:
  // Warp w's lanes store their accumulators of step (wm, m) to the warp's block.
  void store_step(int w, int wm, int m) {
    std::fill(writes_.begin(), writes_.end(), 0);
    for (int lane = 0; lane < kWarpSize; ++lane) {
      const int tid = w * kWarpSize + lane;
      const int base = sgt_kernel::stage_base(g_, tid);
      for (int wn = 0; wn < g_.WNITER; ++wn) {
        for (int n = 0; n < g_.TN; n += kVec) {
          const int slot = ix_.stage_slot(g_, tid, wn, n);
          if (slot < 0 || slot + kVec > per_warp_ || base + slot + kVec > buffer_) {
            t_.note(kStageOut, [&] {
              return fmt::format(
                  "thread {} stores accumulators {}..{} of step ({}, {}) at {}[{}], outside "
                  "its warp's {} floats at {} or the buffer's {}",
                  tid, wn * g_.TN + n, wn * g_.TN + n + kVec - 1, wm, m, name_, base + slot,
                  per_warp_, base, buffer_);
            });
            continue;
          }
          if ((base + slot) % kVec != 0) {
            t_.note(kMisaligned, [&] {
              return fmt::format("thread {} stores a float4 at {}[{}], not 16-byte aligned", tid,
                                 name_, base + slot);
            });
          }
          for (int j = 0; j < kVec; ++j) {
            const int q = slot + j;
            writer_[q] = tid;
            reg_[q] = wn * g_.TN + n + j;
            ++writes_[q];
          }
        }
      }
    }
  }

  // Each lane reads back its slots of the step and writes them to C.
  void read_step(int w, int wm, int m) {
    for (int q = 0; q < per_warp_; ++q) {
      const int reader = w * kWarpSize + q % kWarpSize;
      if (writes_[q] != 1) {
        t_.note(kStageSlot, [&] {
          return fmt::format(
              "slot {} of warp {}'s block in step ({}, {}) is stored {} times before thread {} "
              "reads it",
              q, w, wm, m, writes_[q], reader);
        });
        continue;
      }
      const int row = ix_.stage_tile_row(g_, reader, wm, m, q);
      const int col = ix_.stage_tile_col(g_, reader, q);
      const int r = reg_[q], wn = r / g_.TN, n = r % g_.TN;
      const int want_row = ix_.tile_row(g_, writer_[q], wm, m);
      const int want_col = ix_.tile_col(g_, writer_[q], wn, n / kVec * kVec) + n % kVec;
      if (row != want_row || col != want_col) {
        t_.note(kStageMisplaced, [&] {
          return fmt::format(
              "thread {} writes C[{}][{}] of the tile from slot {}, which holds thread {}'s "
              "accumulator ({}, {}) of C[{}][{}] (of {} per thread along N)",
              reader, row, col, q, writer_[q], wm * g_.TM + m, r, want_row, want_col, regs_n_);
        });
      }
    }
  }

  const Geometry& g_;
  const Ix& ix_;
  Tally& t_;
  const int per_warp_;
  const int which_;  // 1: As, 2: Bs
  const int buffer_;
  const char* const name_;
  const int regs_n_;
  std::vector<int> writer_;
  std::vector<int> reg_;
  std::vector<int> writes_;
};

// The outer product of one k-step, in the config's FMA_ORDER: its WMITER*TM x WNITER*TN steps must
// update every accumulator exactly once, each with its own row of regM and column of regN (the
// operand check below pairs acc[i * cols + j] with regM[i] and regN[j]).
template <typename Ix>
void check_fma_steps(const Geometry& g, int order, const Ix& ix, Tally& t) {
  const int rows = g.WMITER * g.TM, cols = g.WNITER * g.TN;
  std::vector<int> count(static_cast<size_t>(rows) * static_cast<size_t>(cols), 0);
  for (int step = 0; step < rows * cols; ++step) {
    const sgt_kernel::FmaStep f = ix.fma_step(g, order, step);
    if (f.i < 0 || f.i >= rows || f.j < 0 || f.j >= cols) {
      t.note(kFmaSteps, [&] {
        return fmt::format("FMA_ORDER {} step {} updates acc({}, {}), outside the {} x {} tile",
                           order, step, f.i, f.j, rows, cols);
      });
      continue;
    }
    ++count[static_cast<size_t>(f.i) * static_cast<size_t>(cols) + static_cast<size_t>(f.j)];
  }
  for (int i = 0; i < rows; ++i)
    for (int j = 0; j < cols; ++j) {
      const int n =
          count[static_cast<size_t>(i) * static_cast<size_t>(cols) + static_cast<size_t>(j)];
      if (n != 1) {
        t.note(kFmaSteps, [&] {
          return fmt::format("FMA_ORDER {} updates acc({}, {}) {} times per k-step", order, i, j,
                             n);
        });
      }
    }
}

// --- The compute loop and the epilogue ----------------------------------------------------------

// One register of a thread's fragments: what it ends up holding.
struct Reg {
  int source = kNone;
  int zero_k = -1;
  int tail_k = -1;
  int tail_slot = -1;
  int clamped_k = -1;
  int clamped_mn = -1;
};

struct Scratch {
  SmemState as, bs;
  FragmentCache cache_a, cache_b;
  std::vector<std::uint8_t> c_count;
  std::vector<Reg> reg_m, reg_n;
  std::vector<int> row_of, col_of, pair_reg, pair_col;
  std::vector<std::uint8_t> a_flag, b_flag, pair_in, pair_flag;
};

// One per thread, reused by every block it simulates.
Scratch& scratch() {
  thread_local Scratch s;
  return s;
}

std::string show_source(int v) {
  if (v == kWrong) return "mixed/wrong-k data";
  if (v == kNone) return "nothing but zeros";
  return std::to_string(v);
}

// A register's verdict against the C row (column) the epilogue pairs it with.
// Clamped data is fine in a register whose C elements all lie outside the matrix: the epilogue
// skips those, so a register only meets the verdict against an element inside it.
constexpr std::uint8_t kFlagSource = 1, kFlagZero = 2, kFlagTail = 4, kFlagClamped = 8;
std::uint8_t verdict(const Reg& r, int expected) {
  return static_cast<std::uint8_t>(
      (r.source != kUnknown && r.source != expected ? kFlagSource : 0) |
      (r.zero_k >= 0 ? kFlagZero : 0) | (r.tail_k >= 0 ? kFlagTail : 0) |
      (r.clamped_k >= 0 ? kFlagClamped : 0));
}

// The block after its shared memory is filled: every thread's compute loop reads its fragments,
// the epilogue writes its accumulators to C, and every C element of the tile inside the matrix
// must be written exactly once with the right dot product.
// Whether family warptile_ring's ring copies an operand into a k-contiguous buffer in this case:
// its float4 instance (not PACK's panels, which are k-major; the scalar instance is the
// double-buffered twin) on an operand stored with k contiguous.
bool ring_kc(const WarpTileConfig& c, const SimCase& sc, bool is_a) {
  if (c.family != "warptile_ring" || !sc.vec_kernel || sc.panel) return false;
  return is_a ? sgt_kernel::ring_a_kc(sc.trans_a) : sgt_kernel::ring_b_kc(sc.trans_b);
}

template <typename Ix>
class BlockRun {
 public:
  BlockRun(const WarpTileConfig& c, const SimCase& sc, const Ix& ix, Tally& t)
      : c_(c),
        sc_(sc),
        ix_(ix),
        t_(t),
        g_(derive(c)),
        s_(scratch()),
        a_(make_operand(g_, ix, sc, true, ring_kc(c, sc, true))),
        b_(make_operand(g_, ix, sc, false, ring_kc(c, sc, false))),
        // ws_tma: the producer's copies and transposes instead of the threads' loads, the
        // consumers reading As as float4s whatever TM, and only the direct epilogue.
        tma_(tma_fed(c)),
        row_ext_(extent(sc.m_rem)),
        col_ext_(extent(sc.n_rem)),
        // The epilogue's float4 path: the whole tile inside the matrix.
        fast_c_((sc.m_rem == 0 || sc.m_rem == g_.BM) && (sc.n_rem == 0 || sc.n_rem == g_.BN)),
        regs_m_(g_.WMITER * g_.TM),
        regs_n_(g_.WNITER * g_.TN),
        // With TN not a multiple of 4 the epilogue's float4 runs over into the next
        // accumulators, and accumulator and C column no longer pair up by index: every element
        // takes the slow check.
        spill_(g_.TN % kVec != 0) {}

  void run() {
    check_fma_steps(g_, c_.FMA_ORDER, ix_, t_);
    fill_shared_memory();
    s_.cache_a.reset(g_.BM);
    s_.cache_b.reset(g_.BN);
    if (!fast_c_ && c_.STAGE_C == 1 && !tma_) StagedEpilogue<Ix>(g_, ix_, t_).run();
    size_scratch();
    for (int tid = 0; tid < c_.NUM_THREADS; ++tid) run_thread(tid);
    check_c_coverage();
  }

 private:
  // The (register, column) pairs of a thread's epilogue, the guard's skips left out, and its
  // misaligned float4 stores.
  struct Columns {
    long long misaligned = 0;
    int misaligned_col = 0;
    int npairs = 0;
  };

  void fill_shared_memory() {
    if (tma_) {
      run_tma_producer(g_, ix_, c_, sc_, a_, b_, s_.as, s_.bs, t_);
      return;
    }
    load(g_, ix_, a_, c_.NUM_THREADS, s_.as, t_);
    load(g_, ix_, b_, c_.NUM_THREADS, s_.bs, t_);
    check_smem_coverage(a_, s_.as, t_);
    check_smem_coverage(b_, s_.bs, t_);
  }

  void size_scratch() {
    s_.c_count.assign(static_cast<size_t>(g_.BM) * g_.BN, 0);
    s_.reg_m.resize(static_cast<size_t>(regs_m_));
    s_.reg_n.resize(static_cast<size_t>(regs_n_));
    s_.row_of.resize(static_cast<size_t>(regs_m_));
    s_.col_of.resize(static_cast<size_t>(regs_n_));
    // The (register, column) pairs of a thread's float4 stores: WNITER * ceil(TN / 4) * 4.
    const size_t pairs = static_cast<size_t>(g_.WNITER) * ((g_.TN + kVec - 1) / kVec) * kVec;
    s_.pair_reg.resize(pairs);
    s_.pair_col.resize(pairs);
    s_.pair_in.resize(pairs);
    s_.pair_flag.resize(pairs);
    s_.a_flag.resize(static_cast<size_t>(regs_m_));
    s_.b_flag.resize(static_cast<size_t>(regs_n_));
  }

  void run_thread(int tid) {
    // A k-contiguous operand: one float4 of 4 k per fragment element (each element on its own).
    load_regs(tid, a_, s_.cache_a, s_.as, g_.WMITER, g_.TM, !a_.kc && (tma_ || g_.TM % kVec == 0),
              s_.reg_m.data(), regs_m_);
    load_regs(tid, b_, s_.cache_b, s_.bs, g_.WNITER, g_.TN, !b_.kc, s_.reg_n.data(), regs_n_);
    // The epilogue: rows tile_row(wm, m), columns tile_col(wn, n) + j for n in steps of 4; on
    // the fast path a float4 store, else each element only inside the matrix (row < M, col < N).
    // The columns are the same for every row: first the (register, column) pairs they make, the
    // guard's skips left out, then each row against them.
    place_rows(tid);
    const Columns cols = place_columns(tid);
    if (!spill_) judge_registers();
    const bool plain = flag_pairs(cols.npairs);
    count_rows(tid, cols, plain);
  }

  // The compute loop of one operand: register ws*T + i + j takes slot index(k, tile_pos(ws, i))
  // + j; float4 reads (i in steps of 4) where `vec`, else one element per i.
  void load_regs(int tid, const Operand& op, FragmentCache& cache, const SmemState& st, int iters,
                 int T, bool vec, Reg* regs, int nregs) {
    const int step = vec ? kVec : 1;
    for (int ws = 0; ws < iters; ++ws) {
      for (int i = 0; i < T; i += step) {
        const int pos = op.is_a ? ix_.tile_row(g_, tid, ws, i) : ix_.tile_col(g_, tid, ws, i);
        for (int j = 0; j < step; ++j) {
          const int r = ws * T + i + j;
          if (op.kc) check_kc_read(tid, op, ws, i, pos);
          const Fragment& f = cache.get(g_, ix_, op, st, pos, j);
          if ((vec || op.kc) && j == 0) {
            t_.note_n(kMisaligned, f.misaligned, [&] {
              return fmt::format(
                  "thread {} reads a float4 from {}[{}] at k = {}, not 16-byte "
                  "aligned",
                  tid, op.smem, op.index(g_, ix_, f.misaligned_k, pos), f.misaligned_k);
            });
          }
          t_.note_n(kSmemRead, f.bad, [&] {
            return fmt::format("thread {} reads {}[{}] at k = {} into {}[{}], outside {}[{}]", tid,
                               op.smem, f.bad_slot, f.bad_k, op.reg, r, op.smem, op.size);
          });
          t_.note_n(kAsPadRead, f.pad, [&] {
            return fmt::format(
                "thread {} reads As[{}] at k = {} into regM[{}]: a pad slot (column {} of a row "
                "of {} + {} pad)",
                tid, f.pad_slot, f.pad_k, r, f.pad_slot % op.ld, op.tile_mn, op.ld - op.tile_mn);
          });
          if (r >= nregs) {
            t_.note(kOperand, [&] {
              return fmt::format("thread {} loads {}[{}], beyond its {} fragment registers", tid,
                                 op.reg, r, nregs);
            });
            continue;
          }
          regs[r] = {f.source, f.zero_k, f.tail_k, f.tail_slot, f.clamped_k, f.clamped_mn};
        }
      }
    }
  }

  // A k-contiguous operand's fragment element (ws, i) is read at kc_group_index from the thread's
  // first row of the sub-tile: it must be the slot that holds the element of its own row, pos.
  void check_kc_read(int tid, const Operand& op, int ws, int i, int pos) {
    const int pos0 = op.is_a ? ix_.tile_row(g_, tid, ws, 0) : ix_.tile_col(g_, tid, ws, 0);
    for (int k = 0; k < op.BK; k += kVec) {
      const int read = ix_.kc_group_index(op.BK, op.kc_stride, pos0, i, k);
      const int slot = op.index(g_, ix_, k, pos);
      if (read != slot) {
        t_.note(kOperand, [&] {
          return fmt::format(
              "thread {} reads {}[{}] for {} {} at k = {} ({} {} of its sub-tile {}), where "
              "{}[{}] holds that element",
              tid, op.smem, read, op.mn, pos, k, op.is_a ? "row" : "column", i, ws, op.smem, slot);
        });
        return;
      }
    }
  }

  void place_rows(int tid) {
    int* const row_of = s_.row_of.data();
    for (int wm = 0; wm < g_.WMITER; ++wm) {
      for (int m = 0; m < g_.TM; ++m) row_of[wm * g_.TM + m] = ix_.tile_row(g_, tid, wm, m);
    }
  }

  Columns place_columns(int tid) {
    // Raw pointers and locals: a store through the uint8_t flags may alias anything, which would
    // make the compiler reload every vector's data pointer and every member in the loop.
    int* const col_of = s_.col_of.data();
    int* const pair_reg = s_.pair_reg.data();
    int* const pair_col = s_.pair_col.data();
    std::uint8_t* const pair_in = s_.pair_in.data();
    const int BN = g_.BN, TN = g_.TN, col_ext = col_ext_;
    const bool fast_c = fast_c_;
    Columns out;
    for (int wn = 0; wn < g_.WNITER; ++wn) {
      for (int n = 0; n < TN; n += kVec) {
        const int col = ix_.tile_col(g_, tid, wn, n);
        for (int j = 0; j < kVec && n + j < TN; ++j) col_of[wn * TN + n + j] = col + j;
        bool bad = false;
        for (int bx = 0; bx < kVec; ++bx) bad = bad || (bx * BN + col) % kVec != 0;
        if (fast_c && bad && out.misaligned++ == 0) out.misaligned_col = col;
        for (int j = 0; j < kVec; ++j) {
          const int ccol = col + j;
          if (!fast_c && ccol >= col_ext) continue;  // the guard: col < N
          pair_reg[out.npairs] = wn * TN + n + j;
          pair_col[out.npairs] = ccol;
          pair_in[out.npairs] = ccol >= 0 && ccol < BN && ccol < col_ext;
          ++out.npairs;
        }
      }
    }
    return out;
  }

  void judge_registers() {
    const Reg* const reg_m = s_.reg_m.data();
    const Reg* const reg_n = s_.reg_n.data();
    const int* const row_of = s_.row_of.data();
    const int* const col_of = s_.col_of.data();
    std::uint8_t* const a_flag = s_.a_flag.data();
    std::uint8_t* const b_flag = s_.b_flag.data();
    const int regs_m = regs_m_, regs_n = regs_n_;
    for (int i = 0; i < regs_m; ++i) a_flag[i] = verdict(reg_m[i], row_of[i]);
    for (int i = 0; i < regs_n; ++i) b_flag[i] = verdict(reg_n[i], col_of[i]);
  }

  // Flags the pairs whose register needs a check; returns whether every pair lies inside the
  // tile and the matrix with nothing to check: then a row whose register needs no check only
  // counts its writes.
  bool flag_pairs(int npairs) {
    const int* const pair_reg = s_.pair_reg.data();
    const std::uint8_t* const pair_in = s_.pair_in.data();
    const std::uint8_t* const b_flag = s_.b_flag.data();
    std::uint8_t* const pair_flag = s_.pair_flag.data();
    const bool spill = spill_;
    bool plain = true;
    for (int q = 0; q < npairs; ++q) {
      pair_flag[q] = spill || b_flag[pair_reg[q]] != 0;
      plain = plain && pair_in[q] && !pair_flag[q];
    }
    return plain;
  }

  // Each row of the thread's accumulators against the column pairs: the writes counted, a
  // suspect accumulator checked, a write outside the tile or the matrix reported.
  void count_rows(int tid, const Columns& cols, bool plain) {
    // Raw pointers and locals, as in place_columns: the counts are uint8_t.
    std::uint8_t* const c_count = s_.c_count.data();
    const int* const row_of = s_.row_of.data();
    const int* const pair_reg = s_.pair_reg.data();
    const int* const pair_col = s_.pair_col.data();
    const std::uint8_t* const pair_in = s_.pair_in.data();
    const std::uint8_t* const pair_flag = s_.pair_flag.data();
    const std::uint8_t* const a_flag = s_.a_flag.data();
    const int BM = g_.BM, BN = g_.BN, row_ext = row_ext_, regs_m = regs_m_, npairs = cols.npairs;
    const bool fast_c = fast_c_, spill = spill_;
    for (int ia = 0; ia < regs_m; ++ia) {
      const int row = row_of[ia];
      if (!fast_c && row >= row_ext) continue;  // the guard: row < M
      t_.note_n(kMisaligned, cols.misaligned, [&] {
        return fmt::format(
            "thread {} writes C as float4 at tile column {}, misaligned in some block column "
            "(BN = {})",
            tid, cols.misaligned_col, BN);
      });
      if (row < 0 || row >= BM || row >= row_ext) {
        for (int q = 0; q < npairs; ++q) out_of_bounds(tid, row, pair_col[q]);
        continue;
      }
      std::uint8_t* const c_row = c_count + row * BN;
      const bool check_row = spill || a_flag[ia] != 0;
      if (plain && !check_row) {
        for (int q = 0; q < npairs; ++q) {
          std::uint8_t& n = c_row[pair_col[q]];
          n += n != 255;
        }
        continue;
      }
      for (int q = 0; q < npairs; ++q) {
        const int ccol = pair_col[q];
        if (!pair_in[q]) {
          out_of_bounds(tid, row, ccol);
          continue;
        }
        c_row[ccol] += c_row[ccol] != 255;
        if (check_row || pair_flag[q]) check_acc(tid, ia, pair_reg[q], row, ccol);
      }
    }
  }

  // acc[f], f = ia * regs_n + ib, accumulated regM[ia] * regN[ib]; written to C[row][ccol] it
  // must be the dot product of op(A)'s row `row` with op(B)'s column `ccol` over the valid k, plus
  // zeros. The slow path, taken only for a suspect element.
  void check_acc(int tid, int ia, int ib, int row, int ccol) {
    if (ib >= regs_n_) {
      ia += ib / regs_n_;
      ib %= regs_n_;
    }
    if (ia >= regs_m_) {
      t_.note(kOperand, [&] {
        return fmt::format("thread {} writes acc[{}] (beyond its {} accumulators) to C[{}][{}]",
                           tid, ia * regs_n_ + ib, g_.ACCUMULATORS, row, ccol);
      });
      return;
    }
    const Reg& fa = s_.reg_m[static_cast<size_t>(ia)];
    const Reg& fb = s_.reg_n[static_cast<size_t>(ib)];
    check_operands(tid, ia * regs_n_ + ib, row, ccol, fa, fb);
    if (fa.tail_k >= 0 || fb.tail_k >= 0) {
      t_.note(kKTail, [&] {
        const bool in_a = fa.tail_k >= 0;
        const Reg& ft = in_a ? fa : fb;
        return fmt::format(
            "thread {} accumulates C[{}][{}] with {}[{}] at k = {}, past the slice's last k {} "
            "inside the matrix, and it is not a zero but {}",
            tid, row, ccol, in_a ? "As" : "Bs", ft.tail_slot, ft.tail_k, a_.k_valid - 1,
            (in_a ? s_.as : s_.bs).content[static_cast<size_t>(ft.tail_slot)] == kStale
                ? "stale data of an earlier slice"
                : "an element beyond K");
      });
    }
  }

  // Whether accumulator `acc`, written to C[row][ccol] inside the matrix, multiplied that row of
  // op(A) by that column of op(B) at every valid k, none of it read from a clamped position.
  void check_operands(int tid, int acc, int row, int ccol, const Reg& fa, const Reg& fb) {
    const bool a_bad = fa.source != kUnknown && fa.source != row;
    const bool b_bad = fb.source != kUnknown && fb.source != ccol;
    if (fa.clamped_k >= 0 || fb.clamped_k >= 0) {
      t_.note(kOperand, [&] {
        const bool in_a = fa.clamped_k >= 0;
        const Reg& fc = in_a ? fa : fb;
        return fmt::format(
            "thread {} writes acc[{}] to C[{}][{}], inside the matrix, but multiplied {} {} {} at "
            "k = {}, read from a clamped position",
            tid, acc, row, ccol, in_a ? "A" : "B", in_a ? "row" : "column", fc.clamped_mn,
            fc.clamped_k);
      });
    } else if (a_bad || b_bad) {
      t_.note(kOperand, [&] {
        return fmt::format(
            "thread {} writes acc[{}] to C[{}][{}] but it multiplied A row {} by B column {}", tid,
            acc, row, ccol, show_source(fa.source), show_source(fb.source));
      });
    } else if (fa.zero_k >= 0 || fb.zero_k >= 0) {
      t_.note(kOperand, [&] {
        const bool in_a = fa.zero_k >= 0;
        return fmt::format(
            "thread {} writes acc[{}] to C[{}][{}] but multiplied a zero for the {} element at "
            "k = {}, which lies inside the matrix",
            tid, acc, row, ccol, in_a ? "A" : "B", in_a ? fa.zero_k : fb.zero_k);
      });
    }
  }

  void out_of_bounds(int tid, int row, int ccol) {
    if (row < 0 || ccol < 0 || row >= row_ext_ || ccol >= col_ext_) {
      t_.note(kCMatrix, [&] {
        return fmt::format("thread {} writes C[{}][{}] of the tile, outside the matrix", tid, row,
                           ccol);
      });
    } else {
      t_.note(kCOut, [&] {
        return fmt::format("thread {} writes C[{}][{}] outside the {}x{} tile", tid, row, ccol,
                           g_.BM, g_.BN);
      });
    }
  }

  // Every C element of the tile inside the matrix is written exactly once.
  void check_c_coverage() {
    const std::uint8_t* const c_count = s_.c_count.data();
    const int BN = g_.BN, m_valid = a_.mn_valid, n_valid = b_.mn_valid;
    long long holes = 0, overlaps = 0;
    int hole_at = -1, overlap_at = -1;
    for (int row = 0; row < m_valid; ++row) {
      const std::uint8_t* const c_row = c_count + row * BN;
      if (all_once(c_row, n_valid)) continue;
      for (int col = 0; col < n_valid; ++col) {
        const int i = row * BN + col;
        const int n = c_count[i];
        if (n == 0 && holes++ == 0) hole_at = i;
        if (n > 1 && overlaps++ == 0) overlap_at = i;
      }
    }
    if (holes > 0) {
      t_.add(kCHole, holes,
             fmt::format("C[{}][{}] is written by no thread", hole_at / BN, hole_at % BN));
    }
    if (overlaps > 0) {
      const int n = c_count[overlap_at];
      t_.add(kCOverlap, overlaps,
             fmt::format("C[{}][{}] is written {}{} times", overlap_at / BN, overlap_at % BN, n,
                         n == 255 ? "+" : ""));
    }
  }

  const WarpTileConfig& c_;
  const SimCase& sc_;
  const Ix& ix_;
  Tally& t_;
  const Geometry g_;
  Scratch& s_;
  const Operand a_, b_;
  const bool tma_;
  const int row_ext_, col_ext_;
  const bool fast_c_;
  const int regs_m_, regs_n_;
  const bool spill_;
};

template <typename Ix>
SimReport run_block_as(const WarpTileConfig& c, const SimCase& sc, const Ix& ix) {
  Tally t;
  if (auto why = degenerate(c, sc, ix)) {
    t.add(kDegenerate, 1, *why);
    return t.report();
  }
  BlockRun<Ix>(c, sc, ix, t).run();
  return t.report();
}

}  // namespace

SimReport run_block(const WarpTileConfig& c, const SimCase& sc, const SimIndexing& ix) {
  return is_kernel_indexing(ix) ? run_block_as(c, sc, KernelIndexing{}) : run_block_as(c, sc, ix);
}

}  // namespace sgt::sim_detail
