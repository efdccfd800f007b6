#include "sim/interop/chakra_writer.h"

#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/io/zero_copy_stream_impl.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>
#include <map>
#include <optional>
#include <set>
#include <stdexcept>

#include "sim/executor/generate.h"
#include "sim/executor/simulate_step.h"
#include "topology/rank_order.h"

namespace mofasim::interop {
namespace {

using ChakraProtoMsg::Node;
using topology::CollectiveKind;
using executor::TaskId;
using executor::TaskKind;

void attr_int64(Node& n, const char* name, std::int64_t v) {
  auto* a = n.add_attr();
  a->set_name(name);
  a->set_int64_val(v);
}
void attr_int32(Node& n, const char* name, std::int32_t v) {
  auto* a = n.add_attr();
  a->set_name(name);
  a->set_int32_val(v);
}
void attr_uint64(Node& n, const char* name, std::uint64_t v) {
  auto* a = n.add_attr();
  a->set_name(name);
  a->set_uint64_val(v);
}
void attr_string(Node& n, const char* name, const std::string& v) {
  auto* a = n.add_attr();
  a->set_name(name);
  a->set_string_val(v);
}
void attr_bool(Node& n, const char* name, bool v) {
  auto* a = n.add_attr();
  a->set_name(name);
  a->set_bool_val(v);
}

std::uint64_t bytes_of(double work) { return static_cast<std::uint64_t>(std::llround(std::max(0.0, work))); }

ChakraProtoMsg::CollectiveCommType comm_type(std::optional<CollectiveKind> c) {
  if (!c) throw std::logic_error("chakra: collective task with no collective kind");
  switch (*c) {
    case CollectiveKind::kAllReduce: return ChakraProtoMsg::ALL_REDUCE;
    case CollectiveKind::kAllGather: return ChakraProtoMsg::ALL_GATHER;
    case CollectiveKind::kReduceScatter: return ChakraProtoMsg::REDUCE_SCATTER;
    case CollectiveKind::kAllToAll:
    case CollectiveKind::kAllToAllScaleOut:  // Chakra has no hop kinds: each DeepEP hop is an all-to-all
    case CollectiveKind::kAllToAllScaleUp: return ChakraProtoMsg::ALL_TO_ALL;
    default: break;
  }
  throw std::logic_error("chakra: no Chakra collective for this kind");
}

// A ring step run as point-to-point halves (CP ring KV exchange) rather than a group collective.
bool is_ring_exchange(const executor::Workload& w, TaskId t) {
  return w.kind(t) == TaskKind::kCollective && w.collective(t) == CollectiveKind::kRingStep;
}

std::vector<int> parse_rank_list(const std::string& list, int world) {
  std::set<int> ranks;
  std::size_t pos = 0;
  while (pos <= list.size()) {
    const std::size_t comma = std::min(list.find(',', pos), list.size());
    const std::string item = list.substr(pos, comma - pos);
    const std::size_t dash = item.find('-');
    auto number = [&](const std::string& s) {
      std::size_t used = 0;
      int v = -1;
      try {
        v = std::stoi(s, &used);
      } catch (const std::exception&) {
        used = 0;
      }
      if (s.empty() || used != s.size() || v < 0) {
        throw std::invalid_argument("--chakra-ranks: expected ranks like 0,3,8-15, got '" + item + "'");
      }
      if (v >= world) {
        throw std::invalid_argument("--chakra-ranks: rank " + s + " is outside the job (" + std::to_string(world) + " ranks)");
      }
      return v;
    };
    const int first = number(dash == std::string::npos ? item : item.substr(0, dash));
    const int last = dash == std::string::npos ? first : number(item.substr(dash + 1));
    if (last < first) throw std::invalid_argument("--chakra-ranks: empty range '" + item + "'");
    if (last - first >= kChakraMaxRanks * 64) throw std::invalid_argument("--chakra-ranks: range '" + item + "' is too large");
    for (int r = first; r <= last; ++r) ranks.insert(r);
    pos = comma + 1;
  }
  return {ranks.begin(), ranks.end()};
}

}  // namespace

executor::Workload step_workload(const executor::SimulationInput& in) {
  const executor::PreparedStep step = executor::prepare_step(in);  // the step simulate_step replays
  return executor::generate_workload({.schedule = &step.schedule, .plan = &step.plan, .parallel = in.parallel,
                                      .features = step.features, .position_layers = step.position_layers});
}

topology::Placement step_placement(const executor::SimulationInput& in) {
  const model::ParallelSpec& p = in.parallel;
  return topology::Placement({.tp = p.tp, .cp = p.cp, .ep = p.ep, .dp = p.dp, .pp = p.pp,
                              .etp = in.model.is_moe() ? p.etp : 0},
                             topology::RankOrder::parse(in.rank_order));
}

std::vector<int> chakra_ranks(const topology::Placement& placement, executor::Fidelity fidelity, const std::string& list) {
  const int world = placement.world_size();
  const auto replica0 = placement.members_of(topology::GroupKind::kPp, 0);
  if (!list.empty()) {
    std::vector<int> ranks = parse_rank_list(list, world);
    if (fidelity == executor::Fidelity::kFolded) {
      for (int r : ranks) {
        if (std::find(replica0.begin(), replica0.end(), r) == replica0.end()) {
          std::string simulated;
          for (int s : replica0) simulated += (simulated.empty() ? "" : ",") + std::to_string(s);
          throw std::invalid_argument("--chakra-ranks: rank " + std::to_string(r) +
                                      " was not simulated under --fidelity folded (simulated ranks: " + simulated +
                                      "); use --fidelity full");
        }
      }
    }
    return ranks;
  }
  if (fidelity == executor::Fidelity::kFolded) return {replica0.begin(), replica0.end()};
  if (world > kChakraMaxRanks) {
    throw std::invalid_argument("--chakra: " + std::to_string(world) + " ranks is more than " + std::to_string(kChakraMaxRanks) +
                                " trace files; list the ranks to write with --chakra-ranks (e.g. 0-7)");
  }
  std::vector<int> all(static_cast<std::size_t>(world));
  for (int r = 0; r < world; ++r) all[static_cast<std::size_t>(r)] = r;
  return all;
}

std::string chakra_group_name(const topology::Placement& placement, topology::GroupKind k, int rank) {
  // Unique over kinds: kind index * world + group number, from 1 (ASTRA-sim reserves 0 for "all").
  return std::to_string(static_cast<int>(k) * placement.world_size() + placement.group_of(k, rank) + 1);
}

ChakraTrace chakra_trace(const executor::Workload& w, const topology::Placement& placement, int rank) {
  const int stage = placement.index_in_group(topology::GroupKind::kPp, rank);
  const auto pipeline = placement.members_of(topology::GroupKind::kPp, rank);
  const std::uint64_t n = w.size();
  ChakraTrace trace;
  trace.metadata.set_version("0.0.4");
  {
    auto* a = trace.metadata.add_attr();
    a->set_name("producer");
    a->set_string_val("mofasim");
  }
  // Predecessors of every task, deduplicated.
  std::vector<std::vector<TaskId>> preds(n);
  const auto from = w.edge_sources();
  const auto to = w.edge_targets();
  for (std::size_t e = 0; e < from.size(); ++e) preds[to[e]].push_back(from[e]);
  for (auto& p : preds) {
    std::sort(p.begin(), p.end());
    p.erase(std::unique(p.begin(), p.end()), p.end());
  }
  // The node ids on `s` that stand for "u is done": none when u has no node on that stage.
  auto done_ids = [&](TaskId u, int s) {
    std::vector<std::uint64_t> ids;
    if (w.kind(u) == TaskKind::kP2p) {
      if (w.stage(u) == s) ids.push_back(u);
      if (w.peer_stage(u) == s) ids.push_back(n + u);
    } else if (w.stage(u) == s) {
      ids.push_back(u);
      if (is_ring_exchange(w, u)) ids.push_back(n + u);
    }
    return ids;
  };
  // Adds v's incoming edges to `node` (v's half on stage `s`). A P2P's edge goes to its send half
  // when the predecessor has a node on the sender, else to its receive half.
  auto add_deps = [&](Node& node, TaskId v, int s) {
    for (TaskId u : preds[v]) {
      std::vector<std::uint64_t> ids = done_ids(u, s);
      if (w.kind(v) == TaskKind::kP2p && s == w.peer_stage(v) && !done_ids(u, w.stage(v)).empty()) continue;
      if (ids.empty()) {
        if (w.kind(v) == TaskKind::kP2p && s == w.stage(v) && !done_ids(u, w.peer_stage(v)).empty()) continue;
        throw std::logic_error("chakra: edge between stages outside a P2P: " + w.describe(u) + " -> " + w.describe(v));
      }
      const bool stream_order = w.kind(u) != TaskKind::kP2p && w.kind(v) != TaskKind::kP2p && w.stream(u) == w.stream(v);
      for (std::uint64_t id : ids) {
        node.add_data_deps(id);
        if (stream_order) node.add_ctrl_deps(id);
      }
    }
  };
  auto base = [&](std::uint64_t id, TaskId t, ChakraProtoMsg::NodeType type, const std::string& suffix) {
    Node node;
    node.set_id(id);
    node.set_name(w.describe(t) + suffix);
    node.set_type(type);
    attr_bool(node, "is_cpu_op", w.kind(t) == TaskKind::kHost);
    return node;
  };
  auto p2p_attrs = [&](Node& node, int src, int dst, TaskId t) {
    attr_int32(node, "comm_src", src);
    attr_int32(node, "comm_dst", dst);
    attr_int32(node, "comm_tag", static_cast<std::int32_t>(t));
    attr_int64(node, "comm_size", static_cast<std::int64_t>(bytes_of(w.work(t))));
  };
  for (TaskId t = 0; t < n; ++t) {
    const TaskKind kind = w.kind(t);
    if (kind == TaskKind::kP2p) {
      const int sender = pipeline[static_cast<std::size_t>(w.stage(t))];
      const int receiver = pipeline[static_cast<std::size_t>(w.peer_stage(t))];
      if (w.stage(t) == stage) {
        Node send = base(t, t, ChakraProtoMsg::COMM_SEND_NODE, " send");
        p2p_attrs(send, sender, receiver, t);
        add_deps(send, t, w.stage(t));
        trace.nodes.push_back(std::move(send));
      }
      if (w.peer_stage(t) == stage) {
        Node recv = base(n + t, t, ChakraProtoMsg::COMM_RECV_NODE, " recv");
        p2p_attrs(recv, sender, receiver, t);
        add_deps(recv, t, w.peer_stage(t));
        trace.nodes.push_back(std::move(recv));
      }
      continue;
    }
    if (w.stage(t) != stage) continue;
    if (kind == TaskKind::kCompute || kind == TaskKind::kHost) {
      Node node = base(t, t, ChakraProtoMsg::COMP_NODE, "");
      const double micros = w.work(t) * 1e6;
      node.set_duration_micros(micros > 0 ? std::max<std::uint64_t>(1, static_cast<std::uint64_t>(std::llround(micros))) : 0);
      attr_int64(node, "num_ops", static_cast<std::int64_t>(std::llround(w.flops(t))));
      attr_uint64(node, "tensor_size", 0);
      add_deps(node, t, stage);
      trace.nodes.push_back(std::move(node));
    } else if (kind == TaskKind::kCopy) {
      const bool d2h = w.stream(t) == executor::Stream::kD2H;
      Node node = base(t, t, d2h ? ChakraProtoMsg::MEM_STORE_NODE : ChakraProtoMsg::MEM_LOAD_NODE, "");
      attr_uint64(node, "tensor_size", bytes_of(w.work(t)));
      add_deps(node, t, stage);
      trace.nodes.push_back(std::move(node));
    } else if (is_ring_exchange(w, t)) {
      const topology::GroupKind k = executor::InstanceMap::group_kind(w.scope(t), placement);
      const auto members = placement.members_of(k, rank);
      const int c = static_cast<int>(members.size());
      const int i = placement.index_in_group(k, rank);
      const int next = members[static_cast<std::size_t>((i + 1) % c)];
      const int prev = members[static_cast<std::size_t>((i + c - 1) % c)];
      Node send = base(t, t, ChakraProtoMsg::COMM_SEND_NODE, " send");
      p2p_attrs(send, rank, next, t);
      add_deps(send, t, stage);
      Node recv = base(n + t, t, ChakraProtoMsg::COMM_RECV_NODE, " recv");
      p2p_attrs(recv, prev, rank, t);
      add_deps(recv, t, stage);
      trace.nodes.push_back(std::move(send));
      trace.nodes.push_back(std::move(recv));
    } else {
      Node node = base(t, t, ChakraProtoMsg::COMM_COLL_NODE, "");
      attr_int64(node, "comm_type", comm_type(w.collective(t)));
      attr_int64(node, "comm_size", static_cast<std::int64_t>(bytes_of(w.work(t))));
      attr_string(node, "pg_name", chakra_group_name(placement, executor::InstanceMap::group_kind(w.scope(t), placement), rank));
      add_deps(node, t, stage);
      trace.nodes.push_back(std::move(node));
    }
  }
  return trace;
}

void write_chakra_traces(const executor::Workload& w, const topology::Placement& placement, const std::vector<int>& ranks,
                         const std::string& dir) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) throw std::runtime_error("--chakra: cannot create directory '" + dir + "': " + ec.message());
  std::map<int, std::vector<int>> groups;  // pg_name -> ranks
  for (int rank : ranks) {
    const ChakraTrace trace = chakra_trace(w, placement, rank);
    const std::string path = dir + "/mofasim." + std::to_string(rank) + ".et";
    std::ofstream file(path, std::ios::binary);
    if (!file) throw std::runtime_error("--chakra: cannot write '" + path + "'");
    {
      google::protobuf::io::OstreamOutputStream raw(&file);
      google::protobuf::io::CodedOutputStream out(&raw);
      auto put = [&](const google::protobuf::MessageLite& m) {
        out.WriteVarint32(static_cast<std::uint32_t>(m.ByteSizeLong()));
        m.SerializeWithCachedSizes(&out);
      };
      put(trace.metadata);
      for (const Node& node : trace.nodes) {
        put(node);
        for (const auto& a : node.attr()) {
          if (a.name() == "pg_name") {
            const int id = std::stoi(a.string_val());
            if (groups.count(id) == 0) {
              for (int k = 0; k < topology::kGroupKindCount; ++k) {
                const auto kind = static_cast<topology::GroupKind>(k);
                if (chakra_group_name(placement, kind, rank) == a.string_val()) {
                  const auto m = placement.members_of(kind, rank);
                  groups[id] = {m.begin(), m.end()};
                }
              }
            }
          }
        }
      }
    }
    if (!file) throw std::runtime_error("--chakra: cannot write '" + path + "'");
  }
  std::ofstream json(dir + "/comm_groups.json");
  json << "{";
  bool first = true;
  for (const auto& [id, members] : groups) {
    json << (first ? "\n" : ",\n") << "  \"" << id << "\": [";
    for (std::size_t i = 0; i < members.size(); ++i) json << (i ? ", " : "") << members[i];
    json << "]";
    first = false;
  }
  json << "\n}\n";
  if (!json) throw std::runtime_error("--chakra: cannot write '" + dir + "/comm_groups.json'");
}

ChakraTrace read_chakra_trace(const std::string& path) {
  std::ifstream file(path, std::ios::binary);
  if (!file) throw std::runtime_error("cannot read '" + path + "'");
  google::protobuf::io::IstreamInputStream raw(&file);
  google::protobuf::io::CodedInputStream in(&raw);
  in.SetTotalBytesLimit(std::numeric_limits<int>::max());
  ChakraTrace trace;
  auto get = [&](google::protobuf::MessageLite& m) {
    std::uint32_t size = 0;
    if (!in.ReadVarint32(&size)) return false;
    const auto limit = in.PushLimit(static_cast<int>(size));
    const bool ok = m.ParseFromCodedStream(&in) && in.ConsumedEntireMessage();
    in.PopLimit(limit);
    if (!ok) throw std::runtime_error("'" + path + "': a message does not parse");
    return true;
  };
  if (!get(trace.metadata)) throw std::runtime_error("'" + path + "': no GlobalMetadata");
  Node node;
  while (get(node)) trace.nodes.push_back(node);
  return trace;
}

}  // namespace mofasim::interop
