#include <gtest/gtest.h>

#include <set>
#include <string>

#include "bootstrap/store/auth.hpp"

namespace dtrain::bootstrap::auth {
namespace {

std::string hex(const std::string& bytes) {
  static const char* digits = "0123456789abcdef";
  std::string out;
  for (unsigned char c : bytes) {
    out.push_back(digits[c >> 4]);
    out.push_back(digits[c & 15]);
  }
  return out;
}

TEST(StoreAuth, HmacSha256MatchesRfc4231) {
  // RFC 4231, test case 2.
  EXPECT_EQ(hex(hmac_sha256("Jefe", "what do ya want for nothing?")),
            "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843");
}

TEST(StoreAuth, EmptyKeyAndMessageWork) {
  // HMAC-SHA256 with an empty key of an empty message.
  EXPECT_EQ(hex(hmac_sha256("", "")), "b613679a0814d9ec772f95d778c35fc5ff1697c493715653c6c712144292c5ad");
}

TEST(StoreAuth, ProofsDependOnTokenNoncesAndRole) {
  std::string s = random_nonce();
  std::string c = random_nonce();
  std::string proof = client_proof("token", s, c);
  EXPECT_EQ(proof.size(), kProofBytes);
  EXPECT_EQ(proof, client_proof("token", s, c));
  EXPECT_NE(proof, client_proof("other", s, c));
  EXPECT_NE(proof, client_proof("", s, c));
  EXPECT_NE(proof, client_proof("token", random_nonce(), c));
  EXPECT_NE(proof, client_proof("token", s, random_nonce()));
  EXPECT_NE(proof, server_proof("token", s, c));
  // The token itself does not appear in what travels.
  EXPECT_EQ(proof.find("token"), std::string::npos);
}

TEST(StoreAuth, NoncesAreFreshAndFullLength) {
  std::set<std::string> seen;
  for (int i = 0; i < 100; ++i) {
    std::string n = random_nonce();
    EXPECT_EQ(n.size(), kNonceBytes);
    seen.insert(n);
  }
  EXPECT_EQ(seen.size(), 100u);
}

TEST(StoreAuth, ConstantTimeCompare) {
  EXPECT_TRUE(equal_constant_time("abc", "abc"));
  EXPECT_FALSE(equal_constant_time("abc", "abd"));
  EXPECT_FALSE(equal_constant_time("abc", "ab"));
  EXPECT_TRUE(equal_constant_time("", ""));
}

}  // namespace
}  // namespace dtrain::bootstrap::auth
