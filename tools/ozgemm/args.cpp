// tools/ozgemm/args.cpp — command line parsing, the options each command takes, and the help texts.
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

// N or T; C (the conjugate transpose: Op::T with *conj set) where `conj` is given.
Op parse_op(const std::string& flag, const std::string& text, bool* conj) {
  *conj = false;
  if (text == "N" || text == "n") return Op::N;
  if (text == "T" || text == "t") return Op::T;
  if (text == "C" || text == "c") {
    *conj = true;
    return Op::T;
  }
  throw UsageError(flag + " must be N, T or C (got " + quoted(text) + ")");
}

Variant parse_variant_flag(const std::string& text) {
  Variant v;
  if (!parse_variant(text.c_str(), &v))
    throw UsageError("--variant must be one of auto, unfused, partially-fused, fully-fused, native (got " +
                     quoted(text) + ")");
  return v;
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

// The options each command takes (besides --help and --json, which every command takes).
struct CommandSpec {
  Command command;
  const char* name;
  std::vector<std::string> flags;
};
const std::vector<CommandSpec>& command_specs() {
  static const std::vector<CommandSpec> specs = {
      {Command::Run, "run",
       {"--m", "--n", "--k", "--slices", "--accuracy", "--scheme", "--moduli", "--phi", "--transa", "--transb", "--alpha",
        "--beta", "--seed", "--variant", "--iters", "--family", "--accumulator", "--complex", "--imag-scale"}},
      {Command::Accuracy, "accuracy",
       {"--m", "--n", "--k", "--slices", "--scheme", "--moduli", "--phi", "--transa", "--transb", "--alpha", "--beta",
        "--seed", "--complex", "--imag-scale"}},
      {Command::Bench, "bench",
       {"--m", "--n", "--k", "--slices", "--accuracy", "--scheme", "--moduli", "--phi", "--transa", "--transb", "--alpha",
        "--beta", "--seed", "--variant", "--iters", "--family", "--accumulator", "--complex", "--imag-scale"}},
      {Command::Model, "model",
       {"--m", "--n", "--k", "--slices", "--scheme", "--moduli", "--beta", "--int8-tops", "--bandwidth", "--fp64-tflops",
        "--complex"}},
      {Command::B2b, "b2b",
       {"--m", "--k", "--n0", "--n1", "--alpha", "--beta", "--phi", "--seed", "--iters", "--residency", "--type", "--conv",
        "--filter"}},
      {Command::Help, "help", {}},
  };
  return specs;
}
const CommandSpec& spec_of(Command c) {
  for (const auto& s : command_specs())
    if (s.command == c) return s;
  return command_specs().back();
}

}  // namespace

