// The cuBLASLt entry point of libsgemm_tune_preload (cublasLtMatmul): it records its call
// (capture.hpp), read from its descriptors, and forwards it, arguments untouched, to the next
// definition of the same symbol, the real cuBLASLt (dlsym RTLD_NEXT), or in serve mode runs it on
// its tuned kernel (interpose.hpp).
#include "interpose.hpp"

namespace sgt::interpose {

namespace {

// Descriptor queries, never interposed: straight to cuBLASLt.
Next<decltype(&cublasLtMatmulDescGetAttribute)> g_desc_attr{"cublasLtMatmulDescGetAttribute",
                                                            nullptr};
Next<decltype(&cublasLtMatrixLayoutGetAttribute)> g_layout_attr{"cublasLtMatrixLayoutGetAttribute",
                                                                nullptr};

// ---------------------------------------------------------------------------------------------
// Describing a call.

// The type of alpha and beta for a scale type.
Scalar scalar_of(cudaDataType t) {
  switch (t) {
    case CUDA_R_16F:
      return Scalar::F16;
    case CUDA_R_32F:
      return Scalar::F32;
    case CUDA_R_64F:
      return Scalar::F64;
    case CUDA_R_32I:
      return Scalar::I32;
    default:
      return Scalar::Unknown;
  }
}

// The name a capture gives an epilogue.
std::string_view epilogue_name(std::uint32_t e) {
  switch (e) {
    case CUBLASLT_EPILOGUE_DEFAULT:
      return "default";
    case CUBLASLT_EPILOGUE_RELU:
      return "relu";
    case CUBLASLT_EPILOGUE_BIAS:
      return "bias";
    case CUBLASLT_EPILOGUE_RELU_BIAS:
      return "relu_bias";
    case CUBLASLT_EPILOGUE_GELU:
      return "gelu";
    case CUBLASLT_EPILOGUE_GELU_BIAS:
      return "gelu_bias";
    default:
      return "other";
  }
}

struct LayoutInfo {
  std::uint32_t type = 0;
  std::int32_t order = CUBLASLT_ORDER_COL;
  std::uint64_t rows = 0, cols = 0;
  std::int64_t ld = 0;
  std::int32_t batch = 1;
  std::int64_t stride = 0;
  std::uint32_t batch_mode = 0;  // CUBLASLT_MATRIX_LAYOUT_BATCH_MODE (CUDA 13): 0 strided
};

template <typename T>
bool layout_attr(cublasLtMatrixLayout_t l, cublasLtMatrixLayoutAttribute_t attr, T& value) {
  size_t written = 0;
  return call_next(g_layout_attr, l, attr, static_cast<void*>(&value), sizeof value, &written) ==
             CUBLAS_STATUS_SUCCESS &&
         written == sizeof value;
}

template <typename T>
bool desc_attr(cublasLtMatmulDesc_t d, cublasLtMatmulDescAttributes_t attr, T& value) {
  size_t written = 0;
  return call_next(g_desc_attr, d, attr, static_cast<void*>(&value), sizeof value, &written) ==
             CUBLAS_STATUS_SUCCESS &&
         written == sizeof value;
}

// The attributes a layout must have answered for; the others keep their documented defaults when
// this cuBLASLt does not know them.
bool read_layout(cublasLtMatrixLayout_t l, LayoutInfo& out) {
  if (!l) return false;
  const bool ok = layout_attr(l, CUBLASLT_MATRIX_LAYOUT_TYPE, out.type) &&
                  layout_attr(l, CUBLASLT_MATRIX_LAYOUT_ROWS, out.rows) &&
                  layout_attr(l, CUBLASLT_MATRIX_LAYOUT_COLS, out.cols) &&
                  layout_attr(l, CUBLASLT_MATRIX_LAYOUT_LD, out.ld);
  layout_attr(l, CUBLASLT_MATRIX_LAYOUT_ORDER, out.order);
  layout_attr(l, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, out.batch);
  layout_attr(l, CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET, out.stride);
  layout_attr(l, static_cast<cublasLtMatrixLayoutAttribute_t>(8), out.batch_mode);
  return ok;
}

// The scalars of a cuBLASLt call as its pointer mode gives them: read from the host, or only
// their class (a device pointer, a vector).
void read_lt_scalars(CallFacts& f, std::int32_t pointer_mode, const void* alpha, const void* beta,
                     Scalar s) {
  switch (pointer_mode) {
    case CUBLASLT_POINTER_MODE_HOST:
      f.pointer_mode = "host";
      f.alpha = read_scalar(alpha, s);
      f.beta = read_scalar(beta, s);
      break;
    case CUBLASLT_POINTER_MODE_DEVICE:
      f.pointer_mode = "device";
      break;
    case CUBLASLT_POINTER_MODE_DEVICE_VECTOR:
      f.pointer_mode = "device_vector";
      f.alpha = f.beta = ScalarClass::Vector;
      break;
    case CUBLASLT_POINTER_MODE_ALPHA_DEVICE_VECTOR_BETA_ZERO:
      f.pointer_mode = "alpha_device_vector_beta_zero";
      f.alpha = ScalarClass::Vector;
      f.beta = ScalarClass::Zero;
      break;
    case CUBLASLT_POINTER_MODE_ALPHA_DEVICE_VECTOR_BETA_HOST:
      f.pointer_mode = "alpha_device_vector_beta_host";
      f.alpha = ScalarClass::Vector;
      f.beta = read_scalar(beta, s);
      break;
    default:
      f.pointer_mode = "unknown";
  }
}

void prepare_lt(Runtime& rt, Prepared& p, cublasLtMatmulDesc_t desc, const void* alpha,
                const void* a_ptr, cublasLtMatrixLayout_t adesc, const void* b_ptr,
                cublasLtMatrixLayout_t bdesc, const void* beta, const void* c,
                cublasLtMatrixLayout_t cdesc, const void* d, cublasLtMatrixLayout_t ddesc,
                cudaStream_t stream) {
  CallFacts& f = p.facts;
  f.entry = "cublasLtMatmul";
  f.lt = true;
  p.a = a_ptr;
  p.b = b_ptr;
  p.c = const_cast<void*>(d);
  p.alpha = alpha;
  p.beta = beta;
  f.math_mode = "";
  p.stream = stream;
  std::int32_t compute = 0, scale = CUDA_R_32F, pointer_mode = CUBLASLT_POINTER_MODE_HOST;
  std::int32_t transa = CUBLAS_OP_N, transb = CUBLAS_OP_N;
  std::uint32_t epilogue = CUBLASLT_EPILOGUE_DEFAULT;
  LayoutInfo a, b, cl, dl;
  if (!desc || !desc_attr(desc, CUBLASLT_MATMUL_DESC_COMPUTE_TYPE, compute) ||
      !desc_attr(desc, CUBLASLT_MATMUL_DESC_SCALE_TYPE, scale) || !read_layout(adesc, a) ||
      !read_layout(bdesc, b) || !read_layout(cdesc, cl) || !read_layout(ddesc, dl)) {
    p.why = NotRecorded::LtDescriptor;
    return;
  }
  desc_attr(desc, CUBLASLT_MATMUL_DESC_POINTER_MODE, pointer_mode);
  desc_attr(desc, CUBLASLT_MATMUL_DESC_TRANSA, transa);
  desc_attr(desc, CUBLASLT_MATMUL_DESC_TRANSB, transb);
  desc_attr(desc, CUBLASLT_MATMUL_DESC_EPILOGUE, epilogue);

  const auto ta = sgt::preload::real_op(transa), tb = sgt::preload::real_op(transb);
  if (!ta || !tb) {
    p.why = NotRecorded::UnsupportedOp;
    return;
  }
  auto order = [](std::int32_t o) -> std::optional<Order> {
    if (o == CUBLASLT_ORDER_COL) return Order::Col;
    if (o == CUBLASLT_ORDER_ROW) return Order::Row;
    return std::nullopt;
  };
  const auto oa = order(a.order), ob = order(b.order), od = order(dl.order);
  if (!oa || !ob || !od || !order(cl.order)) {
    p.why = NotRecorded::LtOrder;
    return;
  }
  // D (m x n) = op(A) (m x k) * op(B) (k x n); rows and columns are the matrices' as stored,
  // before op, whatever their order.
  f.call.transa = *ta;
  f.call.transb = *tb;
  f.call.m = static_cast<std::int64_t>(dl.rows);
  f.call.n = static_cast<std::int64_t>(dl.cols);
  f.call.k = static_cast<std::int64_t>(*ta == 'N' ? a.cols : a.rows);
  f.call.lda = a.ld;
  f.call.ldb = b.ld;
  f.call.ldc = dl.ld;
  f.call.order_a = *oa;
  f.call.order_b = *ob;
  f.call.order_c = *od;
  if (f.call.m == 0 || f.call.n == 0 || f.call.k == 0) p.why = NotRecorded::Empty;
  f.a_type = type_name(static_cast<int>(a.type));
  f.b_type = type_name(static_cast<int>(b.type));
  f.c_type = type_name(static_cast<int>(dl.type));
  f.compute = compute_name(compute);
  f.epilogue = epilogue_name(epilogue);
  f.c_matches_d = cl.type == dl.type && cl.order == dl.order && cl.ld == dl.ld &&
                  cl.rows == dl.rows && cl.cols == dl.cols;
  f.in_place = c == d;
  const Scalar s = scalar_of(static_cast<cudaDataType>(scale));
  read_lt_scalars(f, pointer_mode, alpha, beta, s);
  if (dl.batch != 1) {
    set_batch(p, dl.batch, dl.batch_mode == 0 ? "strided" : "pointer_array");
    set_strides(p, a.stride, b.stride, dl.stride);
  }
  note_device(rt, f);
}

// The interposed function, with its real function.
Next<decltype(&cublasLtMatmul)> g_lt_matmul{"cublasLtMatmul", &cublasLtMatmul};

}  // namespace

}  // namespace sgt::interpose

