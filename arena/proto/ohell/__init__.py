"""Generated code for the ohell proto package; do not edit."""
