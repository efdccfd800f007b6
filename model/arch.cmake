# The architecture part of model/: shapes and parameters, FLOPs, the per-op cost table,
# compute-time models and the memory model. Pure functions of the specs in model/spec.h.
mofasim_library(NAME model
  SRCS
    ${CMAKE_CURRENT_SOURCE_DIR}/shape.cc
    ${CMAKE_CURRENT_SOURCE_DIR}/stage_layout.cc
    ${CMAKE_CURRENT_SOURCE_DIR}/params.cc
    ${CMAKE_CURRENT_SOURCE_DIR}/flops.cc
    ${CMAKE_CURRENT_SOURCE_DIR}/op_table.cc
    ${CMAKE_CURRENT_SOURCE_DIR}/op_names.cc
    ${CMAKE_CURRENT_SOURCE_DIR}/attention_window.cc
    ${CMAKE_CURRENT_SOURCE_DIR}/moe_dispatch.cc
    ${CMAKE_CURRENT_SOURCE_DIR}/moe_deepep.cc
    ${CMAKE_CURRENT_SOURCE_DIR}/stack_kernels.cc
    ${CMAKE_CURRENT_SOURCE_DIR}/kernels/gemm_cost.cc
    ${CMAKE_CURRENT_SOURCE_DIR}/kernels/attention_cost.cc
    ${CMAKE_CURRENT_SOURCE_DIR}/compute_time.cc
    ${CMAKE_CURRENT_SOURCE_DIR}/activation_reference.cc
    ${CMAKE_CURRENT_SOURCE_DIR}/memory.cc
    ${CMAKE_CURRENT_SOURCE_DIR}/memory_walk.cc
    ${CMAKE_CURRENT_SOURCE_DIR}/memory_reserve.cc
    ${CMAKE_CURRENT_SOURCE_DIR}/recompute_modules.cc
    ${CMAKE_CURRENT_SOURCE_DIR}/checkpoint_shard.cc
  DEPS mofasim::units)
