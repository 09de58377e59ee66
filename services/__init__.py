"""The platform's gRPC services, each a thin shell: ``python -m services.engine``, ``python -m services.matchmaker``."""
