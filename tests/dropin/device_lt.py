"""tests/dropin/device_lt.py — float64 GEMMs that reach cuBLASLt (cublasLtMatmul) under the preloaded
libozgemm_hook.so: JAX (x64) `a @ b`, batched `jnp.matmul`, `jnp.einsum` and a `jax.jit`-compiled
loop; PyTorch with TORCH_BLAS_PREFER_CUBLASLT=1: `a @ b`, `torch.addmm(bias, a, b)`,
`F.linear(x, w, bias)`, `torch._addmm_activation` (the RELU_BIAS and GELU_BIAS epilogues) and `bmm`
(run by run_device.sh on a GPU machine; docs/dropin.md, "cublasLtMatmul").

Every case runs in this one process twice on the same inputs: with the hook switched off at run time
(ozgemmHookSetEnabled(0): every call goes to cuBLASLt; the reference, and JAX's compilation and
autotuning happen here) and on. It prints, and appends as a JSON line to --json, the hook's counters
for the "on" run (calls per entry point, intercepted, declined and why, emulated / native by ozgemm's
choice), the median times (--reps runs each, after one warm-up) off and on with the speed-up, and the
contract check on sampled entries (--samples rows x columns of the output, of the first and last
batch member): |C_on - C_off| <= 2 min(4, k) u (|A||B|) + tiny, u = 2^-53, each side within
min(4, k) u |A||B| of the exact product; the epilogue cases add 4 u |C_off| for the bias addition and
the activation (GELU's slope is below 1.13: its bound is scaled by 1.2), the loop case scales the bound
by its number of products. |A||B| is computed on the host (numpy) from the sampled rows of A and
columns of B. "err" is the largest ratio of the difference to that bound (a case passes at <= 1).

A case passes when cublasLtMatmul was called and at least one call was intercepted, and err <= 1.
With --min-speedup S (run_device.sh: 1.25 for JAX `a @ b` at 16384) the cases named in --speed-cases
must also run at least S times faster with the hook on.

JAX preallocates 75% of the GPU by default, leaving ozgemm no room for its workspace: this script sets
XLA_PYTHON_CLIENT_PREALLOCATE=false unless it is set. XLA may capture a jit-compiled loop's GEMMs into
a CUDA graph (command buffers), which the hook declines (graph-capture): --xla-flags (default
--xla_gpu_enable_command_buffer=, i.e. none) is added to XLA_FLAGS; pass --xla-flags '' to keep
XLA's default and see the declines.
"""
import json
import os
import statistics
import sys
import time

import numpy as np

import hook_ctl  # (this folder)

p = hook_ctl.arguments(["jax", "torch"])
p.add_argument("--sizes", default="8192,16384", help="square sizes n (batched cases use n/2)")
p.add_argument("--reps", type=int, default=3, help="timed runs per side (median), after one warm-up")
p.add_argument("--samples", type=int, default=64, help="sampled rows and columns of each output")
p.add_argument("--min-speedup", type=float, default=0.0, help="required on/off speed-up of --speed-cases")
p.add_argument("--speed-cases", default="", help="comma-separated case names the speed-up applies to")
p.add_argument("--xla-flags", default="--xla_gpu_enable_command_buffer=", help="added to XLA_FLAGS (jax)")
args = p.parse_args()

hook = hook_ctl.load(args.lib, "device_lt.py")

U = 2.0 ** -53  # unit roundoff of float64
TINY = 1e-300   # absolute slack (entries whose bound underflows)
SIZES = [int(s) for s in args.sizes.split(",") if s]
SPEED_CASES = set(c for c in args.speed_cases.split(",") if c)
rng = np.random.default_rng(11)


def stats():
    return hook_ctl.stats(hook)


def wanted(name):
    return not args.only or name in args.only.split(",")


class Case:
    """One operation: fn() returns the output (on the device); a, b are the product's operands as host
    numpy arrays of shape (batch, m, k) and (batch, k, n) (sampled for |A||B|); slack scales the bound
    (epilogues, loops); rel adds rel u |C_off|."""

    def __init__(self, name, fn, a, b, flop, slack=1.0, rel=0.0):
        self.name, self.fn, self.a, self.b, self.flop, self.slack, self.rel = name, fn, a, b, flop, slack, rel


results = []
failed = False


def timed(fn, sync):
    fn()  # warm-up (and, the first time, compilation)
    sync()
    ts = []
    for _ in range(args.reps):
        t0 = time.perf_counter()
        out = fn()
        sync()
        ts.append(time.perf_counter() - t0)
    return out, statistics.median(ts)


