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

// The stored row length of each operand for a problem, i.e. the smallest legal lda, ldb, ldc
// (at least 1, as BLAS requires).
long long min_lda(const Problem& p);
long long min_ldb(const Problem& p);
long long min_ldc(const Problem& p);

// "127x61x13 NT lda+3 off1 a1.5 b-0.75" — for messages and tables.
std::string describe(const EdgeCheck& e);

}  // namespace sgt
