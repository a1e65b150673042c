// The warp-tiling kernel's operands in the simulation: the slice each block stores in As and Bs,
// its threads' loads of it, the coverage of the buffers, and what the compute loop reads back
// into its register fragments.
//
// Whole k-slices take the kernel's main loop, edge blocks included, in the scalar-load instance
// (VEC = false) always and in the float4 one (VEC) when both operands allow float4s: no guard, and
// a load whose m (n) lies past the matrix is read from where clamp_mn / clamp_mn_vec (float4s) or
// clamp_mn / clamp_last (single floats) move it, an element of another m (n). The simulation
// records which element each slot really received, flagged as clamped, so such data is fine in a
// register paired only with C elements outside the matrix (which the epilogue never stores) and a
// defect in one paired with an element inside it. The partial last slice takes the guarded edge
// loop (outside elements stored as 0, never read), through the same clamped pointers but with its
// guard on the unclamped coordinates; a VEC instance whose operands refuse float4s takes it for
// every slice, through unclamped pointers.
//
// The replay calls the kernel's functions (through the indexing Ix); the checks do not: they state
// the layouts directly (A stored m-major or k-major, As k-major rows of BM+PAD_A floats, ...).
#include <algorithm>

#include "index_sim_detail.hpp"

namespace sgt::sim_detail {

template <typename Ix>
Operand make_operand(const Geometry& g, const Ix& ix, const SimCase& sc, bool is_a, bool kc) {
  Operand op;
  op.is_a = is_a;
  op.trans = is_a ? sc.trans_a : sc.trans_b;
  op.tile_mn = is_a ? g.BM : g.BN;
  op.col_is_k = is_a != op.trans;
  op.rows = op.col_is_k ? op.tile_mn : g.BK;
  op.cols = op.col_is_k ? g.BK : op.tile_mn;
  op.kernel_cols = is_a ? ix.a_slice_cols(g, sc.trans_a) : ix.b_slice_cols(g, sc.trans_b);
  op.ld = is_a ? g.AS_LD : g.BS_LD;
  op.size = is_a ? g.AS_SIZE : g.BS_SIZE;
  op.row_len = op.tile_mn;
  op.passes = is_a ? g.A_PASSES : g.B_PASSES;
  op.BK = g.BK;
  // A k-contiguous buffer takes an operand whose stored columns run along k, as they are.
  op.kc = kc && op.col_is_k;
  if (op.kc) {
    op.kc_stride = is_a ? g.TM : g.TN;
    op.ld = g.BK;
    op.size = sgt_kernel::kc_size(op.tile_mn, g.BK, op.kc_stride);
    op.row_len = g.BK;
  }
  const int mn_rem = is_a ? sc.m_rem : sc.n_rem;
  op.k_valid = sc.k_rem > 0 ? sc.k_rem : g.BK;
  op.mn_valid = mn_rem > 0 ? mn_rem : op.tile_mn;
  op.row_ext = extent(op.col_is_k ? mn_rem : sc.k_rem);
  op.col_ext = extent(op.col_is_k ? sc.k_rem : mn_rem);
  op.mn_ext = extent(mn_rem);
  // A panel's rows run on in zeros to the next multiple of 4 (blocks start on one: BM, BN are).
  op.panel = sc.panel;
  op.read_col_ext =
      sc.panel && !op.col_is_k && mn_rem > 0 ? sgt_kernel::panel_ld(mn_rem) : op.col_ext;
  // The kernel's main_loop: always in the scalar instance, in the float4 one where the operands
  // allow float4s. Then the main loop (no guard) runs every whole slice of every block, edge blocks
  // included, and only a partial slice takes the guarded edge loop, both operands, through the
  // same clamped pointers. Otherwise every slice takes the edge loop, pointers unclamped.
  op.clamp = !sc.vec_kernel || sc.vec_loads;
  op.main_loop = op.clamp && (sc.k_rem == 0 || sc.k_rem == g.BK);
  op.vec_kernel = sc.vec_kernel;
  op.vector_store = !op.col_is_k || op.kc;
  if (!is_a) {
    op.name = "B";
    op.smem = "Bs";
    op.reg = "regN";
    op.mn = "n";
    op.out_of_tile = kBOut;
    op.out_of_matrix = kBMatrix;
    op.smem_out = kBsOut;
    op.hole = kBsHole;
    op.overlap = kBsOverlap;
    op.misplaced = kBsMisplaced;
  }
  return op;
}

template Operand make_operand(const Geometry&, const KernelIndexing&, const SimCase&, bool, bool);
template Operand make_operand(const Geometry&, const SimIndexing&, const SimCase&, bool, bool);

namespace {

// The loader of one k-slice. Pass p of thread tid takes the four elements at stored (row,
// col..col+3) of the slice through a pointer that, where the kernel's main loop runs, it clamps
// into the matrix in m (n), once for all slices, as its `place` does: where the stored rows run
// along m (n) its row is clamp_mn(row); else, in the float4 instance, its start column
// clamp_mn_vec(col), and in the scalar one clamp_mn(col), with last = clamp_last(col). The main
// loop reads with no guard: the float4 at the pointer (16-byte aligned), or single floats, element
// j at the pointer + j where the stored columns run along k and at the pointer + min(j, last)
// where they run along m (n) (load_slice_scalar). The edge loop reads element j at the pointer + j
// only where the unclamped (row, col + j) lies inside the matrix, and stores 0 otherwise. Either
// way the four go where slice_k / slice_mn and as_index / bs_index put the unclamped coordinates:
// one float4 store at the first element's slot where the stored columns run along m (n), else
// element by element. A slot records the element it really received, flagged when that was not
// the element its coordinates name (a clamped read).
template <typename Ix>
class Loader {
 public:
  Loader(const Geometry& g, const Ix& ix, const Operand& op, SmemState& s, Tally& t)
      : g_(g),
        ix_(ix),
        op_(op),
        s_(s),
        t_(t),
        // Successive k-slices (and split-K ranges, which start on whole slices) move a k-column
        // by BK; successive blocks move an m- or n-column by the tile. A float4 is aligned in
        // every one of them only if it is in the first four.
        step_(op.col_is_k ? g.BK : op.tile_mn),
        // Only the main loop's float4 loads need 16-byte alignment in global memory.
        vec_reads_(op.main_loop && op.vec_kernel),
        // The scalar main loop's reads along m (n): element j at the pointer + min(j, last).
        scalar_mn_(op.main_loop && !op.vec_kernel && !op.col_is_k) {}

