# Tests of the architecture part of model/ (parameters, FLOPs, op table, compute time, memory).
mofasim_add_test(model_arch_test
  SRCS
    ${CMAKE_CURRENT_SOURCE_DIR}/params_test.cc
    ${CMAKE_CURRENT_SOURCE_DIR}/flops_test.cc
    ${CMAKE_CURRENT_SOURCE_DIR}/op_table_test.cc
    ${CMAKE_CURRENT_SOURCE_DIR}/compute_time_test.cc
    ${CMAKE_CURRENT_SOURCE_DIR}/activation_reference_test.cc
    ${CMAKE_CURRENT_SOURCE_DIR}/memory_test.cc
    ${CMAKE_CURRENT_SOURCE_DIR}/recompute_modules_test.cc
  DEPS mofasim::model)
mofasim_add_benchmark(model_arch_bench
  SRCS ${CMAKE_CURRENT_SOURCE_DIR}/model_arch_bench.cc
  DEPS mofasim::model)
