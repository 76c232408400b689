// The HTTP/1.1 server, event-driven. A few event loops (Asio io_contexts, two per core) multiplex
// every connection while it waits: for the TLS handshake, for the next request of a keep-alive
// connection, for the rest of a request head, and while it closes. None of these holds a thread,
// so an idle connection costs its socket and a few kilobytes (kIdleReadBytes of them its buffer).
//
// Once a request's head is complete, the loop thread that read it serves the request itself,
// synchronously, with Beast's parser for the body: handlers may block on disk, databases, group
// commit or a slow body. A wait marked with common/blocking.h hands the loop to a spare thread
// before it blocks; a balancer gives a spare to any other loop whose every thread has been inside a
// request for limits::kLoopBlockedBeforeSpareThread (up to limits::kRequestThreadsMax threads in
// all), and a spare retires once its loop has a free thread again. Fast requests therefore run
// with no hand-off between threads, and slow ones never stall a loop.
//
// A watchdog thread enforces every timeout: a connection publishes a deadline before each wait,
// and the watchdog shuts the socket down once it passes, which wakes the waiting operation, be it
// an asynchronous wait or a blocked synchronous call. (Socket receive timeouts would not work:
// Asio's synchronous operations poll again on EAGAIN.)
//
// Plain TCP and TLS share one code path, Connection<Stream>, templated on the stream type.
#include "http/server.h"

#include <netinet/in.h>
#include <netinet/tcp.h>
#include <openssl/ssl.h>
#include <poll.h>
#include <sys/resource.h>
#include <sys/sendfile.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/ssl/context.hpp>
#include <boost/asio/ssl/stream.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/core/string.hpp>
#include <boost/beast/http/buffer_body.hpp>
#include <boost/beast/http/error.hpp>
#include <boost/beast/http/parser.hpp>
#include <boost/beast/http/read.hpp>
#include <cerrno>
#include <condition_variable>
#include <csignal>
#include <cstring>
#include <exception>
#include <map>
#include <mutex>
#include <optional>
#include <thread>
#include <type_traits>
#include <vector>

#include "common/blocking.h"
#include "common/encoding.h"
#include "common/limits.h"
#include "common/log.h"
#include "common/random.h"
#include "http/response_internal.h"

namespace serac::http {
namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace bhttp = boost::beast::http;
using tcp = asio::ip::tcp;
using TlsStream = asio::ssl::stream<tcp::socket>;
using RequestParser = bhttp::request_parser<bhttp::buffer_body>;

// What a waiting connection holds to receive the start of its next request: most request heads
// fit (a presigned GET's is under 1 KiB), and ten thousand idle connections hold 20 MiB.
constexpr size_t kIdleReadBytes = 2 * 1024;
// Each further read of a request head that did not fit.
constexpr size_t kFirstReadBytes = 16 * 1024;
// Two loops per core, not one: a loop thread sleeps between its clients' requests, and a second
// one per core fills those gaps (measured: 4 KiB GETs at 16 connections 12 % faster on 2 cores
// with 4 loops than with 2, and slower again with 8).
constexpr uint32_t kEventLoopsPerCore = 2;
// A spare thread that finds no event for this long leaves its loop.
constexpr auto kSpareThreadIdleTime = std::chrono::milliseconds(500);
// A body read with at least this much room bypasses the parser once its buffer is drained.
constexpr size_t kDirectBodyReadBytesMin = 16 * 1024;
// Stack buffer for discarding bytes nobody will look at.
constexpr size_t kDiscardChunkBytes = 16 * 1024;

int64_t SteadyNowNanos() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

int64_t ToNanos(std::chrono::milliseconds duration) {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(duration).count();
}

std::string FormatEndpoint(const tcp::endpoint& endpoint) {
  std::string address = endpoint.address().to_string();
  if (endpoint.address().is_v6()) address = "[" + address + "]";
  return address + ":" + std::to_string(endpoint.port());
}

// What the watchdog knows about one connection. The fd stays open while the slot is registered:
// the connection thread unregisters it before closing, so the watchdog never touches a reused fd.
struct ConnectionSlot {
  int fd = -1;
  std::string client_address;              // without the port: what limits::kConnectionsPerClientMax counts
  std::atomic<int64_t> deadline_nanos{0};  // steady clock; 0 while nothing blocks on the socket
  std::atomic<bool> idle{false};           // waiting for the first byte of the next request
  std::atomic<bool> timed_out{false};      // the watchdog shut the socket because of the deadline
  bool shut = false;                       // guarded by ServerCore::mutex
};

// One event loop: an io_context, its base thread, and the spare threads the balancer added while
// every thread of the loop was busy inside a request.
struct EventLoop {
  asio::io_context io;
  std::optional<asio::executor_work_guard<asio::io_context::executor_type>> keep_running;
  std::thread base_thread;
  std::atomic<int> threads{0};             // threads running this loop now, base and spare
  std::atomic<int> requests_running{0};    // of which inside a request (RequestRunning)
  std::atomic<int64_t> progress_nanos{0};  // the last time a request of this loop began or ended

  // A spare leaves when another thread of its loop is free to take the next event.
  bool RetireSpare() {
    int now_running = threads.load();
    while (now_running - requests_running.load() > 1) {
      if (threads.compare_exchange_weak(now_running, now_running - 1)) return true;
    }
    return false;
  }
};

// The request this thread is serving, if it is a loop thread inside one; what a blocking region
// (common/blocking.h) looks at to hand the loop on.
struct ThreadRequest {
  EventLoop* loop = nullptr;
  bool handed_on = false;  // a blocking region already brought in another thread for this request
};
thread_local ThreadRequest this_thread_request;

// Marks the synchronous part of one request (head complete to response sent) on its loop, which
// the balancer reads to tell a loop whose threads are all blocked from one that is merely busy.
class RequestRunning {
 public:
  explicit RequestRunning(EventLoop& loop) : loop_(loop) {
    loop_.requests_running.fetch_add(1);
    loop_.progress_nanos.store(SteadyNowNanos());
    this_thread_request = {&loop_, false};
  }
  ~RequestRunning() {
    this_thread_request = {};
    loop_.progress_nanos.store(SteadyNowNanos());
    loop_.requests_running.fetch_sub(1);
  }
  RequestRunning(const RequestRunning&) = delete;
  RequestRunning& operator=(const RequestRunning&) = delete;

 private:
  EventLoop& loop_;
};

// A spare thread between loops, waiting to be given one.
struct ParkedSpare {
  std::condition_variable wake;
  EventLoop* assigned = nullptr;  // guarded by ServerCore::mutex
};

// Everything the server shares between its threads.
struct ServerCore {
  ServerOptions options;
  Handler handler;
  Metrics* metrics = nullptr;

  ErrorDocument RenderError(const ServerErrorInfo& error) const {
    return options.error_renderer ? options.error_renderer(error) : PlainTextErrorDocument(error);
  }

  asio::io_context acceptor_io;  // only for the acceptor's blocking accept
  std::optional<tcp::acceptor> acceptor;
  std::optional<asio::ssl::context> tls;
  int acceptor_fd = -1;
  uint16_t bound_port = 0;
  std::atomic<bool> draining{false};
  std::vector<std::unique_ptr<EventLoop>> loops;
  size_t next_loop = 0;                   // acceptor thread only: round-robin
  std::atomic<uint32_t> loop_threads{0};  // base and spare threads of every loop

