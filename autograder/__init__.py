"""The instructor's tooling around nbgrader: release, collect, grade and feedback.

Not implemented yet: this package is a placeholder so that the `autograder` console
script exists; its commands land with the instructor tooling issue.
"""
