// Text encodings used by the protocols: hex, base64, URI percent-encoding (SigV4 rules), XML escaping.
// All functions are pure and thread-safe.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace serac {

std::string HexEncode(std::string_view bytes);               // lower-case
std::optional<std::string> HexDecode(std::string_view hex);  // nullopt on odd length / bad digit
std::string Base64Encode(std::string_view bytes);
std::optional<std::string> Base64Decode(std::string_view text);  // strict; nullopt on bad input

// SigV4 UriEncode: keeps A-Z a-z 0-9 - . _ ~ ; every other byte becomes %XX (upper-case hex).
// With encode_slash=false, '/' is kept (object key paths).
std::string UriEncode(std::string_view bytes, bool encode_slash);
// Percent-decodes; '+' stays '+' unless plus_is_space. nullopt on a malformed escape.
std::optional<std::string> UriDecode(std::string_view text, bool plus_is_space = false);

// Escapes & < > " ' for XML text and attribute content.
std::string XmlEscape(std::string_view text);

bool IsValidUtf8(std::string_view bytes);
std::string AsciiLower(std::string_view text);
bool AsciiEqualsIgnoreCase(std::string_view a, std::string_view b);
std::string_view TrimWhitespace(std::string_view text);

// Parses a non-negative decimal integer that fits in uint64 (no sign, no spaces).
std::optional<uint64_t> ParseUint64(std::string_view text);

}  // namespace serac
