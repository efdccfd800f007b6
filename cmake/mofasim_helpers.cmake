# Helpers shared by every folder's CMakeLists.txt.

# Warnings for the project's own targets (never for generated protobuf code). -Wnull-dereference
# is left out and -Wrestrict switched off: at -O2 g++ 12 reports both inside libstdc++'s own
# std::vector and std::string code (GCC bugs 105329, 105651), not in ours.
function(mofasim_warnings target)
  target_compile_options(${target} PRIVATE -Wall -Wextra -Wpedantic -Wshadow -Wnon-virtual-dtor
                                           -Wold-style-cast -Wcast-align -Wunused -Woverloaded-virtual
                                           -Wimplicit-fallthrough)
  if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU")
    target_compile_options(${target} PRIVATE -Wno-restrict)
  endif()
  if(MOFASIM_WERROR)
    target_compile_options(${target} PRIVATE -Werror)
  endif()
endfunction()

# mofasim_library(NAME name SRCS ... DEPS ... [PRIVATE_DEPS ...])
# Creates static library mofasim_<name> with alias mofasim::<name>; the repository root is the
# include root (#include "model/flops.h").
function(mofasim_library)
  cmake_parse_arguments(ARG "" "NAME" "SRCS;DEPS;PRIVATE_DEPS" ${ARGN})
  add_library(mofasim_${ARG_NAME} STATIC ${ARG_SRCS})
  add_library(mofasim::${ARG_NAME} ALIAS mofasim_${ARG_NAME})
  target_include_directories(mofasim_${ARG_NAME} PUBLIC ${PROJECT_SOURCE_DIR} ${PROJECT_BINARY_DIR})
  target_link_libraries(mofasim_${ARG_NAME} PUBLIC ${ARG_DEPS} PRIVATE ${ARG_PRIVATE_DEPS})
  mofasim_warnings(mofasim_${ARG_NAME})
  set_property(GLOBAL APPEND PROPERTY MOFASIM_LIBRARIES mofasim_${ARG_NAME})
endfunction()

# mofasim_add_test(name SRCS ... DEPS ...): one GoogleTest executable, discovered by ctest.
function(mofasim_add_test name)
  cmake_parse_arguments(ARG "" "" "SRCS;DEPS" ${ARGN})
  add_executable(${name} ${ARG_SRCS})
  target_link_libraries(${name} PRIVATE ${ARG_DEPS} GTest::gtest_main GTest::gmock)
  target_include_directories(${name} PRIVATE ${PROJECT_SOURCE_DIR} ${PROJECT_BINARY_DIR})
  target_compile_definitions(${name} PRIVATE MOFASIM_SOURCE_DIR="${PROJECT_SOURCE_DIR}"
                                             MOFASIM_BINARY_DIR="${PROJECT_BINARY_DIR}")
  mofasim_warnings(${name})
  gtest_discover_tests(${name} DISCOVERY_TIMEOUT 60 PROPERTIES TIMEOUT 300)
endfunction()

# mofasim_add_benchmark(name SRCS ... DEPS ...): a Google Benchmark program (not run by ctest).
function(mofasim_add_benchmark name)
  if(NOT MOFASIM_BUILD_BENCHMARKS)
    return()
  endif()
  cmake_parse_arguments(ARG "" "" "SRCS;DEPS" ${ARGN})
  add_executable(${name} ${ARG_SRCS})
  target_link_libraries(${name} PRIVATE ${ARG_DEPS} benchmark::benchmark)
  target_include_directories(${name} PRIVATE ${PROJECT_SOURCE_DIR} ${PROJECT_BINARY_DIR})
  mofasim_warnings(${name})
endfunction()

# model/, schedules/ and topology/ know nothing of sim/ (design.md): fail the configure step if one
# of their libraries links anything but units, proto or third-party targets.
function(mofasim_check_layering)
  set(allowed mofasim::units mofasim_units mofasim::proto mofasim_proto mofasim::model mofasim_model
              mofasim::schedules mofasim_schedules mofasim::topology mofasim_topology
              mofasim::rank_plan mofasim_rank_plan)
  get_property(libs GLOBAL PROPERTY MOFASIM_LIBRARIES)
  foreach(lib IN LISTS libs)
    get_target_property(dir ${lib} SOURCE_DIR)
    file(RELATIVE_PATH rel ${PROJECT_SOURCE_DIR} ${dir})
    if(rel MATCHES "^(model|schedules|topology)")
      get_target_property(deps ${lib} LINK_LIBRARIES)
      foreach(dep IN LISTS deps)
        if(dep MATCHES "^mofasim" AND NOT dep IN_LIST allowed)
          message(FATAL_ERROR "layering: ${lib} (${rel}/) links ${dep}; model/, schedules/ and "
                              "topology/ may link only units, proto and each other")
        endif()
      endforeach()
    endif()
  endforeach()
endfunction()
