"""The image recipe and the manifests name the same versions as the rest of the project.

image/Dockerfile pins opa and Spark with build arguments, and k8s/ names the image by tag: when
versions.env, pyproject.toml or the package version move, these must move with them, or the
image would carry another opa than the one the tests ran, or the manifests another mm2gov.
(What the image's install steps produce is tested by running them: test_image_install.py.)
"""

from __future__ import annotations

import re
import tomllib

import yaml

from governance.tools import versions
from tests.conftest import REPO_ROOT

DOCKERFILE = (REPO_ROOT / "image" / "Dockerfile").read_text()
PYPROJECT = tomllib.loads((REPO_ROOT / "pyproject.toml").read_text())


def _arg(name: str) -> str:
    match = re.search(rf"^ARG {name}=(\S+)$", DOCKERFILE, re.M)
    assert match, f"image/Dockerfile has no default for ARG {name}"
    return match.group(1)


def _containers() -> list[dict]:
    found = []
    for path in sorted((REPO_ROOT / "k8s").rglob("*.yaml")):
        for doc in yaml.safe_load_all(path.read_text()):
            spec = (doc or {}).get("spec", {})
            pod = spec.get("template", {}).get("spec") or spec.get("jobTemplate", {}).get("spec", {}).get(
                "template", {}).get("spec")
            found += [{**c, "_file": path.name} for c in (pod or {}).get("containers", [])]
    return found


def test_the_image_pins_what_the_project_pins() -> None:
    assert "v" + _arg("OPA_VERSION") == versions()["OPA_VERSION"]
    (pyspark,) = [req for req in PYPROJECT["project"]["optional-dependencies"]["audit"] if req.startswith("pyspark")]
    assert pyspark == f"pyspark=={_arg('SPARK_VERSION')}"
    python = re.match(r"python:(\d+\.\d+)", _arg("PYTHON_IMAGE"))
    assert python and PYPROJECT["project"]["requires-python"] == f">={python.group(1)}"


def test_the_image_runs_the_install_script_and_its_launcher() -> None:
    assert "COPY image/install.sh" in DOCKERFILE and "bash /tmp/build/install.sh --prefix /opt/mm2gov" in DOCKERFILE
    assert 'ENTRYPOINT ["/opt/mm2gov/bin/mm2gov"]' in DOCKERFILE
    assert re.search(r"^USER 65532:65532$", DOCKERFILE, re.M)


def test_the_manifests_run_this_version_of_the_image() -> None:
    containers = _containers()
    ours = [c for c in containers if c["image"].startswith("ghcr.io/mm2gov/mm2gov:")]
    assert {c["_file"] for c in ours} == {"deployment.yaml", "cronjob.yaml"}
    assert {c["image"] for c in ours} == {f"ghcr.io/mm2gov/mm2gov:{PYPROJECT['project']['version']}"}
    assert all(c.get("securityContext", {}).get("readOnlyRootFilesystem") for c in ours)
    sidecars = [c for c in containers if c["image"].startswith("openpolicyagent/opa:")]
    assert [c["image"] for c in sidecars] == [f"openpolicyagent/opa:{_arg('OPA_VERSION')}-static"]

