# The priced per-rank plan both step models consume: op tables per block type, chunks per rank,
# DP traffic and optimizer work per rank, priced on rank 0's groups when a topology is given.
mofasim_library(NAME rank_plan
  SRCS
    ${CMAKE_CURRENT_SOURCE_DIR}/rank_plan.cc
    ${CMAKE_CURRENT_SOURCE_DIR}/rank_plan_groups.cc
    ${CMAKE_CURRENT_SOURCE_DIR}/zero_broadcast.cc
  DEPS mofasim::model mofasim::schedules mofasim::topology mofasim::units)
