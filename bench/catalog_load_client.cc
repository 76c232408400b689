// Load client for the Iceberg REST catalog benchmark (bench/catalog_bench.py). One thread and one
// keep-alive HTTP/1.1 connection per client, every request SigV4-signed the way PyIceberg signs
// catalog requests (botocore SigV4Auth: service s3tables, generic URI encoding, headers
// content-type;host;x-amz-date, body hashed, no x-amz-content-sha256 header), with serac's own
// signer. Written in C++ so that on a small machine the catalogs, not the load generator, set the
// pace.
//
//   catalog_load_client run --port P --workload load|commit-hot|commit-spread --table-path PREFIX
//                           --tables NAME[,NAME...] --clients N
//                           (--warmup SECONDS --seconds SECONDS | --warmup-commits N --commits N)
//       load:          every client GETs PREFIX<first table> in a loop;
//       commit-hot:    every client appends snapshots to the first table; on 409 it reloads the
//                      table and retries;
//       commit-spread: table i belongs to client i mod N; each client commits round robin over
//                      its own tables, so commits never conflict.
//     Prints "phase=measure" when the window opens, "phase=done" when every operation started
//     inside it has finished, then one summary line:
//       ops=N seconds=F ops_per_s=F p50_ms=F p99_ms=F retries=N errors=N cpu_seconds=F [first_error=...]
//     ops counts successful operations started inside the window (load: 200 answers; commits:
//     POSTs answered 200); seconds runs from the window's start until the window's end or the last
//     of those operations finished, whichever is later; latency is request written to answer read
//     (for commits the POST that returned 200); cpu_seconds is this process's CPU over the same span.
//     With --commits the run is counted instead: the clients together land --warmup-commits
//     commits, then the window opens and lasts until --commits more have landed (ops = that
//     number), so the catalogs compared do exactly the same commits on the same table.
//
//   catalog_load_client sign --port P --method M --target T --amz-date YYYYMMDDTHHMMSSZ < body
//     Prints the Authorization header it would send (checked against botocore by the benchmark).
//
// Credentials come from AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY. Host is always 127.0.0.1.
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <iterator>
#include <latch>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <random>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "auth/sigv4.h"
#include "bench_http_connection.h"
#include "common/clock.h"
#include "common/hash.h"

namespace {

using Clock = std::chrono::steady_clock;
using serac::auth::Credentials;

constexpr char kHost[] = "127.0.0.1";
constexpr char kRegion[] = "us-east-1";
constexpr char kSigningName[] = "s3tables";
constexpr uint64_t kResponseBodyBytesMax = 1024ULL * 1024 * 1024;
constexpr int kSocketTimeoutSeconds = 60;
constexpr auto kPauseAfterConnectionError = std::chrono::milliseconds(10);
constexpr size_t kErrorBodyChars = 200;

enum class Workload { kLoad, kCommitHot, kCommitSpread };

struct Config {
  uint16_t port = 0;
  std::string host_header;  // 127.0.0.1:PORT
  Credentials credentials;
  Workload workload = Workload::kLoad;
  std::string table_path;  // .../namespaces/ns/tables/
  std::vector<std::string> tables;
  int clients = 0;
  double warmup_seconds = 0;
  double seconds = 0;
  // Counted runs (commit workloads): the clients together land warmup_commits and then `commits`
  // measured commits, whatever the time it takes, so every catalog does the very same work.
  uint64_t warmup_commits = 0;
  uint64_t commits = 0;
};

// The measured window, published by the main thread before the clients are released. In a
// counted run the client whose commit completes the warm-up opens it (begin_ready).
struct Window {
  Clock::time_point begin;
  Clock::time_point end;
  std::atomic<uint64_t> landed{0};  // counted runs: commits answered 200 so far
  std::atomic<bool> begin_ready{false};
};

struct ClientResult {
  uint64_t ops = 0;
  uint64_t retries = 0;
  uint64_t errors = 0;
  std::string first_error;
  std::vector<double> latencies_ms;
  Clock::time_point last_finish;
};

// --------------------------------------------------------------------------- signing

// The request head for one call, signed for s3tables like botocore's SigV4Auth.
std::string SignedRequestHead(const Config& config, std::string_view method, std::string_view target,
                              std::string_view body, serac::WallTime now) {
  std::vector<serac::http::Header> headers = {{"Host", config.host_header}};
  if (!body.empty()) headers.push_back({"Content-Type", "application/json"});
  serac::auth::SignOptions options;
  options.region = kRegion;
  options.service = kSigningName;
  options.uri_encoding = serac::auth::UriEncoding::kGeneric;
  options.now = now;
  options.payload_sha256_hex = serac::Sha256Hex(body);
  options.send_content_sha256_header = false;
  size_t query_at = target.find('?');
  std::string_view path = target.substr(0, query_at);
  std::string_view query =
      query_at == std::string_view::npos ? std::string_view() : target.substr(query_at + 1);
  serac::auth::SignRequest(method, path, query, headers, config.credentials, options);

  std::string head;
  head.reserve(512);
  head.append(method).append(" ").append(target).append(" HTTP/1.1\r\n");
  for (const serac::http::Header& header : headers)
    head.append(header.name).append(": ").append(header.value).append("\r\n");
  if (!body.empty() || method == "POST")
    head.append("Content-Length: ").append(std::to_string(body.size())).append("\r\n");
  head.append("\r\n");
  return head;
}

// --------------------------------------------------------------------------- HTTP

struct Response {
  int status = 0;  // 0: the exchange failed (body holds why)
  std::string body;
};

class Connection {
 public:
  explicit Connection(uint16_t port)
      : http_(bench::HttpConnectionOptions{kHost, port, kSocketTimeoutSeconds, true, kResponseBodyBytesMax}) {
  }

