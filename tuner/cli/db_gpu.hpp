// --gpu of the commands that read a database (query, export, dataset): the same vocabulary as on
// the device (gpu_select.hpp), resolved against the GPUs on record.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "store.hpp"

namespace sgt::cli {

struct DbGpus {
  std::vector<db::GpuIdentity> gpus;  // the GPUs on record that --gpu means
  std::string note;                   // how it was resolved, for the user (empty: as named)
};

// 'auto': this machine's GPU (the one a tune picks), or without a GPU here the only GPU on
// record. An index: this machine's device of that index. A name: the GPUs on record of that name
// or key, else those whose name contains it, when that is one name (a name shared by several
// identities, say a whole GPU and a partition, gives them all). InputError naming the GPUs on
// record when nothing matches or a part of a name matches several names; `gpus` may be empty
// only for 'auto' on a database with no GPU.
DbGpus resolve_db_gpus(const db::SqliteStore& store, const std::string& text);

}  // namespace sgt::cli
