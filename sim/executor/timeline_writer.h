// Timeline writer (the `--timeline FILE.pb` output): the replayed step as a proto::Timeline
// (proto/timeline.proto) in binary protobuf, for programs. It shows exactly what the Chrome trace
// (trace.h) shows — one span per task instance on the replica-0 rank of every stage, a PP transfer
// on both its sender and its receiver, the same integer-nanosecond times — plus the StepResult's
// numbers. Streams are laid out so that each runs one task at a time: the executor's streams of
// every stage, and on a receiving stage one PP_RECV stream per sending stage.
#pragma once

#include <string>
#include <string_view>

#include "proto/timeline.pb.h"
#include "sim/executor/replay.h"
#include "sim/executor/step_result.h"
#include "sim/executor/workload.h"

namespace mofasim::executor {

// `scenario` is the name recorded in the timeline (may be empty). Spans are sorted by
// (start_ns, process_id, stream_id, task).
proto::Timeline build_timeline(const Workload& w, const ReplayOutput& r, const StepResult& result,
                               std::string_view scenario);

// Writes build_timeline() to `path` with SerializeToOstream; throws std::runtime_error when the
// file cannot be written or the message exceeds protobuf's 2 GiB limit.
void write_timeline(const std::string& path, const Workload& w, const ReplayOutput& r, const StepResult& result,
                    std::string_view scenario);

}  // namespace mofasim::executor
