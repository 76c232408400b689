// Send(): each step (resolve, connect, TLS handshake, write, read) is started asynchronously and
// the io_context is run until the step finishes or the deadline passes; on a timeout the socket is
// closed, which aborts the step. That gives a blocking call with real deadlines without threads.
#include "http/client.h"

#include <openssl/ssl.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

#include <algorithm>
#include <boost/asio/connect.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/ssl.hpp>
#include <optional>
#include <utility>

#include "common/blocking.h"
#include "common/encoding.h"

namespace serac::http {
namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace bhttp = boost::beast::http;
using tcp = asio::ip::tcp;
using SteadyClock = std::chrono::steady_clock;
using SystemError = boost::system::error_code;

uint16_t DefaultPort(bool tls) { return tls ? 443 : 80; }

bool IsIpLiteral(const std::string& host) {
  SystemError error;
  asio::ip::make_address(host, error);
  return !error;
}

Result<uint16_t> ParsePort(std::string_view text, std::string_view url) {
  std::optional<uint64_t> port = ParseUint64(text);
  if (!port || *port == 0 || *port > 65535) {
    return Error(ErrorCode::kInvalidArgument, "bad port in URL " + std::string(url));
  }
  return static_cast<uint16_t>(*port);
}

// Splits "host", "host:port", "[v6]" or "[v6]:port" into `url`.
Status ParseAuthority(std::string_view authority, std::string_view whole, Url& url) {
  auto bad = [whole](const std::string& why) {
    return Error(ErrorCode::kInvalidArgument, why + ": " + std::string(whole));
  };
  if (authority.find('@') != std::string_view::npos) return bad("user-info in URLs is not supported");
  std::string_view port_text;
  if (!authority.empty() && authority.front() == '[') {
    size_t close = authority.find(']');
    if (close == std::string_view::npos) return bad("unterminated IPv6 literal in URL");
    url.host = std::string(authority.substr(1, close - 1));
    std::string_view rest = authority.substr(close + 1);
    if (!rest.empty()) {
      if (rest.front() != ':') return bad("malformed host in URL");
      port_text = rest.substr(1);
      if (port_text.empty()) return bad("empty port in URL");
    }
  } else {
    size_t colon = authority.rfind(':');
    url.host = std::string(authority.substr(0, colon));
    if (colon != std::string_view::npos) {
      port_text = authority.substr(colon + 1);
      if (port_text.empty()) return bad("empty port in URL");
    }
  }
  if (url.host.empty()) return bad("URL has no host");
  url.port = DefaultPort(url.tls);
  if (!port_text.empty()) {
    SERAC_ASSIGN_OR_RETURN(url.port, ParsePort(port_text, whole));
  }
  return Status::Ok();
}

// Runs one exchange on one connection; owns the io_context every step runs on.
class Exchange {
 public:
  Exchange(const ClientRequest& request, Url url, bool* request_sent)
      : request_(request),
        request_sent_(request_sent),
        url_(std::move(url)),
        endpoint_(std::string(url_.tls ? "https://" : "http://") + url_.HostHeader()),
        deadline_(SteadyClock::now() + request.timeout),
        connect_deadline_(std::min(deadline_, SteadyClock::now() + request.connect_timeout)) {}

  Result<ClientResponse> Run() {
    beast::tcp_stream stream(io_);
    SERAC_RETURN_IF_ERROR(Connect(stream));
    if (!url_.tls) return WriteAndRead(stream);
    asio::ssl::context context(asio::ssl::context::tls_client);
    SERAC_RETURN_IF_ERROR(ConfigureTrust(context));
    beast::ssl_stream<beast::tcp_stream> tls_stream(std::move(stream), context);
    SERAC_RETURN_IF_ERROR(Handshake(tls_stream));
    return WriteAndRead(tls_stream);
  }

 private:
  // Starts a step with a completion handler and runs until it completes or `deadline` passes;
  // then `abort` closes what the step waits on and its completion is drained.
  template <typename StartStep, typename Abort>
  std::optional<SystemError> RunStep(SteadyClock::time_point deadline, StartStep start, Abort abort) {
    std::optional<SystemError> result;
    start([&result](SystemError error, auto&&...) { result = error; });
    io_.restart();
    io_.run_until(deadline);
    if (result) return result;
    abort();
    io_.restart();
    io_.run();
    return std::nullopt;  // timed out
  }

  Status TimedOut(std::string_view step) const {
    return Error(ErrorCode::kTimeout, std::string(step) + " " + endpoint_ + " timed out");
  }

