// bench/versus_go.py's Go side: a bare net/http server and a load client. Standard library only.
module genericserver.bench/goload

go 1.26.0
