// Case-insensitive word search in a measured row's free-text columns (model, gpu, source, notes, ...):
// the one matcher the open-set mapping, its stack reader and its framework reader share.
#pragma once

#include <initializer_list>
#include <string>

namespace mofasim::analysis {

std::string lower(std::string s);

// Whether `text` contains `needle`, ignoring case.
bool has(const std::string& text, const std::string& needle);

// Whether `text` contains any of `needles`, ignoring case.
bool has_any(const std::string& text, std::initializer_list<const char*> needles);

// Whether an optimizer-sharding text names FSDP ("FSDP2", "fully_shard", Megatron-Bridge's "FSDP=1")
// and does not switch it off ("FSDP=0", "fsdp: false").
bool names_fsdp_on(const std::string& text);

}  // namespace mofasim::analysis
