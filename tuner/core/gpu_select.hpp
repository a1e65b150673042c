// --gpu, one vocabulary in every command: 'auto', a device index, or a name. A name matches a GPU
// whose name equals it (case-insensitive) or whose NAME@sm_XY/SMS key equals it; failing that,
// one whose name contains it (case-insensitive), so 'h200' means "NVIDIA H200". Commands that run
// on a GPU resolve it against this machine's devices; commands that read a database, against the
// GPUs on record (an index or 'auto' meaning this machine's device of that index).
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace sgt {

struct GpuSelector {
  enum class Kind { automatic, index, name };
  Kind kind = Kind::automatic;
  int index = -1;    // Kind::index
  std::string name;  // Kind::name
  // As the user wrote it, for messages: "auto", "1", "h200".
  std::string text() const;
};

// InputError for an empty text or a negative index, and for 'all' or a list (those name several
// GPUs; only tune and bench run on several: parse_gpu_set).
GpuSelector parse_gpu_selector(std::string_view text);

// --gpu of a tune, which may run on several GPUs of this host: 'all', a comma-separated list of
// device indices ("0,2,3"), or one GPU as parse_gpu_selector reads it.
struct GpuSet {
  enum class Kind { one, all, list };
  Kind kind = Kind::one;
  GpuSelector one;           // Kind::one
  std::vector<int> indices;  // Kind::list: distinct, in the order given
  bool several() const { return kind != Kind::one; }
  std::string text() const;
};
// InputError for an empty entry, a negative or repeated index, or a name inside a list.
GpuSet parse_gpu_set(std::string_view text);

// The positions in `names` (keys[i], where given, is names[i]'s key) that `wanted` means: those
// equal to it (names case-insensitively, keys exactly), else those whose name contains it
// (case-insensitively); empty when none does.
std::vector<size_t> match_gpu_names(const std::vector<std::string>& names,
                                    const std::vector<std::string>& keys, std::string_view wanted);

}  // namespace sgt