  std::mutex mutex;
  std::condition_variable changed;
  std::map<uint64_t, std::shared_ptr<ConnectionSlot>> slots;  // guarded by mutex
  std::map<std::string, uint32_t> connections_by_client;      // guarded by mutex
  uint64_t next_slot_id = 0;                                  // guarded by mutex
  size_t connections_open = 0;                                // guarded by mutex
  size_t spare_threads = 0;                                   // guarded by mutex
  std::vector<ParkedSpare*> parked_spares;                    // guarded by mutex
  bool loops_stopping = false;                                // guarded by mutex
  bool acceptor_running = false;                              // guarded by mutex
  bool shutdown_requested = false;                            // guarded by mutex
  bool watchdog_stop = false;                                 // guarded by mutex
  int64_t grace_deadline_nanos = 0;                           // guarded by mutex

  std::mutex join_mutex;
  std::thread acceptor_thread;
  std::thread watchdog_thread;
  std::thread balancer_thread;

  Status ConfigureTls();
  Status Listen();
  void StartLoops();
  void RunLoop(EventLoop& loop, bool spare);
  void RunSpare(EventLoop* loop);
  void BalancerLoop();
  void AddSpareThread(EventLoop& loop);
  static void HandOnBeforeBlocking(void* server);
  void StopLoops();
  void AcceptLoop();
  void Dispatch(tcp::socket socket, const tcp::endpoint& peer, EventLoop& loop);
  void RejectOverCapacity(tcp::socket& socket, std::string_view message);
  void ConnectionEnded();
  void Unregister(uint64_t slot_id);
  void WatchdogLoop();
  std::chrono::milliseconds WatchdogTick() const;
  void ShutDownDueSockets(int64_t now_nanos);
};

// ---------------------------------------------------------------------------------------------
// One client connection. It is also the BodyReader and ResponseWriter of its current request;
// the per-request fields are reset before each request. It lives on the heap, kept alive by the
// completion handler of whichever operation it waits for; it never has two operations at once.
template <class Stream>
class Connection final : public BodyReader,
                         public ResponseWriter,
                         public std::enable_shared_from_this<Connection<Stream>> {
 public:
  static constexpr bool kTls = std::is_same_v<Stream, TlsStream>;

  Connection(ServerCore& server, EventLoop& loop, uint64_t slot_id, std::shared_ptr<ConnectionSlot> slot,
             Stream stream, std::string remote_address)
      : server_(server),
        loop_(loop),
        slot_id_(slot_id),
        slot_(std::move(slot)),
        stream_(std::move(stream)),
        remote_address_(std::move(remote_address)),
        buffer_(limits::kIoBufferBytes) {}

  // On the loop's thread: the TLS handshake if any, then requests until the connection ends.
  void Start();

  // BodyReader.
  Result<size_t> Read(char* buffer, size_t capacity) override;
  std::optional<uint64_t> content_length() const override;
  void SetLimit(uint64_t bytes_max) override { body_limit_ = bytes_max; }

  // ResponseWriter.
  void SetStatus(int status) override {
    if (!started_) status_ = status;
  }
  void AddHeader(std::string_view name, std::string_view value) override {
    if (!started_) response_headers_.push_back({std::string(name), std::string(value)});
  }
  Status Send(std::string_view body) override { return StartResponse(body.size(), body); }
  Status Begin(uint64_t content_length) override { return StartResponse(content_length, {}); }
  Status Write(const char* data, size_t size) override;
  Status WriteGathered(std::span<const std::string_view> pieces) override;
  Status SendFile(int fd, uint64_t offset, uint64_t length) override;
  Status SendContinue() override;
  bool started() const override { return started_; }
  int status() const override { return status_; }
  void CloseAfterResponse() override { close_after_ = true; }

 private:
  // Waiting, without a thread.
  template <class Then>
  void ReadMore(size_t space, Then then);
  void AwaitRequest();
  void BeginRequest();
  void ParseHead();
  void HeadFailed(beast::error_code error);
  void BeginClose();
  void DiscardUntilClosed();
  void Finish();

  // Serving, on the loop thread that completed the head.
  void ServeRequest();
  void ResetRequestState();
  void ReleaseIdleMemory();
  void RejectMalformedHead(const beast::error_code& error);
  bool AcceptHead();
  void RunHandler();
  void FinishExchange();
  void SendServerError(int status, std::string_view code, std::string_view message);
  bool AcceptTransferEncoding(const bhttp::request_header<>& head);

  Status StartResponse(uint64_t content_length, std::string_view inline_body);
  void DecideConnectionReuse();
  bool DrainSmallRemainder();
  bool SuppressesBody() const;
  Status CheckBodyFits(uint64_t size);
  template <class Buffers>
  bool WriteAll(const Buffers& buffers);
  Status WriteBody(const char* data, size_t size);
  Status SendFileByCopy(int fd, uint64_t offset, uint64_t length);
  Status SendFileBySyscall(int fd, uint64_t offset, uint64_t length);
  Status FailBody(ErrorCode code, std::string message);
  Status ArmBodyDeadline(bool& too_slow);
  Status FailBodyRead(const beast::error_code& error, bool too_slow);
  Result<size_t> ReadDirect(char* buffer, size_t capacity);
  // The body has been read to its end, through the parser or straight into the handler's buffer.
  bool BodyDone() const { return direct_body_remaining_ ? *direct_body_remaining_ == 0 : parser_->is_done(); }
  int64_t BodyDeadlineNanos() const;
  Status ConnectionLost();
  // A slow client is counted once, however many of its reads and writes then fail.
  void CountClientTimeout() {
    if (timeout_counted_ || server_.metrics == nullptr) return;
    timeout_counted_ = true;
    server_.metrics->ClientTimedOut();
  }

  tcp::socket& socket() { return beast::get_lowest_layer(stream_); }
  // What one read may add to buffer_ (ParseHead never asks with it full).
  size_t ReadSpace() const { return std::min(kFirstReadBytes, buffer_.max_size() - buffer_.size()); }
  int socket_fd() { return socket().native_handle(); }
  void Arm(std::chrono::milliseconds timeout) {
    slot_->deadline_nanos.store(SteadyNowNanos() + ToNanos(timeout));
  }
  void Disarm() { slot_->deadline_nanos.store(0); }

  ServerCore& server_;
  EventLoop& loop_;
  const uint64_t slot_id_;
  const std::shared_ptr<ConnectionSlot> slot_;
  Stream stream_;
  const std::string remote_address_;
  beast::flat_buffer buffer_;  // bounded by limits::kIoBufferBytes; keeps pipelined bytes
  std::optional<RequestParser> parser_;
  std::vector<char> file_buffer_;  // TLS SendFile only, allocated on first use
  bool timeout_counted_ = false;

  // Per request.
  std::chrono::steady_clock::time_point started_at_;
  Request request_;
  RequestOutcome outcome_;
  bool is_head_ = false;
  bool expects_continue_ = false;
  bool continue_sent_ = false;
  bool close_after_ = false;
  Status body_error_;
  std::optional<uint64_t> body_limit_;
  std::optional<uint64_t> direct_body_remaining_;  // set once the body bypasses the parser
  uint64_t body_bytes_read_ = 0;
  int64_t body_started_nanos_ = 0;  // first Read of the body; 0 before
  int status_ = 200;
  std::vector<Header> response_headers_;
  bool started_ = false;
  bool write_failed_ = false;
  uint64_t response_length_ = 0;      // Content-Length announced
  uint64_t response_body_given_ = 0;  // bytes the handler passed to Write/SendFile
  uint64_t response_wire_bytes_ = 0;  // body bytes actually sent (0 for HEAD)
};

template <class Stream>
void Connection<Stream>::ResetRequestState() {
  started_at_ = std::chrono::steady_clock::now();
  request_ = Request{};
  request_.remote_address = remote_address_;
  request_.tls = kTls;
  request_.request_id = RandomRequestId();
  outcome_ = RequestOutcome{};
  is_head_ = false;
  expects_continue_ = false;
  continue_sent_ = false;
  close_after_ = false;
  body_error_ = Status::Ok();
  body_limit_.reset();
  direct_body_remaining_.reset();
  body_bytes_read_ = 0;
  body_started_nanos_ = 0;
  status_ = 200;
  response_headers_.clear();
  started_ = false;
  write_failed_ = false;
  response_length_ = 0;
  response_body_given_ = 0;
  response_wire_bytes_ = 0;
}

// Between requests a connection keeps only its socket and the small buffer its next request's first
// bytes arrive in: what idles by the thousand must be small.
template <class Stream>
void Connection<Stream>::ReleaseIdleMemory() {
  parser_.reset();
  request_ = Request{};
  outcome_ = RequestOutcome{};
  std::vector<Header>().swap(response_headers_);
  if (buffer_.size() == 0) buffer_.shrink_to_fit();
  std::vector<char>().swap(file_buffer_);
}

// ----- Waiting --------------------------------------------------------------------------------

template <class Stream>
void Connection<Stream>::Start() {
  if (server_.metrics != nullptr) server_.metrics->ConnectionOpened();
  if constexpr (kTls) {
    Arm(server_.options.header_read_timeout);
    stream_.async_handshake(asio::ssl::stream_base::server,
                            [self = this->shared_from_this()](const beast::error_code& error) {
                              self->Disarm();
                              if (error) {
                                self->Finish();  // no session, nothing to close politely
                              } else {
                                self->AwaitRequest();
                              }
                            });
  } else {
    AwaitRequest();
  }
}

// Appends at least one received byte (at most `space`) to buffer_, then calls then(error). Through
// the stream for TLS and plain TCP alike: Asio tries the read at once and otherwise waits for the
// socket's next edge with no system call to re-arm it.
template <class Stream>
template <class Then>
void Connection<Stream>::ReadMore(size_t space, Then then) {
  stream_.async_read_some(buffer_.prepare(std::min(space, ReadSpace())),
                          [self = this->shared_from_this(), then = std::move(then)](
                              const beast::error_code& error, size_t received) mutable {
                            self->buffer_.commit(received);
                            then(received > 0 ? beast::error_code() : error);
                          });
}

// Waits (under the idle timeout) until the next request's first byte has arrived, then reads its
// head. The connection ends if the client leaves, idles too long, or the server is draining.
template <class Stream>
void Connection<Stream>::AwaitRequest() {
  if (buffer_.size() > 0) {
    // A pipelined request is already here. Posted rather than called, so that a client sending
    // thousands of requests at once cannot deepen the stack.
    asio::post(loop_.io, [self = this->shared_from_this()] { self->BeginRequest(); });
    return;
  }
  slot_->idle.store(true);
  // Checked after publishing idle so that either we see draining or the watchdog sees us idle.
  if (server_.draining.load()) {
    slot_->idle.store(false);
    BeginClose();
    return;
  }
  Arm(server_.options.idle_timeout);
  ReadMore(kIdleReadBytes, [this, self = this->shared_from_this()](const beast::error_code& error) {
    Disarm();
    slot_->idle.store(false);
    if (error) {
      BeginClose();
      return;
    }
    BeginRequest();
  });
}

template <class Stream>
void Connection<Stream>::BeginRequest() {
  ResetRequestState();
  parser_.emplace();
  parser_->header_limit(static_cast<uint32_t>(limits::kRequestHeaderBytesMax));
  parser_->body_limit(boost::none);  // BodyReader::SetLimit decides
  Arm(server_.options.header_read_timeout);
  ParseHead();
}

// Feeds the buffered bytes to the parser until the head is complete, reading more while it is not.
template <class Stream>
void Connection<Stream>::ParseHead() {
  while (buffer_.size() > 0) {
    beast::error_code error;
    const size_t used = parser_->put(buffer_.data(), error);
    buffer_.consume(used);
    if (error == bhttp::error::need_more) break;
    if (error) {
      Disarm();
      HeadFailed(error);
      return;
    }
    if (parser_->is_header_done()) {
      Disarm();
      // The body is the handler's to read, or not: it authenticates first and refuses without
      // waiting for a body nobody proved they may send.
      ServeRequest();
      return;
    }
    if (used == 0) break;
  }
  if (buffer_.size() >= buffer_.max_size()) {  // cannot happen below the header limit; never spin
    Disarm();
    HeadFailed(bhttp::error::header_limit);
    return;
  }
  ReadMore(kFirstReadBytes, [this, self = this->shared_from_this()](beast::error_code error) {
    if (error == asio::error::eof) {
      if (!parser_->got_some()) {
        error = bhttp::error::end_of_stream;
      } else {
        parser_->put_eof(error);
        if (!error) error = bhttp::error::partial_message;
      }
    }
    if (error) {
      Disarm();
      HeadFailed(error);
      return;
    }
    ParseHead();
  });
}

template <class Stream>
void Connection<Stream>::HeadFailed(beast::error_code error) {
  {
    RequestRunning running(loop_);
    RejectMalformedHead(error);
    if (started_) FinishExchange();
  }
  BeginClose();  // nothing worth logging if nothing was answered: the client left or timed out
}

template <class Stream>
void Connection<Stream>::ServeRequest() {
  {
    RequestRunning running(loop_);
    if (AcceptHead()) RunHandler();
    FinishExchange();
  }
  if (close_after_) {
    BeginClose();
    return;
  }
  ReleaseIdleMemory();
  AwaitRequest();
}

// Ends the connection so that the client still sees our last response: under TLS a close_notify,
// on plain TCP a FIN and then a short read-and-discard, because closing with unread bytes in the
// receive queue makes the kernel send a reset that can destroy the response in flight.
template <class Stream>
void Connection<Stream>::BeginClose() {
  if constexpr (kTls) {
    Arm(std::min<std::chrono::milliseconds>(server_.options.response_stall_timeout,
                                            limits::kLingeringCloseTimeout));
    stream_.async_shutdown([self = this->shared_from_this()](const beast::error_code&) {
      self->Disarm();
      self->Finish();
    });
  } else {
    ::shutdown(socket_fd(), SHUT_WR);
    Arm(limits::kLingeringCloseTimeout);
    DiscardUntilClosed();
  }
}

template <class Stream>
void Connection<Stream>::DiscardUntilClosed() {
  socket().async_wait(
      tcp::socket::wait_read, [self = this->shared_from_this()](const beast::error_code& error) {
        if (!error) {
          char discard[kDiscardChunkBytes];
          while (true) {
            const ssize_t received = ::recv(self->socket_fd(), discard, sizeof(discard), MSG_DONTWAIT);
            if (received > 0) continue;
            if (received < 0 && errno == EINTR) continue;
            if (received < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
              self->DiscardUntilClosed();
              return;
            }
            break;  // the peer closed, or the watchdog shut the socket
          }
        }
        self->Disarm();
        self->Finish();
      });
}

// Unregisters before closing, so that the watchdog never shuts down a descriptor number the
// kernel has already given to someone else.
template <class Stream>
void Connection<Stream>::Finish() {
  server_.Unregister(slot_id_);
  beast::error_code ignored;
  socket().close(ignored);
  server_.ConnectionEnded();
}

template <class Stream>
void Connection<Stream>::RejectMalformedHead(const beast::error_code& error) {
  close_after_ = true;
  // The request line may have been parsed; it tells which error dialect the client speaks.
  const auto& partial = parser_->get();
  request_.method = std::string(partial.method_string());
  internal::SplitTarget(partial.target(), request_.path, request_.query);
  if (error == bhttp::error::header_limit) {
    SendServerError(431, "RequestHeaderSectionTooLarge",
                    "The request header exceeds kRequestHeaderBytesMax (" +
                        std::to_string(limits::kRequestHeaderBytesMax) + " bytes).");
    return;
  }
  bool parse_error = error.category() == bhttp::make_error_code(bhttp::error::bad_method).category();
  if (slot_->timed_out.load()) CountClientTimeout();
  if (!parse_error || error == bhttp::error::end_of_stream || error == bhttp::error::partial_message ||
      slot_->timed_out.load()) {
    return;  // connection-level failure: nobody to answer
  }
  SendServerError(400, "BadRequest", "The request is not valid HTTP/1.1: " + error.message());
}

// RFC 9112 §6: a request's body length is known only from one final "chunked" coding or from
// Content-Length. Any other coding (gzip, chunked twice, chunked not last) or both framings at once
// would leave the body to be read as the next request (request smuggling): such a request is
// answered with 501 (a coding serac does not implement) or 400, and the connection is closed.
template <class Stream>
bool Connection<Stream>::AcceptTransferEncoding(const bhttp::request_header<>& head) {
  std::vector<std::string> codings;
  for (const auto& field : head) {
    if (field.name() != bhttp::field::transfer_encoding) continue;
    std::string_view list = field.value();
    while (!list.empty()) {
      const size_t comma = list.find(',');
      std::string coding = AsciiLower(TrimWhitespace(list.substr(0, comma)));
      if (!coding.empty()) codings.push_back(std::move(coding));
      list = comma == std::string_view::npos ? std::string_view() : list.substr(comma + 1);
    }
  }
  if (codings.empty() && head.count(bhttp::field::transfer_encoding) == 0) return true;
  close_after_ = true;
  for (const std::string& coding : codings) {
    if (coding != "chunked") {
      SendServerError(
          501, "NotImplemented",
          "Transfer-Encoding " + coding + " is not supported; send the body chunked or with Content-Length.");
      return false;
    }
  }
  if (codings.size() != 1) {
    SendServerError(400, "BadRequest", "Transfer-Encoding must name chunked exactly once.");
    return false;
  }
  if (head.count(bhttp::field::content_length) != 0) {
    SendServerError(400, "BadRequest", "A request may not carry both Transfer-Encoding and Content-Length.");
    return false;
  }
  close_after_ = !parser_->keep_alive();
  return true;
}

// Copies the parsed head into request_ and enforces the limits Beast does not know about.
template <class Stream>
bool Connection<Stream>::AcceptHead() {
  const auto& head = parser_->get();
  request_.method = std::string(head.method_string());
  request_.target = std::string(head.target());
  internal::SplitTarget(request_.target, request_.path, request_.query);
  is_head_ = head.method() == bhttp::verb::head;
  close_after_ = !parser_->keep_alive();
  if (static_cast<uint64_t>(std::distance(head.begin(), head.end())) > limits::kRequestHeaderCountMax) {
    close_after_ = true;
    SendServerError(431, "RequestHeaderSectionTooLarge",
                    "The request has more than kRequestHeaderCountMax (" +
                        std::to_string(limits::kRequestHeaderCountMax) + ") header fields.");
    return false;
  }
  if (request_.target.size() > limits::kRequestTargetBytesMax) {
    close_after_ = true;
    SendServerError(414, "RequestURITooLong",
                    "The request target exceeds kRequestTargetBytesMax (" +
                        std::to_string(limits::kRequestTargetBytesMax) + " bytes).");
    return false;
  }
  if (!AcceptTransferEncoding(head)) return false;
  request_.headers.reserve(std::distance(head.begin(), head.end()));
  for (const auto& field : head) {
    request_.headers.push_back({std::string(field.name_string()), std::string(field.value())});
  }
  expects_continue_ = head.version() >= 11 && beast::iequals(head[bhttp::field::expect], "100-continue");
  return true;
}

template <class Stream>
void Connection<Stream>::RunHandler() {
  try {
    server_.handler(request_, *this, *this, outcome_);
  } catch (const std::exception& e) {
    log::Error(std::string("http handler threw: ") + e.what());
    close_after_ = true;
  } catch (...) {
    log::Error("http handler threw a non-standard exception");
    close_after_ = true;
  }
}

template <class Stream>
void Connection<Stream>::FinishExchange() {
  if (!started_ && !write_failed_) {
    SendServerError(500, "InternalError", "The server produced no response.");
  }
  // The client was promised Content-Length bytes; a short body can only end with the connection.
  if (started_ && !SuppressesBody() && response_body_given_ < response_length_) close_after_ = true;
  if (!close_after_ && parser_ && !BodyDone() && !DrainSmallRemainder()) {
    close_after_ = true;
  }
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started_at_).count();
  if (server_.metrics != nullptr) {
    server_.metrics->RecordRequest(outcome_.operation, status_, body_bytes_read_, response_wire_bytes_,
                                   seconds);
  }
  if (server_.options.access_log) {
    log::WriteBuffered(log::Level::kInfo, internal::FormatAccessLog({.remote_address = remote_address_,
                                                                     .method = request_.method,
                                                                     .path = request_.path,
                                                                     .status = status_,
                                                                     .bytes_in = body_bytes_read_,
                                                                     .bytes_out = response_wire_bytes_,
                                                                     .duration_ms = seconds * 1000,
                                                                     .request_id = request_.request_id,
                                                                     .operation = outcome_.operation,
                                                                     .principal = outcome_.principal}));
  }
}