  void run(int nt) {
    s_.count.assign(static_cast<size_t>(op_.size), 0);
    s_.content.assign(static_cast<size_t>(op_.size), kStale);
    for (int tid = 0; tid < nt; ++tid) {
      for (int p = 0; p < op_.passes; ++p) pass(tid, p);
    }
  }

 private:
  // Where a pass reads from: stored (row, col) of its first element and the last element a
  // scalar read along m (n) moves on to.
  struct Pointer {
    int row, col, last;
  };

  int slot_of(int row, int c) const {
    return op_.index(g_, ix_, ix_.slice_k(op_.trans, op_.is_a, row, c),
                     ix_.slice_mn(op_.trans, op_.is_a, row, c));
  }

  // The pass's pointer, clamped into the matrix in m (n) where the main loop runs.
  Pointer pointer(int row, int col) const {
    Pointer p{row, col, kVec - 1};
    if (op_.clamp) {
      if (op_.col_is_k) {
        p.row = ix_.clamp_mn(row, op_.mn_ext);
      } else if (op_.vec_kernel) {
        p.col = op_.panel ? ix_.clamp_mn_panel(col, op_.mn_ext) : ix_.clamp_mn_vec(col, op_.mn_ext);
      } else {
        p.last = ix_.clamp_last(col, op_.mn_ext);
        p.col = ix_.clamp_mn(col, op_.mn_ext);
      }
    }
    return p;
  }

  void pass(int tid, int p) {
    const int row = ix_.load_row(g_, op_.kernel_cols, tid, p);
    const int col = ix_.load_col(g_, op_.kernel_cols, tid, p);
    const Pointer ptr = pointer(row, col);
    if (vec_reads_) check_global_float4(tid, ptr.col, col);
    const int slot0 = slot_of(row, col);
    if (op_.vector_store && slot0 % kVec != 0) {
      t_.note(kMisaligned, [&] {
        return fmt::format("thread {} stores a float4 to {}[{}], not 16-byte aligned", tid,
                           op_.smem, slot0);
      });
    }
    for (int j = 0; j < kVec; ++j) {
      const int c = col + j;
      // Where element j is read from (load_slice_scalar reads element 0 at the pointer itself).
      const int rr = ptr.row;
      const int rc = ptr.col + (scalar_mn_ && j > 0 ? std::min(j, ptr.last) : j);
      std::int32_t value = kZero;
      // The edge loop's guard: only the stored row and column's upper bounds, of the unclamped
      // coordinates, as in the kernel. The main loop has none.
      if (op_.main_loop || (row < op_.row_ext && c < op_.col_ext))
        value = read(tid, row, c, rr, rc);
      store(tid, row, c, op_.vector_store ? slot0 + j : slot_of(row, c), value);
    }
  }

  // The main loop's float4 reads must be 16-byte aligned in every k-slice or block they recur in.
  void check_global_float4(int tid, int pcol, int col) {
    for (int b = 0; b < kVec; ++b) {
      const long long gcol = 1LL * b * step_ + pcol;
      if (gcol % kVec != 0) {
        t_.note(kMisaligned, [&] {
          return fmt::format(
              "thread {} reads {} as float4 at slice column {}{}, global column {} in {} {}", tid,
              op_.name, pcol, pcol != col ? fmt::format(" (clamped from {})", col) : "", gcol,
              op_.col_is_k ? "k-slice" : "block", b);
        });
        break;
      }
    }
  }

