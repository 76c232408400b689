// Errors as values. Every module returns Status or Result<T>; the closed ErrorCode enum names no
// protocol: it is mapped to S3 error codes, Iceberg error types and the admin API's codes only by the
// front ends (s3/s3_errors.cc, catalog/catalog_errors.cc, admin/admin_api.cc).
// Status and Result are plain values: copy and move freely, no thread-safety concerns.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <variant>

namespace serac {

// Closed set of failure kinds. Add a code only when some caller must react to it differently.
enum class ErrorCode : uint8_t {
  kOk = 0,
  // Generic.
  kInvalidArgument,     // malformed input from the client (400)
  kMalformedDocument,   // a request document (XML, JSON) cannot be parsed or breaks its schema (400)
  kValidationFailed,    // well-formed input that breaks a rule of the data model it would change (400)
  kNotFound,            // the addressed thing does not exist (404); the caller names what was missing
  kAlreadyExists,       // create of something that exists (409)
  kNotEmpty,            // delete of a container that still holds children (409)
  kPreconditionFailed,  // a condition the client set does not hold (412)
  kConflict,            // concurrent modification lost a race (409)
  kNotModified,         // a conditional read: nothing changed (304)
  kLimitExceeded,       // a named limit in limits.h was exceeded (400 / 413 / 431)
  kTooSmall,            // an entity smaller than allowed, e.g. a multipart part under 5 MiB (400)
  kInvalidRange,        // a byte range that cannot be satisfied (416)
  kNotImplemented,      // a feature serac does not offer (501)
  // Authentication and authorisation.
  kUnknownAccessKey,        // no such access key (403)
  kSignatureMismatch,       // the signature does not match the request (403)
  kAuthorizationMalformed,  // the signature's header or query parameters are malformed (400)
  kClockSkewed,             // the request's time is more than limits::kClockSkewMax off (403)
  kExpired,                 // presigned URL or token expired (403)
  kAccessDenied,            // authenticated but not allowed, or anonymous (403)
  kMissingContentLength,    // 411
  // Integrity.
  kBadDigest,            // a body digest or checksum the client sent does not match (400)
  kPayloadHashMismatch,  // the body does not match the payload hash the signature covers (400)
  kIncompleteBody,       // client sent fewer bytes than announced / disconnected (400)
  // Server side.
  kIoError,      // local disk or database failure (500)
  kUnavailable,  // shutting down or overloaded; safe to retry (503)
  kTimeout,      // a deadline expired (408 for clients, 503 for back ends)
  kInternal,     // a bug: an invariant did not hold (500)
  // Client side.
  kOutcomeUnknown,  // a request's answer was lost: it may or may not have taken effect (a commit
                    // answered 5xx or cut off); the caller must look before it retries
};

std::string_view ErrorCodeName(ErrorCode code);

class [[nodiscard]] Status {
 public:
  Status() = default;  // OK
  Status(ErrorCode code, std::string message) : code_(code), message_(std::move(message)) {}

  static Status Ok() { return Status(); }

  bool ok() const { return code_ == ErrorCode::kOk; }
  ErrorCode code() const { return code_; }
  const std::string& message() const { return message_; }
  std::string ToString() const;

 private:
  ErrorCode code_ = ErrorCode::kOk;
  std::string message_;
};

inline Status Error(ErrorCode code, std::string message) { return Status(code, std::move(message)); }

// Result<T> holds either a value or a non-OK Status.
template <typename T>
class [[nodiscard]] Result {
 public:
  Result(T value) : state_(std::move(value)) {}         // NOLINT(google-explicit-constructor)
  Result(Status status) : state_(std::move(status)) {}  // NOLINT(google-explicit-constructor)

  bool ok() const { return std::holds_alternative<T>(state_); }
  const Status& status() const {
    static const Status kOkStatus;
    return ok() ? kOkStatus : std::get<Status>(state_);
  }
  T& value() & { return std::get<T>(state_); }
  const T& value() const& { return std::get<T>(state_); }
  T&& value() && { return std::get<T>(std::move(state_)); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }

 private:
  std::variant<T, Status> state_;
};

}  // namespace serac

// Propagate a non-OK Status from an expression returning Status.
#define SERAC_RETURN_IF_ERROR(expr)                \
  do {                                             \
    ::serac::Status serac_status_ = (expr);        \
    if (!serac_status_.ok()) return serac_status_; \
  } while (0)

#define SERAC_CONCAT_INNER_(a, b) a##b
#define SERAC_CONCAT_(a, b) SERAC_CONCAT_INNER_(a, b)
// Assign the value of a Result<T> expression to `lhs`, or return its Status.
#define SERAC_ASSIGN_OR_RETURN(lhs, expr) \
  SERAC_ASSIGN_OR_RETURN_IMPL_(SERAC_CONCAT_(serac_result_, __LINE__), lhs, expr)
#define SERAC_ASSIGN_OR_RETURN_IMPL_(tmp, lhs, expr) \
  auto tmp = (expr);                                 \
  if (!tmp.ok()) return tmp.status();                \
  lhs = std::move(tmp).value()
