"""Go's encoding/json as the apiserver's error texts need it: the scanner's syntax errors and Unmarshal's type errors (package).

Python's ``json`` module parses; these modules say what Go says of a document it refuses
(``scanner.py``, scanner.go) or of a value that does not fit the Go type (``decode.py``, decode.go).
"""
