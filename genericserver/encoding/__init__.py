"""Go's encoding packages at their import paths: encoding/json (package)."""
