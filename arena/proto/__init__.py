"""Generated gRPC/protobuf code of the ohell.v1 contract (see generate.py)."""
