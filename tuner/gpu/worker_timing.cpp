// The worker's timing helpers beside the benchmark function (bench.hpp): the cold-L2 rotation
// (L2Mode::rotate: copies of A, B and C, with random inputs of their own and one verified against
// a cuBLAS reference of its own), and the operands each launch of a timing takes.
#include <fmt/format.h>

#include "worker_impl.hpp"

namespace sgt::gpu::worker_impl {

namespace {

// How long the pre-roll of a rotated repetition keeps the GPU busy: longer than the host takes to
// record the start event and enqueue any side (the launch plan's pool, cuBLAS's heuristics).
constexpr unsigned long long kPreRollNs = 250'000;

// The float count a copy's operand takes in the rotation: rounded up to 256 bytes, so that every
// copy is aligned as a cudaMalloc of its own would be, and picks the same kernel instance.
size_t rotation_stride(size_t elems) {
  return (std::max<size_t>(elems, 1) + 63) / 64 * 64;
}

}  // namespace

Rotation& Worker::rotation() {
  if (!bench_ || !inst_) throw Error("rotation before problem");
  if (rot_) return *rot_;
  const Instance& in = *inst_;
  const size_t sa = rotation_stride(in.a_elems()), sb = rotation_stride(in.b_elems()),
               sc = rotation_stride(in.c_elems());
  const size_t set = sa + sb + sc;
  auto r = std::make_unique<Rotation>();
  r->set_bytes = static_cast<long long>(set * sizeof(float));
  const int copies = rotation_copies(fp_.l2_bytes, r->set_bytes);
  const size_t bytes = static_cast<size_t>(copies) * set * sizeof(float);
  size_t free_bytes = 0, total_bytes = 0;
  SGT_CUDA_CHECK(cudaMemGetInfo(&free_bytes, &total_bytes));
  // Leave room for the launch plan's workspace and cuBLAS's.
  if (bytes + in.c_elems() * sizeof(float) > free_bytes / 10 * 9) {
    throw Error(fmt::format(
        "the cold-L2 rotation of {} needs {} copies of {:.1f} MiB ({:.2f} GiB), and the GPU has "
        "{:.2f} GiB free",
        in.p.shape(), copies, r->set_bytes / 1048576.0, bytes / 1073741824.0,
        free_bytes / 1073741824.0));
  }
  r->memory = std::make_unique<DeviceBuffer<float>>(static_cast<size_t>(copies) * set);
  {
    float* x = r->memory->ptr;
    long long n = static_cast<long long>(static_cast<size_t>(copies) * set);
    unsigned long long seed = seed_ ^ 0x726f74617465ull;  // not the instance's own numbers
    void* args[] = {&x, &n, &seed};
    SGT_CUDA_CHECK(cudaLaunchKernel(reinterpret_cast<const void*>(fill_), dim3(fp_.sm_count * 4),
                                    dim3(256), args, 0, stream_));
  }
  r->ref = std::make_unique<DeviceBuffer<float>>(in.c_elems());
  r->copies.resize(static_cast<size_t>(copies));
  for (int i = 0; i < copies; ++i) {
    Instance& c = r->copies[static_cast<size_t>(i)];
    c.p = in.p;
    c.lda = in.lda;
    c.ldb = in.ldb;
    c.ldc = in.ldc;
    c.offset = in.offset;
    c.alpha = in.alpha;
    c.beta = in.beta;
    c.a_mem = r->memory->ptr + static_cast<size_t>(i) * set;
    c.b_mem = c.a_mem + sa;
    c.c_mem = c.b_mem + sb;
  }
  r->verified = copies - 1;
  Instance& v = r->copies.back();
  // The instance's C0 fits: the same shape, leading dimension and offset (padding sentinel and
  // NaN when beta == 0 included).
  v.c0_mem = in.c0_mem;
  v.ref_mem = r->ref->ptr;
  SGT_CUDA_CHECK(cudaMemcpyAsync(v.ref_mem, v.c0_mem, in.c_elems() * sizeof(float),
                                 cudaMemcpyDeviceToDevice, stream_));
  cublas_gemm(v, v.ref_mem + v.offset);
  SGT_CUDA_CHECK(cudaStreamSynchronize(stream_));
  bench_->set_rotation(copies, [this](cudaStream_t st) {
    unsigned long long ns = kPreRollNs;
    void* args[] = {&ns};
    SGT_CUDA_CHECK(
        cudaLaunchKernel(reinterpret_cast<const void*>(spin_), dim3(1), dim3(1), args, 0, st));
  });
  bench_->used(r->verified);
  rot_ = std::move(r);
  return *rot_;
}

json Worker::rotation_info() {
  const Rotation& r = rotation();
  return {{"ok", true},
          {"copies", r.copies.size()},
          {"set_bytes", r.set_bytes},
          {"l2_bytes", fp_.l2_bytes}};
}

Instance& Worker::operands(L2Mode l2, int copy) {
  return l2 == L2Mode::rotate ? rot_->copies.at(static_cast<size_t>(copy)) : *inst_;
}

}  // namespace sgt::gpu::worker_impl
