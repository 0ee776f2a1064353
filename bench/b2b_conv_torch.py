#!/usr/bin/env python3
"""The convolution pair of `ozgemm b2b --conv` as a PyTorch user writes it (cuDNN), timed the same way.

    D0 = relu(conv2d(X, W0, bias0, padding=r // 2))     r x r, stride 1
    D1 = relu(conv2d(D0, W1))                           1 x 1

fp16, channels_last (NHWC in memory, the layout ozgemm takes), cudnn.benchmark on (the fastest
algorithm cuDNN finds), inputs rotated over enough copies to exceed 3x the L2 cache, CUDA events
around every run, the median of --iters runs after warm-up. Two ways of launching: eager (four
kernel launches from Python each time) and one CUDA graph per input set (what a user who cares
about launch overhead does). Prints one JSON object.

Not part of the library or its tests: a baseline the issue asks for, run on the device machine
where PyTorch is installed (bench/device_b2b_conv.sh).
"""
import argparse
import datetime
import json
import math
import statistics

import torch
import torch.nn.functional as F


def parse_conv(text):
    dims = [int(v) for v in text.split("x")]
    if len(dims) != 4 or min(dims) < 1:
        raise SystemExit(f"--conv needs NxHxWxC with positive sizes (got {text!r})")
    return dims


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--conv", default="32x56x56x64", help="N x H x W x C of the NHWC input")
    ap.add_argument("--n0", type=int, default=64, help="conv 0's output channels")
    ap.add_argument("--n1", type=int, default=128, help="conv 1's output channels")
    ap.add_argument("--filter", type=int, default=3, help="conv 0's filter size (odd)")
    ap.add_argument("--iters", type=int, default=50)
    ap.add_argument("--seed", type=int, default=42)
    a = ap.parse_args()
    n, h, w, c = parse_conv(a.conv)
    if a.filter % 2 == 0:
        raise SystemExit("--filter must be odd")
    torch.backends.cudnn.benchmark = True
    dev = torch.device("cuda")
    gen = torch.Generator(device="cpu").manual_seed(a.seed)

    def ints(*shape):  # small integers, as ozgemm b2b's default inputs (values do not change the timing)
        return torch.randint(-2, 3, shape, generator=gen).to(torch.float16)

    cl = torch.channels_last
    w0 = ints(a.n0, c, a.filter, a.filter).to(dev).contiguous(memory_format=cl)
    b0 = ints(a.n0).to(dev)
    w1 = (ints(a.n1, a.n0, 1, 1) / 2).trunc().to(dev).contiguous(memory_format=cl)
    x_bytes = n * h * w * c * 2
    l2 = torch.cuda.get_device_properties(dev).L2_cache_size
    sets = max(1, min(16, math.ceil(3 * l2 / x_bytes)))
    xs = [ints(n, c, h, w).to(dev).contiguous(memory_format=cl) for _ in range(sets)]

    def pair(x):
        d0 = F.relu(F.conv2d(x, w0, b0, padding=a.filter // 2))
        return F.relu(F.conv2d(d0, w1))

    # What was computed: fp16 cuDNN against the same pair in fp32 on one set (sanity, not a bound).
    with torch.no_grad():
        got = pair(xs[0]).float()
        x32, w032, w132 = xs[0].float(), w0.float(), w1.float()
        ref = F.relu(F.conv2d(F.relu(F.conv2d(x32, w032, b0.float(), padding=a.filter // 2)).half().float(), w132))
        rel = ((got - ref).abs() / (1 + ref.abs())).max().item()
        assert got.is_contiguous(memory_format=cl), "D1 should come back channels_last"

    def time_runs(run, iters):
        for i in range(max(3, sets)):  # warm-up (cudnn.benchmark picks its algorithms here)
            run(i % sets)
        torch.cuda.synchronize()
        times = []
        for i in range(iters):
            s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            s.record()
            run(i % sets)
            e.record()
            e.synchronize()
            times.append(s.elapsed_time(e))
        return statistics.median(times)

    with torch.no_grad():
        eager_ms = time_runs(lambda i: pair(xs[i]), a.iters)
        graphs, outs = [], []
        stream = torch.cuda.Stream()
        stream.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(stream):
            for x in xs:
                pair(x)  # warm-up on the side stream before capture
        torch.cuda.current_stream().wait_stream(stream)
        for x in xs:
            g = torch.cuda.CUDAGraph()
            with torch.cuda.graph(g):
                outs.append(pair(x))
            graphs.append(g)
        graph_ms = time_runs(lambda i: graphs[i].replay(), a.iters)

    m = n * h * w
    k0 = a.filter * a.filter * c
    flops = 2.0 * m * (k0 * a.n0 + a.n0 * a.n1)
    props = torch.cuda.get_device_properties(dev)
    print(json.dumps({
        "command": "b2b_conv_torch",
        "device": f"{props.name} ({props.multi_processor_count} SMs)",
        "date": datetime.date.today().isoformat(),
        "torch": torch.__version__,
        "cudnn": torch.backends.cudnn.version(),
        "conv": {"n": n, "h": h, "w": w, "c": c, "r": a.filter},
        "m": m, "k0": k0, "n0": a.n0, "n1": a.n1, "type": "fp16", "iters": a.iters, "input_sets": sets,
        "paths": [
            {"path": "cuDNN pair, eager", "ms": eager_ms, "tflops": flops / (eager_ms * 1e9)},
            {"path": "cuDNN pair, CUDA graph", "ms": graph_ms, "tflops": flops / (graph_ms * 1e9)},
        ],
        "max_rel_diff_vs_fp32": rel,
    }))


if __name__ == "__main__":
    main()