template <class Stream>
void Connection<Stream>::SendServerError(int status, std::string_view code, std::string_view message) {
  if (started_) return;
  const ErrorDocument error = server_.RenderError({.path = request_.path,
                                                   .status = status,
                                                   .code = code,
                                                   .message = message,
                                                   .request_id = request_.request_id});
  status_ = status;
  response_headers_.clear();
  response_headers_.push_back({"Content-Type", error.content_type});
  (void)Send(error.body);
}

// ----- BodyReader ---------------------------------------------------------------------------

template <class Stream>
Status Connection<Stream>::FailBody(ErrorCode code, std::string message) {
  body_error_ = Error(code, std::move(message));
  close_after_ = true;  // the connection is somewhere inside a body: it cannot be reused
  return body_error_;
}

// The latest instant the body may still be read at: its bytes so far buy time at the slowest
// rate a body may arrive at, after a grace period, and never past the longest a body may take.
template <class Stream>
int64_t Connection<Stream>::BodyDeadlineNanos() const {
  const ServerOptions& options = server_.options;
  const double earned_seconds = options.body_rate_min == 0 ? 1e12
                                                           : static_cast<double>(body_bytes_read_) /
                                                                 static_cast<double>(options.body_rate_min);
  const int64_t earned_nanos = static_cast<int64_t>(std::min(earned_seconds, 1e9) * 1e9);
  const int64_t by_rate = body_started_nanos_ + ToNanos(options.body_grace_period) + earned_nanos;
  return std::min(by_rate, body_started_nanos_ + ToNanos(options.body_duration_max));
}

