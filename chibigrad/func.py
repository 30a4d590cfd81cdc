"""torch.func: derivatives as functions that return functions (``grad(f)(x)``).

``grad(f)`` is a new function that runs ``f`` on fresh leaves made from its arguments and returns
d f / d argument. The transforms compose (``grad(grad(f))``, ``jacrev(jacrev(f))``, ``jacfwd(jacrev(f))``):
a reverse-mode transform records its backward (``create_graph``) so an outer one can differentiate it
again, and a result keeps a graph only if it depends on tensors from outside the transform (a captured
weight that requires grad, or an outer transform's leaves), as in PyTorch. ``grad``, ``vjp`` and
``jacrev`` are reverse mode (``autograd.grad``); ``jvp`` and ``jacfwd`` are forward mode
(``autograd.forward_ad``), whose one level means a forward transform cannot contain another
(``jacfwd(jacfwd(f))`` raises; ``hessian`` is ``jacfwd(jacrev(f))``). There is no ``vmap``.
"""
from . import creation
from .autograd import forward_ad
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
    if x.requires_grad:
        return x.view_as(x)
    return _detached(x, ()).requires_grad_()


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
    return _detached(t, own)


def _detached(t, own):
    """``t.detach()``, keeping the tangent an outer ``jvp`` gave ``t`` (cut from ``own`` leaves in turn)."""
    tangent = forward_ad.unpack_dual(t).tangent
    if tangent is None:
        return t.detach()
    return forward_ad.set_tangent(t.detach(), _own_result(tangent, own) if tangent.requires_grad else tangent)


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


def jvp(func, primals, tangents, *, has_aux=False):
    """``(func(*primals), J tangents)`` in one forward pass with dual tensors (forward mode)."""
    _check_jvp_arguments(primals, tangents)
    with forward_ad.dual_level():
        output = func(*[forward_ad.make_dual(p, t) for p, t in zip(primals, tangents)])
        output, aux = output if has_aux else (output, None)
        for o in _leaves_or_other(output):
            if not isinstance(o, Tensor):
                raise RuntimeError(f"jvp(f, primals, tangents): expected f(*primals) to return only tensors, got "
                                   f"unsupported type {type(o)}")
        values = _map(lambda o: forward_ad.unpack_dual(o).primal, output)
        tangents_out = _map(_tangent_or_zeros, output)
    return (values, tangents_out, aux) if has_aux else (values, tangents_out)


def _tangent_or_zeros(t):
    tangent = forward_ad.unpack_dual(t).tangent
    return creation.zeros_like(t) if tangent is None else tangent


def _check_jvp_arguments(primals, tangents):
    """PyTorch's checks: tuples of tensors of the same length (a mismatched shape is make_dual's error)."""
    if not isinstance(primals, tuple):
        raise RuntimeError("jvp(f, primals, tangents): Expected primals to be a tuple. E.g. it should be valid to "
                           "call f(*primals).")
    if not isinstance(tangents, tuple) or len(tangents) != len(primals):
        raise RuntimeError("jvp(f, primals, tangents): Expected primals and tangents to have the same python "
                           "structure. For example, if primals is a tuple of 3 tensors, tangents also must be.")
    if not primals:
        raise RuntimeError("jvp(f, primals, tangents): Expected primals to contain at least one Tensor.")


def _leaves_or_other(tree):
    """The leaves of nested tuples, lists and dicts, tensors or not."""
    if isinstance(tree, (tuple, list)):
        return [leaf for t in tree for leaf in _leaves_or_other(t)]
    if isinstance(tree, dict):
        return [leaf for t in tree.values() for leaf in _leaves_or_other(t)]
    return [tree]


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
