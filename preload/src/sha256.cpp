// SHA-256 by libcrypto's EVP API: the maintained implementation, as the tuner's compile cache uses.
#include "sha256.hpp"

#include <openssl/evp.h>

#include <array>
#include <memory>
#include <stdexcept>

namespace sgt::preload {

std::string sha256_hex(std::string_view data) {
  const std::unique_ptr<EVP_MD_CTX, decltype(&EVP_MD_CTX_free)> ctx(EVP_MD_CTX_new(),
                                                                    &EVP_MD_CTX_free);
  std::array<unsigned char, EVP_MAX_MD_SIZE> digest{};
  unsigned int size = 0;
  if (!ctx || EVP_DigestInit_ex(ctx.get(), EVP_sha256(), nullptr) != 1 ||
      EVP_DigestUpdate(ctx.get(), data.data(), data.size()) != 1 ||
      EVP_DigestFinal_ex(ctx.get(), digest.data(), &size) != 1 || size != 32) {
    throw std::runtime_error("SHA-256: OpenSSL's EVP digest failed");
  }
  static constexpr char kHex[] = "0123456789abcdef";
  std::string hex(2 * size, '0');
  for (unsigned int i = 0; i < size; ++i) {
    hex[2 * i] = kHex[digest[i] >> 4];
    hex[2 * i + 1] = kHex[digest[i] & 15];
  }
  return hex;
}

}  // namespace sgt::preload
