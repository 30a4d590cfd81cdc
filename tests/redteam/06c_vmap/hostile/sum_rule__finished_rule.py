# attack: answer with chibigrad's own batching rule for sum: look it up in batching_rules.rules (and any
#   module-level function whose name mentions sum) and call it; fall back to a wrong answer
# expect: 0 points for sum_rule (the student edition has no finished rule to call); batch continues
def _finished():
    found = []
    for op, rule in list(batching_rules.rules.items()):
        if "Sum" in getattr(op, "__name__", ""):
            found.append((op, rule))
    for name in dir(batching_rules):
        if "sum" in name.lower() and callable(getattr(batching_rules, name)):
            found.append((None, getattr(batching_rules, name)))
    return found


def sum_rule(x, x_bdim, dim, keepdim=False):
    xb = x.movedim(x_bdim, 0)
    for op, rule in _finished():
        for args in ((op, (xb, dim, keepdim, None), (True,), xb.shape[0]),
                     (op, (xb, dim, keepdim), (True, False, False), xb.shape[0]), (xb, 0, dim, keepdim)):
            try:
                out = rule(*args)
                if isinstance(out, tuple):
                    return out
                return out, 0
            except Exception:
                pass
    return xb.sum(), 0  # wrong on purpose: only the finished rule answers
