// What the replay tests share: the shipped H200 recordings, a space's survivors for a problem,
// and a trial store in memory.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "dataset.hpp"
#include "replay_evaluator.hpp"
#include "space.hpp"
#include "trial.hpp"

namespace sgt::test {

inline std::filesystem::path shipped(const std::string& name) {
  return std::filesystem::path(SGT_TEST_SOURCE_DIR) / "datasets" / "h200" / (name + ".json.gz");
}

inline eval::Recording load(const std::filesystem::path& file) {
  auto ds = db::read_dataset(file);
  eval::Recording r{file.string(), ds.gpu.fingerprint, ds.header.problem, {}, ds.header.space};
  for (auto& st : ds.trials) r.trials.push_back(std::move(st.trial));
  return r;
}

inline std::vector<WarpTileConfig> survivors(const std::string& space, const Problem& p) {
  std::vector<std::pair<std::string, Enumeration>> parts;
  for (const auto& name : split_space_union(space)) {
    parts.emplace_back(name, enumerate(load_space(name), p));
  }
  return merge_enumerations(parts).survivors;
}

// Keeps trials in memory: finished() answers the latest trial of a config, as the database does.
class MemoryStore final : public TrialStore {
 public:
  void begin(const GpuFingerprint&, const Problem&) override {}
  std::optional<Trial> finished(const std::string& name, const std::string& hash) override {
    for (auto it = trials.rbegin(); it != trials.rend(); ++it) {
      if (it->config_name == name && it->kernel_hash == hash) return *it;
    }
    return std::nullopt;
  }
  void record(const Trial& t) override { trials.push_back(t); }
  // The screening trials' names, in the order stored (finalists' re-timings left out).
  std::vector<std::string> screened() const {
    std::vector<std::string> out;
    for (const auto& t : trials) {
      if (t.phase != TrialPhase::final) out.push_back(t.config_name);
    }
    return out;
  }
  std::vector<Trial> trials;
};

}  // namespace sgt::test
