// cuBLAS's column-major GEMM arguments as sgemm-tune's row-major problem, and the classes a
// capture records instead of scalar values. Pure functions, no CUDA header: the capture library,
// its tests and (later) the serving path share them.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace sgt::preload {

// cublasOperation_t's values (cublas_api.h), so that this header needs no cuBLAS.
inline constexpr int kCublasOpN = 0;
inline constexpr int kCublasOpT = 1;
inline constexpr int kCublasOpC = 2;  // conjugate transpose: for real data, the transpose
inline constexpr int kCublasOpConjg = 3;

// 'N' or 'T' for a cuBLAS operation on real data: OP_C is OP_T there. nullopt for OP_CONJG
// (conjugate without transpose, which cuBLAS does not support) and any other value.
constexpr std::optional<char> real_op(int cublas_op) {
  if (cublas_op == kCublasOpN) return 'N';
  if (cublas_op == kCublasOpT || cublas_op == kCublasOpC) return 'T';
  return std::nullopt;
}

// How a matrix is stored: column-major (cuBLAS, cuBLASLt's CUBLASLT_ORDER_COL) or row-major
// (cuBLASLt's CUBLASLT_ORDER_ROW).
enum class Order { Col, Row };

// One call in cuBLAS's terms: C (m x n) = alpha * op(A) * op(B) + beta * C with op(A) m x k and
// op(B) k x n, each matrix at its leading dimension; the orders are cuBLASLt's (classic cuBLAS is
// all Col). For cuBLASLt, C here is the output D.
struct ColumnMajorGemm {
  char transa = 'N', transb = 'N';  // 'N' or 'T' (real_op)
  std::int64_t m = 0, n = 0, k = 0;
  std::int64_t lda = 0, ldb = 0, ldc = 0;
  Order order_a = Order::Col, order_b = Order::Col, order_c = Order::Col;

  friend bool operator==(const ColumnMajorGemm&, const ColumnMajorGemm&) = default;
};

// The same call as sgemm-tune's problem (tuner/core/problem.hpp): row-major C (M x N) = alpha *
// op(A) * op(B) + beta * C, trans_a 'N' when A is stored M x K (lda >= K), 'T' when stored K x M
// (lda >= M); trans_b 'N' when B is stored K x N (ldb >= N), 'T' when stored N x K (ldb >= K);
// C is M x N (ldc >= N).
struct RowMajorGemm {
  std::int64_t M = 0, N = 0, K = 0;
  char trans_a = 'N', trans_b = 'N';
  std::int64_t lda = 0, ldb = 0, ldc = 0;
  // True when the problem's A is the call's B and its B the call's A (C stored column-major).
  bool swapped = false;

  std::string layout() const { return std::string{trans_a, trans_b}; }
  friend bool operator==(const RowMajorGemm&, const RowMajorGemm&) = default;
};

// The mapping. A column-major C (m x n) holds the same bytes as a row-major C^T (n x m) with the
// same leading dimension, and C^T = op(B)^T * op(A)^T. So with C column-major:
//   M = n, N = m, K = k; the problem's A is the call's B, its B the call's A; lda = the call's
//   ldb, ldb = the call's lda, ldc = ldc. An operand stored column-major with op N is the bytes of
//   its transpose stored row-major, so the problem's trans_a is the call's transb (and trans_b
//   the call's transa) when that operand is column-major, and flipped when it is row-major.
// With C row-major (cuBLASLt's ORDER_ROW for D): M = m, N = n, K = k, nothing swapped, and each
// operand's flag is its op, flipped when that operand is stored column-major.
// For classic cuBLAS (all column-major) that is: cublasSgemm(h, ta, tb, m, n, k, ..., A, lda, B,
// ldb, ..., C, ldc) is sgemm-tune's problem n x m x k in layout (tb)(ta), A = B with lda = ldb,
// B = A with ldb = lda, C with ldc.
constexpr RowMajorGemm to_row_major(const ColumnMajorGemm& c) {
  const auto flip = [](char t, bool flipped) { return (t == 'T') != flipped ? 'T' : 'N'; };
  RowMajorGemm r;
  r.K = c.k;
  r.ldc = c.ldc;
  if (c.order_c == Order::Col) {
    r.M = c.n;
    r.N = c.m;
    r.trans_a = flip(c.transb, c.order_b == Order::Row);
    r.trans_b = flip(c.transa, c.order_a == Order::Row);
    r.lda = c.ldb;
    r.ldb = c.lda;
    r.swapped = true;
  } else {
    r.M = c.m;
    r.N = c.n;
    r.trans_a = flip(c.transa, c.order_a == Order::Col);
    r.trans_b = flip(c.transb, c.order_b == Order::Col);
    r.lda = c.lda;
    r.ldb = c.ldb;
    r.swapped = false;
  }
  return r;
}

// What a capture keeps of alpha or beta: zero matters (beta = 0 means C is not read, alpha = 0
// means no product), one is the common case, the rest is "other". A value behind a device pointer
// is never read (that would synchronise the stream): "unknown". cuBLASLt's per-row alpha vectors
// are "vector".
enum class ScalarClass { One, Zero, Other, Unknown, Vector };

constexpr ScalarClass classify(double v) {
  // -0.0 == 0.0: cuBLAS treats a negative zero beta as zero too. NaN compares unequal: other.
  if (v == 0.0) return ScalarClass::Zero;
  if (v == 1.0) return ScalarClass::One;
  return ScalarClass::Other;
}

constexpr const char* name(ScalarClass c) {
  switch (c) {
    case ScalarClass::One:
      return "one";
    case ScalarClass::Zero:
      return "zero";
    case ScalarClass::Other:
      return "other";
    case ScalarClass::Vector:
      return "vector";
    case ScalarClass::Unknown:
      break;
  }
  return "unknown";
}

}  // namespace sgt::preload
