"""`make check-versions`: are the pinned chart versions still in their repositories' live indexes?

vendor/charts/<chart>/index.json records what each index listed when the pin was chosen (the
offline tests check pins against it). This reads the live indexes again, over the network, and
says for each chart: ok (listed, same digest), changed (listed with another digest), missing, or
unreachable. Each Dynamo release's dynamo-platform chart is downloaded from NGC's Helm repository
(what `pulumi up` installs from) and every value the program sets for that release is checked
against the chart's own values: several releases' values could only be read from an older or
untagged source (configs/dynamo/versions.yaml `unverified`). Only value paths are checked, not the
chart's own validate-values rules. Every runtime and EFA image of the table is looked up in its registry (an
anonymous pull token, as `docker pull` gets one). The EKS add-on builds (listed per account by the
EKS API) are named with the command that checks them.
Exit 1 when a pin or an image is missing, a digest changed, or a chart does not declare a value the
program sets; 0 otherwise (unreachable is reported, not failed).
"""

from __future__ import annotations

import argparse
import io
import json
import re
import sys
import tarfile
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path
from typing import Any

from gpt_oss_infra.core.dynamo import CHART, DynamoVersion, merged_chart_defaults, undeclared_values
from gpt_oss_infra.core.inputs.catalog import Chart, load_catalog
from gpt_oss_infra.core.inputs.config import PlatformConfig
from gpt_oss_infra.core.paths import VENDOR_DIR
from gpt_oss_infra.core.render.platform import platform_values
from gpt_oss_infra.core.yaml_files import load_yaml


def live_versions(index_url: str, chart: str, timeout: float) -> dict[str, str]:
    """version -> digest, as the repository's index.yaml lists them now."""
    with urllib.request.urlopen(index_url, timeout=timeout) as response:
        index = load_yaml(response.read())
    return {entry["version"]: entry.get("digest", "") for entry in index.get("entries", {}).get(chart, [])}


def check_chart(chart: Chart, timeout: float, vendor_dir: Path = VENDOR_DIR) -> tuple[str, str]:
    recorded = json.loads((vendor_dir / "charts" / chart.chart / "index.json").read_text())
    if recorded["index"] is None:  # an OCI registry lists no index; index.json says where its versions came from
        return "by hand", f"helm show chart {chart.repo}/{chart.chart} --version {chart.version} (OCI: no index)"
    digest = next(entry["digest"] for entry in recorded["versions"] if entry["version"] == chart.version)
    try:
        versions = live_versions(recorded["index"], chart.chart, timeout)
    except OSError as error:
        return "unreachable", f"{recorded['index']}: {error}"
    if chart.version not in versions:
        return "missing", f"{chart.version} is not in {recorded['index']} any more"
    if not digest:  # index.json could only list versions (kube-prometheus-stack: its index was not readable)
        return (
            "unrecorded",
            f"{chart.version} listed in {recorded['index']}: record its digest {versions[chart.version]}",
        )
    if versions[chart.version] != digest:
        return "changed", f"{chart.version} now has digest {versions[chart.version]}, recorded {digest}"
    return "ok", f"{chart.version} listed in {recorded['index']} with the recorded digest"


def chart_archive_defaults(archive: bytes) -> dict[str, Any]:
    """The default values of a packaged chart (`helm package`'s .tgz), its subcharts' merged in; a
    dependency is either a folder under charts/ or an archive there."""
    subcharts = {}
    with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
        files = {member.name: member for member in tar.getmembers() if member.isfile()}
        values = load_yaml(tar.extractfile(files[f"{CHART}/values.yaml"]).read()) or {}
        for name, member in files.items():
            parts = name.split("/")
            if len(parts) == 4 and parts[1] == "charts" and parts[3] == "values.yaml":
                subcharts[parts[2]] = load_yaml(tar.extractfile(member).read()) or {}
            elif len(parts) == 3 and parts[1] == "charts" and name.endswith(".tgz"):
                with tarfile.open(fileobj=io.BytesIO(tar.extractfile(member).read())) as inner:
                    top = inner.getnames()[0].split("/")[0]
                    subcharts[top] = load_yaml(inner.extractfile(f"{top}/values.yaml").read()) or {}
    return merged_chart_defaults(values, subcharts)


def values_the_program_sets(dynamo: DynamoVersion) -> list[dict[str, Any]]:
    """Every shape of the values the program renders for a release: NATS on and off (whose keys
    differ), with the NGC pull secret, Grove and the KAI scheduler switched on."""
    return [
        platform_values(PlatformConfig(nats=nats, grove=True, kaiScheduler=True), dynamo, "gp3", with_pull_secret=True)
        for nats in (True, False)
    ]


