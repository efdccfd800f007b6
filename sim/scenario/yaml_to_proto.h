// The descriptor-driven YAML -> proto converter. It walks a YAML map against a message descriptor:
// keys are field names, scalars are parsed by field type (int32/int64/double/bool/string/enum via
// the (yaml) spelling), unit-carrying fields ((unit) option) need a string with a unit and are
// stored in base SI, repeated fields come from sequences and nested messages from maps. There is
// no per-field code: a field added to proto/scenario.proto is loadable at once.
//
// Errors (all collected, one line each): unknown key (did-you-mean, else the allowed keys),
// duplicate key, wrong YAML type, malformed or out-of-range number, NaN/inf, a negative number
// (no field of the schema may be negative), a bare number for a unit field, an unknown enum
// spelling. A field whose value is bad is left unset.
#pragma once

#include "proto/scenario.pb.h"
#include "sim/scenario/diagnostics.h"
#include "sim/scenario/yaml_source.h"

namespace mofasim::scenario {

// Fills `out` from source.root() and records in `sources` where every field it set was written
// (the value's position) and the document itself at line 1 ("" path).
void yaml_to_proto(const YamlSource& source, proto::Scenario& out, SourceMap& sources, Diagnostics& diagnostics);

}  // namespace mofasim::scenario
