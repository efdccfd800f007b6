// --shard i/n and --merge FILES... for the batch commands (ettr, sweep, validate --measured and the
// merge of calibrate, whose shards also trade through file_exchange.h; tune has
// its own, sim/tuner/merge.h), and the MPI mode over the same shards. Each
// command describes its work as shard documents (JSON: a range of trials or rows with their raw
// results) and a merge that rebuilds the single-process result from all of them, so
//   mofasim CMD ... --shard i/n > part-i.json        (one per array task)
//   mofasim CMD ... --merge part-*.json [--json]     (prints what `mofasim CMD ...` prints)
//   mpirun -n N mofasim CMD ...                      (rank 0 prints it)
// all give the single-process output.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "sim/cli/cli_common.h"

namespace mofasim::cli {

struct ShardOptions {
  std::string shard;               // "i/n", empty = not given
  std::vector<std::string> merge;  // shard documents to merge
};

// Adds --shard and --merge to `desc`; `unit` names what is split ("Monte Carlo trials", "measured rows", ...).
void add_shard_options(po::options_description& desc, ShardOptions& options, const std::string& unit);

struct ShardSpec {
  int index = 0;
  int count = 1;
};

// "i/n" with 0 <= i < n; UsageError "mofasim <command>: --shard: ..." otherwise.
ShardSpec parse_shard_spec(const std::string& command, const std::string& text);

// What this process does with the shard options and MPI:
//   single    no --shard, no --merge, one rank: run the command as usual;
//   done      --shard given (its document was printed on stdout), or an MPI rank other than 0
//             (its document was sent to rank 0): the command returns 0 without output;
//   documents otherwise: all the shard documents (from --merge files, or gathered from the MPI
//             ranks) for the command to merge and print as a single process would.
struct ShardOutcome {
  bool single = false;
  bool done = false;
  std::vector<nlohmann::json> documents;
};

// `make_shard(index, count)` computes this process's shard document; it is called only for
// --shard and MPI runs. --shard together with --merge, or with mpirun, is a UsageError; so is a
// --merge file that cannot be read or is not JSON.
ShardOutcome run_sharded(const std::string& command, const ShardOptions& options,
                         const std::function<nlohmann::json(int index, int count)>& make_shard);

// A shard of a split over rows (one value per row): {"kind", "run", "rows", "first_row", "values"}.
// `run` identifies the work, so shards of different runs are not merged together.
nlohmann::json row_shard_document(const std::string& kind, const nlohmann::json& run, std::size_t rows,
                                  std::size_t first_row, nlohmann::json values);

// The values of all the row shards in row order. UsageError "mofasim <command>: --merge: ..." when
// a document is of another kind or run, or shards overlap or leave rows out.
std::vector<nlohmann::json> merge_row_shards(const std::string& command, const std::vector<nlohmann::json>& documents,
                                             const std::string& kind, const nlohmann::json& run);

}  // namespace mofasim::cli
