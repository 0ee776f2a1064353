# Host analysis (numpy, 48 x 48 x 8192, seed 1): how close cheaper lower bounds of |A||B| come to the exact one.
# P_c: the magnitude digits taken 2^c finer than the row's maximum allows and clamped at 127
# (min(floor(|a'| 2^c), 127) <= |a'| 2^c, so sum P_c 2^-2c is still a lower bound), for a global c and for a
# per-row c chosen by the row's own digit sum; P14: the two-digit bound of docs/numerics.md. Printed: the
# smallest ratio lower bound / exact over the entries (R2's excess scales with its inverse). The row scale
# here is floor(log2(127 / max)), the library's shift_from_max up to its exact rounding rule.
import numpy as np
rng=np.random.default_rng(1)
def phi_mat(shape,phi):
    u=rng.random(shape)-0.5
    return u*(np.exp(phi*rng.standard_normal(shape)) if phi>=0 else 1)
m=n=48; k=8192
for phi in [-1,0.5,1,1.5,2]:
    A=np.abs(phi_mat((m,k),phi)); B=np.abs(phi_mat((k,n),phi))
    # row scale: sigma such that max*2^sigma in [64,128)
    sa=np.floor(np.log2(127/A.max(1)))[:,None]; sb=np.floor(np.log2(127/B.max(0)))[None,:]
    As=A*2**sa; Bs=B*2**sb
    exact=As@Bs
    res=[]
    for c in range(0,8):
        ma=np.minimum(np.floor(As*2**c),127); mb=np.minimum(np.floor(Bs*2**c),127)
        P=(ma@mb)/4**c
        res.append((P/exact).min())
    # best per-row c chosen by max row sum of digits/2^c
    ca=np.argmax(np.stack([np.minimum(np.floor(As*2**c),127).sum(1)/2**c for c in range(8)]),0)
    cb=np.argmax(np.stack([np.minimum(np.floor(Bs*2**c),127).sum(0)/2**c for c in range(8)]),0)
    ma=np.minimum(np.floor(As*2.0**ca[:,None]),127)/2.0**ca[:,None]; mb=np.minimum(np.floor(Bs*2.0**cb[None,:]),127)/2.0**cb[None,:]
    Pbest=(ma@mb)/exact
    m14a=np.floor(As*128); m14b=np.floor(Bs*128); P14=(m14a@m14b)/2**14/exact
    print(f"phi {phi}: min P_c/exact c=0..7:", " ".join(f"{r:.3f}" for r in res), f"| per-row best {Pbest.min():.3f} (c {np.bincount(ca)}) | P14 {P14.min():.3f}")
