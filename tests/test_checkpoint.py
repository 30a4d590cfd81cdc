"""utils.checkpoint: the same gradients as without checkpointing, for less memory."""
import warnings

import pytest

import chibigrad as torch
from chibigrad import memory, nn
from chibigrad.utils.checkpoint import checkpoint, checkpoint_sequential

CHECKPOINT_WARNING = (
    "torch.utils.checkpoint: the use_reentrant parameter should be passed explicitly. Starting in PyTorch 2.9, "
    "calling checkpoint without use_reentrant will raise an exception. use_reentrant=False is recommended, but if "
    "you need to preserve the current default behavior, you can pass use_reentrant=True. Refer to docs for more "
    "details on the differences between the two variants.")
SEQUENTIAL_WARNING = (
    "torch.utils.checkpoint.checkpoint_sequential: the use_reentrant parameter should be passed explicitly. In "
    "version 2.9 we will raise an exception if use_reentrant is not passed. use_reentrant=False is recommended, but "
    "if you need to preserve the current default behavior, you can pass use_reentrant=True. Refer to docs for more "
    "details on the differences between the two variants.")

BOTH = pytest.mark.parametrize("use_reentrant", [True, False])


def tiny_dropout(x, p=0.5):
    """Dropout from chibigrad.rand: its mask depends on the random generator's state."""
    return x * (torch.rand(x.shape) >= p).to(x.dtype) / (1 - p)


def make_leaves(seed=0):
    torch.manual_seed(seed)
    x = torch.randn(4, 3, requires_grad=True)
    w = torch.randn(3, 3, requires_grad=True)
    return x, w


def grads(*tensors):
    out = [t.grad.clone() for t in tensors]
    for t in tensors:
        t.grad = None
    return out


def assert_same(grads_a, grads_b):
    assert len(grads_a) == len(grads_b)
    for a, b in zip(grads_a, grads_b):
        assert torch.allclose(a, b, rtol=1e-5, atol=1e-6)


# ---- checkpoint ------------------------------------------------------------------------------

@BOTH
def test_same_value_and_gradients_as_without_checkpointing(use_reentrant):
    x, w = make_leaves()

    def block(a):
        return torch.tanh(a @ w).sin() * a

    block(x).pow(2).sum().backward()
    plain = grads(x, w)
    y = checkpoint(block, x, use_reentrant=use_reentrant)
    # reentrant: one node for the segment; non-reentrant: the segment's own graph, as in PyTorch
    assert type(y.grad_fn).__name__ == ("CheckpointFunctionBackward" if use_reentrant else "MulBackward0")
    assert torch.allclose(y, block(x))
    y.pow(2).sum().backward()
    assert_same(grads(x, w), plain)


def test_forward_records_nothing_inside_and_saves_only_the_inputs():
    x, w = make_leaves()
    y = checkpoint(lambda a: (a @ w).exp().sin(), x, use_reentrant=True)
    (node, _), = [e for e in y.grad_fn.next_functions if e[0] is not None][:1]
    assert node.variable is x  # straight to the input: the inner ops left no nodes
    assert [info[0] for info in y.grad_fn.saved_tensors_info] == [(4, 3)]


def test_warns_like_pytorch_when_use_reentrant_is_not_passed():
    x, _ = make_leaves()
    with pytest.warns(UserWarning) as record:
        checkpoint(torch.sin, x)
    assert [str(w.message) for w in record] == [CHECKPOINT_WARNING]
    assert record[0].filename == __file__
    with pytest.warns(UserWarning) as record:
        checkpoint_sequential([torch.sin, torch.cos], 2, x)
    assert [str(w.message) for w in record] == [SEQUENTIAL_WARNING]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        checkpoint(torch.sin, x, use_reentrant=True)
        checkpoint(torch.sin, x, use_reentrant=False)
        checkpoint_sequential([torch.sin, torch.cos], 2, x, use_reentrant=False)


@BOTH
def test_non_tensor_arguments(use_reentrant):
    x, w = make_leaves()

    def scaled(a, factor, mode, nothing):
        assert nothing is None
        return (a @ w) * factor if mode == "scale" else a

    scaled(x, 3, "scale", None).sum().backward()
    plain = grads(x, w)
    checkpoint(scaled, x, 3, "scale", None, use_reentrant=use_reentrant).sum().backward()
    assert_same(grads(x, w), plain)


