"""torch.func: derivatives as functions that return functions (``grad(f)(x)``).

``grad(f)`` is a new function that runs ``f`` on fresh leaves made from its arguments and returns
d f / d argument. The transforms compose (``grad(grad(f))``, ``jacrev(jacrev(f))``, ``jacfwd(jacrev(f))``):
a reverse-mode transform records its backward (``create_graph``) so an outer one can differentiate it
again, and a result keeps a graph only if it depends on tensors from outside the transform (a captured
weight that requires grad, or an outer transform's leaves), as in PyTorch. ``grad``, ``vjp`` and
``jacrev`` are reverse mode (``autograd.grad``); ``jvp`` and ``jacfwd`` are forward mode
(``autograd.forward_ad``), each ``jvp`` a level of its own, so that they nest (``jacfwd(jacfwd(f))``;
``hessian`` is ``jacfwd(jacrev(f))``).

``vmap(f)`` runs ``f`` on a whole batch at once (chibigrad/batching.py): ``jacrev`` is one vjp vmapped
over the rows of the identity, ``jacfwd`` one jvp vmapped over its columns, as in PyTorch, and
``vmap(grad(f))`` gives per-sample gradients in one backward pass.
"""
from . import batching, creation
from .autograd import forward_ad
from .autograd import grad as _autograd_grad
from .autograd.grad_mode import enable_grad
from .autograd.node import AccumulateGrad
from .ops import cat, stack
from .tensor import Tensor, wrap_dim

__all__ = ["grad", "grad_and_value", "vjp", "jvp", "jacrev", "jacfwd", "hessian", "functional_call", "vmap",
           "stack_module_state"]


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
            nums = _argnums_tuple(argnums)
            args, own, output = _call_on_fresh(lambda a: func(*a, **kwargs), list(args), nums, has_aux)
            value, aux = output if has_aux else (output, None)
            _check_scalar("grad_and_value(f)(*args)", value)
            grads = _grad([value], own, None, create_graph=True, allow_unused=True)
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


def _call_on_fresh(call, args, nums, has_aux):
    """``call(args)`` with ``args[i]`` (``i`` in ``nums``) replaced by fresh leaves; returns the new args,
    the leaves and the output. Inside vmap a leaf is batched at every level its arguments or the output
    are (rerunning ``call`` if the output is batched where no argument was: a captured batched tensor),
    because the gradients are computed on the samples side by side: one leaf per sample."""
    wanted = {lvl for a in args for t in _leaves(a) for lvl in batching.levels(t)}
    while True:
        fresh, own = list(args), []
        for i in nums:
            fresh[i] = _map(lambda x: _fresh(batching.batch_to_levels(x, wanted)), args[i])
            own += _leaves(fresh[i])
        output = call(fresh)
        found = {lvl for t in _leaves(output[0] if has_aux else output) for lvl in batching.levels(t)}
        if found <= wanted:
            return fresh, own, output
        wanted |= found


def _grad(outputs, inputs, grad_outputs, **kwargs):
    """``autograd.grad``; inside vmap, on the plain tensors beneath the batched ones (chibigrad/batching.py)."""
    if batching.is_open():
        return batching.grad(outputs, inputs, grad_outputs, **kwargs)
    return _autograd_grad(outputs, inputs, grad_outputs, **kwargs)


def _check_scalar(name, value):
    if not isinstance(value, Tensor):
        raise RuntimeError(f"{name}: Expected f(*args) to return a Tensor, got {type(value)}")
    if value.ndim != 0:
        raise RuntimeError(f"{name}: Expected f(*args) to return a scalar Tensor, got tensor with {value.ndim} dims. "
                           "Maybe you wanted to use the vjp or jacrev APIs instead?")


def vjp(func, *primals, has_aux=False):
    """``(func(*primals), vjp_fn)``: ``vjp_fn(v)`` is v^T J, a tuple with one entry per primal."""
    with enable_grad():
        _, own, output = _call_on_fresh(lambda a: func(*a), list(primals), range(len(primals)), has_aux)
    output, aux = output if has_aux else (output, None)

    def vjp_fn(cotangents):
        outputs, cotangents = (list(output), list(cotangents)) if isinstance(output, (tuple, list)) else \
            ([output], [cotangents])
        with enable_grad():
            grads = _grad(outputs, own, cotangents, retain_graph=True, create_graph=True, allow_unused=True)
        return tuple(creation.zeros_like(o) if g is None else _own_result(g, own) for g, o in zip(grads, own))

    result = _map(lambda t: _own_result(t, own) if t.requires_grad else t, output)
    return (result, vjp_fn, aux) if has_aux else (result, vjp_fn)


def jvp(func, primals, tangents, *, has_aux=False):
    """``(func(*primals), J tangents)`` in one forward pass with dual tensors (forward mode)."""
    _check_jvp_arguments(primals, tangents)
    with forward_ad.nested_level():
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