template <class Stream>
std::optional<uint64_t> Connection<Stream>::content_length() const {
  if (!parser_ || parser_->chunked()) return std::nullopt;
  boost::optional<uint64_t> length = parser_->content_length();
  return length ? *length : 0;  // no Content-Length and not chunked: a request without a body
}

template <class Stream>
Result<size_t> Connection<Stream>::Read(char* buffer, size_t capacity) {
  if (!body_error_.ok()) return body_error_;
  if (BodyDone()) return size_t{0};
  if (capacity == 0) return Error(ErrorCode::kInternal, "BodyReader::Read with no capacity");
  std::optional<uint64_t> announced = content_length();
  if (body_limit_ && announced && *announced > *body_limit_) {
    return FailBody(ErrorCode::kLimitExceeded, "request body of " + std::to_string(*announced) +
                                                   " bytes exceeds the limit of " +
                                                   std::to_string(*body_limit_) + " bytes");
  }
  if (!SendContinue().ok()) return FailBody(ErrorCode::kIncompleteBody, "client connection lost");
  if (body_started_nanos_ == 0) body_started_nanos_ = SteadyNowNanos();
  // A long Content-Length body whose buffered bytes the parser has taken is read straight into the
  // caller's buffer: the parser would only copy it there from its own.
  if (!direct_body_remaining_ && capacity >= kDirectBodyReadBytesMin && buffer_.size() == 0 &&
      !parser_->chunked() && parser_->content_length_remaining()) {
    direct_body_remaining_ = *parser_->content_length_remaining();
  }
  if (direct_body_remaining_) return ReadDirect(buffer, capacity);
  while (true) {
    auto& body = parser_->get().body();
    body.data = buffer;
    body.size = capacity;
    beast::error_code error;
    bool too_slow = false;
    SERAC_RETURN_IF_ERROR(ArmBodyDeadline(too_slow));
    bhttp::read_some(stream_, buffer_, *parser_, error);
    Disarm();
    size_t received = capacity - body.size;
    body.data = nullptr;
    if (error == bhttp::error::need_buffer) error = {};
    if (error) return FailBodyRead(error, too_slow);
    if (received > 0) {
      body_bytes_read_ += received;
      if (body_limit_ && body_bytes_read_ > *body_limit_) {
        return FailBody(ErrorCode::kLimitExceeded,
                        "request body exceeds the limit of " + std::to_string(*body_limit_) + " bytes");
      }
      return received;
    }
    if (parser_->is_done()) return size_t{0};
  }
}

