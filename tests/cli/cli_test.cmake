# tests/cli/cli_test.cmake — smoke test of the `ozgemm` command line tool.
#   cmake -DOZGEMM=<path to the ozgemm binary> -P tests/cli/cli_test.cmake
# (registered as the ctest `cli_smoke`). Fails with FATAL_ERROR on the first problem.
cmake_minimum_required(VERSION 3.19)  # string(JSON)

if(NOT DEFINED OZGEMM OR NOT EXISTS "${OZGEMM}")
  message(FATAL_ERROR "cli_test: pass -DOZGEMM=<path to the ozgemm binary> (got '${OZGEMM}')")
endif()

# Runs the tool; sets <prefix>_rc, <prefix>_out, <prefix>_err in the caller's scope.
function(ozgemm_run prefix)
  execute_process(COMMAND "${OZGEMM}" ${ARGN}
                  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err TIMEOUT 600)
  set(${prefix}_rc "${rc}" PARENT_SCOPE)
  set(${prefix}_out "${out}" PARENT_SCOPE)
  set(${prefix}_err "${err}" PARENT_SCOPE)
endfunction()

function(fail what rc out err)
  message(FATAL_ERROR "cli_test: ${what}\n  exit code: ${rc}\n  stdout:\n${out}\n  stderr:\n${err}")
endfunction()

# --- run: exit 0 and an error table -------------------------------------------------------------
ozgemm_run(r run --m 64 --n 48 --k 80)
if(NOT r_rc EQUAL 0)
  fail("'run --m 64 --n 48 --k 80' should exit 0" "${r_rc}" "${r_out}" "${r_err}")
endif()
foreach(word slices normwise componentwise elementwise)
  string(FIND "${r_out}" "${word}" pos)
  if(pos EQUAL -1)
    fail("'run' output has no error table (no '${word}')" "${r_rc}" "${r_out}" "${r_err}")
  endif()
endforeach()
if(NOT r_out MATCHES "[0-9]\\.[0-9]+e[-+][0-9]+")
  fail("'run' output has no error figures" "${r_rc}" "${r_out}" "${r_err}")
endif()

# --- run without a GPU: FP64 mode's decision between the schemes, as an H100 makes it ------------
# (With a GPU `run` takes the GPU path and prints no host decision: these checks need the host path.)
ozgemm_run(rj run --m 64 --n 48 --k 80 --json)
if(NOT rj_rc EQUAL 0)
  fail("'run --json' should exit 0" "${rj_rc}" "${rj_out}" "${rj_err}")
endif()
string(JSON backend ERROR_VARIABLE jerr GET "${rj_out}" backend)
if(backend STREQUAL "host-reference")
  string(JSON dev ERROR_VARIABLE jerr GET "${rj_out}" fp64_decision device_assumed)
  string(JSON s1 ERROR_VARIABLE jerr1 GET "${rj_out}" fp64_decision ozaki1_slices)
  string(JSON s2 ERROR_VARIABLE jerr2 GET "${rj_out}" fp64_decision ozaki2_moduli)
  string(JSON scheme ERROR_VARIABLE jerr3 GET "${rj_out}" fp64_decision scheme)
  string(JSON row0 ERROR_VARIABLE jerr4 GET "${rj_out}" rows 0 method)
  # 64x48x80 is far below the shapes where the H100 emulates: both counts certified, native runs.
  if(jerr OR jerr1 OR jerr2 OR jerr3 OR jerr4 OR NOT dev MATCHES "H100" OR NOT s1 GREATER 0 OR NOT s2 GREATER 1
     OR NOT scheme STREQUAL "native" OR NOT row0 STREQUAL "fp64_mode")
    fail("'run --json' on the host path should give both schemes' certified counts and an H100's choice (native here)"
         "${rj_rc}" "${rj_out}" "${rj_err}")
  endif()
  # The Ozaki-II row at its certified count beside the Ozaki-I sweep.
  string(JSON nrows LENGTH "${rj_out}" rows)
  math(EXPR last "${nrows} - 1")
  set(oz2_rows 0)
  foreach(i RANGE ${last})
    string(JSON method GET "${rj_out}" rows ${i} method)
    if(method STREQUAL "ozaki2")
      string(JSON nm GET "${rj_out}" rows ${i} moduli)
      if(NOT nm EQUAL s2)
        fail("'run --json': the Ozaki-II row should run the certified count ${s2} (got ${nm})" "${rj_rc}" "${rj_out}" "${rj_err}")
      endif()
      math(EXPR oz2_rows "${oz2_rows} + 1")
    endif()
  endforeach()
  if(NOT oz2_rows EQUAL 1)
    fail("'run --json' should have one Ozaki-II row (got ${oz2_rows})" "${rj_rc}" "${rj_out}" "${rj_err}")
  endif()
