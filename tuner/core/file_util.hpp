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

// Text from a file or database made safe for a terminal: control characters and bytes outside
// printable ASCII become \xNN, so nothing stored can move the cursor or change the colours.
std::string terminal_safe(std::string_view text);
// The same for messages of several lines: newlines and tabs stay, and so does well-formed UTF-8
// (but for C1 control characters); every other control byte or broken sequence becomes \xNN.
std::string terminal_safe_lines(std::string_view text);

// gzip (RFC 1952, through zlib): datasets and exports ending in ".gz" are stored so.
bool is_gzip(std::string_view bytes);
std::string gzip_compress(std::string_view bytes);
// Throws sgt::InputError naming `origin` when the stream is corrupt or truncated.
std::string gzip_decompress(std::string_view bytes, std::string_view origin);
// read_file, decompressed when the file is gzip (whatever its name); nullopt when unreadable.
std::optional<std::string> read_file_maybe_gzip(const std::filesystem::path& path);
// write_file_atomically, gzip-compressed when `path` ends in ".gz".
void write_file_atomically_maybe_gzip(const std::filesystem::path& path, std::string_view content);

}  // namespace sgt
