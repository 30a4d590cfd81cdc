"""The judge's hidden checks, one ``a<assignment>.py`` per judged assignment (see ``autograder.grading.judge``).

They run in the judge's process only: never staged into a grading kernel, never imported by student code.
"""
