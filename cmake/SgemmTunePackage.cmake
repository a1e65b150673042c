# Install rules of the SgemmTune CMake package: `cmake --install` puts sgemm-tune (its own rule, in
# tuner/), the kernel template, the sgemm_tuned sources, the capture library and the package files
# under the prefix, so that find_package(SgemmTune) gives consumers sgemm_tune_embed().
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

# tuner/ installs sgemm-tune to bin/ literally; the package must look where it is.
set(SGT_INSTALL_BINDIR bin)
set(SGT_INSTALL_DATADIR ${CMAKE_INSTALL_DATADIR}/sgemm-tune)
set(SGT_INSTALL_CMAKEDIR ${CMAKE_INSTALL_LIBDIR}/cmake/SgemmTune)

install(DIRECTORY ${PROJECT_SOURCE_DIR}/kernel_templates/
  DESTINATION ${SGT_INSTALL_DATADIR}/kernel_templates)
# libsgemm_tune_preload.so, to LD_PRELOAD into an application (docs/preload.md): lib/ beside bin/,
# where sgemm-tune's own run path looks.
install(TARGETS sgemm_tune_preload sgemm_tune_serve LIBRARY DESTINATION lib)
install(DIRECTORY ${PROJECT_SOURCE_DIR}/sgemm_tuned/include ${PROJECT_SOURCE_DIR}/sgemm_tuned/src
  DESTINATION ${SGT_INSTALL_DATADIR}/sgemm_tuned)

configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/SgemmTuneConfig.cmake.in
  ${PROJECT_BINARY_DIR}/SgemmTuneConfig.cmake
  INSTALL_DESTINATION ${SGT_INSTALL_CMAKEDIR}
  PATH_VARS SGT_INSTALL_BINDIR SGT_INSTALL_DATADIR)
# Before 1.0 a minor version may change the table format.
write_basic_package_version_file(${PROJECT_BINARY_DIR}/SgemmTuneConfigVersion.cmake
  VERSION ${PROJECT_VERSION}
  COMPATIBILITY SameMinorVersion)
install(FILES
  ${PROJECT_BINARY_DIR}/SgemmTuneConfig.cmake
  ${PROJECT_BINARY_DIR}/SgemmTuneConfigVersion.cmake
  ${PROJECT_SOURCE_DIR}/cmake/SgemmTuneEmbed.cmake
  DESTINATION ${SGT_INSTALL_CMAKEDIR})
