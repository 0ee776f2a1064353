// tools/ozgemm/common.cpp — problem generation, sampled errors and output helpers of `ozgemm`.
#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <iostream>
#include <ostream>
#include <random>
#include <thread>
#include <unordered_set>

#include "cli.hpp"
#include "ozgemm/reference/ozaki2.hpp"

namespace ozgemm {
namespace cli {

// ---------------------------------------------------------------------------------------------
// Problem data

HostProblem make_problem_layout(const CliOptions& o, const Sizes& s, double phi) {
  HostProblem p;
  p.transa = o.transa;
  p.transb = o.transb;
  p.m = s.m;
  p.n = s.n;
  p.k = s.k;
  p.alpha = o.alpha;
  p.beta = o.beta;
  p.phi = phi;
  p.seed = o.seed;
  const int64_t a_rows = o.transa == Op::N ? s.m : s.k, a_cols = o.transa == Op::N ? s.k : s.m;
  const int64_t b_rows = o.transb == Op::N ? s.k : s.n, b_cols = o.transb == Op::N ? s.n : s.k;
  p.lda = std::max<int64_t>(1, a_rows);
  p.ldb = std::max<int64_t>(1, b_rows);
  p.ldc = std::max<int64_t>(1, s.m);
  auto size_of = [](int64_t ld, int64_t cols) { return static_cast<size_t>(std::max<int64_t>(1, ld * cols)); };
  p.A.assign(size_of(p.lda, a_cols), 0.0);
  p.B.assign(size_of(p.ldb, b_cols), 0.0);
  p.C0.assign(size_of(p.ldc, s.n), 0.0);
  return p;
}

void check_host_work(double work, const std::string& what) {
  const double seconds = work / (kHostOpsPerSecondPerThread * std::max(1u, std::thread::hardware_concurrency()));
  if (seconds > kHostRefuseSeconds)
    throw UsageError(what + " would take about " + fmt_fixed(seconds / 60.0, 0) + " minutes on the host (limit " +
                     fmt_fixed(kHostRefuseSeconds / 60.0, 0) + "); use a smaller --m/--n/--k, fewer slices (--slices), or a GPU");
  if (seconds > kHostWarnSeconds)
    std::cerr << "ozgemm: warning: " << what << " will take about " << fmt_fixed(seconds, 0) << " s on the host"
              << std::endl;
}

int64_t gen_block_cols(int64_t rows) { return std::max<int64_t>(1, kGenBlockEntries / std::max<int64_t>(1, rows)); }

void fill_phi_blocks(double* a, int64_t rows, int64_t cols, int64_t ld, double phi, uint64_t seed, GenMatrix matrix,
                     unsigned threads) {
  if (rows <= 0 || cols <= 0) return;
  const int64_t per = gen_block_cols(rows), blocks = (cols + per - 1) / per;
  const auto fill_block = [&](int64_t b) {
    std::seed_seq seq{uint32_t(seed), uint32_t(seed >> 32), uint32_t(matrix), uint32_t(b), uint32_t(uint64_t(b) >> 32)};
    std::mt19937_64 rng(seq);
    const int64_t c0 = b * per;
    ref::fill_phi(a + c0 * ld, rows, std::min(per, cols - c0), ld, phi, rng);
  };
  if (threads == 0) threads = std::max(1u, std::thread::hardware_concurrency());
  const int64_t workers = std::min<int64_t>(threads, blocks);
  if (workers <= 1) {
    for (int64_t b = 0; b < blocks; ++b) fill_block(b);
    return;
  }
  std::atomic<int64_t> next{0};  // blocks are handed out in any order: each block's values are its own
  std::vector<std::thread> pool;
  for (int64_t t = 0; t < workers; ++t)
    pool.emplace_back([&] {
      for (int64_t b = next++; b < blocks; b = next++) fill_block(b);
    });
  for (auto& th : pool) th.join();
}

HostProblem make_problem(const CliOptions& o, const Sizes& s, double phi, unsigned threads) {
  HostProblem p = make_problem_layout(o, s, phi);
  fill_phi_blocks(p.A.data(), p.transa == Op::N ? s.m : s.k, p.transa == Op::N ? s.k : s.m, p.lda, phi, o.seed,
                  GenMatrix::A, threads);
  fill_phi_blocks(p.B.data(), p.transb == Op::N ? s.k : s.n, p.transb == Op::N ? s.n : s.k, p.ldb, phi, o.seed,
                  GenMatrix::B, threads);
  if (o.beta != 0.0) fill_phi_blocks(p.C0.data(), s.m, s.n, p.ldc, phi, o.seed, GenMatrix::C0, threads);
  return p;
}

int64_t nonfinite_inputs(const HostProblem& p) {
  int64_t n = 0;
  for (const auto* v : {&p.A, &p.B, &p.C0})
    for (double x : *v) n += std::isfinite(x) ? 0 : 1;
  return n;
}

std::string nonfinite_note(const HostProblem& p, const ref::ErrorMetrics& e) {
  const int64_t bad = nonfinite_inputs(p);
  if (bad == 0 && e.compared == p.m * p.n) return {};
  std::string s;
  if (bad > 0)
    s = std::to_string(bad) + " input entries are Inf/NaN (phi = " + fmt_g(p.phi) +
        ": exp(phi * N(0,1)) overflows past phi * N > 709); ";
  s += "errors cover " + std::to_string(e.compared) + " of " + std::to_string(p.m * p.n) +
       " result entries (the others are Inf/NaN in the result or the reference)";
  return s;
}

// ---------------------------------------------------------------------------------------------
// Host commands' helpers

std::vector<int> slice_sweep(const CliOptions& o) {
  std::vector<int> s;
  if (o.slices > 0) {
    s.push_back(o.slices);
  } else {
    for (int i = kSweepFirstSlices; i <= kSweepLastSlices; ++i) s.push_back(i);
  }
  return s;
}

std::vector<int> moduli_sweep(const CliOptions& o) {
  if (o.moduli > 0) return {o.moduli};
  return {8, 10, 12, 13, 14, 15, 16, 17, 18, 20};
}

double flops(const Sizes& s) { return 2.0 * double(s.m) * double(s.n) * double(s.k); }

double host_work(const Sizes& s, const std::vector<int>& slices, const std::vector<int>& moduli, int reps) {
  constexpr double kDoubleDoublePerMnk = 30.0, kPlainPerMnk = 2.0;
  double per_mnk = kDoubleDoublePerMnk + kPlainPerMnk * reps;
  for (int sl : slices) per_mnk += double(sl) * (sl + 1) / 2.0 * reps;  // digit products of the triangle
  for (int nm : moduli) per_mnk += double(nm) * reps;                   // one product per modulus
  return per_mnk * double(s.m) * double(s.n) * double(s.k);
}

HostFp64 run_fp64_host(const HostProblem& p, const ref::AccurateResult& acc, Scheme allowed, int iters) {
  HostFp64 out;
  out.oz1_decided = allowed != Scheme::Ozaki2;
  out.oz2_decided = allowed != Scheme::Ozaki1;
  std::vector<double> C;
  out.ms = time_host_gemm(p.C0, C, iters, [&](double* c) {
    if (out.oz1_decided)
      out.oz1 = ref::decide_slices(p.transa, p.transb, p.m, p.n, p.k, p.A.data(), p.lda, p.B.data(), p.ldb);
    if (out.oz2_decided)
      out.oz2 = ref::decide_moduli(p.transa, p.transb, p.m, p.n, p.k, p.A.data(), p.lda, p.B.data(), p.ldb);
    out.choice = choose_fp64_scheme(Sizes{p.m, p.n, p.k}, allowed, out.oz1.slices, out.oz2.moduli);
    switch (out.choice.path) {
      case Fp64Path::Ozaki1:
        ref::ozaki_dgemm(p.transa, p.transb, p.m, p.n, p.k, p.alpha, p.A.data(), p.lda, p.B.data(), p.ldb, p.beta, c,
                         p.ldc, out.choice.count);
        break;
      case Fp64Path::Ozaki2:
        ref::ozaki2_dgemm(p.transa, p.transb, p.m, p.n, p.k, p.alpha, p.A.data(), p.lda, p.B.data(), p.ldb, p.beta, c,
                          p.ldc, out.choice.count);
        break;
      case Fp64Path::Native:
        ref::plain_dgemm(p.transa, p.transb, p.m, p.n, p.k, p.alpha, p.A.data(), p.lda, p.B.data(), p.ldb, p.beta, c,
                         p.ldc);
        break;
    }
  });
  out.err = ref::compare(C.data(), p.ldc, acc);
  return out;
}

std::string fp64_label(const HostFp64& f) {
  switch (f.choice.path) {
    case Fp64Path::Ozaki1: return "FP64 mode (ozaki-I " + std::to_string(f.choice.count) + ")";
    case Fp64Path::Ozaki2: return "FP64 mode (ozaki-II " + std::to_string(f.choice.count) + ")";
    case Fp64Path::Native: break;
  }
  return "FP64 mode (native)";
}

std::string fp64_bound_text(const HostFp64& f) {
  const double target = f.oz1_decided ? f.oz1.target : f.oz2.target;
  std::string met, unmet;
  const auto add = [&](bool decided, const char* name, int count, double bound, int max) {
    if (!decided) return;
    if (count > 0)
      met += std::string(met.empty() ? "" : ", ") + name + " " + std::to_string(count) + " (bound " + fmt_g(bound) + ")";
    else
      unmet += std::string(unmet.empty() ? "" : "; ") + name + ": none up to " + std::to_string(max) + " meets " +
               fmt_g(target);
  };
  add(f.oz1_decided, "ozaki-I", f.oz1.slices, f.oz1.bound, kMaxSlices);
  add(f.oz2_decided, "ozaki-II", f.oz2.moduli, f.oz2.bound, kMaxModuli);
  if (!met.empty()) met += " <= " + fmt_g(target);
  return met + (met.empty() || unmet.empty() ? "" : "; ") + unmet;
}

std::string problem_line(const Sizes& s, const CliOptions& o) {
  return "C = alpha*op(A)*op(B) + beta*C with m=" + std::to_string(s.m) + " n=" + std::to_string(s.n) +
         " k=" + std::to_string(s.k) + ", op(A)=" + std::string(1, static_cast<char>(o.transa)) +
         " op(B)=" + std::string(1, static_cast<char>(o.transb)) + ", alpha=" + fmt_g(o.alpha) +
         " beta=" + fmt_g(o.beta) + ", seed " + std::to_string(o.seed);
}

std::string slices_cell(int s) { return std::to_string(s) + (s == kDefaultSlices ? "*" : " "); }

// ---------------------------------------------------------------------------------------------
// Sampled errors

std::vector<Entry> sample_entries(int64_t m, int64_t n, int count, uint64_t seed) {
  std::vector<Entry> out;
  if (m <= 0 || n <= 0 || count <= 0) return out;
  const int64_t total = m * n;
  if (total <= count) {
    for (int64_t c = 0; c < n; ++c)
      for (int64_t r = 0; r < m; ++r) out.push_back({r, c});
    return out;
  }
  std::mt19937_64 rng(seed ^ 0x9e3779b97f4a7c15ull);
  std::uniform_int_distribution<int64_t> pick(0, total - 1);
  std::unordered_set<int64_t> seen;
  while (static_cast<int>(out.size()) < count) {
    const int64_t idx = pick(rng);
    if (seen.insert(idx).second) out.push_back({idx % m, idx / m});
  }
  std::sort(out.begin(), out.end(),
            [](const Entry& a, const Entry& b) { return a.col != b.col ? a.col < b.col : a.row < b.row; });
  return out;
}

ref::ErrorMetrics sampled_errors(const HostProblem& p, const double* C, int64_t ldc, const std::vector<Entry>& entries) {
  const int64_t count = static_cast<int64_t>(entries.size());
  ref::AccurateResult acc;  // the sample as a count x 1 matrix
  acc.m = count;
  acc.n = 1;
  acc.hi.resize(count);
  acc.lo.resize(count);
  acc.absprod.resize(count);
  std::vector<double> got(static_cast<size_t>(std::max<int64_t>(1, count)));
  for (int64_t e = 0; e < count; ++e) {
    const int64_t r = entries[e].row, c = entries[e].col;
    // Row r of op(A) and column c of op(B) as a 1 x 1 x k problem.
    const double* a = p.transa == Op::N ? p.A.data() + r : p.A.data() + r * p.lda;
    const double* b = p.transb == Op::N ? p.B.data() + c * p.ldb : p.B.data() + c;
    const double* c0 = p.C0.data() + r + c * p.ldc;
    const ref::AccurateResult one =
        ref::accurate_gemm(p.transa, p.transb, 1, 1, p.k, p.alpha, a, p.lda, b, p.ldb, p.beta, c0, p.ldc);
    acc.hi[e] = one.hi[0];
    acc.lo[e] = one.lo[0];
    acc.absprod[e] = one.absprod[0];
    got[e] = C[r + c * ldc];
  }
  return ref::compare(got.data(), std::max<int64_t>(1, count), acc);
}

// ---------------------------------------------------------------------------------------------
// Formatting

std::string fmt_sci(double v, int digits) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*e", digits, v);
  return buf;
}

std::string fmt_fixed(double v, int decimals) {
  if (!std::isfinite(v)) return fmt_sci(v);
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", decimals, v);
  return buf;
}

std::string fmt_g(double v) {
  if (!std::isfinite(v)) return fmt_sci(v);
  char buf[64];
  std::snprintf(buf, sizeof buf, "%g", v);
  return buf;
}

TextTable::TextTable(std::vector<std::string> header) : header_(std::move(header)) {}

void TextTable::add_row(std::vector<std::string> cells) {
  cells.resize(header_.size());
  rows_.push_back(std::move(cells));
}

void TextTable::add_separator() { rows_.emplace_back(); }

void TextTable::print(std::ostream& os, const std::string& indent) const {
  std::vector<size_t> width(header_.size(), 0);
  for (size_t i = 0; i < header_.size(); ++i) width[i] = header_[i].size();
  for (const auto& r : rows_)
    for (size_t i = 0; i < r.size(); ++i) width[i] = std::max(width[i], r[i].size());
  auto line = [&](const std::vector<std::string>& cells) {
    std::string s = indent;
    for (size_t i = 0; i < cells.size(); ++i) {
      const std::string pad(width[i] - cells[i].size(), ' ');
      if (i == 0)
        s += cells[i] + pad;
      else
        s += "  " + pad + cells[i];
    }
    while (!s.empty() && s.back() == ' ') s.pop_back();
    os << s << '\n';
  };
  line(header_);
  for (const auto& r : rows_) {
    if (r.empty())
      os << '\n';
    else
      line(r);
  }
}

// ---------------------------------------------------------------------------------------------
// JSON

std::string json_escape(const std::string& s) {
  std::string o;
  for (const char ch : s) {
    const unsigned char c = static_cast<unsigned char>(ch);
    switch (c) {
      case '"': o += "\\\""; break;
      case '\\': o += "\\\\"; break;
      case '\n': o += "\\n"; break;
      case '\r': o += "\\r"; break;
      case '\t': o += "\\t"; break;
      default:
        if (c < 0x20) {
          char buf[8];
          std::snprintf(buf, sizeof buf, "\\u%04x", c);
          o += buf;
        } else {
          o += ch;
        }
    }
  }
  return o;
}

void Json::sep() {
  if (after_key_) {
    after_key_ = false;
    return;
  }
  if (!first_.empty()) {
    if (!first_.back()) out_ += ',';
    first_.back() = false;
  }
}

Json& Json::begin_object() {
  sep();
  out_ += '{';
  first_.push_back(true);
  return *this;
}
Json& Json::end_object() {
  out_ += '}';
  first_.pop_back();
  return *this;
}
Json& Json::begin_array() {
  sep();
  out_ += '[';
  first_.push_back(true);
  return *this;
}
Json& Json::end_array() {
  out_ += ']';
  first_.pop_back();
  return *this;
}
Json& Json::key(const std::string& k) {
  sep();
  out_ += '"' + json_escape(k) + "\":";
  after_key_ = true;
  return *this;
}
Json& Json::value(const std::string& s) {
  sep();
  out_ += '"' + json_escape(s) + '"';
  return *this;
}
Json& Json::value(const char* s) { return value(std::string(s)); }
Json& Json::value(double v) {
  if (!std::isfinite(v)) return null();
  sep();
  char buf[64];
  for (int prec = 15; prec <= 17; ++prec) {  // the shortest text that reads back as v
    std::snprintf(buf, sizeof buf, "%.*g", prec, v);
    if (std::strtod(buf, nullptr) == v) break;
  }
  out_ += buf;
  return *this;
}
Json& Json::value(int64_t v) {
  sep();
  out_ += std::to_string(v);
  return *this;
}
Json& Json::value(uint64_t v) {
  sep();
  out_ += std::to_string(v);
  return *this;
}
Json& Json::value(bool b) {
  sep();
  out_ += b ? "true" : "false";
  return *this;
}
Json& Json::null() {
  sep();
  out_ += "null";
  return *this;
}

void json_problem_fields(Json& j, const Sizes& s, const CliOptions& o) {
  j.field("m", s.m).field("n", s.n).field("k", s.k);
  j.field("transa", std::string(1, o.conj_a ? 'C' : static_cast<char>(o.transa)));
  j.field("transb", std::string(1, o.conj_b ? 'C' : static_cast<char>(o.transb)));
  j.field("alpha", o.alpha).field("beta", o.beta).field("seed", o.seed);
  j.field("default_slices", kDefaultSlices);
}

void json_error_fields(Json& j, const ref::ErrorMetrics& e) {
  j.field("normwise", e.normwise).field("componentwise", e.componentwise).field("elementwise", e.elementwise);
  j.field("nonfinite_mismatch", e.nonfinite_mismatch).field("compared", e.compared);
}

void json_timed_row_end(Json& j, double ms, double gflops, const ref::ErrorMetrics& e) {
  j.field("time_ms", ms).field("gflops", gflops);
  json_error_fields(j, e);
  j.end_object();
}

void json_provenance(Json& j) {
  std::time_t t = std::time(nullptr);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%d", std::gmtime(&t));
  j.field("date", std::string(buf));
  if (const char* c = std::getenv("OZGEMM_COMMIT")) j.field("commit", std::string(c));
}

}  // namespace cli
}  // namespace ozgemm
