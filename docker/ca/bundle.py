#!/usr/bin/env python3
"""A CA bundle for the image builds, kept out of every image (docker/ca/README.md).

  bundle.py serve BUNDLE -- COMMAND...   serve BUNDLE to the builds COMMAND runs, then stop
  bundle.py url                          the address the builds fetch it from (LAB_CA_URL)
  bundle.py check-layers BUNDLE --base IMAGE IMAGE...
                                         fail if a layer of an IMAGE holds one of BUNDLE's
                                         certificates that the base image does not carry itself

docker/Dockerfile's steps that reach PyPI fetch the bundle from LAB_CA_URL, use it and delete it
within the same step (with-bundle.sh), so it is in no layer. It travels over HTTP from the
host's end of Docker's default bridge, the network both of Docker's builders (the legacy one,
which Compose 1.29 drives, and BuildKit) give a build step; a build secret would need BuildKit.
The server answers only while COMMAND runs and serves nothing but the bundle.
Standard library only: the smoke run calls it before any environment exists.
"""

import argparse
import base64
import fcntl
import hashlib
import http.server
import json
import os
import re
import signal
import socket
import struct
import subprocess
import sys
import tarfile
import threading
import zlib
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import IO

DEFAULT_PORT = 55480  # fixed, so the URL (a build argument, in the build cache's key) is too
URL_PATH = "/ca-bundle.pem"
PEM_BLOCK = re.compile(
    rb"-----BEGIN CERTIFICATE-----\s*(.+?)\s*-----END CERTIFICATE-----", re.DOTALL
)
CHUNK = 1 << 20
SMALL = 1 << 20  # manifest.json and the images' configurations are smaller
GZIP_MAGIC = b"\x1f\x8b"
ZSTD_MAGIC = b"\x28\xb5\x2f\xfd"


class BundleError(Exception):
    """One line for the user; the command exits 1 with it."""


# --- the bundle's certificates -----------------------------------------------------------------


@dataclass(frozen=True)
class Certificate:
    number: int  # 1-based, in the bundle's order
    fingerprint: str  # SHA-256 of the DER form, as `openssl x509 -fingerprint -sha256` prints it
    marker: bytes  # one full base64 line of its signature: these bytes wherever its PEM is

    def describe(self) -> str:
        return f"certificate {self.number} (SHA-256 {self.fingerprint[:23]}…)"


def read_certificates(pem: bytes) -> list[Certificate]:
    certificates = []
    for number, match in enumerate(PEM_BLOCK.finditer(pem), start=1):
        lines = match.group(1).split()
        body = b"".join(lines)
        digest = hashlib.sha256(base64.b64decode(body)).hexdigest().upper()
        fingerprint = ":".join(digest[i : i + 2] for i in range(0, len(digest), 2))
        # The last full line sits in the signature, unique to this certificate; a PEM file
        # holding it has this line whatever its line endings.
        full = [line for line in lines if len(line) == 64] or [max(lines, key=len)]
        certificates.append(Certificate(number, fingerprint, full[-1]))
    return certificates


def load_bundle(path: str) -> bytes:
    try:
        with open(path, "rb") as file:
            pem = file.read()
    except OSError as error:
        raise BundleError(f"cannot read the CA bundle {path}: {error.strerror}") from None
    if b"PRIVATE KEY" in pem:
        raise BundleError(f"{path} holds a private key: it is not a CA bundle, and is not served")
    if not PEM_BLOCK.search(pem):
        raise BundleError(f"{path} holds no PEM certificate: it is not a CA bundle")
    return pem


# --- serve and url -----------------------------------------------------------------------------


def bridge_address() -> str:
    """The host's address on Docker's default bridge (docker0), which a build step reaches."""
    try:
        answer = subprocess.run(
            ["docker", "network", "inspect", "bridge", "--format", "{{json .}}"],
            capture_output=True,
            text=True,
            timeout=30,
        )
    except (OSError, subprocess.TimeoutExpired) as error:
        raise BundleError(f"cannot ask docker for its bridge network: {error}") from None
    if answer.returncode != 0:
        raise BundleError(f"docker network inspect bridge failed: {answer.stderr.strip()}")
    network = json.loads(answer.stdout)
    for config in (network.get("IPAM") or {}).get("Config") or []:
        if config.get("Gateway"):
            return str(config["Gateway"])
    # The default bridge often leaves its gateway out: it is the bridge interface's address.
    interface = (network.get("Options") or {}).get("com.docker.network.bridge.name", "docker0")
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
        try:
            request = struct.pack("256s", interface.encode()[:15])
            answer_bytes = fcntl.ioctl(probe.fileno(), 0x8915, request)  # SIOCGIFADDR
        except OSError as error:
            raise BundleError(f"no IPv4 address on {interface}: {error.strerror}") from None
    return socket.inet_ntoa(answer_bytes[20:24])


def bundle_address() -> tuple[str, int]:
    port = os.environ.get("LAB_CA_PORT", str(DEFAULT_PORT))
    if not port.isdigit() or not 0 < int(port) < 65536:
        raise BundleError(f"LAB_CA_PORT={port} is not a port number")
    return bridge_address(), int(port)


