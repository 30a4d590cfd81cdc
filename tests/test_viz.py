"""chibigrad.viz: the drawn graph matches the autograd graph, and both engines give valid pictures."""
import shutil
import xml.etree.ElementTree as ET

import numpy as np
import pytest

import chibigrad as torch
from chibigrad import viz
from chibigrad.autograd.engine import topological_order
from chibigrad.autograd.node import AccumulateGrad

ENGINES = ["python", pytest.param("dot", marks=pytest.mark.skipif(not shutil.which("dot"),
                                                                   reason="Graphviz's dot is not installed"))]
SVG = "{http://www.w3.org/2000/svg}"


def seed_graph():
    """The seed's graph: z = x * y, w = z + x, out = w ** 2."""
    x = torch.tensor(2.0, requires_grad=True)
    y = torch.tensor(3.0, requires_grad=True)
    out = (x * y + x) ** 2
    return x, y, out


def reachable(root):
    """Every Node reachable from ``root`` along next_functions."""
    seen, stack = {}, [root]
    while stack:
        node = stack.pop()
        if id(node) not in seen:
            seen[id(node)] = node
            stack.extend(n for n, _ in node.next_functions if n is not None)
    return list(seen.values())


def boxes_of(graph, kind):
    return [b for b in graph.boxes if b.kind == kind]


def test_one_box_per_node_titled_with_its_name():
    x, y, out = seed_graph()
    g = viz.draw(out, engine="python")
    nodes = boxes_of(g, "node")
    assert sorted(id(b.obj) for b in nodes) == sorted(id(n) for n in reachable(out.grad_fn))
    assert all(b.title == b.obj.name() for b in nodes)
    assert sorted(b.title for b in nodes) == ["AccumulateGrad", "AccumulateGrad", "AddBackward0", "MulBackward0",
                                              "PowBackward0"]


def test_edges_follow_next_functions():
    x, y, out = seed_graph()
    g = viz.draw(out, engine="python")
    for i, box in enumerate(g.boxes):
        if box.kind == "node":
            drawn = [id(g.boxes[b].obj) for a, b, style in g.edges if a == i and style == "solid"]
            assert sorted(drawn) == sorted(id(n) for n, _ in box.obj.next_functions if n is not None)
    (output,) = boxes_of(g, "output")
    assert [g.boxes[b].obj for a, b, _ in g.edges if g.boxes[a] is output] == [out.grad_fn]


def test_repeated_input_gives_one_edge_per_use():
    x = torch.tensor(2.0, requires_grad=True)
    g = viz.draw(x * x, engine="python")
    mul = next(i for i, b in enumerate(g.boxes) if b.title == "MulBackward0")
    assert len([e for e in g.edges if e[0] == mul]) == 2
    assert len(boxes_of(g, "node")) == 2  # the AccumulateGrad is drawn once


def test_leaves_are_named_from_params():
    x, y, out = seed_graph()
    g = viz.draw(out, params={"x": x, "y": y, "out": out})
    leaves = {b.title: b for b in boxes_of(g, "leaf")}
    assert set(leaves) == {"x", "y"}
    assert leaves["x"].obj is x and leaves["y"].obj is y
    assert [r[0] for r in leaves["x"].rows] == ["() float32", "requires_grad=True"]
    assert boxes_of(g, "output")[0].title == "out"
    for i, box in enumerate(g.boxes):  # each leaf hangs under its AccumulateGrad by a dashed edge
        if box.kind == "leaf":
            (parent,) = [g.boxes[a] for a, b, style in g.edges if b == i and style == "dashed"]
            assert isinstance(parent.obj, AccumulateGrad) and parent.obj.variable is box.obj


def test_unnamed_leaves_and_outputs():
    x, y, out = seed_graph()
    g = viz.draw(out)
    assert [b.title for b in boxes_of(g, "leaf")] == ["leaf", "leaf"]
    assert [b.title for b in boxes_of(g, "output")] == ["output"]


def test_saved_tensors_with_shape_and_bytes():
    x = torch.randn(3, 4, requires_grad=True)
    y = torch.randn(3, 4, dtype=torch.float64, requires_grad=True)
    big = torch.randn(1000, requires_grad=True)
    g = viz.draw([x * y, big.exp()])
    rows = {b.title: b.rows for b in boxes_of(g, "node")}
    assert rows["MulBackward0"] == [("saved (3, 4) float64 \u00b7 96 B", "saved"),  # other, then self: PyTorch's order
                                    ("saved (3, 4) float32 \u00b7 48 B", "saved")]
    assert rows["ExpBackward0"] == [("saved (1000,) float32 \u00b7 3.9 KiB", "saved")]
    assert all(not r for b in boxes_of(g, "node") if b.title == "AccumulateGrad" for r in b.rows)


