// The replayed step as a Perfetto protobuf trace (`simulate --trace FILE.pftrace`, the default
// format), streamed through PerfettoWriter (perfetto_writer.h), so a 2,048-GPU step writes with
// bounded memory and opens in https://ui.perfetto.dev.
//
// Layout: one process per traced stage, its replica-0 rank (pid = rank + 1, "stage s (rank r)");
// in it one thread track per stream that has spans ("compute", "tp_comm", ...; tid = pid * 100 +
// stream + 1) and, on a receiving stage, one "pp_recv from stage p" track per sending stage (a
// PP transfer shows on its sender's pp_comm and on the receiver's pp_recv track, so no track has
// overlapping spans); one counter track "live activation bytes" per stage (the replay's dynamic
// memory on that rank: a task allocates at its start and frees at its end); and one process per
// node of a traced rank with a utilisation counter per link (perfetto_links.h). Each task instance is a
// SLICE_BEGIN / SLICE_END pair named like "F mb 3 attention" (trace_labels.h; few distinct names,
// so interning pays), category = its breakdown category, args task, chunk, work and layer. The critical path (analyze.h) is a chain of
// flows: each of its instances that the trace shows links to the next one shown (on its sender's
// track for a PP transfer).
#pragma once

#include <ostream>
#include <string>

#include "sim/executor/analyze.h"
#include "sim/executor/replay.h"
#include "sim/executor/trace_filter.h"
#include "sim/executor/workload.h"

namespace mofasim::executor {

// Throws std::invalid_argument when the filter names stages/ranks the step has not
// (trace_filter.h), std::runtime_error when the stream fails.
void write_perfetto_trace(std::ostream& out, const Workload& w, const ReplayOutput& r, const CriticalPath& path,
                          const TraceFilter& filter);

}  // namespace mofasim::executor
