#!/usr/bin/env python3
"""Summarise a folder of `ozgemm bench --json` results: a markdown table and PNG plots.

usage: bench/summarize.py RESULTS_DIR [--plots OUT_DIR]

Needs matplotlib only for --plots (e.g. `python3 -m venv .venv && .venv/bin/pip install matplotlib`).
Every figure comes from the JSON the tool wrote on the device; nothing is computed here but
ratios.
"""
import argparse
import glob
import json
import os
import sys

VARIANTS = ["unfused", "partially-fused", "fully-fused", "partially-fused/portable", "fully-fused/portable"]


def load(folder):
    rows = []
    for path in sorted(glob.glob(os.path.join(folder, "*.json"))):
        with open(path) as f:
            r = json.load(f)
        if r.get("command") != "bench":
            continue
        fam = r.get("family", "auto")
        r["variant"] = r["variant"] + ("" if fam in ("auto", "sm90") else "/" + fam)
        rows.append(r)
    return rows


def shape(r):
    return (r["m"], r["n"], r["k"])


def shape_text(s):
    m, n, k = s
    return f"{m}^3" if m == n == k else f"{m} x {n} x {k}"


def table(rows):
    out = []
    out.append("| shape | slices | variant | ms | TFLOPS | products TOPS | pre / epilogue ms | model ms | comperr "
               "| native ms | native TFLOPS | vs native |")
    out.append("|---|---|---|---|---|---|---|---|---|---|---|---|")
    order = {v: i for i, v in enumerate(VARIANTS)}
    rows = sorted(rows, key=lambda r: (r["m"] * r["n"] * r["k"] != r["m"] ** 3, r["m"], r["n"], r["k"],
                                       r["slices"], order.get(r["variant"], 9)))
    for r in rows:
        o, n = r["ozgemm"], r["native_dgemm"]
        pre = o.get("max_reduce_ms", 0) + o.get("slicing_ms", 0)
        epi = o.get("epilogue_ms", 0)
        model = r.get("model", {}).get("ozgemm_ms", float("nan"))
        out.append(
            f"| {shape_text(shape(r))} | {r['slices']} | {r['variant']} | {o['ms']:.3f} | {o['tflops']:.1f} | "
            f"{o.get('products_int8_tops', 0):.0f} | {pre:.3f} / {epi:.3f} | {model:.3f} | {o['componentwise']:.1e} | "
            f"{n['ms']:.3f} | {n['tflops']:.1f} | {n['ms'] / o['ms']:.2f}x |")
    return "\n".join(out)


def tuning(rows):
    """The fastest option per (shape, slices): the table kHopperRules in src/plan/auto_rules.cpp is read
    off this (native DGEMM measured in every run; the mean of its runs is used)."""
    out = ["| shape | slices | fastest | TFLOPS | best emulated | TFLOPS | native TFLOPS |", "|---|---|---|---|---|---|---|"]
    keys = sorted({(shape(r), r["slices"]) for r in rows}, key=lambda x: (x[0][0] * x[0][1] * x[0][2], x[1]))
    for s, sl in keys:
        rs = [r for r in rows if shape(r) == s and r["slices"] == sl]
        best = max(rs, key=lambda r: r["ozgemm"]["tflops"])
        native = sum(r["native_dgemm"]["tflops"] for r in rs) / len(rs)
        win = best["variant"] if best["ozgemm"]["tflops"] > native else "native"
        out.append(f"| {shape_text(s)} | {sl} | {win} | {max(native, best['ozgemm']['tflops']):.1f} | "
                   f"{best['variant']} | {best['ozgemm']['tflops']:.1f} | {native:.1f} |")
    return "\n".join(out)