  Response Exchange(const std::string& head, std::string_view body) {
    bench::HttpResponse got = http_.Exchange(head, body);
    if (got.status == 0) return Response{0, std::move(got.error)};
    return Response{got.status, std::move(got.body)};
  }

 private:
  bench::HttpConnection http_;
};

// --------------------------------------------------------------------------- catalog client

std::string JsonString(std::string_view text) { return nlohmann::json(std::string(text)).dump(); }

// What a writer believes about a table: enough to build the next append commit.
struct TableState {
  std::string path;
  std::string location;
  std::optional<int64_t> current;  // nullopt: no main branch yet
  int64_t sequence = 0;

  // From a reload: the first "current-snapshot-id" and "last-sequence-number" of the answer, the
  // top-level fields of the metadata (snapshots and refs use other key names), found without
  // parsing the whole, growing document.
  bool UpdateFrom(const std::string& load_result) {
    std::optional<std::string_view> current_text = FieldValue(load_result, "\"current-snapshot-id\"");
    std::optional<std::string_view> sequence_text = FieldValue(load_result, "\"last-sequence-number\"");
    if (!current_text || !sequence_text || sequence_text->empty() || (*sequence_text)[0] == 'n') return false;
    if (*current_text == "null" || *current_text == "-1") {
      current.reset();
    } else {
      current = std::strtoll(std::string(*current_text).c_str(), nullptr, 10);
    }
    sequence = std::strtoll(std::string(*sequence_text).c_str(), nullptr, 10);
    return true;
  }

  static std::optional<std::string_view> FieldValue(std::string_view document, std::string_view key) {
    size_t at = document.find(key);
    if (at == std::string_view::npos) return std::nullopt;
    at += key.size();
    while (at < document.size() && std::isspace(static_cast<unsigned char>(document[at]))) ++at;
    if (at >= document.size() || document[at] != ':') return std::nullopt;
    ++at;
    while (at < document.size() && std::isspace(static_cast<unsigned char>(document[at]))) ++at;
    size_t end = at;
    while (end < document.size() &&
           (std::isalnum(static_cast<unsigned char>(document[end])) || document[end] == '-'))
      ++end;
    if (end == at) return std::nullopt;
    return document.substr(at, end - at);
  }
};

class CatalogClient {
 public:
  explicit CatalogClient(const Config& config) : config_(config), connection_(config.port), random_(Seed()) {}

  Response Call(std::string_view method, const std::string& target, std::string_view body = {}) {
    const serac::WallTime now = serac::Now();
    if (!body.empty())
      return connection_.Exchange(SignedRequestHead(config_, method, target, body, now), body);
    // A body-less request signed within the same second is byte for byte the same request: sign
    // it once per second, so the generator's CPU goes to sending rather than re-signing.
    const auto second = std::chrono::duration_cast<std::chrono::seconds>(now.time_since_epoch()).count();
    if (second != signed_second_ || method != signed_method_ || target != signed_target_) {
      signed_head_ = SignedRequestHead(config_, method, target, body, now);
      signed_second_ = second;
      signed_method_ = std::string(method);
      signed_target_ = target;
    }
    return connection_.Exchange(signed_head_, body);
  }