// Publishes the body's deadline for the watchdog: whichever comes first, the stall timeout or the
// body's own deadline by rate. Fails at once if the rate deadline has already passed.
template <class Stream>
Status Connection<Stream>::ArmBodyDeadline(bool& too_slow) {
  const int64_t now = SteadyNowNanos();
  const int64_t deadline = BodyDeadlineNanos();
  too_slow = deadline - now < ToNanos(server_.options.body_stall_timeout);
  if (deadline <= now) {
    CountClientTimeout();
    return FailBody(ErrorCode::kTimeout, "request body arrived slower than limits::kRequestBodyRateMin (" +
                                             std::to_string(server_.options.body_rate_min) +
                                             " bytes/s on average after the grace period)");
  }
  slot_->deadline_nanos.store(too_slow ? deadline : now + ToNanos(server_.options.body_stall_timeout));
  return Status::Ok();
}

template <class Stream>
Status Connection<Stream>::FailBodyRead(const beast::error_code& error, bool too_slow) {
  if (slot_->timed_out.load()) {
    CountClientTimeout();
    return FailBody(ErrorCode::kTimeout, too_slow
                                             ? "request body arrived slower than limits::kRequestBodyRateMin"
                                             : "request body stalled longer than the body timeout");
  }
  return FailBody(ErrorCode::kIncompleteBody,
                  "the client sent an incomplete request body: " + error.message());
}

// Never past the body's end, so that a pipelined request behind it stays for the parser.
template <class Stream>
Result<size_t> Connection<Stream>::ReadDirect(char* buffer, size_t capacity) {
  const size_t want = static_cast<size_t>(std::min<uint64_t>(capacity, *direct_body_remaining_));
  bool too_slow = false;
  SERAC_RETURN_IF_ERROR(ArmBodyDeadline(too_slow));
  beast::error_code error;
  const size_t received = stream_.read_some(asio::buffer(buffer, want), error);
  Disarm();
  if (received == 0) {
    return FailBodyRead(error && error != asio::error::eof ? error : bhttp::error::partial_message, too_slow);
  }
  *direct_body_remaining_ -= received;
  body_bytes_read_ += received;
  if (body_limit_ && body_bytes_read_ > *body_limit_) {
    return FailBody(ErrorCode::kLimitExceeded,
                    "request body exceeds the limit of " + std::to_string(*body_limit_) + " bytes");
  }
  return received;
}

// Reads away what is left of a body nobody wants, if that is cheap; false means the connection
// has to close instead.
template <class Stream>
bool Connection<Stream>::DrainSmallRemainder() {
  if (!body_error_.ok()) return false;
  if (BodyDone()) return true;
  // Without our 100 Continue the client may never send the body; waiting for it would hang.
  if (expects_continue_ && !continue_sent_) return false;
  boost::optional<uint64_t> remaining = direct_body_remaining_
                                            ? boost::optional<uint64_t>(*direct_body_remaining_)
                                            : parser_->content_length_remaining();
  if (remaining && *remaining > limits::kUnreadBodyDrainBytesMax) return false;
  char discard[kDiscardChunkBytes];
  uint64_t drained = 0;
  while (drained <= limits::kUnreadBodyDrainBytesMax) {
    Result<size_t> got = Read(discard, sizeof(discard));
    if (!got.ok()) return false;
    if (*got == 0) return true;
    drained += *got;
  }
  return false;
}

// ----- ResponseWriter -----------------------------------------------------------------------

template <class Stream>
Status Connection<Stream>::ConnectionLost() {
  if (slot_->timed_out.load()) {
    CountClientTimeout();
    return Error(ErrorCode::kTimeout, "the client stopped reading the response");
  }
  return Error(ErrorCode::kIoError, "the client connection was lost");
}

template <class Stream>
template <class Buffers>
bool Connection<Stream>::WriteAll(const Buffers& buffers) {
  beast::error_code error;
  Arm(server_.options.response_stall_timeout);
  asio::write(stream_, buffers, error);
  Disarm();
  if (error) {
    write_failed_ = true;
    close_after_ = true;
  }
  return !error;
}

template <class Stream>
Status Connection<Stream>::SendContinue() {
  // Also sent when the declared body is empty (the parser is then already done): clients that
  // asked for 100 Continue may misread the connection if the final response comes without it.
  if (!expects_continue_ || continue_sent_ || started_) return Status::Ok();
  continue_sent_ = true;
  static constexpr std::string_view kContinue = "HTTP/1.1 100 Continue\r\n\r\n";
  if (!WriteAll(asio::buffer(kContinue.data(), kContinue.size()))) return ConnectionLost();
  return Status::Ok();
}

template <class Stream>
bool Connection<Stream>::SuppressesBody() const {
  return is_head_ || status_ == 204 || status_ == 304 || status_ < 200;
}

// Settles whether this response ends the connection, before the head announces it.
template <class Stream>
void Connection<Stream>::DecideConnectionReuse() {
  if (server_.draining.load()) close_after_ = true;
  if (!close_after_ && parser_ && !BodyDone() && !DrainSmallRemainder()) {
    close_after_ = true;
  }
}

