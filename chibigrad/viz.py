"""Pictures of autograd graphs.

``draw(loss)`` walks the graph backward from ``loss.grad_fn`` along
``next_functions`` (the edges the engine follows) and returns a ``Graph``
that Jupyter shows inline. Arrows point the way gradients flow:

- the output tensor(s) at the top (green);
- one box per Node, titled with its class name (``MulBackward0``) and
  listing the tensors it saved for backward with their shape and size;
  after a backward without ``retain_graph`` those are drawn struck out: freed;
- each leaf tensor (blue) under its ``AccumulateGrad`` node, named from
  ``params`` as torchviz names them (``show_grad=True`` adds its ``.grad``);
- optional text on edges (``edge_labels``), e.g. each edge's local derivative.

``backward_frames(loss)`` runs ``loss.backward()`` and records it step by step:
one picture per node the engine runs, with every node's gradient buffer, the
number of edges it still waits for, the gradient sent along each edge and the
saved tensors freed so far.

Graphviz's ``dot`` lays the graph out when it is installed. Otherwise a small
layered layout written here does, so pictures work (and the book builds)
on a machine without Graphviz.
"""
import contextlib
import html
import re
import shutil
import subprocess
from collections import deque
from functools import partial

import numpy as np

from .autograd.engine import topological_order
from .autograd.node import AccumulateGrad

COLORS = {"output": "#c5e3a5", "node": "#f2f2f2", "leaf": "#cde2f7", "more": "#ffffff",
          "saved": "#ffd7a8", "freed": "#e6e6e6", "running": "#ffe27a", "done": "#dddddd"}
FONT, FONT_SIZE = "DejaVu Sans Mono, Menlo, Consolas, monospace", 12
CHAR_W = 0.6 * FONT_SIZE  # advance of one monospace character
PAD, TITLE_H, ROW_H = 8, 22, 18
LAYER_GAP, BOX_GAP, DUMMY_GAP, MARGIN = 40, 24, 10, 12
FREED = " \u00b7 freed"  # ends a freed row; the rest of the row is struck out


def draw(tensor_or_tensors, params=None, show_saved=True, max_nodes=200, engine="auto",
         edge_labels=None, show_grad=False):
    """The graph behind one tensor (or several), ready to show or save.

    ``params``: ``{name: tensor}`` (e.g. ``dict(model.named_parameters())``)
    to name leaves and outputs. ``max_nodes`` caps the drawing: a graph of a
    long loop can have far more nodes than a picture can show. ``engine``:
    ``"dot"`` (Graphviz), ``"python"`` (built in) or ``"auto"`` (dot if found).
    ``edge_labels``: ``{(upper, lower): text}`` for the edge from the node that
    made tensor ``upper`` to the one that made ``lower`` (a leaf's
    ``AccumulateGrad``). ``show_grad``: write each leaf's ``.grad`` in its box.
    """
    if engine not in ("auto", "dot", "python"):
        raise ValueError(f'engine must be "auto", "dot" or "python", got {engine!r}')
    if engine == "auto":
        engine = "dot" if shutil.which("dot") else "python"
    tensors = tensor_or_tensors if isinstance(tensor_or_tensors, (list, tuple)) else [tensor_or_tensors]
    names = {id(t): name for name, t in (params or {}).items()}
    boxes, edges, truncated = _walk(tensors, names, show_saved, max_nodes, show_grad)
    return Graph(boxes, edges, truncated, engine=engine, labels=_edge_labels(boxes, edges, edge_labels))


class Box:
    """One box of the picture: what it shows (``obj``), a title and text rows.

    ``kind`` is "output", "node", "leaf" or "more"; each row is
    ``(text, style)`` with style "plain", "saved" or "freed".
    """

    def __init__(self, kind, title, rows, obj=None):
        self.kind, self.title, self.rows, self.obj = kind, title, rows, obj

    def __repr__(self):
        return f"Box({self.kind!r}, {self.title!r}, {self.rows!r})"


