"""`make check-versions` (tools/check_versions.py): pinned charts against their repositories' live indexes."""

from __future__ import annotations

import io
import json
import tarfile
from http.server import BaseHTTPRequestHandler, SimpleHTTPRequestHandler
from pathlib import Path

import pytest
import yaml

from gpt_oss_infra.core.inputs.catalog import Chart
from gpt_oss_infra.core.paths import VENDOR_DIR
from gpt_oss_infra.tools.check_versions import check_chart, check_dynamo_chart, check_image, release_images
from tests.support import serving


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
        config = tmp_path / "vendor"
        (config / "charts" / "demo").mkdir(parents=True)
        recorded = {"index": f"http://127.0.0.1:{port}/index.yaml", "versions": [{"version": "1.2.3", "digest": "abc"}]}
        (config / "charts" / "demo" / "index.json").write_text(json.dumps(recorded))
        yield config, publish


CHART = Chart.model_validate({"repo": "x", "chart": "demo", "version": "1.2.3", "namespace": "demo"})


def test_a_pin_still_listed_with_its_digest_is_ok(chart_repository):
    config, publish = chart_repository
    publish([{"version": "1.2.3", "digest": "abc"}, {"version": "1.3.0", "digest": "def"}])
    assert check_chart(CHART, timeout=5, vendor_dir=config)[0] == "ok"


def test_a_pin_gone_from_the_index_or_rebuilt_is_reported(chart_repository):
    config, publish = chart_repository
    publish([{"version": "1.3.0", "digest": "def"}])
    status, detail = check_chart(CHART, timeout=5, vendor_dir=config)
    assert status == "missing" and "1.2.3 is not in" in detail
    publish([{"version": "1.2.3", "digest": "changed"}])
    assert check_chart(CHART, timeout=5, vendor_dir=config)[0] == "changed"


def _chart_archive(release_values: Path, operator_values: Path, nats_as_archive: bool) -> bytes:
    """A dynamo-platform chart packaged as `helm package` does, from vendored values: the operator a
    folder under charts/, NATS an archive there (both forms occur in published charts)."""
    out = io.BytesIO()
    with tarfile.open(fileobj=out, mode="w:gz") as tar:

        def add(name: str, data: bytes, into: tarfile.TarFile = tar) -> None:
            info = tarfile.TarInfo(name)
            info.size = len(data)
            into.addfile(info, io.BytesIO(data))

        add("dynamo-platform/Chart.yaml", b"apiVersion: v2\nname: dynamo-platform\nversion: 1.6.1\n")
        add("dynamo-platform/values.yaml", release_values.read_bytes())
        add("dynamo-platform/charts/dynamo-operator/values.yaml", operator_values.read_bytes())
        nats = (VENDOR_DIR / "dynamo" / "1.2.1" / "chart" / "charts" / "nats" / "values.yaml").read_bytes()
        if nats_as_archive:
            inner = io.BytesIO()
            with tarfile.open(fileobj=inner, mode="w:gz") as nats_tar:
                add("nats/values.yaml", nats, nats_tar)
            add("dynamo-platform/charts/nats-1.3.2.tgz", inner.getvalue())
        else:
            add("dynamo-platform/charts/nats/values.yaml", nats)
    return out.getvalue()


@pytest.fixture
def ngc(tmp_path):
    """A stand-in for NGC's chart downloads on 127.0.0.1, serving what a test puts in `tmp_path`."""

    class Handler(SimpleHTTPRequestHandler):
        def __init__(self, *args, **kwargs):
            super().__init__(*args, directory=str(tmp_path), **kwargs)

        def log_message(self, *args):
            pass

    with serving(Handler) as port:
        yield tmp_path, f"http://127.0.0.1:{port}"


FIXTURE = VENDOR_DIR / "dynamo" / "main-2026-08-21" / "chart"  # the values the 1.6.1 data was checked against


@pytest.mark.parametrize("nats_as_archive", [False, True])
def test_the_published_chart_declares_every_value_the_program_sets(catalog, ngc, nats_as_archive):
    served, base = ngc
    archive = _chart_archive(FIXTURE / "values.yaml", FIXTURE / "charts/dynamo-operator/values.yaml", nats_as_archive)
    (served / "dynamo-platform-1.6.1.tgz").write_bytes(archive)
    status, detail = check_dynamo_chart(
        catalog.dynamo_versions["1.6.1"], timeout=5, url=f"{base}/dynamo-platform-1.6.1.tgz"
    )
    assert (status, detail) == ("ok", f"{base}/dynamo-platform-1.6.1.tgz declares every value the program sets")


