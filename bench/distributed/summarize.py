"""bench/distributed/summarize.py JSONL — the distributed runs' JSON lines (bench/distributed/run.sh, or the
examples' --json) as a markdown table: engine, layout, scaling tag, GPUs, n, native and ozgemm TFLOP/s
(medians), speed-up, the largest error/bound ratio with ozgemm and natively, ok, and the parallel
efficiency of each scaling series against its fewest-GPU run (strong: the same n; weak: TFLOP/s per GPU).
"""
import json
import sys


def main(path):
    rows = [json.loads(line) for line in open(path) if line.strip()]
    # ScaLAPACK writes one line per rank: keep rank 0's.
    rows = [r for r in rows if r.get("rank", 0) == 0]
    series = {}
    for r in rows:
        series.setdefault((r["engine"], r.get("layout", ""), r.get("tag", "")), []).append(r)
    print("| engine | layout | tag | GPUs | n | native TFLOP/s | ozgemm TFLOP/s | speed-up | error/bound on | "
          "off | efficiency native | efficiency ozgemm | ok |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    for key in sorted(series):
        runs = sorted(series[key], key=lambda r: r["ranks"])
        base = runs[0]
        for r in runs:
            eff = {}
            for mode in ("off", "on"):
                per_gpu, per_gpu0 = r["tflops_" + mode] / r["ranks"], base["tflops_" + mode] / base["ranks"]
                eff[mode] = per_gpu / per_gpu0 if per_gpu0 else float("nan")
            print("| %s | %s | %s | %d | %d | %.1f | %.1f | %.2fx | %.3g | %.3g | %.2f | %.2f | %s |" % (
                r["engine"], r.get("layout", ""), r.get("tag", ""), r["ranks"], r["n"], r["tflops_off"],
                r["tflops_on"], r["speedup"], r["max_ratio_on"], r["max_ratio_off"], eff["off"], eff["on"],
                "yes" if r["ok"] else "NO"))


if __name__ == "__main__":
    main(sys.argv[1])
