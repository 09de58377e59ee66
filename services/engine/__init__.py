"""The engine service: agent gateway, rules API, challenge and spectate servicers (``python -m services.engine``)."""
