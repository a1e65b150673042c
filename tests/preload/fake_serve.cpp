// A stand-in for libsgemm_tune_serve.so (serve_abi.h), so that serve mode's path through the
// preload runs on a machine without a GPU: it reports the device SGT_FAKE_SERVE_DEVICE
// (NAME@sm_XY/SMS; unset: no current device), logs every launch it is asked for to
// SGT_FAKE_SERVE_LOG with the call as the preload translated it, and answers with
// SGT_FAKE_SERVE_STATUS (ok, capturing, load_failed, launch_failed, late; default ok). With a
// reference (SGT_SERVE_VERIFY) it runs it into a fixed address, as the real library runs cuBLAS
// into a copy of C.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>

#include "serve_abi.h"

namespace {

std::mutex g_mutex;

void log_line(const std::string& line) {
  const char* path = std::getenv("SGT_FAKE_SERVE_LOG");
  if (!path) return;
  std::lock_guard lock(g_mutex);
  if (std::FILE* f = std::fopen(path, "a")) {
    std::fputs(line.c_str(), f);
    std::fputc('\n', f);
    std::fclose(f);
  }
}

std::string hex(const void* p) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "0x%llx",
                static_cast<unsigned long long>(reinterpret_cast<std::uintptr_t>(p)));
  return buf;
}

}  // namespace

extern "C" {

__attribute__((visibility("default"))) int sgt_serve_abi_version(void) {
  return SGT_SERVE_ABI_VERSION;
}

__attribute__((visibility("default"))) int sgt_serve_current_device(int* device) {
  if (!std::getenv("SGT_FAKE_SERVE_DEVICE")) return 100;  // cudaErrorNoDevice
  *device = 0;
  return 0;
}

__attribute__((visibility("default"))) int sgt_serve_describe(int, char* name, int name_size,
                                                              int* cc_major, int* cc_minor,
                                                              int* sm_count) {
  const char* d = std::getenv("SGT_FAKE_SERVE_DEVICE");
  if (!d) return 1;
  const std::string s = d;
  const auto at = s.rfind('@'), slash = s.rfind('/');
  if (at == std::string::npos || slash == std::string::npos || slash < at + 5) return 1;
  std::snprintf(name, static_cast<size_t>(name_size), "%s", s.substr(0, at).c_str());
  const std::string arch = s.substr(at + 4, slash - at - 4);
  *cc_major = std::atoi(arch.substr(0, arch.size() - 1).c_str());
  *cc_minor = arch.back() - '0';
  *sm_count = std::atoi(s.c_str() + slash + 1);
  return 0;
}

__attribute__((visibility("default"))) int sgt_serve_launch(sgt_serve_call* c, char* message,
                                                            int message_size) {
  char buf[512];
  std::snprintf(buf, sizeof buf,
                "launch kernel=%d cubin=%s %dx%dx%d ta=%d tb=%d alpha=%g beta=%g A=%s lda=%d "
                "B=%s ldb=%d C=%s ldc=%d stream=%s",
                c->kernel->id, c->kernel->cubin, c->M, c->N, c->K, c->trans_a, c->trans_b,
                static_cast<double>(c->alpha), static_cast<double>(c->beta), hex(c->A).c_str(),
                c->lda, hex(c->B).c_str(), c->ldb, hex(c->C).c_str(), c->ldc,
                hex(c->stream).c_str());
  log_line(buf);
  const char* s = std::getenv("SGT_FAKE_SERVE_STATUS");
  const std::string status = s ? s : "ok";
  std::snprintf(message, static_cast<size_t>(message_size), "the stand-in says %s", status.c_str());
  if (status == "capturing") return SGT_SERVE_CAPTURING;
  if (status == "load_failed") return SGT_SERVE_LOAD_FAILED;
  if (status == "launch_failed") return SGT_SERVE_LAUNCH_FAILED;
  if (status == "late") return SGT_SERVE_FAILED_LATE;
  if (c->reference) {
    const int r = c->reference(c->reference_context, reinterpret_cast<float*>(0xc0000));
    c->verified = r == 0 ? 1 : -1;
    c->max_error = r == 0 ? 0.0 : 1.0;
  }
  return SGT_SERVE_OK;
}

}  // extern "C"