def test_a_published_chart_that_dropped_a_value_is_reported(catalog, ngc, tmp_path):
    """As if the real 1.6.1 chart no longer had upgradeCRD (the switch of who applies the CRDs)."""
    served, base = ngc
    values = yaml.safe_load((FIXTURE / "values.yaml").read_text())
    del values["dynamo-operator"]["upgradeCRD"]
    operator = yaml.safe_load((FIXTURE / "charts/dynamo-operator/values.yaml").read_text())
    del operator["upgradeCRD"]
    (tmp_path / "v.yaml").write_text(yaml.safe_dump(values))
    (tmp_path / "o.yaml").write_text(yaml.safe_dump(operator))
    (served / "dynamo-platform-1.6.1.tgz").write_bytes(_chart_archive(tmp_path / "v.yaml", tmp_path / "o.yaml", True))
    status, detail = check_dynamo_chart(
        catalog.dynamo_versions["1.6.1"], timeout=5, url=f"{base}/dynamo-platform-1.6.1.tgz"
    )
    assert status == "undeclared" and "does not declare dynamo-operator.upgradeCRD" in detail


def test_a_chart_version_ngc_does_not_publish_is_missing(catalog, ngc):
    _, base = ngc
    status, detail = check_dynamo_chart(
        catalog.dynamo_versions["1.6.1"], timeout=5, url=f"{base}/dynamo-platform-1.6.1.tgz"
    )  # nothing served
    assert (status, detail) == ("missing", f"{base}/dynamo-platform-1.6.1.tgz is not published (404)")


def test_an_unreachable_registry_is_reported_not_failed(catalog):
    with serving(SimpleHTTPRequestHandler) as port:
        pass  # a port that was just closed: nothing listens there
    status, detail = check_dynamo_chart(
        catalog.dynamo_versions["1.6.1"], timeout=5, url=f"http://127.0.0.1:{port}/dynamo-platform-1.6.1.tgz"
    )
    assert status == "unreachable" and "dynamo-platform-1.6.1.tgz" in detail


@pytest.fixture
def registry():
    """A stand-in OCI registry on 127.0.0.1 that, as nvcr.io does, answers 401 with a token challenge
    until a request brings the anonymous pull token its realm hands out."""
    published = {"/v2/nvidia/ai-dynamo/tensorrtllm-runtime/manifests/1.6.1"}

    class Handler(BaseHTTPRequestHandler):
        def do_HEAD(self):
            if self.headers.get("Authorization") != "Bearer anonymous-pull":
                realm = f"http://127.0.0.1:{self.server.server_port}/token"
                self.send_response(401)
                self.send_header("WWW-Authenticate", f'Bearer realm="{realm}",service="registry",scope="repo:pull"')
            else:
                self.send_response(200 if self.path in published else 404)
            self.end_headers()

        def do_GET(self):
            body = json.dumps({"token": "anonymous-pull"}).encode() if self.path.startswith("/token?") else b"{}"
            self.send_response(200 if self.path.startswith("/token?service=registry&scope=repo") else 404)
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args):
            pass

    with serving(Handler) as port:
        yield f"http://127.0.0.1:{port}"


def test_a_published_image_tag_is_found_with_an_anonymous_pull_token(registry):
    image = "nvcr.io/nvidia/ai-dynamo/tensorrtllm-runtime:1.6.1"
    assert check_image(image, timeout=5, base=registry) == ("ok", f"{image} is published")


def test_an_image_tag_the_registry_does_not_have_is_missing(registry):
    """As if NGC had no 1.6.1-efa tag (the table's unverified guess)."""
    status, detail = check_image("nvcr.io/nvidia/ai-dynamo/tensorrtllm-runtime:1.6.1-efa", timeout=5, base=registry)
    assert status == "missing" and detail.endswith("manifests/1.6.1-efa: 404)")


def test_every_runtime_and_efa_image_of_a_release_is_looked_up(catalog):
    assert release_images(catalog.dynamo_versions["1.6.1"]) == [
        "nvcr.io/nvidia/ai-dynamo/dynamo-planner:1.6.1",  # the mocker's
        "nvcr.io/nvidia/ai-dynamo/tensorrtllm-runtime:1.6.1",
        "nvcr.io/nvidia/ai-dynamo/tensorrtllm-runtime:1.6.1-efa",
    ]


def test_the_chart_is_read_where_pulumi_up_installs_it_from(catalog):
    """NGC's Helm repository (ChartMuseum), not the OCI path that answers 404 (ai-dynamo/dynamo #12372)."""
    assert catalog.dynamo_versions["1.6.1"].chart_url == (
        "https://helm.ngc.nvidia.com/nvidia/ai-dynamo/charts/dynamo-platform-1.6.1.tgz"
    )
