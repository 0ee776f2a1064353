// tools/ozgemm/cmd_model.cpp — `ozgemm model`: the roofline model (ozgemm/model/perf_model.hpp) for each
// variant on the datasheet devices, and on a device of one's own (--int8-tops, --bandwidth).
// Measured times sit beside these predictions in `ozgemm bench` (same model, with the device's
// probed INT8 GEMM rate and copy bandwidth) and in docs/performance.md.
#include <iostream>

#include "cli.hpp"
#include "ozgemm/model/perf_model.hpp"

namespace ozgemm {
namespace cli {

namespace {
// One prediction as a JSON object: device, variant, moduli (when > 0), ms, tflops, <phase>_ms.
void json_prediction(Json& j, const std::string& device, const std::string& variant, int moduli,
                     const model::Prediction& p, const Sizes& sz) {
  j.begin_object();
  j.field("device", device).field("variant", variant);
  if (moduli > 0) j.field("moduli", moduli);
  j.field("ms", p.ms).field("tflops", p.tflops(sz.m, sz.n, sz.k));
  for (const auto& ph : p.phases) j.field(ph.name + "_ms", ph.ms);
  j.end_object();
}

// "max-reduce 0.123, slicing 0.456, ...": the phases' times (ms).
std::string phases_text(const model::Prediction& p) {
  std::string ph;
  for (const auto& x : p.phases) ph += (ph.empty() ? "" : ", ") + x.name + " " + fmt_fixed(x.ms, 3);
  return ph;
}

// `ozgemm model --complex`: native ZGEMM and the complex Ozaki-II scheme (2M) per device.
int model_complex(const CliOptions& o, const Sizes& sz, const std::vector<model::DeviceSpec>& devs) {
  const int moduli = o.moduli > 0 ? o.moduli : ozgemm::kDefaultComplexModuli;
  const Variant variants[] = {Variant::Native, Variant::Unfused, Variant::PartiallyFused};
  auto name = [&](Variant v) {
    return v == Variant::Native ? std::string("native-zgemm") : std::string("ozaki2-complex-") + variant_name(v);
  };
  if (o.json) {
    Json j;
    j.begin_object();
    j.field("command", "model");
    json_problem_fields(j, sz, o);
    j.field("complex", true).field("moduli", moduli);
    j.key("predictions").begin_array();
    for (const auto& d : devs)
      for (auto v : variants) {
        json_prediction(j, d.name, name(v), v != Variant::Native ? moduli : 0,
                        model::predict_zgemm(v, sz.m, sz.n, sz.k, moduli, o.beta != 0.0, d), sz);
      }
    j.end_array();
    j.end_object();
    std::cout << j.str() << "\n";
    return kExitOk;
  }
  std::cout << "roofline model, complex (ZGEMM): " << sizes_text(sz) << ", " << moduli << " moduli (" << 2 * moduli
            << " INT8 products: 2 per modulus), beta " << fmt_g(o.beta) << "; TFLOPS = 8mnk/time\n"
            << "each phase takes max(ops / rate, bytes / bandwidth); phases add up; native ZGEMM: 8mnk at the FP64 rate\n\n";
  TextTable t({"device", "variant", "pred. ms", "TFLOPS", "phases (ms)"});
  for (const auto& d : devs) {
    for (auto v : variants) {
      const auto p = model::predict_zgemm(v, sz.m, sz.n, sz.k, moduli, o.beta != 0.0, d);
      t.add_row({v == Variant::Native ? d.name + " (" + fmt_fixed(d.int8_tops, 0) + " TOPS, " +
                                            fmt_fixed(d.bandwidth_gbs, 0) + " GB/s, " + fmt_fixed(d.fp64_tflops, 0) +
                                            " FP64 TF)"
                                      : "",
                 name(v), fmt_fixed(p.ms, 3), fmt_fixed(p.tflops(sz.m, sz.n, sz.k), 1), phases_text(p)});
    }
    t.add_separator();
  }
  t.print(std::cout);
  return kExitOk;
}
}  // namespace

int cmd_model(const CliOptions& o) {
  const Sizes sz = resolve_sizes(o, kDefaultSizeGpu);
  const int s = o.slices > 0 ? o.slices : 7;
  const int moduli = o.moduli > 0 ? o.moduli : ozgemm::kDefaultModuli;
  std::vector<model::DeviceSpec> devs = model::datasheet_specs();
  if (o.int8_tops > 0 || o.bandwidth_gbs > 0) {
    if (!(o.int8_tops > 0 && o.bandwidth_gbs > 0))
      throw UsageError("--int8-tops and --bandwidth go together");
    devs.push_back({"custom", o.int8_tops, o.bandwidth_gbs, o.fp64_tflops > 0 ? o.fp64_tflops : 67.0});
  }
  if (o.complex) return model_complex(o, sz, devs);
  const Variant variants[] = {Variant::Unfused, Variant::PartiallyFused, Variant::FullyFused, Variant::Native};
  if (o.json) {
    Json j;
    j.begin_object();
    j.field("command", "model");
    json_problem_fields(j, sz, o);
    j.field("slices", s);
    j.key("predictions").begin_array();
    for (const auto& d : devs)
      for (auto v : variants) {
        json_prediction(j, d.name, variant_name(v), 0, model::predict(v, sz.m, sz.n, sz.k, s, o.beta != 0.0, d), sz);
      }
    // Ozaki-II rows after all Ozaki-I rows (one per device).
    for (const auto& d : devs)
      for (auto v : {Variant::Unfused, Variant::PartiallyFused}) {
        json_prediction(j, d.name, std::string("ozaki2-") + variant_name(v), moduli,
                        model::predict_ozaki2(sz.m, sz.n, sz.k, moduli, o.beta != 0.0, d, v), sz);
      }
    j.end_array();
    j.end_object();
    std::cout << j.str() << "\n";
    return kExitOk;
  }
  std::cout << "roofline model: " << sizes_text(sz) << ", " << s << " slices (" << s * (s + 1) / 2
            << " INT8 products), beta " << fmt_g(o.beta) << "\n"
            << "each phase takes max(INT8 ops / INT8 rate, bytes / bandwidth); phases add up\n\n";
  TextTable t({"device", "variant", "pred. ms", "TFLOPS", "phases (ms)"});
  for (const auto& d : devs) {
    for (auto v : variants) {
      const auto p = model::predict(v, sz.m, sz.n, sz.k, s, o.beta != 0.0, d);
      t.add_row({d.name + " (" + fmt_fixed(d.int8_tops, 0) + " TOPS, " + fmt_fixed(d.bandwidth_gbs, 0) + " GB/s)",
                 variant_name(v), fmt_fixed(p.ms, 3), fmt_fixed(p.tflops(sz.m, sz.n, sz.k), 1), phases_text(p)});
    }
    for (auto v : {Variant::Unfused, Variant::PartiallyFused}) {
      const auto p = model::predict_ozaki2(sz.m, sz.n, sz.k, moduli, o.beta != 0.0, d, v);
      t.add_row({"", "ozaki2 " + std::string(variant_name(v)) + ", " + std::to_string(moduli) + " moduli",
                 fmt_fixed(p.ms, 3), fmt_fixed(p.tflops(sz.m, sz.n, sz.k), 1), phases_text(p)});
    }
    t.add_separator();
  }
  t.print(std::cout);
  return kExitOk;
}

}  // namespace cli
}  // namespace ozgemm
