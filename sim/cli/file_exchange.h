// FileExchange: an all-gather over a shared folder, for job-array shards that must trade results
// while they run (`mofasim calibrate --shard i/n --exchange DIR`: every objective evaluation needs
// every row's prediction, so the shards meet once per evaluation, as MPI ranks do in all_gather).
//
// Round k of shard i writes DIR/<key>.<k>.<i>-of-<n> (to a temporary name, then renamed, so a
// reader never sees half a file) and waits for the other shards' files of round k. The key names
// the run, so runs of other inputs never meet in one folder; the work is deterministic, so a file
// left by an earlier run of the same inputs holds the same bytes and reading it is harmless. Files
// are left in place (a shard cannot know when the others have read its file); the folder is
// scratch space to delete after the run.
#pragma once

#include <chrono>
#include <string>
#include <vector>

namespace mofasim::cli {

class FileExchange {
 public:
  // `command` prefixes the errors ("mofasim calibrate: --exchange: ..."). Throws UsageError when
  // `folder` is not a writable folder.
  FileExchange(std::string command, std::string folder, std::string key, int index, int count,
               std::chrono::milliseconds timeout);

  // Every shard's `mine` of this round, in shard order (the same on every shard). Throws
  // UsageError naming the shard and round when a shard's file does not appear within the timeout.
  std::vector<std::string> all_gather(const std::string& mine);

 private:
  [[nodiscard]] std::string path_of(int round, int shard) const;

  std::string command_, folder_, key_;
  int index_ = 0;
  int count_ = 1;
  std::chrono::milliseconds timeout_;
  int round_ = 0;
};

// A short, stable name for a run: FNV-1a 64 of `text`, in hex.
std::string run_key(const std::string& text);

}  // namespace mofasim::cli
