"""The platform around the engine: command line, gRPC services, Celery workers."""