def _walk(tensors, names, show_saved, max_nodes, show_grad=False):
    """Breadth-first from the outputs: boxes, and edges ``(from, to, style)``.

    A queue, not recursion: a graph built by a long loop is deeper than
    Python's recursion limit.
    """
    boxes, edges, seen = [], [], {}  # seen: id(node) -> box index

    def add(box):
        boxes.append(box)
        return len(boxes) - 1

    queue = deque()
    for t in tensors:
        out = add(Box("output", names.get(id(t), "output"), [(_describe(t), "plain")], t))
        if t.grad_fn is not None:
            queue.append((out, t.grad_fn))
    more = None
    while queue:
        parent, node = queue.popleft()
        if id(node) not in seen:
            if len(seen) >= max_nodes:
                if more is None:
                    more = add(Box("more", "\u2026 more nodes", [(f"not drawn: max_nodes={max_nodes}", "plain")]))
                if (parent, more, "dotted") not in edges:
                    edges.append((parent, more, "dotted"))
                continue
            seen[id(node)] = here = add(_node_box(node, show_saved))
            queue.extend((here, child) for child, _ in node.next_functions if child is not None)
            if isinstance(node, AccumulateGrad):
                var = node.variable
                title = names.get(id(var), "leaf")
                rows = [(_describe(var), "plain"), ("requires_grad=True", "plain")]
                if show_grad and var.grad is not None:
                    rows.append((_grad_text(var.grad), "plain"))
                leaf = add(Box("leaf", title, rows, var))
                edges.append((here, leaf, "dashed"))
        edges.append((parent, seen[id(node)], "solid"))
    return boxes, edges, more is not None


def _grad_text(grad):
    """``grad = -0.35`` for a few numbers, the shape for more."""
    values = grad.detach().numpy().ravel()
    if values.size > 4:
        return f"grad {_shape(grad.shape)}"
    text = ", ".join(f"{v:.3g}" for v in values)
    return f"grad = {text}" if grad.dim() == 0 else f"grad = [{text}]"


def _edge_labels(boxes, edges, labels):
    """``{(upper tensor, lower tensor): text}`` -> ``{edge index: text}``."""
    if not labels:
        return {}
    box_of = {}
    for i, box in enumerate(boxes):
        if box.kind == "node":
            box_of[id(box.obj)] = i
    for a, b, style in edges:  # a leaf tensor is reached through its AccumulateGrad box
        if style == "dashed":
            box_of[id(boxes[b].obj)] = a

    def find(t):
        return box_of.get(id(t.grad_fn if getattr(t, "grad_fn", None) is not None else t))
    wanted = {(find(u), find(v)): text for (u, v), text in labels.items()}
    return {i: wanted[a, b] for i, (a, b, _) in enumerate(edges) if (a, b) in wanted}


def _node_box(node, show_saved):
    """A Node's box: its name, then one row per saved tensor."""
    rows = []
    for shape, dtype, nbytes, released in node.saved_tensors_info if show_saved else ():
        text = f"saved {_shape(shape)} {_dtype(dtype)} \u00b7 {_size(nbytes)}"
        rows.append((text + FREED, "freed") if released else (text, "saved"))
    return Box("node", type(node).__name__, rows, node)


def _describe(t):
    return f"{_shape(t.shape)} {_dtype(t.dtype)}"


def _shape(shape):
    return str(tuple(shape))


def _dtype(dtype):
    return str(dtype).replace("torch.", "")


def _size(nbytes):
    """Bytes, readable: "48 B", "3.9 KiB", "12.0 MiB"."""
    if nbytes < 1024:
        return f"{nbytes} B"
    for unit in ("KiB", "MiB", "GiB"):
        nbytes /= 1024
        if nbytes < 1024 or unit == "GiB":
            return f"{nbytes:.1f} {unit}"


