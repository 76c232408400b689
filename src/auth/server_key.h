// The server key: 32 secret bytes kept apart from the data directory (a file of its own, or the
// SERAC_SERVER_KEY environment variable), so that a copy of the data directory alone reveals no
// user's secret and lets nobody forge a token.
//
// Everything secret that serac derives or stores goes through this key, each use under its own
// sub-key (HMAC-SHA256(key, "serac/<purpose>")), so no key ever serves two algorithms:
//   - Seal/Open (kSeal): AES-256-GCM for secrets at rest (IAM users' secret keys in the MetaStore);
//   - Seal/Open (kBearerToken, kSessionToken): AES-256-GCM of OAuth2 bearer tokens and of vended
//     credentials' session tokens (auth/tokens.h);
//   - MacKey(kSessionSecret): HMAC-SHA256 deriving a vended credential's secret (auth/tokens.h);
//   - Seal/Open (kConsoleSession): AES-256-GCM of the web console's session cookies (auth/tokens.h).
// Losing or changing the key invalidates every sealed secret and every issued token.
//
// A ServerKey is immutable after construction: share it freely between threads.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "common/limits.h"
#include "common/status.h"

namespace serac::auth {

// What a derived sub-key is for. Each value names a distinct derivation label.
enum class KeyPurpose : uint8_t {
  kSeal,            // AES-256-GCM key of Seal/Open for secrets at rest
  kBearerToken,     // AES-256-GCM key of OAuth2 bearer tokens
  kSessionToken,    // AES-256-GCM key of session (vended) credential tokens
  kSessionSecret,   // HMAC key that derives a session access key's secret key
  kConsoleSession,  // AES-256-GCM key of the web console's session tokens
};

class ServerKey {
 public:
  static constexpr size_t kKeyBytes = 32;
  // Sealed layout: version byte, nonce, ciphertext (as long as the plaintext), tag.
  static constexpr uint8_t kSealVersion = 1;
  static constexpr size_t kSealNonceBytes = 12;
  static constexpr size_t kSealTagBytes = 16;
  static constexpr size_t kSealOverheadBytes = 1 + kSealNonceBytes + kSealTagBytes;

  // Reads the key file at `path`: one line, the standard base64 encoding of 32 bytes (surrounding
  // whitespace ignored), as written by `openssl rand -base64 32 > FILE`. When the file does not
  // exist, creates it with a fresh random key: missing parent directories with mode 0700, the file
  // with mode 0600, written to a temporary file, fsynced, linked into place without replacing a
  // file another process created meanwhile (that one is then read), and the directory fsynced.
  // Refuses (kInvalidArgument) a file that group or others may access, a file that is not a
  // regular file, and malformed contents; kIoError for system call failures.
  static Result<ServerKey> LoadOrCreate(const std::string& path);
  // The value of SERAC_SERVER_KEY: standard base64 of 32 bytes (surrounding whitespace ignored).
  // Errors never repeat the value.
  static Result<ServerKey> FromEnvironmentValue(std::string_view base64);
  // Exactly kKeyBytes raw bytes (tests, tools).
  static Result<ServerKey> FromBytes(std::string_view bytes);

  ServerKey(const ServerKey& other);
  ServerKey& operator=(const ServerKey& other);
  ServerKey(ServerKey&& other) noexcept;
  ServerKey& operator=(ServerKey&& other) noexcept;
  ~ServerKey();  // wipes the key material

  // AES-256-GCM with a fresh random 96-bit nonce. `associated_data` is authenticated but not
  // stored: Open must be given the same value (bind a sealed secret to its owner, e.g. the access
  // key, so a sealed value cannot be moved to another row).
  std::string Seal(std::string_view plaintext, std::string_view associated_data,
                   KeyPurpose purpose = KeyPurpose::kSeal) const;
  // Sealed values are data at rest that serac wrote itself, so failing to open one means the
  // wrong server key or corrupted storage — a server fault, never the client's: kInternal, with a
  // message that says so and contains no key material. Wrong associated data fails the same way.
  Result<std::string> Open(std::string_view sealed, std::string_view associated_data,
                           KeyPurpose purpose = KeyPurpose::kSeal) const;

  // The 32-byte sub-key for `purpose`.
  const std::string& MacKey(KeyPurpose purpose) const;

  // A short public identifier of the key (16 hex chars of a one-way derivation) that start-up may
  // print so operators can tell which key a node uses; reveals nothing about the key.
  std::string Fingerprint() const;

 private:
  ServerKey() = default;
  void Wipe();

  std::string seal_key_;
  std::string bearer_token_key_;
  std::string session_token_key_;
  std::string session_secret_key_;
  std::string console_session_key_;
  std::string fingerprint_;
};

}  // namespace serac::auth