void reject_options(const CliOptions& o, const std::vector<std::string>& flags, const std::string& why) {
  for (const auto& f : flags)
    for (const auto& g : o.given)
      if (f == g) throw UsageError(f + " does not apply: " + why);
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
  // `ozgemm help <command>`: that command's help.
  if (o.command == Command::Help && argc >= 3) {
    const std::string topic = argv[2];
    if (!parse_command(topic, &o.command) || o.command == Command::Help)
      throw UsageError("unknown command " + quoted(topic) + " (try 'ozgemm help')");
    if (argc > 3) throw UsageError("unexpected argument " + quoted(argv[3]));
    o.command_name = topic;
    o.help = true;
    return o;
  }

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
    bool known = false, here = false;
    for (const auto& s : command_specs())
      for (const auto& f : s.flags) {
        known = known || flag == f;
        here = here || (flag == f && s.command == o.command);
      }
    if (!known) throw UsageError("unknown option " + quoted(flag) + " (try 'ozgemm help')");
    if (!here)
      throw UsageError(flag + " does not apply to '" + o.command_name + "' (try 'ozgemm help " + o.command_name + "')");
    o.given.push_back(flag);
    if (flag == "--complex") {  // a switch: no value
      if (inline_value) throw UsageError("--complex takes no value");
      o.complex = true;
      continue;
    }
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
    else if (flag == "--transa") o.transa = parse_op(flag, value, &o.conj_a);
    else if (flag == "--transb") o.transb = parse_op(flag, value, &o.conj_b);
    else if (flag == "--imag-scale") o.imag_scale = parse_double(flag, value);
    else if (flag == "--alpha") o.alpha = parse_double(flag, value);
    else if (flag == "--beta") o.beta = parse_double(flag, value);
    else if (flag == "--seed") o.seed = parse_u64(flag, value);
    else if (flag == "--variant") {
      o.variant = parse_variant_flag(value);
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
    } else if (flag == "--accuracy") {
      if (value == "fp64") o.accuracy = AccuracyOpt::Fp64;
      else if (value == "fixed") o.accuracy = AccuracyOpt::Fixed;
      else throw UsageError("--accuracy must be fp64 or fixed (got " + quoted(value) + ")");
    } else if (flag == "--scheme") {
      if (value == "ozaki1") o.scheme = Scheme::Ozaki1;
      else if (value == "ozaki2") o.scheme = Scheme::Ozaki2;
      else if (value == "auto") o.scheme = Scheme::Auto;
      else throw UsageError("--scheme must be auto, ozaki1 or ozaki2 (got " + quoted(value) + ")");
    } else if (flag == "--moduli") {
      const int64_t v = parse_count(flag, value, ozgemm::kMaxModuli);
      if (v < ozgemm::kMinModuli)
        throw UsageError("--moduli must be in " + std::to_string(ozgemm::kMinModuli) + ".." +
                         std::to_string(ozgemm::kMaxModuli) + " (got " + value + ")");
      o.moduli = static_cast<int>(v);
    } else if (flag == "--family") {
      if (!parse_family(value.c_str(), &o.family))
        throw UsageError("--family must be auto, sm90 or portable (got " + quoted(value) + ")");
    } else if (flag == "--type") {
      if (value == "fp16") o.int8 = false;
      else if (value == "int8") o.int8 = true;
      else throw UsageError("--type must be fp16 or int8 (got " + quoted(value) + ")");
    } else if (flag == "--conv") {
      // N x H x W x C, as "32x56x56x64"
      o.conv.clear();
      size_t start = 0;
      while (true) {
        const size_t x = value.find('x', start);
        o.conv.push_back(parse_count(flag, value.substr(start, x == std::string::npos ? x : x - start), kMaxDim));
        if (x == std::string::npos) break;
        start = x + 1;
      }
      if (o.conv.size() != 4) throw UsageError("--conv needs NxHxWxC, e.g. 32x56x56x64 (got " + quoted(value) + ")");
    } else if (flag == "--filter") {
      const int64_t r = parse_count(flag, value, 99);
      if (r % 2 == 0) throw UsageError("--filter must be odd (got " + value + ")");
      o.filter = static_cast<int>(r);
    } else if (flag == "--accumulator") {
      if (!parse_accumulator(value.c_str(), &o.accumulator))
        throw UsageError("--accumulator must be auto, registers or global (got " + quoted(value) + ")");
    } else if (flag == "--int8-tops" || flag == "--bandwidth" || flag == "--fp64-tflops") {
      const double v = parse_double(flag, value);
      if (!(v > 0)) throw UsageError(flag + " must be > 0 (got " + value + ")");
      (flag == "--int8-tops" ? o.int8_tops : flag == "--bandwidth" ? o.bandwidth_gbs : o.fp64_tflops) = v;
    }
  }
  if (!o.conv.empty() && (o.m >= 0 || o.k >= 0))
    throw UsageError("--conv sets m (n * h * w) and k (r * r * c) itself; --m and --k go with GEMM pairs");
  if (o.conv.empty() && o.filter > 0) throw UsageError("--filter goes with --conv");
  if (o.complex) {
    // Complex products run the complex Ozaki-II scheme (FIXED mode) or native ZGEMM: no Ozaki-I options.
    if (o.scheme == Scheme::Ozaki1) throw UsageError("--scheme ozaki1 has no complex form; --complex takes --moduli");
    if (o.slices > 0) throw UsageError("--slices is the Ozaki-I count; --complex takes --moduli");
    if (o.accuracy == AccuracyOpt::Fp64 && o.moduli > 0)
      throw UsageError("--accuracy fp64 runs native ZGEMM for complex data; --moduli goes with --accuracy fixed");
  } else {
    if (o.conj_a || o.conj_b) throw UsageError("--transa C / --transb C (conjugate transpose) go with --complex");
    for (const auto& g : o.given)
      if (g == "--imag-scale") throw UsageError("--imag-scale goes with --complex");
  }
  if (o.moduli > 0 && o.scheme != Scheme::Ozaki2 && o.command != Command::Model && !o.complex)
    throw UsageError("--moduli goes with --scheme ozaki2 (or --complex)");
  if (o.scheme == Scheme::Ozaki2 && o.slices > 0) throw UsageError("--scheme ozaki2 takes --moduli, not --slices");
  if (o.moduli > 0 && o.accuracy == AccuracyOpt::Fp64)
    throw UsageError("--accuracy fp64 chooses the moduli count itself; --moduli goes with --accuracy fixed");
  if (o.accuracy == AccuracyOpt::Fp64 && o.slices > 0)
    throw UsageError("--accuracy fp64 chooses the slice count itself; --slices goes with --accuracy fixed");
  return o;
}