  // The table's state from a full parse of its LoadTableResult (setup only).
  std::optional<TableState> Load(const std::string& path, std::string* error) {
    Response response = Call("GET", path);
    if (response.status != 200) {
      *error = "GET " + path + " -> " + std::to_string(response.status) + ": " +
               response.body.substr(0, kErrorBodyChars);
      return std::nullopt;
    }
    nlohmann::json document = nlohmann::json::parse(response.body, nullptr, /*allow_exceptions=*/false);
    if (!document.is_object() || !document.contains("metadata") || !document["metadata"].is_object()) {
      *error = "GET " + path + ": no metadata in the answer";
      return std::nullopt;
    }
    const nlohmann::json& metadata = document["metadata"];
    TableState state;
    state.path = path;
    state.location = metadata.value("location", "");
    auto current = metadata.find("current-snapshot-id");
    if (current != metadata.end() && current->is_number_integer() && current->get<int64_t>() != -1)
      state.current = current->get<int64_t>();
    state.sequence = metadata.value("last-sequence-number", int64_t{0});
    return state;
  }

  // One append commit: requirement main == current, a new snapshot on top of it, main moved to it.
  // On 200 the state advances without parsing the answer.
  Response Commit(TableState& state) {
    int64_t snapshot_id = static_cast<int64_t>(random_() >> 1);
    if (snapshot_id == 0) snapshot_id = 1;
    std::string id = std::to_string(snapshot_id);
    std::string current = state.current ? std::to_string(*state.current) : "null";
    int64_t timestamp_ms = serac::ToUnixMillis(serac::Now());
    std::string body;
    body.reserve(512 + state.location.size());
    body += R"({"requirements": [{"type": "assert-ref-snapshot-id", "ref": "main", "snapshot-id": )" +
            current + R"(}], "updates": [{"action": "add-snapshot", "snapshot": {"snapshot-id": )" + id +
            R"(, "sequence-number": )" + std::to_string(state.sequence + 1) + R"(, "timestamp-ms": )" +
            std::to_string(timestamp_ms) + R"(, "manifest-list": )" +
            JsonString(state.location + "/metadata/snap-" + id + "-1-bench.avro") +
            R"(, "summary": {"operation": "append"}, "schema-id": 0)";
    if (state.current) body += R"(, "parent-snapshot-id": )" + current;
    body += R"(}}, {"action": "set-snapshot-ref", "ref-name": "main", "type": "branch", "snapshot-id": )" +
            id + "}]}";
    Response response = Call("POST", state.path, body);
    if (response.status == 200) {
      state.current = snapshot_id;
      state.sequence += 1;
    }
    return response;
  }

 private:
  static uint64_t Seed() {
    std::random_device device;
    return (static_cast<uint64_t>(device()) << 32) ^ device();
  }

