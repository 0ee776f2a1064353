"""examples/distributed/ozcheck.py — what the distributed examples share (docs/distributed.md):

* the preloaded drop-in library (libozgemm_hook.so or libozgemm_blas.so), reached with ctypes: switch
  it off and on at run time (the same engine without and with ozgemm, in one process), reset and
  read its counters;
* the FP64 check on sampled entries: the exact dot products of sampled rows of A and columns of B
  (error-free products, then one correctly rounded sum: math.fsum), and the ratio
  |C - AB| / (c u |A||B| + tiny) entrywise; the contract holds where the ratio is <= 1;
* timing in rotated rounds (off/on, on/off, ...) and the medians;
* one JSON line per result.

Only numpy and the standard library: every engine's example converts its samples to numpy first.
"""
import ctypes
import json
import math
import os
import statistics
import time

import numpy as np

U = 2.0 ** -53     # unit roundoff of float64
TINY = 1e-300      # absolute slack (entries whose bound underflows)


class DropIn:
    """The preloaded libozgemm_hook.so (prefix "Hook") or libozgemm_blas.so (prefix "Blas")."""

    def __init__(self, kind="hook"):
        name = "libozgemm_%s.so" % kind
        paths = [p for p in os.environ.get("LD_PRELOAD", "").replace(":", " ").split() if p.endswith(name)]
        self.loaded = bool(paths)
        self.path = paths[0] if paths else None
        self.prefix = "ozgemm" + kind.capitalize()
        self.lib = ctypes.CDLL(self.path) if self.loaded else None  # the preloaded copy (same handle)
        if self.lib:
            self._fn("SetEnabled", ctypes.c_int, [ctypes.c_int])
            self._fn("StatsJson", ctypes.c_size_t, [ctypes.c_char_p, ctypes.c_size_t])
            self._fn("ResetStats", None, [])

    def _fn(self, what, restype, argtypes):
        f = getattr(self.lib, self.prefix + what)
        f.restype, f.argtypes = restype, argtypes

    def set_enabled(self, on):
        """Switches the drop-in on (True) or off (every call goes to the real library)."""
        if self.lib:
            getattr(self.lib, self.prefix + "SetEnabled")(1 if on else 0)

    def reset(self):
        if self.lib:
            getattr(self.lib, self.prefix + "ResetStats")()

    def stats(self):
        """The counters as a dict ({} when the library is not preloaded)."""
        if not self.lib:
            return {}
        buf = ctypes.create_string_buffer(1 << 16)
        getattr(self.lib, self.prefix + "StatsJson")(buf, len(buf))
        return json.loads(buf.value.decode())


def counters_line(st):
    """One line of the counters that say what ran: calls, intercepted, emulated by scheme, native by
    ozgemm's choice, declined by reason, calls by entry point."""
    if not st:
        return "drop-in not preloaded"
    reasons = {k: v for k, v in st.get("declined_by_reason", {}).items() if v}
    apis = {k: v for k, v in st.get("calls_by_api", {}).items() if v}
    return ("calls %d, intercepted %d (Ozaki-I %d, Ozaki-II %d, native by ozgemm's choice %d), declined %d %s, "
            "failed %d, by entry point %s" % (st["calls"], st["intercepted"], st["emulated_ozaki1"],
                                              st["emulated_ozaki2"], st["ozgemm_native"], st["declined"],
                                              json.dumps(reasons), st["failed"], json.dumps(apis)))


def sample_indices(n, count, seed):
    """`count` distinct sorted indices in [0, n) (all of them when n <= count)."""
    rng = np.random.default_rng(seed)
    return np.sort(rng.choice(n, size=min(n, count), replace=False))


_SPLIT = 134217729.0  # 2^27 + 1 (Veltkamp)


def _two_product(a, b):
    """p + e == a * b exactly, elementwise (Dekker; no overflow for moderate entries)."""
    p = a * b
    c = _SPLIT * a
    ah = c - (c - a)
    al = a - ah
    c = _SPLIT * b
    bh = c - (c - b)
    bl = b - bh
    e = ((ah * bh - p) + ah * bl + al * bh) + al * bl
    return p, e


def exact_products(rows, cols):
    """(AB)_ij for rows (s x k: the sampled rows of A) and cols (k x t: the sampled columns of B),
    each the exact dot product rounded once; and (|A||B|)_ij in float64."""
    rows = np.asarray(rows, dtype=np.float64)
    cols = np.asarray(cols, dtype=np.float64)
    exact = np.empty((rows.shape[0], cols.shape[1]))
    for i in range(rows.shape[0]):
        for j in range(cols.shape[1]):
            p, e = _two_product(rows[i], cols[:, j])
            exact[i, j] = math.fsum(np.concatenate([p, e]).tolist())
    return exact, np.abs(rows) @ np.abs(cols)


def contract_ratio(c, exact, abs_product, const):
    """max |c - exact| / (const u |A||B| + tiny) over the samples (<= 1: within the bound); inf for
    a non-finite entry."""
    c = np.asarray(c, dtype=np.float64)
    if not np.all(np.isfinite(c)):
        return math.inf
    return float(np.max(np.abs(c - exact) / (const * U * abs_product + TINY)))


def fp64_constant(k):
    """The FP64 contract's constant for depth k: min(4, k) (native DGEMM's own bound is k)."""
    return min(4, k)


def rotated_rounds(rounds, run):
    """Calls run(on) for on in the rotated order off,on / on,off / ... `rounds` times each; returns
    {"off": [seconds...], "on": [seconds...]} (run returns the seconds it measured)."""
    times = {"off": [], "on": []}
    for r in range(rounds):
        for on in ((False, True) if r % 2 == 0 else (True, False)):
            times["on" if on else "off"].append(run(on))
    return times


def median(xs):
    return statistics.median(xs) if xs else float("nan")


def tflops(flop, seconds):
    return flop / seconds / 1e12 if seconds and seconds == seconds else float("nan")


def write_json(path, record):
    """Appends one JSON line (when path is set) and returns the line."""
    line = json.dumps(record, sort_keys=True)
    if path:
        with open(path, "a") as f:
            f.write(line + "\n")
    return line


def wall():
    return time.perf_counter()
