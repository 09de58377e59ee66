"""The test suite (a package so that test folders can share helpers)."""