def check(case, to_host, sync):
    """Off, then on; the contract on sampled entries of the first and last batch member."""
    global failed
    hook.ozgemmHookSetEnabled(0)
    ref, t_off = timed(case.fn, sync)
    hook.ozgemmHookResetStats()
    hook.ozgemmHookSetEnabled(1)
    out, t_on = timed(case.fn, sync)
    st = stats()
    a, b = case.a, case.b
    batch, m, k = a.shape
    n = b.shape[2]
    rows = np.sort(rng.choice(m, size=min(args.samples, m), replace=False))
    cols = np.sort(rng.choice(n, size=min(args.samples, n), replace=False))
    err = 0.0
    for i in sorted({0, batch - 1}):
        on_blk, off_blk = to_host(out, i, rows, cols), to_host(ref, i, rows, cols)
        absprod = np.abs(a[i][rows, :]) @ np.abs(b[i][:, cols])
        bound = case.slack * 2 * min(4, k) * U * absprod + case.rel * U * np.abs(off_blk) + TINY
        d = np.abs(on_blk - off_blk)
        if not np.all(np.isfinite(on_blk)):
            err = float("inf")
        err = max(err, float(np.max(d / bound)))
    lt_calls = st["calls_by_api"].get("cublasLtMatmul", 0)
    reasons = {r: v for r, v in st["declined_by_reason"].items() if v}
    speedup = t_off / t_on if t_on > 0 else 0.0
    ok = lt_calls > 0 and st["intercepted"] > 0 and err <= 1.0
    speed_ok = True
    if args.min_speedup and case.name in SPEED_CASES:
        speed_ok = speedup >= args.min_speedup
    ok = ok and speed_ok
    failed |= not ok
    r = {"framework": args.framework, "case": case.name, "ok": bool(ok), "err_ratio": err,
         "time_off_s": t_off, "time_on_s": t_on, "speedup": speedup,
         "tflops_off": case.flop / t_off * 1e-12, "tflops_on": case.flop / t_on * 1e-12,
         "speed_required": args.min_speedup if case.name in SPEED_CASES else None,
         "calls": st["calls"], "lt_calls": lt_calls, "intercepted": st["intercepted"], "declined": st["declined"],
         "declined_by_reason": reasons, "calls_by_api": {x: v for x, v in st["calls_by_api"].items() if v},
         "matrices": st["gemms"], "emulated_ozaki1": st["emulated_ozaki1"], "emulated_ozaki2": st["emulated_ozaki2"],
         "ozgemm_native": st["ozgemm_native"], "moduli": st["emulated_by_moduli"], "slices": st["emulated_by_slices"],
         "native_by_reason": st["native_by_reason"]}
    results.append(r)
    print("%-4s %-5s %-42s Lt calls %3d intercepted %3d (Ozaki-II %3d, Ozaki-I %3d, native %3d)  err %.2e  "
          "off %8.2f ms %6.1f TF  on %8.2f ms %6.1f TF  x%.2f%s%s" % (
              "PASS" if ok else "FAIL", args.framework, case.name, lt_calls, st["intercepted"],
              st["emulated_ozaki2"], st["emulated_ozaki1"], st["ozgemm_native"], err, t_off * 1e3,
              r["tflops_off"], t_on * 1e3, r["tflops_on"], speedup,
              "" if speed_ok else " (below the required x%.2f)" % args.min_speedup,
              ("  declined: " + json.dumps(reasons)) if reasons else ""), flush=True)
    if args.json:
        with open(args.json, "a") as f:
            f.write(json.dumps(r) + "\n")


def host(shape):
    return rng.standard_normal(shape)


