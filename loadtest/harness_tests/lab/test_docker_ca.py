"""docker/ca/: the CA bundle reaches the build steps over HTTP (bundle.py serve, with-bundle.sh)
and no layer holds it (bundle.py check-layers). docker/smoke.sh runs both on a real engine."""

import gzip
import hashlib
import importlib.util
import io
import json
import os
import re
import shlex
import ssl
import subprocess
import sys
import tarfile
from pathlib import Path
from types import ModuleType

import pytest

from loadtest.lab.paths import REPOSITORY_ROOT

CA_DIR = REPOSITORY_ROOT / "docker" / "ca"
BUNDLE_SCRIPT = CA_DIR / "bundle.py"
WITH_BUNDLE = CA_DIR / "with-bundle.sh"
DOCKERFILE = REPOSITORY_ROOT / "docker" / "Dockerfile"
CONFIG = "c0ffee" * 10 + "c0ff.json"  # an image's configuration in `docker save`, named by its id


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


# --- check-layers ------------------------------------------------------------------------------


def add(archive: tarfile.TarFile, name: str, data: bytes) -> None:
    info = tarfile.TarInfo(name)
    info.size = len(data)
    archive.addfile(info, io.BytesIO(data))


def layer(files: dict[str, bytes]) -> bytes:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w") as archive:
        for name, data in files.items():
            add(archive, name, data)
    return buffer.getvalue()


def saved_image(layers: list[tuple[str, bytes]], tag: str = "lab:test") -> io.BytesIO:
    """What `docker save` writes (the legacy layout Docker 20.10 writes): a folder per layer
    with its layer.tar, the image's configuration, and manifest.json naming both."""
    buffer = io.BytesIO()
    history = [{"created_by": f"/bin/sh -c {step}"} for step, _ in layers]
    history.insert(1, {"created_by": "/bin/sh -c #(nop)  LABEL a=b", "empty_layer": True})
    with tarfile.open(fileobj=buffer, mode="w") as archive:
        for index, (_, data) in enumerate(layers):
            add(archive, f"{index:064x}/layer.tar", data)
        add(archive, CONFIG, json.dumps({"history": history}).encode())
        manifest = [
            {
                "Config": CONFIG,
                "RepoTags": [tag] if tag else None,
                "Layers": [f"{index:064x}/layer.tar" for index in range(len(layers))],
            }
        ]
        add(archive, "manifest.json", json.dumps(manifest).encode())
    buffer.seek(0)
    return buffer


def test_a_certificate_is_found_in_the_layer_that_holds_it_and_named() -> None:
    pem = certificate_pem()
    certificates = bundle.read_certificates(pem)
    image = saved_image(
        [
            ("#(nop) ADD file:" + "a" * 64 + " in / ", layer({"etc/os-release": b"debian\n"})),
            ("pip install uv", layer({"usr/bin/uv": b"\x7fELF" + bytes(4096)})),
            ("cp /tmp/b.pem /lab/leak.pem", layer({"lab/leak.pem": b"# a copy\r\n" + pem})),
        ]
    )
    hits, small = bundle.scan_archive(image, certificates)
    assert {hit.certificate.number for hit in hits} == {1, 2}
    assert {hit.member for hit in hits} == {f"{2:064x}/layer.tar"}
    names = bundle.layer_names(small, {})
    assert names[hits[0].member] == [
        "lab:test: layer 3 of 3, made by `cp /tmp/b.pem /lab/leak.pem`"
    ]
    assert names[f"{0:064x}/layer.tar"] == [
        "lab:test: layer 1 of 3, made by `ADD file:aaaaaaaaaaaa… in /`"
    ]


def test_an_image_saved_by_its_id_is_named_by_its_id_and_stage() -> None:
    """`docker save ID` leaves the tags out of the archive; the smoke run saves the build
    stage's untagged images by id."""
    pem = certificate_pem()
    image = saved_image([("cp /tmp/b.pem /x.pem", layer({"x.pem": pem}))], tag="")
    hits, small = bundle.scan_archive(image, bundle.read_certificates(pem))
    titles = {"c0ffee" * 10 + "c0ff": "untagged image c0ffeec0ffee (stage build)"}
    assert bundle.layer_names(small, titles)[hits[0].member] == [
        "untagged image c0ffeec0ffee (stage build): layer 1 of 1, made by `cp /tmp/b.pem /x.pem`"
    ]


def test_a_bundle_in_a_configuration_as_json_text_is_found_too() -> None:
    """A bundle passed as a build argument lands in the image's history, newlines as \\n."""
    pem = certificate_pem()
    certificates = bundle.read_certificates(pem)
    config = json.dumps({"history": [{"created_by": "ARG CA=" + pem.decode()}]}).encode()
    found = bundle.markers_in([config[:1000], config[1000:]], {c.marker for c in certificates})
    assert found == {certificate.marker for certificate in certificates}


def test_a_marker_split_across_reads_or_gzipped_is_still_found() -> None:
    pem = certificate_pem()
    [first, *_] = bundle.read_certificates(pem)
    at = pem.index(first.marker) + 10
    assert bundle.markers_in([pem[:at], pem[at:]], {first.marker}) == {first.marker}
    packed = io.BytesIO(gzip.compress(layer({"a.pem": pem})))
    assert bundle.markers_in(bundle.contents(packed, "gz"), {first.marker}) == {first.marker}


def test_no_layer_without_the_bundle_is_blamed() -> None:
    certificates = bundle.read_certificates(certificate_pem())
    image = saved_image([("true", layer({"a": b"line\n" * 1000, "b": bytes(3 << 20)}))])
    assert bundle.scan_archive(image, certificates)[0] == []


def test_each_certificate_is_named_by_its_number_and_fingerprint() -> None:
    pem = certificate_pem()
    certificates = bundle.read_certificates(pem)
    assert [certificate.number for certificate in certificates] == [1, 2]
    first = pem[: pem.index(b"-----END CERTIFICATE-----\n") + 26]
    digest = hashlib.sha256(ssl.PEM_cert_to_DER_cert(first.decode())).hexdigest().upper()
    assert certificates[0].fingerprint.replace(":", "") == digest
    assert all(len(certificate.marker) == 64 for certificate in certificates)