template <class Stream>
Status Connection<Stream>::StartResponse(uint64_t content_length, std::string_view inline_body) {
  if (started_) return Error(ErrorCode::kInternal, "the response was already started");
  // An empty declared body has been "read" in full, so the client is owed its 100 Continue first.
  // A non-empty body left unread gets none: the connection closes instead (DecideConnectionReuse).
  if (parser_ && BodyDone()) SERAC_RETURN_IF_ERROR(SendContinue());
  DecideConnectionReuse();
  bool no_length = status_ == 204 || status_ == 304 || status_ < 200;
  std::string head = internal::BuildResponseHead(
      status_, response_headers_, no_length ? std::nullopt : std::optional<uint64_t>(content_length),
      close_after_, server_.options.request_id_header, request_.request_id);
  started_ = true;
  response_length_ = content_length;
  if (SuppressesBody()) {
    response_body_given_ = inline_body.size();
    inline_body = {};
  }
  // Small bodies leave in the same write as the head.
  size_t first_part = std::min<size_t>(inline_body.size(), limits::kIoBufferBytes);
  std::array<asio::const_buffer, 2> buffers = {asio::buffer(head),
                                               asio::buffer(inline_body.data(), first_part)};
  if (!WriteAll(buffers)) return ConnectionLost();
  response_body_given_ += first_part;
  response_wire_bytes_ += first_part;
  if (first_part < inline_body.size()) {
    response_body_given_ += inline_body.size() - first_part;
    return WriteBody(inline_body.data() + first_part, inline_body.size() - first_part);
  }
  return Status::Ok();
}

template <class Stream>
Status Connection<Stream>::CheckBodyFits(uint64_t size) {
  if (!started_) return Error(ErrorCode::kInternal, "response body written before Begin()");
  if (write_failed_) return ConnectionLost();
  if (size > response_length_ - std::min(response_body_given_, response_length_)) {
    close_after_ = true;
    return Error(ErrorCode::kInternal, "response body longer than its Content-Length");
  }
  response_body_given_ += size;
  return Status::Ok();
}

// Writes in pieces so the response stall timeout measures progress, not total transfer time.
template <class Stream>
Status Connection<Stream>::WriteBody(const char* data, size_t size) {
  while (size > 0) {
    size_t piece = std::min<size_t>(size, limits::kIoBufferBytes);
    if (!WriteAll(asio::buffer(data, piece))) return ConnectionLost();
    response_wire_bytes_ += piece;
    data += piece;
    size -= piece;
  }
  return Status::Ok();
}

template <class Stream>
Status Connection<Stream>::Write(const char* data, size_t size) {
  SERAC_RETURN_IF_ERROR(CheckBodyFits(size));
  if (SuppressesBody()) return Status::Ok();
  return WriteBody(data, size);
}

// Up to kIoBufferBytes per system call, as WriteBody, so the stall timeout still measures progress.
template <class Stream>
Status Connection<Stream>::WriteGathered(std::span<const std::string_view> pieces) {
  uint64_t total = 0;
  for (std::string_view piece : pieces) total += piece.size();
  SERAC_RETURN_IF_ERROR(CheckBodyFits(total));
  if (SuppressesBody()) return Status::Ok();
  std::vector<asio::const_buffer> batch;
  size_t batch_bytes = 0;
  auto flush = [&]() {
    if (batch.empty()) return true;
    if (!WriteAll(batch)) return false;
    response_wire_bytes_ += batch_bytes;
    batch.clear();
    batch_bytes = 0;
    return true;
  };
  for (std::string_view piece : pieces) {
    while (!piece.empty()) {
      const size_t take = std::min<size_t>(piece.size(), limits::kIoBufferBytes - batch_bytes);
      batch.emplace_back(piece.data(), take);
      batch_bytes += take;
      piece.remove_prefix(take);
      if (batch_bytes == limits::kIoBufferBytes && !flush()) return ConnectionLost();
    }
  }
  if (!flush()) return ConnectionLost();
  return Status::Ok();
}

template <class Stream>
Status Connection<Stream>::SendFile(int fd, uint64_t offset, uint64_t length) {
  SERAC_RETURN_IF_ERROR(CheckBodyFits(length));
  if (SuppressesBody()) return Status::Ok();
  if constexpr (kTls) {
    return SendFileByCopy(fd, offset, length);
  } else {
    return SendFileBySyscall(fd, offset, length);
  }
}

template <class Stream>
Status Connection<Stream>::SendFileBySyscall(int fd, uint64_t offset, uint64_t length) {
  auto file_offset = static_cast<off_t>(offset);
  while (length > 0) {
    size_t piece = static_cast<size_t>(std::min<uint64_t>(length, limits::kIoBufferBytes));
    Arm(server_.options.response_stall_timeout);
    ssize_t sent = ::sendfile(socket_fd(), fd, &file_offset, piece);
    int saved_errno = errno;
    if (sent < 0 && (saved_errno == EAGAIN || saved_errno == EWOULDBLOCK)) {
      // The socket is non-blocking once an event loop has waited on it: wait here, still armed,
      // for room in the send buffer (the watchdog's shutdown wakes this poll too).
      pollfd writable{.fd = socket_fd(), .events = POLLOUT, .revents = 0};
      (void)::poll(&writable, 1, -1);
      Disarm();
      continue;
    }
    Disarm();
    if (sent < 0 && saved_errno == EINTR) continue;
    if (sent <= 0) {
      write_failed_ = true;
      close_after_ = true;
      if (sent == 0) return Error(ErrorCode::kIoError, "file ended before the announced length");
      if (saved_errno == EPIPE || saved_errno == ECONNRESET || slot_->timed_out.load()) {
        return ConnectionLost();
      }
      return Error(ErrorCode::kIoError, std::string("sendfile: ") + std::strerror(saved_errno));
    }
    response_wire_bytes_ += static_cast<uint64_t>(sent);
    length -= static_cast<uint64_t>(sent);
  }
  return Status::Ok();
}

// TLS encrypts in user space, so the file passes through a bounded buffer.
template <class Stream>
Status Connection<Stream>::SendFileByCopy(int fd, uint64_t offset, uint64_t length) {
  if (file_buffer_.empty()) file_buffer_.resize(limits::kIoBufferBytes);
  while (length > 0) {
    size_t want = static_cast<size_t>(std::min<uint64_t>(length, file_buffer_.size()));
    ssize_t got = ::pread(fd, file_buffer_.data(), want, static_cast<off_t>(offset));
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) {
      close_after_ = true;
      write_failed_ = true;
      if (got == 0) return Error(ErrorCode::kIoError, "file ended before the announced length");
      return Error(ErrorCode::kIoError, std::string("pread: ") + std::strerror(errno));
    }
    SERAC_RETURN_IF_ERROR(WriteBody(file_buffer_.data(), static_cast<size_t>(got)));
    offset += static_cast<uint64_t>(got);
    length -= static_cast<uint64_t>(got);
  }
  return Status::Ok();
}

// ---------------------------------------------------------------------------------------------
// ServerCore.

Status ServerCore::ConfigureTls() {
  if (options.tls_cert_file.empty() && options.tls_key_file.empty()) return Status::Ok();
  if (options.tls_cert_file.empty() || options.tls_key_file.empty()) {
    return Error(ErrorCode::kInvalidArgument, "TLS needs both a certificate and a key file");
  }
  tls.emplace(asio::ssl::context::tls_server);
  tls->set_options(asio::ssl::context::default_workarounds | asio::ssl::context::no_sslv2 |
                   asio::ssl::context::no_sslv3 | asio::ssl::context::no_tlsv1 |
                   asio::ssl::context::no_tlsv1_1 | asio::ssl::context::single_dh_use);
  SSL_CTX_set_min_proto_version(tls->native_handle(), TLS1_2_VERSION);
  beast::error_code error;
  tls->use_certificate_chain_file(options.tls_cert_file, error);
  if (error) {
    return Error(ErrorCode::kInvalidArgument,
                 "cannot load TLS certificate " + options.tls_cert_file + ": " + error.message());
  }
  tls->use_private_key_file(options.tls_key_file, asio::ssl::context::pem, error);
  if (error) {
    return Error(ErrorCode::kInvalidArgument,
                 "cannot load TLS key " + options.tls_key_file + ": " + error.message());
  }
  return Status::Ok();
}