def test_keyword_arguments_need_the_non_reentrant_variant():
    x, w = make_leaves()
    scale = torch.tensor(2.0, requires_grad=True)

    def f(a, scale=1.0):
        return (a @ w) * scale

    with pytest.raises(ValueError, match="^Unexpected keyword arguments: scale$"):
        checkpoint(f, x, use_reentrant=True, scale=scale)
    f(x, scale=scale).sum().backward()
    plain = grads(x, w, scale)
    checkpoint(f, x, use_reentrant=False, scale=scale).sum().backward()
    assert_same(grads(x, w, scale), plain)  # a tensor passed by keyword gets its gradient too


@BOTH
def test_several_outputs(use_reentrant):
    x, w = make_leaves()

    def two(a):
        h = a @ w
        return h.tanh(), h * 3

    for pick in (lambda a, b: (a * b).sum(), lambda a, b: b.sum()):  # both used, one unused
        pick(*two(x)).backward()
        plain = grads(x, w)
        a, b = checkpoint(two, x, use_reentrant=use_reentrant)
        assert (a.grad_fn is b.grad_fn) == use_reentrant
        pick(a, b).backward()
        assert_same(grads(x, w), plain)


@BOTH
def test_dropout_replays_the_same_mask_thanks_to_the_rng_state(use_reentrant):
    x, w = make_leaves()

    def block(a):
        return tiny_dropout((a @ w).relu())

    torch.manual_seed(1)
    block(x).sum().backward()
    plain = grads(x, w)
    after_plain = torch.rand(1).item()

    torch.manual_seed(1)
    checkpoint(block, x, use_reentrant=use_reentrant).sum().backward()
    assert_same(grads(x, w), plain)
    assert torch.rand(1).item() == after_plain  # backward restored the generator it found


def test_without_preserve_rng_state_dropout_draws_a_new_mask():
    x, w = make_leaves()

    def block(a):
        return tiny_dropout(a @ w)

    torch.manual_seed(1)
    block(x).sum().backward()
    plain = grads(x, w)
    torch.manual_seed(1)
    checkpoint(block, x, use_reentrant=True, preserve_rng_state=False).sum().backward()
    assert not torch.allclose(grads(x, w)[0], plain[0])  # silently wrong gradients


@BOTH
def test_module_parameters_get_the_same_gradients(use_reentrant):
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(5, 8), nn.ReLU(), nn.Dropout(0.3), nn.Linear(8, 2))
    x = torch.randn(6, 5, requires_grad=True)

    torch.manual_seed(2)
    model(x).pow(2).sum().backward()
    plain = grads(x, *model.parameters())
    torch.manual_seed(2)
    checkpoint(model, x, use_reentrant=use_reentrant).pow(2).sum().backward()
    assert_same(grads(x, *model.parameters()), plain)


def test_input_without_grad_reentrant_gives_parameters_nothing_non_reentrant_works():
    torch.manual_seed(0)
    layer = nn.Linear(3, 2)
    data = torch.randn(4, 3)  # a batch: does not require grad
    layer(data).sum().backward()
    plain = grads(*layer.parameters())

    with pytest.warns(UserWarning, match="^None of the inputs have requires_grad=True. Gradients will be None$"):
        y = checkpoint(layer, data, use_reentrant=True)
    assert not y.requires_grad  # PyTorch's well-known pitfall of the reentrant variant

    checkpoint(layer, data, use_reentrant=False).sum().backward()
    assert_same(grads(*layer.parameters()), plain)


class Block(nn.Module):
    """A residual block whose inner MLP is checkpointed (a module inside a module)."""

    def __init__(self, width, use_reentrant, inner_checkpoint=False):
        super().__init__()
        self.mlp = nn.Sequential(nn.Linear(width, width), nn.Tanh(), nn.Linear(width, width))
        self.use_reentrant, self.inner_checkpoint = use_reentrant, inner_checkpoint

    def forward(self, x):
        if self.inner_checkpoint:
            return x + checkpoint(self.mlp, x, use_reentrant=self.use_reentrant)
        return x + self.mlp(x)


