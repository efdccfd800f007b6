// `mofasim tune SCENARIO`: searches TP, CP, PP, vpp, EP, DP, micro-batch, schedule and the
// optimisation features for the scenario's model, hardware, GPU count and global batch (MoFa §4,
// MoFa(42) MoFa(43) MoFa(44)); ranks every feasible configuration with the analytic model, re-ranks the best N with
// the step simulation, and prints the top K like the paper's Table 6. --e2e adds the optimal
// checkpoint interval, ETTR and total time and ranks by them. --shard i/n and --merge split a large
// search into array jobs.
#include <algorithm>
#include <cmath>
#include <fstream>
#include <iostream>
#include <optional>
#include <sstream>
#include <thread>
#include <utility>

#include "sim/analysis/input_file.h"
#include "sim/cli/cli_common.h"
#include "sim/cli/commands.h"
#include "sim/cli/memory_fit.h"
#include "sim/cli/mpi_world.h"
#include "sim/cli/output_files.h"
#include "sim/scenario/scenario_specs.h"
#include "sim/progress/progress_reporter.h"
#include "sim/scenario/loader.h"
#include "sim/tuner/analytic_evaluator.h"
#include "sim/tuner/merge.h"
#include "sim/tuner/report.h"
#include "sim/tuner/rerank.h"
#include "sim/tuner/simulated_evaluator.h"
#include "sim/tuner/tune.h"

