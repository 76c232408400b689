#include "common/encoding.h"

#include <array>

namespace serac {

namespace {

constexpr char kLowerHexDigits[] = "0123456789abcdef";
constexpr char kUpperHexDigits[] = "0123456789ABCDEF";
constexpr char kBase64Alphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

// Value of a hex digit, or -1.
int HexDigitValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// Value of a base64 digit, or -1 (padding is handled by the caller).
constexpr std::array<int8_t, 256> MakeBase64DecodeTable() {
  std::array<int8_t, 256> table{};
  for (auto& entry : table) entry = -1;
  for (int i = 0; i < 64; ++i) table[static_cast<uint8_t>(kBase64Alphabet[i])] = static_cast<int8_t>(i);
  return table;
}
constexpr std::array<int8_t, 256> kBase64DecodeTable = MakeBase64DecodeTable();

bool IsUnreserved(unsigned char c) {
  return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '.' ||
         c == '_' || c == '~';
}

char ToLowerAscii(char c) { return (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c; }

bool IsContinuationByte(unsigned char c) { return (c & 0xC0) == 0x80; }

// Length of the UTF-8 sequence starting at bytes[i] if it is well formed (shortest form, no
// surrogates, at most U+10FFFF), else 0.
size_t Utf8SequenceLength(std::string_view bytes, size_t i) {
  auto at = [&](size_t k) { return static_cast<unsigned char>(bytes[k]); };
  unsigned char lead = at(i);
  size_t remaining = bytes.size() - i;
  if (lead < 0x80) return 1;
  if (lead >= 0xC2 && lead <= 0xDF) {
    return (remaining >= 2 && IsContinuationByte(at(i + 1))) ? 2 : 0;
  }
  if (lead >= 0xE0 && lead <= 0xEF) {
    if (remaining < 3 || !IsContinuationByte(at(i + 1)) || !IsContinuationByte(at(i + 2))) return 0;
    if (lead == 0xE0 && at(i + 1) < 0xA0) return 0;   // overlong
    if (lead == 0xED && at(i + 1) >= 0xA0) return 0;  // UTF-16 surrogate
    return 3;
  }
  if (lead >= 0xF0 && lead <= 0xF4) {
    if (remaining < 4 || !IsContinuationByte(at(i + 1)) || !IsContinuationByte(at(i + 2)) ||
        !IsContinuationByte(at(i + 3))) {
      return 0;
    }
    if (lead == 0xF0 && at(i + 1) < 0x90) return 0;   // overlong
    if (lead == 0xF4 && at(i + 1) >= 0x90) return 0;  // above U+10FFFF
    return 4;
  }
  return 0;
}

}  // namespace

std::string HexEncode(std::string_view bytes) {
  std::string out(bytes.size() * 2, '\0');
  char* next = out.data();
  for (unsigned char c : bytes) {
    *next++ = kLowerHexDigits[c >> 4];
    *next++ = kLowerHexDigits[c & 0x0F];
  }
  return out;
}

std::optional<std::string> HexDecode(std::string_view hex) {
  if (hex.size() % 2 != 0) return std::nullopt;
  std::string out;
  out.reserve(hex.size() / 2);
  for (size_t i = 0; i < hex.size(); i += 2) {
    int high = HexDigitValue(hex[i]);
    int low = HexDigitValue(hex[i + 1]);
    if (high < 0 || low < 0) return std::nullopt;
    out.push_back(static_cast<char>((high << 4) | low));
  }
  return out;
}

std::string Base64Encode(std::string_view bytes) {
  std::string out;
  out.reserve((bytes.size() + 2) / 3 * 4);
  size_t i = 0;
  auto byte = [&](size_t k) { return static_cast<uint32_t>(static_cast<unsigned char>(bytes[k])); };
  for (; i + 3 <= bytes.size(); i += 3) {
    uint32_t group = (byte(i) << 16) | (byte(i + 1) << 8) | byte(i + 2);
    out.push_back(kBase64Alphabet[(group >> 18) & 0x3F]);
    out.push_back(kBase64Alphabet[(group >> 12) & 0x3F]);
    out.push_back(kBase64Alphabet[(group >> 6) & 0x3F]);
    out.push_back(kBase64Alphabet[group & 0x3F]);
  }
  size_t tail = bytes.size() - i;
  if (tail == 0) return out;
  uint32_t group = byte(i) << 16;
  if (tail == 2) group |= byte(i + 1) << 8;
  out.push_back(kBase64Alphabet[(group >> 18) & 0x3F]);
  out.push_back(kBase64Alphabet[(group >> 12) & 0x3F]);
  out.push_back(tail == 2 ? kBase64Alphabet[(group >> 6) & 0x3F] : '=');
  out.push_back('=');
  return out;
}

// Strict: padded to a multiple of four, '=' only at the end, and unused low bits of the last
// digit must be zero so each byte string has exactly one accepted encoding.
std::optional<std::string> Base64Decode(std::string_view text) {
  if (text.size() % 4 != 0) return std::nullopt;
  size_t padding = 0;
  if (!text.empty() && text.back() == '=') padding = (text[text.size() - 2] == '=') ? 2 : 1;
  std::string out;
  out.reserve(text.size() / 4 * 3);
  size_t data_digits = text.size() - padding;
  uint32_t accumulator = 0;
  int bits = 0;
  for (size_t i = 0; i < data_digits; ++i) {
    int value = kBase64DecodeTable[static_cast<unsigned char>(text[i])];
    if (value < 0) return std::nullopt;
    accumulator = (accumulator << 6) | static_cast<uint32_t>(value);
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out.push_back(static_cast<char>((accumulator >> bits) & 0xFF));
    }
  }
  if ((accumulator & ((1u << bits) - 1)) != 0) return std::nullopt;
  return out;
}

// Both write through a pointer into a string sized for the worst case: std::string's push_back is
// not inlined (libstdc++ instantiates it out of line), and these run on every signed request.
std::string UriEncode(std::string_view bytes, bool encode_slash) {
  std::string out(bytes.size() * 3, '\0');
  char* next = out.data();
  for (unsigned char c : bytes) {
    if (IsUnreserved(c) || (c == '/' && !encode_slash)) {
      *next++ = static_cast<char>(c);
    } else {
      *next++ = '%';
      *next++ = kUpperHexDigits[c >> 4];
      *next++ = kUpperHexDigits[c & 0x0F];
    }
  }
  out.resize(static_cast<size_t>(next - out.data()));
  return out;
}

std::optional<std::string> UriDecode(std::string_view text, bool plus_is_space) {
  std::string out(text.size(), '\0');
  char* next = out.data();
  for (size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (c == '%') {
      if (i + 2 >= text.size()) return std::nullopt;
      int high = HexDigitValue(text[i + 1]);
      int low = HexDigitValue(text[i + 2]);
      if (high < 0 || low < 0) return std::nullopt;
      *next++ = static_cast<char>((high << 4) | low);
      i += 2;
    } else if (c == '+' && plus_is_space) {
      *next++ = ' ';
    } else {
      *next++ = c;
    }
  }
  out.resize(static_cast<size_t>(next - out.data()));
  return out;
}

std::string XmlEscape(std::string_view text) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size();) {
    const char c = text[i];
    const auto byte = static_cast<unsigned char>(c);
    if (byte >= 0x80) {
      const size_t length = Utf8SequenceLength(text, i);
      if (length != 0) {
        out.append(text.substr(i, length));
        i += length;
        continue;
      }
    }
    ++i;
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&apos;";
        break;
      case '\r':
        out += "&#13;";
        break;  // kept: a raw CR would be read back as LF
      case '\t':
      case '\n':
        out.push_back(c);
        break;
      default:
        // XML 1.0 has no way to carry other control bytes, or bytes that are not UTF-8, even as
        // character references: they go out percent-encoded so that the document stays well formed.
        if (byte < 0x20 || byte >= 0x80) {
          out += '%';
          out += kHex[byte >> 4];
          out += kHex[byte & 0xf];
        } else {
          out.push_back(c);
        }
    }
  }
  return out;
}

