"""Assemble the real-package corpus: sdists from PyPI and npm tarballs, unpacked.

    python bench/real_packages/fetch.py [--out DIR]

Downloads with the ordinary clients (``pip download --no-deps --no-binary :all:``,
``npm pack``) the pinned packages of :data:`PYPI` and :data:`NPM` into ``DIR`` (default
``$KGBUILD_CI_CACHE/real-packages`` or ``~/.cache/kgbuild-ci/real-packages``, outside the
repository) and unpacks each into ``DIR/corpus/pypi/<name>-<version>/`` or
``DIR/corpus/npm/<name>-<version>/`` (a scope's ``/`` as ``__``). Only the manifests kgbuild
reads are kept (``pyproject.toml``, ``setup.cfg``, ``requirements*.txt``, an sdist's top-level
``PKG-INFO``, ``package.json``, lock files). Already unpacked packages are not fetched
again; every client call has a time limit. Prints the corpus folder.
"""

from __future__ import annotations

import argparse
import fnmatch
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path

PYPI = ["requests==2.32.3", "httpx==0.27.2", "flask==3.0.3", "click==8.1.7", "jinja2==3.1.4",
        "werkzeug==3.0.4", "pymysql==1.1.1", "attrs==24.2.0", "rich==13.9.2", "urllib3==2.2.3",
        "celery==5.4.0", "kombu==5.4.2", "vine==5.1.0", "devtools==0.12.2", "starlette==0.38.6",
        "fastapi==0.115.0"]
NPM = ["debug@4.3.7", "@types/debug@4.1.12", "ms@2.1.3", "cors@2.8.5", "@babel/core@7.25.2",
       "vite@5.4.8", "@vitejs/plugin-react@4.3.2", "express@4.21.0", "axios@1.7.7",
       "chalk@5.3.0", "commander@12.1.0", "lodash@4.17.21", "@types/lodash@4.17.10",
       "react@18.3.1", "@types/react@18.3.11", "eslint@9.12.0"]
KEEP = ("pyproject.toml", "setup.cfg", "requirements*.txt", "*requirements.txt", "package.json",
        "package-lock.json", "npm-shrinkwrap.json")
TIMEOUT = 300  # seconds per client call
MAX_MEMBER_BYTES = 5 * 1024 * 1024  # a kept manifest larger than this is skipped


def default_out() -> Path:
    cache = os.environ.get("KGBUILD_CI_CACHE") or Path.home() / ".cache" / "kgbuild-ci"
    return Path(cache) / "real-packages"


def _unpack(archive: Path, dest: Path, strip: int = 1) -> int:
    """Extract the manifests of a .tar.gz/.tgz into ``dest``, dropping the first ``strip``
    path parts; returns how many were kept."""
    kept = 0
    with tarfile.open(archive) as tar:
        for member in tar.getmembers():
            parts = Path(member.name).parts[strip:]
            if (not member.isfile() or not parts or ".." in parts or member.size > MAX_MEMBER_BYTES
                    or not (any(fnmatch.fnmatch(parts[-1], k) for k in KEEP)
                            or parts == ("PKG-INFO",))
                    or "node_modules" in parts):
                continue
            target = dest.joinpath(*parts)
            target.parent.mkdir(parents=True, exist_ok=True)
            with tar.extractfile(member) as src, open(target, "wb") as out:
                shutil.copyfileobj(src, out)
            kept += 1
    return kept


def _run(cmd: list[str], cwd: Path) -> bool:
    try:
        done = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, timeout=TIMEOUT,
                              stdin=subprocess.DEVNULL)
    except (OSError, subprocess.TimeoutExpired) as exc:
        print(f"  failed: {' '.join(cmd)}: {exc}", file=sys.stderr)
        return False
    if done.returncode:
        print(f"  failed: {' '.join(cmd)}: {done.stderr.strip().splitlines()[-1:]}", file=sys.stderr)
    return done.returncode == 0


def fetch(out: Path) -> Path:
    corpus = out / "corpus"
    for spec in PYPI:
        name, version = spec.split("==")
        dest = corpus / "pypi" / f"{name}-{version}"
        if dest.is_dir():
            continue
        with tempfile.TemporaryDirectory() as tmp:
            if _run([sys.executable, "-m", "pip", "download", "--no-deps", "--no-binary", ":all:",
                     "--disable-pip-version-check", "-q", "-d", tmp, spec], Path(tmp)):
                (archive,) = [p for p in Path(tmp).iterdir() if p.name.endswith(".tar.gz")]
                print(f"{spec}: {_unpack(archive, dest)} manifest(s)")
    for spec in NPM:
        name, _, version = spec.rpartition("@")
        dest = corpus / "npm" / f"{name.replace('/', '__')}-{version}"
        if dest.is_dir():
            continue
        with tempfile.TemporaryDirectory() as tmp:
            if _run(["npm", "pack", "--silent", spec], Path(tmp)):
                (archive,) = [p for p in Path(tmp).iterdir() if p.name.endswith(".tgz")]
                print(f"{spec}: {_unpack(archive, dest)} manifest(s)")
    return corpus


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", type=Path, default=default_out(), help="download folder (default: %(default)s)")
    print(fetch(ap.parse_args().out))


if __name__ == "__main__":
    main()
