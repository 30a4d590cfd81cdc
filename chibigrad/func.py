"""torch.func: derivatives as functions that return functions (``grad(f)(x)``), built on ``autograd.grad``.

``grad(f)`` is a new function that runs ``f`` on fresh leaves made from its arguments and returns
d f / d argument. The transforms compose (``grad(grad(f))``, ``jacrev(jacrev(f))``): a transform
records its backward (``create_graph``) so an outer one can differentiate it again, and a result
keeps a graph only if it depends on tensors from outside the transform (a captured weight that
requires grad, or an outer transform's leaves), as in PyTorch. Everything is reverse mode:
``jvp`` and ``jacfwd`` use the double-backward trick (see ``autograd.functional``), so they give
the same numbers as forward mode, at the cost of a backward pass. There is no ``vmap``.
"""
from . import creation
from .autograd import grad as _autograd_grad
from .autograd.grad_mode import enable_grad
from .autograd.node import AccumulateGrad
from .ops import stack
from .tensor import Tensor

__all__ = ["grad", "grad_and_value", "vjp", "jvp", "jacrev", "jacfwd", "hessian", "functional_call"]


def _fresh(x):
    """A leaf of this transform standing for argument ``x``; connected to ``x`` if ``x`` needs a gradient."""
    if not x.dtype.is_floating_point:
        raise RuntimeError("only Tensors of floating point dtype can require gradients")
    return x.view_as(x) if x.requires_grad else x.detach().requires_grad_()


def _map(fn, tree):
    """``fn`` on every tensor in nested tuples, lists and dicts (PyTorch's pytrees, in short)."""
    if isinstance(tree, Tensor):
        return fn(tree)
    if isinstance(tree, (tuple, list)):
        return type(tree)(_map(fn, t) for t in tree)
    if isinstance(tree, dict):
        return {k: _map(fn, v) for k, v in tree.items()}
    return tree


def _leaves(tree):
    found = []
    _map(found.append, tree)
    return found


def _own_result(t, own):
    """``t`` without a graph if its graph reaches only this transform's own fresh leaves (the ``own``
    tensors): the derivative is then a plain value, as PyTorch returns it."""
    own_nodes = {id(o._accumulator()) for o in own if o.grad_fn is None}
    stack_, seen = [t.grad_fn], set()
    while stack_:
        node = stack_.pop()
        if node is None or id(node) in seen:
            continue
        seen.add(id(node))
        if isinstance(node, AccumulateGrad) and id(node) not in own_nodes:
            return t
        stack_.extend(n for n, _ in node.next_functions)
    return t.detach()


def _argnums_tuple(argnums):
    return argnums if isinstance(argnums, tuple) else (argnums,)


def grad_and_value(func, argnums=0, has_aux=False):
    """``(gradient, value)`` of a function returning a scalar tensor (and an aux value if ``has_aux``)."""
    def wrapper(*args, **kwargs):
        with enable_grad():
            args = list(args)
            nums = _argnums_tuple(argnums)
            own = []
            for i in nums:
                args[i] = _map(_fresh, args[i])
                own += _leaves(args[i])
            output = func(*args, **kwargs)
            value, aux = output if has_aux else (output, None)
            _check_scalar("grad_and_value(f)(*args)", value)
            grads = _autograd_grad(value, own, create_graph=True, allow_unused=True)
            grads = [creation.zeros_like(o) if g is None else _own_result(g, own) for g, o in zip(grads, own)]
            it = iter(grads)
            per_arg = tuple(_map(lambda _: next(it), args[i]) for i in nums)
        result = per_arg if isinstance(argnums, tuple) else per_arg[0]
        value, aux = _map(lambda t: _own_result(t, own) if t.requires_grad else t, (value, aux))
        return (result, (value, aux)) if has_aux else (result, value)
    return wrapper


def grad(func, argnums=0, has_aux=False):
    """d func / d argument(s) ``argnums``, for a function returning a scalar tensor."""
    transformed = grad_and_value(func, argnums, has_aux)

    def wrapper(*args, **kwargs):
        gradient, value = transformed(*args, **kwargs)
        return (gradient, value[1]) if has_aux else gradient
    return wrapper


def _check_scalar(name, value):
    if not isinstance(value, Tensor):
        raise RuntimeError(f"{name}: Expected f(*args) to return a Tensor, got {type(value)}")
    if value.ndim != 0:
        raise RuntimeError(f"{name}: Expected f(*args) to return a scalar Tensor, got tensor with {value.ndim} dims. "
                           "Maybe you wanted to use the vjp or jacrev APIs instead?")


