"""What every gRPC service of the platform shares: the server harness, metrics over HTTP, the
Redis keyspace and token auth."""