endif()

# --- accuracy --json: exit 0, stdout is one JSON object with error rows ------------------------
ozgemm_run(a accuracy --m 32 --n 32 --k 64 --json)
if(NOT a_rc EQUAL 0)
  fail("'accuracy --json' should exit 0" "${a_rc}" "${a_out}" "${a_err}")
endif()
string(JSON root_type ERROR_VARIABLE jerr TYPE "${a_out}")
if(jerr OR NOT root_type STREQUAL "OBJECT")
  fail("'accuracy --json' stdout is not a JSON object (${jerr})" "${a_rc}" "${a_out}" "${a_err}")
endif()
string(JSON nrows ERROR_VARIABLE jerr LENGTH "${a_out}" rows)
if(jerr OR nrows LESS 1)
  fail("'accuracy --json' has no rows (${jerr})" "${a_rc}" "${a_out}" "${a_err}")
endif()
math(EXPR last "${nrows} - 1")
set(plain_rows 0)
foreach(i RANGE ${last})
  string(JSON cw_type ERROR_VARIABLE jerr TYPE "${a_out}" rows ${i} componentwise)
  if(jerr OR NOT cw_type MATCHES "^(NUMBER|NULL)$")
    fail("row ${i} of 'accuracy --json' has no 'componentwise' (${jerr})" "${a_rc}" "${a_out}" "${a_err}")
  endif()
  string(JSON method ERROR_VARIABLE jerr GET "${a_out}" rows ${i} method)
  if(method STREQUAL "plain_fp64")
    math(EXPR plain_rows "${plain_rows} + 1")
  endif()
endforeach()
# Default phi list -1,0.5,2,4: one plain FP64 row each.
if(NOT plain_rows EQUAL 4)
  fail("'accuracy --json' should have 4 plain FP64 rows (got ${plain_rows})" "${a_rc}" "${a_out}" "${a_err}")
endif()
# 8 slices on N(0,1) inputs (phi = -1) give an FP64-level componentwise error.
set(found "")
foreach(i RANGE ${last})
  string(JSON sl ERROR_VARIABLE jerr GET "${a_out}" rows ${i} slices)
  string(JSON phi ERROR_VARIABLE jerr2 GET "${a_out}" rows ${i} phi)
  if(NOT jerr AND NOT jerr2 AND sl STREQUAL "8" AND phi EQUAL -1)
    string(JSON found GET "${a_out}" rows ${i} componentwise)
  endif()
endforeach()
if(NOT found MATCHES "^[0-9.]+e-(1[6-9]|[2-9][0-9])$|^0$")
  fail("'accuracy --json': 8 slices at phi=-1 should give a componentwise error below 1e-15 (got '${found}')"
       "${a_rc}" "${a_out}" "${a_err}")
endif()

# --- help ---------------------------------------------------------------------------------------
ozgemm_run(h help)
if(NOT h_rc EQUAL 0 OR NOT h_out MATCHES "usage" OR NOT h_out MATCHES "Ozaki schemes I[^\n]* II")
  fail("'help' should exit 0 and print the usage, naming both schemes" "${h_rc}" "${h_out}" "${h_err}")
