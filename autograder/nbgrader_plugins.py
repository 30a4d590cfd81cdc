"""nbgrader plug-ins of the course, named in notebooks/nbgrader_config.py.

Kept apart from ``build.py`` so that importing the course tools does not import nbgrader.
"""
from nbgrader.converters import GenerateAssignment
from nbgrader.preprocessors import ClearSolutions as _ClearSolutions

from .build import exercise_name


class ClearSolutions(_ClearSolutions):
    """nbgrader's ClearSolutions, with ``{exercise}`` in the stub replaced by the
    exercise's name (``01.walk``), so a student who runs an unanswered cell reads
    which exercise it is."""

    def preprocess_cell(self, cell, resources, cell_index):
        stub, grade_id = self.code_stub, cell.metadata.get("nbgrader", {}).get("grade_id", "")
        name = exercise_name(resources["nbgrader"]["assignment"], grade_id)
        self.code_stub = {language: text.replace("{exercise}", name) for language, text in stub.items()}
        try:
            return super().preprocess_cell(cell, resources, cell_index)
        finally:
            self.code_stub = stub


def generate_assignment_preprocessors():
    """nbgrader's generate_assignment steps, with our ClearSolutions."""
    steps = GenerateAssignment.class_traits()["preprocessors"].default()
    return [ClearSolutions if step is _ClearSolutions else step for step in steps]
