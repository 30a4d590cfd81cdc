"""Command line entry point: ``autograder`` or ``python -m autograder``.

Placeholder. The real commands (release, grade, feedback) are not implemented yet.
"""

import sys

USAGE = """\
usage: autograder COMMAND [ARGS...]

The chibigrad course autograder is not implemented yet.
Planned commands: release, grade, feedback (wrapping nbgrader).
"""


def main(argv=None):
    """Print the usage text, say that nothing is implemented yet, and exit with status 2."""
    sys.stderr.write(USAGE)
    sys.exit(2)


if __name__ == "__main__":
    main()