namespace {
// The per-option lines of the help texts.
std::string option_help(const std::string& flag) {
  std::ostringstream u;
  if (flag == "--m") u << "  --m M --n N --k K     problem size, C (m x n) = alpha op(A) (m x k) op(B) (k x n) + beta C\n";
  else if (flag == "--slices")
    u << "  --slices S            slice count, 1.." << kMaxSlices << " (default: sweep, or " << kDefaultSlices
      << " where one is needed)\n";
  else if (flag == "--phi")
    u << "  --phi P[,P...]        input range: entries (U(0,1)-0.5)*exp(P*N(0,1)); P < 0: N(0,1)\n"
         "                        (large P overflows to Inf; such inputs are reported)\n";
  else if (flag == "--transa") u << "  --transa N|T|C --transb N|T|C   op(A), op(B) (default N; C, the conjugate transpose, with --complex)\n";
  else if (flag == "--complex")
    u << "  --complex             complex FP64 (ZGEMM, ozgemmZgemm): the complex Ozaki-II scheme (2M: two INT8 products\n"
         "                        per modulus; FIXED mode, --moduli N, default " << kDefaultComplexModuli
      << ") or native ZGEMM (FP64 mode);\n"
         "                        TFLOPS count 8mnk; errors use the complex modulus\n";
  else if (flag == "--imag-scale")
    u << "  --imag-scale S        --complex: imaginary parts S x the --phi family (default 1; 0: real data)\n";
  else if (flag == "--alpha") u << "  --alpha X --beta Y    scalars (default 1 and 0; beta != 0 fills C with random values)\n";
  else if (flag == "--seed")
    u << "  --seed S              random seed (default 42); the same matrices on any machine and core count\n";
  else if (flag == "--accuracy")
    u << "  --accuracy A          fp64: the scheme and count chosen from the data with a proven bound, or native\n"
         "                        DGEMM (the library's default); fixed: --slices as given (default " << kDefaultSlices
      << ")\n";
  else if (flag == "--scheme")
    u << "  --scheme S            auto (default: FP64 mode takes the faster scheme that meets the bound; FIXED mode\n"
         "                        Ozaki-I), ozaki1 (slices) or ozaki2 (integer CRT; FIXED: --moduli N, 2..20, default 14)\n";
  else if (flag == "--variant")
    u << "  --variant V           auto|unfused|partially-fused|fully-fused|native (GPU only; run: auto,\n"
         "                        the library's default; bench: unfused)\n";
  else if (flag == "--family") u << "  --family F            auto|sm90|portable: the fused kernels (GPU only)\n";
  else if (flag == "--accumulator")
    u << "  --accumulator A       auto|registers|global: where fully fused keeps the FP64 sum (GPU only)\n";
  else if (flag == "--iters") u << "  --iters I             timed repetitions (default: the command's own)\n";
  else if (flag == "--int8-tops")
    u << "  --int8-tops T --bandwidth GBPS [--fp64-tflops F]   a device of your own beside the datasheet ones\n";
  else if (flag == "--n0") u << "  --n0 N0 --n1 N1       widths of D0 and D1 (64, 128 or 256; n0 also a multiple of 128 above 256)\n";
  else if (flag == "--residency") u << "  --residency R         register|shared|both: where the fused kernel keeps D0 (default both)\n";
  else if (flag == "--type") u << "  --type T              fp16|int8 (int8: D0 requantised with saturation by alpha0 = --alpha)\n";
  else if (flag == "--conv")
    u << "  --conv NxHxWxC        a convolution pair instead: NHWC input, conv 0 r x r (--filter R, default 3,\n"
         "                        stride 1, padding r/2) to --n0 channels, conv 1 1 x 1 to --n1 channels\n";
  return u.str();  // --n, --k, --transb, --beta, --bandwidth, ... are described with their partner
}

const char* summary(Command c) {
  switch (c) {
    case Command::Run: return "the main job: one DGEMM as the library runs it, with its time, TFLOPS and error table";
    case Command::Accuracy: return "errors against a double-double reference over slice counts and input ranges (host)";
    case Command::Bench: return "timings of the GPU variants beside native cuBLAS DGEMM (GPU builds)";
    case Command::Model: return "roofline prediction per variant for H100, H200, L40S, B200 (no GPU needed)";
    case Command::B2b: return "back-to-back GEMM or convolution pair, fused vs unfused (GPU builds)";
    case Command::Help: return "this text, or one command's help (ozgemm help <command>)";
  }
  return "";
}

std::string details(Command c) {
  std::ostringstream u;
  switch (c) {
    case Command::Run:
      u << "Runs what the library runs by default: FP64 mode (the scheme and count chosen from the data with a\n"
           "proven bound, or native DGEMM) with variant auto, unless --accuracy, --slices, --moduli or --variant\n"
           "ask otherwise.\n"
           "With a GPU: "
        << kDefaultSizeGpu << "^3 beside native cuBLAS DGEMM, errors on " << kErrorSamples
        << " sampled entries.\nWithout one: the host reference of the same algorithm on " << kDefaultSizeHost
        << "^3: FP64 mode's decisions (each scheme's\ncertified count) and the choice between them that an H100 "
           "makes (its AUTO rules), run through\nthat scheme's host reference; then Ozaki-I for slices "
        << kSweepFirstSlices << ".." << kSweepLastSlices
        << " and Ozaki-II at its certified count\n(with --scheme ozaki2: Ozaki-II over a moduli sweep) and plain FP64. "
           "The GPU options (--variant,\n--family, --accumulator) are refused there, and sizes whose estimated host "
           "time exceeds\n"
        << int(kHostRefuseSeconds / 60) << " minutes are refused (a warning above " << int(kHostWarnSeconds) << " s).\n";
      break;
    case Command::Accuracy:
      u << "Default " << kDefaultSizeHost << "^3, phi -1,0.5,2,4, slices " << kSweepFirstSlices << ".."
        << kSweepLastSlices << ", beside plain FP64 (host reference).\n";
      break;
    case Command::Bench:
      u << "CUDA events, warm-up, median of --iters runs (default 20), inputs rotated past L2; default " << kDefaultSizeGpu
        << "^3, the unfused variant unless --variant is given.\n";
      break;
    case Command::Model:
      u << "Each phase takes max(INT8 ops / INT8 rate, bytes / bandwidth); phases add up. Default " << kDefaultSizeGpu
        << "^3, 7 slices.\n";
      break;
    case Command::B2b:
      u << "D1 = ReLU(D0 x B1 + beta C1), D0 = ReLU(A0 x B0 + bias); default: CUTLASS example 13's\n"
           "81920 x 576 -> 64 -> 128; --m M --k K0. With --conv, the example's convolution pair: A0 the r x r\n"
           "patches of an NHWC tensor (never stored), e.g. --conv 32x56x56x64 --n0 64 --n1 128.\n"
           "Verifies every path against the host reference and times it.\n";
      break;
    case Command::Help: break;
  }
  return u.str();
}
}  // namespace