class Net(nn.Module):
    def __init__(self, use_reentrant, checkpoint_blocks, inner_checkpoint):
        super().__init__()
        self.blocks = nn.ModuleList([Block(4, use_reentrant, inner_checkpoint) for _ in range(3)])
        self.head = nn.Linear(4, 1)
        self.use_reentrant, self.checkpoint_blocks = use_reentrant, checkpoint_blocks

    def forward(self, x):
        for block in self.blocks:
            x = checkpoint(block, x, use_reentrant=self.use_reentrant) if self.checkpoint_blocks else block(x)
        return self.head(x)


@BOTH
@pytest.mark.parametrize("checkpoint_blocks, inner_checkpoint", [(True, False), (False, True), (True, True)])
def test_nested_modules_and_nested_checkpoints(use_reentrant, checkpoint_blocks, inner_checkpoint):
    torch.manual_seed(0)
    reference = Net(use_reentrant, False, False)
    net = Net(use_reentrant, checkpoint_blocks, inner_checkpoint)
    net.load_state_dict(reference.state_dict())
    x = torch.randn(5, 4, requires_grad=True)
    reference(x).sum().backward()
    plain = grads(x, *reference.parameters())
    net(x).sum().backward()
    assert_same(grads(x, *net.parameters()), plain)


def test_retain_graph_recomputes_again():
    x, w = make_leaves()
    y = checkpoint(lambda a: (a @ w).sin(), x, use_reentrant=True).sum()
    y.backward(retain_graph=True)
    once = grads(x, w)
    y.backward()
    assert_same(grads(x, w), once)


def test_saved_inputs_are_freed_after_backward_and_version_checked():
    x, w = make_leaves()
    y = checkpoint(lambda a: (a @ w).sin(), x * 1, use_reentrant=True).sum()
    y.backward()
    with pytest.raises(RuntimeError, match="^Trying to backward through the graph a second time"):
        y.backward()

    h = x * 1
    y = checkpoint(lambda a: (a @ w).sin(), h, use_reentrant=True).sum()
    with torch.no_grad():
        h.add_(1)  # changes the input the recomputation would use
    with pytest.raises(RuntimeError, match="has been modified by an inplace operation"):
        y.backward()


def test_under_no_grad_it_just_calls_the_function():
    x, w = make_leaves()
    with torch.no_grad():
        y = checkpoint(lambda a: a @ w, x, use_reentrant=True)
    assert y.grad_fn is None and not y.requires_grad


# ---- checkpoint_sequential -------------------------------------------------------------------

def mlp(depth, width, seed=0):
    torch.manual_seed(seed)
    layers = []
    for _ in range(depth):
        layers += [nn.Linear(width, width), nn.ReLU()]
    return nn.Sequential(*layers)


@BOTH
@pytest.mark.parametrize("segments", [1, 2, 3, 8])
def test_checkpoint_sequential_matches_the_plain_model(use_reentrant, segments):
    model = mlp(4, 6)
    x = torch.randn(3, 6, requires_grad=True)
    model(x).sum().backward()
    plain = grads(x, *model.parameters())
    out = checkpoint_sequential(model, segments, x, use_reentrant=use_reentrant)
    assert torch.allclose(out, model(x))
    out.sum().backward()
    assert_same(grads(x, *model.parameters()), plain)


def test_checkpoint_sequential_runs_the_last_segment_normally():
    model = mlp(2, 3)  # Linear ReLU Linear ReLU
    x = torch.randn(2, 3, requires_grad=True)
    out = checkpoint_sequential(model, 2, x, use_reentrant=True)
    assert type(out.grad_fn).__name__ == "ReluBackward0"  # as in PyTorch
    (node, _), = out.grad_fn.next_functions
    assert type(node).__name__ == "AddmmBackward0"


def test_checkpoint_sequential_takes_a_list_of_functions_and_dropout():
    x, w = make_leaves()
    functions = [lambda a: a @ w, torch.tanh, tiny_dropout, lambda a: a @ w, torch.sin]
    torch.manual_seed(3)
    out = x
    for f in functions:
        out = f(out)
    out.sum().backward()
    plain = grads(x, w)
    torch.manual_seed(3)
    checkpoint_sequential(functions, 2, x, use_reentrant=True).sum().backward()
    assert_same(grads(x, w), plain)


def test_checkpoint_sequential_rejects_unknown_keywords():
    with pytest.raises(ValueError, match="^Unexpected keyword arguments: foo$"):
        checkpoint_sequential([torch.sin], 1, torch.ones(2), use_reentrant=True, foo=1)


