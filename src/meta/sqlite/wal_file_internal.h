// The database's write-ahead log as a file to fsync, apart from SQLite.
//
// The writer runs with synchronous=NORMAL, so a COMMIT only writes its frames to the log; the
// group committer then makes them durable with Sync(), on a thread of its own when the writer
// goes on with the next batch (see group_commit_internal.h). SQLite still fsyncs the log and the
// database file around every checkpoint, and a checkpoint never restarts the log before the
// frames it copied are durable in the database file.
//
// Thread-safety: Sync() is called by one thread at a time (the committer's sync thread, its
// writer thread for a lone batch, or the caller of a lone write).
#pragma once

#include <sys/types.h>

#include <string>

#include "common/status.h"

namespace serac::meta::sqlite {

class WalFile {
 public:
  // `database_path` is the SQLite database; its log is `database_path` + "-wal".
  explicit WalFile(std::string database_path);
  ~WalFile();
  WalFile(const WalFile&) = delete;
  WalFile& operator=(const WalFile&) = delete;

  // Makes durable every frame written to the log before the call. The log is reopened when it
  // is no longer the file the descriptor holds (SQLite deletes it when the last connection
  // closes), and its directory entry is fsynced whenever it is opened. kIoError if the log does
  // not exist or the fsync fails.
  Status Sync();

 private:
  Status Reopen();

  const std::string path_;
  int fd_ = -1;
  dev_t device_ = 0;
  ino_t inode_ = 0;
};

}  // namespace serac::meta::sqlite
