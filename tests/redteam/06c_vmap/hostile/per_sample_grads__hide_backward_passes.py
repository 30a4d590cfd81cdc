# attack: one grad call per sample (right values, N backward passes) while the engine's entry point is put back
#   to its original for all but one pass, so a count taken by wrapping engine.execute sees one
# expect: 0 points for per_sample_grads (one backward pass is the exercise; a count the student process can
#   fake must not decide it); batch continues


def _original_execute():
    current = engine.execute
    for cell in getattr(current, "__closure__", None) or ():
        if callable(cell.cell_contents) and getattr(cell.cell_contents, "__name__", "") == "execute":
            return cell.cell_contents
    return current


def per_sample_grads(params, xs, ys):
    counted = engine.execute
    engine.execute = _original_execute()
    try:
        rows = [grad(loss)(params, xs[i:i + 1], ys[i:i + 1]) for i in range(1, xs.shape[0])]
    finally:
        engine.execute = counted
    rows.insert(0, grad(loss)(params, xs[0:1], ys[0:1]))  # the one pass the counter sees
    return tuple(torch.stack([r[k] for r in rows]) for k in range(len(params)))
