// The column-major to row-major translation (preload/include/sgemm_tune/preload/row_major.hpp):
// the stated mapping, then a proof by arithmetic that every op and order combination computes the
// same C in both conventions over the same bytes; and the scalar classes.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "sgemm_tune/preload/row_major.hpp"

namespace sgt::preload {
namespace {

TEST(RowMajor, ClassicCublasSwapsOperandsAndSizes) {
  // cublasSgemm(h, OP_T, OP_N, m=100, n=50, k=30, A lda=40, B ldb=30, C ldc=128)
  const auto r = to_row_major({'T', 'N', 100, 50, 30, 40, 30, 128});
  EXPECT_EQ(r.M, 50);
  EXPECT_EQ(r.N, 100);
  EXPECT_EQ(r.K, 30);
  EXPECT_EQ(r.layout(), "NT");  // (op B)(op A)
  EXPECT_EQ(r.lda, 30);         // the call's ldb
  EXPECT_EQ(r.ldb, 40);         // the call's lda
  EXPECT_EQ(r.ldc, 128);
  EXPECT_TRUE(r.swapped);
  for (const char ta : {'N', 'T'}) {
    for (const char tb : {'N', 'T'}) {
      const auto x = to_row_major({ta, tb, 7, 9, 11, 21, 22, 23});
      EXPECT_EQ(x.layout(), std::string({tb, ta}));
      EXPECT_EQ(x.M, 9);
      EXPECT_EQ(x.N, 7);
      EXPECT_EQ(x.K, 11);
    }
  }
}

TEST(RowMajor, RowMajorOutputKeepsOperands) {
  ColumnMajorGemm c{'N', 'T', 10, 20, 30, 30, 30, 20};
  c.order_a = c.order_b = c.order_c = Order::Row;
  const auto r = to_row_major(c);
  EXPECT_EQ(r, (RowMajorGemm{10, 20, 30, 'N', 'T', 30, 30, 20, false}));
  // A column-major operand in a row-major call is its transpose stored row-major.
  c.order_a = Order::Col;
  EXPECT_EQ(to_row_major(c).layout(), "TT");
}

TEST(RowMajor, OpsForRealData) {
  EXPECT_EQ(real_op(kCublasOpN), 'N');
  EXPECT_EQ(real_op(kCublasOpT), 'T');
  EXPECT_EQ(real_op(kCublasOpC), 'T');
  EXPECT_FALSE(real_op(kCublasOpConjg));
  EXPECT_FALSE(real_op(-1));
  EXPECT_FALSE(real_op(7));
}

// The element (r, c) of a matrix stored in `order` at leading dimension ld.
size_t at(Order order, long r, long c, long ld) {
  return static_cast<size_t>(order == Order::Col ? r + c * ld : r * ld + c);
}

// C as cuBLAS(Lt) computes it: D (m x n) = op(A) op(B), each matrix stored in its order.
std::vector<double> column_major_gemm(const ColumnMajorGemm& g, const std::vector<double>& A,
                                      const std::vector<double>& B, size_t c_size) {
  std::vector<double> C(c_size, -1);
  for (long i = 0; i < g.m; ++i) {
    for (long j = 0; j < g.n; ++j) {
      double s = 0;
      for (long p = 0; p < g.k; ++p) {
        const double a =
            g.transa == 'N' ? A[at(g.order_a, i, p, g.lda)] : A[at(g.order_a, p, i, g.lda)];
        const double b =
            g.transb == 'N' ? B[at(g.order_b, p, j, g.ldb)] : B[at(g.order_b, j, p, g.ldb)];
        s += a * b;
      }
      C[at(g.order_c, i, j, g.ldc)] = s;
    }
  }
  return C;
}

// C as sgemm-tune computes it (tuner/core/problem.hpp): row-major C (M x N) = op(A) op(B).
std::vector<double> row_major_gemm(const RowMajorGemm& g, const std::vector<double>& A,
                                   const std::vector<double>& B, size_t c_size) {
  std::vector<double> C(c_size, -1);
  for (long i = 0; i < g.M; ++i) {
    for (long j = 0; j < g.N; ++j) {
      double s = 0;
      for (long p = 0; p < g.K; ++p) {
        const double a = g.trans_a == 'N' ? A[static_cast<size_t>(i * g.lda + p)]
                                          : A[static_cast<size_t>(p * g.lda + i)];
        const double b = g.trans_b == 'N' ? B[static_cast<size_t>(p * g.ldb + j)]
                                          : B[static_cast<size_t>(j * g.ldb + p)];
        s += a * b;
      }
      C[static_cast<size_t>(i * g.ldc + j)] = s;
    }
  }
  return C;
}

// Every op and every order of A, B and C, at padded leading dimensions: the translated problem,
// run over the very same buffers, writes the same C bytes as the call.
TEST(RowMajor, EveryCombinationComputesTheSameBytes) {
  const long m = 3, n = 4, k = 5, pad = 2;
  int checked = 0;
  for (const char ta : {'N', 'T'}) {
    for (const char tb : {'N', 'T'}) {
      for (const Order oa : {Order::Col, Order::Row}) {
        for (const Order ob : {Order::Col, Order::Row}) {
          for (const Order oc : {Order::Col, Order::Row}) {
            ColumnMajorGemm g;
            g.transa = ta;
            g.transb = tb;
            g.m = m;
            g.n = n;
            g.k = k;
            g.order_a = oa;
            g.order_b = ob;
            g.order_c = oc;
            // Stored A is m x k (op N) or k x m (op T); ld spans a column (Col) or a row (Row).
            const long a_rows = ta == 'N' ? m : k, a_cols = ta == 'N' ? k : m;
            const long b_rows = tb == 'N' ? k : n, b_cols = tb == 'N' ? n : k;
            g.lda = (oa == Order::Col ? a_rows : a_cols) + pad;
            g.ldb = (ob == Order::Col ? b_rows : b_cols) + pad;
            g.ldc = (oc == Order::Col ? m : n) + pad;
            std::vector<double> A(static_cast<size_t>(g.lda * std::max(a_rows, a_cols)));
            std::vector<double> B(static_cast<size_t>(g.ldb * std::max(b_rows, b_cols)));
            for (size_t i = 0; i < A.size(); ++i) A[i] = static_cast<double>(i % 7) - 3;
            for (size_t i = 0; i < B.size(); ++i) B[i] = static_cast<double>(i % 5) * 0.5 - 1;
            const size_t c_size = static_cast<size_t>(g.ldc * std::max(m, n));
            const auto expected = column_major_gemm(g, A, B, c_size);
            const RowMajorGemm r = to_row_major(g);
            const auto got =
                r.swapped ? row_major_gemm(r, B, A, c_size) : row_major_gemm(r, A, B, c_size);
            EXPECT_EQ(got, expected) << "transa " << ta << " transb " << tb << " orders " << int(oa)
                                     << int(ob) << int(oc) << " -> " << r.layout();
            // The leading dimensions obey sgemm-tune's bounds for the layout.
            EXPECT_GE(r.lda, r.trans_a == 'N' ? r.K : r.M);
            EXPECT_GE(r.ldb, r.trans_b == 'N' ? r.N : r.K);
            EXPECT_GE(r.ldc, r.N);
            ++checked;
          }
        }
      }
    }
  }
  EXPECT_EQ(checked, 32);
}

TEST(RowMajor, ScalarClasses) {
  EXPECT_EQ(classify(0.0), ScalarClass::Zero);
  EXPECT_EQ(classify(-0.0), ScalarClass::Zero);  // cuBLAS reads no C for beta = -0 either
  EXPECT_EQ(classify(1.0), ScalarClass::One);
  EXPECT_EQ(classify(-1.0), ScalarClass::Other);
  EXPECT_EQ(classify(0.5), ScalarClass::Other);
  EXPECT_EQ(classify(std::nan("")), ScalarClass::Other);
  EXPECT_STREQ(name(ScalarClass::One), "one");
  EXPECT_STREQ(name(ScalarClass::Zero), "zero");
  EXPECT_STREQ(name(ScalarClass::Other), "other");
  EXPECT_STREQ(name(ScalarClass::Unknown), "unknown");
  EXPECT_STREQ(name(ScalarClass::Vector), "vector");
}

}  // namespace
}  // namespace sgt::preload
