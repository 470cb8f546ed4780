"""Go's net packages at their import paths: net/http, net/textproto, net/url (package)."""