class Graph:
    """A drawn graph: shows itself in Jupyter, ``save(path)`` writes SVG, ``to_dot()`` gives DOT text."""

    def __init__(self, boxes, edges, truncated, engine, labels=None):
        self.boxes, self.edges, self.truncated, self.engine = boxes, edges, truncated, engine
        self.labels = labels or {}  # edge index -> text
        self.label_at = "start"  # where on its edge a label sits: "start" or "end"

    def __repr__(self):
        return f"<Graph: {len(self.boxes)} boxes, {len(self.edges)} edges>"

    def to_dot(self):
        """The graph in Graphviz's DOT language (HTML-like labels, top to bottom)."""
        lines = ["digraph {", f'  node [shape=plain fontname="{FONT}" fontsize={FONT_SIZE - 1}]',
                 '  edge [color="#555555" arrowsize=0.7]']
        lines += [f"  n{i} [label=<{_dot_label(box)}>]" for i, box in enumerate(self.boxes)]
        for i, (a, b, style) in enumerate(self.edges):
            attrs = [] if style == "solid" else [f"style={style}"]
            if i in self.labels:
                attrs.append(f'label=" {_dot_escape(self.labels[i])} " fontsize={FONT_SIZE - 1}')
            lines.append(f"  n{a} -> n{b}" + (f" [{' '.join(attrs)}]" if attrs else ""))
        return "\n".join(lines + ["}"]) + "\n"

    def svg(self):
        """The picture as SVG text, laid out by this graph's engine."""
        if self.engine == "python":
            return _svg(self.boxes, self.edges, self.labels, self.label_at)
        if not shutil.which("dot"):
            raise RuntimeError('engine="dot" needs Graphviz\'s dot program on PATH; use engine="python"')
        return subprocess.run(["dot", "-Tsvg"], input=self.to_dot(), capture_output=True, text=True,
                              check=True).stdout

    def _repr_svg_(self):
        return self.svg()

    def save(self, path):
        """Write the picture to ``path`` as SVG."""
        with open(path, "w", encoding="utf-8") as f:
            f.write(self.svg())


def _dot_escape(text):
    return text.replace("\\", "\\\\").replace('"', '\\"')


def _dot_label(box):
    """An HTML-like table: bold title, then rows; freed rows grey and struck out."""
    cells = [f"<TR><TD><B>{html.escape(box.title)}</B></TD></TR>"]
    for text, style in box.rows:
        if style == "freed":
            text = f'<FONT COLOR="#999999"><S>{html.escape(text[:-len(FREED)])}</S>{html.escape(FREED)}</FONT>'
        else:
            text = html.escape(text)
        color = f' BGCOLOR="{COLORS[style]}"' if style != "plain" else ""
        cells.append(f"<TR><TD{color}>{text}</TD></TR>")
    return (f'<TABLE STYLE="ROUNDED" BORDER="1" CELLBORDER="0" CELLSPACING="2" CELLPADDING="3" '
            f'BGCOLOR="{COLORS[box.kind]}">{"".join(cells)}</TABLE>')


# ---- the pure-Python layout: layers, crossing reduction, coordinates ----

def _box_size(box):
    chars = max(len(text) for text in [box.title] + [r[0] for r in box.rows])
    return chars * CHAR_W + 2 * PAD + 8, TITLE_H + ROW_H * len(box.rows) + (PAD if box.rows else 0)


def _layout(boxes, edges):
    """Place boxes in layers (Sugiyama style) and route each edge through its layers.

    Returns box centres, each edge's list of points, and the picture's size.
    Long edges get invisible "dummy" vertices in the layers they cross, so
    they are ordered like boxes and never run through one.
    """
    sizes = [_box_size(b) for b in boxes]
    width = [w for w, _ in sizes]
    layer = _longest_path_layers(len(boxes), [(a, b) for a, b, _ in edges])
    up, down = [[] for _ in boxes], [[] for _ in boxes]
    chains, chain_of = [], {}
    for a, b, _ in edges:
        if (a, b) in chain_of:  # a repeated edge (x * x) runs beside the first one
            chains.append(chain_of[a, b])
            continue
        chain = [a]
        for depth in range(layer[a] + 1, layer[b]):
            layer.append(depth)
            width.append(0)
            up.append([]), down.append([])
            chain.append(len(layer) - 1)
        chains.append(chain_of.setdefault((a, b), chain + [b]))
        for u, v in zip(chain, chain[1:] + [b]):
            down[u].append(v)
            up[v].append(u)
    layers = [[] for _ in range(max(layer) + 1)]
    for v, depth in enumerate(layer):
        layers[depth].append(v)
    layers = _order_layers(layers, up, down)
    x = _place_x(layers, width, up, down)
    heights = [max((sizes[v][1] for v in row if v < len(boxes)), default=0) for row in layers]
    tops = [MARGIN + sum(heights[:i]) + LAYER_GAP * i for i in range(len(layers))]
    centres = [(x[v], tops[layer[v]] + heights[layer[v]] / 2) for v in range(len(boxes))]
    routes = [_route(chain, len(boxes), x, centres, sizes, layer, tops, heights) for chain in chains]
    _spread_ports(routes, chains)
    right = max(x[v] + width[v] / 2 for v in range(len(layer))) + MARGIN
    return centres, sizes, routes, (right, tops[-1] + heights[-1] + MARGIN)


