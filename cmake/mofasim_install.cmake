# `cmake --install build --prefix P`: the mofasim command in P/bin, the static libraries in P/lib
# with a CMake package (find_package(mofasim) gives mofasim::scenario, mofasim::executor, ... as in
# this tree), their headers and the generated protobuf headers under P/include/mofasim with the
# repository layout (#include "model/flops.h"). The Python package is installed by
# sim/python/CMakeLists.txt.
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)
install(TARGETS mofasim RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})

get_property(mofasim_installed_libs GLOBAL PROPERTY MOFASIM_LIBRARIES)
list(APPEND mofasim_installed_libs mofasim_proto mofasim_units)
foreach(lib IN LISTS mofasim_installed_libs)
  # In the tree the include root is the source and binary folder; installed, include/mofasim.
  get_target_property(dirs ${lib} INTERFACE_INCLUDE_DIRECTORIES)
  list(REMOVE_ITEM dirs ${PROJECT_SOURCE_DIR} ${PROJECT_BINARY_DIR})
  set_target_properties(${lib} PROPERTIES INTERFACE_INCLUDE_DIRECTORIES
    "$<BUILD_INTERFACE:${PROJECT_SOURCE_DIR}>;$<BUILD_INTERFACE:${PROJECT_BINARY_DIR}>;$<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}/mofasim>;${dirs}")
  string(REGEX REPLACE "^mofasim_" "" short ${lib})
  set_target_properties(${lib} PROPERTIES EXPORT_NAME ${short})
endforeach()
install(TARGETS ${mofasim_installed_libs} EXPORT mofasimTargets ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR})
install(EXPORT mofasimTargets NAMESPACE mofasim:: DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/mofasim)

foreach(dir sim model schedules topology proto)
  install(DIRECTORY ${PROJECT_SOURCE_DIR}/${dir}/ DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/mofasim/${dir}
          FILES_MATCHING PATTERN "*.h" PATTERN "python" EXCLUDE)
endforeach()
install(DIRECTORY ${PROJECT_BINARY_DIR}/proto/ DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/mofasim/proto
        FILES_MATCHING PATTERN "*.pb.h" PATTERN "CMakeFiles" EXCLUDE)

set(MOFASIM_CONFIG_WITH_MPI ${MOFASIM_WITH_MPI})
configure_package_config_file(cmake/mofasimConfig.cmake.in ${PROJECT_BINARY_DIR}/mofasimConfig.cmake
                              INSTALL_DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/mofasim)
write_basic_package_version_file(${PROJECT_BINARY_DIR}/mofasimConfigVersion.cmake COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/mofasimConfig.cmake ${PROJECT_BINARY_DIR}/mofasimConfigVersion.cmake
        DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/mofasim)