def vjp(func, *primals, has_aux=False):
    """``(func(*primals), vjp_fn)``: ``vjp_fn(v)`` is v^T J, a tuple with one entry per primal."""
    with enable_grad():
        own = [_fresh(p) for p in primals]
        output = func(*own)
    output, aux = output if has_aux else (output, None)

    def vjp_fn(cotangents):
        with enable_grad():
            grads = _autograd_grad(output, own, cotangents, retain_graph=True, create_graph=True, allow_unused=True)
        return tuple(creation.zeros_like(o) if g is None else _own_result(g, own) for g, o in zip(grads, own))

    result = _map(lambda t: _own_result(t, own) if t.requires_grad else t, output)
    return (result, vjp_fn, aux) if has_aux else (result, vjp_fn)


def jvp(func, primals, tangents):
    """``(func(*primals), J tangents)``, by the double-backward trick: backward is linear in its incoming
    gradient u, so differentiating u^T J with respect to u in the direction of the tangents gives J v."""
    with enable_grad():
        own = [_fresh(p) for p in primals]
        output = func(*own)
        u = creation.zeros_like(output, requires_grad=True)
        u_times_j = _autograd_grad(output, own, u, create_graph=True, allow_unused=True)
        used = [(g, t) for g, t in zip(u_times_j, tangents) if g is not None]
        if used:
            (j_times_v,) = _autograd_grad([g for g, _ in used], u, [t for _, t in used], create_graph=True,
                                          allow_unused=True)
        else:
            j_times_v = None
    j_times_v = creation.zeros_like(output) if j_times_v is None else _own_result(j_times_v, own)
    return _own_result(output, own) if output.requires_grad else output, j_times_v


def jacrev(func, argnums=0):
    """The Jacobian, one vjp per output element (a row each); shape: output's then the argument's."""
    def wrapper(*args):
        x = args[argnums]
        rest = lambda t: func(*args[:argnums], t, *args[argnums + 1:])  # noqa: E731
        output, vjp_fn = vjp(rest, x)
        flat = output.reshape(-1)
        rows = [vjp_fn(_basis(flat, k).reshape(output.shape))[0] for k in range(flat.numel())]
        return stack(rows).reshape(*output.shape, *x.shape)
    return wrapper


def jacfwd(func, argnums=0):
    """The Jacobian, one jvp per input element (a column each); the same numbers as ``jacrev``."""
    def wrapper(*args):
        x = args[argnums]
        rest = lambda t: func(*args[:argnums], t, *args[argnums + 1:])  # noqa: E731
        flat = x.reshape(-1)
        columns = [jvp(rest, (x,), (_basis(flat, k).reshape(x.shape),))[1] for k in range(flat.numel())]
        output_shape = columns[0].shape
        return stack(columns, dim=-1).reshape(*output_shape, *x.shape)
    return wrapper


def _basis(flat, k):
    e = creation.zeros_like(flat)
    e[k] = 1.0
    return e


def hessian(func, argnums=0):
    """The matrix of second derivatives: ``jacfwd(jacrev(func))``, as PyTorch composes it."""
    return jacfwd(jacrev(func, argnums), argnums)


def functional_call(module, parameter_and_buffer_dicts, args=(), kwargs=None, *, tie_weights=True, strict=False):
    """Call ``module`` with some of its parameters and buffers replaced by the given tensors, for the call
    only: the module is left as it was. ``grad`` of a loss through it differentiates those tensors."""
    dicts = parameter_and_buffer_dicts
    replacements = {k: v for d in (dicts if isinstance(dicts, (tuple, list)) else [dicts]) for k, v in d.items()}
    originals = {}
    try:
        for name, value in replacements.items():
            owner, attr = _owner(module, name)
            originals[name] = owner.__dict__.get(attr, _MISSING), owner._parameters.get(attr, _MISSING)
            owner._parameters.pop(attr, None)
            object.__setattr__(owner, attr, value)
        return module(*(args if isinstance(args, tuple) else (args,)), **(kwargs or {}))
    finally:
        for name, (plain, param) in originals.items():
            owner, attr = _owner(module, name)
            owner.__dict__.pop(attr, None)
            if plain is not _MISSING:
                owner.__dict__[attr] = plain
            if param is not _MISSING:
                owner._parameters[attr] = param


_MISSING = object()


def _owner(module, name):
    """The submodule holding ``name`` ("0.weight": the first layer's weight) and the last part of it."""
    *path, attr = name.split(".")
    for part in path:
        module = getattr(module, part)
    return module, attr
