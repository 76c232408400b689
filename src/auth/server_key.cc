#include "auth/server_key.h"

#include <fcntl.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <optional>

#include "common/encoding.h"
#include "common/file_io.h"
#include "common/hash.h"
#include "common/random.h"

namespace serac::auth {

namespace {

using file_io::ErrnoError;
using file_io::FsyncDirectory;
using file_io::WriteAll;

// Derivation labels. Changing one invalidates everything protected by that sub-key.
constexpr std::string_view kSealLabel = "serac/seal/aes-256-gcm/v1";
constexpr std::string_view kBearerTokenLabel = "serac/bearer-token/hmac-sha256/v1";
constexpr std::string_view kSessionTokenLabel = "serac/session-token/hmac-sha256/v1";
constexpr std::string_view kSessionSecretLabel = "serac/session-secret/hmac-sha256/v1";
constexpr std::string_view kConsoleSessionLabel = "serac/console-session/aes-256-gcm/v1";
constexpr std::string_view kFingerprintLabel = "serac/fingerprint/v1";

// OpenSSL takes int lengths; longer inputs go through in steps of this size.
constexpr size_t kCipherStepBytes = 1u << 30;

std::string Derive(std::string_view key, std::string_view label) {
  Sha256Digest digest = HmacSha256(key, label);
  return std::string(reinterpret_cast<const char*>(digest.data()), digest.size());
}

std::string ParentDirectory(const std::string& path) {
  size_t slash = path.find_last_of('/');
  if (slash == std::string::npos) return ".";
  if (slash == 0) return "/";
  return path.substr(0, slash);
}

// mkdir -p with mode 0700 for the directories it creates; existing ones are left as they are.
Status MakeDirectories(const std::string& dir) {
  struct stat info {};
  if (::stat(dir.c_str(), &info) == 0) {
    if (!S_ISDIR(info.st_mode)) return Error(ErrorCode::kIoError, dir + " is not a directory");
    return Status::Ok();
  }
  if (errno != ENOENT) return ErrnoError("cannot inspect", dir);
  std::string parent = ParentDirectory(dir);
  if (parent != dir) SERAC_RETURN_IF_ERROR(MakeDirectories(parent));
  if (::mkdir(dir.c_str(), 0700) != 0 && errno != EEXIST) return ErrnoError("cannot create directory", dir);
  return Status::Ok();
}

// The mode checked is that of the file actually opened (fstat on the descriptor), so a symlink
// cannot hide a world-readable target.
Result<std::string> ReadKeyFile(int fd, const std::string& path) {
  struct stat info {};
  if (::fstat(fd, &info) != 0) return ErrnoError("cannot inspect", path);
  if (!S_ISREG(info.st_mode)) return Error(ErrorCode::kInvalidArgument, path + " is not a regular file");
  if ((info.st_mode & 077) != 0) {
    char mode[8];
    std::snprintf(mode, sizeof mode, "%04o", static_cast<unsigned>(info.st_mode & 07777));
    return Error(ErrorCode::kInvalidArgument, "the server key file " + path + " has mode " + mode +
                                                  ", which lets group or others access it; run: chmod 600 " +
                                                  path);
  }
  std::string contents;
  char buffer[512];
  while (true) {
    ssize_t n = ::read(fd, buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return ErrnoError("cannot read", path);
    if (n == 0) break;
    contents.append(buffer, static_cast<size_t>(n));
    if (contents.size() > limits::kServerKeyFileBytesMax) {
      OPENSSL_cleanse(contents.data(), contents.size());
      return Error(ErrorCode::kInvalidArgument,
                   "the server key file " + path + " is larger than limits::kServerKeyFileBytesMax");
    }
  }
  OPENSSL_cleanse(buffer, sizeof buffer);
  return contents;
}

// Decodes the text form of a key; `where` names the source in errors, which never echo the text.
Result<ServerKey> ParseKeyText(std::string_view text, const std::string& where) {
  std::optional<std::string> bytes = Base64Decode(TrimWhitespace(text));
  if (!bytes.has_value() || bytes->size() != ServerKey::kKeyBytes) {
    if (bytes.has_value()) OPENSSL_cleanse(bytes->data(), bytes->size());
    return Error(
        ErrorCode::kInvalidArgument,
        where +
            " must hold the base64 encoding of exactly 32 bytes (create one with: openssl rand -base64 32)");
  }
  Result<ServerKey> key = ServerKey::FromBytes(*bytes);
  OPENSSL_cleanse(bytes->data(), bytes->size());
  return key;
}

// Writes a fresh key to a temporary file and links it into place. link(2) never replaces an
// existing file, so two servers starting together on a fresh directory agree on one key: the
// loser reads the winner's file.
Status CreateKeyFile(const std::string& path) {
  const std::string dir = ParentDirectory(path);
  SERAC_RETURN_IF_ERROR(MakeDirectories(dir));
  const std::string tmp_path = path + ".tmp-" + RandomHexId(8);
  int fd = ::open(tmp_path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
  if (fd < 0) return ErrnoError("cannot create", tmp_path);
  std::string raw = RandomBytes(ServerKey::kKeyBytes);
  std::string text = Base64Encode(raw) + "\n";
  OPENSSL_cleanse(raw.data(), raw.size());
  Status status = Status::Ok();
  if (::fchmod(fd, 0600) != 0) status = ErrnoError("cannot set the mode of", tmp_path);
  if (status.ok()) status = WriteAll(fd, text, tmp_path);
  OPENSSL_cleanse(text.data(), text.size());
  if (status.ok() && ::fsync(fd) != 0) status = ErrnoError("cannot fsync", tmp_path);
  ::close(fd);
  if (status.ok() && ::link(tmp_path.c_str(), path.c_str()) != 0 && errno != EEXIST) {
    status = ErrnoError("cannot link into place", path);
  }
  ::unlink(tmp_path.c_str());
  SERAC_RETURN_IF_ERROR(status);
  return FsyncDirectory(dir);
}

Result<ServerKey> LoadExisting(const std::string& path, int fd) {
  Result<std::string> text = ReadKeyFile(fd, path);
  ::close(fd);
  if (!text.ok()) return text.status();
  Result<ServerKey> key = ParseKeyText(*text, "the server key file " + path);
  OPENSSL_cleanse(text->data(), text->size());
  return key;
}

struct CipherContextFree {
  void operator()(EVP_CIPHER_CTX* ctx) const { EVP_CIPHER_CTX_free(ctx); }
};
using CipherContext = std::unique_ptr<EVP_CIPHER_CTX, CipherContextFree>;

const unsigned char* Bytes(std::string_view text) {
  return reinterpret_cast<const unsigned char*>(text.data());
}
unsigned char* MutableBytes(std::string& text) { return reinterpret_cast<unsigned char*>(text.data()); }

// Seal has no error path in its interface: EVP fails only on allocation failure or a bug, and
// carrying on without encryption is not an option.
void Require(bool ok) {
  if (!ok) std::abort();
}

// Feeds `input` through EVP_{Encrypt,Decrypt}Update (out == nullptr: associated data).
template <typename UpdateFn>
bool CipherUpdate(EVP_CIPHER_CTX* ctx, UpdateFn update, std::string_view input, unsigned char* out) {
  size_t done = 0;
  while (done < input.size()) {
    size_t step = std::min(input.size() - done, kCipherStepBytes);
    int written = 0;
    if (update(ctx, out == nullptr ? nullptr : out + done, &written, Bytes(input.substr(done, step)),
               static_cast<int>(step)) != 1) {
      return false;
    }
    done += step;
  }
  return true;
}

}  // namespace

Result<ServerKey> ServerKey::LoadOrCreate(const std::string& path) {
  if (path.empty()) return Error(ErrorCode::kInvalidArgument, "the server key file path is empty");
  for (int attempt = 0; attempt < 2; ++attempt) {
    int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd >= 0) return LoadExisting(path, fd);
    if (errno != ENOENT) return ErrnoError("cannot open the server key file", path);
    SERAC_RETURN_IF_ERROR(CreateKeyFile(path));
  }
  return Error(ErrorCode::kIoError, "the server key file " + path + " vanished right after it was created");
}

Result<ServerKey> ServerKey::FromEnvironmentValue(std::string_view base64) {
  return ParseKeyText(base64, "SERAC_SERVER_KEY");
}

Result<ServerKey> ServerKey::FromBytes(std::string_view bytes) {
  if (bytes.size() != kKeyBytes) {
    return Error(ErrorCode::kInvalidArgument,
                 "a server key is exactly 32 bytes, not " + std::to_string(bytes.size()));
  }
  ServerKey key;
  key.seal_key_ = Derive(bytes, kSealLabel);
  key.bearer_token_key_ = Derive(bytes, kBearerTokenLabel);
  key.session_token_key_ = Derive(bytes, kSessionTokenLabel);
  key.session_secret_key_ = Derive(bytes, kSessionSecretLabel);
  key.console_session_key_ = Derive(bytes, kConsoleSessionLabel);
  key.fingerprint_ = HexEncode(Derive(bytes, kFingerprintLabel).substr(0, 8));
  return key;
}

ServerKey::ServerKey(const ServerKey& other) = default;
ServerKey& ServerKey::operator=(const ServerKey& other) {
  if (this != &other) {
    Wipe();
    seal_key_ = other.seal_key_;
    bearer_token_key_ = other.bearer_token_key_;
    session_token_key_ = other.session_token_key_;
    session_secret_key_ = other.session_secret_key_;
    console_session_key_ = other.console_session_key_;
    fingerprint_ = other.fingerprint_;
  }
  return *this;
}
ServerKey::ServerKey(ServerKey&& other) noexcept = default;
ServerKey& ServerKey::operator=(ServerKey&& other) noexcept {
  if (this != &other) {
    Wipe();
    seal_key_ = std::move(other.seal_key_);
    bearer_token_key_ = std::move(other.bearer_token_key_);
    session_token_key_ = std::move(other.session_token_key_);
    session_secret_key_ = std::move(other.session_secret_key_);
    console_session_key_ = std::move(other.console_session_key_);
    fingerprint_ = std::move(other.fingerprint_);
  }
  return *this;
}
ServerKey::~ServerKey() { Wipe(); }

void ServerKey::Wipe() {
  for (std::string* key :
       {&seal_key_, &bearer_token_key_, &session_token_key_, &session_secret_key_, &console_session_key_}) {
    if (!key->empty()) OPENSSL_cleanse(key->data(), key->size());
    key->clear();
  }
}

const std::string& ServerKey::MacKey(KeyPurpose purpose) const {
  switch (purpose) {
    case KeyPurpose::kSeal:
      return seal_key_;
    case KeyPurpose::kBearerToken:
      return bearer_token_key_;
    case KeyPurpose::kSessionToken:
      return session_token_key_;
    case KeyPurpose::kSessionSecret:
      return session_secret_key_;
    case KeyPurpose::kConsoleSession:
      return console_session_key_;
  }
  return session_secret_key_;  // unreachable: the switch covers the enum
}

std::string ServerKey::Fingerprint() const { return fingerprint_; }

std::string ServerKey::Seal(std::string_view plaintext, std::string_view associated_data,
                            KeyPurpose purpose) const {
  std::string sealed(kSealOverheadBytes + plaintext.size(), '\0');
  sealed[0] = static_cast<char>(kSealVersion);
  std::string nonce = RandomBytes(kSealNonceBytes);
  std::memcpy(sealed.data() + 1, nonce.data(), kSealNonceBytes);
  unsigned char* ciphertext = MutableBytes(sealed) + 1 + kSealNonceBytes;

  CipherContext ctx(EVP_CIPHER_CTX_new());
  Require(ctx != nullptr);
  Require(EVP_EncryptInit_ex(ctx.get(), EVP_aes_256_gcm(), nullptr, nullptr, nullptr) == 1);
  Require(EVP_CIPHER_CTX_ctrl(ctx.get(), EVP_CTRL_GCM_SET_IVLEN, static_cast<int>(kSealNonceBytes),
                              nullptr) == 1);
  Require(EVP_EncryptInit_ex(ctx.get(), nullptr, nullptr, Bytes(MacKey(purpose)), Bytes(nonce)) == 1);
  Require(CipherUpdate(ctx.get(), EVP_EncryptUpdate, associated_data, nullptr));
  Require(CipherUpdate(ctx.get(), EVP_EncryptUpdate, plaintext, ciphertext));
  int final_bytes = 0;
  Require(EVP_EncryptFinal_ex(ctx.get(), ciphertext + plaintext.size(), &final_bytes) == 1 &&
          final_bytes == 0);
  Require(EVP_CIPHER_CTX_ctrl(ctx.get(), EVP_CTRL_GCM_GET_TAG, static_cast<int>(kSealTagBytes),
                              ciphertext + plaintext.size()) == 1);
  return sealed;
}

Result<std::string> ServerKey::Open(std::string_view sealed, std::string_view associated_data,
                                    KeyPurpose purpose) const {
  if (sealed.size() < kSealOverheadBytes || static_cast<uint8_t>(sealed[0]) != kSealVersion) {
    return Error(ErrorCode::kInternal,
                 "a sealed secret is malformed or of an unknown version (corrupted storage?)");
  }
  std::string_view nonce = sealed.substr(1, kSealNonceBytes);
  std::string_view ciphertext = sealed.substr(1 + kSealNonceBytes, sealed.size() - kSealOverheadBytes);
  std::string tag(sealed.substr(sealed.size() - kSealTagBytes));
  std::string plaintext(ciphertext.size(), '\0');

  CipherContext ctx(EVP_CIPHER_CTX_new());
  if (ctx == nullptr) return Error(ErrorCode::kInternal, "cannot allocate a cipher context");
  bool ok =
      EVP_DecryptInit_ex(ctx.get(), EVP_aes_256_gcm(), nullptr, nullptr, nullptr) == 1 &&
      EVP_CIPHER_CTX_ctrl(ctx.get(), EVP_CTRL_GCM_SET_IVLEN, static_cast<int>(kSealNonceBytes), nullptr) ==
          1 &&
      EVP_DecryptInit_ex(ctx.get(), nullptr, nullptr, Bytes(MacKey(purpose)), Bytes(nonce)) == 1 &&
      CipherUpdate(ctx.get(), EVP_DecryptUpdate, associated_data, nullptr) &&
      CipherUpdate(ctx.get(), EVP_DecryptUpdate, ciphertext, MutableBytes(plaintext)) &&
      EVP_CIPHER_CTX_ctrl(ctx.get(), EVP_CTRL_GCM_SET_TAG, static_cast<int>(kSealTagBytes), tag.data()) == 1;
  int final_bytes = 0;
  ok = ok && EVP_DecryptFinal_ex(ctx.get(), MutableBytes(plaintext) + plaintext.size(), &final_bytes) == 1;
  if (!ok) {
    if (!plaintext.empty()) OPENSSL_cleanse(plaintext.data(), plaintext.size());
    return Error(ErrorCode::kInternal,
                 "a sealed secret does not authenticate: the server key differs from the one that sealed it, "
                 "or the stored value is corrupted");
  }
  return plaintext;
}

}  // namespace serac::auth
