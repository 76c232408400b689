/*
 * Reference writer for the S3 PUT benchmark: the fastest plain way to store objects with the
 * durability serac promises for a 200 (data on stable storage, then published atomically).
 *
 * Each of THREADS threads repeatedly creates a temp file, writes PAYLOAD bytes, fsyncs it,
 * renames it over its own final name and fsyncs the directory, for SECONDS seconds. Operations
 * started before the deadline finish and count ("drain"); throughput is operations divided by the
 * time until the last one finished, so a few long operations still give a fair figure.
 *
 * usage: fsync_writer DIR PAYLOAD_BYTES THREADS SECONDS
 * prints one line: ops=N bytes=N seconds=F ops_per_s=F mib_per_s=F p50_ms=F p99_ms=F errors=N
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

enum { kPathBytesMax = 4096 };

struct writer {
  pthread_t thread;
  int index;
  const char *dir;
  int dir_fd;
  const unsigned char *payload;
  size_t payload_bytes;
  double deadline_s;
  double last_finish_s;
  pthread_barrier_t *start_line;
  /* results */
  uint64_t ops;
  uint64_t errors;
  double *latencies_ms; /* one per finished op, grown on demand */
  size_t latency_capacity;
};

static double now_seconds(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int write_all(int fd, const unsigned char *data, size_t length) {
  while (length > 0) {
    ssize_t written = write(fd, data, length);
    if (written < 0) {
      if (errno == EINTR) continue;
      return -1;
    }
    data += written;
    length -= (size_t)written;
  }
  return 0;
}

/* One durable object write: temp file, data, fsync, rename into place, fsync the directory. */
static int store_once(struct writer *w, uint64_t sequence) {
  char temp_path[kPathBytesMax];
  char final_path[kPathBytesMax];
  snprintf(temp_path, sizeof temp_path, "%s/.tmp-%d-%llu", w->dir, w->index, (unsigned long long)sequence);
  snprintf(final_path, sizeof final_path, "%s/object-%d", w->dir, w->index);

  int fd = open(temp_path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (fd < 0) return -1;
  if (write_all(fd, w->payload, w->payload_bytes) != 0 || fsync(fd) != 0) {
    close(fd);
    unlink(temp_path);
    return -1;
  }
  if (close(fd) != 0) return -1;
  if (rename(temp_path, final_path) != 0) return -1;
  return fsync(w->dir_fd);
}

static int record_latency(struct writer *w, double latency_ms) {
  if (w->ops == w->latency_capacity) {
    size_t grown = w->latency_capacity ? w->latency_capacity * 2 : 1024;
    double *bigger = realloc(w->latencies_ms, grown * sizeof *bigger);
    if (bigger == NULL) return -1;
    w->latencies_ms = bigger;
    w->latency_capacity = grown;
  }
  w->latencies_ms[w->ops++] = latency_ms;
  return 0;
}

static void *run_writer(void *arg) {
  struct writer *w = arg;
  pthread_barrier_wait(w->start_line);
  for (uint64_t sequence = 0;; ++sequence) {
    double started = now_seconds();
    if (started >= w->deadline_s) break;
    int rc = store_once(w, sequence);
    double finished = now_seconds();
    if (rc != 0) {
      w->errors++;
      continue;
    }
    if (record_latency(w, (finished - started) * 1e3) != 0) break;
    w->last_finish_s = finished;
  }
  return NULL;
}

static int compare_doubles(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

static double percentile(const double *sorted, size_t count, double fraction) {
  if (count == 0) return 0.0;
  size_t rank = (size_t)(fraction * (double)(count - 1) + 0.5);
  return sorted[rank];
}

static int parse_positive(const char *text, unsigned long long *out) {
  char *end = NULL;
  errno = 0;
  *out = strtoull(text, &end, 10);
  return (errno == 0 && end != text && *end == '\0' && *out > 0) ? 0 : -1;
}

int main(int argc, char **argv) {
  unsigned long long payload_bytes, thread_count, seconds;
  if (argc != 5 || parse_positive(argv[2], &payload_bytes) || parse_positive(argv[3], &thread_count) ||
      parse_positive(argv[4], &seconds) || thread_count > 1024) {
    fprintf(stderr, "usage: %s DIR PAYLOAD_BYTES THREADS SECONDS\n", argv[0]);
    return 2;
  }
  const char *dir = argv[1];
  int dir_fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dir_fd < 0) {
    perror(dir);
    return 1;
  }
  unsigned char *payload = malloc(payload_bytes);
  struct writer *writers = calloc(thread_count, sizeof *writers);
  if (payload == NULL || writers == NULL) {
    fprintf(stderr, "out of memory\n");
    return 1;
  }
  /* Incompressible-looking bytes, so no layer can take a shortcut on zeros. */
  uint64_t state = 0x9e3779b97f4a7c15ull;
  for (size_t i = 0; i < payload_bytes; ++i) {
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    payload[i] = (unsigned char)(state >> 56);
  }

  pthread_barrier_t start_line;
  pthread_barrier_init(&start_line, NULL, (unsigned)thread_count + 1);
  for (unsigned long long i = 0; i < thread_count; ++i) {
    writers[i] = (struct writer){.index = (int)i, .dir = dir, .dir_fd = dir_fd, .payload = payload,
                                 .payload_bytes = payload_bytes, .start_line = &start_line};
  }
  /* The deadline is fixed once every thread exists, so thread start-up is not timed. */
  for (unsigned long long i = 0; i < thread_count; ++i) {
    if (pthread_create(&writers[i].thread, NULL, run_writer, &writers[i]) != 0) {
      fprintf(stderr, "pthread_create failed\n");
      return 1;
    }
  }
  double started = now_seconds();
  for (unsigned long long i = 0; i < thread_count; ++i) writers[i].deadline_s = started + (double)seconds;
  pthread_barrier_wait(&start_line);

  uint64_t ops = 0, errors = 0;
  double end = started;
  for (unsigned long long i = 0; i < thread_count; ++i) {
    pthread_join(writers[i].thread, NULL);
    ops += writers[i].ops;
    errors += writers[i].errors;
    if (writers[i].ops > 0 && writers[i].last_finish_s > end) end = writers[i].last_finish_s;
  }
  double *all = malloc((ops ? ops : 1) * sizeof *all);
  if (all == NULL) return 1;
  size_t filled = 0;
  for (unsigned long long i = 0; i < thread_count; ++i) {
    memcpy(all + filled, writers[i].latencies_ms, writers[i].ops * sizeof *all);
    filled += writers[i].ops;
  }
  qsort(all, filled, sizeof *all, compare_doubles);
  double elapsed = end > started ? end - started : 1e-9;
  double bytes = (double)ops * (double)payload_bytes;
  printf("ops=%llu bytes=%.0f seconds=%.3f ops_per_s=%.1f mib_per_s=%.1f p50_ms=%.3f p99_ms=%.3f errors=%llu\n",
         (unsigned long long)ops, bytes, elapsed, (double)ops / elapsed, bytes / elapsed / (1024.0 * 1024.0),
         percentile(all, filled, 0.50), percentile(all, filled, 0.99), (unsigned long long)errors);
  return errors ? 1 : 0;
}
