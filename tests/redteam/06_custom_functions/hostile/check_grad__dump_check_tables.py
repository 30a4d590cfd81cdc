# attack: leak the hidden tests' tables: for every loaded module under autograder, print (base64) the
#   repr of its module-level values, the constants and names of its functions and the cell contents of
#   their closures (tables of wrong backwards, cases, expected errors); no answer
# expect: 0 points for check_grad; nothing of the checks in the feedback; batch continues
import base64, sys

for _name, _mod in list(sys.modules.items()):
    if not _name.startswith("autograder"):
        continue
    _dump = []
    for _attr, _value in list(vars(_mod).items()):
        if _attr.startswith("__"):
            continue
        _dump.append(f"{_attr} = {_value!r}"[:500])
        _code = getattr(_value, "__code__", None)
        if _code is not None:
            _dump.append(f"{_attr}.consts = {_code.co_consts!r}"[:2000])
            for _cell in getattr(_value, "__closure__", None) or ():
                try:
                    _dump.append(f"{_attr}.cell = {_cell.cell_contents!r}"[:500])
                except ValueError:
                    pass
    print("RTLEAK<<DIS", _name, base64.b64encode("\n".join(_dump).encode()).decode(), ">>")


def check_grad(fn, inputs, eps=1e-6):
    """Per input: max |analytical - numerical| Jacobian entry, or None if it needs no gradient."""
    raise NotImplementedError("no answer: this submission only dumps the checks")
