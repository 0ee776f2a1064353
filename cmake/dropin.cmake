# cmake/dropin.cmake — the drop-in libraries (docs/dropin.md) and their CPU tests (ctest -L dropin).
# Included from the top-level CMakeLists.txt inside if(OZGEMM_HAVE_CUDA), after ozgemm_shared.
#
#   ozgemm_hook   libozgemm_hook.so  LD_PRELOAD interposer of cuBLAS's FP64 GEMM entry points, real and complex
#   ozgemm_blas   libozgemm_blas.so  host BLAS dgemm_ / zgemm_ / cblas_dgemm / cblas_zgemm with GPU offload
#   dropin_dist   (not in ALL) build/dropin-dist/: libozgemm.so.0 + both libraries + the netlib
#                 BLAS testers and their libraries, everything tests/dropin/run_device.sh needs on a
#                 GPU machine
#
# Neither library links CUDA: they include the CUDA headers for types only and dlopen libozgemm.so.0
# (next to themselves, or $OZGEMM_LIBRARY) at the first call they want to run on the GPU, so they
# build without nvcc and load on machines without a GPU (where they only forward).

set(OZGEMM_DROPIN_DIR ${PROJECT_SOURCE_DIR}/src/dropin)

function(ozgemm_dropin_flags target)
  # Default visibility: the version script decides what is exported (the cuBLAS prototypes in
  # cublas_api.h carry no visibility attribute, so -fvisibility=hidden would hide the hooks).
  set_target_properties(${target} PROPERTIES CXX_STANDARD 17 CXX_STANDARD_REQUIRED ON CXX_EXTENSIONS OFF
                                             POSITION_INDEPENDENT_CODE ON)
  target_compile_options(${target} PRIVATE ${OZGEMM_HOST_FLAGS})
  target_include_directories(${target} PRIVATE ${PROJECT_SOURCE_DIR}/include ${PROJECT_SOURCE_DIR}/src
                                               ${CUDAToolkit_INCLUDE_DIRS})
endfunction()

add_library(ozgemm_dropin_common OBJECT ${OZGEMM_DROPIN_DIR}/common.cpp)
ozgemm_dropin_flags(ozgemm_dropin_common)

foreach(lib hook blas)
  if(lib STREQUAL "hook")
    set(sources ${OZGEMM_DROPIN_DIR}/hook.cpp ${OZGEMM_DROPIN_DIR}/hook_legacy.cpp
                ${OZGEMM_DROPIN_DIR}/hook_symmetric.cpp ${OZGEMM_DROPIN_DIR}/hook_lt.cpp
                ${OZGEMM_DROPIN_DIR}/hook_dlsym.cpp)
  else()
    set(sources ${OZGEMM_DROPIN_DIR}/blas.cpp ${OZGEMM_DROPIN_DIR}/device_choice.cpp)
  endif()
  add_library(ozgemm_${lib} SHARED ${sources} $<TARGET_OBJECTS:ozgemm_dropin_common>)
  ozgemm_dropin_flags(ozgemm_${lib})
  # Preloaded by path: no SONAME version; next to libozgemm.so.0 in the build tree.
  set_target_properties(ozgemm_${lib} PROPERTIES OUTPUT_NAME ozgemm_${lib} LIBRARY_OUTPUT_DIRECTORY ${PROJECT_BINARY_DIR}
                                                 LINK_DEPENDS ${OZGEMM_DROPIN_DIR}/${lib}.map)
  target_link_libraries(ozgemm_${lib} PRIVATE ${CMAKE_DL_LIBS} Threads::Threads)
  ozgemm_shared_cxx_runtime(ozgemm_${lib})
  target_link_options(ozgemm_${lib} PRIVATE "LINKER:--version-script=${OZGEMM_DROPIN_DIR}/${lib}.map"
                                            "LINKER:--no-undefined")
endforeach()

# --- dropin_dist: what the device script needs, in one folder ---------------------------------------
add_custom_target(dropin_dist
  COMMAND ${CMAKE_COMMAND} -E env bash ${PROJECT_SOURCE_DIR}/tests/dropin/make_dist.sh
          ${PROJECT_BINARY_DIR}/dropin-dist $<TARGET_FILE:ozgemm_shared> $<TARGET_FILE:ozgemm_hook>
          $<TARGET_FILE:ozgemm_blas>
  DEPENDS ozgemm_shared ozgemm_hook ozgemm_blas
  COMMENT "Assembling ${PROJECT_BINARY_DIR}/dropin-dist for tests/dropin/run_device.sh"
  VERBATIM)

