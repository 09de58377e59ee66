"""Tests of the matchmaker service, the store and table forming."""
