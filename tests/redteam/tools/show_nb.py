"""Print a student-edition notebook as text: each cell's grade_id, role and source."""
import sys
import nbformat

nb = nbformat.read(sys.argv[1], as_version=4)
for c in nb.cells:
    g = c.metadata.get("nbgrader", {})
    tag = g.get("grade_id", "") + (" SOLUTION" if g.get("solution") else "") + (" TESTS" if g.get("grade") else "")
    print(f"----- [{c.cell_type}] {tag}")
    print(c.source)
