#include "rendezvous/crypto.hpp"

#include <set>
#include <string>

#include <gtest/gtest.h>

namespace rendezvous::crypto {
namespace {

TEST(IdentitySha256, KnownVectors) {
  EXPECT_EQ(Sha256Hex(""), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT_EQ(Sha256Hex("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  EXPECT_EQ(Sha256Hex("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"),
            "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
}

TEST(IdentityHmacSha256, Rfc4231Vectors) {
  EXPECT_EQ(ToHex(HmacSha256(std::string(20, '\x0b'), "Hi There")),
            "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7");
  EXPECT_EQ(ToHex(HmacSha256("Jefe", "what do ya want for nothing?")),
            "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843");
  // Test case 6: a key longer than the block size is hashed first.
  EXPECT_EQ(
      ToHex(HmacSha256(std::string(131, '\xaa'), "Test Using Larger Than Block-Size Key - Hash Key First")),
      "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54");
}

TEST(IdentityHmacSha256, EmptyKeyAndData) {
  EXPECT_EQ(ToHex(HmacSha256("", "")), "b613679a0814d9ec772f95d778c35fc5ff1697c493715653c6c712144292c5ad");
  EXPECT_EQ(HmacSha256("k", "d").size(), 32u);
  // An empty key without storage is the empty key, not the one used just before on this thread.
  EXPECT_EQ(ToHex(HmacSha256(std::string_view(), "")),
            "b613679a0814d9ec772f95d778c35fc5ff1697c493715653c6c712144292c5ad");
}

TEST(IdentityHex, EncodesLowerCase) {
  EXPECT_EQ(ToHex(std::string("\x00\x01\xab\xff", 4)), "0001abff");
  EXPECT_EQ(ToHex(""), "");
}

TEST(IdentityBase64, Rfc4648Vectors) {
  const std::pair<std::string, std::string> cases[] = {{"", ""},
                                                       {"f", "Zg=="},
                                                       {"fo", "Zm8="},
                                                       {"foo", "Zm9v"},
                                                       {"foob", "Zm9vYg=="},
                                                       {"fooba", "Zm9vYmE="},
                                                       {"foobar", "Zm9vYmFy"}};
  for (const auto& [raw, encoded] : cases) {
    EXPECT_EQ(Base64Encode(raw), encoded);
    auto decoded = Base64Decode(encoded);
    ASSERT_TRUE(decoded.ok()) << encoded;
    EXPECT_EQ(*decoded, raw);
  }
}

TEST(IdentityBase64, UrlAlphabetWithoutPadding) {
  std::string raw("\xfb\xff", 2);
  EXPECT_EQ(Base64Encode(raw), "+/8=");
  EXPECT_EQ(Base64UrlEncode(raw), "-_8");
  auto decoded = Base64Decode("-_8");
  ASSERT_TRUE(decoded.ok());
  EXPECT_EQ(*decoded, raw);
}

TEST(IdentityBase64, RoundTripsAllByteValues) {
  std::string raw;
  for (int i = 0; i < 256; ++i) raw.push_back(static_cast<char>(i));
  for (size_t len = 0; len < raw.size(); len += 37) {
    std::string part = raw.substr(0, len);
    EXPECT_EQ(*Base64Decode(Base64Encode(part)), part);
    EXPECT_EQ(*Base64Decode(Base64UrlEncode(part)), part);
  }
}

TEST(IdentityBase64, RejectsBadInput) {
  for (const char* bad : {"Zm9v!", "Z", "Zm9vY", "Zm=v", "=Zm9", "Zm9v\n", "Zm 9v", "Zg==="}) {
    auto r = Base64Decode(bad);
    EXPECT_FALSE(r.ok()) << bad;
    if (!r.ok()) {
      EXPECT_EQ(r.status().code(), ErrorCode::kInvalid);
    }
  }
}

TEST(IdentityRandomToken, LengthsCharsetAndUniqueness) {
  std::set<std::string> seen;
  for (int i = 0; i < 100; ++i) {
    std::string t = RandomToken(32);
    ASSERT_EQ(t.size(), 43u);
    EXPECT_EQ(t.find_first_not_of("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"),
              std::string::npos);
    seen.insert(t);
  }
  EXPECT_EQ(seen.size(), 100u);
  EXPECT_EQ(RandomHex(16).size(), 32u);
  EXPECT_NE(RandomHex(16), RandomHex(16));
}

TEST(IdentityConstantTimeEquals, ComparesContentAndLength) {
  EXPECT_TRUE(ConstantTimeEquals("", ""));
  EXPECT_TRUE(ConstantTimeEquals("abc", "abc"));
  EXPECT_FALSE(ConstantTimeEquals("abc", "abd"));
  EXPECT_FALSE(ConstantTimeEquals("abc", "abcd"));
  EXPECT_FALSE(ConstantTimeEquals("", "a"));
}

TEST(IdentityPassword, VerifiesTheRightPasswordOnly) {
  std::string encoded = HashPassword("correct horse");
  EXPECT_EQ(encoded.rfind("scrypt$32768$8$1$", 0), 0u) << encoded;
  EXPECT_TRUE(VerifyPassword("correct horse", encoded));
  EXPECT_FALSE(VerifyPassword("correct horsE", encoded));
  EXPECT_FALSE(VerifyPassword("", encoded));
}

TEST(IdentityPassword, SaltMakesHashesDiffer) {
  std::string a = HashPassword("same");
  std::string b = HashPassword("same");
  EXPECT_NE(a, b);
  EXPECT_TRUE(VerifyPassword("same", a));
  EXPECT_TRUE(VerifyPassword("same", b));
}

TEST(IdentityPassword, EmptyAndUnicodePasswords) {
  EXPECT_TRUE(VerifyPassword("", HashPassword("")));
  std::string pw = "p\xc3\xa4ssw\xc3\xb6rd \xf0\x9f\x94\x91";
  EXPECT_TRUE(VerifyPassword(pw, HashPassword(pw)));
}

TEST(IdentityPassword, RejectsMalformedEncodings) {
  std::string good = HashPassword("pw");
  EXPECT_FALSE(VerifyPassword("pw", ""));
  EXPECT_FALSE(VerifyPassword("pw", "plain"));
  EXPECT_FALSE(VerifyPassword("pw", "pw"));
  EXPECT_FALSE(VerifyPassword("pw", "bcrypt" + good.substr(6)));
  EXPECT_FALSE(VerifyPassword("pw", good + "$extra"));
  EXPECT_FALSE(VerifyPassword("pw", good.substr(0, good.size() - 4)));  // truncated hash
  // Parameters that would make verification a resource bomb, or are not powers of two.
  auto with_params = [&](const std::string& params) {
    size_t salt_at = good.find('$', good.find('$', good.find('$', 7) + 1) + 1);
    return "scrypt$" + params + good.substr(salt_at);
  };
  EXPECT_TRUE(VerifyPassword("pw", with_params("32768$8$1")));
  EXPECT_FALSE(VerifyPassword("pw", with_params("33000$8$1")));
  EXPECT_FALSE(VerifyPassword("pw", with_params("1073741824$8$1")));
  EXPECT_FALSE(VerifyPassword("pw", with_params("32768$99$1")));
  EXPECT_FALSE(VerifyPassword("pw", with_params("32768$8$0")));
  EXPECT_FALSE(VerifyPassword("pw", with_params("-1$8$1")));
  EXPECT_FALSE(VerifyPassword("pw", "scrypt$32768$8$1$!!!$!!!"));
}

TEST(IdentityEncryption, RoundTrip) {
  std::string key(32, 'k');
  for (std::string plaintext : {std::string(), std::string("refresh-token-123"), std::string(5000, 'x')}) {
    auto sealed = Encrypt(key, plaintext);
    ASSERT_TRUE(sealed.ok()) << sealed.status().message();
    EXPECT_EQ(sealed->rfind("v1:", 0), 0u);
    EXPECT_EQ(sealed->find(plaintext.empty() ? "\x01" : plaintext), std::string::npos);
    auto opened = Decrypt(key, *sealed);
    ASSERT_TRUE(opened.ok()) << opened.status().message();
    EXPECT_EQ(*opened, plaintext);
  }
}

TEST(IdentityEncryption, FreshNonceEachTime) {
  std::string key(32, 'k');
  EXPECT_NE(*Encrypt(key, "same"), *Encrypt(key, "same"));
}

TEST(IdentityEncryption, DetectsTamperingAndWrongKey) {
  std::string key(32, 'k');
  auto sealed = Encrypt(key, "secret value");
  ASSERT_TRUE(sealed.ok());
  std::string raw = *Base64Decode(sealed->substr(3));
  for (size_t i : {size_t{0}, size_t{12}, raw.size() - 1}) {  // nonce, ciphertext, tag
    std::string tampered = raw;
    tampered[i] = static_cast<char>(tampered[i] ^ 0x01);
    auto r = Decrypt(key, "v1:" + Base64Encode(tampered));
    EXPECT_FALSE(r.ok()) << "byte " << i;
  }
  EXPECT_FALSE(Decrypt(std::string(32, 'K'), *sealed).ok());
  EXPECT_FALSE(Decrypt(key, "v2:" + sealed->substr(3)).ok());
  EXPECT_FALSE(Decrypt(key, "v1:AAAA").ok());
  EXPECT_FALSE(Decrypt(key, "v1:not base64!").ok());
}

TEST(IdentityEncryption, RequiresA32ByteKey) {
  auto r = Encrypt("short", "x");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), ErrorCode::kInvalid);
  EXPECT_FALSE(Decrypt(std::string(31, 'k'), "v1:AAAA").ok());
}

}  // namespace
}  // namespace rendezvous::crypto
