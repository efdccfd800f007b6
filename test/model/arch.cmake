# Tests of the architecture part of model/ (parameters, FLOPs, op table, compute time, memory).
mofasim_add_test(model_arch_test
  SRCS
    ${CMAKE_CURRENT_SOURCE_DIR}/params_test.cc
    ${CMAKE_CURRENT_SOURCE_DIR}/flops_test.cc
    ${CMAKE_CURRENT_SOURCE_DIR}/op_table_test.cc
    ${CMAKE_CURRENT_SOURCE_DIR}/moe_dispatch_test.cc
    ${CMAKE_CURRENT_SOURCE_DIR}/moe_expert_tp_test.cc
    ${CMAKE_CURRENT_SOURCE_DIR}/moe_flex_expert_tp_test.cc
    ${CMAKE_CURRENT_SOURCE_DIR}/moe_deepep_test.cc
    ${CMAKE_CURRENT_SOURCE_DIR}/compute_time_test.cc
    ${CMAKE_CURRENT_SOURCE_DIR}/fp8_precision_test.cc
    ${CMAKE_CURRENT_SOURCE_DIR}/kernel_cost_test.cc
    ${CMAKE_CURRENT_SOURCE_DIR}/stack_kernels_test.cc
    ${CMAKE_CURRENT_SOURCE_DIR}/activation_reference_test.cc
    ${CMAKE_CURRENT_SOURCE_DIR}/memory_test.cc
    ${CMAKE_CURRENT_SOURCE_DIR}/memory_walk_test.cc
    ${CMAKE_CURRENT_SOURCE_DIR}/memory_reserve_test.cc
    ${CMAKE_CURRENT_SOURCE_DIR}/recompute_modules_test.cc
    ${CMAKE_CURRENT_SOURCE_DIR}/activation_storage_test.cc
    ${CMAKE_CURRENT_SOURCE_DIR}/attention_window_test.cc
    ${CMAKE_CURRENT_SOURCE_DIR}/moe_layer_pattern_test.cc
  DEPS mofasim::model)
mofasim_add_benchmark(model_arch_bench
  SRCS ${CMAKE_CURRENT_SOURCE_DIR}/model_arch_bench.cc
  DEPS mofasim::model)
# Tool (not a test): the GEMM model against a per-shape measurement table given on the command line.
add_executable(gemm_shape_report ${CMAKE_CURRENT_SOURCE_DIR}/gemm_shape_report.cc)
target_link_libraries(gemm_shape_report PRIVATE mofasim::scenario mofasim::model)
target_include_directories(gemm_shape_report PRIVATE ${PROJECT_SOURCE_DIR} ${PROJECT_BINARY_DIR})
mofasim_warnings(gemm_shape_report)
# Tool (not a test): the vTrain rows under compute_model kernel (files given on the command line).
add_executable(vtrain_kernel_report ${CMAKE_CURRENT_SOURCE_DIR}/vtrain_kernel_report.cc)
target_link_libraries(vtrain_kernel_report PRIVATE mofasim::measured)
target_include_directories(vtrain_kernel_report PRIVATE ${PROJECT_SOURCE_DIR} ${PROJECT_BINARY_DIR})
mofasim_warnings(vtrain_kernel_report)
# The shipped GPU presets' kernel-model numbers, loaded through the scenario loader.
mofasim_add_test(model_hardware_presets_test
  SRCS ${CMAKE_CURRENT_SOURCE_DIR}/hardware_presets_test.cc
  DEPS mofasim::scenario mofasim::model)
