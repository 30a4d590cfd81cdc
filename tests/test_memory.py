"""chibigrad.memory is exact for the arrays chibigrad allocates.

Every check is a difference from the counters at the start of the test, so
tensors other tests left alive do not matter. The garbage collector is off
during each test: memory must be given back by reference counting alone (a
reference cycle would hide a leak), and a collection of some earlier test's
garbage cannot change the counters half-way through.
"""
import gc
import os
import pathlib
import subprocess
import sys

import pytest

import chibigrad as torch
from chibigrad import memory


@pytest.fixture(autouse=True)
def no_gc():
    gc.collect()
    gc.disable()
    yield
    gc.enable()


class Delta:
    """Counters relative to when it was made."""

    def __init__(self):
        self.start = memory.stats()

    @property
    def allocated(self):
        return memory.allocated() - self.start["allocated"]

    @property
    def saved(self):
        return memory.saved() - self.start["saved"]


@pytest.mark.parametrize("make, nbytes", [
    (lambda: torch.zeros(1000), 4000),
    (lambda: torch.zeros(1000, dtype=torch.float64), 8000),
    (lambda: torch.ones(3, 4), 48),
    (lambda: torch.randn(10, 10), 400),
    (lambda: torch.arange(10), 80),
    (lambda: torch.tensor([1.0, 2.0, 3.0]), 12),
    (lambda: torch.zeros(3, 4) @ torch.zeros(4, 5), 60),  # the operands die, the (3, 5) result stays
    (lambda: torch.zeros(0), 0),
])
def test_known_sizes(make, nbytes):
    d = Delta()
    t = make()
    assert d.allocated == nbytes
    del t
    assert d.allocated == 0


def test_views_and_detach_share_their_base():
    d = Delta()
    z = torch.zeros(1000)
    views = [z[10:20], z[::2], z.reshape(10, 100), z.view(100, 10).t(), z.detach(), z.unsqueeze(0).expand(5, 1000)]
    assert d.allocated == 4000
    del z
    assert d.allocated == 4000  # the views still hold the buffer
    views.pop(0)
    assert d.allocated == 4000
    del views
    assert d.allocated == 0


def test_clone_and_out_of_place_ops_allocate():
    z = torch.zeros(1000)
    d = Delta()
    c = z.clone()
    s = z + 1
    assert d.allocated == 8000
    del c, s
    assert d.allocated == 0


def test_in_place_ops_allocate_nothing():
    z = torch.zeros(1000)
    d = Delta()
    z.add_(1)
    z.mul_(2)
    assert d.allocated == 0


def test_saved_bytes_are_what_the_ops_save():
    x = torch.randn(1000, requires_grad=True)
    y = torch.randn(1000, requires_grad=True)
    d = Delta()
    p = x * y  # MulBackward0 saves x and y
    assert d.saved == 8000
    assert d.allocated == 4000  # only the product is new: saving copies nothing
    e = p.exp()  # ExpBackward0 saves its output
    assert d.saved == 12000
    loss = e.sum()  # SumBackward0 saves nothing
    assert d.saved == 12000
    del p, e, loss
    assert d.saved == 0 and d.allocated == 0


def test_a_buffer_saved_twice_counts_once():
    x = torch.randn(1000, requires_grad=True)
    d = Delta()
    sq = x * x
    assert d.saved == 4000
    del sq
    assert d.saved == 0


def test_a_saved_view_keeps_its_whole_base():
    x = torch.randn(1000, requires_grad=True)
    h = x * 1.0
    d = Delta()
    y = h[:10].exp()  # saves a 10-element output, a fresh buffer
    z = h[:10] * h[:10]  # saves views of h: h's 4000 bytes stay alive
    assert d.saved == 40 + 4000
    del y, z


def test_backward_frees_saved_tensors_and_intermediates():
    x = torch.randn(1000, requires_grad=True)
    d = Delta()
    h = x * 2
    loss = (h * h).sum()
    del h
    # Like PyTorch, x * 2 saves only the scalar 2 (x's gradient needs 2, not x); h * h saves h once.
    assert d.saved == 4 + 4000
    assert d.allocated == 4000 + 4 + 4  # h (held by the graph), the scalar 2, loss
    loss.backward()
    assert d.saved == 0
    assert d.allocated == 4 + 4000  # loss and x.grad: h died with its saved reference
    del loss
    assert d.allocated == 4000


def test_retain_graph_keeps_saved_tensors_until_the_graph_dies():
    x = torch.randn(1000, requires_grad=True)
    d = Delta()
    loss = x.exp().sum()
    loss.backward(retain_graph=True)
    assert d.saved == 4000
    loss.backward()
    assert d.saved == 0
    loss = x.exp().sum()
    loss.backward(retain_graph=True)
    del loss  # no backward: the graph dying lets go too
    assert d.saved == 0


