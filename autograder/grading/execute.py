"""nbgrader preprocessors that replace ``Execute`` when the autograder grades a notebook.

``SandboxedExecute`` is nbgrader's ``Execute`` (same per-cell timeout, same outputs, same
failure rule) with what a class of untrusted notebooks needs on top:

- the kernel is the sandboxed one (``autograder.grading.sandbox``: memory cap, Landlock, audit hook);
- a watchdog thread enforces a wall-clock cap for the whole notebook, a cap on the number of
  processes the student starts (the extra ones are killed, the kernel lives on) and on their
  total memory;
- a kernel that dies (``os._exit``, ``exit()``, a crash, the watchdog) or that ignores the
  interrupt after a timeout (a loop that swallows ``KeyboardInterrupt``) no longer aborts the
  submission: the cell gets an error saying what happened and the cells after it an error
  saying they did not run, so every graded cell that had passed keeps its points and the rest
  score 0 (serial ``nbgrader autograde`` drops the whole submission, or waits a full timeout
  per remaining cell);
- outputs are capped per cell while they arrive (a notebook that prints gigabytes cannot
  exhaust the grader's memory); a stderr output is never hidden by the cap;
- afterwards every process the student started is killed.

A judged assignment's verdicts come from the judge (``autograder.grading.judge``), in the grader's process:
nothing the kernel does can add points, so the student's code runs once.
"""
import json
import os
import secrets
import signal
import threading
import time

from nbformat.notebooknode import NotebookNode
from nbgrader.preprocessors import Execute, NbGraderPreprocessor
from nbclient.exceptions import DeadKernelError
from nbclient.util import run_sync
from traitlets import Float, Integer

from . import sandbox
from .judge import JudgeMixin

GRADER = "the grader"
# errors worth a line in the report, and what they usually mean
NOTABLE = {
    "MemoryError": lambda job: f"the kernel's memory is capped at {job.policy['memory_bytes'] >> 20} MB",
    "SystemExit": lambda job: "sys.exit() in the notebook's code",
}


class JobContext:
    """What the worker knows about the notebook being graded; the preprocessors read and add to it."""

    def __init__(self, policy, notebook_timeout, max_processes):
        self.policy = policy
        self.notebook_timeout = notebook_timeout
        self.max_processes = max_processes
        self.started = time.monotonic()
        self.notes = []  # sentences for the report
        self.cells = {}  # cell id -> {"seconds": ..., "status": ...}
        self.timings = {}
        self.judged = False  # the assignment's hidden tests are the judge's (autograder.grading.judge)
        self.kernel_lib = None  # the packages the kernel imports (PYTHONPATH); a judged assignment's: the student lib
        self.before_student_code = lambda: None  # the worker's: remember / restore its scratch files
        self.after_student_code = lambda: None

    def note(self, text):
        if text not in self.notes:
            self.notes.append(text)

    def seconds_left(self):
        return self.notebook_timeout - (time.monotonic() - self.started)


CURRENT = {"job": None}  # set by the worker around each notebook


def current_job():
    job = CURRENT["job"]
    if job is None:
        raise RuntimeError("autograder preprocessors run only inside an autograder worker")
    return job


def error_output(ename, message):
    return NotebookNode(output_type="error", ename=ename, evalue=message, traceback=[f"{ename}: {message}"])


class _Watchdog(threading.Thread):
    """Every ``period`` seconds: the notebook's wall-clock cap, the number of processes the
    kernel started, their total memory. Kills what breaks a limit and says why in ``reason``."""

    def __init__(self, job, kernel_pid, period=0.25):
        super().__init__(daemon=True)
        self.job, self.kernel_pid, self.period = job, kernel_pid, period
        self.reason, self.peak_processes = None, 0
        self._halt = threading.Event()

    def run(self):
        memory_cap = 2 * (self.job.policy.get("memory_bytes") or 0)
        ours = {self.kernel_pid, os.getpid()}  # and the kernel's allocation watcher, once it is found
        while not self._halt.wait(self.period):
            if len(ours) == 2 and (watcher := sandbox.allocation_watcher(self.kernel_pid)):
                ours.add(watcher)
            found = sandbox.descendants()
            others = {p: rss for p, rss in found.items() if p not in ours}
            self.peak_processes = max(self.peak_processes, len(others))
            if self.job.seconds_left() <= 0:
                self.reason = (f"the notebook ran past its time limit ({self.job.notebook_timeout:.0f} s for the "
                               "whole notebook); the grader stopped it")
            elif memory_cap and sum(found.values()) > memory_cap and sandbox.memory_in_use(found) > memory_cap:
                self.reason = (f"the kernel and the processes it started used more than {memory_cap >> 20} MB in "
                               "all; the grader stopped them")
            elif len(others) > self.job.max_processes:
                self.job.note(f"started more than {self.job.max_processes} processes at once; the grader "
                              "killed them (the kernel went on)")
                sandbox.kill_descendants(keep=ours)
                continue
            else:
                continue
            sandbox.kill_descendants()
            return

    def stop(self):
        self._halt.set()
        self.join()


