"""Fake providers and servers shared by the test suites."""
