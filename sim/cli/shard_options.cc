// --shard / --merge / MPI plumbing shared by the batch commands (see shard_options.h).
#include "sim/cli/shard_options.h"

#include <algorithm>
#include <fstream>
#include <iostream>
#include <sstream>

#include "sim/cli/mpi_world.h"

namespace mofasim::cli {

void add_shard_options(po::options_description& desc, ShardOptions& options, const std::string& unit) {
  desc.add_options()("shard", po::value<std::string>(&options.shard),
                     ("compute slice i of n of the " + unit +
                      " and print it as a shard document (JSON) for --merge (job arrays)")
                         .c_str())("merge", po::value<std::vector<std::string>>(&options.merge)->multitoken(),
                                   "combine shard documents (from --shard) into the single-process result");
}

ShardSpec parse_shard_spec(const std::string& command, const std::string& text) {
  const std::size_t slash = text.find('/');
  ShardSpec s;
  try {
    std::size_t used_i = 0;
    std::size_t used_n = 0;
    if (slash != std::string::npos) {
      s.index = std::stoi(text.substr(0, slash), &used_i);
      s.count = std::stoi(text.substr(slash + 1), &used_n);
    }
    if (slash != std::string::npos && used_i == slash && used_n == text.size() - slash - 1 && s.index >= 0 &&
        s.count >= 1 && s.index < s.count) {
      return s;
    }
  } catch (const std::exception&) {
  }
  throw UsageError("mofasim " + command + ": --shard: must be i/n with 0 <= i < n, got '" + text + "'");
}

ShardOutcome run_sharded(const std::string& command, const ShardOptions& options,
                         const std::function<nlohmann::json(int index, int count)>& make_shard) {
  ShardOutcome out;
  if (!options.shard.empty() && !options.merge.empty()) {
    throw UsageError("mofasim " + command + ": --shard and --merge go in separate runs");
  }
  if (!options.merge.empty()) {
    for (const std::string& path : options.merge) {
      std::ifstream in(path);
      if (!in) throw UsageError("mofasim " + command + ": --merge: cannot read " + path);
      std::stringstream text;
      text << in.rdbuf();
      try {
        out.documents.push_back(nlohmann::json::parse(text.str()));
      } catch (const nlohmann::json::parse_error&) {
        throw UsageError("mofasim " + command + ": --merge: " + path + " is not a shard document (JSON from --shard)");
      }
    }
    return out;
  }
  const MpiWorld world = mpi_world();
  if (!options.shard.empty()) {
    if (world.size > 1) throw UsageError("mofasim " + command + ": --shard: not under mpirun (the ranks are the shards)");
    const ShardSpec s = parse_shard_spec(command, options.shard);
    std::cout << make_shard(s.index, s.count).dump() << "\n";
    out.done = true;
    return out;
  }
  if (world.size == 1) {
    out.single = true;
    return out;
  }
  const std::vector<std::string> texts = gather_on_root(make_shard(world.rank, world.size).dump());
  if (world.rank != 0) {
    out.done = true;
    return out;
  }
  for (const std::string& t : texts) out.documents.push_back(nlohmann::json::parse(t));
  return out;
}

nlohmann::json row_shard_document(const std::string& kind, const nlohmann::json& run, std::size_t rows,
                                  std::size_t first_row, nlohmann::json values) {
  return {{"kind", kind}, {"run", run}, {"rows", rows}, {"first_row", first_row}, {"values", std::move(values)}};
}

std::vector<nlohmann::json> merge_row_shards(const std::string& command, const std::vector<nlohmann::json>& documents,
                                             const std::string& kind, const nlohmann::json& run) {
  const std::string where = "mofasim " + command + ": --merge: ";
  std::vector<const nlohmann::json*> sorted;
  for (const nlohmann::json& doc : documents) {
    if (!doc.is_object() || doc.value("kind", "") != kind || !doc.contains("first_row") || !doc.contains("values") ||
        !doc.at("values").is_array() || !doc.contains("rows")) {
      throw UsageError(where + "not a " + kind + " document");
    }
    if (doc.at("run") != run) {
      throw UsageError(where + "a shard comes from another run (" + doc.at("run").dump() + ", this is " + run.dump() + ")");
    }
    sorted.push_back(&doc);
  }
  std::sort(sorted.begin(), sorted.end(),
            [](const nlohmann::json* a, const nlohmann::json* b) { return a->at("first_row") < b->at("first_row"); });
  std::vector<nlohmann::json> values;
  for (const nlohmann::json* doc : sorted) {
    const auto first = doc->at("first_row").get<std::size_t>();
    if (first != values.size()) {
      throw UsageError(where + (first < values.size() ? "shards overlap at row " + std::to_string(first)
                                                      : "rows " + std::to_string(values.size()) + " to " +
                                                            std::to_string(first - 1) + " are in no shard"));
    }
    for (const nlohmann::json& v : doc->at("values")) values.push_back(v);
  }
  const auto rows = sorted.empty() ? 0 : sorted.front()->at("rows").get<std::size_t>();
  if (values.size() != rows) {
    throw UsageError(where + "the shards hold " + std::to_string(values.size()) + " of " + std::to_string(rows) +
                     " rows (a shard is missing)");
  }
  return values;
}

}  // namespace mofasim::cli
