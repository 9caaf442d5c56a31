"""`make check-versions` (tools/check_versions.py): pinned charts against their repositories' live indexes."""

from __future__ import annotations

import json
from http.server import SimpleHTTPRequestHandler

import pytest
import yaml

from core.inputs.catalog import Chart
from tests.support import serving
from tools.check_versions import check_chart


@pytest.fixture
def chart_repository(tmp_path):
    """A local chart repository (index.yaml over HTTP) and a config folder whose index.json points at it."""
    served = tmp_path / "served"
    served.mkdir()

    class Handler(SimpleHTTPRequestHandler):
        def __init__(self, *args, **kwargs):
            super().__init__(*args, directory=str(served), **kwargs)

        def log_message(self, *args):
            pass

    def publish(entries):
        (served / "index.yaml").write_text(yaml.safe_dump({"apiVersion": "v1", "entries": {"demo": entries}}))

    with serving(Handler) as port:
        config = tmp_path / "configs"
        (config / "charts" / "demo").mkdir(parents=True)
        recorded = {"index": f"http://127.0.0.1:{port}/index.yaml", "versions": [{"version": "1.2.3", "digest": "abc"}]}
        (config / "charts" / "demo" / "index.json").write_text(json.dumps(recorded))
        yield config, publish


CHART = Chart.model_validate({"repo": "x", "chart": "demo", "version": "1.2.3", "namespace": "demo"})


def test_a_pin_still_listed_with_its_digest_is_ok(chart_repository):
    config, publish = chart_repository
    publish([{"version": "1.2.3", "digest": "abc"}, {"version": "1.3.0", "digest": "def"}])
    assert check_chart(CHART, timeout=5, config_dir=config)[0] == "ok"


def test_a_pin_gone_from_the_index_or_rebuilt_is_reported(chart_repository):
    config, publish = chart_repository
    publish([{"version": "1.3.0", "digest": "def"}])
    status, detail = check_chart(CHART, timeout=5, config_dir=config)
    assert status == "missing" and "1.2.3 is not in" in detail
    publish([{"version": "1.2.3", "digest": "changed"}])
    assert check_chart(CHART, timeout=5, config_dir=config)[0] == "changed"
