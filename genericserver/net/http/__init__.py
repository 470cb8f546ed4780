"""Go's net/http as the apiserver's shutdown needs it: the server, its connections, requests and responses (package).

One module per part of Go's files: ``server.py`` (server.go's ``Server`` and ``conn``),
``connreader.py`` (server.go's ``connReader`` and the background read), ``response.py`` (server.go's
``response`` and ``chunkWriter``, header.go), ``request.py`` (request.go's ``readRequest``,
transfer.go); ``internal/`` holds chunked.go and the HTTP/2 server."""
