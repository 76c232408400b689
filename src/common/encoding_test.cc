#include "common/encoding.h"

#include <gtest/gtest.h>

#include <random>

namespace serac {
namespace {

TEST(EncodingTest, HexRoundTripAndRejects) {
  EXPECT_EQ(HexEncode(std::string("\x00\x01\xab\xff", 4)), "0001abff");
  EXPECT_EQ(HexDecode("0001ABff"), std::string("\x00\x01\xab\xff", 4));
  EXPECT_EQ(HexDecode(""), std::string());
  EXPECT_EQ(HexDecode("abc"), std::nullopt);
  EXPECT_EQ(HexDecode("zz"), std::nullopt);
  EXPECT_EQ(HexDecode("0g"), std::nullopt);
  std::mt19937 rng(1);
  for (int i = 0; i < 100; ++i) {
    std::string bytes(rng() % 40, '\0');
    for (char& c : bytes) c = static_cast<char>(rng());
    EXPECT_EQ(HexDecode(HexEncode(bytes)), bytes);
  }
}

TEST(EncodingTest, Base64KnownVectors) {
  // RFC 4648 section 10.
  EXPECT_EQ(Base64Encode(""), "");
  EXPECT_EQ(Base64Encode("f"), "Zg==");
  EXPECT_EQ(Base64Encode("fo"), "Zm8=");
  EXPECT_EQ(Base64Encode("foo"), "Zm9v");
  EXPECT_EQ(Base64Encode("foobar"), "Zm9vYmFy");
  EXPECT_EQ(Base64Encode("\xfb\xff"), "+/8=");
  EXPECT_EQ(Base64Decode("Zm9vYg=="), "foob");
  EXPECT_EQ(Base64Decode("Zm9vYmE="), "fooba");
  EXPECT_EQ(Base64Decode(""), "");
}

TEST(EncodingTest, Base64RoundTrip) {
  std::mt19937 rng(2);
  for (int i = 0; i < 200; ++i) {
    std::string bytes(rng() % 50, '\0');
    for (char& c : bytes) c = static_cast<char>(rng());
    EXPECT_EQ(Base64Decode(Base64Encode(bytes)), bytes);
  }
}

TEST(EncodingTest, Base64RejectsMalformed) {
  EXPECT_EQ(Base64Decode("Zm9"), std::nullopt);     // not a multiple of 4
  EXPECT_EQ(Base64Decode("Zm9v\n"), std::nullopt);  // whitespace
  EXPECT_EQ(Base64Decode("Zm=v"), std::nullopt);    // padding in the middle
  EXPECT_EQ(Base64Decode("Z==="), std::nullopt);    // too much padding
  EXPECT_EQ(Base64Decode("===="), std::nullopt);
  EXPECT_EQ(Base64Decode("Zm-v"), std::nullopt);  // URL-safe alphabet is not base64
  EXPECT_EQ(Base64Decode("Zh=="), std::nullopt);  // non-zero unused bits
  EXPECT_EQ(Base64Decode("Zm9="), std::nullopt);
}

TEST(EncodingTest, UriEncodeFollowsSigV4) {
  EXPECT_EQ(UriEncode("a b+c~d/\xc3\xa9", true), "a%20b%2Bc~d%2F%C3%A9");
  EXPECT_EQ(UriEncode("a b+c~d/\xc3\xa9", false), "a%20b%2Bc~d/%C3%A9");
  EXPECT_EQ(UriEncode("AZaz09-._~", true), "AZaz09-._~");
  EXPECT_EQ(UriEncode("=&?*", true), "%3D%26%3F%2A");
}

TEST(EncodingTest, UriDecode) {
  EXPECT_EQ(UriDecode("a%20b%2Bc~d%2f%C3%A9"), "a b+c~d/\xc3\xa9");
  EXPECT_EQ(UriDecode("a+b"), "a+b");
  EXPECT_EQ(UriDecode("a+b", true), "a b");
  EXPECT_EQ(UriDecode("%2B", true), "+");
  EXPECT_EQ(UriDecode(""), "");
  EXPECT_EQ(UriDecode("%"), std::nullopt);
  EXPECT_EQ(UriDecode("%2"), std::nullopt);
  EXPECT_EQ(UriDecode("abc%"), std::nullopt);
  EXPECT_EQ(UriDecode("%zz"), std::nullopt);
  EXPECT_EQ(UriDecode("%2g"), std::nullopt);
  EXPECT_EQ(UriDecode(UriEncode("k\x01/\xff y", true)), "k\x01/\xff y");
}

TEST(EncodingTest, XmlEscape) {
  EXPECT_EQ(XmlEscape(R"(<a href="x">&'</a>)"), "&lt;a href=&quot;x&quot;&gt;&amp;&apos;&lt;/a&gt;");
  EXPECT_EQ(XmlEscape("plain"), "plain");
  // UTF-8 stays; what XML 1.0 cannot carry is percent-encoded, so the document stays well formed.
  EXPECT_EQ(XmlEscape("caf\xc3\xa9 \xe2\x82\xac"), "caf\xc3\xa9 \xe2\x82\xac");
  EXPECT_EQ(XmlEscape(std::string("a\x01"
                                  "b\x00"
                                  "c",
                                  5)),
            "a%01b%00c");
  EXPECT_EQ(XmlEscape("\xff\xc3"), "%FF%C3");
  EXPECT_EQ(XmlEscape("tab\tline\ncr\r"), "tab\tline\ncr&#13;");
}

TEST(EncodingTest, Utf8Validation) {
  EXPECT_TRUE(IsValidUtf8(""));
  EXPECT_TRUE(IsValidUtf8("ascii"));
  EXPECT_TRUE(IsValidUtf8("\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80"));  // é € 😀
  EXPECT_FALSE(IsValidUtf8("\xc3"));                                 // truncated
  EXPECT_FALSE(IsValidUtf8("\xc0\xaf"));                             // overlong '/'
  EXPECT_FALSE(IsValidUtf8("\xe0\x80\xaf"));                         // overlong
  EXPECT_FALSE(IsValidUtf8("\xed\xa0\x80"));                         // surrogate
  EXPECT_FALSE(IsValidUtf8("\xf4\x90\x80\x80"));                     // above U+10FFFF
  EXPECT_FALSE(IsValidUtf8("\x80"));                                 // lone continuation
  EXPECT_FALSE(IsValidUtf8("\xff"));
}

TEST(EncodingTest, AsciiHelpers) {
  EXPECT_EQ(AsciiLower("AbC-\xc3\x89"), "abc-\xc3\x89");
  EXPECT_TRUE(AsciiEqualsIgnoreCase("Content-Type", "content-TYPE"));
  EXPECT_FALSE(AsciiEqualsIgnoreCase("abc", "abcd"));
  EXPECT_FALSE(AsciiEqualsIgnoreCase("abc", "abd"));
  EXPECT_EQ(TrimWhitespace("  \t a b \r\n"), "a b");
  EXPECT_EQ(TrimWhitespace(" \t "), "");
  EXPECT_EQ(TrimWhitespace(""), "");
}

TEST(EncodingTest, ParseUint64) {
  EXPECT_EQ(ParseUint64("0"), 0u);
  EXPECT_EQ(ParseUint64("007"), 7u);
  EXPECT_EQ(ParseUint64("18446744073709551615"), UINT64_MAX);
  EXPECT_EQ(ParseUint64("18446744073709551616"), std::nullopt);
  EXPECT_EQ(ParseUint64("99999999999999999999"), std::nullopt);
  EXPECT_EQ(ParseUint64(""), std::nullopt);
  EXPECT_EQ(ParseUint64("-1"), std::nullopt);
  EXPECT_EQ(ParseUint64("+1"), std::nullopt);
  EXPECT_EQ(ParseUint64(" 1"), std::nullopt);
  EXPECT_EQ(ParseUint64("1x"), std::nullopt);
}

}  // namespace
}  // namespace serac