def _longest_path_layers(n, edges):
    """Layer of each box: one below its lowest parent, so every edge points down."""
    children, indegree = [[] for _ in range(n)], [0] * n
    for a, b in edges:
        children[a].append(b)
        indegree[b] += 1
    layer = [0] * n
    ready = [v for v in range(n) if indegree[v] == 0]
    while ready:
        a = ready.pop()
        for b in children[a]:
            layer[b] = max(layer[b], layer[a] + 1)
            indegree[b] -= 1
            if indegree[b] == 0:
                ready.append(b)
    return layer


def _mean(values, default):
    return sum(values) / len(values) if values else default


def _order_layers(layers, up, down, sweeps=8):
    """Barycentre heuristic: sort each layer by its neighbours' mean position, down then up.

    Sweeps can make things worse as well as better, so keep the order with
    the fewest crossings seen.
    """
    pos = {v: i for row in layers for i, v in enumerate(row)}
    best = (_crossings(layers, down), [list(row) for row in layers])
    for _ in range(sweeps):
        for rows, neighbours in ((layers[1:], up), (layers[-2::-1], down)):
            for row in rows:
                row.sort(key=lambda v: _mean([pos[u] for u in neighbours[v]], pos[v]))
                pos.update((v, i) for i, v in enumerate(row))
            crossings = _crossings(layers, down)
            if crossings < best[0]:
                best = (crossings, [list(row) for row in layers])
    return best[1]


def _crossings(layers, down):
    """Edge crossings between neighbouring layers: inversions among the edges' lower ends."""
    total = 0
    for upper, lower in zip(layers, layers[1:]):
        pos = {v: i for i, v in enumerate(lower)}
        ends = [pos[w] for v in upper for w in sorted(down[v], key=pos.get)]
        total += sum(a > b for i, a in enumerate(ends) for b in ends[i + 1:])
    return total


def _place_x(layers, width, up, down, sweeps=8):
    """x of each vertex: near its neighbours' mean, keeping each layer's order and gaps."""
    x = {}
    for row in layers:
        _spread(row, [0.0] * len(row), width, x)
    for _ in range(sweeps):
        for rows, neighbours in ((layers[1:], up), (layers[-2::-1], down)):
            for row in rows:
                _spread(row, [_mean([x[u] for u in neighbours[v]], x[v]) for v in row], width, x)
    left = min(x[v] - width[v] / 2 for row in layers for v in row)
    return {v: xv - left + MARGIN for v, xv in x.items()}


def _spread(row, want, width, x):
    """Set x for one layer: as close to ``want`` as the gaps allow.

    Pushing right from the left edge and left from the right edge gives two
    placements that both keep the gaps; their average does too, and is fair
    to both sides.
    """
    gaps = [(width[a] + width[b]) / 2 + (DUMMY_GAP if 0 in (width[a], width[b]) else BOX_GAP)
            for a, b in zip(row, row[1:])]
    pushed_right, pushed_left = list(want), list(want)
    for i, gap in enumerate(gaps):
        pushed_right[i + 1] = max(pushed_right[i + 1], pushed_right[i] + gap)
    for i in reversed(range(len(gaps))):
        pushed_left[i] = min(pushed_left[i], pushed_left[i + 1] - gaps[i])
    for v, r, l in zip(row, pushed_right, pushed_left):
        x[v] = (r + l) / 2