endif()
# Per-command help, both spellings: the command's own options only.
foreach(form "help|run" "run|--help")
  string(REPLACE "|" ";" args "${form}")
  ozgemm_run(hc ${args})
  if(NOT hc_rc EQUAL 0 OR NOT hc_out MATCHES "usage: ozgemm run" OR NOT hc_out MATCHES "--variant"
     OR hc_out MATCHES "--residency")
    fail("'${form}' should print run's help (its options, not b2b's)" "${hc_rc}" "${hc_out}" "${hc_err}")
  endif()
endforeach()
ozgemm_run(hm model --help)
if(NOT hm_rc EQUAL 0 OR NOT hm_out MATCHES "usage: ozgemm model" OR hm_out MATCHES "--variant")
  fail("'model --help' should print model's help" "${hm_rc}" "${hm_out}" "${hm_err}")
endif()

# --- bad arguments: exit 2, one line "ozgemm: error: ..." on stderr, nothing on stdout ----------
# One case per element; "|" separates a case's arguments.
set(bad_cases
  "run|--m|-1"
  "run|--slices|0"
  "run|--slices|21"
  "run|--bogus"
  "frobnicate"
  "run|--m"
  "run|--m|abc"
  "accuracy|--transa|X"
  "accuracy|--phi|1,x"
  "run|--alpha|nan"
  "bench|--accumulator|stack"
  "b2b|--type|int4"
  "help|frobnicate"
  "accuracy|--variant|native"
  "model|--phi|2"
  "b2b|--slices|7"
  "b2b|--conv|32x56x56"
  "b2b|--conv|32x56x56x64|--m|100"
  "b2b|--filter|3"
  "b2b|--conv|1x8x8x64|--filter|4"
  "run|--transa|C"
  "run|--imag-scale|2"
  "run|--complex|--scheme|ozaki1"
  "accuracy|--complex|--slices|7"
  "run|--complex|--accuracy|fp64|--moduli|12"
  "run|--complex=1"
  "b2b|--complex"
  "accuracy|--complex|--moduli|1"
)
foreach(case IN LISTS bad_cases)
  string(REPLACE "|" ";" args "${case}")
  string(REPLACE "|" " " shown "${case}")
  ozgemm_run(b ${args})
  if(NOT b_rc EQUAL 2)
    fail("'${shown}' should exit 2" "${b_rc}" "${b_out}" "${b_err}")
  endif()
  if(NOT b_err MATCHES "^ozgemm: error: [^\n]+\n?$")
    fail("'${shown}' should print one line 'ozgemm: error: ...' on stderr" "${b_rc}" "${b_out}" "${b_err}")
  endif()
  if(NOT b_out STREQUAL "")
    fail("'${shown}' should print nothing on stdout" "${b_rc}" "${b_out}" "${b_err}")
  endif()
endforeach()


# --- model --json: 4 datasheet devices x 4 variants, plus a device of one's own -----------------
ozgemm_run(mo model --m 4096 --n 4096 --k 4096 --slices 7 --int8-tops 1450 --bandwidth 3000 --json)
if(NOT mo_rc EQUAL 0)
  fail("'model --json' should exit 0" "${mo_rc}" "${mo_out}" "${mo_err}")
endif()
string(JSON npred ERROR_VARIABLE jerr LENGTH "${mo_out}" predictions)
if(jerr OR NOT npred EQUAL 30)
  fail("'model --json' should give 30 predictions (5 devices x 4 Ozaki-I variants + 5 x 2 Ozaki-II) (${jerr})"
       "${mo_rc}" "${mo_out}" "${mo_err}")
endif()
# The custom device's Ozaki-II rows (last two): 14 moduli, 2*4096^3*14 ops at 1450 TOPS at least
# 1.33 ms; the partially fused one moves a quarter of the planes' bytes, so it is faster.
string(JSON oz2 ERROR_VARIABLE jerr GET "${mo_out}" predictions 28 variant)
string(JSON oz2ms ERROR_VARIABLE jerr2 GET "${mo_out}" predictions 28 ms)
if(jerr OR jerr2 OR NOT oz2 STREQUAL "ozaki2-unfused" OR oz2ms LESS 1.3 OR oz2ms GREATER 2.5)
  fail("'model' custom Ozaki-II prediction out of range: ${oz2} ${oz2ms} ms" "${mo_rc}" "${mo_out}" "${mo_err}")
