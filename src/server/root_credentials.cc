#include "server/root_credentials.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "common/encoding.h"
#include "common/file_io.h"
#include "common/limits.h"
#include "common/log.h"
#include "common/random.h"

namespace serac::server {

namespace {

using file_io::ErrnoError;
using file_io::FsyncDirectory;
using file_io::WriteAll;

constexpr std::string_view kAccessKeyField = "access_key=";
constexpr std::string_view kSecretKeyField = "secret_key=";

bool IsPrintableAscii(std::string_view text) {
  for (char c : text) {
    if (c <= ' ' || c > '~') return false;  // also rejects spaces: keys end up in headers and shells
  }
  return true;
}

// Uniform choice from `alphabet` using rejection sampling so no character is favoured.
std::string RandomFromAlphabet(std::string_view alphabet, size_t length) {
  const size_t usable = 256 - (256 % alphabet.size());
  std::string out;
  while (out.size() < length) {
    for (char byte : RandomBytes(length)) {
      auto value = static_cast<unsigned char>(byte);
      if (value >= usable) continue;
      out.push_back(alphabet[value % alphabet.size()]);
      if (out.size() == length) break;
    }
  }
  return out;
}

Result<std::string> ReadSmallFile(const std::string& path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return ErrnoError("cannot open", path);
  std::string contents;
  char buffer[1024];
  while (true) {
    ssize_t n = ::read(fd, buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      Status status = ErrnoError("cannot read", path);
      ::close(fd);
      return status;
    }
    if (n == 0) break;
    contents.append(buffer, static_cast<size_t>(n));
    if (contents.size() > limits::kRootCredentialsFileBytesMax) {
      ::close(fd);
      return Error(ErrorCode::kInvalidArgument,
                   path + " is larger than limits::kRootCredentialsFileBytesMax");
    }
  }
  ::close(fd);
  return contents;
}

// tmp file (0600) → fsync → rename → fsync(dir): a crash leaves the old file or the new one.
Status WriteFileAtomically(const std::string& dir, const std::string& path, std::string_view data) {
  const std::string tmp_path = path + ".tmp";
  int fd = ::open(tmp_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (fd < 0) return ErrnoError("cannot create", tmp_path);
  Status status = WriteAll(fd, data, tmp_path);
  if (status.ok() && ::fsync(fd) != 0) status = ErrnoError("cannot fsync", tmp_path);
  ::close(fd);
  if (status.ok() && ::rename(tmp_path.c_str(), path.c_str()) != 0) {
    status = ErrnoError("cannot rename into", path);
  }
  if (!status.ok()) {
    ::unlink(tmp_path.c_str());
    return status;
  }
  return FsyncDirectory(dir);
}

void WarnIfReadableByOthers(const std::string& path) {
  struct stat info {};
  if (::stat(path.c_str(), &info) == 0 && (info.st_mode & 077) != 0) {
    log::Warn(path + " is accessible by other users; run: chmod 600 " + path);
  }
}

bool IsSet(const std::optional<std::string>& value) { return value.has_value() && !value->empty(); }

Result<RootCredentials> FromEnvironment(const std::string& user, const std::string& password) {
  SERAC_RETURN_IF_ERROR(ValidateRootCredentials(user, password));
  RootCredentials root;
  root.credentials.access_key = user;
  root.credentials.secret_key = password;
  root.source = CredentialSource::kEnvironment;
  return root;
}

}  // namespace

Status ValidateRootCredentials(std::string_view access_key, std::string_view secret_key) {
  if (access_key.size() < limits::kRootAccessKeyBytesMin ||
      access_key.size() > limits::kRootAccessKeyBytesMax) {
    return Error(ErrorCode::kInvalidArgument,
                 "the root access key must be " + std::to_string(limits::kRootAccessKeyBytesMin) + " to " +
                     std::to_string(limits::kRootAccessKeyBytesMax) + " characters");
  }
  if (secret_key.size() < limits::kRootSecretKeyBytesMin ||
      secret_key.size() > limits::kRootSecretKeyBytesMax) {
    return Error(ErrorCode::kInvalidArgument,
                 "the root secret key must be " + std::to_string(limits::kRootSecretKeyBytesMin) + " to " +
                     std::to_string(limits::kRootSecretKeyBytesMax) + " characters");
  }
  // The access key is embedded in "Credential=<key>/<scope>", so '/' would make it ambiguous.
  if (!IsPrintableAscii(access_key) || access_key.find('/') != std::string_view::npos) {
    return Error(ErrorCode::kInvalidArgument,
                 "the root access key may hold printable ASCII characters except '/' and spaces");
  }
  if (!IsPrintableAscii(secret_key)) {
    return Error(ErrorCode::kInvalidArgument,
                 "the root secret key may hold printable ASCII characters except spaces");
  }
  return Status::Ok();
}

std::string FormatCredentialsFile(const auth::Credentials& credentials) {
  return std::string(kAccessKeyField) + credentials.access_key + "\n" + std::string(kSecretKeyField) +
         credentials.secret_key + "\n";
}

Result<auth::Credentials> ParseCredentialsFile(std::string_view contents) {
  auth::Credentials credentials;
  while (!contents.empty()) {
    size_t end = contents.find('\n');
    std::string_view line = TrimWhitespace(contents.substr(0, end));
    contents = end == std::string_view::npos ? std::string_view() : contents.substr(end + 1);
    if (line.empty() || line.front() == '#') continue;
    if (line.starts_with(kAccessKeyField)) {
      credentials.access_key = std::string(line.substr(kAccessKeyField.size()));
    } else if (line.starts_with(kSecretKeyField)) {
      credentials.secret_key = std::string(line.substr(kSecretKeyField.size()));
    } else {
      return Error(ErrorCode::kInvalidArgument, "unexpected line in the root credentials file");
    }
  }
  if (credentials.access_key.empty() || credentials.secret_key.empty()) {
    return Error(ErrorCode::kInvalidArgument, "the root credentials file lacks access_key= or secret_key=");
  }
  SERAC_RETURN_IF_ERROR(ValidateRootCredentials(credentials.access_key, credentials.secret_key));
  return credentials;
}

auth::Credentials GenerateRootCredentials() {
  constexpr std::string_view kUpperAlphanumeric = "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
  constexpr std::string_view kAlphanumeric = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
  auth::Credentials credentials;
  credentials.access_key = RandomFromAlphabet(kUpperAlphanumeric, limits::kGeneratedAccessKeyBytes);
  credentials.secret_key = RandomFromAlphabet(kAlphanumeric, limits::kGeneratedSecretKeyBytes);
  return credentials;
}

Result<RootCredentials> LoadRootCredentials(const std::string& data_dir,
                                            const std::optional<std::string>& env_user,
                                            const std::optional<std::string>& env_password) {
  const std::string path = data_dir + "/" + std::string(kRootCredentialsFileName);
  if (IsSet(env_user) != IsSet(env_password)) {
    return Error(ErrorCode::kInvalidArgument, "set both SERAC_ROOT_USER and SERAC_ROOT_PASSWORD, or neither");
  }
  if (IsSet(env_user)) {
    SERAC_ASSIGN_OR_RETURN(RootCredentials root, FromEnvironment(*env_user, *env_password));
    root.file_path = path;
    return root;
  }

  RootCredentials root;
  root.file_path = path;
  if (::access(path.c_str(), F_OK) == 0) {
    WarnIfReadableByOthers(path);
    SERAC_ASSIGN_OR_RETURN(std::string contents, ReadSmallFile(path));
    Result<auth::Credentials> parsed = ParseCredentialsFile(contents);
    if (!parsed.ok()) {
      return Error(parsed.status().code(), path + ": " + parsed.status().message());
    }
    root.credentials = std::move(parsed).value();
    root.source = CredentialSource::kFile;
    return root;
  }
  if (errno != ENOENT) return ErrnoError("cannot access", path);

  root.credentials = GenerateRootCredentials();
  root.source = CredentialSource::kGenerated;
  SERAC_RETURN_IF_ERROR(WriteFileAtomically(data_dir, path, FormatCredentialsFile(root.credentials)));
  return root;
}

}  // namespace serac::server
