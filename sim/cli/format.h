// Human-readable number formatting shared by the commands' tables.
#pragma once

#include <string>

namespace mofasim::cli {

std::string format_bytes(double bytes);        // "63.42 GiB"
std::string format_seconds(double seconds);    // "27.83 s", "1.52 ms", "3.1 d"
std::string format_count(double value);        // "68.98 B", "1.80e18" style
std::string format_fixed(double value, int decimals);

}  // namespace mofasim::cli
