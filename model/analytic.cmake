# The analytic MoFa step model: layer, pipeline and optimizer closed forms over the per-op table,
# the schedules' bubble formulas and the topology's collective costs.
mofasim_library(NAME analytic
  SRCS
    ${CMAKE_CURRENT_SOURCE_DIR}/analytic_overlap.cc
    ${CMAKE_CURRENT_SOURCE_DIR}/analytic_dp_buckets.cc
    ${CMAKE_CURRENT_SOURCE_DIR}/analytic_layer_time.cc
    ${CMAKE_CURRENT_SOURCE_DIR}/analytic_pipeline.cc
    ${CMAKE_CURRENT_SOURCE_DIR}/analytic_model.cc
  DEPS mofasim::rank_plan mofasim::model mofasim::schedules mofasim::topology mofasim::units)
