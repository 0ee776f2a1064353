"""examples/distributed/scalapack_pdgemm.py — ScaLAPACK pdgemm (Debian's libscalapack-openmpi) on host
memory, its local dgemm_ calls offloaded per rank by libozgemm_blas.so (docs/distributed.md,
"ScaLAPACK"). The slow path: every offloaded dgemm_ moves its A, B and C over PCIe. One rank per GPU:

  mpirun -n 4 -x LD_PRELOAD=$PWD/build/dropin-dist/libozgemm_blas.so -x OZGEMM_BLAS_LOG=summary \
      python3 examples/distributed/scalapack_pdgemm.py --size 8192 --nb 1024

Each rank's offload picks its GPU from OMPI_COMM_WORLD_LOCAL_RANK (docs/dropin.md, "Which GPU"). No
mpi4py: BLACS starts MPI. A and B are filled from a hash of their global indices, so any rank can
rebuild any row of A or column of B for the check (ozcheck.py). pdgemm sums the products of its k-panels
(at least nb wide) into C through the local dgemm_'s beta = 1: each offloaded product is within
min(4, nb) u of its own, and at most ceil(n / nb) - 1 additions follow, so the bound's constant is
min(4, nb) + ceil(n / nb) - 1; the printed native ratio (same bound) is the engine's own error.
Every rank prints its line and, with --json, appends its own JSON line.
"""
import argparse
import ctypes
import ctypes.util
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import ozcheck  # noqa: E402

p = argparse.ArgumentParser()
p.add_argument("--size", type=int, default=4096, help="global size: A, B, C are n x n")
p.add_argument("--nb", type=int, default=1024, help="block size of the 2-D block-cyclic distribution")
p.add_argument("--rounds", type=int, default=3)
p.add_argument("--samples", type=int, default=6)
p.add_argument("--seed", type=int, default=1)
p.add_argument("--scalapack", default="libscalapack-openmpi.so.2.2",
               help="the ScaLAPACK library (Debian: libscalapack-openmpi.so.2.2)")
p.add_argument("--json")
p.add_argument("--tag", default="")
args = p.parse_args()

sl = ctypes.CDLL(args.scalapack, mode=ctypes.RTLD_GLOBAL)
c_int_p = ctypes.POINTER(ctypes.c_int)


def ints(*values):
    return [ctypes.c_int(v) for v in values]


# BLACS: process grid P = pr x pc, as square as possible.
me, nprocs = ctypes.c_int(), ctypes.c_int()
sl.Cblacs_pinfo(ctypes.byref(me), ctypes.byref(nprocs))
pr = int(np.sqrt(nprocs.value))
while nprocs.value % pr:
    pr -= 1
pc = nprocs.value // pr
ctxt = ctypes.c_int()
sl.Cblacs_get(-1, 0, ctypes.byref(ctxt))
sl.Cblacs_gridinit(ctypes.byref(ctxt), b"Row", pr, pc)
nprow, npcol, myrow, mycol = ints(0, 0, 0, 0)
sl.Cblacs_gridinfo(ctxt, ctypes.byref(nprow), ctypes.byref(npcol), ctypes.byref(myrow), ctypes.byref(mycol))

n, nb = args.size, args.nb
numroc = sl.numroc_
numroc.restype = ctypes.c_int


def local_count(my, nprocs_dim):
    a, b, my_c, zero, np_c = ints(n, nb, my, 0, nprocs_dim)
    return numroc(ctypes.byref(a), ctypes.byref(b), ctypes.byref(my_c), ctypes.byref(zero), ctypes.byref(np_c))


mloc, nloc = local_count(myrow.value, pr), local_count(mycol.value, pc)


