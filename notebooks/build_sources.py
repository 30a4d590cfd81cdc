"""Regenerate notebooks/source/<a>/<a>.ipynb from notebooks/source_text/<a>/<a>.py.

    .venv/bin/python notebooks/build_sources.py          # write the notebooks
    .venv/bin/python notebooks/build_sources.py --check  # exit 1 if one is out of date

The format of the text sources is described in autograder/build.py and notebooks/README.md.
"""
import sys

from autograder.build import main

if __name__ == "__main__":
    sys.exit(main(["build", *sys.argv[1:]]))
