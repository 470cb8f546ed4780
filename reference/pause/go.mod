module genericserver.local/reference/pause

go 1.26.0
