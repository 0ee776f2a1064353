# Host analysis (numpy, 1024 x 1024 x 8192, seed 2): the magnitude product over groups of g rows (columns),
# each group's digits the elementwise minimum at the group's smallest shift: a lower bound of every entry of
# the group at 1 / (ga gb) of the product's cost. Printed: the largest proxy excess (row max x column 1-norm
# + row 1-norm x column max, over the lower bound) against the ungrouped one, per grouping.
import numpy as np, time
rng=np.random.default_rng(2)
def phi_mat(shape,phi):
    u=rng.random(shape)-0.5
    return u*(np.exp(phi*rng.standard_normal(shape)) if phi>=0 else 1)
m=n=1024; k=8192
for phi in [-1,0.5,1]:
    A=np.abs(phi_mat((m,k),phi)); B=np.abs(phi_mat((k,n),phi)).T.copy()  # B as n x k
    sa=np.floor(np.log2(127/A.max(1))); sb=np.floor(np.log2(127/B.max(1)))
    da=np.floor(A*2**sa[:,None]); db=np.floor(B*2**sb[:,None])
    L=(da@db.T)/np.outer(2**sa,2**sb)          # lower bound of |A||B|
    t=np.outer(A.max(1),B.sum(1))+np.outer(A.sum(1),B.max(1))   # proxy of the truncation term
    e0=(t/L).max()
    res=[f"phi {phi}: proxy excess max, ungrouped 1.00"]
    for ga,gb in [(2,1),(2,2),(4,1),(4,4)]:
        sga=sa.reshape(-1,ga).min(1); sgb=sb.reshape(-1,gb).min(1)
        ga_d=np.floor(A*2**np.repeat(sga,ga)[:,None]).reshape(-1,ga,k).min(1)
        gb_d=np.floor(B*2**np.repeat(sgb,gb)[:,None]).reshape(-1,gb,k).min(1)
        Lg=(ga_d@gb_d.T)/np.outer(2**sga,2**sgb)
        Lg=np.repeat(np.repeat(Lg,ga,0),gb,1)
        res.append(f"g{ga}x{gb} {(t/Lg).max()/e0:.2f}")
    print(", ".join(res), f"(min L/exact {(L/(A@B.T)).min():.3f})")