  const Config& config_;
  Connection connection_;
  std::mt19937_64 random_;
  // The last body-less request signed, and the second it was signed in.
  int64_t signed_second_ = -1;
  std::string signed_method_;
  std::string signed_target_;
  std::string signed_head_;
};

// --------------------------------------------------------------------------- load

// The tables a client works on: the load table, the hot table, or its share of the spread tables.
std::vector<std::string> TablesOf(const Config& config, int client) {
  if (config.workload != Workload::kCommitSpread) return {config.tables.front()};
  std::vector<std::string> mine;
  for (size_t t = static_cast<size_t>(client); t < config.tables.size();
       t += static_cast<size_t>(config.clients))
    mine.push_back(config.tables[t]);
  return mine;
}

std::string Excerpt(int status, const std::string& body) {
  std::string text = std::to_string(status) + ": " + body.substr(0, kErrorBodyChars);
  for (char& c : text)
    if (c == '\n' || c == '\r') c = ' ';
  return text;
}

// Whether an operation counts. Windowed runs: it started inside the window. Counted runs: it is
// one of the measured commits (the landing that completes the warm-up opens the window), or a
// failure after the window opened.
bool InWindow(const Config& config, Window& window, Clock::time_point started, Clock::time_point finished,
              bool ok) {
  if (config.commits == 0) return started >= window.begin;
  if (!ok) return window.begin_ready.load();
  const uint64_t number = window.landed.fetch_add(1) + 1;
  if (number == config.warmup_commits) {
    window.begin = finished;
    window.begin_ready.store(true);
  }
  return number > config.warmup_commits && number <= config.warmup_commits + config.commits;
}

void RunClient(const Config& config, int client_index, std::latch& ready, std::latch& go, Window& window,
               ClientResult* result) {
  CatalogClient client(config);
  std::vector<TableState> states;
  std::string setup_error;
  for (const std::string& table : TablesOf(config, client_index)) {
    std::string path = config.table_path + table;
    if (config.workload == Workload::kLoad) {
      states.push_back(TableState{path, "", std::nullopt, 0});
      continue;
    }
    std::optional<TableState> state = client.Load(path, &setup_error);
    if (!state) {
      result->errors++;
      result->first_error = "setup: " + setup_error;
      states.clear();
      break;
    }
    states.push_back(std::move(*state));
  }
  ready.count_down();
  go.wait();
  if (states.empty()) return;
  result->latencies_ms.reserve(1 << 14);
  size_t next = 0;
  const bool counted = config.commits > 0;
  while (true) {
    Clock::time_point started = Clock::now();
    if (counted ? window.landed.load() >= config.warmup_commits + config.commits : started >= window.end)
      break;
    Response response;
    bool ok = false;
    bool retry = false;
    if (config.workload == Workload::kLoad) {
      response = client.Call("GET", states.front().path);
      ok = response.status == 200;
    } else {
      TableState& state = states[next % states.size()];
      response = client.Commit(state);
      ok = response.status == 200;
      retry = response.status == 409;
      if (ok) {
        ++next;
      } else {  // reload and retry the same table, as a writer does after a conflict
        Response reload = client.Call("GET", state.path);
        if (reload.status != 200 || !state.UpdateFrom(reload.body)) response = std::move(reload);
      }
    }
    Clock::time_point finished = Clock::now();
    if (!InWindow(config, window, started, finished, ok)) continue;  // warm-up, or past the counted commits
    if (ok) {
      result->ops++;
      result->latencies_ms.push_back(std::chrono::duration<double, std::milli>(finished - started).count());
      result->last_finish = finished;
    } else if (retry) {
      result->retries++;
    } else {
      if (result->errors++ == 0) result->first_error = Excerpt(response.status, response.body);
    }
    if (response.status == 0) std::this_thread::sleep_for(kPauseAfterConnectionError);
  }
}

double CpuSeconds() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  auto seconds = [](const timeval& t) {
    return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_usec) / 1e6;
  };
  return seconds(usage.ru_utime) + seconds(usage.ru_stime);
}

// The value at `fraction` of the sorted values, as the Python load generator computed it.
double Percentile(const std::vector<double>& sorted, double fraction) {
  if (sorted.empty()) return 0;
  size_t index = static_cast<size_t>(fraction * static_cast<double>(sorted.size()));
  return sorted[std::min(sorted.size() - 1, index)];
}

Clock::duration Seconds(double seconds) {
  return std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(seconds));
}

