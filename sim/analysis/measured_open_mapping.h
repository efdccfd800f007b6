// From an open-set row to the specs the step models consume, or to the reasons the schema cannot
// express it yet. Nothing is approximated: a row whose GPU has no hardware preset, whose precision
// is FP8, whose optimizer shards parameters (FSDP / ZeRO-3), whose recompute text names a policy
// the schema lacks, whose model family or interconnect is not recognised, or whose FLOP convention
// is not stated is listed with every reason that applies and not predicted.
//
// The readings, all in measured_open_mapping.cc with their sources:
//   gpu          -> hardware preset (shipped presets as they are, no per-row knobs) and NVLink class
//   interconnect -> topology: intra-node bus bandwidth by NVLink class (or PCIe), inter-node line rate
//                   per node from the text ("4x 100 Gb RoCE per node", "400 Gb/s per GPU"), a
//                   72-GPU NVLink domain as a supernode
//   model        -> architecture family (GPT-style, Llama-style, DeepSeek MLA, Qwen3 MoE)
//   recompute / precision / optimizer_sharding -> FeatureSpec fields
//   the id's source group and the row's own text -> its training stack (measured_open_stack.h)
// and the declared fit/test split by source (open_split).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "sim/analysis/measured_open_reader.h"
#include "sim/analysis/measured_specs.h"

namespace mofasim::analysis {

struct OpenCase {
  std::optional<MeasuredCase> spec{};   // set exactly when reasons is empty
  std::vector<std::string> reasons{};   // why the schema cannot express the row (one line each)
  std::string gpu_family{};             // "A100-SXM4-80GB", "B200", ... (the row's text when unknown)
  std::string split{};                  // open_split(source group)
  model::RecomputeKind recompute = model::RecomputeKind::kNone;  // as read (for FLOP conventions)
  // Pipeline flushes per optimizer step: spec's global batch is the row's / this, and the row's
  // step is repeat_pipeline_flushes of spec's (measured_open_split.h; AutoModel with pp > 1).
  int pipeline_flushes = 1;
};

// The row's case, or its reasons. Never throws for a row parse_open_runs_csv accepted.
OpenCase map_open_run(const OpenRun& run);

// Bytes/s one node gets across its NICs, from an interconnect text, or nothing when it gives no
// rate. Reads "<n>x ... <r> Gb" (n NICs of r Gb/s per node, e.g. "4x 100 Gb RoCE per node",
// "8x ConnectX-7 IB NDR 400 Gb/s per node", up to four words between) or "<r> Gb/s per GPU"
// (times gpus_per_node). Line rate: no efficiency factor is applied.
std::optional<double> open_inter_node_bytes_per_node(const std::string& text, int gpus_per_node);

// Bytes/s one node of `gpus_per_node` GPUs gets on the compute fabric of a system the text names by
// product ("OCI BM.GPU.H100.8", "Azure ND H100 v5", "AWS p5.48xlarge", "DGX H100", "DGX GB200",
// "GB300 NVL72", ...), from its data sheet; nothing for a text that names none or whose node is
// not that product's (8 GPUs, or a rack-scale tray's 4). Used only where the interconnect text
// gives no rate.
std::optional<double> named_system_bytes_per_node(const std::string& text, int gpus_per_node);

// Nodes per NVLink domain (supernode) of a GB200 NVL72 run: gpus / N / gpus_per_node when the
// notes say "Nx NVL72" and that is a whole number of trays of at most 72 GPUs; else the GPUs spread
// evenly, in whole trays, over the fewest racks that hold them or up to twice that many (256 GPUs:
// 4 racks of 64; 144: 2 of 72; 1,024: 16 of 64), and 0 when no such count divides them.
int open_nvl72_nodes_per_domain(const std::string& notes, int gpus, int gpus_per_node);

// The declared split of the open set, by source (deterministic; docs/validation-measured.md):
// "fit" for the sources later model choices may be fitted on (the step-time sources the set's
// README §6 recommends for timing fits, O-SMXB, O-AM and O-MLP, and the InternLM scaling sweep
// O-ILM for communication), "test" for every other source (held out).
std::string open_split(const std::string& source_group);
const std::vector<std::string>& open_fit_sources();

}  // namespace mofasim::analysis
