// The training framework a measured row comes from, read from the row's `source` column (the
// repository or results set it cites), so that what is known about a framework (its stack, its
// uneven pipeline split, its pipeline schedule per local batch) applies to every row of it: the
// open set's own rows and rows of the same frameworks in another file (another MLPerf round, another
// system's table of the same performance summary), whatever their ids. A source column that names no
// known framework falls back to the id's group when that is one of the open set's sources ("O-ILM"),
// whose README names their frameworks; otherwise the framework is unknown and only the row's own
// text says what its stack runs (measured_open_stack.h).
#pragma once

#include <string>

#include "sim/analysis/measured_open_reader.h"

namespace mofasim::analysis {

enum class SourceFramework {
  kUnknown,
  kSimuMaxMegatron,   // MooreThreads/SimuMax's Megatron-LM launchers (O-SMXB, O-SMXA)
  kInternEvo,         // InternLM / InternEvo (O-ILM)
  kFlashAttentionGpt, // Dao-AILab/flash-attention's training/ GPT scripts (O-FA)
  kNvidiaMegatron,    // NVIDIA's Megatron-Core + TE recipes: NeMo, Megatron-Bridge, MLPerf (O-MBR, O-MLP)
  kAutomodel,         // NVIDIA-NeMo/Automodel (O-AM)
  kMegatronLlama,     // alibaba/Megatron-LLaMA (O-MLL)
  kTorchtitan,        // pytorch/torchtitan (O-TT)
};

// The framework the row's source column names, else the one of its id's open-set group.
SourceFramework source_framework(const OpenRun& run);

}  // namespace mofasim::analysis