def _route(chain, n_boxes, x, centres, sizes, layer, tops, heights):
    """Points of one edge: bottom of its source, down each dummy's layer, top of its target."""
    (ax, ay), (bx, by) = centres[chain[0]], centres[chain[-1]]
    points = [[ax, ay + sizes[chain[0]][1] / 2]]
    for v in chain[1:-1]:
        points += [[x[v], tops[layer[v]]], [x[v], tops[layer[v]] + heights[layer[v]]]]
    return points + [[bx, by - sizes[chain[-1]][1] / 2]]


def _spread_ports(routes, chains):
    """Fan out edges that leave (or enter) the same box, ordered left to right so they do not cross."""
    for end, neighbour in ((0, 1), (-1, -2)):
        by_box = {}
        for route, chain in zip(routes, chains):
            by_box.setdefault(chain[end], []).append(route)
        for group in by_box.values():
            group.sort(key=lambda r: r[neighbour][0])
            step = min(14, 40 / len(group))
            for k, route in enumerate(group):
                route[end][0] += (k - (len(group) - 1) / 2) * step


def _svg(boxes, edges, labels=None, label_at="start"):
    """The whole picture: edges first, boxes on top, edge labels over both."""
    centres, sizes, routes, (w, h) = _layout(boxes, edges)
    placed = []  # (x, y, width) of the labels so far
    marks = [_svg_label(routes[i] if label_at == "start" else routes[i][-2:], text, placed)
             for i, text in sorted((labels or {}).items())]
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{w:.0f}" height="{h:.0f}" '
             f'viewBox="0 0 {w:.0f} {h:.0f}" font-family="{FONT}" font-size="{FONT_SIZE}">',
             f'<rect width="{w:.0f}" height="{h:.0f}" fill="white"/>']
    parts += [_svg_edge(route, style) for route, (_, _, style) in zip(routes, edges)]
    parts += [_svg_box(box, centre, size) for box, centre, size in zip(boxes, centres, sizes)]
    return "\n".join(parts + marks + ["</svg>"]) + "\n"


def _svg_label(points, text, placed):
    """An edge's text on a white patch, halfway between the two points given (its edge's first
    or last stretch), or a line lower or higher where it would cover a label in ``placed``."""
    (ax, ay), (bx, by) = points[0], points[1]
    x, y, w = (ax + bx) / 2, (ay + by) / 2, len(text) * CHAR_W + 6
    for shift in (0, 17, -17, 34, -34):
        if not any(abs(x - px) < (w + pw) / 2 and abs(y + shift - py) < 17 for px, py, pw in placed):
            break
    y += shift
    placed.append((x, y, w))
    return (f'<rect x="{x - w / 2:.1f}" y="{y - 8:.1f}" width="{w:.1f}" height="16" rx="3" '
            f'fill="white" fill-opacity="0.9"/>\n' + _svg_text(x, y, text, ' fill="#a0302b"'))


def _svg_edge(points, style):
    """A smooth curve through the points (vertical at each end) and an arrowhead."""
    (x0, y0), (tx, ty) = points[0], points[-1]
    points[-1] = [tx, ty - 7]  # the arrowhead covers the last 7 px
    d = f"M{x0:.1f},{y0:.1f}"
    for (ax, ay), (bx, by) in zip(points, points[1:]):
        mid = (ay + by) / 2
        d += f" C{ax:.1f},{mid:.1f} {bx:.1f},{mid:.1f} {bx:.1f},{by:.1f}"
    dash = {"solid": "", "dashed": ' stroke-dasharray="5,3"', "dotted": ' stroke-dasharray="2,3"'}[style]
    return (f'<path d="{d}" fill="none" stroke="#555"{dash}/>\n'
            f'<polygon points="{tx - 4:.1f},{ty - 8:.1f} {tx + 4:.1f},{ty - 8:.1f} {tx:.1f},{ty:.1f}" fill="#555"/>')


