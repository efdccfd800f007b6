// MPI rank discovery and gathering (see mpi_world.h). The only file that includes <mpi.h>.
#include "sim/cli/mpi_world.h"

#include <cstdlib>
#include <string>

#include "sim/cli/cli_common.h"

#ifdef MOFASIM_WITH_MPI
#include <mpi.h>
#endif

namespace mofasim::cli {
namespace {

// The number of ranks mpirun (Open MPI, or a PMI launcher such as srun) says it started; 1 if none.
int launched_ranks() {
  for (const char* name : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_SIZE"}) {
    if (const char* v = std::getenv(name)) {
      const int n = std::atoi(v);
      if (n > 0) return n;
    }
  }
  return 1;
}

}  // namespace

#ifdef MOFASIM_WITH_MPI

MpiWorld mpi_world() {
  static const MpiWorld world = [] {
    if (launched_ranks() <= 1) return MpiWorld{};
    MPI_Init(nullptr, nullptr);
    std::atexit([] { MPI_Finalize(); });
    MpiWorld w;
    MPI_Comm_rank(MPI_COMM_WORLD, &w.rank);
    MPI_Comm_size(MPI_COMM_WORLD, &w.size);
    return w;
  }();
  return world;
}

std::vector<std::string> gather_on_root(const std::string& text) {
  const MpiWorld world = mpi_world();
  if (world.size == 1) return {text};
  int length = static_cast<int>(text.size());
  std::vector<int> lengths(static_cast<std::size_t>(world.size));
  MPI_Gather(&length, 1, MPI_INT, lengths.data(), 1, MPI_INT, 0, MPI_COMM_WORLD);
  std::vector<int> offsets(lengths.size(), 0);
  std::string all;
  if (world.rank == 0) {
    for (std::size_t r = 1; r < lengths.size(); ++r) offsets[r] = offsets[r - 1] + lengths[r - 1];
    all.resize(static_cast<std::size_t>(offsets.back() + lengths.back()));
  }
  MPI_Gatherv(text.data(), length, MPI_CHAR, all.data(), lengths.data(), offsets.data(), MPI_CHAR, 0, MPI_COMM_WORLD);
  if (world.rank != 0) return {};
  std::vector<std::string> out;
  for (std::size_t r = 0; r < lengths.size(); ++r) {
    out.push_back(all.substr(static_cast<std::size_t>(offsets[r]), static_cast<std::size_t>(lengths[r])));
  }
  return out;
}

std::vector<std::string> all_gather(const std::string& text) {
  const MpiWorld world = mpi_world();
  if (world.size == 1) return {text};
  int length = static_cast<int>(text.size());
  std::vector<int> lengths(static_cast<std::size_t>(world.size));
  MPI_Allgather(&length, 1, MPI_INT, lengths.data(), 1, MPI_INT, MPI_COMM_WORLD);
  std::vector<int> offsets(lengths.size(), 0);
  for (std::size_t r = 1; r < lengths.size(); ++r) offsets[r] = offsets[r - 1] + lengths[r - 1];
  std::string all(static_cast<std::size_t>(offsets.back() + lengths.back()), '\0');
  MPI_Allgatherv(text.data(), length, MPI_CHAR, all.data(), lengths.data(), offsets.data(), MPI_CHAR, MPI_COMM_WORLD);
  std::vector<std::string> out;
  for (std::size_t r = 0; r < lengths.size(); ++r) {
    out.push_back(all.substr(static_cast<std::size_t>(offsets[r]), static_cast<std::size_t>(lengths[r])));
  }
  return out;
}

#else

MpiWorld mpi_world() {
  const int n = launched_ranks();
  if (n > 1) {
    throw UsageError("mofasim: launched on " + std::to_string(n) +
                     " MPI ranks, but this build has no MPI (configure with Open MPI installed, MOFASIM_WITH_MPI=ON)");
  }
  return {};
}

std::vector<std::string> gather_on_root(const std::string& text) { return {text}; }
std::vector<std::string> all_gather(const std::string& text) { return {text}; }

#endif

}  // namespace mofasim::cli
