// Authentication of store clients with the job's shared secret.
//
// The server sends a random nonce; the client answers with its own nonce and
// HMAC-SHA256(token, "dtrain-store client" | server nonce | client nonce);
// the server, once satisfied, proves it knows the token too with the same HMAC
// over "dtrain-store server". The token itself never travels, a recorded
// answer is useless against a new nonce, and a client does not hand its data to
// a server that cannot prove it belongs to the job.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace dtrain::bootstrap::auth {

inline constexpr std::size_t kNonceBytes = 32;
inline constexpr std::size_t kProofBytes = 32;  // SHA-256

// kNonceBytes from OpenSSL's CSPRNG. Throws DT_ERR_INTERNAL if it fails.
std::string random_nonce();

// HMAC-SHA256 of `message` under `key` (32 bytes). `key` may be empty.
std::string hmac_sha256(std::string_view key, std::string_view message);

// Compares in time that depends only on the lengths, so that an attacker
// cannot learn a proof byte by byte from response times.
bool equal_constant_time(std::string_view a, std::string_view b);

std::string client_proof(std::string_view token, std::string_view server_nonce, std::string_view client_nonce);
std::string server_proof(std::string_view token, std::string_view server_nonce, std::string_view client_nonce);

}  // namespace dtrain::bootstrap::auth
