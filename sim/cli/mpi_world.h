// The MPI mode of the batch commands: `mpirun -n N mofasim tune|ettr|sweep|validate ...` splits
// the work over the ranks (rank r runs shard r/N) and gathers the shard documents on rank 0, which
// merges and prints exactly what a single process prints (calibrate spreads the points of every
// objective evaluation instead, all_gather). Built with MPI only when MOFASIM_WITH_MPI is ON
// (Open MPI found); otherwise a run launched by mpirun with more than one rank is refused.
#pragma once

#include <string>
#include <vector>

namespace mofasim::cli {

struct MpiWorld {
  int rank = 0;
  int size = 1;
};

// This process's rank and the number of ranks: {0, 1} unless launched by mpirun with several ranks
// (MPI is initialised on the first call and finalised at exit). Throws UsageError when launched
// with several ranks by a build without MPI.
MpiWorld mpi_world();

// Every rank's `text`, in rank order, on rank 0; an empty list on the other ranks. Collective: all
// ranks must call it. With one rank: {text}.
std::vector<std::string> gather_on_root(const std::string& text);

// Every rank's `text`, in rank order, on every rank. Collective. With one rank: {text}.
std::vector<std::string> all_gather(const std::string& text);

}  // namespace mofasim::cli
