"""Polygraphy's constants that its loaders take."""

#: ``ModifyOutputs(outputs=MARK_ALL)``: every value a node produces becomes an output.
MARK_ALL = "mark-all"