def test_sizes_read_well():
    assert [viz._size(n) for n in (0, 48, 1023, 1024, 4000, 3 * 2**20, 5 * 2**30)] == \
        ["0 B", "48 B", "1023 B", "1.0 KiB", "3.9 KiB", "3.0 MiB", "5.0 GiB"]


def test_saved_tensors_are_drawn_freed_after_backward():
    x, y, out = seed_graph()
    out.backward(retain_graph=True)
    kept = viz.draw(out)
    assert {style for b in boxes_of(kept, "node") for _, style in b.rows} == {"saved"}
    out.backward()
    freed = viz.draw(out)
    rows = [row for b in boxes_of(freed, "node") for row in b.rows]
    assert rows == [("saved () float32 \u00b7 4 B \u00b7 freed", "freed")] * 3  # what was given back
    assert "<S>" in freed.to_dot()


def test_show_saved_false_hides_saved_tensors():
    x, y, out = seed_graph()
    g = viz.draw(out, show_saved=False)
    assert all(not b.rows for b in boxes_of(g, "node"))


def test_several_outputs_share_their_graph():
    x = torch.randn(3, requires_grad=True)
    h = x.exp()
    a, b = h.sum(), (h * 2).sum()
    g = viz.draw((a, b), params={"a": a, "b": b})
    assert [o.title for o in boxes_of(g, "output")] == ["a", "b"]
    assert [bx.title for bx in boxes_of(g, "node")].count("ExpBackward0") == 1


def test_a_leaf_alone_is_one_box():
    x = torch.zeros(2, requires_grad=True)
    g = viz.draw(x, params={"x": x}, engine="python")
    assert [(b.kind, b.title) for b in g.boxes] == [("output", "x")] and g.edges == []
    ET.fromstring(g.svg())


def test_deep_graph_is_capped_with_a_note():
    x = torch.zeros(1, requires_grad=True)
    h = x
    for _ in range(5000):  # far deeper than Python's recursion limit
        h = h * 1.0
    g = viz.draw(h, max_nodes=50, engine="python")
    assert g.truncated and len(boxes_of(g, "node")) == 50
    (more,) = boxes_of(g, "more")
    assert more.rows == [("not drawn: max_nodes=50", "plain")]
    ET.fromstring(g.svg())
    assert not viz.draw(x * 2).truncated
    assert len(boxes_of(viz.draw(h), "node")) == 200  # the default cap


def test_to_dot_text():
    x, y, out = seed_graph()
    g = viz.draw(out, params={"x": x, "y": y})
    dot = g.to_dot()
    lines = dot.splitlines()
    assert lines[0] == "digraph {" and lines[-1] == "}"
    assert len([ln for ln in lines if "[label=<<TABLE" in ln]) == len(g.boxes)
    assert len([ln for ln in lines if " -> " in ln]) == len(g.edges)
    assert "  n0 -> n1" in lines  # the output to its grad_fn
    assert "<B>PowBackward0</B>" in dot and "<B>x</B>" in dot
    assert "style=dashed" in dot


def test_text_is_escaped():
    x = torch.zeros(2, requires_grad=True)
    g = viz.draw(x * 2, params={"<x & 'y'>": x}, engine="python")
    assert "&lt;x &amp; &#x27;y&#x27;&gt;" in g.to_dot()
    texts = [t.text for t in ET.fromstring(g.svg()).iter(SVG + "text")]
    assert "<x & 'y'>" in texts


@pytest.mark.parametrize("engine", ENGINES)
def test_svg_is_well_formed_and_shows_every_box(engine, tmp_path):
    x, y, out = seed_graph()
    out.backward()
    g = viz.draw(out, params={"x": x, "y": y}, engine=engine)
    svg = g._repr_svg_()
    root = ET.fromstring(svg)
    assert root.tag == SVG + "svg"
    texts = " ".join(t.text or "" for t in root.iter(SVG + "text"))
    for title in ("PowBackward0", "AddBackward0", "MulBackward0", "AccumulateGrad", "x", "y", "freed"):
        assert title in texts
    g.save(tmp_path / "graph.svg")
    assert ET.parse(tmp_path / "graph.svg").getroot().tag == SVG + "svg"


def test_python_svg_has_a_group_per_box():
    x, y, out = seed_graph()
    g = viz.draw(out, engine="python")
    groups = [e for e in ET.fromstring(g.svg()) if e.tag == SVG + "g"]
    assert [e.get("class") for e in groups] == [b.kind for b in g.boxes]


