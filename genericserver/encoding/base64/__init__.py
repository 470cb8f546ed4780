"""Go's encoding/base64 package (Go 1.26): where a decode fails (package)."""
