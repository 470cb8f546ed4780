"""The HTTP/1 parity corpus: raw requests, Go's recorded answers and the code to replay them (no Go twin).

* :mod:`parity.corpus`: the cases (id, category, description, bytes to send).
* :mod:`parity.wire`: the raw-socket client, the response parser, and the normalisation and
  comparison rules that both the recorder and the replay use.
* :mod:`parity.app`: the Python reflecting WSGI app, the twin of ``goserver/main.go``.
* the differences from Go that are deliberate: ``genericserver.net.http.request.KNOWN_DIFFERENCES`` and the table in its docstring.
* ``record.py``: builds the Go server and records ``go-answers.json``; ``tests/test_parity.py``
  replays the corpus against :class:`genericserver.net.http.server.Server`. See README.md here.
"""