# --- CPU tests (label dropin) ----------------------------------------------------------------------
if(OZGEMM_BUILD_TESTS)
  enable_testing()
  set(dropin_tests ${PROJECT_SOURCE_DIR}/tests/dropin)
  set(hook_lib $<TARGET_FILE:ozgemm_hook>)
  set(all_dropin_tests "")
  set(blas_lib $<TARGET_FILE:ozgemm_blas>)

  # The settings parser, the argument checks, the classification and the counters (common.cpp) on
  # their own: valid and invalid OZGEMM_*_ACCURACY / _SCHEME values, what each applies through the C
  # API, and an Ozaki-II call info (slices 0) counted as emulated.
  add_executable(dropin_common_test ${dropin_tests}/common_test.cpp $<TARGET_OBJECTS:ozgemm_dropin_common>)
  ozgemm_dropin_flags(dropin_common_test)
  set_target_properties(dropin_common_test PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${PROJECT_BINARY_DIR}/tests/dropin)
  target_link_libraries(dropin_common_test PRIVATE ${CMAKE_DL_LIBS} Threads::Threads)
  add_test(NAME dropin_common COMMAND $<TARGET_FILE:dropin_common_test>)

  # The offload's device choice (OZGEMM_DEVICE, the launchers' local-rank variables) on its own.
  add_executable(dropin_device_choice_test ${dropin_tests}/device_choice_test.cpp ${OZGEMM_DROPIN_DIR}/device_choice.cpp)
  ozgemm_dropin_flags(dropin_device_choice_test)
  set_target_properties(dropin_device_choice_test PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${PROJECT_BINARY_DIR}/tests/dropin)
  add_test(NAME dropin_device_choice COMMAND $<TARGET_FILE:dropin_device_choice_test>)

  # Exported symbols and dependencies of both libraries.
  add_test(NAME dropin_exports COMMAND bash ${dropin_tests}/check_exports.sh ${hook_lib} ${blas_lib})

  # cuBLAS forwarding without a GPU: every hooked entry point called with a null handle must give the
  # real cuBLAS's status, through a program linked to cuBLAS and through an RTLD_LOCAL dlopen (as
  # Python extensions load it, where RTLD_NEXT finds nothing).
  add_library(dropin_cublas_calls SHARED ${dropin_tests}/cublas_calls.cpp)
  set_target_properties(dropin_cublas_calls PROPERTIES CXX_STANDARD 17 LIBRARY_OUTPUT_DIRECTORY
                                                       ${PROJECT_BINARY_DIR}/tests/dropin)
  target_link_libraries(dropin_cublas_calls PRIVATE CUDA::cublas)
  add_executable(dropin_cublas_linked ${dropin_tests}/cublas_client.cpp)
  target_compile_definitions(dropin_cublas_linked PRIVATE OZ_LINKED=1)
  target_link_libraries(dropin_cublas_linked PRIVATE dropin_cublas_calls ${CMAKE_DL_LIBS})
  add_executable(dropin_cublas_dlopen ${dropin_tests}/cublas_client.cpp)
  target_compile_definitions(dropin_cublas_dlopen PRIVATE
                             OZ_CALLS_LIB="$<TARGET_FILE:dropin_cublas_calls>")
  target_link_libraries(dropin_cublas_dlopen PRIVATE ${CMAKE_DL_LIBS})
  add_dependencies(dropin_cublas_dlopen dropin_cublas_calls)
  foreach(t dropin_cublas_linked dropin_cublas_dlopen)
    set_target_properties(${t} PROPERTIES CXX_STANDARD 17 RUNTIME_OUTPUT_DIRECTORY ${PROJECT_BINARY_DIR}/tests/dropin)
    foreach(variant default min0 off)
      add_test(NAME ${t}_${variant}
               COMMAND bash ${dropin_tests}/run_client.sh ${variant} hook ${hook_lib} $<TARGET_FILE:${t}>)
    endforeach()
  endforeach()

  # Host BLAS forwarding: dgemm_ and cblas_dgemm under the preload give the system BLAS's bits and
  # its xerbla numbering.
  find_library(OZGEMM_SYSTEM_BLAS_LIBRARY NAMES blas PATHS /usr/lib/${CMAKE_LIBRARY_ARCHITECTURE})
  if(OZGEMM_SYSTEM_BLAS_LIBRARY)
    add_executable(dropin_blas_client ${dropin_tests}/blas_client.cpp)
    set_target_properties(dropin_blas_client PROPERTIES CXX_STANDARD 17 ENABLE_EXPORTS ON
                                                        RUNTIME_OUTPUT_DIRECTORY ${PROJECT_BINARY_DIR}/tests/dropin)
    target_link_libraries(dropin_blas_client PRIVATE ${OZGEMM_SYSTEM_BLAS_LIBRARY} ${CMAKE_DL_LIBS})
    foreach(variant default min0 off)
      add_test(NAME dropin_blas_client_${variant}
               COMMAND bash ${dropin_tests}/run_client.sh ${variant} blas ${blas_lib}
                       $<TARGET_FILE:dropin_blas_client>)
    endforeach()
  else()
    message(STATUS "ozgemm: no system libblas.so (Debian: libblas-dev); the dropin_blas_client tests are not built")
  endif()

  # The netlib testers (Debian libblas-test) through the preloaded library: default threshold, and
  # threshold 0 with the GPU hidden (every DGEMM takes the offload path, finds no GPU, forwards).
  # xblat3d / xdcblat3: DGEMM (Fortran / CBLAS); xblat3z / xzcblat3: ZGEMM.
  set(blas_testers xblat3d xdcblat3 xblat3z xzcblat3)
  foreach(tester ${blas_testers})
    add_test(NAME dropin_${tester} COMMAND bash ${dropin_tests}/run_blas_tester.sh ${blas_lib} ${tester})
    add_test(NAME dropin_${tester}_min0
             COMMAND ${CMAKE_COMMAND} -E env OZGEMM_BLAS_MIN_SIZE=0 CUDA_VISIBLE_DEVICES=
                     bash ${dropin_tests}/run_blas_tester.sh ${blas_lib} ${tester})
    list(APPEND all_dropin_tests dropin_${tester} dropin_${tester}_min0)
  endforeach()

  # The GPU paths on this CPU: a mock libozgemm (host GEMM, memcpy "transfers", fault injection) and,
  # for the hook, a mock libcublas.so.13 with real handles (stream, pointer mode, math mode). The
  # mock's file name lacks "ozgemm" on purpose: its own cublasDgemm_v2 calls must then pass through
  # the hook by the thread-local depth guard alone (the name rule is the second line of defence).
  set(mock ${dropin_tests}/mock)
  add_library(dropin_mock_cublas SHARED ${mock}/mock_cublas.cpp)
  set_target_properties(dropin_mock_cublas PROPERTIES OUTPUT_NAME cublas VERSION 13 SOVERSION 13 CXX_STANDARD 17
                                                      LIBRARY_OUTPUT_DIRECTORY ${PROJECT_BINARY_DIR}/tests/dropin/mock)
  target_include_directories(dropin_mock_cublas PRIVATE ${PROJECT_SOURCE_DIR}/src ${CUDAToolkit_INCLUDE_DIRS})
  add_library(dropin_mock_ozgemm SHARED ${mock}/mock_ozgemm.cpp)
  set_target_properties(dropin_mock_ozgemm PROPERTIES OUTPUT_NAME mockoz CXX_STANDARD 17
                                                      LIBRARY_OUTPUT_DIRECTORY ${PROJECT_BINARY_DIR}/tests/dropin/mock)
  target_include_directories(dropin_mock_ozgemm PRIVATE ${PROJECT_SOURCE_DIR}/include ${PROJECT_SOURCE_DIR}/src
                                                      ${CUDAToolkit_INCLUDE_DIRS})
  target_link_libraries(dropin_mock_ozgemm PRIVATE dropin_mock_cublas)
  target_compile_options(dropin_mock_cublas PRIVATE -ffp-contract=off)
  target_compile_options(dropin_mock_ozgemm PRIVATE -ffp-contract=off)
  add_executable(dropin_hook_mock_client ${mock}/hook_mock_client.cpp)
  set_target_properties(dropin_hook_mock_client PROPERTIES CXX_STANDARD 17
                                                           RUNTIME_OUTPUT_DIRECTORY ${PROJECT_BINARY_DIR}/tests/dropin)
  target_include_directories(dropin_hook_mock_client PRIVATE ${PROJECT_SOURCE_DIR}/src ${CUDAToolkit_INCLUDE_DIRS})
  target_compile_options(dropin_hook_mock_client PRIVATE -ffp-contract=off)
  target_link_libraries(dropin_hook_mock_client PRIVATE dropin_mock_cublas ${CMAKE_DL_LIBS} Threads::Threads)
  add_dependencies(dropin_hook_mock_client dropin_mock_ozgemm)
  set(mock_lib $<TARGET_FILE:dropin_mock_ozgemm>)
  # cublasLtMatmul: a mock libcublasLt.so.13 (descriptors, a host reference matmul with the forward
  # epilogues) and a client comparing every case with the hook on and off (hook_lt_client.cpp), in
  # FIXED mode (the mock emulates) and FP64 mode (the mock runs native through cuBLAS).
  add_library(dropin_mock_cublaslt SHARED ${mock}/mock_cublaslt.cpp)
  set_target_properties(dropin_mock_cublaslt PROPERTIES OUTPUT_NAME cublasLt VERSION 13 SOVERSION 13 CXX_STANDARD 17
                                                        LIBRARY_OUTPUT_DIRECTORY ${PROJECT_BINARY_DIR}/tests/dropin/mock)
  target_include_directories(dropin_mock_cublaslt PRIVATE ${PROJECT_SOURCE_DIR}/src ${CUDAToolkit_INCLUDE_DIRS})
  target_compile_options(dropin_mock_cublaslt PRIVATE -ffp-contract=off)
  add_executable(dropin_hook_lt_client ${mock}/hook_lt_client.cpp)
  set_target_properties(dropin_hook_lt_client PROPERTIES CXX_STANDARD 17
                                                         RUNTIME_OUTPUT_DIRECTORY ${PROJECT_BINARY_DIR}/tests/dropin)
  target_include_directories(dropin_hook_lt_client PRIVATE ${CUDAToolkit_INCLUDE_DIRS})
  target_link_libraries(dropin_hook_lt_client PRIVATE dropin_mock_cublaslt ${CMAKE_DL_LIBS})
  add_dependencies(dropin_hook_lt_client dropin_mock_ozgemm)
  foreach(accuracy 7 fp64)
    add_test(NAME dropin_hook_lt_mock_${accuracy}
             COMMAND ${CMAKE_COMMAND} -E env LD_PRELOAD=${hook_lib} OZGEMM_LIBRARY=$<TARGET_FILE:dropin_mock_ozgemm>
                     OZGEMM_HOOK_MIN_SIZE=0 OZGEMM_HOOK_MAX_BATCH=8 OZGEMM_HOOK_ACCURACY=${accuracy} OZGEMM_HOOK_LOG=all
                     bash ${dropin_tests}/expect_lines.sh
                     "cublasLtMatmul NN m=13 n=11 k=9 -> ozgemm: "
                     "cublasLtMatmul NN m=13 n=11 k=9 -> cuBLAS \\(layout-not-supported\\)"
                     "cublasLtMatmul NT m=13 n=11 k=9 batch=2 -> ozgemm: 2 "
                     "summary: calls by entry point: cublasLtMatmul=[0-9]+"
                     -- $<TARGET_FILE:dropin_hook_lt_client>)
    list(APPEND all_dropin_tests dropin_hook_lt_mock_${accuracy})
  endforeach()
  # The hook's dlsym (hook_dlsym.cpp): a program that dlopen()s the mock cuBLAS and cuBLASLt
  # (RTLD_LOCAL) and looks their functions up on those handles, as XLA does: redirected to the hook by
  # default (calls intercepted, results equal to the hook-off run), untouched with OZGEMM_HOOK_DLSYM=0.
  add_executable(dropin_hook_dlsym_client ${mock}/hook_dlsym_client.cpp)
  set_target_properties(dropin_hook_dlsym_client PROPERTIES CXX_STANDARD 17
                                                            RUNTIME_OUTPUT_DIRECTORY ${PROJECT_BINARY_DIR}/tests/dropin)
  target_include_directories(dropin_hook_dlsym_client PRIVATE ${CUDAToolkit_INCLUDE_DIRS})
  target_compile_definitions(dropin_hook_dlsym_client PRIVATE MOCK_CUBLAS="$<TARGET_FILE:dropin_mock_cublas>"
                                                              MOCK_CUBLASLT="$<TARGET_FILE:dropin_mock_cublaslt>")
  target_link_libraries(dropin_hook_dlsym_client PRIVATE ${CMAKE_DL_LIBS})
  add_dependencies(dropin_hook_dlsym_client dropin_mock_cublas dropin_mock_cublaslt dropin_mock_ozgemm)
  add_test(NAME dropin_hook_dlsym_redirect
           COMMAND ${CMAKE_COMMAND} -E env LD_PRELOAD=${hook_lib} OZGEMM_LIBRARY=$<TARGET_FILE:dropin_mock_ozgemm>
                   OZGEMM_HOOK_MIN_SIZE=0 OZGEMM_HOOK_ACCURACY=7 OZGEMM_HOOK_LOG=all HOOK_DLSYM_EXPECT=redirect
                   bash ${dropin_tests}/expect_lines.sh
                   "dlsym\\(\"cublasDgemm_v2\"\\) from .*dropin_hook_dlsym_client: the hook's function, forwarding to .*mock/libcublas\\.so"
                   "dlsym\\(\"cublasLtMatmul\"\\) from .*: the hook's function, forwarding to .*mock/libcublasLt\\.so"
                   "cublasLtMatmul NN m=13 n=11 k=9 -> ozgemm: "
                   "summary: [0-9]+ dlsym lookups of cuBLAS functions on a library handle were answered with the hook's own"
                   -- $<TARGET_FILE:dropin_hook_dlsym_client>)
  add_test(NAME dropin_hook_dlsym_off
           COMMAND ${CMAKE_COMMAND} -E env LD_PRELOAD=${hook_lib} OZGEMM_LIBRARY=$<TARGET_FILE:dropin_mock_ozgemm>
                   OZGEMM_HOOK_MIN_SIZE=0 OZGEMM_HOOK_DLSYM=0 HOOK_DLSYM_EXPECT=off
                   $<TARGET_FILE:dropin_hook_dlsym_client>)
  list(APPEND all_dropin_tests dropin_hook_dlsym_redirect dropin_hook_dlsym_off)
  # What ozgemm ran, counted by scheme and count (HOOK_MOCK_EXPECT for the real matrices,
  # HOOK_MOCK_EXPECT_COMPLEX for the complex ones, in hook_mock_client.cpp); the settings reach the
  # mock through the C API. Complex data runs Ozaki-II in FIXED mode (16 moduli unless a moduli count
  # is set) and native ZGEMM in FP64 mode, as libozgemm does. dropin_hook_mock_test(NAME EXPECT ENV settings...
  # [LINES regex...]): the client under the hook with those settings; each LINES regex (grep -E) must
  # match a line of its output (the log lines, the exit summary, the messages).
  set(hook_mock_tests "")
  function(dropin_hook_mock_test name expect)
    cmake_parse_arguments(arg "" "" "ENV;LINES" ${ARGN})
    add_test(NAME ${name}
             COMMAND ${CMAKE_COMMAND} -E env LD_PRELOAD=${hook_lib} OZGEMM_LIBRARY=${mock_lib} OZGEMM_HOOK_MIN_SIZE=0
                     OZGEMM_HOOK_MAX_BATCH=8 ${arg_ENV} HOOK_MOCK_EXPECT=${expect}
                     bash ${dropin_tests}/expect_lines.sh ${arg_LINES} -- $<TARGET_FILE:dropin_hook_mock_client>)
    set(hook_mock_tests ${hook_mock_tests} ${name} PARENT_SCOPE)
  endfunction()
  # FP64 mode, the mock runs native: counted native by ozgemm's choice, with the mock's reason.
  dropin_hook_mock_test(dropin_hook_mock_fp64 native
    ENV OZGEMM_HOOK_ACCURACY=fp64 OZGEMM_HOOK_LOG=all HOOK_MOCK_EXPECT_COMPLEX=native
    LINES "native DGEMM \\(FP64 fallback\\) \\[mock: fp64 mode ran native\\]"
          "summary: native by ozgemm's choice: [0-9]+ matrices \\[mock: fp64 mode ran native\\]"
          "cublasZgemm_v2 NC m=13 n=11 k=9 -> ozgemm: native ZGEMM \\(FP64 fallback\\) \\[mock: fp64 mode ran native ZGEMM\\]"
          "cublasGemmEx CT m=13 n=11 k=9 -> cuBLAS \\(not-fp64\\)"
          "summary: native by ozgemm's choice: [0-9]+ matrices \\[mock: fp64 mode ran native ZGEMM\\]"
          "summary: complex: [0-9]+ calls, [0-9]+ matrices: 0 emulated, [0-9]+ native by ozgemm's choice")
  # FIXED Ozaki-I, 7 slices.
  dropin_hook_mock_test(dropin_hook_mock_7 ozaki1:7
    ENV OZGEMM_HOOK_ACCURACY=7 OZGEMM_HOOK_LOG=calls HOOK_MOCK_EXPECT_COMPLEX=ozaki2:16
    LINES "-> ozgemm: mock-fused, Ozaki-I 7 slices \\[mock: fixed Ozaki-I, 7 slices\\]"
          "batch=3 -> ozgemm: 3 Ozaki-I \\(7 slices\\), 0 native"
          "cublasZgemm3m CC m=13 n=11 k=9 -> ozgemm: mock-partially-fused, complex Ozaki-II 16 moduli \\[mock: fixed complex Ozaki-II, 16 moduli\\]"
          "cublasZgemmBatched CN m=13 n=11 k=9 batch=3 -> ozgemm: 3 Ozaki-II \\(16 moduli\\), 0 native")
  # FIXED Ozaki-II, 14 moduli (the call info has slices 0).
  dropin_hook_mock_test(dropin_hook_mock_moduli14 ozaki2:14
    ENV OZGEMM_HOOK_ACCURACY=moduli:14 OZGEMM_HOOK_LOG=summary HOOK_MOCK_EXPECT_COMPLEX=ozaki2:14
    LINES "summary: emulated with Ozaki-II: [0-9]+ matrices \\(14 moduli: [0-9]+\\)"
          "summary: complex: [0-9]+ calls, ([0-9]+) matrices: \\1 emulated \\(Ozaki-II 14 moduli: \\1\\), 0 native"
          "summary: real: [0-9]+ calls, ([0-9]+) matrices: \\1 emulated \\(Ozaki-II 14 moduli: \\1\\), 0 native")
  # FP64 mode choosing Ozaki-II (as on Hopper at large shapes): emulated, never "native".
  # (Complex data: native ZGEMM, FP64 mode's choice.)
  dropin_hook_mock_test(dropin_hook_mock_fp64_ozaki2 ozaki2:13
    ENV MOCK_FP64_OZAKI2=13 OZGEMM_HOOK_LOG=all HOOK_MOCK_EXPECT_COMPLEX=native
    LINES "-> ozgemm: mock-partially-fused, Ozaki-II 13 moduli \\[mock: fp64 mode chose Ozaki-II, 13 moduli\\]"
          "summary: real: [0-9]+ calls, ([0-9]+) matrices: \\1 emulated \\(Ozaki-II 13 moduli: \\1\\), 0 native"
          "summary: emulated with Ozaki-II: [0-9]+ matrices \\(13 moduli: [0-9]+\\)")
  # OZGEMM_HOOK_SCHEME=ozaki1 reaches ozgemmSetScheme: FP64 mode may not take Ozaki-II, runs native.
  dropin_hook_mock_test(dropin_hook_mock_fp64_scheme_ozaki1 native
    ENV MOCK_FP64_OZAKI2=13 OZGEMM_HOOK_SCHEME=ozaki1 HOOK_MOCK_EXPECT_COMPLEX=native)
  # Invalid settings: said on stderr, every call forwarded (reason invalid-setting), no ozgemm handle.
  dropin_hook_mock_test(dropin_hook_mock_invalid_moduli invalid-setting ENV OZGEMM_HOOK_ACCURACY=moduli:30
    LINES "OZGEMM_HOOK_ACCURACY=moduli:30 is not an Ozaki-II moduli count .*forwarded")
  dropin_hook_mock_test(dropin_hook_mock_invalid_pair invalid-setting ENV OZGEMM_HOOK_ACCURACY=7 OZGEMM_HOOK_SCHEME=ozaki2
    LINES "OZGEMM_HOOK_ACCURACY=7 is an Ozaki-I slice count, but OZGEMM_HOOK_SCHEME=ozaki2")
  # libozgemm missing, or no GPU: every call forwarded, said once.
  add_test(NAME dropin_hook_mock_nolib
           COMMAND ${CMAKE_COMMAND} -E env LD_PRELOAD=${hook_lib} OZGEMM_LIBRARY=/nonexistent/libozgemm.so.0
                   OZGEMM_HOOK_MIN_SIZE=0 HOOK_MOCK_EXPECT=unavailable $<TARGET_FILE:dropin_hook_mock_client>)
  add_test(NAME dropin_hook_mock_nogpu
           COMMAND ${CMAKE_COMMAND} -E env LD_PRELOAD=${hook_lib} OZGEMM_LIBRARY=${mock_lib} MOCK_NO_GPU=1
                   OZGEMM_HOOK_MIN_SIZE=0 HOOK_MOCK_EXPECT=unavailable $<TARGET_FILE:dropin_hook_mock_client>)
  # The real libozgemm.so.0 (next to the hook) loaded by the hook, GPU hidden: it loads and resolves
  # every symbol the hook needs, then the runtime finds no device and cuBLAS (here the mock) runs.
  add_test(NAME dropin_hook_real_libozgemm_nogpu
           COMMAND ${CMAKE_COMMAND} -E env LD_PRELOAD=${hook_lib} CUDA_VISIBLE_DEVICES= OZGEMM_HOOK_MIN_SIZE=0
                   HOOK_MOCK_EXPECT=unavailable $<TARGET_FILE:dropin_hook_mock_client>)
  # The BLAS offload path (pinned staging in 64-byte chunks, the partial-download fallback) through
  # the netlib testers and the client; the mock computes with reference BLAS's loops, so the client's
  # output must still equal the system BLAS's bit for bit.
  # (complex: FIXED Ozaki-II 16 moduli, as on the GPU; every call that computes something offloaded)
  foreach(tester ${blas_testers})
    if(tester MATCHES "z")
      set(accuracy moduli:16)
    else()
      set(accuracy 7)
    endif()
    add_test(NAME dropin_blas_mock_${tester}
             COMMAND ${CMAKE_COMMAND} -E env OZGEMM_LIBRARY=${mock_lib} OZGEMM_BLAS_MIN_SIZE=0
                     OZGEMM_BLAS_STAGE_BYTES=64 OZGEMM_BLAS_ACCURACY=${accuracy} OZGEMM_EXPECT_OFFLOAD=1
                     OZGEMM_EXPECT_ALL_OFFLOADED=1 bash ${dropin_tests}/run_blas_tester.sh ${blas_lib} ${tester})
    list(APPEND all_dropin_tests dropin_blas_mock_${tester})
  endforeach()
  # The offload's device choice through the library: OZGEMM_DEVICE past the mock's one device is said
  # and every call forwarded (invalid-setting; the tester still passes); a local rank with one visible
  # device runs on device 0, said under the log setting.
  add_test(NAME dropin_blas_mock_device_invalid
           COMMAND ${CMAKE_COMMAND} -E env OZGEMM_LIBRARY=${mock_lib} OZGEMM_BLAS_MIN_SIZE=0 OZGEMM_DEVICE=3
                   bash ${dropin_tests}/expect_lines.sh
                   "OZGEMM_DEVICE=3 is not a device of this process \\(device 0 is the only one visible\\); every DGEMM and ZGEMM goes to the system BLAS"
                   "\"invalid-setting\": [1-9]"
                   -- bash ${dropin_tests}/run_blas_tester.sh ${blas_lib} xblat3d)
  add_test(NAME dropin_blas_mock_device_rank
           COMMAND ${CMAKE_COMMAND} -E env OZGEMM_LIBRARY=${mock_lib} OZGEMM_BLAS_MIN_SIZE=0 LOCAL_RANK=3
                   OZGEMM_EXPECT_OFFLOAD=1 OZGEMM_EXPECT_ALL_OFFLOADED=1 bash ${dropin_tests}/expect_lines.sh
                   "offloads run on device 0 \\(the only visible device\\)"
                   -- bash ${dropin_tests}/run_blas_tester.sh ${blas_lib} xblat3d)
  list(APPEND all_dropin_tests dropin_blas_mock_device_invalid dropin_blas_mock_device_rank)
  if(OZGEMM_SYSTEM_BLAS_LIBRARY)
    foreach(variant mock mock-partial mock-ozaki2 mock-fp64-ozaki2 invalid-setting)
      add_test(NAME dropin_blas_client_${variant}
               COMMAND ${CMAKE_COMMAND} -E env OZGEMM_MOCK_LIBRARY=${mock_lib}
                       bash ${dropin_tests}/run_client.sh ${variant} blas ${blas_lib} $<TARGET_FILE:dropin_blas_client>)
      list(APPEND all_dropin_tests dropin_blas_client_${variant})
    endforeach()
  endif()
  list(APPEND all_dropin_tests ${hook_mock_tests} dropin_hook_mock_nolib dropin_hook_mock_nogpu
                               dropin_hook_real_libozgemm_nogpu)

  # The symmetric Level-3 entry points (hook_symmetric.cpp) on the mocks: FIXED mode (the mock's blocked
  # GEMMs emulate) and FP64 mode (they run native cublasDgemm_v2 through the hook, as internal calls).
  add_executable(dropin_hook_symmetric_mock_client ${mock}/hook_symmetric_mock_client.cpp)
  set_target_properties(dropin_hook_symmetric_mock_client PROPERTIES CXX_STANDARD 17
                                                                     RUNTIME_OUTPUT_DIRECTORY ${PROJECT_BINARY_DIR}/tests/dropin)
  target_include_directories(dropin_hook_symmetric_mock_client PRIVATE ${PROJECT_SOURCE_DIR}/src ${CUDAToolkit_INCLUDE_DIRS})
  target_compile_options(dropin_hook_symmetric_mock_client PRIVATE -ffp-contract=off)
  target_link_libraries(dropin_hook_symmetric_mock_client PRIVATE dropin_mock_cublas ${CMAKE_DL_LIBS})
  add_dependencies(dropin_hook_symmetric_mock_client dropin_mock_ozgemm)
  foreach(mode fixed fp64)
    if(mode STREQUAL "fixed")
      set(accuracy 7)
      set(line "cublasDsyrk_v2 NT m=7 n=7 k=5 -> ozgemm: mock-fused, Ozaki-I 7 slices")
    else()
      set(accuracy fp64)
      set(line "cublasDsymm_v2_64 NN m=8 n=6 k=6 -> ozgemm: native DGEMM \\(FP64 fallback\\)")
    endif()
    add_test(NAME dropin_hook_symmetric_mock_${mode}
             COMMAND ${CMAKE_COMMAND} -E env LD_PRELOAD=${hook_lib} OZGEMM_LIBRARY=${mock_lib} OZGEMM_HOOK_MIN_SIZE=0
                     OZGEMM_HOOK_ACCURACY=${accuracy} OZGEMM_HOOK_LOG=all MOCK_SYMMETRIC_BLOCK=3
                     bash ${dropin_tests}/expect_lines.sh "${line}" "cublasDsyrk_v2 NT m=7 n=7 k=0 -> cuBLAS \\(empty\\)"
                     -- $<TARGET_FILE:dropin_hook_symmetric_mock_client>)
    list(APPEND all_dropin_tests dropin_hook_symmetric_mock_${mode})
  endforeach()

  # numpy from Debian (/usr/bin/python3 + python3-numpy) through the preloaded library.
  add_test(NAME dropin_numpy COMMAND bash ${dropin_tests}/run_numpy.sh ${blas_lib})

  list(APPEND all_dropin_tests dropin_common dropin_device_choice dropin_exports dropin_numpy)
  foreach(t dropin_cublas_linked dropin_cublas_dlopen)
    foreach(variant default min0 off)
      list(APPEND all_dropin_tests ${t}_${variant})
    endforeach()
  endforeach()
  if(OZGEMM_SYSTEM_BLAS_LIBRARY)
    list(APPEND all_dropin_tests dropin_blas_client_default dropin_blas_client_min0 dropin_blas_client_off)
  endif()
  # 77: a prerequisite (a tester, numpy) is missing on this machine.
  set_tests_properties(${all_dropin_tests} PROPERTIES LABELS dropin SKIP_RETURN_CODE 77 TIMEOUT 300)
endif()
