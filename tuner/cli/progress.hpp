// How long runs are shown while they run: durations as people read them, and one progress line
// for every long command (tune's search, compile's NVRTC pool): a bar redrawn in place on a
// terminal, a log line every 10 seconds and at the end otherwise (logs, CI, pipes).
#pragma once

#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <string>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

namespace sgt::cli {

// 42 -> "42s", 312 -> "5m12s".
inline std::string duration(double s) {
  if (s < 60) return fmt::format("{:.0f}s", s);
  return fmt::format("{}m{:02}s", static_cast<int>(s) / 60, static_cast<int>(s) % 60);
}

// The best so far for a progress line ("best 0.412 ms (wt_...)" with `named`), or that no
// candidate has passed yet: the first ones may all fail.
template <typename Progress>
std::string best_note(const Progress& p, bool named) {
  if (p.best_ms <= 0 || p.best_name.empty()) return "no candidate passed yet";
  return named ? fmt::format("best {:.3f} ms ({})", p.best_ms, p.best_name)
               : fmt::format("best {:.3f} ms", p.best_ms);
}

class ProgressLine {
 public:
  // bar: a bar on a terminal; false (several lines progressing at once): log lines only.
  explicit ProgressLine(bool bar = true) : tty_(bar && isatty(STDERR_FILENO) != 0) {}
  // `what` names the unit ("candidates", "configs"); `bar_note` follows the bar on a terminal,
  // `log_note` follows the count in a log line.
  void operator()(size_t done, size_t total, double elapsed_s, double eta_s, const char* what,
                  const std::string& bar_note, const std::string& log_note) {
    const auto now = std::chrono::steady_clock::now();
    if (tty_) {
      constexpr int kWidth = 30;
      const int fill = total ? static_cast<int>(kWidth * done / total) : kWidth;
      std::fprintf(stderr, "\r[%s%s] %zu/%zu  %s  elapsed %s  ETA %s   ",
                   std::string(fill, '#').c_str(), std::string(kWidth - fill, '.').c_str(), done,
                   total, bar_note.c_str(), duration(elapsed_s).c_str(), duration(eta_s).c_str());
      if (done == total) std::fputc('\n', stderr);
      std::fflush(stderr);
    } else if (done == total || now - last_ > std::chrono::seconds(10)) {
      spdlog::info("{}/{} {}, {}, elapsed {}, ETA {}", done, total, what, log_note,
                   duration(elapsed_s), duration(eta_s));
      last_ = now;
    }
  }

 private:
  bool tty_;
  std::chrono::steady_clock::time_point last_{};
};

}  // namespace sgt::cli
