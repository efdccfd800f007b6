// simulate --chakra: the per-rank Chakra traces decode, and their nodes and dependencies are the
// step's task DAG (sim/interop/chakra_writer.h): one node per task half on its rank, every DAG
// edge exactly once, sends and receives that pair up, groups that name the right ranks.
#include "sim/interop/chakra_writer.h"

#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <map>
#include <set>

#include "sim/scenario/scenario_specs.h"
#include "sim/scenario/loader.h"
#include "test/cli/run_cli.h"

namespace mofasim::interop {
namespace {

using ChakraProtoMsg::Node;
using executor::TaskId;
using executor::TaskKind;

executor::SimulationInput input_of(const std::vector<std::string>& sets = {}) {
  return cli::simulation_input(
      cli::load_checked(std::string(MOFASIM_SOURCE_DIR) + "/scenarios/small.yaml", sets));
}

const ChakraProtoMsg::AttributeProto* attr(const Node& n, const std::string& name) {
  for (const auto& a : n.attr()) {
    if (a.name() == name) return &a;
  }
  return nullptr;
}

std::size_t unique_edges(const executor::Workload& w) {
  std::set<std::pair<TaskId, TaskId>> edges;
  for (std::size_t e = 0; e < w.edges(); ++e) edges.insert({w.edge_sources()[e], w.edge_targets()[e]});
  return edges.size();
}

// small.yaml: tp 2, pp 2, dp 2, cp 1; replica 0 is ranks 0 (stage 0) and 4 (stage 1).
TEST(ChakraTrace, NodesAndDependenciesAreTheTaskDag) {
  const executor::SimulationInput in = input_of();
  const executor::Workload w = step_workload(in);
  const topology::Placement placement = step_placement(in);
  std::size_t deps = 0;
  std::size_t ctrl = 0;
  std::map<std::int32_t, const Node*> sends;  // tag -> send node (stage 0 sends forward, stage 1 backward)
  std::vector<ChakraTrace> traces;
  for (int rank : {0, 4}) traces.push_back(chakra_trace(w, placement, rank));
  for (int s = 0; s < 2; ++s) {
    const ChakraTrace& t = traces[static_cast<std::size_t>(s)];
    std::size_t comp = 0, coll = 0, send = 0, recv = 0;
    for (TaskId id = 0; id < w.size(); ++id) {
      if (w.kind(id) == TaskKind::kP2p) {
        send += w.stage(id) == s ? 1 : 0;
        recv += w.peer_stage(id) == s ? 1 : 0;
      } else if (w.stage(id) == s) {
        comp += (w.kind(id) == TaskKind::kCompute || w.kind(id) == TaskKind::kHost) ? 1 : 0;
        coll += w.kind(id) == TaskKind::kCollective ? 1 : 0;
      }
    }
    std::map<ChakraProtoMsg::NodeType, std::size_t> by_type;
    std::set<std::uint64_t> ids;
    for (const Node& n : t.nodes) {
      ++by_type[n.type()];
      ids.insert(n.id());
    }
    EXPECT_EQ(t.nodes.size(), comp + coll + send + recv) << "stage " << s;
    EXPECT_EQ(by_type[ChakraProtoMsg::COMP_NODE], comp);
    EXPECT_EQ(by_type[ChakraProtoMsg::COMM_COLL_NODE], coll);
    EXPECT_EQ(by_type[ChakraProtoMsg::COMM_SEND_NODE], send);
    EXPECT_EQ(by_type[ChakraProtoMsg::COMM_RECV_NODE], recv);
    EXPECT_GT(send, 0u);
    EXPECT_GT(coll, 0u);
    EXPECT_EQ(ids.size(), t.nodes.size());  // ids unique within a rank
    for (const Node& n : t.nodes) {
      deps += static_cast<std::size_t>(n.data_deps_size());
      ctrl += static_cast<std::size_t>(n.ctrl_deps_size());
      const std::set<std::uint64_t> data(n.data_deps().begin(), n.data_deps().end());
      EXPECT_EQ(data.size(), static_cast<std::size_t>(n.data_deps_size())) << n.name();  // no repeats
      for (std::uint64_t d : n.data_deps()) EXPECT_TRUE(ids.count(d)) << n.name();
      for (std::uint64_t d : n.ctrl_deps()) EXPECT_TRUE(data.count(d)) << n.name();  // a subset, stream order
      if (n.type() == ChakraProtoMsg::COMM_SEND_NODE) sends[attr(n, "comm_tag")->int32_val()] = &n;
    }
  }
  // Every edge of the DAG appears once, on the node of its target (no ring exchange: cp = 1);
  // the stream-order edges are those whose ends share a stage and a stream.
  EXPECT_EQ(deps, unique_edges(w));
  std::set<std::pair<TaskId, TaskId>> same_stream;
  for (std::size_t e = 0; e < w.edges(); ++e) {
    const TaskId u = w.edge_sources()[e], v = w.edge_targets()[e];
    if (w.kind(u) != TaskKind::kP2p && w.kind(v) != TaskKind::kP2p && w.stream(u) == w.stream(v)) same_stream.insert({u, v});
  }
  EXPECT_EQ(ctrl, same_stream.size());
  EXPECT_GT(ctrl, 0u);
  EXPECT_LT(ctrl, deps);
  // Every receive pairs with a send of the same tag, size and endpoints on the other rank.
  for (const ChakraTrace& t : traces) {
    for (const Node& n : t.nodes) {
      if (n.type() != ChakraProtoMsg::COMM_RECV_NODE) continue;
      const auto it = sends.find(attr(n, "comm_tag")->int32_val());
      ASSERT_NE(it, sends.end()) << n.name();
      EXPECT_EQ(attr(*it->second, "comm_src")->int32_val(), attr(n, "comm_src")->int32_val());
      EXPECT_EQ(attr(*it->second, "comm_dst")->int32_val(), attr(n, "comm_dst")->int32_val());
      EXPECT_EQ(attr(*it->second, "comm_size")->int64_val(), attr(n, "comm_size")->int64_val());
      EXPECT_NE(attr(n, "comm_src")->int32_val(), attr(n, "comm_dst")->int32_val());
    }
  }
}

TEST(ChakraTrace, StepWorkloadIsTheDagSimulateReplays) {
  // step_workload expands executor::prepare_step, the step simulate_step replays: same task count.
  for (const std::vector<std::string>& sets : {std::vector<std::string>{},
                                               {"parallelism.cp=2", "parallelism.dp=1"},
                                               {"optimizations.recompute=full", "optimizations.tp_overlap.enabled=true"}}) {
    const executor::SimulationInput in = input_of(sets);
    const executor::StepResult r = executor::simulate_step(in, {});
    const executor::Workload w = step_workload(in);
    EXPECT_EQ(w.size(), r.tasks);
  }
}

TEST(ChakraTrace, NodeFieldsCarryTheTasksWork) {
  const executor::SimulationInput in = input_of();
  const executor::Workload w = step_workload(in);
  const topology::Placement placement = step_placement(in);
  const ChakraTrace t = chakra_trace(w, placement, 4);  // stage 1, TP group {4, 5}
  std::map<std::uint64_t, const Node*> by_id;
  for (const Node& n : t.nodes) by_id[n.id()] = &n;
  int checked_comp = 0, checked_coll = 0;
  for (TaskId id = 0; id < w.size(); ++id) {
    if (w.stage(id) != 1 || w.kind(id) == TaskKind::kP2p) continue;
    const Node& n = *by_id.at(id);
    if (w.kind(id) == TaskKind::kCompute) {
      EXPECT_EQ(n.duration_micros(), std::max<std::uint64_t>(1, static_cast<std::uint64_t>(std::llround(w.work(id) * 1e6))));
      EXPECT_EQ(attr(n, "num_ops")->int64_val(), std::llround(w.flops(id)));
      ++checked_comp;
    } else if (w.kind(id) == TaskKind::kCollective) {
      EXPECT_EQ(attr(n, "comm_size")->int64_val(), std::llround(w.work(id)));
      const std::string pg = attr(n, "pg_name")->string_val();
      if (w.scope(id) == executor::Scope::kTp) {
        EXPECT_EQ(pg, "3");  // kind kTp (0) * 8 ranks + TP group 2 ({4, 5}) + 1
      }
      // Chakra's CollectiveCommType numbers: ALL_REDUCE 0, ALL_GATHER 2, ALL_TO_ALL 6, REDUCE_SCATTER 7.
      using topology::CollectiveKind;
      const std::map<CollectiveKind, std::int64_t> kUpstream = {{CollectiveKind::kAllReduce, 0},
                                                                {CollectiveKind::kAllGather, 2},
                                                                {CollectiveKind::kAllToAll, 6},
                                                                {CollectiveKind::kReduceScatter, 7}};
      ASSERT_TRUE(w.collective(id).has_value()) << n.name();
      EXPECT_EQ(attr(n, "comm_type")->int64_val(), kUpstream.at(*w.collective(id))) << n.name();
      ++checked_coll;
    }
  }
  EXPECT_GT(checked_comp, 10);
  EXPECT_GT(checked_coll, 10);
}

TEST(ChakraTrace, ContextParallelRingIsASendToTheNextAndAReceiveFromThePrevious) {
  // cp 2, dp 1: CP group of rank 0 is {0, 2}; each KV exchange is a send and a receive.
  const executor::SimulationInput in = input_of({"parallelism.cp=2", "parallelism.dp=1"});
  const executor::Workload w = step_workload(in);
  const topology::Placement placement = step_placement(in);
  const ChakraTrace t = chakra_trace(w, placement, 2);
  int ring_sends = 0, ring_recvs = 0;
  for (const Node& n : t.nodes) {
    if (n.name().find("cp_kv_p2p") == std::string::npos) continue;
    if (n.type() == ChakraProtoMsg::COMM_SEND_NODE) {
      ++ring_sends;
      EXPECT_EQ(attr(n, "comm_src")->int32_val(), 2);
      EXPECT_EQ(attr(n, "comm_dst")->int32_val(), 0);
    } else {
      ASSERT_EQ(n.type(), ChakraProtoMsg::COMM_RECV_NODE);
      ++ring_recvs;
      EXPECT_EQ(attr(n, "comm_src")->int32_val(), 0);
      EXPECT_EQ(attr(n, "comm_dst")->int32_val(), 2);
    }
  }
  EXPECT_GT(ring_sends, 0);
  EXPECT_EQ(ring_sends, ring_recvs);
}

TEST(ChakraTrace, FilesAreLengthDelimitedMetadataThenNodes) {
  const executor::SimulationInput in = input_of();
  const executor::Workload w = step_workload(in);
  const topology::Placement placement = step_placement(in);
  const std::string dir = testing::TempDir() + "/chakra_files";
  std::filesystem::remove_all(dir);
  write_chakra_traces(w, placement, {0, 4}, dir);
  const ChakraTrace expected = chakra_trace(w, placement, 0);
  const ChakraTrace read = read_chakra_trace(dir + "/mofasim.0.et");
  EXPECT_EQ(read.metadata.version(), "0.0.4");
  ASSERT_EQ(read.nodes.size(), expected.nodes.size());
  EXPECT_EQ(read.nodes.back().SerializeAsString(), expected.nodes.back().SerializeAsString());
  // The first byte is the metadata's length as a varint32 (it is under 128 bytes).
  const std::string bytes = test::read_file(dir + "/mofasim.0.et");
  EXPECT_EQ(static_cast<std::size_t>(static_cast<unsigned char>(bytes[0])), expected.metadata.ByteSizeLong());
  const std::string groups = test::read_file(dir + "/comm_groups.json");
  EXPECT_NE(groups.find("\"1\": [0, 1]"), std::string::npos) << groups;  // TP group of rank 0
  EXPECT_NE(groups.find("\"3\": [4, 5]"), std::string::npos) << groups;  // TP group of rank 4
}

TEST(ChakraRanks, FoldedFullListedAndBounded) {
  const topology::Placement small = step_placement(input_of());
  EXPECT_EQ(chakra_ranks(small, executor::Fidelity::kFolded, ""), (std::vector<int>{0, 4}));
  EXPECT_EQ(chakra_ranks(small, executor::Fidelity::kFull, "").size(), 8u);
  EXPECT_EQ(chakra_ranks(small, executor::Fidelity::kFull, "6,0,2-3"), (std::vector<int>{0, 2, 3, 6}));
  auto error = [](const topology::Placement& p, executor::Fidelity f, const std::string& list) {
    try {
      (void)chakra_ranks(p, f, list);
    } catch (const std::invalid_argument& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_EQ(error(small, executor::Fidelity::kFull, "1,x"), "--chakra-ranks: expected ranks like 0,3,8-15, got 'x'");
  EXPECT_EQ(error(small, executor::Fidelity::kFull, "9"), "--chakra-ranks: rank 9 is outside the job (8 ranks)");
  EXPECT_EQ(error(small, executor::Fidelity::kFull, "5-3"), "--chakra-ranks: empty range '5-3'");
  EXPECT_EQ(error(small, executor::Fidelity::kFolded, "0,1"),
            "--chakra-ranks: rank 1 was not simulated under --fidelity folded (simulated ranks: 0,4); use --fidelity full");
  const topology::Placement big({.tp = 8, .cp = 1, .ep = 1, .dp = 16, .pp = 8}, topology::RankOrder::parse("tp-cp-ep-dp-pp"));
  EXPECT_EQ(error(big, executor::Fidelity::kFull, ""),
            "--chakra: 1024 ranks is more than 256 trace files; list the ranks to write with --chakra-ranks (e.g. 0-7)");
  EXPECT_EQ(chakra_ranks(big, executor::Fidelity::kFull, "0-7").size(), 8u);
}

TEST(ChakraCli, SimulateWritesOneTracePerSimulatedRank) {
  const std::string dir = testing::TempDir() + "/chakra_cli";
  std::filesystem::remove_all(dir);
  const test::CliRun run = test::run_mofasim("simulate scenarios/small.yaml --chakra '" + dir + "'");
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_TRUE(std::filesystem::exists(dir + "/mofasim.0.et"));
  EXPECT_TRUE(std::filesystem::exists(dir + "/mofasim.4.et"));
  EXPECT_FALSE(std::filesystem::exists(dir + "/mofasim.1.et"));
  EXPECT_TRUE(std::filesystem::exists(dir + "/comm_groups.json"));
  const test::CliRun bad = test::run_mofasim("simulate scenarios/small.yaml --chakra '" + dir + "' --chakra-ranks 1");
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_EQ(bad.err,
            "mofasim simulate: --chakra-ranks: rank 1 was not simulated under --fidelity folded (simulated ranks: 0,4); "
            "use --fidelity full\n");
  const test::CliRun orphan = test::run_mofasim("simulate scenarios/small.yaml --chakra-ranks 0");
  EXPECT_EQ(orphan.exit_code, 2);
  EXPECT_EQ(orphan.err, "mofasim simulate: --chakra-ranks: needs --chakra DIR\n");
}

}  // namespace
}  // namespace mofasim::interop
