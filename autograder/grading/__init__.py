"""The machinery behind ``autograder grade`` and ``merge`` (see ``autograder/README.md``).

- ``grade``: the parent process: what to grade, the worker pool, results written into the
  gradebook (the only writer), shards, progress.
- ``worker``: one worker process: a scratch course per submission, nbgrader's ``Autograde`` on it.
- ``execute``: the preprocessors that replace nbgrader's ``Execute`` (sandboxed kernel, watchdog,
  output caps).
- ``scoring``: the release's metadata put back before grading; only a test cell that ran to the
  end scores.
- ``judge``, ``exercises/``: the hidden checks, in the grader's process; ``runner``, ``protocol``, ``cases``:
  what the kernel runs for them (plain data only crosses).
- ``sandbox``: what confines a kernel (limits, Landlock, seccomp, the audit hook) and its launcher.
- ``gradebook``: scratch gradebooks, results written back, gradebooks compared.

Kernels import this package and ``sandbox`` (``worker.KERNEL_MODULES``): keep this file
free of imports.
"""