using namespace sgt::interpose;

// ---------------------------------------------------------------------------------------------
// The entry point. It forwards exactly its arguments; the lambda after it describes the call.

extern "C" {

cublasStatus_t CUBLASWINAPI cublasLtMatmul(
    cublasLtHandle_t lightHandle, cublasLtMatmulDesc_t computeDesc, const void* alpha,
    const void* A, cublasLtMatrixLayout_t Adesc, const void* B, cublasLtMatrixLayout_t Bdesc,
    const void* beta, const void* C, cublasLtMatrixLayout_t Cdesc, void* D,
    cublasLtMatrixLayout_t Ddesc, const cublasLtMatmulAlgo_t* algo, void* workspace,
    size_t workspaceSizeInBytes, cudaStream_t stream) {
  return intercept(
      [&] {
        return call_next(g_lt_matmul, lightHandle, computeDesc, alpha, A, Adesc, B, Bdesc, beta, C,
                         Cdesc, D, Ddesc, algo, workspace, workspaceSizeInBytes, stream);
      },
      [&](Runtime& rt, Prepared& p) {
        prepare_lt(rt, p, computeDesc, alpha, A, Adesc, B, Bdesc, beta, C, Cdesc, D, Ddesc, stream);
      },
      [&](float* out) {
        return call_next(g_lt_matmul, lightHandle, computeDesc, alpha, A, Adesc, B, Bdesc, beta,
                         C == D ? out : C, Cdesc, out, Ddesc, algo, workspace, workspaceSizeInBytes,
                         stream);
      });
}

}  // extern "C"