namespace mofasim::cli {
namespace {

tuner::Shard parse_shard(const std::string& text) {
  const auto slash = text.find('/');
  try {
    if (slash != std::string::npos) {
      std::size_t used = 0;
      const int index = std::stoi(text.substr(0, slash), &used);
      const std::string count_text = text.substr(slash + 1);
      std::size_t used2 = 0;
      const int count = std::stoi(count_text, &used2);
      if (used == slash && used2 == count_text.size() && count >= 1 && index >= 0 && index < count) {
        return {.index = index, .count = count};
      }
    }
  } catch (const std::exception&) {
  }
  throw UsageError("mofasim tune: --shard must be i/n with 0 <= i < n, got '" + text + "'");
}

// The switchable pruning rules (tuner::PruneRules): the --no-rule name, what the rule skips, and
// its switch. One table for parsing --no-rule and for --help.
struct RuleInfo {
  const char* name;
  const char* meaning;
  bool tuner::PruneRules::*flag;
};
constexpr RuleInfo kRules[] = {
    {"tp-within-node", "TP no wider than a node's GPUs (MoFa rule 4)", &tuner::PruneRules::tp_within_node},
    {"microbatches-cover-pipeline", "at least as many micro-batches as pipeline stages (MoFa rule 3)",
     &tuner::PruneRules::microbatches_cover_pipeline},
    {"vpp-needs-pipeline", "interleaving (vpp > 1) only with more than one stage", &tuner::PruneRules::vpp_needs_pipeline},
    {"cp-needs-long-sequence", "context parallelism only for sequences of 16384 tokens or more",
     &tuner::PruneRules::cp_needs_long_sequence},
    {"inert-feature", "no feature with nothing to act on (e.g. TP overlap at TP 1)", &tuner::PruneRules::inert_feature},
    {"overlap-dominates", "no overlap switched off where overlapping costs nothing (alpha = beta = 1)",
     &tuner::PruneRules::overlap_dominates},
    {"memory-saver-not-needed", "no recompute or offload where a lighter variant already fits",
     &tuner::PruneRules::memory_saver_not_needed},
};

void switch_off_rule(tuner::PruneRules& rules, const std::string& name) {
  if (name == "all") {
    rules = tuner::PruneRules::none();
    return;
  }
  std::string allowed;
  for (const RuleInfo& r : kRules) {
    if (name == r.name) {
      rules.*r.flag = false;
      return;
    }
    allowed += std::string(r.name) + ", ";
  }
  throw UsageError("mofasim tune: --no-rule '" + name + "' is not a rule; allowed: " + allowed + "all");
}

void print_rules() {
  std::cout << "pruning rules (each on by default; --no-rule NAME switches one off, --no-rule all every one):\n";
  for (const RuleInfo& r : kRules) {
    const std::string name = r.name;
    std::cout << "  " << name << std::string(name.size() < 30 ? 30 - name.size() : 1, ' ') << r.meaning << "\n";
  }
}

// The MPI mode: rank r has tuned shard r/N; rank 0 gets every rank's rows (CSV) and counts and
// merges them as `tune --merge` does, so it ranks and prints what a single process would.
// Other ranks get std::nullopt.
std::optional<tuner::TuneResult> gather_mpi_shards(const tuner::TuneResult& mine) {
  std::ostringstream csv;
  tuner::write_csv(csv, mine);
  const std::vector<std::string> texts =
      gather_on_root(nlohmann::json{{"stats", tuner::to_json(mine.stats)}, {"csv", csv.str()}}.dump());
  if (texts.empty()) return std::nullopt;
  std::vector<std::string> csvs;
  tuner::TuneStats stats;
  for (std::size_t r = 0; r < texts.size(); ++r) {
    const nlohmann::json doc = nlohmann::json::parse(texts[r]);
    csvs.push_back(doc.at("csv").get<std::string>());
    const tuner::TuneStats rank_stats = tuner::stats_from_json(doc.at("stats"));
    if (r == 0) {
      stats = rank_stats;
    } else {
      stats.merge(rank_stats);
    }
  }
  tuner::TuneResult merged = tuner::merge_csv(csvs);
  merged.stats = stats;
  return merged;
}

// A shard output: a regular file, at most 1 GiB (a shard's CSV holds every evaluated
// configuration, so it is larger than a measurements file).
std::string read_shard(const std::string& path) {
  try {
    return analysis::read_input_file(path, "shard output", std::size_t{1} << 30);
  } catch (const analysis::InputError& e) {
    throw UsageError(std::string("mofasim tune: --merge: ") + e.what());
  }
}

}  // namespace

int run_tune(const Args& args) {
  CommonOptions common;
  std::string path;
  int top_k = 4;
  int rerank_n = 8;
  bool e2e = false;
  bool quiet = false;
  int threads = 0;
  std::string csv_path;
  std::string shard_text = "0/1";
  std::vector<std::string> no_rules;
  std::vector<std::string> merge_files;
  po::options_description desc("options");
  add_common_options(desc, common);
  desc.add_options()("top,k", po::value<int>(&top_k)->default_value(top_k), "configurations to print")(
      "rerank", po::value<int>(&rerank_n)->default_value(rerank_n),
      "re-rank the best N with the step simulation (folded); 0 = analytic ranking only")(
      "e2e", po::bool_switch(&e2e),
      "also choose the checkpoint interval (MoFa(44)) and rank by end-to-end time (MoFa(40))")(
      "csv", po::value<std::string>(&csv_path), "write every evaluated configuration to this CSV file")(
      "shard", po::value<std::string>(&shard_text)->default_value(shard_text),
      "evaluate slice i of n of the enumeration (array jobs); combine with --merge")(
      "merge", po::value<std::vector<std::string>>(&merge_files)->multitoken(),
      "combine shard outputs (CSV files from --csv, or JSON files from --json) instead of searching")(
      "no-rule", po::value<std::vector<std::string>>(&no_rules)->composing(),
      "switch a pruning rule off (repeatable; 'all' = brute force; the rules are listed below)")(
      "threads", po::value<int>(&threads)->default_value(threads), "worker threads; 0 = all cores")(
      "quiet,q", po::bool_switch(&quiet), "no progress line on stderr (it is shown only on a terminal)")("scenario", po::value<std::string>(&path),
                                                                   "scenario YAML file");
  po::positional_options_description pos;
  pos.add("scenario", 1);
  po::variables_map vm;
  parse_command_line("tune", args, desc, pos, vm);
  if (common.help) {
    print_command_help("tune", "SCENARIO.yaml [--top K] [--rerank N] [--e2e] [--csv FILE] [--json] [--shard i/n] [--merge FILES...]", desc);
    print_rules();
    return 0;
  }
  if (path.empty()) throw UsageError("mofasim tune: missing SCENARIO.yaml (see: mofasim tune --help)");
  if (top_k < 1) throw UsageError("mofasim tune: --top must be >= 1");
  if (rerank_n < 0) throw UsageError("mofasim tune: --rerank must be >= 0");
  if (threads < 0 || threads > tuner::kMaxTuneThreads) {
    throw UsageError("mofasim tune: --threads: must be in [0, " + std::to_string(tuner::kMaxTuneThreads) +
                     "] (0 = all cores), got " + std::to_string(threads));
  }

  std::vector<std::string> inputs = merge_files;
  inputs.push_back(path);
  check_outputs("tune", {{"--csv", csv_path}}, inputs);
  const scenario::LoadedScenario loaded = load_checked(path, common.sets, e2e);
  refuse_node_hardware(loaded, "tune's layout search");
  tuner::TuneProblem problem{.model = loaded.model,
                             .hardware = loaded.hardware,
                             .topology = to_topology_spec(loaded.proto),
                             .global_batch = loaded.parallel.global_batch,
                             .base_features = loaded.features};
  tuner::TuneOptions options;
  options.shard = parse_shard(shard_text);
  const MpiWorld world = mpi_world();
  const bool mpi = world.size > 1;
  if (mpi && (!merge_files.empty() || options.shard.count > 1)) {
    throw UsageError("mofasim tune: --shard and --merge are not for mpirun runs (the ranks are the shards)");
  }
  if (mpi) {
    options.shard = {.index = world.rank, .count = world.size};
    quiet = quiet || world.rank != 0;
  }
  options.threads = threads > 0 ? threads
                                : static_cast<int>(std::clamp(std::thread::hardware_concurrency(), 1u,
                                                              static_cast<unsigned>(tuner::kMaxTuneThreads)));
  for (const std::string& rule : no_rules) switch_off_rule(options.rules, rule);
  if (e2e) {
    options.e2e = tuner::E2ESettings{.fault = to_fault_spec(loaded),
                                     .n_steps = scenario::training_steps(loaded.proto),
                                     .save_time_s = {}};
  }
  if (auto line = progress::stderr_callback("tune", "layouts", quiet)) {
    options.progress = [line](const tuner::Progress& p) {
      line(static_cast<std::int64_t>(p.layouts_done), static_cast<std::int64_t>(p.layouts_total));
    };
  }

  tuner::TuneResult result;
  if (!merge_files.empty()) {
    std::vector<std::string> texts;
    for (const std::string& f : merge_files) texts.push_back(read_shard(f));
    const bool json = merge_files.front().ends_with(".json");
    // A malformed shard is bad input (exit 2): name the file when one file alone is at fault.
    if (!json) {
      for (std::size_t i = 0; i < texts.size(); ++i) {
        try {
          tuner::merge_csv({texts[i]});
        } catch (const std::invalid_argument& e) {
          throw UsageError("mofasim tune: --merge: " + merge_files[i] + ": " + e.what());
        }
      }
    }
    try {
      result = json ? tuner::merge_json(texts) : tuner::merge_csv(texts);
    } catch (const std::invalid_argument& e) {
      throw UsageError(std::string("mofasim tune: --merge: ") + e.what());
    }
  } else {
    try {
      result = tuner::tune(problem, options, tuner::analytic_evaluator(problem));
    } catch (const tuner::SearchSpaceTooLarge& e) {
      throw scenario::ScenarioError(
          {scenario::format_location(loaded.sources.find("topology.gpus")) + ": topology.gpus: tune: " + e.what()});
    }
  }
  if (mpi) {
    std::optional<tuner::TuneResult> merged = gather_mpi_shards(result);
    if (!merged) return 0;
    result = std::move(*merged);
    options.shard = {};
  }
  if (!csv_path.empty()) {
    write_output_file(csv_path, [&](std::ostream& csv) { tuner::write_csv(csv, result); });
  }
  std::optional<tuner::RerankResult> reranked;
  if (rerank_n > 0 && !result.ranking.empty()) {
    // Each re-ranked configuration is one step simulation (seconds at thousands of GPUs).
    const auto n = static_cast<std::int64_t>(std::min<std::size_t>(static_cast<std::size_t>(rerank_n), result.ranking.size()));
    progress::ProgressReporter progress_line = progress::ProgressReporter::for_stderr("re-rank", "simulations", n, quiet);
    std::int64_t done = 0;
    const tuner::StepFn simulate = tuner::simulated_step(problem);
    reranked = tuner::rerank(result, problem, options, rerank_n, [&](const tuner::ConfigView& config) {
      progress_line.update(done);
      tuner::StepEvaluation evaluation = simulate(config);
      progress_line.update(++done);
      return evaluation;
    });
    progress_line.finish();
  }
  // The layout the scenario itself writes (the search's starting point) may not fit.
  const MemoryFit fit = memory_fit(loaded);
  if (!mpi || world.rank == 0) warn_if_out_of_memory("tune", fit, std::cerr);
  if (common.json) {
    nlohmann::json j = tuner::to_json(result, top_k);
    j["scenario"] = loaded.proto.name();
    j["memory_fit"] = to_json(fit);
    if (reranked) {
      nlohmann::json entries = nlohmann::json::array();
      for (const tuner::RerankEntry& e : reranked->entries) {
        nlohmann::json entry = {{"analytic_rank", e.analytic_rank},
                                {"simulated_rank", e.simulated_rank},
                                {"simulated_step_time_s", e.simulated.step_time_s},
                                {"configuration", tuner::to_json(result.rows[e.row])}};
        // The end-to-end time re-computed from the simulated step (the configuration's e2e is
        // the analytic one); null total when the run cannot converge.
        if (e.simulated_e2e) {
          const double total = e.simulated_e2e->total_s;
          entry["simulated_e2e"] = {{"checkpoint_interval_steps", e.simulated_e2e->interval_steps},
                                    {"ettr", e.simulated_e2e->ettr},
                                    {"total_time_s", std::isfinite(total) ? nlohmann::json(total) : nlohmann::json()}};
        }
        entries.push_back(entry);
      }
      j["rerank"] = {{"entries", entries}, {"moved", reranked->moved}, {"ranked_by", e2e ? "simulated_e2e" : "simulated_step"}};
    }
    std::cout << j.dump(2) << "\n";
    return 0;
  }
  std::cout << "scenario   " << loaded.proto.name() << " (" << loaded.path << ")\n\n"
            << tuner::format_stats(result.stats) << "\n";
  if (result.ranking.empty()) {
    std::cout << "no feasible configuration: every candidate was removed or is out of memory\n";
    return 0;
  }
  std::cout << tuner::format_table(result, problem, top_k);
  if (reranked) {
    std::cout << "\nre-ranked by the step simulation (folded)"
              << (e2e ? ", by end-to-end time re-computed from the simulated step" : "") << ", best "
              << reranked->entries.size() << ": "
              << reranked->moved << " moved\n"
              << tuner::format_rerank(result, *reranked);
  }
  return 0;
}

}  // namespace mofasim::cli