def _svg_box(box, centre, size):
    """A rounded box: bold title, then rows; saved rows orange, freed rows grey and struck out."""
    (cx, cy), (w, h) = centre, size
    left, top = cx - w / 2, cy - h / 2
    stroke = ' stroke-dasharray="4,3"' if box.kind == "more" else ""
    parts = [f'<g class="{box.kind}">',
             f'<rect x="{left:.1f}" y="{top:.1f}" width="{w:.1f}" height="{h:.1f}" rx="6" '
             f'fill="{COLORS[box.kind]}" stroke="#444"{stroke}/>',
             _svg_text(cx, top + TITLE_H / 2, box.title, ' font-weight="bold"')]
    for i, (text, style) in enumerate(box.rows):
        row_top = top + TITLE_H + i * ROW_H
        if style != "plain":
            parts.append(f'<rect x="{left + 4:.1f}" y="{row_top:.1f}" width="{w - 8:.1f}" '
                         f'height="{ROW_H - 2}" rx="3" fill="{COLORS[style]}"/>')
        middle = row_top + (ROW_H - 2) / 2
        parts.append(_svg_text(cx, middle, text, ' fill="#888"' if style == "freed" else ""))
        if style == "freed":
            start = cx - len(text) * CHAR_W / 2
            end = start + (len(text) - len(FREED)) * CHAR_W
            parts.append(f'<line x1="{start:.1f}" y1="{middle:.1f}" x2="{end:.1f}" y2="{middle:.1f}" stroke="#888"/>')
    return "\n".join(parts + ["</g>"])


def _svg_text(x, middle, text, attrs=""):
    """Centred text whose middle sits at ``middle`` (0.35 em below it is the baseline)."""
    return (f'<text x="{x:.1f}" y="{middle + 0.35 * FONT_SIZE:.1f}" text-anchor="middle"{attrs}>'
            f"{html.escape(text)}</text>")


# ---- backward, step by step ----

def backward_frames(tensor, gradient=None, params=None, retain_graph=False):
    """Run ``tensor.backward(gradient)`` and record each step of the engine as a frame.

    The engine is watched, not imitated: a pre-hook on every node receives the
    gradient buffer the engine hands that node, a post-hook receives what the
    node sends along each edge, and each node's saved tensors say whether they
    have been freed. Between two steps, a node's buffer holds the sum of what
    has arrived along its edges, and it waits for the edges whose source has
    not run yet. Frame 0 is the start; frame k follows the k-th node's run.
    """
    if tensor.grad_fn is None:
        raise ValueError("backward_frames needs a tensor made by recorded operations, and this one has no "
                         "grad_fn (a leaf, or computed under no_grad): pass the loss, not a parameter")
    nodes = topological_order([tensor.grad_fn])  # every node backward will run
    picture = _walk([tensor], {id(t): name for name, t in (params or {}).items()}, True, 200)
    recorder = _Recorder(nodes)
    with contextlib.ExitStack() as hooks:  # every hook is removed when backward ends, or raises
        for node in nodes:
            hooks.enter_context(node.register_prehook(partial(recorder.before, node)))
            hooks.enter_context(node.register_hook(partial(recorder.after, node)))
        tensor.backward(gradient, retain_graph=retain_graph)
    recorder.close_frame()
    return BackwardFrames(recorder.frames, *picture[:2])


class Frame:
    """The engine's state after one step.

    ``node``: the node that ran (None in frame 0), on the gradients ``received``,
    sending ``sent`` (one per edge, None where nothing is sent) with ``local`` the
    local derivatives of a node with a scalar output (what it sends for a grad_output of 1).
    ``buffers``: node -> list of arrays (one per output) waiting in its buffer;
    ``pending``: node -> edges it still waits for; ``done``: nodes that ran, in order;
    ``freed``: node -> one flag per saved tensor; ``grads``: leaf's AccumulateGrad -> its .grad.
    """

    def __init__(self, step, node, received, buffers, pending, done, grads):
        self.step, self.node, self.received = step, node, received
        self.sent, self.local = (), ()
        self.buffers = {n: list(b) for n, b in buffers.items()}
        self.pending, self.done, self.grads = dict(pending), list(done), dict(grads)
        self.freed = {}

    def __repr__(self):
        return f"<Frame {self.step}: {'start' if self.node is None else self.node.name()}>"


