// Test helper: reads a `.pftrace` written by simulate --trace with the vendored subset of
// Perfetto's protos (proto/perfetto_trace.proto) and rebuilds what a trace viewer would show:
// tracks, slices (BEGIN/END pairs matched per track), counter samples and flows, resolving
// interned names as the sequence defines them. Structural faults are collected in `faults`.
#pragma once

#include <cstdint>
#include <fstream>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "proto/perfetto_trace.pb.h"

namespace mofasim::executor::testing {

struct DecodedSlice {
  std::uint64_t track = 0;
  std::int64_t begin_ns = 0;
  std::int64_t end_ns = -1;
  std::string name;
  std::string category;
  std::map<std::string, double> args;  // uint and double annotations, by name
  std::vector<std::uint64_t> flow_out;
  std::vector<std::uint64_t> flow_in;
};

struct DecodedTrack {
  std::uint64_t parent = 0;
  std::string name;  // process_name, thread_name or the counter track's name
  int pid = 0;
  bool is_process = false;
  bool is_counter = false;
  int unit = 0;
};

struct DecodedTrace {
  std::map<std::uint64_t, DecodedTrack> tracks;
  std::vector<DecodedSlice> slices;
  std::map<std::uint64_t, std::vector<std::pair<std::int64_t, double>>> counters;  // by track
  std::vector<std::string> faults;
  bool cleared_first = false;  // the first packet clears the sequence's incremental state

  // The process track a track belongs to (itself for a process track).
  [[nodiscard]] std::uint64_t process_of(std::uint64_t track) const {
    const auto it = tracks.find(track);
    if (it == tracks.end()) return 0;
    return it->second.is_process ? track : process_of(it->second.parent);
  }
};

inline DecodedTrace decode_pftrace(const std::string& path) {
  DecodedTrace out;
  perfetto::Trace trace;
  std::ifstream f(path, std::ios::binary);
  if (!f || !trace.ParseFromIstream(&f)) {
    out.faults.push_back("cannot parse " + path + " as perfetto.protos.Trace");
    return out;
  }
  std::map<std::uint64_t, std::string> names, categories, arg_names;
  std::map<std::uint64_t, std::size_t> open;  // track -> open slice
  bool first = true;
  for (const perfetto::TracePacket& p : trace.packet()) {
    if (first) out.cleared_first = (p.sequence_flags() & perfetto::TracePacket::SEQ_INCREMENTAL_STATE_CLEARED) != 0;
    first = false;
    if (p.trusted_packet_sequence_id() != 1) out.faults.push_back("packet off sequence 1");
    for (const auto& e : p.interned_data().event_names()) names[e.iid()] = e.name();
    for (const auto& e : p.interned_data().event_categories()) categories[e.iid()] = e.name();
    for (const auto& e : p.interned_data().debug_annotation_names()) arg_names[e.iid()] = e.name();
    if (p.has_track_descriptor()) {
      const perfetto::TrackDescriptor& d = p.track_descriptor();
      DecodedTrack t;
      t.parent = d.parent_uuid();
      if (d.has_process()) {
        t.is_process = true;
        t.pid = d.process().pid();
        t.name = d.process().process_name();
      } else if (d.has_thread()) {
        t.pid = d.thread().pid();
        t.name = d.thread().thread_name();
      } else if (d.has_counter()) {
        t.is_counter = true;
        t.name = d.name();
        t.unit = d.counter().unit();
      }
      if (!out.tracks.emplace(d.uuid(), t).second) out.faults.push_back("track uuid used twice");
    }
    if (!p.has_track_event()) continue;
    const perfetto::TrackEvent& e = p.track_event();
    const auto ts = static_cast<std::int64_t>(p.timestamp());
    if (!out.tracks.contains(e.track_uuid())) out.faults.push_back("event before its track descriptor");
    switch (e.type()) {
      case perfetto::TrackEvent::TYPE_SLICE_BEGIN: {
        if (open.contains(e.track_uuid())) out.faults.push_back("BEGIN inside an open slice on one track");
        if ((p.sequence_flags() & perfetto::TracePacket::SEQ_NEEDS_INCREMENTAL_STATE) == 0) {
          out.faults.push_back("interned event without SEQ_NEEDS_INCREMENTAL_STATE");
        }
        DecodedSlice s;
        s.track = e.track_uuid();
        s.begin_ns = ts;
        if (!names.contains(e.name_iid())) out.faults.push_back("name iid not interned");
        s.name = names[e.name_iid()];
        for (std::uint64_t c : e.category_iids()) {
          if (!categories.contains(c)) out.faults.push_back("category iid not interned");
          s.category = categories[c];
        }
        for (const auto& a : e.debug_annotations()) {
          if (!arg_names.contains(a.name_iid())) out.faults.push_back("argument name iid not interned");
          s.args[arg_names[a.name_iid()]] = a.has_uint_value() ? static_cast<double>(a.uint_value()) : a.double_value();
        }
        s.flow_out.assign(e.flow_ids().begin(), e.flow_ids().end());
        s.flow_in.assign(e.terminating_flow_ids().begin(), e.terminating_flow_ids().end());
        // Slices on one track must not overlap: a new one starts at or after the last one ended.
        for (auto it = out.slices.rbegin(); it != out.slices.rend(); ++it) {
          if (it->track != s.track) continue;
          if (it->end_ns > ts) out.faults.push_back("overlapping slices on one track");
          break;
        }
        open[s.track] = out.slices.size();
        out.slices.push_back(s);
        break;
      }
      case perfetto::TrackEvent::TYPE_SLICE_END: {
        const auto it = open.find(e.track_uuid());
        if (it == open.end()) {
          out.faults.push_back("END without BEGIN");
          break;
        }
        if (ts < out.slices[it->second].begin_ns) out.faults.push_back("END before its BEGIN");
        out.slices[it->second].end_ns = ts;
        open.erase(it);
        break;
      }
      case perfetto::TrackEvent::TYPE_COUNTER:
        if (!out.tracks[e.track_uuid()].is_counter) out.faults.push_back("counter value on a non-counter track");
        out.counters[e.track_uuid()].emplace_back(ts, e.double_counter_value());
        break;
      default: out.faults.push_back("unexpected event type");
    }
  }
  if (!open.empty()) out.faults.push_back("slices left open at the end");
  return out;
}

}  // namespace mofasim::executor::testing
