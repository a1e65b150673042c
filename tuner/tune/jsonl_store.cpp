// JSON-lines trial file.
#include "jsonl_store.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "error.hpp"

namespace sgt {

JsonLinesStore::JsonLinesStore(std::filesystem::path path) : path_(std::move(path)) {
  std::ifstream in(path_);
  std::string line;
  while (std::getline(in, line)) {
    try {
      existing_.push_back(nlohmann::json::parse(line).get<Trial>());
    } catch (const std::exception&) {
      // A line cut short by a killed run; what came before it is intact.
    }
  }
  out_.open(path_, std::ios::app);
  if (!out_) throw Error(fmt::format("cannot write results file '{}'", path_.string()));
}

void JsonLinesStore::begin(const GpuFingerprint&, const Problem& problem) {
  problem_ = problem;
}

std::optional<Trial> JsonLinesStore::finished(const std::string& config_name,
                                              const std::string& kernel_hash) {
  for (const auto& t : existing_) {
    if (t.config_name == config_name && t.kernel_hash == kernel_hash && t.problem == problem_ &&
        t.phase != TrialPhase::final) {
      return t;
    }
  }
  return std::nullopt;
}

void JsonLinesStore::record(const Trial& trial) {
  out_ << nlohmann::json(trial).dump() << '\n' << std::flush;
  if (!out_) throw Error(fmt::format("cannot write results file '{}'", path_.string()));
}

}  // namespace sgt
