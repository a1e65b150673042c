// The edge-shape suite a winner is verified on besides its tuned shape: shapes derived from its
// tile (1, tile - 3, tile + 1, primes, K not a multiple of BK, K = 0, M or N = 0), padded and
// unaligned leading dimensions, offset (unaligned) pointers, alpha/beta combinations with beta = 0
// over a NaN-filled C, and enough k-slices to exercise every split of a split-K config.
#pragma once

#include <string>
#include <vector>

#include "config.hpp"
#include "trial.hpp"

namespace sgt {

// The cases for one config in one layout ("NN", "NT", "TN", "TT"), with passed = false and
// error = -1 (not yet run). Deterministic: the same config and layout give the same list. ws_tma
// configs without PACK get the same shapes with A's and B's leading dimensions rounded up to
// multiples of 4 and offsets of whole float4s: what their tensor copies are served.
std::vector<EdgeCheck> edge_cases(const WarpTileConfig& c, const std::string& layout);

// The stress cases of a kernel's accuracy (precision.hpp) on a problem: the problem's shape and
// layout (each size rounded up to a multiple of 64) with inputs that load an operand split (split
// TF32) where it is weakest, on which the worker compares the kernel's error against an FP64
// reference with cuBLAS FP32's on the same inputs. The label names the inputs, which the worker
// builds (worker_protocol.hpp): "exponents" (mantissas times 2^e, e over -30..30), "underflow"
// (products near 2^-120) and "cancellation" (every sum nearly cancels). The depth of the sums is
// the problem's own K: a kernel's accuracy is measured at the shape it is tuned for, and a
// non-strict winner is served at no other shape (query, the dispatch library). Aligned
// pointers at their row lengths, as the family's kernel is served (adjust_edge_case); alpha 1,
// beta 0. Deterministic.
std::vector<EdgeCheck> accuracy_stress_cases(const WarpTileConfig& c, const Problem& problem);

// The stored row length of each operand for a problem, i.e. the smallest legal lda, ldb, ldc
// (at least 1, as BLAS requires).
long long min_lda(const Problem& p);
long long min_ldb(const Problem& p);
long long min_ldc(const Problem& p);

// "127x61x13 NT lda+3 off1 a1.5 b-0.75" — for messages and tables.
std::string describe(const EdgeCheck& e);

}  // namespace sgt