def test_python_layout_keeps_boxes_apart_and_edges_downward():
    torch.manual_seed(0)
    w1, w2 = torch.randn(4, 3, requires_grad=True), torch.randn(2, 4, requires_grad=True)
    b1, b2 = torch.zeros(4, requires_grad=True), torch.zeros(2, requires_grad=True)
    h = (torch.randn(5, 3) @ w1.t() + b1).relu()
    loss = ((h @ w2.t() + b2) ** 2).mean() + (w1 * w1).sum()  # w1 used twice, at different depths
    g = viz.draw(loss, engine="python")
    centres, sizes, routes, (width, height) = viz._layout(g.boxes, g.edges)
    rects = [(cx - w / 2, cy - h / 2, cx + w / 2, cy + h / 2) for (cx, cy), (w, h) in zip(centres, sizes)]
    for i, a in enumerate(rects):
        assert 0 <= a[0] and a[2] <= width and 0 <= a[1] and a[3] <= height
        for b in rects[i + 1:]:
            assert a[2] <= b[0] or b[2] <= a[0] or a[3] <= b[1] or b[3] <= a[1], "boxes overlap"
    for (a, b, _), route in zip(g.edges, routes):
        assert route[0][1] == pytest.approx(rects[a][3]) and route[-1][1] == pytest.approx(rects[b][1])
        assert all(p[1] <= q[1] for p, q in zip(route, route[1:]))


def test_engine_choice(monkeypatch):
    x, y, out = seed_graph()
    with pytest.raises(ValueError, match="engine must be"):
        viz.draw(out, engine="neato")
    monkeypatch.setattr(shutil, "which", lambda name: None)
    assert viz.draw(out).engine == "python"
    with pytest.raises(RuntimeError, match="Graphviz"):
        viz.draw(out, engine="dot").svg()
    monkeypatch.setattr(shutil, "which", lambda name: "/usr/bin/dot")
    assert viz.draw(out).engine == "dot"


def test_edge_labels_and_gradients_are_drawn():
    import chibigrad as torch
    from chibigrad import viz

    a = torch.tensor(2.0, requires_grad=True)
    w = torch.tensor(-0.5, requires_grad=True)
    b = w * a
    loss = 10 - b
    loss.backward()
    labels = {(loss, b): "-1", (b, a): "w = -0.50", (b, w): "a = 2.00", (a, b): "not an edge"}
    graph = viz.draw(loss, params={"a": a, "w": w, "loss": loss}, edge_labels=labels, show_grad=True,
                     engine="python")
    assert sorted(graph.labels.values()) == ["-1", "a = 2.00", "w = -0.50"]
    svg = graph.svg()
    for text in ("w = -0.50", "a = 2.00", "grad = 0.5", "grad = -2"):
        assert text in svg, text
    assert 'label=" w = -0.50 "' in graph.to_dot()


# ---- backward_frames: the engine observed step by step ----

def five_neurons():
    """Chapter 2's network, one number per neuron: a is used twice (through b and through c)."""
    a, w1, w2, w3, w4 = (torch.tensor(v, requires_grad=True) for v in (0.5, -1.0, 2.0, 1.5, -0.5))
    loss = 10 - (w3 * (w1 * a) + w4 * (w2 * a))
    return (a, w1, w2, w3, w4), loss


def exp_shared():
    x = torch.tensor(0.5, requires_grad=True)
    u = x.exp()
    return (x,), u.sin() * u + u


def broadcast_graph():
    X = torch.randn(4, 3, requires_grad=True)
    bias = torch.randn(3, requires_grad=True)
    return (X, bias), ((X + bias).relu() * X).sum()


GRAPHS = [five_neurons, exp_shared, broadcast_graph]


@pytest.mark.parametrize("make", GRAPHS)
def test_frames_follow_the_engines_order(make):
    _, loss = make()
    order = [n for n in topological_order([loss.grad_fn])]
    frames = viz.backward_frames(loss)
    assert frames[0].node is None and frames[0].done == []
    assert [f.node for f in frames.frames[1:]] == order
    assert [f.done for f in frames.frames[1:]] == [order[:k] for k in range(1, len(order) + 1)]


@pytest.mark.parametrize("make", GRAPHS)
def test_buffers_and_counts_are_what_the_engine_hands_each_node(make):
    """Before step k, the recorded buffer of the node that runs equals what the engine gives it
    (its pre-hook's argument), and no edge into it is pending."""
    _, loss = make()
    frames = viz.backward_frames(loss)
    for before, frame in zip(frames.frames, frames.frames[1:]):
        assert before.pending[frame.node] == 0, frame
        assert len(before.buffers[frame.node]) == len(frame.received)
        for mine, engine in zip(before.buffers[frame.node], frame.received):
            np.testing.assert_allclose(mine, engine, rtol=1e-6)
        assert frame.node not in frame.buffers


