// File helpers shared by the tuner, the kernel cache and the database: writing a whole file so that
// readers never see half of one.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>

namespace sgt {

// Writes `content` to a temporary file beside `path` (named with the process id and a process-wide
// counter, so concurrent threads and processes never share one), then renames it over `path`:
// readers see the old file or the new one, never half of one. No fsync: callers whose files must
// survive a crash verify them on load. On failure removes the temporary file and throws sgt::Error
// naming `path` and the reason.
void write_file_atomically(const std::filesystem::path& path, std::string_view content);

// The whole of a file, bytes as they are; nullopt when it cannot be opened or read.
std::optional<std::string> read_file(const std::filesystem::path& path);

}  // namespace sgt