Status ServerCore::Listen() {
  beast::error_code error;
  asio::ip::address address = asio::ip::make_address(options.address, error);
  if (error) return Error(ErrorCode::kInvalidArgument, "bad listen address " + options.address);
  tcp::endpoint endpoint(address, options.port);
  acceptor.emplace(acceptor_io);
  acceptor->open(endpoint.protocol(), error);
  if (!error) acceptor->set_option(asio::socket_base::reuse_address(true), error);
  if (!error) acceptor->bind(endpoint, error);
  if (!error) acceptor->listen(asio::socket_base::max_listen_connections, error);
  if (error) {
    return Error(ErrorCode::kIoError, "cannot listen on " + options.address + ":" +
                                          std::to_string(options.port) + ": " + error.message());
  }
  bound_port = acceptor->local_endpoint(error).port();
  acceptor_fd = acceptor->native_handle();
  return Status::Ok();
}

// kEventLoopsPerCore loops per core: each multiplexes its connections on one thread while nothing
// blocks.
void ServerCore::StartLoops() {
  uint32_t count = options.event_loops;
  if (count == 0) count = kEventLoopsPerCore * std::max(1u, std::thread::hardware_concurrency());
  count = std::min(count, limits::kEventLoopsMax);
  for (uint32_t i = 0; i < count; ++i) {
    auto loop = std::make_unique<EventLoop>();
    loop->keep_running.emplace(asio::make_work_guard(loop->io));
    loops.push_back(std::move(loop));
  }
  for (auto& loop : loops) {
    loop->threads.fetch_add(1);
    loop_threads.fetch_add(1);
    loop->base_thread = std::thread(&ServerCore::RunLoop, this, std::ref(*loop), false);
  }
}

void ServerCore::RunLoop(EventLoop& loop, bool spare) {
  blocking::SetThreadHook(&ServerCore::HandOnBeforeBlocking, this);
  while (true) {
    size_t ran = 0;
    try {
      ran = spare ? loop.io.run_one_for(kSpareThreadIdleTime) : loop.io.run_one();
    } catch (const std::exception& e) {
      log::Error(std::string("http event loop: ") + e.what());
      continue;
    }
    if (ran == 0 && loop.io.stopped()) break;
    // A spare leaves when it found nothing to do for kSpareThreadIdleTime, or once another thread
    // of its loop is free (RetireSpare has then counted it out already).
    if (spare && ran == 0) break;
    if (spare && loop.RetireSpare()) {
      loop_threads.fetch_sub(1);
      blocking::SetThreadHook(nullptr, nullptr);
      return;
    }
  }
  loop.threads.fetch_sub(1);
  loop_threads.fetch_sub(1);
  blocking::SetThreadHook(nullptr, nullptr);
}

// A spare thread serves the loop it was given until it retires, then parks for
// kSpareThreadIdleTime: the next loop that needs a spare wakes it instead of starting a thread.
void ServerCore::RunSpare(EventLoop* loop) {
  ParkedSpare self;
  while (loop != nullptr) {
    RunLoop(*loop, true);
    std::unique_lock lock(mutex);
    if (loops_stopping) break;
    self.assigned = nullptr;
    parked_spares.push_back(&self);
    self.wake.wait_for(lock, kSpareThreadIdleTime,
                       [&] { return self.assigned != nullptr || loops_stopping; });
    if (self.assigned == nullptr) std::erase(parked_spares, &self);  // nobody came: leave
    loop = self.assigned;
  }
  std::lock_guard lock(mutex);
  --spare_threads;
  changed.notify_all();
}

void ServerCore::AddSpareThread(EventLoop& loop) {
  loop.threads.fetch_add(1);
  loop_threads.fetch_add(1);
  {
    std::lock_guard lock(mutex);
    if (loops_stopping) {
      loop.threads.fetch_sub(1);
      loop_threads.fetch_sub(1);
      return;
    }
    if (!parked_spares.empty()) {
      ParkedSpare* parked = parked_spares.back();
      parked_spares.pop_back();
      parked->assigned = &loop;
      parked->wake.notify_one();
      return;
    }
    ++spare_threads;
  }
  try {
    std::thread(&ServerCore::RunSpare, this, &loop).detach();
  } catch (const std::exception& e) {
    log::Warn(std::string("http cannot start a spare thread: ") + e.what());
    loop.threads.fetch_sub(1);
    loop_threads.fetch_sub(1);
    std::lock_guard lock(mutex);
    --spare_threads;
  }
}

// A request about to wait for a flush hands its loop to another thread at once, rather than after
// the balancer's kLoopBlockedBeforeSpareThread: writes waiting for one group commit then arrive
// together, and share its fsync.
void ServerCore::HandOnBeforeBlocking(void* server) {
  ThreadRequest& request = this_thread_request;
  if (request.loop == nullptr || request.handed_on) return;
  request.handed_on = true;
  auto* core = static_cast<ServerCore*>(server);
  EventLoop& loop = *request.loop;
  if (loop.requests_running.load() < loop.threads.load()) return;  // another thread is free
  if (core->loop_threads.load() >= core->options.request_threads_max) return;
  core->AddSpareThread(loop);
}

// Every kBalancerTick while requests run: a loop whose every thread has been inside a request for
// kLoopBlockedBeforeSpareThread, with nothing finishing or starting meanwhile, is blocked (a disk,
// a database, a group commit, a slow client) and gets one more thread.
void ServerCore::BalancerLoop() {
  std::unique_lock lock(mutex);
  while (!watchdog_stop) {
    bool any_running = false;
    for (const auto& loop : loops) any_running = any_running || loop->requests_running.load() > 0;
    changed.wait_for(lock, any_running ? limits::kBalancerTick : limits::kBalancerTick * 10);
    if (watchdog_stop) break;
    lock.unlock();
    const int64_t now = SteadyNowNanos();
    for (auto& loop : loops) {
      if (loop->requests_running.load() < loop->threads.load()) continue;
      if (now - loop->progress_nanos.load() < ToNanos(limits::kLoopBlockedBeforeSpareThread)) continue;
      if (loop_threads.load() >= options.request_threads_max) continue;
      AddSpareThread(*loop);
    }
    lock.lock();
  }
}

void ServerCore::StopLoops() {
  {
    std::lock_guard lock(mutex);
    loops_stopping = true;
    for (ParkedSpare* parked : parked_spares) parked->wake.notify_one();
    parked_spares.clear();
  }
  for (auto& loop : loops) {
    loop->keep_running.reset();
    loop->io.stop();
  }
  for (auto& loop : loops) {
    if (loop->base_thread.joinable()) loop->base_thread.join();
  }
  std::unique_lock lock(mutex);
  changed.wait(lock, [this] { return spare_threads == 0; });
}

void ServerCore::AcceptLoop() {
  while (true) {
    EventLoop& loop = *loops[next_loop];
    next_loop = (next_loop + 1) % loops.size();
    tcp::socket socket(loop.io);
    tcp::endpoint peer;
    beast::error_code error;
    acceptor->accept(socket, peer, error);
    if (draining.load()) break;
    if (error) {
      // Out of descriptors or a peer that gave up: back off briefly rather than spin.
      log::Warn("http accept failed: " + error.message());
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
      continue;
    }
    Dispatch(std::move(socket), peer, loop);
  }
  std::lock_guard lock(mutex);
  beast::error_code ignored;
  acceptor->close(ignored);
  acceptor_running = false;
  changed.notify_all();
}