def global_index(local, my, nprocs_dim):
    """Global indices of local rows (or columns) 0..local-1 of a block-cyclic distribution."""
    l = np.arange(local)
    return (l // nb * nprocs_dim + my) * nb + l % nb


def entries(which, i, j):
    """Entries of A (which 1) or B (which 2) at global indices i (rows) x j (columns), in [-1, 1):
    a hash of (which, i, j, seed), the same on every rank."""
    i = np.asarray(i, dtype=np.uint64)[:, None]
    j = np.asarray(j, dtype=np.uint64)[None, :]
    with np.errstate(over="ignore"):
        h = (i * np.uint64(0x9E3779B97F4A7C15) ^ (j + np.uint64(which * 0x632BE59BD9B4E019 + args.seed))) \
            * np.uint64(0xBF58476D1CE4E5B9)
        h ^= h >> np.uint64(31)
        h *= np.uint64(0x94D049BB133111EB)
        h ^= h >> np.uint64(29)
    return (h >> np.uint64(11)).astype(np.float64) * 2.0 ** -52 - 1.0


rows_g, cols_g = global_index(mloc, myrow.value, pr), global_index(nloc, mycol.value, pc)
lld = max(1, mloc)
A = np.asfortranarray(entries(1, rows_g, cols_g))
B = np.asfortranarray(entries(2, rows_g, cols_g))
C = np.zeros((mloc, nloc), order="F")
desc = (ctypes.c_int * 9)()
info = ctypes.c_int()
m_, n_, mb_, nb_, zero_, lld_ = ints(n, n, nb, nb, 0, lld)
sl.descinit_(desc, ctypes.byref(m_), ctypes.byref(n_), ctypes.byref(mb_), ctypes.byref(nb_), ctypes.byref(zero_),
             ctypes.byref(zero_), ctypes.byref(ctxt), ctypes.byref(lld_), ctypes.byref(info))
if info.value:
    sys.exit("descinit_ failed: info %d" % info.value)

blas = ozcheck.DropIn("blas")
dptr = ctypes.POINTER(ctypes.c_double)


def pdgemm():
    one, zero, ione = ctypes.c_double(1.0), ctypes.c_double(0.0), ctypes.c_int(1)
    sl.pdgemm_(b"N", b"N", ctypes.byref(m_), ctypes.byref(n_), ctypes.byref(n_), ctypes.byref(one),
               A.ctypes.data_as(dptr), ctypes.byref(ione), ctypes.byref(ione), desc,
               B.ctypes.data_as(dptr), ctypes.byref(ione), ctypes.byref(ione), desc, ctypes.byref(zero),
               C.ctypes.data_as(dptr), ctypes.byref(ione), ctypes.byref(ione), desc)


def timed(on):
    blas.set_enabled(on)
    sl.Cblacs_barrier(ctxt, b"A")
    t0 = ozcheck.wall()
    pdgemm()
    sl.Cblacs_barrier(ctxt, b"A")
    return ozcheck.wall() - t0


for on in (False, True):  # warm-up (the offload's buffers, the GPU's start)
    timed(on)
blas.reset()
times = ozcheck.rotated_rounds(args.rounds, timed)
stats = blas.stats()

# The check on entries this rank holds: sampled local rows and columns, exact products from the
# rebuilt rows of A and columns of B.
li = ozcheck.sample_indices(mloc, args.samples, args.seed + 11 * me.value) if mloc else np.array([], dtype=int)
lj = ozcheck.sample_indices(nloc, args.samples, args.seed + 13 * me.value) if nloc else np.array([], dtype=int)
const = ozcheck.fp64_constant(nb) + (n + nb - 1) // nb - 1
ratios = {}
everything = np.arange(n)
exact = abs_product = None
if len(li) and len(lj):
    exact, abs_product = ozcheck.exact_products(entries(1, rows_g[li], everything), entries(2, everything, cols_g[lj]))
for on in (False, True):
    blas.set_enabled(on)
    pdgemm()
    ratios[on] = ozcheck.contract_ratio(C[np.ix_(li, lj)], exact, abs_product, const) \
        if exact is not None else 0.0
blas.set_enabled(True)

flop = 2.0 * n * n * n
t_off, t_on = ozcheck.median(times["off"]), ozcheck.median(times["on"])
ok = ratios[True] <= 1.0 and stats.get("failed", 0) == 0
print("%s scalapack rank %d (grid %dx%d at %d,%d) n=%d nb=%d: error/bound offload on %.3g, off %.3g; "
      "system BLAS %.2f TFLOP/s, offload %.2f TFLOP/s (x%.2f), medians of %d rounds; offload: %s" % (
          "PASS" if ok else "FAIL", me.value, pr, pc, myrow.value, mycol.value, n, nb, ratios[True], ratios[False],
          ozcheck.tflops(flop, t_off), ozcheck.tflops(flop, t_on), t_off / t_on, args.rounds,
          ozcheck.counters_line(stats)), flush=True)
ozcheck.write_json(args.json, {
    "engine": "scalapack", "n": n, "nb": nb, "ranks": nprocs.value, "rank": me.value, "tag": args.tag,
    "rounds": args.rounds, "seconds_off": times["off"], "seconds_on": times["on"],
    "tflops_off": ozcheck.tflops(flop, t_off), "tflops_on": ozcheck.tflops(flop, t_on), "speedup": t_off / t_on,
    "max_ratio_on": ratios[True], "max_ratio_off": ratios[False], "ok": ok,
    "intercepted": stats.get("intercepted", 0),
    "declined_by_reason": {k: v for k, v in stats.get("declined_by_reason", {}).items() if v}})
sl.Cblacs_gridexit(ctxt)
sl.Cblacs_exit(0)
sys.exit(0 if ok else 1)
