"""PyTorch autograd for :func:`ozgemm.matmul` (imported by it only for a tensor that requires grad,
so ``import ozgemm`` never imports torch).

For ``c = alpha * a @ b`` (numpy.matmul's shapes: stacks, broadcast batch dimensions, 1-D
operands) the backward is ``grad_a = conj(alpha) * g @ b^H`` and ``grad_b = conj(alpha) * a^H @ g``
(PyTorch's convention for complex gradients, the conjugate Wirtinger derivative; for float64 the
conjugates are no-ops: ``alpha * g @ b^T``), both through ozgemm.matmul with the forward's options
(accuracy, slices, scheme, moduli, variant, stream), each summed over the batch dimensions its
input was broadcast along and reshaped to the input's shape. ``b^H`` is PyTorch's lazy conjugate
view, which ozgemm.matmul passes as CUBLAS_OP_C where the layout allows. A float64 operand of a
complex128 product is converted first by ``Tensor.to`` (recorded, so its gradient is the real part). The backward is itself differentiable (it calls ozgemm.matmul, which records this
Function again when the graph is built: ``create_graph=True``).
"""
from __future__ import annotations

from typing import Any, Dict, Optional, Tuple, Union

import torch

from . import matmul as _ozgemm_matmul


def grad_enabled() -> bool:
    return torch.is_grad_enabled()


def matmul(a: Any, b: Any, alpha: Union[float, complex], options: Dict[str, Any]) -> torch.Tensor:
    """alpha * a @ b recorded for autograd (a or b requires grad; both are tensors)."""
    for name, x in (("a", a), ("b", b)):
        if not isinstance(x, torch.Tensor):
            raise TypeError(f"{name}: autograd needs both operands to be torch tensors, got "
                            f"{type(x).__module__}.{type(x).__qualname__}")
    if a.dtype != b.dtype and torch.complex128 in (a.dtype, b.dtype):  # numpy's promotion, differentiable
        a, b = a.to(torch.complex128), b.to(torch.complex128)
    return _Matmul.apply(a, b, alpha, options)


def _as_matrices(a: torch.Tensor, b: torch.Tensor, g: torch.Tensor) -> Tuple[torch.Tensor, ...]:
    """a, b and the result's gradient g with numpy.matmul's size-1 dimensions for 1-D operands:
    a (k,) -> (1, k), b (k,) -> (k, 1), g: batch + (m, n)."""
    if b.dim() == 1:
        b, g = b.unsqueeze(-1), g.unsqueeze(-1)   # g: batch + (m,) -> batch + (m, 1); 0-D -> (1,)
    if a.dim() == 1:
        a, g = a.unsqueeze(0), g.unsqueeze(-2)    # g: batch + (n,) -> batch + (1, n)
    return a, b, g


class _Matmul(torch.autograd.Function):
    @staticmethod
    def forward(ctx: Any, a: torch.Tensor, b: torch.Tensor, alpha: float,  # type: ignore[override]
                options: Dict[str, Any]) -> torch.Tensor:
        ctx.save_for_backward(a, b)
        ctx.alpha, ctx.options = alpha, options
        return _ozgemm_matmul(a.detach(), b.detach(), alpha=alpha, **options)

    @staticmethod
    def backward(ctx: Any, g: torch.Tensor) -> Tuple[Optional[torch.Tensor], ...]:  # type: ignore[override]
        a, b = ctx.saved_tensors
        a2, b2, g2 = _as_matrices(a, b, g)
        grad_a = grad_b = None
        alpha = ctx.alpha.conjugate()  # float.conjugate() is the float itself
        if ctx.needs_input_grad[0]:  # Tensor.conj() of a real tensor is the tensor itself
            grad = _ozgemm_matmul(g2, b2.transpose(-1, -2).conj(), alpha=alpha, **ctx.options)
            grad_a = grad.sum_to_size(a2.shape).reshape(a.shape)
        if ctx.needs_input_grad[1]:
            grad = _ozgemm_matmul(a2.transpose(-1, -2).conj(), g2, alpha=alpha, **ctx.options)
            grad_b = grad.sum_to_size(b2.shape).reshape(b.shape)
        return grad_a, grad_b, None, None