def check_dynamo_chart(dynamo: DynamoVersion, timeout: float, url: str | None = None) -> tuple[str, str]:
    """`url`: the chart package (default: the release's, in its repository)."""
    url = url or dynamo.chart_url
    try:
        with urllib.request.urlopen(url, timeout=timeout) as response:
            defaults = chart_archive_defaults(response.read())
    except urllib.error.HTTPError as error:
        if error.code == 404:  # NGC answered: this version is not published
            return "missing", f"{url} is not published (404)"
        return "unreachable", f"{url}: {error}"
    except OSError as error:
        return "unreachable", f"{url}: {error}"
    undeclared = sorted(
        {path for values in values_the_program_sets(dynamo) for path in undeclared_values(values, defaults)}
    )
    if undeclared:
        return "undeclared", f"{url} does not declare {', '.join(undeclared)}, which the program sets"
    return "ok", f"{url} declares every value the program sets"


# What a registry may answer for a tag: a multi-arch index or a single manifest, Docker's or OCI's.
MANIFEST_TYPES = ", ".join(
    [
        "application/vnd.oci.image.index.v1+json",
        "application/vnd.docker.distribution.manifest.list.v2+json",
        "application/vnd.oci.image.manifest.v1+json",
        "application/vnd.docker.distribution.manifest.v2+json",
    ]
)


def image_manifest_url(image: str, base: str | None = None) -> str:
    """The registry URL of an image's manifest (a Docker Hub name gets its library/ prefix)."""
    name, _, tag = image.rpartition(":") if "@" not in image else image.partition("@")
    first, _, rest = name.partition("/")
    if "." not in first and ":" not in first:  # Docker Hub
        first, rest = "registry-1.docker.io", name if "/" in name else f"library/{name}"
    return f"{base or f'https://{first}'}/v2/{rest}/manifests/{tag}"


def check_image(image: str, timeout: float, base: str | None = None) -> tuple[str, str]:
    """ok (the registry has the tag), missing (404), or unreachable. An anonymous pull token is asked
    for where the registry wants one (its WWW-Authenticate challenge)."""
    url = image_manifest_url(image, base)
    headers = {"Accept": MANIFEST_TYPES}
    for attempt in range(2):
        request = urllib.request.Request(url, method="HEAD", headers=headers)
        try:
            with urllib.request.urlopen(request, timeout=timeout):
                return "ok", f"{image} is published"
        except urllib.error.HTTPError as error:
            challenge = error.headers.get("WWW-Authenticate", "")
            if error.code == 401 and attempt == 0 and challenge.lower().startswith("bearer "):
                try:
                    headers["Authorization"] = f"Bearer {_anonymous_token(challenge, timeout)}"
                except OSError as token_error:
                    return "unreachable", f"{image}: no pull token: {token_error}"
                continue
            if error.code == 404:
                return "missing", f"{image} is not published ({url}: 404)"
            return "unreachable", f"{image}: {error}"
        except OSError as error:
            return "unreachable", f"{image}: {error}"
    return "unreachable", f"{image}: the registry refused an anonymous pull token"


def _anonymous_token(challenge: str, timeout: float) -> str:
    fields = dict(re.findall(r'(\w+)="([^"]*)"', challenge))
    query = urllib.parse.urlencode({key: fields[key] for key in ("service", "scope") if key in fields})
    with urllib.request.urlopen(f"{fields['realm']}?{query}", timeout=timeout) as response:
        answer = json.load(response)
    return answer.get("token") or answer["access_token"]


def release_images(dynamo: DynamoVersion) -> list[str]:
    efa = [image for images in dynamo.spec.efa_runtime_images.values() for image in images.values()]
    return sorted({*dynamo.spec.runtime_images.values(), *efa})


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--timeout", type=float, default=20.0, help="seconds to wait for each index (default: 20)")
    args = parser.parse_args(argv)
    catalog = load_catalog()
    failed = False
    for chart in catalog.charts.values():
        status, detail = check_chart(chart, args.timeout)
        failed |= status in ("missing", "changed")
        print(f"{status:<11} {chart.chart}: {detail}")
    for version, dynamo in catalog.dynamo_versions.items():
        status, detail = check_dynamo_chart(dynamo, args.timeout)
        failed |= status in ("missing", "undeclared")
        print(f"{status:<11} dynamo-platform {version}: {detail}")
        for image in release_images(dynamo):
            status, detail = check_image(image, args.timeout)
            failed |= status == "missing"
            print(f"{status:<11} Dynamo {version} image: {detail}")
    for kubernetes, pins in catalog.addon_versions.items():
        for addon, pin in pins.items():
            print(
                f"{'by hand':<11} EKS add-on {addon} {pin.version or '(EKS default)'} on {kubernetes}: "
                f"aws eks describe-addon-versions --kubernetes-version {kubernetes} --addon-name {addon}"
            )
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