class _Recorder:
    """The hooks' side of ``backward_frames``: turns what the hooks see into frames."""

    def __init__(self, nodes):
        self.nodes, self.frames, self.open = nodes, [], None
        self.pending = {n: 0 for n in nodes}
        for node in nodes:
            for child, _ in node.next_functions:
                if child is not None:
                    self.pending[child] += 1
        self.buffers, self.done, self.grads = {}, [], {}

    def before(self, node, grads):
        """The engine hands ``node`` its buffer: close the previous step's frame, open this one's."""
        received = [None if g is None else g.detach().numpy().copy() for g in grads]
        if not self.frames and self.open is None:  # the start: only the root's buffer is filled
            self.open = Frame(0, None, None, {node: received}, self.pending, (), {})
        self.close_frame()
        self.buffers.pop(node, None)
        self.open = Frame(len(self.frames), node, received, {}, {}, (), {})
        self.open.local = _local_derivatives(node, grads)

    def after(self, node, sent, grads):
        """``node`` ran and sends ``sent`` along its edges: fill the buffers they lead to."""
        frame = self.open
        frame.sent = tuple(None if g is None else g.detach().numpy().copy() for g in sent)
        for (child, nr), g in zip(node.next_functions, frame.sent):
            if child is None:
                continue
            self.pending[child] -= 1
            if g is not None:
                buf = self.buffers.setdefault(child, [None] * len(child._output_meta))
                buf[nr] = g if buf[nr] is None else np.asarray(buf[nr] + g)
        self.done.append(node)
        if hasattr(node, "variable") and node.variable.grad is not None:
            self.grads[node] = node.variable.grad.detach().numpy().copy()
        frame.buffers = {n: list(b) for n, b in self.buffers.items()}
        frame.pending, frame.done, frame.grads = dict(self.pending), list(self.done), dict(self.grads)

    def close_frame(self):
        """Freeing happens after a node's post-hook: look at the saved tensors now."""
        if self.open is not None:
            self.open.freed = {n: [released for *_, released in n.saved_tensors_info] for n in self.nodes}
            self.frames.append(self.open)
            self.open = None


def _local_derivatives(node, grads):
    """What a node with one scalar output sends for a grad_output of 1: its local derivatives.

    Called before the engine runs the node, while its saved tensors are there;
    None for other nodes (a leaf's AccumulateGrad has no edges).
    """
    if hasattr(node, "variable") or len(grads) != 1 or grads[0] is None or grads[0].numel() != 1:
        return ()
    out = node(grads[0].new_ones(grads[0].shape))
    out = out if isinstance(out, tuple) else (out,)
    return tuple(None if g is None else g.detach().numpy().copy() for g in out)


class BackwardFrames:
    """The frames of one backward: ``frames[k]``, ``draw(k)`` and ``strip()`` to look at them."""

    def __init__(self, frames, boxes, edges):
        self.frames, self._boxes, self._edges = frames, boxes, edges  # the graph as drawn before backward

    def __len__(self):
        return len(self.frames)

    def __getitem__(self, step):
        return self.frames[step]

    def __iter__(self):
        return iter(self.frames)

    def __repr__(self):
        return f"<BackwardFrames: {len(self.frames)} frames>"

    def draw(self, step, engine="python"):
        """Frame ``step`` as a Graph: the node that ran in yellow, nodes done in grey."""
        frame = self.frames[step]
        boxes = [_frame_box(box, frame) for box in self._boxes]
        graph = Graph(boxes, self._edges, False, engine=engine, labels=_frame_labels(self._boxes, self._edges, frame))
        graph.label_at = "end"  # near the node the gradient goes to: edges leave a box close together
        return graph

    def strip(self, steps=None, columns=3):
        """Several frames side by side in one SVG picture, each under a title line."""
        steps = range(len(self.frames)) if steps is None else steps
        return FrameStrip([(_frame_title(self.frames[k]), self.draw(k).svg()) for k in steps], columns)


def _frame_title(frame):
    if frame.node is None:
        return "step 0: start"
    return f"step {frame.step}: {frame.node.name()} ran"


