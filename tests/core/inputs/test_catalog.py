"""core/inputs/catalog.py: the catalog's pinned versions exist in their sources."""

from __future__ import annotations


def test_every_pinned_chart_version_is_in_its_repository_index(catalog):
    for name, chart in catalog.charts.items():
        assert chart.version in chart.indexed_versions(), name