  Status Connect(beast::tcp_stream& stream) {
    tcp::resolver resolver(io_);
    tcp::resolver::results_type endpoints;
    auto resolved = RunStep(
        connect_deadline_,
        [&](auto done) {
          resolver.async_resolve(url_.host, std::to_string(url_.port),
                                 [&endpoints, done](SystemError error, tcp::resolver::results_type found) {
                                   endpoints = std::move(found);
                                   done(error);
                                 });
        },
        [&resolver] { resolver.cancel(); });
    if (!resolved) return TimedOut("resolving");
    if (*resolved) {
      return Error(ErrorCode::kUnavailable, "cannot resolve " + endpoint_ + ": " + resolved->message());
    }
    auto connected = RunStep(
        connect_deadline_, [&](auto done) { stream.async_connect(endpoints, done); },
        [&stream] { stream.close(); });
    if (!connected) return TimedOut("connecting to");
    if (*connected) {
      return Error(ErrorCode::kUnavailable, "cannot connect to " + endpoint_ + ": " + connected->message());
    }
    return Status::Ok();
  }

  Status ConfigureTrust(asio::ssl::context& context) {
    if (request_.tls_insecure) {
      context.set_verify_mode(asio::ssl::verify_none);
      return Status::Ok();
    }
    SystemError error;
    if (request_.tls_ca_file.empty()) {
      context.set_default_verify_paths(error);
    } else {
      context.load_verify_file(request_.tls_ca_file, error);
    }
    if (error) {
      return Error(ErrorCode::kInvalidArgument,
                   "cannot load trusted certificates " + request_.tls_ca_file + ": " + error.message());
    }
    context.set_verify_mode(asio::ssl::verify_peer);
    return Status::Ok();
  }

  Status Handshake(beast::ssl_stream<beast::tcp_stream>& stream) {
    SSL* ssl = stream.native_handle();
    const bool ip_literal = IsIpLiteral(url_.host);
    if (!ip_literal) SSL_set_tlsext_host_name(ssl, url_.host.c_str());
    if (!request_.tls_insecure) {
      // The certificate must name the host we dialled (DNS name or IP SAN).
      X509_VERIFY_PARAM* param = SSL_get0_param(ssl);
      int set = ip_literal ? X509_VERIFY_PARAM_set1_ip_asc(param, url_.host.c_str())
                           : X509_VERIFY_PARAM_set1_host(param, url_.host.c_str(), 0);
      if (set != 1) return Error(ErrorCode::kInvalidArgument, "cannot verify host name " + url_.host);
    }
    auto shaken = RunStep(
        connect_deadline_, [&](auto done) { stream.async_handshake(asio::ssl::stream_base::client, done); },
        [&stream] { beast::get_lowest_layer(stream).close(); });
    if (!shaken) return TimedOut("TLS handshake with");
    if (*shaken) {
      std::string detail = shaken->message();
      long verify = SSL_get_verify_result(ssl);
      if (verify != X509_V_OK) detail += " (" + std::string(X509_verify_cert_error_string(verify)) + ")";
      return Error(ErrorCode::kUnavailable, "TLS handshake with " + endpoint_ + " failed: " + detail);
    }
    return Status::Ok();
  }

  // The body is sent from request_'s own bytes, never copied: a table writer's parts are megabytes.
  bhttp::request<bhttp::span_body<const char>> BuildMessage() const {
    bhttp::request<bhttp::span_body<const char>> message;
    message.method_string(request_.method);
    message.target(url_.Target());
    message.version(11);
    for (const Header& header : request_.headers) message.insert(header.name, header.value);
    if (message.find(bhttp::field::host) == message.end()) message.set(bhttp::field::host, url_.HostHeader());
    if (message.find(bhttp::field::user_agent) == message.end())
      message.set(bhttp::field::user_agent, "serac");
    // One request per connection: saying so lets the server close at once.
    if (message.find(bhttp::field::connection) == message.end())
      message.set(bhttp::field::connection, "close");
    message.body() = {request_.body.data(), request_.body.size()};
    message.content_length(request_.body.size());
    return message;
  }

