// tools/ozgemm/cli.hpp — the `ozgemm` command line tool: options, shared helpers and commands.
//
//   ozgemm run       the main job: one emulated DGEMM (ZGEMM with --complex) with its time, TFLOPS and errors
//   ozgemm accuracy  error table over slice counts and input ranges (phi)
//   ozgemm model     roofline predictions (no GPU needed)
//   ozgemm bench     (GPU builds) timings of the variants beside native DGEMM
//   ozgemm b2b       (GPU builds) back-to-back GEMM or convolution pair, fused vs unfused
//   ozgemm help [command]
//
// One file per command: main.cpp (dispatcher), args.cpp (parsing, per-command options and help),
// common.cpp (problem generation, sampled errors, table and JSON output), fp64_choice.cpp (FP64
// mode's scheme choice on the host path: the tool's one call into the library's AUTO rules),
// cmd_run.cpp (run; its host path), cmd_accuracy.cpp, cmd_model.cpp; gpu/ holds what needs CUDA
// (cmd_bench.cpp: bench and the GPU path of run; cmd_zgemm.cpp: the same with --complex; cmd_b2b.cpp;
// probes.cpp: copy and INT8 rate probes), compiled only in CUDA builds, where OZGEMM_HAVE_GPU_COMMANDS=1.
// complex.cpp holds the --complex problems, errors and host commands. args.cpp, common.cpp, complex.cpp
// and fp64_choice.cpp form the library ozgemm_cli_common (no CUDA), which the CPU tests link too.
//
// Errors: bad arguments throw UsageError (exit 2); any other failure is reported as one line
// "ozgemm: error: ..." with exit 1. No exception leaves main().
#pragma once

#include <algorithm>
#include <chrono>
#include <complex>
#include <cstdint>
#include <iosfwd>
#include <stdexcept>
#include <string>
#include <vector>

#include "ozgemm/problem.hpp"
#include "ozgemm/reference/accuracy.hpp"
#include "ozgemm/reference/ozaki2_complex.hpp"
#include "ozgemm/reference/reference.hpp"
#include "ozgemm/types.hpp"

#ifndef OZGEMM_HAVE_GPU_COMMANDS
#define OZGEMM_HAVE_GPU_COMMANDS 0
#endif

namespace ozgemm {
namespace cli {

using ozgemm::FusedAccumulator;
using ozgemm::Scheme;
using ozgemm::KernelFamily;
using ozgemm::Variant;

constexpr int kExitOk = 0;
constexpr int kExitFailure = 1;  // the command ran and failed (allocation, CUDA, ...)
constexpr int kExitUsage = 2;    // bad command line

using ozgemm::kDefaultSlices;  // ozgemm/config.h
using ozgemm::kMaxSlices;

// Default problem sizes per path (flags override).
constexpr int64_t kDefaultSizeGpu = 8192;
constexpr int64_t kDefaultSizeHost = 256;
// Slice counts the host tables sweep when --slices is not given.
constexpr int kSweepFirstSlices = 3;
constexpr int kSweepLastSlices = 10;
// Entries of C checked against the double-double reference on large (GPU) problems.
constexpr int kErrorSamples = 256;
// The host path (no GPU) runs the reference of every slice count of the sweep, the double-double
// reference and plain FP64 on the CPU (host_work counts the digit products and flops). It warns
// above kHostWarnSeconds of estimated time and refuses above kHostRefuseSeconds; the estimate takes
// kHostOpsPerSecondPerThread per hardware thread (measured: the 256^3 sweep, 4.2e9 operations, ran
// in 0.6 s on 2 threads of the CI machine, 2026-11-23).
constexpr double kHostOpsPerSecondPerThread = 3.0e9;
constexpr double kHostWarnSeconds = 10.0;
constexpr double kHostRefuseSeconds = 600.0;

// Bad command line: the message becomes "ozgemm: error: <message>", exit code 2.
class UsageError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

enum class Command { Help, Run, Accuracy, Bench, Model, B2b };
// --accuracy: the library's accuracy mode (ozgemmAccuracy_t); Default = the command's own choice.
enum class AccuracyOpt { Default, Fp64, Fixed };


// Everything the command line says, as plain data. "Not given" values let each command
// choose its own default (e.g. run: 8192^3 on a GPU, 256^3 on the host).
struct CliOptions {
  Command command = Command::Help;
  std::string command_name = "help";