int Run(const Config& config) {
  std::vector<ClientResult> results(static_cast<size_t>(config.clients));
  std::latch ready(config.clients);
  std::latch go(1);
  Window window;
  std::vector<std::thread> threads;
  threads.reserve(results.size());
  for (int i = 0; i < config.clients; ++i)
    threads.emplace_back(RunClient, std::cref(config), i, std::ref(ready), std::ref(go), std::ref(window),
                         &results[static_cast<size_t>(i)]);
  // Every client has its connection and its tables' state; then all start together.
  ready.wait();
  const bool counted = config.commits > 0;
  if (counted) {
    if (config.warmup_commits == 0) {
      window.begin = Clock::now();
      window.begin_ready.store(true);
    }
    go.count_down();
    while (!window.begin_ready.load()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    window.end = window.begin;
  } else {
    window.begin = Clock::now() + Seconds(config.warmup_seconds);
    window.end = window.begin + Seconds(config.seconds);
    go.count_down();
    std::this_thread::sleep_until(window.begin);
  }
  double cpu_before = CpuSeconds();
  std::printf("phase=measure\n");
  std::fflush(stdout);
  for (std::thread& thread : threads) thread.join();
  double cpu_seconds = CpuSeconds() - cpu_before;
  std::printf("phase=done\n");

  uint64_t ops = 0, retries = 0, errors = 0;
  std::string first_error;
  Clock::time_point last = window.end;
  std::vector<double> latencies;
  for (const ClientResult& r : results) {
    ops += r.ops;
    retries += r.retries;
    errors += r.errors;
    if (first_error.empty()) first_error = r.first_error;
    if (r.ops > 0) last = std::max(last, r.last_finish);
    latencies.insert(latencies.end(), r.latencies_ms.begin(), r.latencies_ms.end());
  }
  std::sort(latencies.begin(), latencies.end());
  double elapsed = std::chrono::duration<double>(last - window.begin).count();
  std::printf(
      "ops=%llu seconds=%.3f ops_per_s=%.2f p50_ms=%.3f p99_ms=%.3f retries=%llu errors=%llu "
      "cpu_seconds=%.3f",
      static_cast<unsigned long long>(ops), elapsed, static_cast<double>(ops) / elapsed,
      Percentile(latencies, 0.50), Percentile(latencies, 0.99), static_cast<unsigned long long>(retries),
      static_cast<unsigned long long>(errors), cpu_seconds);
  if (!first_error.empty()) std::printf(" first_error=%s", first_error.c_str());
  std::printf("\n");
  return 0;
}

// --------------------------------------------------------------------------- command line

int Usage(const char* program) {
  std::fprintf(stderr,
               "usage: %s run --port P --workload load|commit-hot|commit-spread --table-path PREFIX\n"
               "                --tables NAME[,NAME...] --clients N\n"
               "                (--warmup SECONDS --seconds SECONDS | --warmup-commits N --commits N)\n"
               "       %s sign --port P --method M --target T --amz-date YYYYMMDDTHHMMSSZ < body\n"
               "credentials: AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY\n",
               program, program);
  return 2;
}

std::vector<std::string> SplitCommas(const std::string& text) {
  std::vector<std::string> parts;
  size_t begin = 0;
  while (begin <= text.size()) {
    size_t end = text.find(',', begin);
    if (end == std::string::npos) end = text.size();
    if (end > begin) parts.push_back(text.substr(begin, end - begin));
    begin = end + 1;
  }
  return parts;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2 || argc % 2 != 0) return Usage(argv[0]);
  const std::string command = argv[1];
  std::map<std::string, std::string> options;
  for (int i = 2; i + 1 < argc; i += 2) options[argv[i]] = argv[i + 1];
  auto option = [&](const char* name) { return options.count(name) ? options[name] : std::string(); };

  Config config;
  config.port = static_cast<uint16_t>(std::atoi(option("--port").c_str()));
  config.host_header = std::string(kHost) + ":" + std::to_string(config.port);
  const char* access_key = std::getenv("AWS_ACCESS_KEY_ID");
  const char* secret_key = std::getenv("AWS_SECRET_ACCESS_KEY");
  if (config.port == 0 || access_key == nullptr || secret_key == nullptr) return Usage(argv[0]);
  config.credentials = {access_key, secret_key, ""};

  if (command == "sign") {
    std::string body((std::istreambuf_iterator<char>(std::cin)), std::istreambuf_iterator<char>());
    std::optional<serac::WallTime> date = serac::ParseAmzDate(option("--amz-date"));
    if (!date || option("--method").empty() || option("--target").empty()) return Usage(argv[0]);
    std::string head = SignedRequestHead(config, option("--method"), option("--target"), body, *date);
    size_t at = head.find("\r\nAuthorization: ");
    if (at == std::string::npos) return 1;
    at += std::strlen("\r\nAuthorization: ");
    std::printf("%s\n", head.substr(at, head.find("\r\n", at) - at).c_str());
    return 0;
  }
  if (command != "run") return Usage(argv[0]);

  const std::string workload = option("--workload");
  if (workload == "load") {
    config.workload = Workload::kLoad;
  } else if (workload == "commit-hot") {
    config.workload = Workload::kCommitHot;
  } else if (workload == "commit-spread") {
    config.workload = Workload::kCommitSpread;
  } else {
    return Usage(argv[0]);
  }
  config.table_path = option("--table-path");
  config.tables = SplitCommas(option("--tables"));
  config.clients = std::atoi(option("--clients").c_str());
  config.warmup_seconds = std::atof(option("--warmup").c_str());
  config.seconds = std::atof(option("--seconds").c_str());
  config.warmup_commits = std::strtoull(option("--warmup-commits").c_str(), nullptr, 10);
  config.commits = std::strtoull(option("--commits").c_str(), nullptr, 10);
  const bool counted = config.commits > 0;
  if (config.table_path.empty() || config.tables.empty() || config.clients <= 0 ||
      (counted ? config.workload == Workload::kLoad : config.seconds <= 0) || config.warmup_seconds < 0)
    return Usage(argv[0]);
  return Run(config);
}