def url_of(host: str, port: int) -> str:
    return f"http://{host}:{port}{URL_PATH}"


class BundleServer(http.server.ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, address: tuple[str, int], pem: bytes) -> None:
        self.pem = pem
        self.fetches = 0
        try:
            super().__init__(address, BundleHandler)
        except OSError as error:
            raise BundleError(
                f"cannot serve the CA bundle on {address[0]}:{address[1]}: {error.strerror} "
                "(LAB_CA_PORT picks another port)"
            ) from None


class BundleHandler(http.server.BaseHTTPRequestHandler):
    server: BundleServer

    def do_GET(self) -> None:
        if self.path != URL_PATH:
            self.send_error(404)
            return
        self.server.fetches += 1
        self.send_response(200)
        self.send_header("Content-Type", "application/x-pem-file")
        self.send_header("Content-Length", str(len(self.server.pem)))
        self.end_headers()
        self.wfile.write(self.server.pem)

    def log_message(self, format: str, *args: object) -> None:
        pass  # the fetches are counted, and said once at the end


def cmd_serve(options: argparse.Namespace) -> int:
    if not options.command:
        raise BundleError("no command after -- (bundle.py serve BUNDLE -- COMMAND...)")
    pem = load_bundle(options.bundle)
    host, port = (options.host, 0) if options.host else bundle_address()
    with BundleServer((host, port), pem) as server:
        url = url_of(host, server.server_address[1])
        threading.Thread(target=server.serve_forever, daemon=True).start()
        # A Ctrl-C reaches COMMAND itself (same process group); this waits for it to end.
        previous = signal.signal(signal.SIGINT, signal.SIG_IGN)
        try:
            status = subprocess.run(
                options.command, env={**os.environ, "LAB_CA_URL": url}, check=False
            ).returncode
        except OSError as error:
            raise BundleError(f"cannot run {options.command[0]}: {error.strerror}") from None
        finally:
            signal.signal(signal.SIGINT, previous)
            server.shutdown()
    print(
        f"bundle.py serve: {options.bundle} fetched {server.fetches} times from {url}, "
        "which no longer answers",
        file=sys.stderr,
    )
    return status if status >= 0 else 128 - status


def cmd_url(options: argparse.Namespace) -> int:
    print(url_of(*bundle_address()))
    return 0


# --- check-layers ------------------------------------------------------------------------------


@dataclass(frozen=True)
class Hit:
    member: str  # the layer's file in `docker save`'s archive
    certificate: Certificate


def scan_archive(archive: IO[bytes], certificates: list[Certificate]) -> tuple[list[Hit], dict]:
    """Search every file of a `docker save` stream (each layer's tar, and the images'
    configurations) for the certificates' markers. Returns the hits, and the archive's small
    files (manifest.json and the configurations it names) to say which image and step a layer
    is."""
    by_marker = {certificate.marker: certificate for certificate in certificates}
    hits: list[Hit] = []
    small: dict[str, bytes] = {}
    with tarfile.open(fileobj=archive, mode="r|") as stream:
        for member in stream:
            file = stream.extractfile(member) if member.isfile() else None
            if file is None:
                continue
            chunks = contents(file, member.name)
            if member.size < SMALL:
                small[member.name] = b"".join(chunks)
                chunks = iter([small[member.name]])
            found = markers_in(chunks, set(by_marker))
            hits += [Hit(member.name, by_marker[marker]) for marker in sorted(found)]
    return hits, small


def markers_in(chunks: Iterable[bytes], markers: set[bytes]) -> set[bytes]:
    """The markers that are a whole line of the data: a PEM line ends in \\n or \\r\\n, or, in
    JSON text (an image's configuration), in the two characters \\n. Splitting into lines reads
    several hundred MB a second, and the markers are looked up, not searched for, one by one."""
    lengths = {len(marker) for marker in markers}
    longest = max(lengths)
    found: set[bytes] = set()

    def look(line: bytes) -> None:
        line = line.removesuffix(b"\r")
        if len(line) in lengths:
            if line in markers:
                found.add(line)
        elif len(line) > longest and b"\\n" in line:
            found.update(markers.intersection(line.split(b"\\n")))

    rest = b""
    for chunk in chunks:
        lines = (rest + chunk).split(b"\n")
        rest = lines.pop()[-SMALL:]  # a line longer than that holds no marker as a whole line
        for line in lines:
            look(line)
    look(rest)
    return found


def contents(file: IO[bytes], name: str) -> Iterator[bytes]:
    """A file of the archive as it reads, a gzip-compressed layer (an engine that keeps its
    layers compressed saves them so) uncompressed."""
    first = file.read(CHUNK)
    if first.startswith(ZSTD_MAGIC):
        raise BundleError(f"{name} is a zstd-compressed layer, which this check cannot read")
    if not first.startswith(GZIP_MAGIC):
        yield first
        while chunk := file.read(CHUNK):
            yield chunk
        return
    gunzip = zlib.decompressobj(wbits=31)
    while first:
        yield gunzip.decompress(first)
        first = file.read(CHUNK)
    yield gunzip.flush()