def jacrev(func, argnums=0, *, chunk_size=None):
    """The Jacobian, row by row: one vjp, vmapped over the rows of the identity (one batched backward
    pass); shape: the output's, then the argument's."""
    def wrapper(*args):
        nums = _argnums_tuple(argnums)
        output, vjp_fn = vjp(_with_args(func, args, nums), *[args[i] for i in nums])
        rows = vmap(vjp_fn, chunk_size=chunk_size)(_identity(output))
        jacobians = tuple(r.reshape(*output.shape, *args[i].shape) for r, i in zip(rows, nums))
        return jacobians if isinstance(argnums, tuple) else jacobians[0]
    return wrapper


def _with_args(func, args, nums):
    """``func`` as a function of the arguments numbered ``nums`` only (the others fixed to ``args``')."""
    def partial(*chosen):
        full = list(args)
        for i, value in zip(nums, chosen):
            full[i] = value
        return func(*full)
    return partial


def jacfwd(func, argnums=0, *, randomness="error"):
    """The Jacobian, column by column: one jvp, vmapped over the columns of the identity (one batched
    forward pass); the same numbers as ``jacrev``."""
    def wrapper(*args):
        x = args[argnums]
        rest = lambda t: func(*args[:argnums], t, *args[argnums + 1:])  # noqa: E731
        columns = vmap(lambda t: jvp(rest, (x,), (t,))[1], randomness=randomness)(_identity(x)).movedim(0, -1)
        return columns.squeeze(-1) if x.ndim == 0 else columns.view(*columns.shape[:-1], *x.shape)  # as PyTorch
    return wrapper


def _identity(t):
    """The rows of the identity matrix, each shaped like ``t``: the basis a Jacobian is vmapped over."""
    n = t.numel()
    return creation.eye(n, dtype=t.dtype, device=t.device).reshape(n, *t.shape)


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


def vmap(func, in_dims=0, out_dims=0, randomness="error", *, chunk_size=None):
    """``func`` over a batch: ``vmap(f)(xs)`` is ``stack([f(x) for x in xs])`` computed in one call of each op
    (chibigrad/batching.py). ``in_dims`` says which dim of each argument is the batch (None: not batched),
    ``out_dims`` where the batch goes in each output; ``randomness`` is 'error', 'same' or 'different'."""
    if randomness not in ("error", "different", "same"):
        raise RuntimeError(f"Only allowed values for randomness are 'error', 'different', or 'same'. Got {randomness}")
    if chunk_size is not None and chunk_size < 1:
        raise ValueError(f"vmap: chunk_size should be None or greater than 0. (got {chunk_size})")
    name = getattr(func, "__name__", repr(func))

    def wrapper(*args, **kwargs):
        flat, dims = _flat_in_dims(name, in_dims, args)
        size = _batch_size(flat, dims)
        if chunk_size is None or chunk_size >= size:
            return _vmap_call(func, name, args, kwargs, flat, dims, size, out_dims, randomness)
        pieces = []
        for start in range(0, size, chunk_size):
            stop = min(start + chunk_size, size)
            part = [x if d is None else x[(slice(None),) * d + (slice(start, stop),)] for x, d in zip(flat, dims)]
            part_args = _unflatten(args, iter(part))
            pieces.append(_vmap_call(func, name, part_args, kwargs, part, dims, stop - start, out_dims, randomness))
        return _cat_outputs(pieces, out_dims)
    return wrapper


def _vmap_call(func, name, args, kwargs, flat, dims, size, out_dims, randomness):
    with batching.open_level(size, randomness) as level:
        batched = [x if d is None else batching.add_batch_dim(x, d, level) for x, d in zip(flat, dims)]
        output = func(*_unflatten(args, iter(batched)), **kwargs)
        outs = _leaves_or_other(output)
        for o in outs:
            if not isinstance(o, Tensor):
                raise ValueError(f"vmap({name}, ...): `{name}` must only return Tensors, got type {type(o)}. Did you "
                                 f"mean to set out_dims= to None for output?")
        per_output = _broadcast_dims(f"vmap({name}, ..., out_dims={out_dims})(<inputs>): out_dims", "outputs",
                                     out_dims, output)
        results = []
        for o, d in zip(outs, per_output):
            if d is None:
                if o._level == level:
                    raise ValueError(f"vmap({name}, ...): `{name}` can not return a BatchedTensor when out_dim is None")
                results.append(o)
            else:
                results.append(batching.remove_batch_dim(o, level, size, wrap_dim(d, o.ndim + 1)))
    return _unflatten(output, iter(results))


