# nbgrader configuration of the chibigrad course. Run nbgrader commands in this directory
# (`cd notebooks && ../.venv/bin/nbgrader ...`); the gradebook is notebooks/gradebook.db and the
# generated folders (release/, submitted/, autograded/, feedback/) are git-ignored.
import os

from autograder.nbgrader_plugins import generate_assignment_preprocessors

c = get_config()  # noqa: F821

c.CourseDirectory.course_id = "chibigrad"
c.CourseDirectory.root = os.path.dirname(os.path.abspath(__file__))  # this directory, wherever nbgrader runs

# Each cell may run this long. A graded cell that runs out of time is interrupted and fails with the
# message below; the rest of the notebook still runs.
c.Execute.timeout = 60
c.Execute.error_on_timeout = {
    "ename": "CellTimeoutError",
    "evalue": "",
    "traceback": ["CellTimeoutError: this cell ran for more than 60 seconds. An endless loop, or a walk "
                  "that visits shared nodes again and again (keep a set of the nodes you have seen)?"],
}
# Without this a student's loop that swallows KeyboardInterrupt aborts the whole submission.
c.Execute.raise_on_iopub_timeout = False

# A test cell or solution cell a student deleted is put back before grading.
c.OverwriteCells.add_missing_cells = True

# What replaces `### BEGIN SOLUTION ... ### END SOLUTION` in the student's notebook;
# {exercise} becomes the exercise's name, e.g. 01.walk (see autograder.nbgrader_plugins.ClearSolutions).
c.ClearSolutions.code_stub = {
    "python": '# YOUR CODE HERE\nraise NotImplementedError("Exercise {exercise}: replace this line with your code")'}
c.ClearSolutions.text_stub = "YOUR ANSWER HERE"
c.GenerateAssignment.preprocessors = generate_assignment_preprocessors()

# What counts as a failure: a tests cell scores 0 when it raises (an AssertionError from a visible
# or hidden test, or any other exception, or the timeout above) or when it writes anything to
# stderr (a warning, for example); otherwise it scores its points. Tests cells never end with an
# expression whose value is a number (nbgrader would read it as partial credit). `nbgrader validate`
# (and Lab's Validate button) applies the same rule to every graded or locked cell.

# The hidden tests of a judged assignment (autograder/grading/exercises/a<assignment>.py) run in this
# process, the judge; the notebook's kernel, with the student edition of chibigrad, only answers its calls.
# Every assignment is judged.
from autograder.grading.judge import JudgedExecute, JudgedSaveAutoGrades  # noqa: E402
from nbconvert.preprocessors import ClearMetadataPreprocessor  # noqa: E402
from nbgrader.preprocessors import AssignLatePenalties, CheckCellMetadata, IgnorePattern, LimitOutput  # noqa: E402

c.Autograde.autograde_preprocessors = [JudgedExecute, IgnorePattern, ClearMetadataPreprocessor, LimitOutput,
                                       JudgedSaveAutoGrades, AssignLatePenalties, CheckCellMetadata]