void ServerCore::Dispatch(tcp::socket socket, const tcp::endpoint& peer, EventLoop& loop) {
  beast::error_code ignored;
  socket.set_option(tcp::no_delay(true), ignored);  // heads and bodies may leave in two writes
  auto slot = std::make_shared<ConnectionSlot>();
  slot->fd = socket.native_handle();
  slot->client_address = peer.address().to_string();
  uint64_t slot_id = 0;
  {
    std::lock_guard lock(mutex);
    if (slots.size() >= options.connections_max) {
      if (metrics != nullptr) metrics->ConnectionRefused(false);
      RejectOverCapacity(socket, "Too many open connections; retry later.");
      return;
    }
    uint32_t& from_client = connections_by_client[slot->client_address];
    if (options.connections_per_client_max != 0 && from_client >= options.connections_per_client_max) {
      if (metrics != nullptr) metrics->ConnectionRefused(true);
      RejectOverCapacity(socket,
                         "Too many open connections from this address "
                         "(limits::kConnectionsPerClientMax); retry later.");
      return;
    }
    ++from_client;
    slot_id = next_slot_id++;
    slots.emplace(slot_id, slot);
    ++connections_open;
  }
  auto start = [&]<class Stream>(Stream stream) {
    auto connection = std::make_shared<Connection<Stream>>(*this, loop, slot_id, std::move(slot),
                                                           std::move(stream), FormatEndpoint(peer));
    asio::post(loop.io, [connection] { connection->Start(); });
  };
  if (tls) {
    start(TlsStream(std::move(socket), *tls));
  } else {
    start(std::move(socket));
  }
}

// Answers without a thread: the reply fits the socket's send buffer, so this never blocks.
void ServerCore::RejectOverCapacity(tcp::socket& socket, std::string_view message) {
  if (!tls) {
    const std::string request_id = RandomRequestId();
    const ErrorDocument error = RenderError({.path = "/",
                                             .status = 503,
                                             .code = "ServiceUnavailable",
                                             .message = message,
                                             .request_id = request_id});
    std::string response =
        internal::BuildResponseHead(503, {{"Content-Type", error.content_type}}, error.body.size(), true,
                                    options.request_id_header, request_id) +
        error.body;
    (void)::send(socket.native_handle(), response.data(), response.size(), MSG_DONTWAIT | MSG_NOSIGNAL);
  }
  ::shutdown(socket.native_handle(), SHUT_RDWR);
}

void ServerCore::ConnectionEnded() {
  if (metrics != nullptr) metrics->ConnectionClosed();
  std::lock_guard lock(mutex);
  --connections_open;
  changed.notify_all();
}

void ServerCore::Unregister(uint64_t slot_id) {
  std::lock_guard lock(mutex);
  auto slot = slots.find(slot_id);
  if (slot == slots.end()) return;
  auto counted = connections_by_client.find(slot->second->client_address);
  if (counted != connections_by_client.end() && --counted->second == 0) connections_by_client.erase(counted);
  slots.erase(slot);
}

std::chrono::milliseconds ServerCore::WatchdogTick() const {
  std::chrono::milliseconds shortest =
      std::min({options.idle_timeout, options.header_read_timeout, options.body_stall_timeout,
                options.response_stall_timeout, options.shutdown_grace_period});
  return std::clamp<std::chrono::milliseconds>(shortest / 4, std::chrono::milliseconds(5),
                                               std::chrono::milliseconds(250));
}

void ServerCore::WatchdogLoop() {
  std::chrono::milliseconds tick = WatchdogTick();
  std::unique_lock lock(mutex);
  while (!watchdog_stop) {
    changed.wait_for(lock, tick);
    ShutDownDueSockets(SteadyNowNanos());
  }
}

// Caller holds mutex. Shutting a socket down (not closing it) wakes the blocked thread, which
// then unwinds and closes it itself.
void ServerCore::ShutDownDueSockets(int64_t now_nanos) {
  bool draining_now = draining.load();
  bool grace_over = draining_now && now_nanos >= grace_deadline_nanos;
  for (auto& [id, slot] : slots) {
    if (slot->shut) continue;
    int64_t deadline = slot->deadline_nanos.load();
    bool expired = deadline != 0 && now_nanos >= deadline;
    if (!expired && !grace_over && !(draining_now && slot->idle.load())) continue;
    if (expired) slot->timed_out.store(true);
    ::shutdown(slot->fd, SHUT_RDWR);
    slot->shut = true;
  }
}

// Every open connection is a descriptor: lift the soft limit to the hard one, so that
// ServerOptions::connections_max, not a login default of 1,024, is what refuses a client.
void RaiseDescriptorLimit() {
  rlimit limit{};
  if (::getrlimit(RLIMIT_NOFILE, &limit) != 0 || limit.rlim_cur >= limit.rlim_max) return;
  limit.rlim_cur = limit.rlim_max;
  if (::setrlimit(RLIMIT_NOFILE, &limit) != 0) log::Warn("http cannot raise the open file limit");
}

}  // namespace

// ---------------------------------------------------------------------------------------------

struct Server::Impl : ServerCore {};

Server::Server(ServerOptions options, Handler handler, Metrics* metrics) : impl_(std::make_unique<Impl>()) {
  impl_->options = std::move(options);
  impl_->handler = std::move(handler);
  impl_->metrics = metrics;
}

Server::~Server() {
  Shutdown();
  Wait();
}

Status Server::Start() {
  // A client that vanishes mid-sendfile would otherwise kill the process with SIGPIPE.
  std::signal(SIGPIPE, SIG_IGN);
  RaiseDescriptorLimit();
  SERAC_RETURN_IF_ERROR(impl_->ConfigureTls());
  SERAC_RETURN_IF_ERROR(impl_->Listen());
  try {
    impl_->StartLoops();
    std::lock_guard lock(impl_->mutex);
    impl_->acceptor_running = true;
    impl_->watchdog_thread = std::thread(&ServerCore::WatchdogLoop, impl_.get());
    impl_->balancer_thread = std::thread(&ServerCore::BalancerLoop, impl_.get());
    impl_->acceptor_thread = std::thread(&ServerCore::AcceptLoop, impl_.get());
  } catch (const std::exception& e) {
    impl_->acceptor_running = impl_->acceptor_thread.joinable();
    return Error(ErrorCode::kInternal, std::string("cannot start server threads: ") + e.what());
  }
  return Status::Ok();
}

uint16_t Server::port() const { return impl_->bound_port; }

void Server::Shutdown() {
  std::lock_guard lock(impl_->mutex);
  if (impl_->shutdown_requested) return;
  impl_->shutdown_requested = true;
  impl_->grace_deadline_nanos = SteadyNowNanos() + ToNanos(impl_->options.shutdown_grace_period);
  impl_->draining.store(true);
  // Wakes the blocked accept(); the acceptor thread then closes the socket itself.
  if (impl_->acceptor_running) ::shutdown(impl_->acceptor_fd, SHUT_RDWR);
  impl_->ShutDownDueSockets(SteadyNowNanos());  // idle connections go at once
  impl_->changed.notify_all();
}

void Server::Wait() {
  {
    std::unique_lock lock(impl_->mutex);
    impl_->changed.wait(lock, [this] {
      return impl_->shutdown_requested && !impl_->acceptor_running && impl_->connections_open == 0;
    });
    impl_->watchdog_stop = true;
    impl_->changed.notify_all();
  }
  std::lock_guard join_lock(impl_->join_mutex);
  if (impl_->acceptor_thread.joinable()) impl_->acceptor_thread.join();
  if (impl_->watchdog_thread.joinable()) impl_->watchdog_thread.join();
  if (impl_->balancer_thread.joinable()) impl_->balancer_thread.join();
  impl_->StopLoops();
}

ErrorDocument PlainTextErrorDocument(const ServerErrorInfo& error) {
  return {"text/plain", std::string(error.code) + ": " + std::string(error.message) + "\n"};
}

}  // namespace serac::http
