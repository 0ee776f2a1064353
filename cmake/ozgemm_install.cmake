# cmake/ozgemm_install.cmake — install rules and package files (included by CMakeLists.txt when
# OZGEMM_INSTALL is ON; the default when ozgemm is the top-level project).
#
#   <prefix>/include/ozgemm/...                 the public headers: include/ozgemm less reference/ and model/
#                                               (every function they declare is exported by the library)
#   <prefix>/lib/libozgemm.so.0 (+ .so link)    shared library, SONAME libozgemm.so.0, only the public API exported
#   <prefix>/lib/libozgemm.a                    static library (position-independent code)
#   <prefix>/bin/ozgemm                         the command line tool (RUNPATH $ORIGIN/../lib)
#   <prefix>/lib/cmake/ozgemm/                  ozgemmConfig.cmake, ozgemmConfigVersion.cmake, ozgemmTargets*.cmake:
#                                               find_package(ozgemm) -> ozgemm::ozgemm (shared), ozgemm::ozgemm_static
#   <prefix>/lib/pkgconfig/ozgemm.pc            pkg-config: -lozgemm plus the CUDA include/library flags
#
# Components: ozgemm_runtime (shared library, CLI, drop-in libraries), ozgemm_development
# (headers, static library, package files). The Python wheel installs only the `python` component
# (pyproject.toml), so none of these rules reach the wheel.
#
# Nothing here sets a cache variable: a parent project's settings are left alone.

include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

set(_ozgemm_cmakedir "${CMAKE_INSTALL_LIBDIR}/cmake/ozgemm")
set(_ozgemm_pcdir "${CMAKE_INSTALL_LIBDIR}/pkgconfig")

install(FILES "${PROJECT_SOURCE_DIR}/LICENSE" DESTINATION "${CMAKE_INSTALL_DATADIR}/doc/ozgemm"
        COMPONENT ozgemm_runtime OPTIONAL)

if(TARGET ozgemm_cli)
  # The installed tool finds the installed libozgemm.so.0 next to it.
  set_target_properties(ozgemm_cli PROPERTIES INSTALL_RPATH "\$ORIGIN/../${CMAKE_INSTALL_LIBDIR}"
                                              INSTALL_RPATH_USE_LINK_PATH ON)
  install(TARGETS ozgemm_cli RUNTIME DESTINATION "${CMAKE_INSTALL_BINDIR}" COMPONENT ozgemm_runtime)
endif()

if(NOT OZGEMM_HAVE_CUDA)
  message(STATUS "ozgemm: CPU-only build: installing the CLI only (no library, so no headers or CMake package)")
  return()
endif()

# Headers: the API the library exports (ozgemm.h, ozgemm.hpp, types.hpp, problem.hpp, b2b*.hpp) and
# the shared numerics (numerics/: inline formulas, plus ozaki2_constants, exported). The host
# references (reference/) and the roofline model (model/) live in the CPU libraries ozgemm_reference
# and ozgemm_core, which the CLI, the tests and the Python module link and which are not installed,
# so their headers are not either. src/ and kernels/ headers stay private.
# scripts/test_package.sh links a program using every installed header (tests/cli/installed_api.cpp).
install(DIRECTORY "${PROJECT_SOURCE_DIR}/include/ozgemm" DESTINATION "${CMAKE_INSTALL_INCLUDEDIR}"
        COMPONENT ozgemm_development FILES_MATCHING PATTERN "*.h" PATTERN "*.hpp"
        PATTERN "reference" EXCLUDE PATTERN "model" EXCLUDE)

# --- Libraries and the exported targets ------------------------------------------------------------
# Exported names: ozgemm::ozgemm (shared; the same name as the in-tree alias) and
# ozgemm::ozgemm_static. Their usage requirements (CMakeLists.txt) carry the CUDA runtime,
# cuBLAS/cuBLASLt, threads and, for a C program, the C++ runtime.
set_target_properties(ozgemm_shared PROPERTIES EXPORT_NAME ozgemm
                                               # cuBLAS/cuBLASLt/cudart found where this build found them
                                               INSTALL_RPATH_USE_LINK_PATH ON)
set_target_properties(ozgemm_static PROPERTIES EXPORT_NAME ozgemm_static)
install(TARGETS ozgemm_shared ozgemm_static EXPORT ozgemmTargets
        LIBRARY DESTINATION "${CMAKE_INSTALL_LIBDIR}" COMPONENT ozgemm_runtime
                NAMELINK_COMPONENT ozgemm_development
        ARCHIVE DESTINATION "${CMAKE_INSTALL_LIBDIR}" COMPONENT ozgemm_development)
install(EXPORT ozgemmTargets NAMESPACE ozgemm:: DESTINATION "${_ozgemm_cmakedir}" FILE ozgemmTargets.cmake
        COMPONENT ozgemm_development)

# ozgemmConfig.cmake + version file. 0.x: a minor version may change the API, so a request for
# 0.2 accepts 0.2.* only.
configure_package_config_file("${CMAKE_CURRENT_LIST_DIR}/ozgemmConfig.cmake.in"
                              "${PROJECT_BINARY_DIR}/ozgemmConfig.cmake"
                              INSTALL_DESTINATION "${_ozgemm_cmakedir}")
write_basic_package_version_file("${PROJECT_BINARY_DIR}/ozgemmConfigVersion.cmake"
                                 VERSION "${PROJECT_VERSION}" COMPATIBILITY SameMinorVersion)
