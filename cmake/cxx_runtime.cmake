# cmake/cxx_runtime.cmake — one C++ runtime per process: the shared objects ozgemm builds
# (libozgemm.so, the Python extension, the drop-in libraries) are loaded into processes that already
# hold the system's libstdc++.so.6 (Python's C++ extensions: PyTorch, CuPy, JAX, ml_dtypes), so they
# must use that one, never a static copy of their own. Two copies break the locale machinery shared
# by the stream classes: a Python extension linked with a static libstdc++ and imported first made
# `import cupy` / `import torch` / `import jax` after it die with SIGSEGV inside libstdc++.so.6's
# std::codecvt (ml_dtypes printing a double); H200, Ubuntu 24.04, gcc 13.3, 2026-11-26.
# g++ links libstdc++ statically when its library folder has libstdc++.a but no libstdc++.so (a
# compiler installed without the -dev symlink, as on the lent GPU machines); naming the shared
# runtime file on the link line makes the linker take every C++ runtime symbol from it instead.
#
#   ozgemm_shared_cxx_runtime(<target>)   links <target> to the shared libstdc++ when g++ would not
set(OZGEMM_LIBSTDCXX_SHARED "")
if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU")
  execute_process(COMMAND ${CMAKE_CXX_COMPILER} -print-file-name=libstdc++.so
                  OUTPUT_VARIABLE _ozgemm_libstdcxx_so OUTPUT_STRIP_TRAILING_WHITESPACE)
  if(NOT IS_ABSOLUTE "${_ozgemm_libstdcxx_so}")  # g++ finds no shared libstdc++ to link: it would take the .a
    execute_process(COMMAND ${CMAKE_CXX_COMPILER} -print-file-name=libstdc++.so.6
                    OUTPUT_VARIABLE _ozgemm_libstdcxx_so6 OUTPUT_STRIP_TRAILING_WHITESPACE)
    if(IS_ABSOLUTE "${_ozgemm_libstdcxx_so6}" AND EXISTS "${_ozgemm_libstdcxx_so6}")
      set(OZGEMM_LIBSTDCXX_SHARED "${_ozgemm_libstdcxx_so6}")
      message(STATUS "ozgemm: g++ has no libstdc++.so to link; linking the shared runtime ${OZGEMM_LIBSTDCXX_SHARED}")
    else()
      message(WARNING "ozgemm: g++ finds no shared libstdc++ (libstdc++.so or libstdc++.so.6): the shared "
                      "libraries would carry a static C++ runtime, which crashes processes that load another "
                      "(Python with PyTorch, CuPy or JAX). Install the compiler's libstdc++ development package.")
    endif()
  endif()
endif()

function(ozgemm_shared_cxx_runtime target)
  if(OZGEMM_LIBSTDCXX_SHARED)
    target_link_libraries(${target} PRIVATE "${OZGEMM_LIBSTDCXX_SHARED}")
  endif()
endfunction()
