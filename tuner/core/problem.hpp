// A GEMM problem (shape, layout, data type) and the shape rules that decide whether a config's
// kernel can serve it.
#pragma once

#include <array>
#include <cstddef>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "config.hpp"

namespace sgt {

// The operand layouts of the row-major API C (MxN) = alpha * op(A) * op(B) + beta * C, written
// op(A) op(B). 'N' for A: A is stored MxK row-major (lda >= K); 'T': A is stored KxM (lda >= M).
// 'N' for B: B is stored KxN (ldb >= N); 'T': B is stored NxK (ldb >= K). C is MxN (ldc >= N).
inline constexpr std::array<std::string_view, 4> kLayouts = {"NN", "NT", "TN", "TT"};

// True for one of kLayouts (exact spelling, upper case).
bool is_layout(std::string_view text);
// `text` when it is one of kLayouts; else throws InputError quoting it and listing the four.
std::string parse_layout(std::string_view text);

struct Problem {
  long long M = 0, N = 0, K = 0;
  std::string layout = "NN";  // one of kLayouts: op(A) op(B) in our row-major API
  std::string dtype = "f32";

  std::string shape() const;  // "MxNxK"
  double flops() const { return 2.0 * static_cast<double>(M) * N * K; }
  friend bool operator==(const Problem&, const Problem&) = default;
};

// Parses "MxNxK" (each 1 .. 2^31-1). Throws InputError naming the text on anything else.
Problem parse_shape(std::string_view text);

// One entry of a suite file: a problem and the search space to tune it with, a JSON file (a
// relative path is taken beside the suite file when that file exists) or a built-in name; empty
// for the command's --space.
struct SuiteEntry {
  Problem problem;
  std::string space;
};

// What load_suite read, and what of it it left out: a capture or a shape log may hold problems
// sgemm-tune cannot tune (batched, not FP32, TF32 allowed, an epilogue).
struct SuiteSource {
  // "suite" (a list of shapes), "capture" (sgemm-tune-capture, from libsgemm_tune_preload),
  // "tunableop" (a PyTorch TunableOp untuned or results file) or "cublas-log" (a cuBLAS API log,
  // CUBLAS_LOGINFO_DBG).
  std::string format;
  std::size_t problems = 0;  // distinct problems found, tunable or not
  long long calls = 0;       // calls behind them (captures and logs; 0 when not counted)
  // Why problems were left out, each reason with the number of problems, most first.
  std::vector<std::pair<std::string, std::size_t>> left_out;
  // One line for the log: what was read and what was left out, e.g. "captured.json: 12 problems,
  // 3456 calls (capture), 9 to tune, most time first; left out 3: 2 batched, 1 TF32 allowed".
  std::string note;
};

// Reads a suite from a file. JSON: either an array or {"shapes": [...]}, each entry "MxNxK" or
// {"shape": "MxNxK", "layout": "TN", "space": "skinny"}; an entry without a layout gets
// `default_layout`. Or one of the shape sources below, recognised by its content, whose problems
// carry their own layouts and come ordered by weight (each problem once, its calls summed):
// - a capture, {"format": "sgemm-tune-capture", ...} (docs/preload.md): most total time first
//   (the time measured, scaled to every call of the problem), then most calls;
// - a PyTorch TunableOp untuned-GEMM file (PYTORCH_TUNABLEOP_RECORD_UNTUNED) or results file;
// - a cuBLAS API log (CUBLAS_LOGINFO_DBG=1, CUBLAS_LOGDEST_DBG=FILE): most calls first.
// Problems of a source that sgemm-tune cannot tune are left out and counted in `source` and in a
// warning logged with the note. Throws InputError naming the file and entry (a layout outside
// kLayouts, a space that is not a non-empty string, a shape listed twice, a malformed line or
// capture entry), or when a shape source has nothing to tune.
std::vector<SuiteEntry> load_suite(const std::string& path, std::string_view default_layout = "NN",
                                   SuiteSource* source = nullptr);
// load_suite's problems alone.
std::vector<Problem> load_shape_list(const std::string& path,
                                     std::string_view default_layout = "NN");

// Whether both operands of an M x N x K problem in this layout allow the kernel's float4
// main-loop loads when they are stored at their row lengths (A: lda = K, or M when trans_a; B: ldb
// = N, or K when trans_b) from 16-byte aligned pointers: each leading dimension a multiple of 4,
// and so M where A^T's float4s run along M and N where B's run along N. It picks the kernel
// instance a problem is tuned and served with: VEC = true when it holds, else the scalar-load one.
bool kernel_vec_loads(bool trans_a, bool trans_b, long long M, long long N, long long K);
bool kernel_vec_loads(const Problem& p);

// Shape rules. The kernel serves any M, N, K (edge tiles are guarded, leading dimensions and
// pointers are runtime values), so `shape_layout` remains (the layout must be one of kLayouts and
// the data type f32), and each family's (check_shape): ws_tma's `shape_tma_operands` (PACK = 1
// configs read panels, which always allow copies) and `shape_tma_shared_memory` (the stages of
// p's layout, TN with PACK, within the limit).
std::vector<RuleViolation> check_shape(const WarpTileConfig& c, const Problem& p,
                                       const Limits& limits = {});
// Whether the operands of p, stored at their row lengths from 16-byte aligned pointers, allow
// tensor copies (ws_tma): lda and ldb multiples of 4 (defined in families/ws_tma/).
bool tma_operands(const Problem& p);

}  // namespace sgt
