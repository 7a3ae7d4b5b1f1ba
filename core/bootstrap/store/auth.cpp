#include "bootstrap/store/auth.hpp"

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/rand.h>

#include "base/error.hpp"

namespace dtrain::bootstrap::auth {

namespace {

std::string proof(std::string_view role, std::string_view token, std::string_view server_nonce,
                  std::string_view client_nonce) {
  std::string message = "dtrain-store ";
  message.append(role);
  // The separator keeps "client" from being confused with a prefix of the nonces.
  message.push_back('\0');
  message.append(server_nonce);
  message.append(client_nonce);
  return hmac_sha256(token, message);
}

}  // namespace

std::string random_nonce() {
  std::string nonce(kNonceBytes, '\0');
  if (RAND_bytes(reinterpret_cast<unsigned char*>(nonce.data()), static_cast<int>(nonce.size())) != 1) {
    raise(DT_ERR_INTERNAL, "OpenSSL could not produce random bytes for the store handshake");
  }
  return nonce;
}

std::string hmac_sha256(std::string_view key, std::string_view message) {
  static const unsigned char kEmpty = 0;
  if (key.size() > 65536) raise(DT_ERR_INVALID_ARGUMENT, "an auth token longer than 64 KiB is not supported");
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int length = 0;
  const void* key_data = key.empty() ? static_cast<const void*>(&kEmpty) : key.data();
  const auto* msg_data =
      message.empty() ? &kEmpty : reinterpret_cast<const unsigned char*>(message.data());
  if (HMAC(EVP_sha256(), key_data, static_cast<int>(key.size()), msg_data, message.size(), digest, &length) ==
          nullptr ||
      length != kProofBytes) {
    raise(DT_ERR_INTERNAL, "OpenSSL HMAC-SHA256 failed");
  }
  return std::string(reinterpret_cast<const char*>(digest), length);
}

bool equal_constant_time(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  if (a.empty()) return true;
  return CRYPTO_memcmp(a.data(), b.data(), a.size()) == 0;
}

std::string client_proof(std::string_view token, std::string_view server_nonce, std::string_view client_nonce) {
  return proof("client", token, server_nonce, client_nonce);
}

std::string server_proof(std::string_view token, std::string_view server_nonce, std::string_view client_nonce) {
  return proof("server", token, server_nonce, client_nonce);
}

}  // namespace dtrain::bootstrap::auth
