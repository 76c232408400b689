#include "server/listen_address.h"

#include "common/encoding.h"

namespace serac::server {

namespace {

Status InvalidAddress(std::string_view text, std::string_view why) {
  return Error(ErrorCode::kInvalidArgument, "invalid --address \"" + std::string(text) +
                                                "\": " + std::string(why) +
                                                " (expected HOST:PORT, :PORT or [IPv6]:PORT)");
}

}  // namespace

Result<ListenAddress> ParseListenAddress(std::string_view text) {
  size_t colon = text.rfind(':');
  if (colon == std::string_view::npos) return InvalidAddress(text, "no port");
  std::string_view host = text.substr(0, colon);
  std::string_view port_text = text.substr(colon + 1);
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']') {
    host = host.substr(1, host.size() - 2);
  } else if (host.find(':') != std::string_view::npos) {
    return InvalidAddress(text, "IPv6 addresses need brackets");
  }
  std::optional<uint64_t> port = ParseUint64(port_text);
  if (!port) return InvalidAddress(text, "the port is not a number");
  if (*port > 65535) return InvalidAddress(text, "the port is above 65535");
  ListenAddress address;
  address.host = host.empty() ? "0.0.0.0" : std::string(host);
  address.port = static_cast<uint16_t>(*port);
  return address;
}

bool IsWildcardHost(std::string_view host) {
  return host.empty() || host == "0.0.0.0" || host == "::" || host == "[::]";
}

std::string EndpointUrl(std::string_view host, uint16_t port, bool tls) {
  std::string shown = IsWildcardHost(host) ? "127.0.0.1" : std::string(host);
  if (shown.find(':') != std::string::npos) shown = "[" + shown + "]";
  return std::string(tls ? "https://" : "http://") + shown + ":" + std::to_string(port);
}

}  // namespace serac::server
