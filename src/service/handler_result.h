// How every front end's handler ends (S3, the catalog, the admin API): it sent its success
// response itself and returns kHandled, or it returns the error to send, in its protocol's error
// type, and the front end renders it. A handler never throws and never sends an error itself.
#pragma once

#include <optional>

namespace serac::service {

template <typename ProtocolError>
using HandlerResult = std::optional<ProtocolError>;

inline constexpr std::nullopt_t kHandled = std::nullopt;

}  // namespace serac::service