def test_peak_and_reset_peak():
    d = Delta()
    memory.reset_peak()
    a = torch.zeros(1000)
    b = torch.zeros(2000)
    del b
    assert memory.max_allocated() - d.start["allocated"] == 12000
    assert d.allocated == 4000
    memory.reset_peak()
    assert memory.max_allocated() == memory.allocated()
    x = torch.randn(100, requires_grad=True)
    loss = x.exp().sum()
    loss.backward()
    assert memory.max_saved() - d.start["saved"] == 400
    assert d.saved == 0
    memory.reset_peak()
    assert memory.max_saved() == memory.saved()
    del a


def test_stats_has_all_four_counters():
    s = memory.stats()
    assert s == {"allocated": memory.allocated(), "peak_allocated": memory.max_allocated(),
                 "saved": memory.saved(), "peak_saved": memory.max_saved()}


def test_measure_reports_kept_and_peak():
    with memory.measure() as m:
        a = torch.zeros(1000)
        b = torch.zeros(2000)
        del b
    assert (m.kept, m.peak, m.saved_kept, m.saved_peak) == (4000, 12000, 0, 0)
    assert repr(m) == "measure(kept=4000, peak=12000, saved_kept=0, saved_peak=0)"
    del a


def test_measure_saved_fields():
    x = torch.randn(1000, requires_grad=True)
    y = torch.randn(1000, requires_grad=True)
    with memory.measure() as forward:
        loss = (x * y).tanh().sum()
    assert forward.saved_kept == forward.saved_peak == 12000  # x, y and tanh's output
    with memory.measure() as backward:
        loss.backward()
    assert backward.saved_kept == -12000 and backward.saved_peak == 0
    assert backward.kept == 8000 - 4000  # x.grad and y.grad come, tanh's output goes (x * y died in forward)


def test_measure_keeps_the_outer_peak():
    memory.reset_peak()
    start = memory.allocated()
    big = torch.zeros(10_000)
    del big
    with memory.measure() as inner:
        small = torch.zeros(10)
    assert inner.peak == 40
    assert memory.max_allocated() - start == 40_000  # the inner measure did not lose the earlier peak
    del small


def test_retain_graph_loop_that_keeps_graphs_grows_linearly():
    """``total = total + loss`` keeps every iteration's graph alive: saved memory grows each step."""
    w = torch.randn(1000, requires_grad=True)
    x = torch.randn(1000)
    d = Delta()
    total, saved = 0, []
    for _ in range(5):
        loss = (w * x).tanh().sum()
        loss.backward(retain_graph=True)
        total = total + loss
        saved.append(d.saved)
    # w * x saves only x (w's gradient needs x; x needs none), the same buffer every time
    # (counted once); each tanh output is new
    assert saved == [4000 + 4000 * k for k in range(1, 6)]
    del total, loss
    assert d.saved == 0


def test_loop_that_drops_its_graphs_stays_flat():
    w = torch.randn(1000, requires_grad=True)
    x = torch.randn(1000)
    d = Delta()
    total, alive, after = 0.0, [], []
    for _ in range(5):
        loss = (w * x).tanh().sum()
        alive.append(d.saved)
        loss.backward()
        total += loss.item()
        after.append(d.saved)
    assert alive == [8000] * 5 and after == [0] * 5


def test_counting_starts_at_the_first_question_with_what_is_alive():
    """Nothing is counted until a counter is asked for; then the live tensors and graphs are
    found and counted (in a fresh process, where nothing has asked yet)."""
    code = ("import chibigrad as torch\n"
            "from chibigrad import memory\n"
            "x = torch.randn(1000, requires_grad=True)\n"
            "y = x.exp()  # ExpBackward0 saves y as a bare array\n"
            "loss = (y * x).sum()  # MulBackward0 saves y and x\n"
            "del y\n"
            "assert not memory._counting\n"
            "print(memory.allocated(), memory.saved(), memory.max_allocated(), memory.max_saved())\n"
            "loss.backward()\n"
            "print(memory.allocated(), memory.saved(), memory.max_saved())\n"
            "del loss\n"
            "print(memory.allocated())\n")
    env = {**os.environ, "PYTHONPATH": str(pathlib.Path(__file__).resolve().parents[1])}
    result = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    # x, y (saved twice, counted once) and loss; backward frees y and makes x.grad
    assert result.stdout == "8004 8000 8004 8000\n8004 0 8000\n8000\n"