class SandboxedExecute(JudgeMixin, Execute):
    """nbgrader's Execute for untrusted notebooks (see the module docstring), with the judge for judged
    assignments (``autograder.grading.judge``)."""

    output_limit = Integer(2_000_000, help="bytes of output kept per cell; the rest is dropped").tag(config=True)
    notebook_output_limit = Integer(10_000_000, help="bytes of output kept for the whole notebook").tag(config=True)
    probe_timeout = Float(5.0, help="seconds a kernel has to answer after a timed-out cell is interrupted "
                                    "before it is declared stuck").tag(config=True)
    shutdown_kernel = "immediate"

    def preprocess(self, nb, resources=None, km=None):
        job = current_job()
        self._job, self._stopped, self._timed_out = job, None, False
        self._output_bytes, self._truncated, self._stderr_dropped = {}, set(), set()
        self._watchdog = None
        begin = time.monotonic()
        job.before_student_code()
        try:
            return super().preprocess(nb, resources, km)
        except DeadKernelError:  # the kernel died outside a cell (before the first one ran)
            self._stop_all(nb.cells, self._death_reason())
            return nb, self.resources
        finally:
            if self._watchdog is not None:
                self._watchdog.stop()
                job.timings["peak_processes"] = self._watchdog.peak_processes
            job.timings["execute_s"] = time.monotonic() - begin
            sandbox.kill_descendants()

    def judge_note(self, text):
        self._job.note(text)

    def kernel_env(self):
        """Only the allowlisted environment (``sandbox.student_environment``) and the job's packages."""
        lib = self._job.kernel_lib or os.environ.get("PYTHONPATH", "")
        return sandbox.student_environment(PYTHONPATH=str(lib))

    def create_kernel_manager(self):
        km = super().create_kernel_manager()
        # in a folder the sandboxed kernel may read (Landlock), not wherever tempfile points
        km.connection_file = os.path.join(self._job.policy["write"][-1], f"kernel-{secrets.token_hex(8)}.json")
        return km

    async def async_start_new_kernel_client(self):
        begin = time.monotonic()
        kc = await super().async_start_new_kernel_client()
        self._job.timings["kernel_start_s"] = time.monotonic() - begin
        pid = getattr(getattr(self.km, "provisioner", None), "pid", None)
        self._watchdog = _Watchdog(self._job, pid)
        self._watchdog.start()
        return kc

    start_new_kernel_client = run_sync(async_start_new_kernel_client)

    def preprocess_cell(self, cell, resources, index):
        if self._stopped:
            if cell.cell_type == "code":
                cell.outputs = [error_output("NotRun", f"this cell was not run: {self._stopped}")]
                self._record(cell, "not run")
            return cell, resources
        self._timed_out = False
        begin = time.monotonic()
        try:
            cell, resources = super().preprocess_cell(cell, resources, index)
        except DeadKernelError:
            reason = self._death_reason()
            cell.outputs.append(error_output("KernelDied", reason))
            self._record(cell, "kernel died", begin)
            self._job.note(f"cell {self._name(cell)}: {reason}")
            self._stopped = f"the kernel had stopped in cell {self._name(cell)} before it"
            return cell, resources
        self._limit_output(cell, index)
        if self._timed_out:
            self._record(cell, "timeout", begin)
            self._job.note(f"cell {self._name(cell)} ran past the {self.timeout} s limit and was interrupted")
            if not self._kernel_answers():
                sandbox.kill_descendants()
                why = (f"the kernel ignored the interrupt after cell {self._name(cell)} timed out (a loop that "
                       "catches KeyboardInterrupt?); the grader stopped it")
                self._job.note(why)
                self._stopped = why
        elif cell.cell_type == "code":
            errors = [o.get("ename") for o in cell.outputs if o.output_type == "error"]
            self._record(cell, "error" if errors else "ok", begin)
            for ename in set(errors) & set(NOTABLE):
                self._job.note(f"cell {self._name(cell)}: {ename} ({NOTABLE[ename](self._job)})")
        return cell, resources

    def _stop_all(self, cells, reason):
        self._job.note(reason)
        self._stopped = reason
        for cell in cells:
            if cell.cell_type == "code" and self._name(cell) not in self._job.cells:
                cell.outputs = [error_output("NotRun", f"this cell was not run: {reason}")]
                self._record(cell, "not run")

    def _record(self, cell, status, begin=None):
        self._job.cells[self._name(cell)] = {
            "status": status, "seconds": round(time.monotonic() - begin, 3) if begin else 0.0}

    @staticmethod
    def _name(cell):
        return cell.get("metadata", {}).get("nbgrader", {}).get("grade_id") or cell.get("id") or "?"

    def _death_reason(self):
        if self._watchdog is not None and self._watchdog.reason:
            return self._watchdog.reason
        code = None
        process = getattr(getattr(self.km, "provisioner", None), "process", None)
        if process is not None:
            try:
                code = process.wait(timeout=2)
            except Exception:
                code = process.poll()
        if code == -signal.SIGSYS:
            how = "killed by the sandbox: a system call of another architecture's ABI, which seccomp refuses"
        elif code is not None and code < 0:
            how = f"killed by signal {-code}" + (" (out of memory?)" if -code in (6, 9, 11) else "")
        elif code is not None:
            how = f"exit status {code}: os._exit(), exit() or quit()?"
        else:
            how = "cause unknown"
        return f"the kernel died while running this cell ({how}); the cells after it were not run"

    async def _async_handle_timeout(self, timeout, cell=None):
        self._timed_out = True
        return await super()._async_handle_timeout(timeout, cell)

    def _kernel_answers(self):
        """After a timeout and interrupt: does the kernel run a trivial request within
        ``probe_timeout``? A loop that swallows KeyboardInterrupt keeps it busy forever."""
        async def probe():
            msg_id = self.kc.execute("", silent=True, store_history=False)
            deadline = time.monotonic() + self.probe_timeout
            while True:
                left = deadline - time.monotonic()
                if left <= 0:
                    return False
                try:
                    msg = await self.kc.shell_channel.get_msg(timeout=left)
                except Exception:
                    return False
                if msg["parent_header"].get("msg_id") == msg_id:
                    return True
        try:
            return run_sync(probe)()
        except Exception:
            return False

    def output(self, outs, msg, display_id, cell_index):
        """nbclient's output(), keeping at most ``output_limit`` bytes per cell."""
        content = msg.get("content", {})
        if msg["msg_type"] == "error":  # never dropped (it decides the grade); shortened
            content["evalue"] = str(content.get("evalue", ""))[:20_000]
            content["traceback"] = [line[:20_000] for line in content.get("traceback", [])[:200]]
            return super().output(outs, msg, display_id, cell_index)
        size = len(content.get("text", "")) if msg["msg_type"] == "stream" else len(json.dumps(content, default=str))
        used = self._output_bytes.get(cell_index, 0) + size
        self._output_bytes[cell_index] = used
        if used > self.output_limit or sum(self._output_bytes.values()) > self.notebook_output_limit:
            self._truncated.add(cell_index)
            if msg["msg_type"] == "stream" and content.get("name") == "stderr":
                self._stderr_dropped.add(cell_index)
            return None
        return super().output(outs, msg, display_id, cell_index)

    def _limit_output(self, cell, index):
        if index not in self._truncated:
            return
        total = self._output_bytes[index]
        cell.outputs.append(NotebookNode(output_type="stream", name="stdout", text=(
            f"\n[{GRADER}: this cell printed {total / 1e6:.1f} MB; the output was cut at "
            f"{self.output_limit / 1e6:.1f} MB per cell, {self.notebook_output_limit / 1e6:.0f} MB per notebook]\n")))
        if index in self._stderr_dropped and not any(
                o.output_type == "stream" and o.name == "stderr" for o in cell.outputs):
            cell.outputs.append(NotebookNode(output_type="stream", name="stderr",
                                             text=f"[{GRADER}: more stderr output was dropped]\n"))
        self._job.note(f"cell {self._name(cell)} printed {total / 1e6:.1f} MB; the output was truncated")


class AfterStudentCode(NbGraderPreprocessor):
    """After the kernel: no process of the student's is left, and the worker
    puts back any file of its scratch course that student code changed, before nbgrader saves
    the grades into the scratch gradebook."""

    def preprocess(self, nb, resources):
        sandbox.kill_descendants()
        current_job().after_student_code()
        return nb, resources

    def preprocess_cell(self, cell, resources, index):  # pragma: no cover
        return cell, resources
