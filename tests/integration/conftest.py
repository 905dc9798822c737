from pathlib import Path

import pytest

from tests.tools.wheels import build_wheel


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if "/integration/" in str(item.fspath):
            item.add_marker(pytest.mark.integration)


@pytest.fixture(scope="session")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """mm2gov's wheel, built once per session the way a release is (tests/tools/wheels.py)."""
    return build_wheel(tmp_path_factory.mktemp("dist"))
