// The GPU worker process: the request loop on stdin/stdout, the dispatch of each request, the
// device it runs on (hello) and the problem it measures (problem). The rest of the Worker is in
// the files worker_impl.hpp lists.
#include "worker.hpp"

#include <cstdlib>
#include <iostream>

#include <fmt/format.h>

#include "gpu_select.hpp"
#include "worker_impl.hpp"

namespace sgt::gpu {

namespace worker_impl {

namespace {

std::string uuid_string(const cudaUUID_t& u) {
  std::string s = "GPU-";
  for (int i = 0; i < 16; ++i) {
    if (i == 4 || i == 6 || i == 8 || i == 10) s += '-';
    s += fmt::format("{:02x}", static_cast<unsigned char>(u.bytes[i]));
  }
  return s;
}

GpuFingerprint fingerprint(int dev) {
  cudaDeviceProp p{};
  SGT_CUDA_CHECK(cudaGetDeviceProperties(&p, dev));
  GpuFingerprint f;
  f.name = p.name;
  f.uuid = uuid_string(p.uuid);
  f.cc_major = p.major;
  f.cc_minor = p.minor;
  f.sm_count = p.multiProcessorCount;
  f.memory_bytes = static_cast<long long>(p.totalGlobalMem);
  f.l2_bytes = p.l2CacheSize;
  f.smem_optin_bytes = static_cast<int>(p.sharedMemPerBlockOptin);
  SGT_CUDA_CHECK(cudaDeviceGetAttribute(&f.sm_clock_khz, cudaDevAttrClockRate, dev));
  SGT_CUDA_CHECK(cudaDeviceGetAttribute(&f.mem_clock_khz, cudaDevAttrMemoryClockRate, dev));
  SGT_CUDA_CHECK(cudaDriverGetVersion(&f.driver_version));
  SGT_CUDA_CHECK(cudaRuntimeGetVersion(&f.runtime_version));
  SGT_NVRTC_CHECK(nvrtcVersion(&f.nvrtc_major, &f.nvrtc_minor));
  return f;
}

// Why there is no device to tune on, and what to run instead. The runtime reports a machine with
// no NVIDIA driver at all (libcuda absent) as "driver version is insufficient", which reads as an
// upgrade to make; the driver version (0: none installed) tells that case from a real old driver.
std::string no_device_message(cudaError_t e) {
  const std::string cuda =
      e != cudaSuccess ? cudaGetErrorString(e) : "the driver reports 0 devices";
  int driver = 0;
  if (cudaDriverGetVersion(&driver) != cudaSuccess) driver = 0;
  if (e == cudaErrorInsufficientDriver && driver > 0) {
    int runtime = 0;
    cudaRuntimeGetVersion(&runtime);
    return fmt::format(
        "no usable CUDA device: the NVIDIA driver supports CUDA {}.{}, older than the CUDA {}.{} "
        "runtime sgemm-tune was built with (CUDA: {}); install a newer driver",
        driver / 1000, driver % 1000 / 10, runtime / 1000, runtime % 1000 / 10, cuda);
  }
  if (e == cudaSuccess || e == cudaErrorInsufficientDriver || e == cudaErrorNoDevice) {
    return fmt::format(
        "no usable CUDA device: no NVIDIA GPU or driver on this machine (CUDA: {}). Tuning "
        "measures on a GPU. Without one, `sgemm-tune tune --dry-run --arch sm_90 --shape "
        "4096x4096x4096` prints what would be tuned, and `sgemm-tune tune --replay "
        "datasets/h200/1024x1024x1024-NN.json.gz --shape 1024x1024x1024 --space auto --strategy "
        "random --max-evals 500 --db replay.db` runs a whole tune from a recorded H200 dataset "
        "(README, \"Tuning without a GPU\")",
        cuda);
  }
  return fmt::format(
      "no usable CUDA device: {} (is an NVIDIA driver installed and a GPU visible to this "
      "process?)",
      cuda);
}

}  // namespace

L2Mode l2_of(const json& req) {
  const std::string s = req.value("l2", std::string("flush"));
  const auto m = parse_l2_mode(s);
  if (!m) throw Error(fmt::format("unknown l2 mode '{}' (flush or rotate)", s));
  return *m;
}

json Worker::handle(const json& req) {
  const auto op = req.at("op").get<std::string>();
  if (op == "hello") return hello(req);
  if (op == "problem") return problem(req);
  if (op == "trial") return trial(req);
  if (op == "verify") return verify_cases(req);
  if (op == "cublas")
    return {{"ok", true}, {"cublas", time_cublas(req.at("reps").get<int>(), l2_of(req))}};
  if (op == "rotation") return rotation_info();
  if (op == "cublaslt_search") return cublaslt_search(req);
  if (op == "cublaslt") return time_cublaslt(req);
  if (op == "cublas_tf32") return time_cublas_tf32(req);
  throw Error("unknown op '" + op + "'");
}

Worker::~Worker() {
  lt_.reset();
  if (lt_handle_) cublasLtDestroy(lt_handle_);
  if (compare_lib_) cudaLibraryUnload(compare_lib_);
  if (cublas_tf32_) cublasDestroy(cublas_tf32_);
  if (cublas_) cublasDestroy(cublas_);
  if (stream_) cudaStreamDestroy(stream_);
}

json Worker::hello(const json& req) {
  if (req.at("protocol").get<int>() != kWorkerProtocol) {
    throw Error(fmt::format(
        "protocol mismatch: the worker speaks protocol {}, its parent {} (a parent runs its own "
        "binary as the worker: was sgemm-tune replaced while it ran?)",
        kWorkerProtocol, req.at("protocol").get<int>()));
  }
  int count = 0;
  const cudaError_t e = cudaGetDeviceCount(&count);
  if (e != cudaSuccess || count == 0) {
    return {{"ok", false}, {"error", no_device_message(e)}};
  }
  json devices = json::array();
  int best = 0;
  long long best_score = -1;
  for (int d = 0; d < count; ++d) {
    const auto f = fingerprint(d);
    devices.push_back({{"index", d}, {"name", f.name}, {"sm_count", f.sm_count}});
    const long long score = static_cast<long long>(f.sm_count) * f.sm_clock_khz;
    if (score > best_score) best = d, best_score = score;
  }
  const int want = req.at("gpu").get<int>();
  const std::string want_name = req.value("gpu_name", std::string());
  std::string why;
  if (!want_name.empty()) {
    std::vector<std::string> names;
    std::string listing;
    for (const auto& d : devices) {
      names.push_back(d.at("name").get<std::string>());
      listing += fmt::format("\n  {}: {}", d.at("index").get<int>(), names.back());
    }
    const auto found = match_gpu_names(names, {}, want_name);
    if (found.size() != 1) {
      return {{"ok", false},
              {"error", fmt::format("--gpu '{}' {} of the {} CUDA device(s) here{}{}", want_name,
                                    found.empty() ? "names none" : "names several", count,
                                    found.empty() ? "" : " (give a device index)", listing)}};
    }
    dev_ = static_cast<int>(found.front());
    why = fmt::format("named by --gpu '{}'", want_name);
  } else if (want >= 0) {
    if (want >= count) {
      return {{"ok", false},
              {"error", fmt::format("--gpu {} does not exist: {} device(s) present (0..{})", want,
                                    count, count - 1)}};
    }
    dev_ = want;
    why = "requested with --gpu";
  } else {
    dev_ = best;
    why =
        count == 1 ? "the only CUDA device" : fmt::format("most SMs x clock of {} devices", count);
  }
  SGT_CUDA_CHECK(cudaSetDevice(dev_));
  fp_ = fingerprint(dev_);
  SGT_CUDA_CHECK(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking));
  return {{"ok", true}, {"protocol", kWorkerProtocol}, {"device", dev_},
          {"why", why}, {"devices", devices},          {"fingerprint", fp_}};
}

json Worker::problem(const json& req) {
  if (!stream_) throw Error("problem before hello");
  const Problem p = req.at("problem").get<Problem>();
  const long long pad = req.value("pad", 0LL);
  const int offset = req.value("offset", 0);
  const bool ta = p.layout[0] == 'T', tb = p.layout[1] == 'T';
  // The rotation's copies and cuBLASLt's layouts belong to the old problem.
  rot_.reset();
  lt_.reset();
  inst_.reset();
  ref64_.reset();
  cublas_error64_ = -1;
  seed_ = req.at("seed").get<std::uint64_t>();
  inst_ = make_instance(p, (ta ? p.M : p.K) + pad, (tb ? p.K : p.N) + pad, p.N + pad, offset,
                        req.at("alpha").get<float>(), req.at("beta").get<float>(), seed_);
  // Overwriting twice the L2 before each repetition keeps every timing cold-cache.
  bench_ = std::make_unique<Bench>(stream_, 2 * static_cast<size_t>(fp_.l2_bytes));
  return {{"ok", true}, {"cublas", time_cublas(req.at("reps").get<int>(), L2Mode::flush)}};
}

void Worker::ensure_scratch() {
  if (!sums_) sums_ = std::make_unique<DeviceBuffer<double>>(2);
  if (!bad_) bad_ = std::make_unique<DeviceBuffer<unsigned long long>>(1);
}

void Worker::classify_failure(const Error& e, TrialStatus& status, std::string& reason) {
  const cudaError_t sticky = cudaDeviceSynchronize();
  if (sticky != cudaSuccess) {
    poisoned_ = true;
    status = TrialStatus::crashed;
    reason = fmt::format("{} (context lost: {})", e.what(), cudaGetErrorString(sticky));
  } else {
    cudaGetLastError();
    status = TrialStatus::resources;
    reason = e.what();
  }
}

}  // namespace worker_impl

int run_worker() {
  // stdout is the protocol channel: nothing else may write to it.
  std::ios::sync_with_stdio(false);
  worker_impl::Worker w;
  std::string line;
  while (std::getline(std::cin, line)) {
    if (line.empty()) continue;
    nlohmann::json resp;
    bool bye = false;
    try {
      const auto req = nlohmann::json::parse(line);
      bye = req.value("op", "") == "bye";
      if (!bye) resp = w.handle(req);
    } catch (const std::exception& e) {
      resp = {{"ok", false}, {"error", e.what()}};
    }
    if (bye) break;
    std::cout << resp.dump() << '\n' << std::flush;
    if (w.context_poisoned()) {
      // The CUDA context is unusable; the parent replaces this process.
      std::_Exit(3);
    }
  }
  return 0;
}

}  // namespace sgt::gpu