# ---------------------------------------------------------------------------------------------
if args.framework == "jax":
    os.environ.setdefault("XLA_PYTHON_CLIENT_PREALLOCATE", "false")
    if args.xla_flags:
        os.environ["XLA_FLAGS"] = (os.environ.get("XLA_FLAGS", "") + " " + args.xla_flags).strip()
    import jax
    import jax.numpy as jnp

    jax.config.update("jax_enable_x64", True)
    print("jax %s on %s; XLA_FLAGS=%r XLA_PYTHON_CLIENT_PREALLOCATE=%s" % (
        jax.__version__, jax.devices()[0].device_kind, os.environ.get("XLA_FLAGS", ""),
        os.environ.get("XLA_PYTHON_CLIENT_PREALLOCATE")))

    def sync():
        pass  # each case's function blocks (block_until_ready)

    def to_host(x, i, rows, cols):
        x = x if x.ndim == 3 else x[None]
        return np.asarray(x[i][jnp.asarray(rows)][:, jnp.asarray(cols)])

    matmul = jax.jit(lambda a, b: a @ b)
    bmatmul = jax.jit(jnp.matmul)
    einsum = jax.jit(lambda a, b: jnp.einsum("bij,bjk->bik", a, b))
    steps = 3

    @jax.jit
    def loop(a, b, c):  # c + a @ b, `steps` times, in one compiled loop
        return jax.lax.fori_loop(0, steps, lambda _, acc: acc + a @ b, c)

    for n in SIZES:
        ha, hb = host((1, n, n)), host((1, n, n))
        A, B = jnp.asarray(ha[0]), jnp.asarray(hb[0])
        cases = [Case("a @ b %d" % n, lambda: matmul(A, B).block_until_ready(), ha, hb, 2.0 * n ** 3)]
        h = n // 2
        hx, hy = host((2, h, h)), host((2, h, h))
        X, Y = jnp.asarray(hx), jnp.asarray(hy)
        cases.append(Case("batched matmul 2x%d" % h, lambda: bmatmul(X, Y).block_until_ready(), hx, hy,
                          2 * 2.0 * h ** 3))
        cases.append(Case("einsum bij,bjk->bik 2x%d" % h, lambda: einsum(X, Y).block_until_ready(), hx, hy,
                          2 * 2.0 * h ** 3))
        C0 = jnp.zeros((n, n), dtype=jnp.float64)
        # c_j = c_{j-1} + AB: each product within the contract, `steps` of them, plus the additions.
        cases.append(Case("jit loop %d x (c + a @ b) %d" % (steps, n), lambda: loop(A, B, C0).block_until_ready(),
                          ha, hb, steps * 2.0 * n ** 3, slack=steps, rel=2 * steps))
        for c in cases:
            if wanted(c.name):
                check(c, to_host, sync)
        del A, B, X, Y, C0

# ---------------------------------------------------------------------------------------------
else:
    os.environ.setdefault("TORCH_BLAS_PREFER_CUBLASLT", "1")  # read when torch loads
    import torch
    import torch.nn.functional as F

    assert torch.cuda.is_available(), "no CUDA device for torch"
    try:
        torch.backends.cuda.preferred_blas_library("cublaslt")
    except Exception as e:  # older torch: the environment variable alone
        print("preferred_blas_library unavailable (%s)" % e)
    print("torch %s (CUDA %s), TORCH_BLAS_PREFER_CUBLASLT=%s, preferred BLAS library %s" % (
        torch.__version__, torch.version.cuda, os.environ.get("TORCH_BLAS_PREFER_CUBLASLT"),
        getattr(torch.backends.cuda, "preferred_blas_library", lambda: "?")()))
    dev = torch.device("cuda")

    def sync():
        torch.cuda.synchronize()

    def to_host(x, i, rows, cols):
        x = x if x.dim() == 3 else x[None]
        return x[i][torch.as_tensor(rows, device=dev)][:, torch.as_tensor(cols, device=dev)].cpu().numpy()

    def dev_t(h):
        return torch.from_numpy(h).to(dev)

    for n in SIZES:
        ha, hb = host((1, n, n)), host((1, n, n))
        A, B = dev_t(ha[0]), dev_t(hb[0])
        bias = dev_t(host((n,)))
        Bt = B.t().contiguous()  # linear(x, w) = x w^T: w = B^T gives x B
        f = 2.0 * n ** 3
        # bias + AB: one more rounding (4 u |C_off| covers it and the activation's)
        cases = [Case("a @ b %d" % n, lambda: A @ B, ha, hb, f),
                 Case("addmm(bias, a, b) %d" % n, lambda: torch.addmm(bias, A, B), ha, hb, f, rel=4),
                 Case("F.linear(x, w, bias) %d" % n, lambda: F.linear(A, Bt, bias), ha, hb, f, rel=4)]
        if hasattr(torch, "_addmm_activation"):
            cases.append(Case("_addmm_activation relu %d" % n, lambda: torch._addmm_activation(bias, A, B),
                              ha, hb, f, rel=4))
            cases.append(Case("_addmm_activation gelu %d" % n,
                              lambda: torch._addmm_activation(bias, A, B, use_gelu=True), ha, hb, f, slack=1.2,
                              rel=4))
        h = n // 2
        hx, hy = host((2, h, h)), host((2, h, h))
        X, Y = dev_t(hx), dev_t(hy)
        cases.append(Case("bmm 2x%d" % h, lambda: torch.bmm(X, Y), hx, hy, 2 * 2.0 * h ** 3))
        for c in cases:
            if wanted(c.name):
                check(c, to_host, sync)
        del A, B, Bt, X, Y, bias
        torch.cuda.empty_cache()

print("%s cases: %d passed, %d failed" % (args.framework, sum(r["ok"] for r in results),
                                          sum(not r["ok"] for r in results)))
sys.exit(1 if failed or not results else 0)