def layer_names(small: dict[str, bytes], titles: dict[str, str]) -> dict[str, list[str]]:
    """Each layer's file -> how the archive's images name it: 'IMAGE: layer K of N, made by
    STEP'. manifest.json lists each image's layers; its configuration's history, the steps
    that made a layer (the steps that made none are marked empty_layer). An image saved by its
    id has no tags in the archive: `titles` (image_titles) names it by its id."""
    names: dict[str, list[str]] = {}
    for image in json.loads(small.get("manifest.json", b"[]")):
        config = json.loads(small.get(image["Config"], b"{}"))
        steps = [
            step.get("created_by", "?")
            for step in config.get("history", [])
            if not step.get("empty_layer")
        ]
        digest = re.search(r"[0-9a-f]{64}", image["Config"])
        title = ", ".join(image.get("RepoTags") or []) or titles.get(
            digest.group(0) if digest else "", f"image {image['Config']}"
        )
        layers = image["Layers"]
        for index, layer in enumerate(layers):
            step = steps[index] if len(steps) == len(layers) else "?"
            step = re.sub(r"^/bin/sh -c (#\(nop\) )?", "", " ".join(step.split()))
            step = re.sub(r"\b(file|dir):([0-9a-f]{12})[0-9a-f]{52}\b", r"\1:\2…", step)
            step = step if len(step) <= 100 else step[:99] + "…"
            names.setdefault(layer, []).append(
                f"{title}: layer {index + 1} of {len(layers)}, made by `{step}`"
            )
    return names


def image_titles(images: list[str]) -> dict[str, str]:
    """Image id -> its tags, or for an untagged one (the legacy builder keeps the build stage's
    image so) its short id and the stage its label names."""
    answer = subprocess.run(["docker", "image", "inspect", *images], capture_output=True)
    titles = {}
    for image in json.loads(answer.stdout or b"[]"):
        digest = image["Id"].removeprefix("sha256:")
        stage = ((image.get("Config") or {}).get("Labels") or {}).get("pydantic-lab.stage")
        titles[digest] = ", ".join(image.get("RepoTags") or []) or (
            f"untagged image {digest[:12]}" + (f" (stage {stage})" if stage else "")
        )
    return titles


def scan_images(images: list[str], certificates: list[Certificate]) -> tuple[list[Hit], dict]:
    process = subprocess.Popen(["docker", "save", *images], stdout=subprocess.PIPE)
    assert process.stdout is not None
    try:
        hits, small = scan_archive(process.stdout, certificates)
    except tarfile.TarError as error:
        process.kill()
        raise BundleError(f"docker save {' '.join(images)}: not an archive ({error})") from None
    finally:
        process.stdout.close()
    if process.wait() != 0:
        raise BundleError(f"docker save {' '.join(images)} failed")
    return hits, small


def cmd_check_layers(options: argparse.Namespace) -> int:
    certificates = read_certificates(load_bundle(options.bundle))
    # Certificates the base image carries itself (its own trust store, pip's certifi) are
    # public roots: every image has them. The bundle's others are what a leak would show.
    in_base, _ = scan_images(options.base, certificates)
    carried = {hit.certificate for hit in in_base}
    extra = [certificate for certificate in certificates if certificate not in carried]
    if not extra:
        print(
            f"the CA bundle {options.bundle} adds no certificate to those of {options.base[0]}: "
            "nothing to look for in the layers"
        )
        return 0
    hits, small = scan_images(options.images, extra)
    names = layer_names(small, image_titles(options.images))
    if hits:
        first = hits[0]
        where = names.get(first.member, [f"file {first.member} of the saved images"])[0]
        layers = len({hit.member for hit in hits})
        more = f"; {len(hits)} finds in {layers} layer(s) in all" if len(hits) > 1 else ""
        print(f"{where} holds the CA bundle's {first.certificate.describe()}{more}")
        return 1
    print(
        f"none of the {len(names)} layers of {len(options.images)} images holds any of the "
        f"{len(extra)} certificates the CA bundle adds to {options.base[0]}'s"
    )
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="bundle.py", description=__doc__.split("\n\n")[0])
    commands = parser.add_subparsers(dest="name", required=True)
    serve = commands.add_parser("serve", help="serve BUNDLE while COMMAND runs")
    serve.add_argument("bundle")
    serve.add_argument("command", nargs=argparse.REMAINDER)
    serve.add_argument("--host", help=argparse.SUPPRESS)  # tests: an address of their own
    serve.set_defaults(run=cmd_serve)
    url = commands.add_parser("url", help="the address the builds fetch the bundle from")
    url.set_defaults(run=cmd_url)
    check = commands.add_parser("check-layers", help="no layer of IMAGE holds the bundle")
    check.add_argument("bundle")
    check.add_argument("--base", action="append", required=True, help="the images' base")
    check.add_argument("images", nargs="+")
    check.set_defaults(run=cmd_check_layers)
    options = parser.parse_args(argv)
    if options.name == "serve" and options.command[:1] == ["--"]:
        options.command = options.command[1:]
    try:
        return int(options.run(options))
    except BundleError as error:
        print(f"bundle.py {options.name}: {error}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
