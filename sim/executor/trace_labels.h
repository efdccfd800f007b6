// How a task instance is labelled in traces and in the critical-path list: its name ("F mb 3 L12
// attention": phase, micro-batch, layer, op; "F mb 3 attention" in Perfetto traces), the rank that runs it, and its Chrome trace colour.
// Phases have distinct name prefixes (F, B, Bi, W, R, step), so forward, backward, weight-gradient
// and recompute spans of one op never share a name; Perfetto colours slices by name with the
// digits stripped, so each phase/op pair keeps one colour across micro-batches and layers.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "sim/executor/instance_map.h"
#include "sim/executor/workload.h"

namespace mofasim::executor {

// Writes the name into `s` (reused by writers that name millions of spans); with_layer = false
// leaves the layer out (the Perfetto trace interns names and gives the layer as an argument).
inline void span_name_into(std::string& s, const Workload& w, TaskId t, bool with_layer = true) {
  s.assign(phase_name(w.phase(t)));
  if (w.microbatch(t) != kNone) {
    s += " mb ";
    s += std::to_string(w.microbatch(t));
  }
  if (with_layer && w.layer(t) != kNone) {
    s += " L";
    s += std::to_string(w.layer(t));
  }
  s += ' ';
  s += w.op_name(w.op(t));
}

inline std::string span_name(const Workload& w, TaskId t) {
  std::string s;
  span_name_into(s, w, t);
  return s;
}

// The rank instance `inst` of `t` runs on: a rank-scope instance is its replica; a group task is
// placed on its first simulated member (as the replay does).
inline int instance_rank(const Workload& w, const InstanceMap& map, TaskId t, std::uint32_t inst) {
  const std::uint32_t replica = w.scope(t) == Scope::kRank ? inst : map.members(w.scope(t), w.stage(t), inst)[0];
  return map.rank(w.stage(t), static_cast<int>(replica));
}

// The replica-0 rank of every stage: the ranks a trace shows.
inline std::vector<int> stage_ranks(const InstanceMap& map, int stages) {
  std::vector<int> out;
  for (int s = 0; s < stages; ++s) out.push_back(map.rank(s, 0));
  return out;
}

// Chrome's reserved colour names ("cname"): compute by phase, communication by kind.
inline std::string_view chrome_colour(const Workload& w, TaskId t) {
  switch (w.category(t)) {
    case Category::kTp: return "rail_response";
    case Category::kCp: return "rail_animation";
    case Category::kEp: return "cq_build_attempt_passed";
    case Category::kPp: return "yellow";
    case Category::kDp: return "olive";
    case Category::kOffload: return "grey";
    case Category::kOptimizer: return "black";
    case Category::kCompute:
    case Category::kRecompute:
    case Category::kCount: break;
  }
  switch (w.phase(t)) {
    case TaskPhase::kForward: return "thread_state_running";      // green
    case TaskPhase::kBackward: return "thread_state_iowait";      // orange
    case TaskPhase::kInputGrad: return "rail_load";               // blue
    case TaskPhase::kWeightGrad: return "thread_state_runnable";  // light blue
    case TaskPhase::kRecompute: return "terrible";                // red
    case TaskPhase::kStep: return "generic_work";
  }
  return "generic_work";
}

}  // namespace mofasim::executor