  // What reading stored (rr, rc) for the element at (row, c) brings: its code, flagged when the
  // pointer was clamped, or kFromOutside for a read outside the matrix or the slice (reported).
  std::int32_t read(int tid, int row, int c, int rr, int rc) {
    const bool moved = rr != row || rc != c;
    // (For a panel: inside it, its zero padding included.)
    const bool in_matrix = rr >= 0 && rc >= 0 && rr < op_.row_ext && rc < op_.read_col_ext;
    const bool read_inside = rr >= 0 && rr < op_.rows && rc >= 0 && rc < op_.cols;
    const int k_read = op_.col_is_k ? rc : rr;
    const int mn_read = op_.col_is_k ? rr : rc;
    auto clamped_from = [&] {
      return moved ? fmt::format(" (clamped from {}[{}][{}])", op_.name, row, c) : std::string();
    };
    if (!in_matrix) {
      t_.note(op_.out_of_matrix, [&] {
        return fmt::format(
            "thread {} reads {}[{}][{}] of the slice (k {}, {} {}){}, outside the matrix", tid,
            op_.name, rr, rc, k_read, op_.mn, mn_read, clamped_from());
      });
      return kFromOutside;
    }
    if (!read_inside) {
      t_.note(op_.out_of_tile, [&] {
        return fmt::format("thread {} reads {}[{}][{}]{} outside the {}x{} slice", tid, op_.name,
                           rr, rc, clamped_from(), op_.rows, op_.cols);
      });
      return kFromOutside;
    }
    std::int32_t value = k_read * op_.tile_mn + mn_read;
    if (moved) value |= kClamped;
    return value;
  }

  // Stores `value`, the element at stored (row, c), to `slot`, which must be its place in the
  // buffer: inside it, off the pad, at (k, mn) of the element.
  void store(int tid, int row, int c, int slot, std::int32_t value) {
    if (slot < 0 || slot >= op_.size) {
      t_.note(op_.smem_out, [&] {
        return fmt::format("thread {} stores {}[{}][{}] to {}[{}], outside {}[{}]", tid, op_.name,
                           row, c, op_.smem, slot, op_.smem, op_.size);
      });
      return;
    }
    if (op_.is_pad(slot)) {
      t_.note(kAsPadWritten, [&] {
        return fmt::format(
            "thread {} stores {}[{}][{}] to {}[{}], a pad slot (column {} of a row of {} + {} "
            "pad)",
            tid, op_.name, row, c, op_.smem, slot, slot % op_.ld, op_.row_len,
            op_.ld - op_.row_len);
      });
      return;
    }
    const bool inside = row >= 0 && row < op_.rows && c >= 0 && c < op_.cols;
    const int k_true = op_.col_is_k ? c : row;
    const int mn_true = op_.col_is_k ? row : c;
    if (inside && !op_.holds(slot, k_true, mn_true)) {
      t_.note(op_.misplaced, [&] {
        if (op_.kc) {
          return fmt::format(
              "thread {} stores {}[{}][{}] (k {}, {} {}) to {}[{}], not at k's place in a 16-byte "
              "chunk",
              tid, op_.name, row, c, k_true, op_.mn, mn_true, op_.smem, slot);
        }
        return fmt::format("thread {} stores {}[{}][{}] (k {}, {} {}) to {}[{}], expected {}[{}]",
                           tid, op_.name, row, c, k_true, op_.mn, mn_true, op_.smem, slot, op_.smem,
                           k_true * op_.ld + mn_true);
      });
    }
    auto& n = s_.count[static_cast<size_t>(slot)];
    if (n < 255) ++n;
    s_.content[static_cast<size_t>(slot)] = value;
  }