install(FILES "${PROJECT_BINARY_DIR}/ozgemmConfig.cmake" "${PROJECT_BINARY_DIR}/ozgemmConfigVersion.cmake"
        DESTINATION "${_ozgemm_cmakedir}" COMPONENT ozgemm_development)

# --- pkg-config ---------------------------------------------------------------------------------
# The CUDA include and library directories are the ones this build used (where cuBLAS was found).
get_target_property(_ozgemm_cublas_lib CUDA::cublas IMPORTED_LOCATION)
get_filename_component(_ozgemm_cuda_libdir "${_ozgemm_cublas_lib}" DIRECTORY)
set(_ozgemm_pc_cflags "")
foreach(dir IN LISTS CUDAToolkit_INCLUDE_DIRS)
  string(APPEND _ozgemm_pc_cflags " -I${dir}")
endforeach()
if(OZGEMM_CUDART_STATIC)
  set(_ozgemm_pc_cudart "-lcudart_static -ldl -lrt")
else()
  set(_ozgemm_pc_cudart "-lcudart")
endif()
foreach(var libdir includedir)
  string(TOUPPER "${var}" up)
  if(IS_ABSOLUTE "${CMAKE_INSTALL_${up}}")
    set(_ozgemm_pc_${var} "${CMAKE_INSTALL_${up}}")
  else()
    set(_ozgemm_pc_${var} "\${prefix}/${CMAKE_INSTALL_${up}}")
  endif()
endforeach()
# prefix: relative to the .pc file's own folder (pkg-config's ${pcfiledir}), so an installed tree
# can be moved or unpacked anywhere; an absolute pkgconfig folder gets the absolute install prefix.
if(IS_ABSOLUTE "${_ozgemm_pcdir}")
  set(OZGEMM_PC_PREFIX "@OZGEMM_PC_PREFIX@")  # filled in at install time (cmake --install --prefix) below
else()
  file(RELATIVE_PATH _ozgemm_pc_up "/ozgemm-prefix/${_ozgemm_pcdir}" "/ozgemm-prefix")
  string(REGEX REPLACE "/$" "" _ozgemm_pc_up "${_ozgemm_pc_up}")  # "../.." for lib/pkgconfig
  set(OZGEMM_PC_PREFIX "\${pcfiledir}/${_ozgemm_pc_up}")
endif()
set(_ozgemm_pc_template "${PROJECT_BINARY_DIR}/ozgemm.pc.template")
file(CONFIGURE OUTPUT "${_ozgemm_pc_template}" @ONLY CONTENT [=[
prefix=@OZGEMM_PC_PREFIX@
libdir=@_ozgemm_pc_libdir@
includedir=@_ozgemm_pc_includedir@
cudalibdir=@_ozgemm_cuda_libdir@

Name: ozgemm
Description: FP64 GEMM emulated on INT8 tensor cores (Ozaki schemes I and II), cuBLAS-compatible C API
Version: @PROJECT_VERSION@
Cflags: -I${includedir}@_ozgemm_pc_cflags@
Libs: -L${libdir} -lozgemm -L${cudalibdir} -lcublasLt -lcublas @_ozgemm_pc_cudart@ -lstdc++ -lpthread -lm
]=])
install(CODE "
  file(READ \"${_ozgemm_pc_template}\" _pc)
  get_filename_component(_prefix \"\${CMAKE_INSTALL_PREFIX}\" ABSOLUTE)  # --prefix may be relative
  string(REPLACE \"@OZGEMM_PC_PREFIX@\" \"\${_prefix}\" _pc \"\${_pc}\")
  file(WRITE \"${PROJECT_BINARY_DIR}/ozgemm.pc\" \"\${_pc}\")
" COMPONENT ozgemm_development)
install(FILES "${PROJECT_BINARY_DIR}/ozgemm.pc" DESTINATION "${_ozgemm_pcdir}" COMPONENT ozgemm_development)

# --- Drop-in libraries ----------------------------------------------------------------------------
# cmake/dropin.cmake (the cuBLAS interposer and the host BLAS) may be included before or after this
# file: its shared libraries are installed at the end of the top-level directory's configuration.
# It lists them in the global property OZGEMM_DROPIN_TARGETS (or they are found by their names).
function(_ozgemm_install_dropin)
  get_property(targets GLOBAL PROPERTY OZGEMM_DROPIN_TARGETS)
  get_property(installed GLOBAL PROPERTY OZGEMM_DROPIN_INSTALLED)
  if(NOT targets)
    foreach(t ozgemm_hook ozgemm_blas ozgemm_dropin ozgemm_dropin_cublas ozgemm_dropin_blas)
      if(TARGET ${t})
        list(APPEND targets ${t})
      endif()
    endforeach()
  endif()
  foreach(t IN LISTS targets)
    if(TARGET ${t} AND NOT t IN_LIST installed)
      set_target_properties(${t} PROPERTIES INSTALL_RPATH "\$ORIGIN" INSTALL_RPATH_USE_LINK_PATH ON)
      install(TARGETS ${t} LIBRARY DESTINATION "${CMAKE_INSTALL_LIBDIR}" COMPONENT ozgemm_runtime)
      set_property(GLOBAL APPEND PROPERTY OZGEMM_DROPIN_INSTALLED ${t})
    endif()
  endforeach()
endfunction()
cmake_language(DEFER DIRECTORY "${PROJECT_SOURCE_DIR}" CALL _ozgemm_install_dropin)
