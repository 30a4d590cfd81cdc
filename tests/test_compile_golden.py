"""The golden training programs with every optimizer's ``step`` compiled print what PyTorch printed.

The programs (``tests/golden/programs``) are plain scripts, not step functions, so the one
piece of each that ``chibigrad.compile`` can take without editing it is the update:
``Optimizer.step`` is replaced by one that calls ``chibigrad.compile(optimizer.step)``,
one compiled function per optimizer. Learning-rate schedulers, state created at the first step,
``zero_grad(set_to_none=False)``, closures and hooks then meet the guards. A program whose
output changes is a silent wrong answer (test_golden.py holds eager chibigrad to the same
expected text). Run in a subprocess, as test_golden.py does, with ``torch`` aliased to chibigrad.
"""
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from test_golden import GOLDEN, PROGRAMS, ROOT, XFAIL, _missing, assert_prints

# The visible fallback of a step whose guards fail at every call (a schedule that changes lr each step).
CACHE_LIMIT = "[warning] UserWarning: chibigrad.compile: step reached cache_size_limit"
TRAINING = [p for p in PROGRAMS if "optim" in p.read_text() and not _missing(p) and p.stem not in XFAIL]


@pytest.fixture(scope="module")
def compiled_outputs():
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(ROOT), str(GOLDEN), os.environ.get("PYTHONPATH", "")]))
    result = subprocess.run([sys.executable, __file__, *map(str, TRAINING)], capture_output=True, text=True,
                            cwd=ROOT, env=env, timeout=300)
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


def test_training_programs_with_compiled_optimizer_steps_print_what_pytorch_prints(compiled_outputs):
    assert len(TRAINING) >= 20
    outputs, stats = compiled_outputs["outputs"], compiled_outputs["stats"]
    limited = []  # programs whose learning rate changes every step: recompiled up to the limit, then eager, saying so
    for program in TRAINING:
        expected = (GOLDEN / "expected" / f"{program.stem}.txt").read_text()
        lines = outputs[program.stem].splitlines()
        if any(line.startswith(CACHE_LIMIT) for line in lines):
            limited.append(program.stem)
        assert_prints(program, [line for line in lines if not line.startswith(CACHE_LIMIT)], expected.splitlines())
    print(f"golden programs with compiled optimizer steps: {len(TRAINING)} programs, {stats['optimizers']} optimizers "
          f"({stats['broke']} with a graph break); steps: {stats['replayed']} replayed a graph, {stats['traced']} "
          f"traced, {stats['eager']} ran eagerly after compiling; at the recompile limit (warned): {limited}")
    assert stats["replayed"] > 0


def _main(paths):
    """In the subprocess: run each program with compiled optimizer steps; print outputs and counts as JSON."""
    import runner  # tests/golden/runner.py

    runner.alias_chibigrad_as_torch()
    import chibigrad
    from chibigrad.compile import CompiledFunction
    from chibigrad.optim.optimizer import Optimizer

    eager_step, replay, compiled, replays = Optimizer.step, CompiledFunction._replay, [], [0]

    def compiled_step(self, closure=None):  # reads nothing but the optimizer: its guards see only that
        if "_compiled_step" not in vars(self):
            self._compiled_step = chibigrad.compile(eager_step.__get__(self))
            compiled.append(self._compiled_step)
        return self._compiled_step() if closure is None else self._compiled_step(closure)

    def counted_replay(self, *args):
        replays[0] += 1
        return replay(self, *args)

    Optimizer.step, CompiledFunction._replay = compiled_step, counted_replay
    outputs = {Path(p).stem: runner.run(p) for p in paths}
    stats = {"replayed": replays[0], "optimizers": len(compiled), "traced": sum(c.compile_count for c in compiled),
             "eager": sum(c.eager_calls for c in compiled), "broke": sum(bool(c.graph_breaks) for c in compiled)}
    sys.stdout.write(json.dumps({"outputs": outputs, "stats": stats}))


if __name__ == "__main__":
    _main(sys.argv[1:])