  const Geometry& g_;
  const Ix& ix_;
  const Operand& op_;
  SmemState& s_;
  Tally& t_;
  const int step_;
  const bool vec_reads_;
  const bool scalar_mn_;
};

}  // namespace

template <typename Ix>
void load(const Geometry& g, const Ix& ix, const Operand& op, int nt, SmemState& s, Tally& t) {
  Loader<Ix>(g, ix, op, s, t).run(nt);
}

template void load(const Geometry&, const KernelIndexing&, const Operand&, int, SmemState&, Tally&);
template void load(const Geometry&, const SimIndexing&, const Operand&, int, SmemState&, Tally&);

void check_smem_coverage(const Operand& op, const SmemState& s, Tally& t) {
  long long holes = 0, overlaps = 0;
  int first_hole = -1, first_overlap = -1;
  if (op.kc) {
    // A k-contiguous buffer: which slots are pad is the kernel's layout. Every element of the
    // slice is stored (a zero outside the matrix), so tile_mn * BK slots are stored, none twice.
    long long once = 0;
    for (int i = 0; i < op.size; ++i) {
      const int n = s.count[static_cast<size_t>(i)];
      once += n == 1;
      if (n > 1 && overlaps++ == 0) first_overlap = i;
    }
    const long long want = static_cast<long long>(op.tile_mn) * op.BK;
    if (overlaps == 0 && once < want) {
      t.add(op.hole, want - once,
            fmt::format("{} slots of {} hold the {} elements of its {}x{} slice", once, op.smem,
                        want, op.tile_mn, op.BK));
    }
    if (overlaps > 0) {
      const int n = s.count[static_cast<size_t>(first_overlap)];
      t.add(op.overlap, overlaps,
            fmt::format("{}[{}] is stored {}{} times", op.smem, first_overlap, n,
                        n == 255 ? "+" : ""));
    }
    return;
  }
  // Row by row of ld slots, the pad at the end of each left out.
  const std::uint8_t* const count = s.count.data();
  for (int row = 0; row < op.size; row += op.ld) {
    const int end = std::min(op.size, row + op.row_len);
    if (all_once(count + row, end - row)) continue;
    for (int i = row; i < end; ++i) {
      const int n = count[i];
      if (n == 1) continue;
      if (n == 0) {
        if (holes++ == 0) first_hole = i;
      } else if (overlaps++ == 0) {
        first_overlap = i;
      }
    }
  }
  auto name = [&](int i) {
    return fmt::format("{}[{}] (k {}, {} {})", op.smem, i, i / op.ld, op.mn, i % op.ld);
  };
  if (holes > 0) {
    t.add(op.hole, holes, fmt::format("{} is stored by no thread", name(first_hole)));
  }
  if (overlaps > 0) {
    const int n = s.count[static_cast<size_t>(first_overlap)];
    t.add(op.overlap, overlaps,
          fmt::format("{} is stored {}{} times", name(first_overlap), n, n == 255 ? "+" : ""));
  }
}

template <typename Ix>
Fragment fragment(const Geometry& g, const Ix& ix, const Operand& op, const SmemState& s, int pos,
                  int j) {
  Fragment f;
  bool unknown = false, wrong = false;
  for (int k = 0; k < op.BK; ++k) {
    const int slot = op.index(g, ix, k, pos) + j;
    if (slot < 0 || slot >= op.size) {
      if (f.bad++ == 0) f.bad_k = k, f.bad_slot = slot;
      unknown = true;
      continue;
    }
    // A float4 base: every k of a k-major read (j = 0), every fourth k of a k-contiguous one, whose
    // float4 must hold the next three k too.
    const bool bad_vec =
        op.kc ? (k % kVec == 0 ? slot % kVec != 0
                               : slot != op.index(g, ix, k - k % kVec, pos) + k % kVec)
              : j == 0 && slot % kVec != 0;
    if (bad_vec && f.misaligned++ == 0) f.misaligned_k = k;
    if (op.is_pad(slot)) {
      if (f.pad++ == 0) f.pad_k = k, f.pad_slot = slot;
      unknown = true;
      continue;
    }
    const bool tail = k >= op.k_valid;
    const std::int32_t v = s.content[static_cast<size_t>(slot)];
    if (s.count[static_cast<size_t>(slot)] > 1 || v == kFromOutside) {
      unknown = true;  // an overlap or a read outside: reported where it happened
      continue;
    }
    if (v == kZero) {
      if (!tail && f.zero_k < 0) f.zero_k = k;
      continue;
    }
    if (tail) {
      // Stale data of an earlier slice (or an element beyond K): added into the accumulator.
      if (f.tail_k < 0) f.tail_k = k, f.tail_slot = slot;
      continue;
    }
    if (v == kStale) {
      unknown = true;  // a hole: reported by the coverage check
      continue;
    }
    const int e = v & ~kClamped;
    const int pk = e / op.tile_mn;
    const int pmn = e % op.tile_mn;
    if ((v & kClamped) != 0 && f.clamped_k < 0) f.clamped_k = k, f.clamped_mn = pmn;
    if (pk != k) {
      wrong = true;
    } else if (f.source == kNone) {
      f.source = pmn;
    } else if (f.source != pmn) {
      wrong = true;
    }
  }
  if (wrong) {
    f.source = kWrong;
  } else if (unknown) {
    f.source = kUnknown;
  }
  return f;
}

template Fragment fragment(const Geometry&, const KernelIndexing&, const Operand&, const SmemState&,
                           int, int);
template Fragment fragment(const Geometry&, const SimIndexing&, const Operand&, const SmemState&,
                           int, int);

}  // namespace sgt::sim_detail
