// Workload storage: column-wise task attributes, edge list, CSR successor lists.
#include "sim/executor/workload.h"

#include <stdexcept>

#include "sim/units/check.h"

namespace mofasim::executor {

Workload::Workload(int stages, int microbatches)
    : stages_(stages), microbatches_(microbatches),
      last_on_stream_(static_cast<std::size_t>(stages) * kStreamCount, kNone) {
  if (stages < 1) throw std::invalid_argument("workload: stages must be >= 1, got " + std::to_string(stages));
  if (microbatches < 1) {
    throw std::invalid_argument("workload: microbatches must be >= 1, got " + std::to_string(microbatches));
  }
}

std::uint16_t Workload::intern(std::string_view name) {
  for (std::size_t i = 0; i < op_names_.size(); ++i) {
    if (op_names_[i] == name) return static_cast<std::uint16_t>(i);
  }
  MOFASIM_CHECK(op_names_.size() < 0xffff, "too many distinct op names");
  op_names_.emplace_back(name);
  return static_cast<std::uint16_t>(op_names_.size() - 1);
}

TaskId Workload::add(const TaskSpec& s) {
  MOFASIM_CHECK(!finalized_, "Workload::add after finalize");
  MOFASIM_CHECK(s.stage < stages_ && s.peer_stage < stages_, "task stage out of range");
  MOFASIM_CHECK(s.work >= 0 && s.flops >= 0 && s.alloc_bytes >= 0 && s.free_bytes >= 0, "negative task amount");
  MOFASIM_CHECK(s.op < op_names_.size(), "task op name not interned");
  MOFASIM_CHECK(size() < kNone - 1, "too many tasks for 32-bit ids");
  kind_.push_back(s.kind);
  category_.push_back(s.category);
  stream_.push_back(s.stream);
  scope_.push_back(s.scope);
  phase_.push_back(s.phase);
  collective_.push_back(s.collective);
  stage_.push_back(s.stage);
  peer_stage_.push_back(s.peer_stage);
  chunk_.push_back(s.chunk);
  op_.push_back(s.op);
  microbatch_.push_back(s.microbatch);
  layer_.push_back(s.layer);
  work_.push_back(s.work);
  flops_.push_back(s.flops);
  alloc_bytes_.push_back(s.alloc_bytes);
  free_bytes_.push_back(s.free_bytes);
  alpha_.push_back(s.alpha);
  beta_.push_back(s.beta);
  return size() - 1;
}

void Workload::add_edge(TaskId from, TaskId to) {
  MOFASIM_CHECK(!finalized_, "Workload::add_edge after finalize");
  MOFASIM_CHECK(from < size() && to < size() && from != to, "bad edge");
  edge_from_.push_back(from);
  edge_to_.push_back(to);
}

void Workload::add_alloc(TaskId t, double bytes) {
  MOFASIM_CHECK(!finalized_ && t < size() && bytes >= 0, "bad add_alloc");
  alloc_bytes_[t] += bytes;
}

void Workload::add_free(TaskId t, double bytes) {
  MOFASIM_CHECK(!finalized_ && t < size() && bytes >= 0, "bad add_free");
  free_bytes_[t] += bytes;
}

void Workload::chain(int stage, Stream stream, TaskId task) {
  TaskId& last = last_on_stream_[static_cast<std::size_t>(stage) * kStreamCount + static_cast<int>(stream)];
  if (last != kNone) add_edge(last, task);
  last = task;
}

void Workload::finalize() {
  MOFASIM_CHECK(!finalized_, "Workload::finalize called twice");
  const std::uint32_t n = size();
  succ_begin_.assign(n + 1, 0);
  pred_count_.assign(n, 0);
  for (std::size_t e = 0; e < edge_from_.size(); ++e) {
    ++succ_begin_[edge_from_[e] + 1];
    ++pred_count_[edge_to_[e]];
  }
  for (std::uint32_t i = 0; i < n; ++i) succ_begin_[i + 1] += succ_begin_[i];
  succ_.resize(edge_from_.size());
  std::vector<std::uint32_t> fill(succ_begin_.begin(), succ_begin_.end() - 1);
  for (std::size_t e = 0; e < edge_from_.size(); ++e) succ_[fill[edge_from_[e]]++] = edge_to_[e];
  finalized_ = true;
}

std::string Workload::describe(TaskId t) const {
  std::string s(phase_name(phase_[t]));
  if (microbatch_[t] != kNone) s += " mb " + std::to_string(microbatch_[t]);
  s += " chunk " + std::to_string(chunk_[t]);
  if (layer_[t] != kNone) s += " layer " + std::to_string(layer_[t]);
  s += " " + op_names_[op_[t]];
  s += " (stage " + std::to_string(stage_[t]);
  if (kind_[t] == TaskKind::kP2p) s += " -> " + std::to_string(peer_stage_[t]);
  s += ", " + std::string(stream_name(stream_[t])) + ")";
  return s;
}

}  // namespace mofasim::executor