  int64_t m = -1, n = -1, k = -1;  // -1: not given. Given: 0 .. 2^31-1
  int slices = 0;                  // 0: not given (the command sweeps or uses kDefaultSlices); else 1..20
  AccuracyOpt accuracy = AccuracyOpt::Default;  // --accuracy fp64|fixed
  Scheme scheme = Scheme::Auto;  // --scheme auto|ozaki1|ozaki2
  int moduli = 0;                  // --moduli N (Ozaki-II); 0: not given
  std::vector<double> phi;         // empty: not given. --phi a,b,c (finite values; < 0 means N(0,1))
  Op transa = Op::N, transb = Op::N;
  bool conj_a = false, conj_b = false;  // --transa C / --transb C (with --complex): conjugate transposes (transa T)
  bool complex = false;            // --complex: ZGEMM (complex128) instead of DGEMM
  double imag_scale = 1.0;         // --imag-scale: imaginary parts = imag_scale * the phi family (0: real data)
  double alpha = 1.0, beta = 0.0;  // finite
  uint64_t seed = 42;
  bool json = false;               // one JSON object on stdout, nothing else there
  Variant variant = Variant::Auto;  // ozgemm/types.hpp
  bool variant_given = false;
  int iters = 0;                   // --iters: timed repetitions; 0 = the command's default
  bool help = false;               // --help / -h given after the subcommand
  // model: a device of one's own (0: not given); --int8-tops, --bandwidth (GB/s), --fp64-tflops
  double int8_tops = 0, bandwidth_gbs = 0, fp64_tflops = 0;
  KernelFamily family = KernelFamily::Auto;              // --family auto|sm90|portable
  FusedAccumulator accumulator = FusedAccumulator::Auto;  // --accumulator auto|registers|global
  std::vector<std::string> given;  // every option given, as spelled (for the per-command checks)
  // b2b: --n0, --n1 (-1: not given), --residency register|shared|both (0 both, 1 register, 2 shared)
  int64_t n0 = -1, n1 = -1;
  int residency = 0;
  bool int8 = false;  // b2b: --type fp16|int8
  std::vector<int64_t> conv;  // b2b: --conv N x H x W x C (empty: a GEMM pair)
  int filter = 0;             // b2b: --filter R, conv 0's filter size (0: not given, 3)