endif()
string(JSON oz2f ERROR_VARIABLE jerr GET "${mo_out}" predictions 29 variant)
string(JSON oz2fms ERROR_VARIABLE jerr2 GET "${mo_out}" predictions 29 ms)
if(jerr OR jerr2 OR NOT oz2f STREQUAL "ozaki2-partially-fused" OR oz2fms LESS 1.3 OR NOT oz2fms LESS oz2ms)
  fail("'model' custom Ozaki-II partially fused prediction: ${oz2f} ${oz2fms} ms (unfused ${oz2ms})"
       "${mo_rc}" "${mo_out}" "${mo_err}")
endif()
# The custom device's fully fused prediction: 2*4096^3*28 ops at 1450 TOPS dominate (~2.65 ms).
string(JSON ms ERROR_VARIABLE jerr GET "${mo_out}" predictions 18 ms)
string(JSON var ERROR_VARIABLE jerr2 GET "${mo_out}" predictions 18 variant)
if(jerr OR jerr2 OR NOT var STREQUAL "fully-fused" OR ms LESS 2.6 OR ms GREATER 3.0)
  fail("'model' custom fully-fused prediction out of range: ${var} ${ms} ms" "${mo_rc}" "${mo_out}" "${mo_err}")
endif()
ozgemm_run(mb model --int8-tops 1000)
if(NOT mb_rc EQUAL 2)
  fail("'model --int8-tops' without --bandwidth should exit 2" "${mb_rc}" "${mb_out}" "${mb_err}")
endif()

# --- b2b: bad options exit 2 everywhere; without a GPU a one-line error and exit 1 --------------
ozgemm_run(bb b2b --residency bogus)
if(NOT bb_rc EQUAL 2)
  fail("'b2b --residency bogus' should exit 2" "${bb_rc}" "${bb_out}" "${bb_err}")
endif()
ozgemm_run(bg b2b --m 128 --k 64 --n0 64 --n1 64 --iters 2)
if(NOT bg_rc EQUAL 0)
  string(FIND "${bg_err}" "ozgemm: error:" pos)
  if(NOT bg_rc EQUAL 1 OR pos EQUAL -1)
    fail("'b2b' should succeed on a GPU or fail with one error line without one" "${bg_rc}" "${bg_out}" "${bg_err}")
  endif()
endif()

# --- options the host path cannot honour, sizes it cannot finish, inputs that overflow ------------
# With a GPU `run` takes the GPU path and these succeed; without one they must be refused (exit 2,
# one error line) or warned about, never silently ignored.
ozgemm_run(rv run --m 64 --n 48 --k 80 --variant native)
if(NOT rv_rc EQUAL 0)
  if(NOT rv_rc EQUAL 2 OR NOT rv_err MATCHES "--variant does not apply")
    fail("'run --variant native' on the host path should be refused" "${rv_rc}" "${rv_out}" "${rv_err}")
  endif()
endif()
ozgemm_run(rb run --m 4096 --n 4096 --k 4096 --iters 1)
if(NOT rb_rc EQUAL 0)
  if(NOT rb_rc EQUAL 2 OR NOT rb_err MATCHES "would take about [0-9]+ minutes")
    fail("'run' at 4096^3 on the host path should be refused with an estimate" "${rb_rc}" "${rb_out}" "${rb_err}")
  endif()
endif()
ozgemm_run(ri run --m 32 --n 32 --k 32 --phi 700 --slices 8)
if(NOT ri_rc EQUAL 0 OR NOT ri_out MATCHES "Inf/NaN")
  fail("'run --phi 700' should run and report the non-finite inputs" "${ri_rc}" "${ri_out}" "${ri_err}")
