// What a row's training stack runs besides its layout: sequence parallelism, the DP and P2P overlaps,
// the layer's memory-bound kernel set, the attention kernel and the MoE token dispatcher.
// For the frameworks of the open set's sources these come from the set's README and the frameworks'
// code, one entry per framework (known_source_stack), found from a row's source column
// (measured_open_framework.h), so a row of the same framework in another file runs the same stack. On top of that, what a row's own text states wins (stack_stated_in:
// the notes, optimizer_sharding and precision columns, read for the phrases the open set's rows use),
// so a row of a source the table does not know (a user's CSV, another published set) is not priced as
// a different stack than its notes state, and a row that states a feature its source's default lacks
// ("sequence_parallel=True" in InternLM's TP rows) runs with it.
#pragma once

#include <optional>
#include <string>

#include "model/spec.h"
#include "sim/analysis/measured_open_framework.h"
#include "sim/analysis/measured_open_reader.h"

namespace mofasim::analysis {

struct OpenStack {
  bool sequence_parallel = false;  // with tp > 1
  bool dp_overlap = false;         // gradient reduce overlapped with the backward
  model::KernelStack kernels = model::KernelStack::kMofaTable2;  // memory-bound kernels beyond MoFa Table 2
  model::MoeDispatcher dispatcher = model::MoeDispatcher::kAllToAll;  // MoE token dispatch
  model::AttentionImpl attention = model::AttentionImpl::kFused;      // flash / cuDNN fused by default
  bool zero_broadcast = false;     // its ZeRO-1 syncs parameters by owner broadcasts (DpParamSync::kBroadcast)
  bool interleaved_p2p_overlap = false;  // with pp > 1 and vpp > 1 its P2P sends overlap compute (pp_overlap)
  bool kernels_from_row = false;   // a known source whose kernel set its rows name (not read from its code)
  friend bool operator==(const OpenStack&, const OpenStack&) = default;
};

// The stack of a framework the table knows (measured_open_framework.h: read from a row's source
// column, so every row of that framework, in any file), or nothing for an unknown one.
std::optional<OpenStack> known_source_stack(SourceFramework framework);

// What a row's own text states about its stack (the phrases are in measured_open_stack.cc); a field
// the text does not mention stays empty.
struct StatedStack {
  std::optional<bool> sequence_parallel{};
  std::optional<bool> dp_overlap{};
  std::optional<bool> interleaved_p2p_overlap{};
  std::optional<model::KernelStack> kernels{};
  std::optional<model::AttentionImpl> attention{};
  std::optional<model::MoeDispatcher> dispatcher{};
};
StatedStack stack_stated_in(const OpenRun& run);

// The row's stack: its source's (known_source_stack, else the defaults of OpenStack) with what the row
// itself states on top, except the kernel set of a known source (read from that source's code).
OpenStack open_stack(const OpenRun& run);

}  // namespace mofasim::analysis
