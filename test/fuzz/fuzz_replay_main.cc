// A libFuzzer-free driver for scenario_loader_fuzz.cc (used when the compiler is not clang):
// runs every file of a seed corpus, then N pseudo-random mutations of them from a fixed seed, so
// a run is reproducible. Usage: scenario_loader_fuzz_replay CORPUS_DIR [MUTATIONS] [MAX_SECONDS].
// Exits non-zero only through a crash or an escaped exception (reported with the input).
#include <algorithm>
#include <array>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <exception>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <random>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size);

namespace {

// Fragments that steer mutations towards the loader's interesting paths.
constexpr std::array<std::string_view, 40> kTokens = {
    ": ", "\n", "- ", "{", "}", "[", "]", ",", "\"", "'", "&a ", "*a", "~", "---\n", "#set ",
    "-1", "0", "1e999", "nan", ".inf", "2147483648", "9223372036854775808", "1.5", "true",
    " GB/s", " Gb/s", " GiB", " us", " TFLOPS", "preset: ", "tiny-llama", "h100-sxm",
    "parallelism", "model", "tp", "stage_layers", "failure_classes", "moe", "=", "<<: ",
};

std::string mutate(const std::string& input, const std::vector<std::string>& corpus, std::mt19937_64& rng) {
  std::string s = input;
  const int steps = 1 + static_cast<int>(rng() % 4);
  for (int i = 0; i < steps; ++i) {
    const std::size_t at = s.empty() ? 0 : rng() % (s.size() + 1);
    switch (rng() % 6) {
      case 0:  // flip one byte
        if (!s.empty()) s[at % s.size()] = static_cast<char>(rng() % 256);
        break;
      case 1:  // insert a token
        s.insert(at, kTokens[rng() % kTokens.size()]);
        break;
      case 2: {  // delete a range
        const std::size_t n = std::min<std::size_t>(s.size() - std::min(at, s.size()), rng() % 16);
        s.erase(std::min(at, s.size()), n);
        break;
      }
      case 3: {  // duplicate a range
        if (s.empty()) break;
        const std::size_t from = rng() % s.size();
        const std::size_t n = std::min<std::size_t>(s.size() - from, rng() % 64);
        s.insert(at, s.substr(from, n));
        break;
      }
      case 4: {  // splice in part of another seed
        const std::string& other = corpus[rng() % corpus.size()];
        if (other.empty()) break;
        const std::size_t from = rng() % other.size();
        s.insert(at, other.substr(from, rng() % 128));
        break;
      }
      default: {  // replace a digit run by an extreme number
        const auto digit = s.find_first_of("0123456789", at);
        if (digit == std::string::npos) break;
        const auto end = s.find_first_not_of("0123456789.", digit);
        const std::array<std::string_view, 6> extremes = {"-3", "0", "1e400", "2147483647", "99999999999", "0.5"};
        s.replace(digit, (end == std::string::npos ? s.size() : end) - digit, extremes[rng() % extremes.size()]);
        break;
      }
    }
  }
  return s;
}

void run_one(const std::string& input) {
  try {
    LLVMFuzzerTestOneInput(reinterpret_cast<const std::uint8_t*>(input.data()), input.size());
  } catch (const std::exception& e) {
    std::cerr << "escaped exception: " << e.what() << "\n--- input ---\n" << input << "\n-------------\n";
    std::exit(1);
  }
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::cerr << "usage: " << argv[0] << " CORPUS_DIR [MUTATIONS] [MAX_SECONDS]\n";
    return 2;
  }
  const long mutations = argc > 2 ? std::atol(argv[2]) : 20000;
  const double max_seconds = argc > 3 ? std::atof(argv[3]) : 25.0;
  std::vector<std::filesystem::path> files;
  for (const auto& entry : std::filesystem::directory_iterator(argv[1])) {
    if (entry.is_regular_file()) files.push_back(entry.path());
  }
  std::sort(files.begin(), files.end());
  std::vector<std::string> corpus;
  for (const auto& file : files) {
    std::ifstream in(file, std::ios::binary);
    std::stringstream text;
    text << in.rdbuf();
    corpus.push_back(text.str());
  }
  if (corpus.empty()) {
    std::cerr << "empty corpus " << argv[1] << "\n";
    return 2;
  }
  for (const auto& seed : corpus) run_one(seed);
  std::mt19937_64 rng(0x5eed2024);  // fixed: every run tries the same inputs
  const auto start = std::chrono::steady_clock::now();
  long done = 0;
  for (; done < mutations; ++done) {
    run_one(mutate(corpus[rng() % corpus.size()], corpus, rng));
    if (done % 256 == 0 &&
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() > max_seconds) {
      break;
    }
  }
  std::cout << "ran " << corpus.size() << " seeds and " << done << " mutations without a crash\n";
  return 0;
}
