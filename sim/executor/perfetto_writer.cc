// PerfettoWriter: hand-encoded protobuf wire format (varints, fixed64, length-delimited fields).
#include "sim/executor/perfetto_writer.h"

#include <bit>
#include <stdexcept>

namespace mofasim::executor {
namespace {

// Field numbers of proto/perfetto_trace.proto (Perfetto's own numbers).
enum : int {
  kTracePacket = 1,
  kTimestamp = 8,
  kSequenceId = 10,
  kTrackEvent = 11,
  kInternedData = 12,
  kSequenceFlags = 13,
  kTrackDescriptor = 60,
  kFirstPacketOnSequence = 87,
  // TrackEvent
  kCategoryIids = 3,
  kDebugAnnotations = 4,
  kType = 9,
  kNameIid = 10,
  kTrackUuid = 11,
  kDoubleCounterValue = 44,
  kFlowIds = 47,
  kTerminatingFlowIds = 48,
  // InternedData
  kEventCategories = 1,
  kEventNames = 2,
  kDebugAnnotationNames = 3,
  // DebugAnnotation
  kArgNameIid = 1,
  kArgUint = 3,
  kArgDouble = 5,
  // TrackDescriptor
  kUuid = 1,
  kTrackName = 2,
  kProcess = 3,
  kThread = 4,
  kParentUuid = 5,
  kCounter = 8,
  // ProcessDescriptor / ThreadDescriptor / CounterDescriptor
  kPid = 1,
  kProcessName = 6,
  kTid = 2,
  kThreadName = 5,
  kUnit = 3,
};
constexpr std::uint64_t kSliceBegin = 1;
constexpr std::uint64_t kSliceEnd = 2;
constexpr std::uint64_t kCounterEvent = 4;
constexpr std::uint64_t kStateCleared = 1;  // SequenceFlags
constexpr std::uint64_t kNeedsState = 2;
constexpr std::uint64_t kUnitSizeBytes = 3;
constexpr std::uint64_t kSequence = 1;
constexpr std::size_t kFlushBytes = 1 << 20;

enum WireType : std::uint32_t { kVarint = 0, kFixed64 = 1, kLengthDelimited = 2 };

void put_varint(std::string& s, std::uint64_t v) {
  while (v >= 0x80) {
    s.push_back(static_cast<char>((v & 0x7f) | 0x80));
    v >>= 7;
  }
  s.push_back(static_cast<char>(v));
}
void put_tag(std::string& s, int field, WireType type) {
  put_varint(s, (static_cast<std::uint64_t>(field) << 3) | type);
}
void put_uint(std::string& s, int field, std::uint64_t v) {
  put_tag(s, field, kVarint);
  put_varint(s, v);
}
void put_fixed64(std::string& s, int field, std::uint64_t v) {
  put_tag(s, field, kFixed64);
  for (int i = 0; i < 8; ++i) s.push_back(static_cast<char>((v >> (8 * i)) & 0xff));
}
void put_double(std::string& s, int field, double v) { put_fixed64(s, field, std::bit_cast<std::uint64_t>(v)); }
void put_bytes(std::string& s, int field, std::string_view bytes) {
  put_tag(s, field, kLengthDelimited);
  put_varint(s, bytes.size());
  s.append(bytes);
}
// Two's complement, as protobuf encodes int32/int64 varints.
std::uint64_t as_varint(std::int64_t v) { return static_cast<std::uint64_t>(v); }

}  // namespace

std::uint64_t PerfettoWriter::intern(Table& table, int field, std::string_view s) {
  if (const auto it = table.find(s); it != table.end()) return it->second;
  const std::uint64_t iid = table.size() + 1;  // iid 0 means "not set"
  table.emplace(std::string(s), iid);
  scratch_.clear();
  put_uint(scratch_, 1, iid);
  put_bytes(scratch_, 2, s);
  put_bytes(interned_, field, scratch_);
  return iid;
}

void PerfettoWriter::start_packet(bool needs_state) {
  packet_.clear();
  put_uint(packet_, kSequenceId, kSequence);
  std::uint64_t flags = needs_state ? kNeedsState : 0;
  if (first_packet_) {
    flags |= kStateCleared;
    put_uint(packet_, kFirstPacketOnSequence, 1);
    first_packet_ = false;
  }
  if (flags != 0) put_uint(packet_, kSequenceFlags, flags);
}

void PerfettoWriter::emit_packet() {
  put_tag(buf_, kTracePacket, kLengthDelimited);
  put_varint(buf_, packet_.size());
  buf_.append(packet_);
  if (buf_.size() >= kFlushBytes) {
    out_.write(buf_.data(), static_cast<std::streamsize>(buf_.size()));
    written_ += buf_.size();
    buf_.clear();
  }
}

std::uint64_t PerfettoWriter::process_track(int pid, std::string_view name) {
  const std::uint64_t uuid = next_uuid();
  start_packet(false);
  scratch_.clear();
  put_uint(scratch_, kPid, as_varint(pid));
  put_bytes(scratch_, kProcessName, name);
  event_.clear();
  put_uint(event_, kUuid, uuid);
  put_bytes(event_, kProcess, scratch_);
  put_bytes(packet_, kTrackDescriptor, event_);
  emit_packet();
  return uuid;
}

std::uint64_t PerfettoWriter::thread_track(std::uint64_t process_uuid, int pid, std::int64_t tid,
                                           std::string_view name) {
  const std::uint64_t uuid = next_uuid();
  start_packet(false);
  scratch_.clear();
  put_uint(scratch_, kPid, as_varint(pid));
  put_uint(scratch_, kTid, as_varint(tid));
  put_bytes(scratch_, kThreadName, name);
  event_.clear();
  put_uint(event_, kUuid, uuid);
  put_uint(event_, kParentUuid, process_uuid);
  put_bytes(event_, kThread, scratch_);
  put_bytes(packet_, kTrackDescriptor, event_);
  emit_packet();
  return uuid;
}

std::uint64_t PerfettoWriter::byte_counter_track(std::uint64_t parent_uuid, std::string_view name) {
  return counter_track_with_unit(parent_uuid, name, kUnitSizeBytes);
}

std::uint64_t PerfettoWriter::counter_track(std::uint64_t parent_uuid, std::string_view name) {
  return counter_track_with_unit(parent_uuid, name, 0);
}

std::uint64_t PerfettoWriter::counter_track_with_unit(std::uint64_t parent_uuid, std::string_view name,
                                                      std::uint64_t unit) {
  const std::uint64_t uuid = next_uuid();
  start_packet(false);
  scratch_.clear();
  if (unit != 0) put_uint(scratch_, kUnit, unit);  // an empty CounterDescriptor still marks a counter
  event_.clear();
  put_uint(event_, kUuid, uuid);
  put_bytes(event_, kTrackName, name);
  put_uint(event_, kParentUuid, parent_uuid);
  put_bytes(event_, kCounter, scratch_);
  put_bytes(packet_, kTrackDescriptor, event_);
  emit_packet();
  return uuid;
}

void PerfettoWriter::begin(std::uint64_t track, std::int64_t ts_ns, std::string_view name,
                           std::string_view category, std::span<const Arg> args, std::uint64_t flow_out,
                           std::uint64_t flow_in) {
  interned_.clear();
  event_.clear();
  put_uint(event_, kCategoryIids, intern(categories_, kEventCategories, category));
  for (const Arg& a : args) {
    arg_.clear();
    put_uint(arg_, kArgNameIid, intern(arg_names_, kDebugAnnotationNames, a.name));
    if (a.is_uint) {
      put_uint(arg_, kArgUint, a.uint_value);
    } else {
      put_double(arg_, kArgDouble, a.double_value);
    }
    put_bytes(event_, kDebugAnnotations, arg_);
  }
  put_uint(event_, kType, kSliceBegin);
  put_uint(event_, kNameIid, intern(names_, kEventNames, name));
  put_uint(event_, kTrackUuid, track);
  if (flow_out != 0) put_fixed64(event_, kFlowIds, flow_out);
  if (flow_in != 0) put_fixed64(event_, kTerminatingFlowIds, flow_in);

  start_packet(true);
  put_uint(packet_, kTimestamp, as_varint(ts_ns));
  if (!interned_.empty()) put_bytes(packet_, kInternedData, interned_);
  put_bytes(packet_, kTrackEvent, event_);
  emit_packet();
}

void PerfettoWriter::end(std::uint64_t track, std::int64_t ts_ns) {
  event_.clear();
  put_uint(event_, kType, kSliceEnd);
  put_uint(event_, kTrackUuid, track);
  start_packet(false);
  put_uint(packet_, kTimestamp, as_varint(ts_ns));
  put_bytes(packet_, kTrackEvent, event_);
  emit_packet();
}

void PerfettoWriter::counter(std::uint64_t track, std::int64_t ts_ns, double value) {
  event_.clear();
  put_uint(event_, kType, kCounterEvent);
  put_uint(event_, kTrackUuid, track);
  put_double(event_, kDoubleCounterValue, value);
  start_packet(false);
  put_uint(packet_, kTimestamp, as_varint(ts_ns));
  put_bytes(packet_, kTrackEvent, event_);
  emit_packet();
}

void PerfettoWriter::finish() {
  out_.write(buf_.data(), static_cast<std::streamsize>(buf_.size()));
  written_ += buf_.size();
  buf_.clear();
  out_.flush();
  if (!out_) throw std::runtime_error("failed writing the Perfetto trace");
}

}  // namespace mofasim::executor
