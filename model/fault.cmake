# Analytic fault-tolerance model (MoFa §3.4): the failure/checkpoint inputs and
# MoFa(36) MoFa(37) MoFa(38) MoFa(39) MoFa(40) MoFa(41) MoFa(42) MoFa(43) MoFa(44).
mofasim_library(NAME fault_model
  SRCS ${CMAKE_CURRENT_SOURCE_DIR}/fault_spec.cc
       ${CMAKE_CURRENT_SOURCE_DIR}/fault_analytic.cc
  DEPS mofasim::units)
