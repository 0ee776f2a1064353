// tools/cli.hpp — the `ozgemm` command line tool: options, shared helpers and commands.
//
//   ozgemm run       the main job: one emulated DGEMM with its time, TFLOPS and error table
//   ozgemm accuracy  error table over slice counts and input ranges (phi)
//   ozgemm bench     (GPU builds) timings of the variants, tools/bench_cmd.cpp
//   ozgemm help
//
// Files: cli_args.cpp (parsing, usage), cli_common.cpp (problem generation, sampled errors,
// table and JSON output), ozgemm_cli.cpp (main, dispatcher, run, accuracy on the host).
// The GPU parts of `run` and `bench` live in tools/bench_cmd.cpp, compiled only in CUDA builds;
// that file's target defines OZGEMM_HAVE_BENCH_CMD=1 so the dispatcher calls into it.
//
// Errors: bad arguments throw UsageError (exit 2); any other failure is reported as one line
// "ozgemm: error: ..." with exit 1. No exception leaves main().
#pragma once

#include <cstdint>
#include <iosfwd>
#include <stdexcept>
#include <string>
#include <vector>

#include "ozgemm/problem.hpp"
#include "ozgemm/reference.hpp"

#ifndef OZGEMM_HAVE_CUDA
#define OZGEMM_HAVE_CUDA 0
#endif

#if OZGEMM_HAVE_CUDA
#include "ozgemm/ozgemm.h"  // OZGEMM_DEFAULT_SLICES
#endif

namespace ozgemm {
namespace cli {

constexpr int kExitOk = 0;
constexpr int kExitFailure = 1;  // the command ran and failed (allocation, CUDA, ...)
constexpr int kExitUsage = 2;    // bad command line

#if OZGEMM_HAVE_CUDA
constexpr int kDefaultSlices = OZGEMM_DEFAULT_SLICES;
#else
// Same value as OZGEMM_DEFAULT_SLICES in ozgemm/ozgemm.h, which CPU-only builds cannot
// include (it pulls in the CUDA headers). Keep the two equal.
constexpr int kDefaultSlices = 8;
#endif
constexpr int kMaxSlices = 20;  // numerics::kMaxSlices / OZGEMM_MAX_SLICES

// Default problem sizes per path (flags override).
constexpr int64_t kDefaultSizeGpu = 8192;
constexpr int64_t kDefaultSizeHost = 256;
// Slice counts the host tables sweep when --slices is not given.
constexpr int kSweepFirstSlices = 3;
constexpr int kSweepLastSlices = 10;
// Entries of C checked against the double-double reference on large (GPU) problems.
constexpr int kErrorSamples = 256;

// Bad command line: the message becomes "ozgemm: error: <message>", exit code 2.
class UsageError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

enum class Command { Help, Run, Accuracy, Bench, Model, B2b };

// Values equal ozgemmVariant_t (ozgemm.h): static_cast<ozgemmVariant_t>(v) is valid.
enum class CliVariant : int { Auto = 0, Unfused = 1, PartiallyFused = 2, FullyFused = 3, Native = 4 };
const char* variant_name(CliVariant v);  // "auto", "unfused", "partially-fused", "fully-fused", "native"

// Everything the command line says, as plain data. "Not given" values let each command
// choose its own default (e.g. run: 8192^3 on a GPU, 256^3 on the host).
struct CliOptions {
  Command command = Command::Help;
  std::string command_name = "help";

  int64_t m = -1, n = -1, k = -1;  // -1: not given. Given: 0 .. 2^31-1
  int slices = 0;                  // 0: not given (the command sweeps or uses kDefaultSlices); else 1..20
  std::vector<double> phi;         // empty: not given. --phi a,b,c (finite values; < 0 means N(0,1))
  Op transa = Op::N, transb = Op::N;
  double alpha = 1.0, beta = 0.0;  // finite
  uint64_t seed = 42;
  bool json = false;               // one JSON object on stdout, nothing else there
  CliVariant variant = CliVariant::Auto;
  bool variant_given = false;
  int iters = 0;                   // --iters: timed repetitions; 0 = the command's default
  bool help = false;               // --help / -h given after the subcommand
  // model: a device of one's own (0: not given); --int8-tops, --bandwidth (GB/s), --fp64-tflops
  double int8_tops = 0, bandwidth_gbs = 0, fp64_tflops = 0;
  int family = 0;  // --family auto|sm90|portable (values of ozgemmKernelFamily_t)
  int accumulator = 0;  // --accumulator auto|registers|global (values of ozgemmFusedAccumulator_t)
  // b2b: --n0, --n1 (-1: not given), --residency register|shared|both (0 both, 1 register, 2 shared)
  int64_t n0 = -1, n1 = -1;
  int residency = 0;
  bool int8 = false;  // b2b: --type fp16|int8

  bool size_given() const { return m >= 0 || n >= 0 || k >= 0; }
};

// argv[0] is the program name; argv[1] the subcommand. Throws UsageError.
CliOptions parse_args(int argc, const char* const* argv);
std::string usage();

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

// The problem's fields, leading dimensions (tight) and zeroed A, B, C0 of the stored shapes
// that transa/transb imply; the generators below fill them.
HostProblem make_problem_layout(const CliOptions& o, const Sizes& s, double phi);
// A and B from ref::fill_phi(phi), then C0 (also fill_phi(phi)) when beta != 0; one
// std::mt19937_64(seed) drawn in that order.
HostProblem make_problem(const CliOptions& o, const Sizes& s, double phi);

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
// An ErrorMetrics as JSON fields: normwise, componentwise, elementwise, nonfinite_mismatch.
void json_error_fields(Json& j, const ref::ErrorMetrics& e);
// Where a measurement came from: "date" (UTC, today) and "commit" ($OZGEMM_COMMIT, if set).
void json_provenance(Json& j);

// ---------------------------------------------------------------------------------------------
// Commands. Each returns the process exit code; UsageError may escape to the dispatcher.
int cmd_run(const CliOptions& o);
int cmd_accuracy(const CliOptions& o);
// `ozgemm model`: roofline predictions per variant (tools/model_cmd.cpp); no GPU needed.
int cmd_model(const CliOptions& o);
// The host-reference path of `run` (used when there is no GPU). `note` is the line that says
// why (printed first in text mode, a "note" field in JSON).
int run_on_host(const CliOptions& o, const std::string& note);

#if OZGEMM_HAVE_CUDA
// Implemented in tools/bench_cmd.cpp (built with OZGEMM_HAVE_BENCH_CMD=1).
//   cmd_bench:  `ozgemm bench`.
//   run_on_gpu: the GPU path of `ozgemm run` (cmd_run calls it when ozgemm::gpu_available()):
//     default size kDefaultSizeGpu^3 (resolve_sizes(o, kDefaultSizeGpu)), A/B from
//     make_problem, ozgemm timed with CUDA events beside native cuBLAS DGEMM, errors of both
//     from sampled_errors(sample_entries(m, n, kErrorSamples, seed)); text table or --json.
int cmd_bench(const CliOptions& o);
int run_on_gpu(const CliOptions& o);
// `ozgemm b2b` (tools/b2b_cmd.cpp): back-to-back GEMM, fused vs the cuBLASLt pair.
int cmd_b2b(const CliOptions& o);
#endif

// main() body: parse, dispatch, turn every failure into one line and an exit code.
int run_cli(int argc, const char* const* argv);

}  // namespace cli
}  // namespace ozgemm
