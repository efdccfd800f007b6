# Builds and runs the scenario loader's tests under AddressSanitizer + UndefinedBehaviorSanitizer
# in a sub-build (run by the `sanitize` ctest test, test/sanitize/CMakeLists.txt). Only the
# loader library, its tests (with the bad-input catalogue) and the fuzz driver are built, so the
# whole run stays within a few minutes on two cores. Any sanitizer report fails the run.
#
# cmake -DSOURCE_DIR=... -DBINARY_DIR=... -DCXX=... [-DLAUNCHER=ccache] -DFUZZ_TARGET=... -P run_sanitize_build.cmake
foreach(var SOURCE_DIR BINARY_DIR CXX FUZZ_TARGET)
  if(NOT DEFINED ${var})
    message(FATAL_ERROR "run_sanitize_build.cmake: ${var} is required")
  endif()
endforeach()

set(flags "-fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer -O1 -g")
set(configure ${CMAKE_COMMAND} -S ${SOURCE_DIR} -B ${BINARY_DIR} -DCMAKE_BUILD_TYPE=Sanitize
    -DCMAKE_CXX_COMPILER=${CXX} "-DCMAKE_CXX_FLAGS=${flags}" -DMOFASIM_BUILD_BENCHMARKS=OFF
    -DMOFASIM_SANITIZE_TEST=OFF -DMOFASIM_WERROR=OFF)
if(LAUNCHER)
  list(APPEND configure -DCMAKE_CXX_COMPILER_LAUNCHER=${LAUNCHER})
endif()

function(step name)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "sanitize: ${name} failed (${rc})")
  endif()
endfunction()

step(configure ${configure} -Wno-dev)
step(build ${CMAKE_COMMAND} --build ${BINARY_DIR} -j2 --target scenario_test ${FUZZ_TARGET})
set(env ${CMAKE_COMMAND} -E env "ASAN_OPTIONS=detect_leaks=1:abort_on_error=0:detect_stack_use_after_return=1"
    "UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1")
step(scenario_test ${env} ${BINARY_DIR}/test/scenario/scenario_test --gtest_brief=1)
if(FUZZ_TARGET STREQUAL "scenario_loader_fuzz")  # libFuzzer under clang
  step(fuzz ${env} ${BINARY_DIR}/test/fuzz/scenario_loader_fuzz -runs=20000 -timeout=5 ${SOURCE_DIR}/test/fuzz/corpus)
else()
  step(fuzz ${env} ${BINARY_DIR}/test/fuzz/scenario_loader_fuzz_replay ${SOURCE_DIR}/test/fuzz/corpus 5000 60)
endif()
message(STATUS "sanitize: scenario tests and fuzz replay clean under ASan + UBSan")