# ---- memory -----------------------------------------------------------------------------------

def peak_saved(run):
    """Peak bytes held by saved tensors while ``run()`` does forward and backward."""
    memory.reset_peak()
    start = memory.saved()
    run()
    assert memory.saved() == start  # backward released everything it saved, recomputed graphs included
    return memory.max_saved() - start


def test_checkpointing_really_lowers_the_memory_saved_for_backward():
    depth, width, batch = 16, 32, 256
    model = mlp(depth, width)
    x = torch.randn(batch, width, requires_grad=True)

    plain = peak_saved(lambda: model(x).sum().backward())
    checkpointed = peak_saved(lambda: checkpoint_sequential(model, 4, x, use_reentrant=True).sum().backward())

    activation = batch * width * 4
    assert plain >= depth * activation  # at least one saved activation per layer
    assert checkpointed < 0.5 * plain
    # 3 checkpointed segment inputs (x among them) + one segment's activations and weights at a time
    assert checkpointed <= (3 + 2 * depth // 4) * activation + depth // 4 * width * (width + 1) * 4


def test_checkpointed_forward_keeps_only_segment_inputs():
    model = mlp(8, 16)  # 4 segments of (Linear, ReLU, Linear, ReLU)
    x = torch.randn(64, 16, requires_grad=True)
    start = memory.saved()
    out = checkpoint_sequential(model, 4, x, use_reentrant=True)
    activation, weight = 64 * 16 * 4, 16 * 16 * 4
    # 3 checkpointed segments keep their input; the last, plain segment keeps what PyTorch's ops keep:
    # each Linear its input and weight, each ReLU its output (which is the next Linear's input).
    assert memory.saved() - start == 3 * activation + (1 + 2) * activation + 2 * weight
    del out
    assert memory.saved() == start


def test_non_reentrant_keeps_no_activation_and_recomputes_once_per_backward():
    """use_reentrant=False: the graph is recorded (real node names) but its saved tensors are only numbers
    until backward needs them; then the function runs once more, and gradients equal the plain ones."""
    x, w = make_leaves()
    runs = []

    def block(a):
        runs.append(1)
        return (a @ w).tanh().exp()

    block(x).sum().backward()
    plain = grads(x, w)
    y = checkpoint(block, x, use_reentrant=False)
    node = y.grad_fn
    assert [type(n).__name__ for n in (node, node.next_functions[0][0])] == ["ExpBackward0", "TanhBackward0"]
    assert all(type(s).__name__ == "PackedSavedTensor" and isinstance(s._packed, int)
               for s in node._saved + node.next_functions[0][0]._saved)
    assert len(runs) == 2
    y.sum().backward()
    assert len(runs) == 3
    assert_same(grads(x, w), plain)


def test_non_reentrant_refuses_a_function_that_saves_differently_when_run_again():
    x, w = make_leaves()
    calls = []

    def moody(a):
        calls.append(1)
        return (a @ w).tanh() if len(calls) == 1 else (a @ w).exp().tanh()

    y = checkpoint(moody, x, use_reentrant=False)
    with pytest.raises(torch.utils.checkpoint.CheckpointError, match="A different number of tensors was saved"):
        y.sum().backward()


def test_non_reentrant_counts_its_inputs_and_recomputed_tensors_as_saved():
    """The hooks, not the nodes, hold what a non-reentrant checkpoint keeps for backward: its inputs from
    forward on, then the recomputed activations while its segment's backward runs. Both count as saved, so
    a wide first segment raises the peak in backward, as with the reentrant variant."""
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(8, 64), nn.Tanh(), nn.Linear(64, 64), nn.Tanh(), nn.Linear(64, 8), nn.Tanh(),
                          nn.Linear(8, 8))
    x = torch.randn(16, 8, requires_grad=True)
    for segments in (2, 3):
        peaks = {}
        for use_reentrant in (True, False):
            memory.reset_peak()
            start = memory.saved()
            out = checkpoint_sequential(model, segments, x, use_reentrant=use_reentrant)
            forward = memory.max_saved() - start
            out.sum().backward()
            peaks[use_reentrant] = memory.max_saved() - start
            assert peaks[use_reentrant] > forward  # the recomputed wide segment
            del out
            assert memory.saved() == start  # all of it freed after backward
        assert peaks[False] == peaks[True]
