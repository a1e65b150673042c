// SHA-256 (OpenSSL's libcrypto), used to key the compile cache and to check cached binaries before
// loading.
#pragma once

#include <string>
#include <string_view>

namespace sgt {

// Lower-case hex digest of the bytes.
std::string sha256_hex(std::string_view data);

}  // namespace sgt
