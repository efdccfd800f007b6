// All-gather over a shared folder (see file_exchange.h).
#include "sim/cli/file_exchange.h"

#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <algorithm>
#include <sstream>
#include <thread>

#include "sim/cli/cli_common.h"
#include "sim/units/format.h"

namespace mofasim::cli {

std::string run_key(const std::string& text) {
  std::uint64_t h = 1469598103934665603ULL;
  for (const unsigned char c : text) {
    h ^= c;
    h *= 1099511628211ULL;
  }
  char hex[17];
  std::snprintf(hex, sizeof hex, "%016llx", static_cast<unsigned long long>(h));
  return hex;
}

FileExchange::FileExchange(std::string command, std::string folder, std::string key, int index, int count,
                           std::chrono::milliseconds timeout)
    : command_(std::move(command)), folder_(std::move(folder)), key_(std::move(key)), index_(index), count_(count),
      timeout_(timeout) {
  std::error_code ec;
  if (!std::filesystem::is_directory(folder_, ec)) {
    throw UsageError("mofasim " + command_ + ": --exchange: " + folder_ + " is not a folder");
  }
}

std::string FileExchange::path_of(int round, int shard) const {
  return folder_ + "/" + key_ + "." + std::to_string(round) + "." + std::to_string(shard) + "-of-" +
         std::to_string(count_);
}

std::vector<std::string> FileExchange::all_gather(const std::string& mine) {
  const int round = round_++;
  const std::string where = "mofasim " + command_ + ": --exchange: ";
  const std::string path = path_of(round, index_);
  const std::string temporary = path + ".tmp";
  {
    std::ofstream out(temporary, std::ios::binary | std::ios::trunc);
    out.write(mine.data(), static_cast<std::streamsize>(mine.size()));
    out.close();
    if (!out) throw UsageError(where + "cannot write " + temporary);
  }
  std::error_code ec;
  std::filesystem::rename(temporary, path, ec);
  if (ec) throw UsageError(where + "cannot rename " + temporary + " to " + path + ": " + ec.message());

  std::vector<std::string> all(static_cast<std::size_t>(count_));
  all[static_cast<std::size_t>(index_)] = mine;
  const auto deadline = std::chrono::steady_clock::now() + timeout_;
  for (int shard = 0; shard < count_; ++shard) {
    if (shard == index_) continue;
    const std::string other = path_of(round, shard);
    // Poll: 1 ms at first (the shards are usually in step), then at most every 50 ms.
    auto pause = std::chrono::milliseconds(1);
    while (!std::filesystem::exists(other, ec)) {
      if (std::chrono::steady_clock::now() >= deadline) {
        throw UsageError(where + "shard " + std::to_string(shard) + "/" + std::to_string(count_) +
                         " wrote nothing for evaluation " + std::to_string(round + 1) + " within " +
                         format_number("%g s", static_cast<double>(timeout_.count()) / 1000) + " (every shard must run at the same time, with the same --exchange folder)");
      }
      std::this_thread::sleep_for(pause);
      pause = std::min(pause * 2, std::chrono::milliseconds(50));
    }
    std::ifstream in(other, std::ios::binary);
    if (!in.is_open()) throw UsageError(where + "cannot read " + other);
    std::stringstream text;
    if (in.peek() != std::ifstream::traits_type::eof()) text << in.rdbuf();
    if (in.bad()) throw UsageError(where + "cannot read " + other);
    all[static_cast<std::size_t>(shard)] = text.str();
  }
  return all;
}

}  // namespace mofasim::cli
