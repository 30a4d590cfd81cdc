"""The instructor's tooling around nbgrader: release, collect, grade (in parallel, sandboxed),
merge, feedback, export, report and integrity. The command line is ``autograder`` (or
``python -m autograder``); see ``autograder/README.md``.
"""