def _frame_box(box, frame):
    """A box as it looks in ``frame``: a node's state, its buffer and its saved tensors."""
    if box.kind == "leaf":
        acc = box.obj.grad_fn if box.obj.grad_fn is not None else _leaf_node(frame, box.obj)
        rows = box.rows[:1] + ([(f"grad = {_values(frame.grads[acc])}", "plain")] if acc in frame.grads else [])
        return Box("leaf", box.title, rows, box.obj)
    if box.kind != "node":
        return box
    node = box.obj
    if node is frame.node:
        kind, rows = "running", [(f"ran on {_buffer_text(frame.received)}", "plain")]
    elif node in frame.done:
        kind, rows = "done", [(f"ran at step {frame.done.index(node) + 1}", "plain")]
    else:
        buf = frame.buffers.get(node)
        waits = frame.pending.get(node, 0)
        rows = [(f"buffer = {_buffer_text(buf)}" if buf else "buffer empty", "plain"),
                (f"waits for {waits} edge{'s' if waits != 1 else ''}" if waits else "ready", "plain")]
        kind = "node"
    saved = [(text + FREED, "freed") if flag else (text, "saved")
             for (text, _), flag in zip(box.rows, frame.freed.get(node, []))]
    return Box(kind, box.title, rows + saved, node)


def _leaf_node(frame, leaf):
    """The AccumulateGrad of ``leaf`` among the frame's nodes (a leaf has no grad_fn)."""
    for node in list(frame.freed):
        if getattr(node, "variable", None) is leaf:
            return node
    return None


def _frame_labels(boxes, edges, frame):
    """Edge text: the local derivative, and what was sent, on the edges the running node used."""
    index = {id(box.obj): i for i, box in enumerate(boxes) if box.kind == "node"}
    labels = {}
    node = frame.node
    if node is None:
        return labels
    here = index[id(node)]
    targets = [index[id(child)] if child is not None else None for child, _ in node.next_functions]
    used = {}
    for k, (target, sent) in enumerate(zip(targets, frame.sent)):
        if target is None or sent is None:
            continue
        local = frame.local[k] if k < len(frame.local) and frame.local[k] is not None else None
        text = f"\u00d7{_values(local)} = {_values(sent)}" if local is not None else f"sends {_values(sent)}"
        used.setdefault((here, target), []).append(text)
    for i, (a, b, _) in enumerate(edges):
        if used.get((a, b)):
            labels[i] = used[a, b].pop(0)
    return labels


def _values(array):
    """A few numbers as text ("0.25", "[1, 2]"), or the shape for more."""
    array = np.asarray(array)
    if array.size > 4:
        return _shape(array.shape)
    text = ", ".join(f"{v:.4g}" for v in array.ravel())
    return text if array.ndim == 0 else f"[{text}]"


def _buffer_text(buf):
    return " | ".join("-" if g is None else _values(g) for g in buf)


class FrameStrip:
    """Frames in a grid, as one SVG: shows itself in Jupyter, ``save(path)`` writes it."""

    def __init__(self, pictures, columns):
        self.pictures, self.columns = pictures, columns

    def svg(self):
        sizes = [tuple(float(v) for v in re.match(r'<svg [^>]*width="([\d.]+)" height="([\d.]+)"', svg).groups())
                 for _, svg in self.pictures]
        cell_w = max(w for w, _ in sizes)
        rows = [sizes[i:i + self.columns] for i in range(0, len(sizes), self.columns)]
        row_h = [max(h for _, h in row) + TITLE_H for row in rows]
        width, height = cell_w * min(self.columns, len(sizes)), sum(row_h)
        parts = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width:.0f}" height="{height:.0f}" '
                 f'viewBox="0 0 {width:.0f} {height:.0f}" font-family="{FONT}" font-size="{FONT_SIZE}">',
                 f'<rect width="{width:.0f}" height="{height:.0f}" fill="white"/>']
        for i, ((title, svg), (w, _)) in enumerate(zip(self.pictures, sizes)):
            x, y = (i % self.columns) * cell_w, sum(row_h[:i // self.columns])
            parts.append(_svg_text(x + cell_w / 2, y + TITLE_H / 2, title, ' font-weight="bold"'))
            inner = svg.replace("<svg ", f'<svg x="{x + (cell_w - w) / 2:.0f}" y="{y + TITLE_H:.0f}" ', 1)
            parts.append(inner)
        return "\n".join(parts + ["</svg>"]) + "\n"

    def _repr_svg_(self):
        return self.svg()

    def save(self, path):
        with open(path, "w", encoding="utf-8") as f:
            f.write(self.svg())