endif()

# --- --complex: ZGEMM (the complex Ozaki-II scheme beside plain complex FP64 on the host) -----------------
ozgemm_run(zc run --complex --m 24 --n 20 --k 30 --moduli 16 --transa C --imag-scale 0.5 --json)
if(NOT zc_rc EQUAL 0)
  fail("'run --complex --json' should exit 0" "${zc_rc}" "${zc_out}" "${zc_err}")
endif()
string(JSON zcomplex ERROR_VARIABLE jerr GET "${zc_out}" complex)
string(JSON ztransa ERROR_VARIABLE jerr1 GET "${zc_out}" transa)
string(JSON zbackend ERROR_VARIABLE jerr2 GET "${zc_out}" backend)
if(jerr OR jerr1 OR jerr2 OR NOT zcomplex STREQUAL "ON" OR NOT ztransa STREQUAL "C")
  fail("'run --complex --json' should say \"complex\": true and transa C" "${zc_rc}" "${zc_out}" "${zc_err}")
endif()
if(zbackend STREQUAL "host-reference")
  # 16 moduli: at FP64's level (docs/numerics.md); plain complex FP64 as the last row
  string(JSON zm0 GET "${zc_out}" rows 0 method)
  string(JSON zmod GET "${zc_out}" rows 0 moduli)
  string(JSON zerr GET "${zc_out}" rows 0 componentwise)
  string(JSON zlast GET "${zc_out}" rows 1 method)
  if(NOT zm0 STREQUAL "ozaki2_complex" OR NOT zmod EQUAL 16 OR NOT zlast STREQUAL "plain_fp64" OR zerr GREATER 1e-15)
    fail("'run --complex' on the host: the complex Ozaki-II row at 16 moduli within FP64 accuracy, then plain FP64"
         "${zc_rc}" "${zc_out}" "${zc_err}")
  endif()
endif()
ozgemm_run(za accuracy --complex --m 16 --n 12 --k 20 --moduli 8 --phi 0.5,2 --json)
string(JSON zrows ERROR_VARIABLE jerr LENGTH "${za_out}" rows)
if(NOT za_rc EQUAL 0 OR jerr OR NOT zrows EQUAL 4)
  fail("'accuracy --complex' should give 2 rows per phi (8 moduli, plain FP64)" "${za_rc}" "${za_out}" "${za_err}")
endif()
ozgemm_run(zt accuracy --complex --m 16 --n 12 --k 20 --moduli 12)
if(NOT zt_rc EQUAL 0 OR NOT zt_out MATCHES "ozaki-II complex \\(2M\\), 12 moduli" OR NOT zt_out MATCHES "componentwise")
  fail("'accuracy --complex' should print its table" "${zt_rc}" "${zt_out}" "${zt_err}")
endif()
ozgemm_run(zm model --complex --m 4096 --n 4096 --k 4096 --json)
string(JSON zn ERROR_VARIABLE jerr LENGTH "${zm_out}" predictions)
string(JSON zv0 ERROR_VARIABLE jerr1 GET "${zm_out}" predictions 0 variant)
string(JSON zmod ERROR_VARIABLE jerr2 GET "${zm_out}" moduli)
if(NOT zm_rc EQUAL 0 OR jerr OR jerr1 OR jerr2 OR NOT zn EQUAL 12 OR NOT zv0 STREQUAL "native-zgemm" OR NOT zmod EQUAL 16)
  fail("'model --complex --json' should give 12 predictions (4 devices x native ZGEMM + 2 variants of 2M) at 16 moduli"
       "${zm_rc}" "${zm_out}" "${zm_err}")
endif()
ozgemm_run(zh run --help)
if(NOT zh_out MATCHES "--complex" OR NOT zh_out MATCHES "--imag-scale")
  fail("'run --help' should describe --complex and --imag-scale" "${zh_rc}" "${zh_out}" "${zh_err}")
endif()

message(STATUS "cli_test: all checks passed")
