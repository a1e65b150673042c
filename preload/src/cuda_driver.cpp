// The optional CUDA driver access of cuda_driver.hpp: symbols looked up by their ABI names, so
// that no CUDA library is linked (cuda.h maps some API names to _v2 symbols; the ones used here
// keep their original ABI in every driver since CUDA 12).
#include "cuda_driver.hpp"

#include <dlfcn.h>

#include <cstdio>

namespace sgt::preload {
namespace {

constexpr int kSuccess = 0;
constexpr int kNotReady = 600;

template <typename F>
void resolve(void* lib, const char* name, F& fn, bool& ok) {
  fn = reinterpret_cast<F>(dlsym(lib, name));
  ok = ok && fn != nullptr;
}

}  // namespace

Driver& Driver::get() {
  // Leaked on purpose: it is used at exit, after static destructors may have run.
  static Driver* d = new Driver();
  return *d;
}

Driver::Driver() {
  void* lib = dlopen("libcuda.so.1", RTLD_LAZY | RTLD_NOLOAD);
  if (!lib) return;
  bool ok = true;
  resolve(lib, "cuCtxGetCurrent", ctx_get_current_, ok);
  resolve(lib, "cuCtxGetDevice", ctx_get_device_, ok);
  resolve(lib, "cuDeviceGetName", device_get_name_, ok);
  resolve(lib, "cuDeviceGetUuid", device_get_uuid_, ok);
  resolve(lib, "cuEventCreate", event_create_, ok);
  resolve(lib, "cuEventRecord", event_record_, ok);
  resolve(lib, "cuEventQuery", event_query_, ok);
  resolve(lib, "cuEventElapsedTime", event_elapsed_, ok);
  resolve(lib, "cuStreamIsCapturing", stream_is_capturing_, ok);
  ok_ = ok;
}

std::optional<int> Driver::current_device() const {
  if (!ok_) return std::nullopt;
  void* ctx = nullptr;
  int dev = -1;
  if (ctx_get_current_(&ctx) != kSuccess || !ctx || ctx_get_device_(&dev) != kSuccess) {
    return std::nullopt;
  }
  return dev;
}

DeviceInfo Driver::describe(int device) const {
  DeviceInfo d;
  d.index = device;
  if (!ok_) return d;
  char name[256] = {};
  if (device_get_name_(name, sizeof name - 1, device) == kSuccess) d.name = name;
  unsigned char u[16];
  if (device_get_uuid_(u, device) == kSuccess) {
    char buf[48];
    std::snprintf(buf, sizeof buf,
                  "GPU-%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", u[0],
                  u[1], u[2], u[3], u[4], u[5], u[6], u[7], u[8], u[9], u[10], u[11], u[12], u[13],
                  u[14], u[15]);
    d.uuid = buf;
  }
  return d;
}

void* Driver::event(void* context) {
  {
    std::lock_guard lock(pool_mutex_);
    for (size_t i = pool_.size(); i-- > 0;) {
      if (pool_[i].context == context) {
        void* e = pool_[i].event;
        pool_.erase(pool_.begin() + static_cast<long>(i));
        return e;
      }
    }
  }
  void* e = nullptr;
  // CU_EVENT_DEFAULT: timing enabled.
  return event_create_(&e, 0) == kSuccess ? e : nullptr;
}

std::optional<Driver::Mark> Driver::start(void* stream) {
  if (!ok_) return std::nullopt;
  // An event recorded into a stream being captured into a graph would become part of the graph,
  // and querying it is not allowed during a capture: such calls are not timed.
  int capturing = 0;
  if (stream_is_capturing_(stream, &capturing) != kSuccess || capturing != 0) return std::nullopt;
  Mark m;
  if (ctx_get_current_(&m.context) != kSuccess || !m.context) return std::nullopt;
  m.start = event(m.context);
  m.stop = event(m.context);
  if (!m.start || !m.stop || event_record_(m.start, stream) != kSuccess) {
    release(m);
    return std::nullopt;
  }
  return m;
}

bool Driver::stop(const Mark& m, void* stream) {
  return ok_ && event_record_(m.stop, stream) == kSuccess;
}

Driver::Poll Driver::poll(const Mark& m, float* ms) const {
  if (!ok_) return Poll::Failed;
  const Result r = event_query_(m.stop);
  if (r == kNotReady) return Poll::NotReady;
  if (r != kSuccess) return Poll::Failed;
  return event_elapsed_(ms, m.start, m.stop) == kSuccess ? Poll::Done : Poll::Failed;
}

void Driver::release(const Mark& m) {
  std::lock_guard lock(pool_mutex_);
  for (void* e : {m.start, m.stop}) {
    if (e) pool_.push_back({m.context, e});
  }
}

}  // namespace sgt::preload
