"""Stage 3, render: Kubernetes objects and chart values as plain dicts, their validation against
their real consumers, and the report."""
