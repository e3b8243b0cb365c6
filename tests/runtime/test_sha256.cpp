#include <gtest/gtest.h>

#include <string>

#include "runtime/sha256.h"

namespace hi {
namespace {

// FIPS 180-4 / NIST CAVP vectors.
TEST(Sha256, KnownVectors) {
  EXPECT_EQ(sha256_hex(""), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT_EQ(sha256_hex("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  EXPECT_EQ(sha256_hex("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"),
            "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
  EXPECT_EQ(sha256_hex("abcdefghbcdefghicdefghijdefghijkefghijklfghijklmghijklmnhijklmnoijklmnopjklmnopqklmnopqrlmnopqrs"
                       "mnopqrstnopqrstu"),
            "cf5b16a778af8380036ce59e7b0492370b249b11e8f07a51afac45037afee9d1");
  EXPECT_EQ(sha256_hex(std::string(1000000, 'a')), "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
}

TEST(Sha256, IncrementalEqualsOneShotAcrossBlockBoundaries) {
  std::string text;
  for (int i = 0; i < 300; ++i) text += char('a' + i % 26);
  std::string expected = sha256_hex(text);
  for (size_t split : {size_t(0), size_t(1), size_t(55), size_t(56), size_t(63), size_t(64), size_t(65), size_t(200)}) {
    Sha256 hash;
    hash.update(std::string_view(text).substr(0, split));
    hash.update(std::string_view(text).substr(split));
    EXPECT_EQ(hash.hex_digest(), expected) << "split at " << split;
  }
}

}  // namespace
}  // namespace hi
