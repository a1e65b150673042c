/* The C interface between libsgemm_tune_preload.so (which decides) and libsgemm_tune_serve.so
   (which loads and launches tuned kernels, linking the CUDA runtime). The preload opens the serve
   library only in serve mode, so the capture library itself never links CUDA. Both are built from
   one tree: a library whose sgt_serve_abi_version() differs is not used. */
#ifndef SGT_PRELOAD_SERVE_ABI_H
#define SGT_PRELOAD_SERVE_ABI_H

#ifdef __cplusplus
extern "C" {
#endif

#define SGT_SERVE_ABI_VERSION 2

/* One compiled kernel of the plan (serve_plan.hpp's PlanKernel): the strings stay valid for the
   process's life. `id` is unique per kernel; the serve library keeps what it loaded under it. */
struct sgt_serve_kernel {
  int id;
  const char* cubin;  /* path of the binary */
  const char* sha256; /* checked before the binary is loaded */
  const char* kernel; /* lowered names; reduce and pack empty when absent */
  const char* reduce;
  const char* pack;
  int tensor_maps; /* launch ABI: 1 tensor maps (TMA), 0 pointers */
  int BM, BN, BK, split_k, pad_a, pad_b;
  int smem;  /* dynamic shared memory of one launch */
  int block; /* threads per block */
  int tail;  /* 1: the wave-aware tail (launch_tail.h), found in the block order of group_m */
  int group_m;
};

/* Compares a served call with cuBLAS (SGT_SERVE_VERIFY): runs the real cuBLAS call with its
   output redirected to `out` (an ldc-strided copy of C as it was before the call). 0: success. */
typedef int (*sgt_serve_reference_fn)(void* context, float* out);

/* One call in sgemm-tune's row-major terms (row_major.hpp). */
struct sgt_serve_call {
  const struct sgt_serve_kernel* kernel;
  int device;
  int M, N, K;
  int trans_a, trans_b;
  float alpha, beta;
  const float* A;
  int lda;
  const float* B;
  int ldb;
  float* C;
  int ldc;
  void* stream; /* cudaStream_t */
  /* SGT_SERVE_VERIFY: set both; the result comes back in verified and max_error. */
  sgt_serve_reference_fn reference;
  void* reference_context;
  int verified;     /* out: 1 compared and within tolerance, -1 compared and not, 0 not compared */
  double max_error; /* out: the largest |served - cuBLAS| / max(1, max |cuBLAS|) */
};

enum sgt_serve_status {
  SGT_SERVE_OK = 0,
  SGT_SERVE_CAPTURING = 1,     /* the stream is capturing a graph: nothing launched */
  SGT_SERVE_LOAD_FAILED = 2,   /* the binary failed its check or its load: nothing launched */
  SGT_SERVE_LAUNCH_FAILED = 3, /* refused before C was written: cuBLAS may still run the call */
  SGT_SERVE_FAILED_LATE = 4    /* failed after C may have been written: report, do not retry */
};

int sgt_serve_abi_version(void);
/* The calling thread's current device; 0 on success. */
int sgt_serve_current_device(int* device);
/* A device's name (NUL-terminated in name_size bytes), compute capability and SM count. */
int sgt_serve_describe(int device, char* name, int name_size, int* cc_major, int* cc_minor,
                       int* sm_count);
/* Runs one call; a message (NUL-terminated in message_size bytes) says why when not OK. */
int sgt_serve_launch(struct sgt_serve_call* call, char* message, int message_size);

#ifdef __cplusplus
}
#endif

#endif
