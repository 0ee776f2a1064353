// tools/cli_args.cpp — command line parsing and the usage text of `ozgemm`.
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <sstream>

#include "cli.hpp"

namespace ozgemm {
namespace cli {

namespace {

constexpr int64_t kMaxDim = std::numeric_limits<int32_t>::max();  // the GPU API takes int

std::string quoted(const std::string& s) { return "'" + s + "'"; }

// A decimal integer: an optional sign, then digits only.
bool is_integer_text(const std::string& t) {
  const size_t i = (!t.empty() && (t[0] == '+' || t[0] == '-')) ? 1 : 0;
  return t.size() > i && t.find_first_not_of("0123456789", i) == std::string::npos;
}

// Non-negative decimal integer, at most `max`.
int64_t parse_count(const std::string& flag, const std::string& text, int64_t max) {
  if (!is_integer_text(text)) throw UsageError(flag + " needs a non-negative integer (got " + quoted(text) + ")");
  if (text[0] == '-' && text.find_first_not_of('0', 1) != std::string::npos)
    throw UsageError(flag + " must be >= 0 (got " + text + ")");
  errno = 0;
  const unsigned long long v = std::strtoull(text.c_str() + (text[0] == '+' || text[0] == '-' ? 1 : 0), nullptr, 10);
  if (errno == ERANGE || v > static_cast<unsigned long long>(max))
    throw UsageError(flag + " must be <= " + std::to_string(max) + " (got " + text + ")");
  return static_cast<int64_t>(v);
}

uint64_t parse_u64(const std::string& flag, const std::string& text) {
  if (text.empty() || text.find_first_not_of("0123456789") != std::string::npos)
    throw UsageError(flag + " needs a non-negative integer (got " + quoted(text) + ")");
  errno = 0;
  const unsigned long long v = std::strtoull(text.c_str(), nullptr, 10);
  if (errno == ERANGE) throw UsageError(flag + " does not fit 64 bits (got " + text + ")");
  return static_cast<uint64_t>(v);
}

double parse_double(const std::string& flag, const std::string& text) {
  if (text.empty() || std::isspace(static_cast<unsigned char>(text[0])))
    throw UsageError(flag + " needs a number (got " + quoted(text) + ")");
  errno = 0;
  char* end = nullptr;
  const double v = std::strtod(text.c_str(), &end);
  if (end == text.c_str() || *end != '\0') throw UsageError(flag + " needs a number (got " + quoted(text) + ")");
  if (errno == ERANGE && std::fabs(v) > 1.0) throw UsageError(flag + " is out of range (got " + text + ")");
  if (!std::isfinite(v)) throw UsageError(flag + " must be finite (got " + text + ")");
  return v;
}

std::vector<double> parse_double_list(const std::string& flag, const std::string& text) {
  std::vector<double> out;
  size_t start = 0;
  while (true) {
    const size_t comma = text.find(',', start);
    const std::string item = text.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    out.push_back(parse_double(flag, item));
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return out;
}

Op parse_op(const std::string& flag, const std::string& text) {
  if (text == "N" || text == "n") return Op::N;
  if (text == "T" || text == "t") return Op::T;
  throw UsageError(flag + " must be N or T (got " + quoted(text) + ")");
}

CliVariant parse_variant(const std::string& text) {
  for (CliVariant v : {CliVariant::Auto, CliVariant::Unfused, CliVariant::PartiallyFused, CliVariant::FullyFused,
                       CliVariant::Native})
    if (text == variant_name(v)) return v;
  throw UsageError("--variant must be one of auto, unfused, partially-fused, fully-fused, native (got " +
                   quoted(text) + ")");
}

bool parse_command(const std::string& name, Command* c) {
  if (name == "run") *c = Command::Run;
  else if (name == "accuracy") *c = Command::Accuracy;
  else if (name == "bench") *c = Command::Bench;
  else if (name == "model") *c = Command::Model;
  else if (name == "b2b") *c = Command::B2b;
  else if (name == "help" || name == "--help" || name == "-h") *c = Command::Help;
  else return false;
  return true;
}

}  // namespace

const char* variant_name(CliVariant v) {
  switch (v) {
    case CliVariant::Auto: return "auto";
    case CliVariant::Unfused: return "unfused";
    case CliVariant::PartiallyFused: return "partially-fused";
    case CliVariant::FullyFused: return "fully-fused";
    case CliVariant::Native: return "native";
  }
  return "auto";
}

CliOptions parse_args(int argc, const char* const* argv) {
  CliOptions o;
  if (argc < 2) return o;  // no subcommand: help
  const std::string name = argv[1];
  if (!parse_command(name, &o.command)) {
    if (name.rfind("-", 0) == 0)
      throw UsageError("expected a subcommand before " + quoted(name) + " (try 'ozgemm help')");
    throw UsageError("unknown subcommand " + quoted(name) + " (try 'ozgemm help')");
  }
  o.command_name = o.command == Command::Help ? "help" : name;

  for (int i = 2; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg == "-h" || arg == "--help") {
      o.help = true;
      continue;
    }
    if (arg.rfind("--", 0) != 0 || arg.size() == 2) throw UsageError("unexpected argument " + quoted(arg));
    std::string flag = arg, value;
    bool inline_value = false;
    const size_t eq = arg.find('=');
    if (eq != std::string::npos) {
      flag = arg.substr(0, eq);
      value = arg.substr(eq + 1);
      inline_value = true;
    }
    if (flag == "--json") {
      if (inline_value) throw UsageError("--json takes no value");
      o.json = true;
      continue;
    }
    static const char* const kValueFlags[] = {"--m",    "--n",     "--k",    "--slices", "--phi",     "--transa",
                                              "--transb", "--alpha", "--beta", "--seed",   "--variant", "--iters",
                                              "--int8-tops", "--bandwidth", "--fp64-tflops", "--family", "--accumulator", "--type",
                                              "--n0", "--n1", "--residency"};
    bool known = false;
    for (const char* f : kValueFlags) known = known || flag == f;
    if (!known) throw UsageError("unknown option " + quoted(flag) + " (try 'ozgemm help')");
    if (!inline_value) {
      if (i + 1 >= argc) throw UsageError(flag + " needs a value");
      value = argv[++i];
    }
    if (flag == "--m") o.m = parse_count(flag, value, kMaxDim);
    else if (flag == "--n") o.n = parse_count(flag, value, kMaxDim);
    else if (flag == "--k") o.k = parse_count(flag, value, kMaxDim);
    else if (flag == "--slices") {
      if (!is_integer_text(value)) throw UsageError("--slices needs an integer (got " + quoted(value) + ")");
      errno = 0;
      const long long v = std::strtoll(value.c_str(), nullptr, 10);
      if (errno == ERANGE || v < 1 || v > kMaxSlices)
        throw UsageError("--slices must be in 1.." + std::to_string(kMaxSlices) + " (got " + value + ")");
      o.slices = static_cast<int>(v);
    } else if (flag == "--phi") o.phi = parse_double_list(flag, value);
    else if (flag == "--transa") o.transa = parse_op(flag, value);
    else if (flag == "--transb") o.transb = parse_op(flag, value);
    else if (flag == "--alpha") o.alpha = parse_double(flag, value);
    else if (flag == "--beta") o.beta = parse_double(flag, value);
    else if (flag == "--seed") o.seed = parse_u64(flag, value);
    else if (flag == "--variant") {
      o.variant = parse_variant(value);
      o.variant_given = true;
    } else if (flag == "--iters") {
      o.iters = static_cast<int>(parse_count(flag, value, 1000000));
    } else if (flag == "--n0") {
      o.n0 = parse_count(flag, value, kMaxDim);
    } else if (flag == "--n1") {
      o.n1 = parse_count(flag, value, kMaxDim);
    } else if (flag == "--residency") {
      if (value == "both") o.residency = 0;
      else if (value == "register") o.residency = 1;
      else if (value == "shared") o.residency = 2;
      else throw UsageError("--residency must be register, shared or both (got " + quoted(value) + ")");
    } else if (flag == "--family") {
      if (value == "auto") o.family = 0;
      else if (value == "sm90") o.family = 1;
      else if (value == "portable") o.family = 2;
      else throw UsageError("--family must be auto, sm90 or portable (got " + quoted(value) + ")");
    } else if (flag == "--type") {
      if (value == "fp16") o.int8 = false;
      else if (value == "int8") o.int8 = true;
      else throw UsageError("--type must be fp16 or int8 (got " + quoted(value) + ")");
    } else if (flag == "--accumulator") {
      if (value == "auto") o.accumulator = 0;
      else if (value == "registers") o.accumulator = 1;
      else if (value == "global") o.accumulator = 2;
      else throw UsageError("--accumulator must be auto, registers or global (got " + quoted(value) + ")");
    } else if (flag == "--int8-tops" || flag == "--bandwidth" || flag == "--fp64-tflops") {
      const double v = parse_double(flag, value);
      if (!(v > 0)) throw UsageError(flag + " must be > 0 (got " + value + ")");
      (flag == "--int8-tops" ? o.int8_tops : flag == "--bandwidth" ? o.bandwidth_gbs : o.fp64_tflops) = v;
    }
  }
  return o;
}

std::string usage() {
  std::ostringstream u;
  u << "ozgemm — FP64 GEMM emulated on INT8 tensor cores (Ozaki scheme I)\n"
       "\n"
       "usage: ozgemm <command> [options]\n"
       "\n"
       "commands:\n"
       "  run       the main job: one emulated DGEMM with its time, TFLOPS and error table.\n"
       "            GPU: "
    << kDefaultSizeGpu << "^3 beside native cuBLAS DGEMM, errors on " << kErrorSamples
    << " sampled entries.\n"
       "            No GPU: the host reference of the same algorithm on "
    << kDefaultSizeHost << "^3, slices " << kSweepFirstSlices << ".." << kSweepLastSlices
    << ".\n"
       "  accuracy  errors against a double-double reference for slices "
    << kSweepFirstSlices << ".." << kSweepLastSlices
    << "\n"
       "            and several input ranges (phi), beside plain FP64 (default "
    << kDefaultSizeHost << "^3, host)\n"
       "  bench     timings of the GPU variants (GPU builds only)\n"
       "            --family auto|sm90|portable picks the fused kernels (bench, run);\n"
       "            --accumulator auto|registers|global: where fully fused keeps the FP64 sum\n"
       "  b2b       back-to-back GEMM D1 = ReLU(D0 x B1 + beta C1), D0 = ReLU(A0 x B0 + bias): fused\n"
       "            (--residency register|shared|both) vs the cuBLASLt pair; --m M --k K0 --n0 N0 --n1 N1\n"
       "            --type fp16|int8 (int8: D0 requantised with saturation by alpha0 = --alpha)\n"
       "            (default: CUTLASS example 13's 81920 x 576 -> 64 -> 128); verifies and times (GPU builds)\n"
       "  model     roofline prediction per variant for H100, H200, L40S, B200 (no GPU needed);\n"
       "            --int8-tops T --bandwidth GBPS [--fp64-tflops F] adds a device of your own\n"
       "  help      this text\n"
       "\n"
       "options (all commands):\n"
       "  --m M --n N --k K     problem size, C (m x n) = alpha op(A) (m x k) op(B) (k x n) + beta C\n"
       "  --slices S            slice count, 1.."
    << kMaxSlices << " (default: sweep, or " << kDefaultSlices
    << " where one is needed)\n"
       "  --phi P[,P...]        input range: entries (U(0,1)-0.5)*exp(P*N(0,1)); P < 0: N(0,1).\n"
       "                        run: one value (default 0.5); accuracy: a list (default -1,0.5,2,4)\n"
       "  --transa N|T --transb N|T   op(A), op(B) (default N)\n"
       "  --alpha X --beta Y    scalars (default 1 and 0; beta != 0 fills C with random values)\n"
       "  --seed S              random seed (default 42)\n"
       "  --variant V           auto|unfused|partially-fused|fully-fused|native (GPU; default auto)\n"
       "  --iters I             timed repetitions (default: the command's own)\n"
       "  --json                print one JSON object on stdout instead of tables\n"
       "  --help                this text\n"
       "\n"
       "exit codes: 0 ok, 1 the command failed, 2 bad command line\n";
  return u.str();
}

Sizes resolve_sizes(const CliOptions& o, int64_t def) {
  return Sizes{o.m >= 0 ? o.m : def, o.n >= 0 ? o.n : def, o.k >= 0 ? o.k : def};
}

std::string sizes_text(const Sizes& s) {
  if (s.m == s.n && s.n == s.k) return std::to_string(s.m) + "^3";
  return std::to_string(s.m) + "x" + std::to_string(s.n) + "x" + std::to_string(s.k) + " (m x n x k)";
}

}  // namespace cli
}  // namespace ozgemm