def test_counts_start_at_the_number_of_edges_and_fall_by_one_per_edge():
    (a, *_), loss = five_neurons()
    frames = viz.backward_frames(loss)
    acc_a = next(f.node for f in frames.frames[1:] if getattr(f.node, "variable", None) is a)
    counts = [f.pending[acc_a] for f in frames.frames]
    assert counts[0] == 2 and counts[-1] == 0  # a is used twice
    assert all(c - d in (0, 1) for c, d in zip(counts, counts[1:]))
    waiting = [f.pending[acc_a] for f in frames.frames if acc_a in f.buffers]
    assert waiting[0] == 1 and waiting[-1] == 0, "a's buffer holds one contribution while it waits for the other"


@pytest.mark.parametrize("make", GRAPHS)
def test_final_grads_equal_dot_grad_and_a_plain_backward(make):
    torch.manual_seed(0)
    leaves, loss = make()
    frames = viz.backward_frames(loss)
    torch.manual_seed(0)
    plain_leaves, plain_loss = make()
    plain_loss.backward()
    accs = {n.variable: n for n in frames[-1].grads}
    for leaf, plain in zip(leaves, plain_leaves):
        np.testing.assert_allclose(frames[-1].grads[accs[leaf]], leaf.grad.numpy(), rtol=1e-6)
        np.testing.assert_allclose(leaf.grad.numpy(), plain.grad.numpy(), rtol=1e-6)


def test_saved_tensors_are_freed_right_after_their_node_ran():
    _, loss = exp_shared()
    frames = viz.backward_frames(loss)
    for frame in frames.frames:
        for node, flags in frame.freed.items():
            assert all(flags) if node in frame.done else not any(flags), (frame, node.name(), flags)
    _, loss = exp_shared()
    kept = viz.backward_frames(loss, retain_graph=True)
    assert not any(any(flags) for flags in kept[-1].freed.values())


def test_local_derivatives_and_what_is_sent():
    a = torch.tensor(2.0, requires_grad=True)
    b = torch.tensor(3.0, requires_grad=True)
    out = (a * b) * 5
    frames = viz.backward_frames(out)
    mul5, mul = frames[1], frames[2]
    assert mul5.local[0] == 5 and mul5.sent[0] == 5
    assert [float(v) for v in mul.local] == [3.0, 2.0]  # d(ab)/da = b, d(ab)/db = a
    assert [float(v) for v in mul.sent] == [15.0, 10.0]  # grad_output 5 times the local derivative


def test_frames_leave_no_hook_behind():
    _, loss = exp_shared()
    frames = viz.backward_frames(loss)
    assert all(not f.node._pre_hooks and not f.node._post_hooks for f in frames.frames[1:])


def test_frame_pictures_show_state_and_are_valid_svg():
    (x,), loss = exp_shared()
    frames = viz.backward_frames(loss, params={"x": x})
    start = frames.draw(0)
    assert [b.rows[:2] for b in start.boxes if b.kind == "node" and b.title == "ExpBackward0"] == [
        [("buffer empty", "plain"), ("waits for 3 edges", "plain")]]
    step = frames.draw(4)  # ExpBackward0 ran
    (running,) = [b for b in step.boxes if b.kind == "running"]
    assert running.title == "ExpBackward0" and running.rows[-1][1] == "freed"
    assert list(step.labels.values()) == [f"\u00d7{x.exp().item():.4g} = {x.grad.item():.4g}"]
    (leaf,) = [b for b in frames.draw(len(frames) - 1).boxes if b.kind == "leaf"]
    assert leaf.rows[-1][0] == f"grad = {x.grad.item():.4g}"
    strip = ET.fromstring(frames.strip(columns=3).svg())
    titles = [t.text for t in strip.findall(f"{SVG}text") if t.text.startswith("step")]
    assert titles == ["step 0: start"] + [f"step {k}: {f.node.name()} ran" for k, f in enumerate(frames.frames) if k]


def test_frames_of_a_tensor_without_graph_is_a_clear_error():
    with pytest.raises(ValueError, match="has no grad_fn"):
        viz.backward_frames(torch.ones(2, requires_grad=True))


def test_hooks_are_removed_when_backward_raises():
    _, loss = exp_shared()
    loss.backward()  # frees the graph: backward_frames' backward raises
    with pytest.raises(RuntimeError, match="backward through the graph a second time"):
        viz.backward_frames(loss)
    assert all(not n._pre_hooks and not n._post_hooks for n in topological_order([loss.grad_fn]))