  Status ReadFailure(const SystemError& error) const {
    if (error == bhttp::error::body_limit) {
      return Error(ErrorCode::kLimitExceeded, "response body from " + endpoint_ + " exceeds " +
                                                  std::to_string(request_.response_body_bytes_max) +
                                                  " bytes");
    }
    if (error == bhttp::error::header_limit) {
      return Error(ErrorCode::kLimitExceeded,
                   "response head from " + endpoint_ + " exceeds limits::kHttpClientResponseHeaderBytesMax");
    }
    return Error(ErrorCode::kUnavailable,
                 "reading the response from " + endpoint_ + " failed: " + error.message());
  }

  template <typename Stream>
  Result<ClientResponse> WriteAndRead(Stream& stream) {
    auto abort = [&stream] { beast::get_lowest_layer(stream).close(); };
    bhttp::request<bhttp::span_body<const char>> message = BuildMessage();
    if (request_sent_ != nullptr) *request_sent_ = true;
    auto written = RunStep(
        deadline_, [&](auto done) { bhttp::async_write(stream, message, done); }, abort);
    if (!written) return TimedOut("sending the request to");
    if (*written) {
      return Error(ErrorCode::kUnavailable,
                   "sending the request to " + endpoint_ + " failed: " + written->message());
    }
    bhttp::response_parser<bhttp::string_body> parser;
    parser.header_limit(static_cast<uint32_t>(limits::kHttpClientResponseHeaderBytesMax));
    parser.body_limit(request_.response_body_bytes_max);
    if (request_.method == "HEAD") parser.skip(true);
    beast::flat_buffer buffer;
    auto read = RunStep(
        deadline_, [&](auto done) { bhttp::async_read(stream, buffer, parser, done); }, abort);
    if (!read) return TimedOut("waiting for the response from");
    if (*read) return ReadFailure(*read);
    return ToResponse(parser.release());
  }

  static ClientResponse ToResponse(bhttp::response<bhttp::string_body> message) {
    ClientResponse response;
    response.status = static_cast<int>(message.result_int());
    for (const auto& field : message) {
      response.headers.push_back(Header{std::string(field.name_string()), std::string(field.value())});
    }
    response.body = std::move(message.body());
    return response;
  }

  const ClientRequest& request_;
  bool* request_sent_;  // may be null
  Url url_;
  std::string endpoint_;  // for messages: "http://host:port"
  SteadyClock::time_point deadline_;
  SteadyClock::time_point connect_deadline_;
  asio::io_context io_;
};

}  // namespace

std::string Url::HostHeader() const {
  std::string text = host.find(':') != std::string::npos ? "[" + host + "]" : host;
  if (port != DefaultPort(tls)) text += ":" + std::to_string(port);
  return text;
}

std::string Url::Target() const { return query.empty() ? path : path + "?" + query; }

Result<Url> ParseUrl(std::string_view text) {
  Url url;
  size_t scheme_end = text.find("://");
  if (scheme_end == std::string_view::npos) {
    return Error(ErrorCode::kInvalidArgument, "URL needs http:// or https://: " + std::string(text));
  }
  std::string scheme = AsciiLower(text.substr(0, scheme_end));
  if (scheme != "http" && scheme != "https") {
    return Error(ErrorCode::kInvalidArgument, "URL scheme must be http or https: " + std::string(text));
  }
  url.tls = scheme == "https";
  if (text.find('#') != std::string_view::npos) {
    return Error(ErrorCode::kInvalidArgument, "URL fragments are not supported: " + std::string(text));
  }
  std::string_view rest = text.substr(scheme_end + 3);
  size_t authority_end = rest.find_first_of("/?");
  SERAC_RETURN_IF_ERROR(ParseAuthority(rest.substr(0, authority_end), text, url));
  std::string_view location = authority_end == std::string_view::npos ? "" : rest.substr(authority_end);
  size_t question = location.find('?');
  url.path = std::string(location.substr(0, question));
  if (url.path.empty()) url.path = "/";
  if (question != std::string_view::npos) url.query = std::string(location.substr(question + 1));
  return url;
}

const std::string* ClientResponse::FindHeader(std::string_view name) const {
  for (const Header& header : headers) {
    if (AsciiEqualsIgnoreCase(header.name, name)) return &header.value;
  }
  return nullptr;
}

Result<ClientResponse> Send(const ClientRequest& request, bool* request_sent) {
  const blocking::Region round_trip;  // an upstream store or another node: milliseconds, or more
  if (request_sent != nullptr) *request_sent = false;
  SERAC_ASSIGN_OR_RETURN(Url url, ParseUrl(request.url));
  Exchange exchange(request, std::move(url), request_sent);
  return exchange.Run();
}

}  // namespace serac::http