std::string command_help(Command c) {
  const CommandSpec& spec = spec_of(c);
  std::ostringstream u;
  u << "usage: ozgemm " << spec.name << " [options]\n\n" << summary(c) << ".\n" << details(c) << "\noptions:\n";
  for (const auto& f : spec.flags) u << option_help(f);
  u << "  --json                print one JSON object on stdout instead of tables\n"
       "  --help                this text\n";
  return u.str();
}

std::string usage() {
  std::ostringstream u;
  u << "ozgemm — FP64 GEMM emulated on INT8 tensor cores (Ozaki schemes I: slices, and II: integer CRT moduli)\n"
       "\n"
       "usage: ozgemm <command> [options]      ozgemm help <command> (or <command> --help): its options\n"
       "\n"
       "commands:\n";
  for (const auto& s : command_specs()) {
    std::string name = s.name;
    name.resize(10, ' ');
    u << "  " << name << summary(s.command) << "\n";
  }
  u << "\nexit codes: 0 ok, 1 the command failed, 2 bad command line\n";
  return u.str();
}

AccuracyOpt resolved_accuracy(const CliOptions& o) {
  if (o.accuracy != AccuracyOpt::Default) return o.accuracy;
  if (o.slices > 0) return AccuracyOpt::Fixed;
  return o.command == Command::Run ? AccuracyOpt::Fp64 : AccuracyOpt::Fixed;
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
