// Replay datasets: the recorded trials of every candidate of one problem on one GPU, with a header
// saying how they were measured. A dataset file is an export (`db export --json`, format
// "sgemm-tune-trials") restricted to that GPU and problem, plus a "dataset" object; written
// gzip-compressed when its name ends in ".gz". `db import` therefore reads it as it is.
// datasets/README.md documents the fields.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "precision.hpp"
#include "problem.hpp"
#include "store.hpp"

namespace sgt::db {

inline constexpr std::string_view kDatasetFormat = "sgemm-tune-dataset";
// 2: trials may carry their accuracy against FP64 (error_ratio, stress_ratio, stress_case) and the
// status inaccurate. 3: its trials are export format 2's (phase and source keys, the strategy's
// name alone). A file of version 1 or 2 reads as it is.
inline constexpr int kDatasetVersion = 3;

struct DatasetHeader {
  Problem problem;
  std::string space;  // the candidate set, as `--space` names it
  // The precision class the candidates were enumerated under (`--precision`): a replay of the
  // dataset takes it unless told otherwise. Absent from files written before it: fp32.
  Precision precision = Precision::fp32;
  long long candidates = 0;  // survivors of `space` for the problem when the dataset was written
  long long measured = 0;    // of those, with a screening trial in the dataset
  bool complete = false;     // measured == candidates
  std::string created;       // ISO 8601 UTC of the first trial
  std::string written;       // when the file was written
  std::string command;       // the command that measured it
  std::string notes;
  double cublas_median_ms = 0;  // cuBLAS FP32 in the same run (the screening baseline)
  // Kernel template name -> source hashes its trials were compiled from.
  std::map<std::string, std::vector<std::string>> kernel_hashes;
};

struct Dataset {
  std::filesystem::path path;
  DatasetHeader header;
  GpuRecord gpu;
  std::vector<StoredTrial> trials;  // in recording order; finalists' re-timings included
};

void to_json(nlohmann::json& j, const DatasetHeader& h);
void from_json(const nlohmann::json& j, DatasetHeader& h);

// What to write: the store's trials of one GPU and problem. `candidates` are the survivors of
// header.space (their names) so that coverage is counted, not assumed.
struct DatasetSpec {
  GpuIdentity gpu;
  Problem problem;
  std::string space;
  Precision precision = Precision::fp32;
  std::vector<std::string> candidates;
  std::string command, notes;
};

// Writes the dataset (atomically; gzip when the name ends in ".gz") and returns its header.
// Throws InputError when the store holds no trial of that GPU and problem.
DatasetHeader write_dataset(const SqliteStore& store, const DatasetSpec& spec,
                            const std::filesystem::path& file);

// Reads and validates a dataset file (plain or gzip JSON). Throws InputError naming the file and
// the first bad field; a plain export without a "dataset" object is refused.
Dataset read_dataset(const std::filesystem::path& file);

// True when the file looks like a dataset or export (JSON, plain or gzip) rather than a database.
bool is_json_recording(const std::filesystem::path& file);

}  // namespace sgt::db
