// A thread's log prefix, for work that runs on several threads at once (the shapes of a suite
// spread over GPUs): "[GPU 2] " before every message logged on that thread while a ScopedLogTag
// lives. The CLI's log pattern prints it through the %* flag (LogTagFlag); no tag prints nothing.
#pragma once

#include <memory>
#include <string>
#include <utility>

#include <spdlog/pattern_formatter.h>

namespace sgt {

inline std::string& thread_log_tag() {
  thread_local std::string tag;
  return tag;
}

// Sets this thread's tag ("GPU 2") for its lifetime; an empty tag sets none.
class ScopedLogTag {
 public:
  explicit ScopedLogTag(std::string tag)
      : previous_(std::exchange(thread_log_tag(), std::move(tag))) {}
  ~ScopedLogTag() { thread_log_tag() = std::move(previous_); }
  ScopedLogTag(const ScopedLogTag&) = delete;
  ScopedLogTag& operator=(const ScopedLogTag&) = delete;

 private:
  std::string previous_;
};

// %*: the thread's tag in brackets and a space, or nothing.
class LogTagFlag final : public spdlog::custom_flag_formatter {
 public:
  void format(const spdlog::details::log_msg&, const std::tm&,
              spdlog::memory_buf_t& dest) override {
    const auto& tag = thread_log_tag();
    if (tag.empty()) return;
    dest.push_back('[');
    dest.append(tag.data(), tag.data() + tag.size());
    dest.push_back(']');
    dest.push_back(' ');
  }
  std::unique_ptr<custom_flag_formatter> clone() const override {
    return std::make_unique<LogTagFlag>();
  }
};

}  // namespace sgt