def plots(rows, out_dir):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    os.makedirs(out_dir, exist_ok=True)
    device = rows[0]["device"] if rows else ""
    # 1. TFLOPS per shape, 7 slices, each variant beside native DGEMM.
    s7 = [r for r in rows if r["slices"] == 7]
    shapes = sorted({shape(r) for r in s7}, key=lambda s: (not (s[0] == s[1] == s[2]), s[0] * s[1] * s[2]))
    fig, ax = plt.subplots(figsize=(11, 5))
    series = [v for v in VARIANTS if any(r["variant"] == v for r in s7)] + ["native"]
    width = 0.8 / len(series)
    for i, v in enumerate(series):
        ys = []
        for s in shapes:
            rs = [r for r in s7 if shape(r) == s and (v == "native" or r["variant"] == v)]
            if not rs:
                ys.append(0)
            elif v == "native":
                ys.append(sum(r["native_dgemm"]["tflops"] for r in rs) / len(rs))
            else:
                ys.append(rs[0]["ozgemm"]["tflops"])
        ax.bar([x + (i - (len(series) - 1) / 2) * width for x in range(len(shapes))], ys, width, label=v)
    ax.set_xticks(range(len(shapes)))
    ax.set_xticklabels([shape_text(s) for s in shapes], rotation=20, ha="right")
    ax.set_ylabel("TFLOPS (2mnk / time)")
    ax.set_title(f"ozgemm, 7 slices, vs native cuBLAS DGEMM — {device}")
    ax.legend(ncol=len(series), fontsize=8, loc="upper center", bbox_to_anchor=(0.5, -0.22))
    fig.tight_layout()
    fig.savefig(os.path.join(out_dir, "tflops_by_shape.png"), dpi=110)
    plt.close(fig)

    # 2. Model vs measured time, every run.
    fig, ax = plt.subplots(figsize=(5.5, 5))
    for v, marker in zip(VARIANTS, "os^vD"):
        rs = [r for r in rows if r["variant"] == v and "model" in r]
        ax.scatter([r["model"]["ozgemm_ms"] for r in rs], [r["ozgemm"]["ms"] for r in rs], marker=marker, label=v)
    lim = max([r["ozgemm"]["ms"] for r in rows] + [1e-3])
    ax.plot([1e-2, lim * 1.5], [1e-2, lim * 1.5], "k--", lw=0.8, label="measured = model")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("model (datasheet INT8, measured copy rate), ms")
    ax.set_ylabel("measured, ms")
    ax.set_title("roofline model vs measurement")
    ax.legend()
    fig.tight_layout()
    fig.savefig(os.path.join(out_dir, "model_vs_measured.png"), dpi=110)
    plt.close(fig)

    # 3. Where the time goes at 7 slices: phases per variant for the square shapes.
    sq = [s for s in shapes if s[0] == s[1] == s[2]]
    fig, axes = plt.subplots(1, 3, figsize=(12, 4), sharey=True)
    for ax, v in zip(axes, VARIANTS[:3]):
        parts = {"pre": [], "products": [], "epilogue": []}
        for s in sq:
            rs = [r for r in s7 if shape(r) == s and r["variant"] == v]
            o = rs[0]["ozgemm"] if rs else {}
            # Shares of the phase-timed series itself (its sum), not of the end-to-end median.
            tot = sum(o.get(k, 0) for k in ("max_reduce_ms", "slicing_ms", "products_ms", "epilogue_ms")) or 1
            parts["pre"].append(100 * (o.get("max_reduce_ms", 0) + o.get("slicing_ms", 0)) / tot)
            parts["products"].append(100 * o.get("products_ms", 0) / tot)
            parts["epilogue"].append(100 * o.get("epilogue_ms", 0) / tot)
        bottom = [0] * len(sq)
        for name, ys in parts.items():
            ax.bar(range(len(sq)), ys, bottom=bottom, label=name)
            bottom = [b + y for b, y in zip(bottom, ys)]
        ax.set_xticks(range(len(sq)))
        ax.set_xticklabels([str(s[0]) for s in sq])
        ax.set_title(v)
        ax.set_xlabel("n (square)")
    axes[0].set_ylabel("% of the phase-timed run")
    axes[0].legend()
    fig.tight_layout()
    fig.savefig(os.path.join(out_dir, "phases.png"), dpi=110)
    plt.close(fig)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("results")
    ap.add_argument("--plots")
    ap.add_argument("--tuning", action="store_true", help="print the fastest option per shape and slice count")
    a = ap.parse_args()
    rows = load(a.results)
    if not rows:
        sys.exit(f"no bench JSON in {a.results}")
    print(f"device: {rows[0]['device']}, date {rows[0]['date']}, commit {rows[0].get('commit', '?')}\n")
    print(table(rows))
    if a.tuning:
        print("\n" + tuning(rows))
    if a.plots:
        plots(rows, a.plots)


if __name__ == "__main__":
    main()
