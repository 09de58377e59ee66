"""The ranked ladder's shared pieces: Redis keyspace, match log, ratings, metrics, the local stack."""