  bool size_given() const { return m >= 0 || n >= 0 || k >= 0; }
};

// argv[0] is the program name; argv[1] the subcommand. Throws UsageError, also for an option the
// command does not take.
CliOptions parse_args(int argc, const char* const* argv);
// The overview (all commands), or one command's help.
std::string usage();
std::string command_help(Command c);
// Throws UsageError when any of `flags` was given ("... does not apply: <why>").
void reject_options(const CliOptions& o, const std::vector<std::string>& flags, const std::string& why);

// The accuracy mode a GPU command runs in: --accuracy, else FIXED when --slices is given, else the
// command's default (run: FP64, the library's default; bench: FIXED at kDefaultSlices).
AccuracyOpt resolved_accuracy(const CliOptions& o);

// Resolved sizes: each of m, n, k not given takes `def`.
struct Sizes {
  int64_t m, n, k;
};
Sizes resolve_sizes(const CliOptions& o, int64_t def);
std::string sizes_text(const Sizes& s);  // "256^3" or "64x48x80 (m x n x k)"

// ---------------------------------------------------------------------------------------------
// Problem data (host, column-major, BLAS leading dimensions: lda = rows of A as stored, ...).
struct HostProblem {
  Op transa = Op::N, transb = Op::N;
  int64_t m = 0, n = 0, k = 0;
  int64_t lda = 1, ldb = 1, ldc = 1;
  double alpha = 1.0, beta = 0.0, phi = 0.5;
  uint64_t seed = 42;
  std::vector<double> A, B, C0;  // C0: the C input (all zero when beta == 0)
};

// Entries of A and B (and C0) that are Inf or NaN: the phi family overflows for large phi
// (exp(phi * N(0,1)) > DBL_MAX once phi * N > 709).
int64_t nonfinite_inputs(const HostProblem& p);
// One line warning about non-finite inputs and results, or "" when there are none.
std::string nonfinite_note(const HostProblem& p, const ref::ErrorMetrics& e);

// The problem's fields, leading dimensions (tight) and zeroed A, B, C0 of the stored shapes
// that transa/transb imply; make_problem fills them.
HostProblem make_problem_layout(const CliOptions& o, const Sizes& s, double phi);

// Which matrix of a problem a generator fills (part of each block's seed); the Imag ones are the
// imaginary parts of --complex problems.
enum class GenMatrix : uint32_t { A = 1, B = 2, C0 = 3, AImag = 4, BImag = 5, C0Imag = 6 };
// Columns of one generator block: as many as hold about kGenBlockEntries entries (at least one).
constexpr int64_t kGenBlockEntries = int64_t(1) << 18;
int64_t gen_block_cols(int64_t rows);
// Fills the rows x cols column-major matrix at `a` (leading dimension ld) by ref::fill_phi(phi), in
// blocks of gen_block_cols(rows) columns, each from its own std::mt19937_64 seeded by
// std::seed_seq{seed, matrix, block}: the values depend on (seed, matrix, rows, entry) only, never
// on `threads`, the number of threads that fill the blocks (0: hardware_concurrency).
void fill_phi_blocks(double* a, int64_t rows, int64_t cols, int64_t ld, double phi, uint64_t seed, GenMatrix matrix,
                     unsigned threads = 0);
// A and B from fill_phi_blocks(phi, seed), then C0 (also fill_phi_blocks(phi)) when beta != 0. Every
// command draws its matrices here, so `run`, `bench` and `accuracy` with the same seed and shape get
// the same A and B on any machine.
HostProblem make_problem(const CliOptions& o, const Sizes& s, double phi, unsigned threads = 0);

// ---------------------------------------------------------------------------------------------
// Helpers of the host commands (run without a GPU, accuracy).

// The slice counts a host table covers: --slices, or kSweepFirstSlices..kSweepLastSlices.
std::vector<int> slice_sweep(const CliOptions& o);
// The moduli counts a host table of Ozaki-II covers: --moduli, or a spread from 8 to kMaxModuli.
std::vector<int> moduli_sweep(const CliOptions& o);
double flops(const Sizes& s);  // 2 m n k
// Estimated host work (digit products and flops) of one table row set: the Ozaki-I reference at
// each slice count of `slices` and the Ozaki-II reference at each count of `moduli` `reps` times,
// the double-double reference once and plain FP64 `reps` times.
double host_work(const Sizes& s, const std::vector<int>& slices, const std::vector<int>& moduli, int reps);

// FP64 mode's choice between native DGEMM and the schemes at their certified counts, made as the
// GPU makes it (src/plan/call_planner.cpp, step 3): a scheme is a candidate where the handle's scheme
// (`allowed`; Auto: both) permits it, a count meets the bound (slices / moduli > 0) and its AUTO
// rule says it beats native DGEMM there (Ozaki-I: auto_variant not Native; Ozaki-II: auto_ozaki2);
// of two candidates Ozaki-II runs when its expected_tflops is higher. The rules are evaluated for
// the device fp64_choice_device() describes: the choice is the one that GPU makes.
// (fp64_choice.cpp: the tool's one call into src/plan/auto_rules.hpp, where plan_call could take
// its place.)
enum class Fp64Path { Native, Ozaki1, Ozaki2 };
struct Fp64Choice {
  Fp64Path path = Fp64Path::Native;
  int count = 0;       // slices (Ozaki1) or moduli (Ozaki2); 0 for native DGEMM
  std::string reason;  // why native DGEMM, or which other scheme also met the bound
};
Fp64Choice choose_fp64_scheme(const Sizes& s, Scheme allowed, int slices, int moduli);
const char* fp64_choice_device();  // "an H100 SXM (...)"

// FP64 mode on the host: the decisions (ref::decide_slices for Ozaki-I, ref::decide_moduli for
// Ozaki-II, each where `allowed` permits it), the choice (choose_fp64_scheme), then that scheme's
// host reference at its count, or plain FP64 standing for native DGEMM; timed together.
struct HostFp64 {
  bool oz1_decided = false, oz2_decided = false;  // the decisions `allowed` asked for
  ref::AccuracyDecision oz1;  // slices 0: no count up to kMaxSlices meets the target
  ref::Ozaki2Decision oz2;    // moduli 0: no count up to kMaxModuli meets the target
  Fp64Choice choice;
  double ms = 0;
  ref::ErrorMetrics err;
};
HostFp64 run_fp64_host(const HostProblem& p, const ref::AccurateResult& acc, Scheme allowed, int iters);
// "FP64 mode (ozaki-I 7)", "FP64 mode (ozaki-II 14)" or "FP64 mode (native)".
std::string fp64_label(const HostFp64& f);
// Each decided scheme's certified count and bound against the target, e.g. "ozaki-I 7 (bound 2.1),
// ozaki-II 14 (bound 1.3) <= 4", "ozaki-I: none up to 20 meets 4".
std::string fp64_bound_text(const HostFp64& f);

// "C = alpha*op(A)*op(B) + beta*C with m=... seed S"
std::string problem_line(const Sizes& s, const CliOptions& o);
// "8*" for the default slice count, "7 " otherwise.
std::string slices_cell(int s);

// Runs `gemm` (which writes C) on a fresh copy of C0 and times it: `iters` repetitions when
// given, otherwise once, repeated (up to 5 in all) while the runs are short. Returns the
// fastest time in ms; C holds the result.
template <class T, class Gemm>
double time_host_gemm(const std::vector<T>& C0, std::vector<T>& C, int iters, Gemm gemm) {
  using clock = std::chrono::steady_clock;
  double best = 0.0, total = 0.0;
  for (int it = 0;; ++it) {
    C = C0;
    const auto t0 = clock::now();
    gemm(C.data());
    const double ms = std::chrono::duration<double, std::milli>(clock::now() - t0).count();
    best = it == 0 ? ms : std::min(best, ms);
    total += ms;
    if (iters > 0 ? it + 1 >= iters : (it + 1 >= 5 || total >= 200.0)) break;
  }
  return best;
}

// ---------------------------------------------------------------------------------------------
// Errors on a sample of entries, for problems too large for the full host reference.
struct Entry {
  int64_t row, col;
};
// `count` distinct entries of an m x n matrix chosen at random (all of them when m*n <= count).
std::vector<Entry> sample_entries(int64_t m, int64_t n, int count, uint64_t seed);
// The errors of C (leading dimension ldc) against the double-double reference on the sampled
// entries only: each entry's value comes from ref::accurate_gemm of its row of op(A) and
// column of op(B) (a 1 x 1 x k problem), so the definitions are exactly ref::compare's:
// componentwise max |C - Cref| / (|alpha||A||B| + |beta||C0|)_ij, elementwise max
// |C - Cref| / |Cref|, normwise ||C - Cref||_F / ||Cref||_F restricted to the sample.
ref::ErrorMetrics sampled_errors(const HostProblem& p, const double* C, int64_t ldc, const std::vector<Entry>& entries);

// ---------------------------------------------------------------------------------------------
// Output helpers.

std::string fmt_sci(double v, int digits = 3);  // "1.234e-16"; "inf", "nan"
std::string fmt_fixed(double v, int decimals);  // "12.345"
std::string fmt_g(double v);                    // shortest "%g"-like text, for phi/alpha/beta

// An aligned text table: first column left-aligned, the others right-aligned.
class TextTable {
 public:
  explicit TextTable(std::vector<std::string> header);
  void add_row(std::vector<std::string> cells);
  void add_separator();  // a blank line between groups
  void print(std::ostream& os, const std::string& indent = "  ") const;

