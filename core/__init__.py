"""Functional core of gpt-oss-infra: stack config -> resolved recipes -> plain manifests.

Nothing in this package imports Pulumi; every function here is pure and testable on its own.
"""
