"""github.com/munnerz/goautoneg (package): HTTP Accept header parsing and negotiation."""
