// A TrialStore over a JSON-lines file (one trial per line, flushed as it is written): the
// `tune --results FILE` output, readable by scripts and resumable like the database. The file is
// append-only: a trial recorded again (a winner, once its edge checks have run) appears again on a
// later line, which supersedes the earlier one; lines written before edge checks existed (no
// "edge_checks" key) still load.
#pragma once

#include <filesystem>
#include <fstream>
#include <vector>

#include "trial.hpp"

namespace sgt {

class JsonLinesStore : public TrialStore {
 public:
  // Reads the trials already in the file (a torn last line from a killed run is ignored).
  explicit JsonLinesStore(std::filesystem::path path);
  void begin(const GpuFingerprint& gpu, const Problem& problem) override;
  std::optional<Trial> finished(const std::string& config_name,
                                const std::string& kernel_hash) override;
  void record(const Trial& trial) override;

 private:
  std::filesystem::path path_;
  std::vector<Trial> existing_;
  Problem problem_;
  std::ofstream out_;
};

// Records into several stores; answers finished() from the first.
class TeeStore : public TrialStore {
 public:
  explicit TeeStore(std::vector<TrialStore*> stores) : stores_(std::move(stores)) {}
  void begin(const GpuFingerprint& gpu, const Problem& problem) override {
    for (auto* s : stores_) s->begin(gpu, problem);
  }
  std::optional<Trial> finished(const std::string& name, const std::string& hash) override {
    return stores_.front()->finished(name, hash);
  }
  std::vector<Trial> screening_order() override { return stores_.front()->screening_order(); }
  void record(const Trial& t) override {
    for (auto* s : stores_) s->record(t);
  }

 private:
  std::vector<TrialStore*> stores_;
};

}  // namespace sgt
