"""github.com/emicklei/go-restful (package): the module's folder; Python names it go_restful, as an import path cannot hold a hyphen (no Go twin)."""
