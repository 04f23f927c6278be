"""docker/ca/: the CA bundle reaches the build steps over HTTP (bundle.py serve, with-bundle.sh).
docker/smoke.sh runs it on a real engine."""

import importlib.util
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest

from loadtest.lab.paths import REPOSITORY_ROOT

CA_DIR = REPOSITORY_ROOT / "docker" / "ca"
BUNDLE_SCRIPT = CA_DIR / "bundle.py"
WITH_BUNDLE = CA_DIR / "with-bundle.sh"
DOCKERFILE = REPOSITORY_ROOT / "docker" / "Dockerfile"


def load_bundle_module() -> ModuleType:
    spec = importlib.util.spec_from_file_location("lab_ca_bundle", BUNDLE_SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up
    spec.loader.exec_module(module)
    return module


bundle = load_bundle_module()


def certificate_pem() -> bytes:
    """Two real certificates, the first two of the machine's bundle: any would do."""
    for path in ("/etc/ssl/certs/ca-certificates.crt", "/etc/ssl/cert.pem"):
        if Path(path).exists():
            blocks = re.findall(
                rb"-----BEGIN CERTIFICATE-----.+?-----END CERTIFICATE-----\n",
                Path(path).read_bytes(),
                re.DOTALL,
            )
            if len(blocks) >= 2:
                return b"".join(blocks[:2])
    pytest.skip("no system CA bundle to take two certificates from")


def run_sh(command: str, **environment: str) -> subprocess.CompletedProcess[str]:
    clean = {
        key: value
        for key, value in os.environ.items()
        if key not in ("SSL_CERT_FILE", "PIP_CERT", "LAB_CA_URL")
    }
    return subprocess.run(
        ["sh", "-c", command], capture_output=True, text=True, env=clean | environment, timeout=60
    )


# --- the Dockerfile ----------------------------------------------------------------------------


def test_every_step_that_reaches_pypi_borrows_the_bundle_and_no_step_copies_one() -> None:
    text = re.sub(r"\\\n\s*", " ", DOCKERFILE.read_text())
    runs = [line for line in text.splitlines() if line.startswith("RUN ")]
    reaching = [run for run in runs if "pip install" in run or "uv sync" in run]
    assert len(reaching) == 2
    assert all("/lab-ca/with-bundle.sh " in run for run in reaching)
    copies = [line for line in text.splitlines() if line.startswith("COPY ") and "ca" in line]
    assert copies == ["COPY docker/ca/with-bundle.sh /lab-ca/with-bundle.sh"]
    assert "ARG LAB_CA_URL=" in text.splitlines()
    # The later stages, whose images are the final ones, never see the address either.
    runtime = text[text.index("AS runtime") :]
    assert "LAB_CA_URL" not in runtime and "with-bundle" not in runtime


# --- with-bundle.sh and serve ------------------------------------------------------------------


def test_without_an_address_the_step_keeps_the_base_images_trust() -> None:
    answer = run_sh(f"{WITH_BUNDLE} sh -c 'echo \"${{SSL_CERT_FILE:-none}}\"'", LAB_CA_URL="")
    assert (answer.returncode, answer.stdout.strip()) == (0, "none")


def test_a_served_bundle_is_trusted_for_the_command_alone_and_deleted(tmp_path: Path) -> None:
    pem = certificate_pem()
    (tmp_path / "bundle.pem").write_bytes(pem)
    show = (
        f'{WITH_BUNDLE} sh -c \'cat "$SSL_CERT_FILE" > {tmp_path}/seen.pem; '
        f'echo "$SSL_CERT_FILE" > {tmp_path}/where; [ "$PIP_CERT" = "$SSL_CERT_FILE" ]\''
    )
    answer = run_sh(
        f"{sys.executable} {BUNDLE_SCRIPT} serve --host 127.0.0.1 {tmp_path}/bundle.pem -- "
        f"sh -c {shlex.quote(show)}"
    )
    assert answer.returncode == 0, answer.stderr
    assert (tmp_path / "seen.pem").read_bytes() == pem
    assert not Path((tmp_path / "where").read_text().strip()).exists()  # gone with the step
    last = answer.stderr.strip().splitlines()[-1]
    assert re.fullmatch(
        rf"bundle\.py serve: {tmp_path}/bundle\.pem fetched 1 times from "
        r"http://127\.0\.0\.1:\d+/ca-bundle\.pem, which no longer answers",
        last,
    )


def test_a_failing_command_keeps_its_status_and_loses_the_bundle(tmp_path: Path) -> None:
    (tmp_path / "bundle.pem").write_bytes(certificate_pem())
    show = f"{WITH_BUNDLE} sh -c 'echo \"$SSL_CERT_FILE\" > {tmp_path}/where; exit 3'"
    answer = run_sh(
        f"{sys.executable} {BUNDLE_SCRIPT} serve --host 127.0.0.1 {tmp_path}/bundle.pem -- "
        f"sh -c {shlex.quote(show)}"
    )
    assert answer.returncode == 3
    assert not Path((tmp_path / "where").read_text().strip()).exists()


def test_an_address_nobody_serves_fails_the_step_in_one_line() -> None:
    answer = run_sh(f"{WITH_BUNDLE} true", LAB_CA_URL="http://127.0.0.1:9/ca-bundle.pem")
    assert answer.returncode == 1
    assert answer.stderr.strip().count("\n") == 0
    assert answer.stderr.startswith(
        "with-bundle.sh: cannot fetch the CA bundle from LAB_CA_URL=http://127.0.0.1:9/"
    )


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (
            b"-----BEGIN PRIVATE KEY-----\nAAAA\n",
            "holds a private key: it is not a CA bundle, and is not served",
        ),
        (b"not a certificate\n", "holds no PEM certificate: it is not a CA bundle"),
    ],
)
def test_serve_refuses_what_is_not_a_ca_bundle(
    tmp_path: Path, content: bytes, message: str
) -> None:
    (tmp_path / "bundle.pem").write_bytes(content)
    answer = run_sh(f"{sys.executable} {BUNDLE_SCRIPT} serve {tmp_path}/bundle.pem -- true")
    assert answer.returncode == 1
    assert answer.stderr.strip() == f"bundle.py serve: {tmp_path}/bundle.pem {message}"
