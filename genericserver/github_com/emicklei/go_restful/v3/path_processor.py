"""Port of Go's github.com/emicklei/go-restful/v3 package (path_processor.go at v3.13.0): a route's path parameters from the request's path.

``defaultPathProcessor.ExtractParameters`` (:func:`extract_parameters`), which the container uses
with the CurlyRouter (it extracts none of its own): each of the route's tokens that holds a
``{name}`` names the path's token at the same place (``""`` past its end); ``{name:*}`` takes the
rest of the path, its tokens joined by slashes; a token with text around the braces
(``a{name}b``) takes what the path's token has between as much text.
"""

from __future__ import annotations

from genericserver.github_com.emicklei.go_restful.v3.route import Route, tokenize_path


def extract_parameters(route: Route, url_path: str) -> dict[str, str]:
    url_parts = tokenize_path(url_path)
    params: dict[str, str] = {}
    for i, key in enumerate(route.path_parts):
        value = url_parts[i] if i < len(url_parts) else ""
        if "{" not in key:
            continue
        colon = key.find(":")
        if colon != -1:
            reg_part, key_part = key[colon + 1:-1], key[1:colon]
            if reg_part == "*":
                params[key_part] = "/".join(url_parts[i:])
                break
            params[key_part] = value
        else:
            start, end_key = key.index("{"), key.index("}")
            suffix_length = len(key) - end_key - 1
            params[key[start + 1:end_key]] = value[start:len(value) - suffix_length]
    return params
