# Analytic fault-tolerance model (MoFa §3.4): the failure/checkpoint inputs and eq. (36)-(44).
mofasim_library(NAME fault_model
  SRCS ${CMAKE_CURRENT_SOURCE_DIR}/fault_spec.cc
       ${CMAKE_CURRENT_SOURCE_DIR}/fault_analytic.cc
  DEPS mofasim::units)
