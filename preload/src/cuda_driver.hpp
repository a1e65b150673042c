// Optional access to the CUDA driver, for the device a call ran on and (SGT_CAPTURE_TIMING) how
// long it took. libcuda is used only when the process has loaded it already (RTLD_NOLOAD): the
// library never starts CUDA, and in a process without a driver (the tests' stand-in cuBLAS) it
// simply has neither device nor time.
#pragma once

#include <mutex>
#include <optional>
#include <vector>

#include "capture.hpp"

namespace sgt::preload {

class Driver {
 public:
  // The process's driver, looked up once.
  static Driver& get();

  bool available() const { return ok_; }
  // After fork(): CUDA does not survive into the child, so the child never calls it.
  void disable() { ok_ = false; }

  // The ordinal of the calling thread's current device, if it has a context.
  std::optional<int> current_device() const;
  // Name and UUID of a device, as far as the driver answers.
  DeviceInfo describe(int device) const;

  // Two events around one call on `stream`: start() records the first before the call, stop()
  // the second after it; poll() reads the time once the GPU has passed both.
  struct Mark {
    void* context = nullptr;
    void* start = nullptr;
    void* stop = nullptr;
  };
  std::optional<Mark> start(void* stream);
  bool stop(const Mark& m, void* stream);
  enum class Poll { Done, NotReady, Failed };
  Poll poll(const Mark& m, float* ms) const;
  // The events back into the pool (they are reused, never destroyed while the process runs).
  void release(const Mark& m);

 private:
  Driver();
  void* event(void* context);

  using Result = int;  // CUresult: 0 is CUDA_SUCCESS, 600 CUDA_ERROR_NOT_READY
  Result (*ctx_get_current_)(void**) = nullptr;
  Result (*ctx_get_device_)(int*) = nullptr;
  Result (*device_get_name_)(char*, int, int) = nullptr;
  Result (*device_get_uuid_)(unsigned char*, int) = nullptr;
  Result (*event_create_)(void**, unsigned) = nullptr;
  Result (*event_record_)(void*, void*) = nullptr;
  Result (*event_query_)(void*) = nullptr;
  Result (*event_elapsed_)(float*, void*, void*) = nullptr;
  Result (*stream_is_capturing_)(void*, int*) = nullptr;
  bool ok_ = false;

  std::mutex pool_mutex_;
  struct Pooled {
    void* context;
    void* event;
  };
  std::vector<Pooled> pool_;
};

}  // namespace sgt::preload
