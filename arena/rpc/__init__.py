"""What every gRPC process shares: the server harness, token auth, the metrics endpoint."""