bool IsValidUtf8(std::string_view bytes) {
  size_t i = 0;
  while (i < bytes.size()) {
    size_t length = Utf8SequenceLength(bytes, i);
    if (length == 0) return false;
    i += length;
  }
  return true;
}

std::string AsciiLower(std::string_view text) {
  std::string out(text);
  for (char& c : out) c = ToLowerAscii(c);
  return out;
}

bool AsciiEqualsIgnoreCase(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (ToLowerAscii(a[i]) != ToLowerAscii(b[i])) return false;
  }
  return true;
}

std::string_view TrimWhitespace(std::string_view text) {
  constexpr std::string_view kWhitespace = " \t\r\n";
  size_t begin = text.find_first_not_of(kWhitespace);
  if (begin == std::string_view::npos) return {};
  size_t end = text.find_last_not_of(kWhitespace);
  return text.substr(begin, end - begin + 1);
}

std::optional<uint64_t> ParseUint64(std::string_view text) {
  if (text.empty()) return std::nullopt;
  uint64_t value = 0;
  for (char c : text) {
    if (c < '0' || c > '9') return std::nullopt;
    uint64_t digit = static_cast<uint64_t>(c - '0');
    if (value > (UINT64_MAX - digit) / 10) return std::nullopt;
    value = value * 10 + digit;
  }
  return value;
}

}  // namespace serac
