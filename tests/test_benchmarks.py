"""The benchmark scripts keep working: each runs in its tiny ``--quick`` configuration.

Nothing here looks at timings (they mean nothing at these sizes); ``make bench`` runs
the real measurements.
"""
import os
import subprocess
import sys
from pathlib import Path

import pytest

BENCHMARKS = Path(__file__).resolve().parents[1] / "benchmarks"
SCRIPTS = {
    "bench_mlp_step.py": "chibigrad / numpy floor:",
    "bench_tiny_ops.py": "chibigrad op / numpy op:",
    "bench_deep_chain.py": "backward per node, 10,000 / 100 nodes:",
    "bench_saved_release.py": "saved tensors released: 9 of 9",
    "bench_checkpoint.py": "time, checkpointed / plain:",
    "bench_gpu.py": "same first loss on every device: yes",
    "bench_read_path.py": "y = (a * b).sum(); y.backward() enters",
    "bench_compile.py": "compiled / numpy floor:",
    "bench_vmap.py": "jacrev / one batched VJP:",
}


def test_every_benchmark_script_is_smoke_tested():
    assert sorted(p.name for p in BENCHMARKS.glob("bench_*.py")) == sorted(SCRIPTS)


@pytest.mark.parametrize("script", sorted(SCRIPTS))
def test_benchmark_runs_in_quick_mode(script):
    env = dict(os.environ, CHIBIGRAD_BENCH_QUICK="1")
    if script == "bench_gpu.py":  # its CUDA runs (eager and compiled) on the simulated device
        env["CHIBIGRAD_SIMULATE_CUDA"] = "1"
    result = subprocess.run([sys.executable, str(BENCHMARKS / script)], capture_output=True, text=True, env=env,
                            timeout=300)
    assert result.returncode == 0, result.stdout + result.stderr
    assert SCRIPTS[script] in result.stdout
    assert "NO" not in result.stdout.split()  # the correctness lines ("same update: yes") held
    assert result.stderr == ""  # no warnings
