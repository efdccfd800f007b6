// PerfettoWriter: streams a Perfetto protobuf trace (a `perfetto.protos.Trace`, i.e. a sequence of
// length-delimited TracePacket field-1 records) to an ostream, one packet at a time, so memory
// stays bounded by the interning tables, never by the trace. proto/perfetto_trace.proto declares
// the messages it writes; this class encodes their wire format by hand because building one
// protobuf message per event costs more than the simulation on large runs.
//
// Everything goes on one packet sequence (trusted_packet_sequence_id 1). The first packet clears
// the sequence's incremental state; event names, categories and argument names are interned
// (InternedData is emitted in the packet that first uses a string, later packets carry its iid and
// set SEQ_NEEDS_INCREMENTAL_STATE). Slices are TYPE_SLICE_BEGIN / TYPE_SLICE_END pairs on a
// track; the caller keeps them nested per track (begin/end in time order, end before begin at the
// same instant).
#pragma once

#include <cstdint>
#include <ostream>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>

namespace mofasim::executor {

class PerfettoWriter {
 public:
  // One argument shown with a slice (a TrackEvent debug annotation): an unsigned integer or a double.
  struct Arg {
    std::string_view name;
    bool is_uint = false;
    std::uint64_t uint_value = 0;
    double double_value = 0;
  };

  explicit PerfettoWriter(std::ostream& out) : out_(out) {}
  PerfettoWriter(const PerfettoWriter&) = delete;
  PerfettoWriter& operator=(const PerfettoWriter&) = delete;

  // Track descriptors; each returns the new track's uuid (1, 2, ...). pid and tid must be unique.
  std::uint64_t process_track(int pid, std::string_view name);
  std::uint64_t thread_track(std::uint64_t process_uuid, int pid, std::int64_t tid, std::string_view name);
  std::uint64_t byte_counter_track(std::uint64_t parent_uuid, std::string_view name);
  // A counter track without a unit (a ratio; the name says what it counts).
  std::uint64_t counter_track(std::uint64_t parent_uuid, std::string_view name);

  // flow_out / flow_in: a flow id leaving this slice / ending at it (0: none).
  void begin(std::uint64_t track, std::int64_t ts_ns, std::string_view name, std::string_view category,
             std::span<const Arg> args = {}, std::uint64_t flow_out = 0, std::uint64_t flow_in = 0);
  void end(std::uint64_t track, std::int64_t ts_ns);
  void counter(std::uint64_t track, std::int64_t ts_ns, double value);

  // Writes what is buffered; throws std::runtime_error when the stream failed.
  void finish();
  [[nodiscard]] std::uint64_t bytes_written() const { return written_ + buf_.size(); }

 private:
  struct Hash {
    using is_transparent = void;
    std::size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
  };
  using Table = std::unordered_map<std::string, std::uint64_t, Hash, std::equal_to<>>;

  // Returns the iid of `s` in `table`; a new string is also appended to `interned_` as an entry of
  // InternedData field `field`.
  std::uint64_t intern(Table& table, int field, std::string_view s);
  std::uint64_t counter_track_with_unit(std::uint64_t parent_uuid, std::string_view name, std::uint64_t unit);
  void start_packet(bool needs_state);
  void emit_packet();
  std::uint64_t next_uuid() { return ++last_uuid_; }

  std::ostream& out_;
  std::string buf_;       // encoded packets not yet written
  std::string packet_;    // the packet being built (without its field-1 header)
  std::string event_;     // the TrackEvent being built
  std::string interned_;  // InternedData entries added by the current packet
  std::string scratch_;
  std::string arg_;       // one DebugAnnotation
  Table names_, categories_, arg_names_;
  std::uint64_t last_uuid_ = 0;
  std::uint64_t written_ = 0;
  bool first_packet_ = true;
};

}  // namespace mofasim::executor
