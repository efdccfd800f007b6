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

}  // namespace mofasim::analysis
