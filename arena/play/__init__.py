"""Match hosting: the host, its players (built-in, connected, endpoint), the relay, seat specs, events."""