 private:
  std::vector<std::string> header_;
  std::vector<std::vector<std::string>> rows_;  // an empty row is a separator
};

// A minimal JSON writer (no pretty printing). Non-finite numbers are written as null.
class Json {
 public:
  Json& begin_object();
  Json& end_object();
  Json& begin_array();
  Json& end_array();
  Json& key(const std::string& k);
  Json& value(const std::string& s);
  Json& value(const char* s);
  Json& value(double v);
  Json& value(int64_t v);
  Json& value(int v) { return value(static_cast<int64_t>(v)); }
  Json& value(uint64_t v);
  Json& value(bool b);
  Json& null();
  template <class T>
  Json& field(const std::string& k, const T& v) {
    key(k);
    return value(v);
  }
  const std::string& str() const { return out_; }

 private:
  void sep();
  std::string out_;
  std::vector<bool> first_;  // per open container: no element written yet
  bool after_key_ = false;
};
std::string json_escape(const std::string& s);

// The problem's description as JSON fields (m, n, k, transa, transb, alpha, beta, seed, ...).
void json_problem_fields(Json& j, const Sizes& s, const CliOptions& o);
// An ErrorMetrics as JSON fields: normwise, componentwise, elementwise, nonfinite_mismatch, compared.
void json_error_fields(Json& j, const ref::ErrorMetrics& e);
// A host table row's last fields, time_ms, gflops and the errors, and the end of its object.
void json_timed_row_end(Json& j, double ms, double gflops, const ref::ErrorMetrics& e);
// Where a measurement came from: "date" (UTC, today) and "commit" ($OZGEMM_COMMIT, if set).
void json_provenance(Json& j);

// ---------------------------------------------------------------------------------------------
// --complex problems (complex.cpp): complex128 matrices, column-major with the leading dimensions of
// the real problem of the same options (each element std::complex<double>, cuDoubleComplex's layout).
using zcomplex = std::complex<double>;
struct ComplexProblem {
  HostProblem re;  // the real parts: make_problem's A, B, C0 (a real run's matrices with the same options)
  ref::ComplexOp opa = ref::ComplexOp::N, opb = ref::ComplexOp::N;  // N, T or C (--transa C)
  double imag_scale = 1.0;
  zcomplex alpha{1.0, 0.0}, beta{0.0, 0.0};
  std::vector<zcomplex> A, B, C0;  // real parts re.A, ...; imaginary parts imag_scale * fill_phi_blocks(phi)
};
// Real parts from make_problem; imaginary parts from fill_phi_blocks(phi, seed, GenMatrix::AImag, ...)
// scaled by o.imag_scale (C0's only when beta != 0). alpha and beta are real (--alpha, --beta).
ComplexProblem make_complex_problem(const CliOptions& o, const Sizes& s, double phi, unsigned threads = 0);
char complex_op_char(ref::ComplexOp op);  // 'N', 'T', 'C'
// The errors of C (leading dimension ldc) against alpha (AB) + beta C0 with op(A) op(B) from
// ref::accurate_zgemm (double-double) on the given entries (each a 1 x 1 x k problem), with the
// complex modulus: componentwise max |C - Cref| / (|alpha| (|A||B|) + |beta| |C0|), elementwise
// max |C - Cref| / |Cref|, normwise over the entries; ref::compare's conventions otherwise.
ref::ErrorMetrics complex_errors_on(const ComplexProblem& p, const zcomplex* C, int64_t ldc,
                                    const std::vector<Entry>& entries);
// Every entry of an m x n matrix, column by column.
std::vector<Entry> all_entries(int64_t m, int64_t n);
double complex_flops(const Sizes& s);  // 8 m n k: a complex multiply-add is 4 real multiplies and 4 adds
// The host paths of `run --complex` (the complex Ozaki-II reference over --moduli or a sweep, beside
// plain complex FP64, which stands for native ZGEMM) and `accuracy --complex`.
int run_complex_on_host(const CliOptions& o, const std::string& note);
int cmd_accuracy_complex(const CliOptions& o);
// "complex": true, "imag_scale" and the ops with C as JSON fields.
void json_complex_fields(Json& j, const CliOptions& o);

// ---------------------------------------------------------------------------------------------
// Commands. Each returns the process exit code; UsageError may escape to the dispatcher.
int cmd_run(const CliOptions& o);
int cmd_accuracy(const CliOptions& o);
// The host path's estimated seconds for `work` digit products / flops (kHostOpsPerSecondPerThread); warns
// on stderr above kHostWarnSeconds, throws UsageError above kHostRefuseSeconds.
void check_host_work(double work, const std::string& what);
// `ozgemm model`: roofline predictions per variant (tools/model_cmd.cpp); no GPU needed.
int cmd_model(const CliOptions& o);
// The host-reference path of `run` (used when there is no GPU). `note` is the line that says
// why (printed first in text mode, a "note" field in JSON). GPU-only options are rejected.
int run_on_host(const CliOptions& o, const std::string& note);

#if OZGEMM_HAVE_GPU_COMMANDS
// Implemented in tools/ozgemm/gpu/ (CUDA builds).
//   cmd_bench:  `ozgemm bench`.
//   run_on_gpu: the GPU path of `ozgemm run` (cmd_run calls it when ozgemm::gpu_available()):
//     default size kDefaultSizeGpu^3 (resolve_sizes(o, kDefaultSizeGpu)), A/B from
//     make_problem, ozgemm timed with CUDA events beside native cuBLAS DGEMM, errors of both
//     from sampled_errors(sample_entries(m, n, kErrorSamples, seed)); text table or --json.
int cmd_bench(const CliOptions& o);
int run_on_gpu(const CliOptions& o);
// --complex (gpu/cmd_zgemm.cpp): ozgemmZgemm beside native cublasZgemm, timed as bench times (CUDA
// events, warm-up, median), TFLOPS = 8 m n k / time, errors on sampled entries (complex_errors_on);
// `bench`: the command's defaults (FIXED mode at --moduli, default OZGEMM_DEFAULT_COMPLEX_MODULI),
// else run's (FP64 mode, the library's default).
int run_complex_on_gpu(const CliOptions& o, bool bench);
// `ozgemm b2b` (gpu/cmd_b2b.cpp): back-to-back GEMM, fused vs the cuBLASLt pair.
int cmd_b2b(const CliOptions& o);
#endif

// main() body: parse, dispatch, turn every failure into one line and an exit code.
int run_cli(int argc, const char* const* argv);

}  // namespace cli
}  // namespace ozgemm