def _flat_in_dims(name, in_dims, args):
    """The arguments' leaves and the batch dim of each, checked as PyTorch checks them."""
    prefix = f"vmap({name}, in_dims={in_dims}, ...)(<inputs>)"
    if not isinstance(in_dims, (int, tuple)):
        raise ValueError(f"{prefix}: expected `in_dims` to be int or a (potentially nested) tuple matching the "
                         f"structure of inputs, got: {type(in_dims)}.")
    flat = _leaves_or_other(args)
    dims = _broadcast_dims(f"{prefix}: in_dims", "inputs", in_dims, args)
    for x, d in zip(flat, dims):
        if d is None:
            continue
        if not isinstance(x, Tensor):
            raise ValueError(f"{prefix}: Got in_dim={d} for an input but the input is of type {type(x)}. We cannot "
                             f"vmap over non-Tensor arguments, please use None as the respective in_dim")
        if not -x.ndim <= d < x.ndim:
            raise ValueError(f"{prefix}: Got in_dim={d} for some input, but that input is a Tensor of dimensionality "
                             f"{x.ndim} so expected in_dim to satisfy -{x.ndim} <= in_dim < {x.ndim}.")
    return flat, [None if d is None else d % x.ndim for x, d in zip(flat, dims)]


def _batch_size(flat, dims):
    sizes = [x.shape[d] for x, d in zip(flat, dims) if d is not None]
    if not sizes:
        raise ValueError("vmap: Expected at least one Tensor to vmap over")
    if any(n != sizes[0] for n in sizes):
        raise ValueError(f"vmap: Expected all tensors to have the same size in the mapped dimension, got sizes "
                         f"{sizes} for the mapped dimension")
    return sizes[0]


def _broadcast_dims(what, name, dims, tree):
    """One dim per leaf of ``tree``: ``dims`` is an int (or None) for all, or a tree of them shaped as ``tree``
    (PyTorch's pytree prefix matching, for tuples, lists and dicts)."""
    found = _matched_dims(dims, tree)
    if found is None:
        raise ValueError(f"{what} is not compatible with the structure of `{name}`. {what.rsplit(': ', 1)[-1]} has "
                         f"structure {_tree_spec(dims)} but {name} has structure {_tree_spec(tree)}.")
    return found


def _matched_dims(dims, tree):
    if dims is None or isinstance(dims, int):
        return [dims] * len(_leaves_or_other(tree))
    if type(dims) in (tuple, list) and type(tree) is type(dims) and len(dims) == len(tree) or \
            isinstance(dims, dict) and isinstance(tree, dict) and dims.keys() == tree.keys():
        pairs = zip(dims.values(), tree.values()) if isinstance(dims, dict) else zip(dims, tree)
        found = [_matched_dims(sub, t) for sub, t in pairs]
        return None if None in found else [d for f in found for d in f]
    return None


def _tree_spec(tree, indent=2):
    """A tree's structure as PyTorch's pytree prints it (``*`` for a leaf)."""
    if isinstance(tree, (tuple, list, dict)):
        children = list(tree.values()) if isinstance(tree, dict) else list(tree)
        context = list(tree.keys()) if isinstance(tree, dict) else None
        inner = (",\n" + " " * indent).join(_tree_spec(c, indent + 2) for c in children)
        return f"TreeSpec({type(tree).__name__}, {context}, [{inner}])"
    return "*"


def _unflatten(tree, leaves):
    """``tree`` with its leaves (tensors or not) replaced, in order, from the iterator ``leaves``."""
    if isinstance(tree, (tuple, list)):
        return type(tree)(_unflatten(t, leaves) for t in tree)
    if isinstance(tree, dict):
        return {k: _unflatten(v, leaves) for k, v in tree.items()}
    return next(leaves)


def _cat_outputs(pieces, out_dims):
    """The outputs of vmap's chunks joined along each output's batch dim."""
    flat = [_leaves_or_other(p) for p in pieces]
    dims = _broadcast_dims("out_dims", "outputs", out_dims, pieces[0])
    joined = [cat(list(parts), dim=d) for parts, d in zip(zip(*flat), dims)]
    return _unflatten(pieces[0], iter(joined))


def stack_module_state(models):
    """The parameters and buffers of identically shaped ``models``, each stacked along a new first dim:
    ``(params, buffers)`` dicts for ``vmap(functional_call, in_dims=(0, 0, None))`` over an ensemble."""
    if not models:
        raise RuntimeError("stack_module_state: Expected at least one model, got 0.")
    if not (all(m.training for m in models) or all(not m.training for m in models)):
        raise RuntimeError("stack_module_state: Expected all models to have the same training/eval mode.")
    params = {k: stack([dict(m.named_parameters())[k].detach() for m in models]).requires_grad_()
              for k, _ in models[0].named_parameters()}
    buffers = {k: stack([dict(m.named_buffers())[k] for m in models]) for k, _ in models[0].named_buffers()}
    return params, buffers
