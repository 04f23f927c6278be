#!/usr/bin/env python3
"""A CA bundle for the image builds, kept out of every image (docker/ca/README.md).

  bundle.py serve BUNDLE -- COMMAND...   serve BUNDLE to the builds COMMAND runs, then stop
  bundle.py url                          the address the builds fetch it from (LAB_CA_URL)

docker/Dockerfile's steps that reach PyPI fetch the bundle from LAB_CA_URL, use it and delete it
within the same step (with-bundle.sh), so it is in no layer. It travels over HTTP from the
host's end of Docker's default bridge, the network both of Docker's builders (the legacy one,
which Compose 1.29 drives, and BuildKit) give a build step; a build secret would need BuildKit.
The server answers only while COMMAND runs and serves nothing but the bundle.
Standard library only: the smoke run calls it before any environment exists.
"""

import argparse
import fcntl
import http.server
import json
import os
import re
import signal
import socket
import struct
import subprocess
import sys
import threading

DEFAULT_PORT = 55480  # fixed, so the URL (a build argument, in the build cache's key) is too
URL_PATH = "/ca-bundle.pem"
PEM_BLOCK = re.compile(
    rb"-----BEGIN CERTIFICATE-----\s*(.+?)\s*-----END CERTIFICATE-----", re.DOTALL
)


class BundleError(Exception):
    """One line for the user; the command exits 1 with it."""


# --- the bundle's certificates -----------------------------------------------------------------


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
    host, port = (options.host, options.port) if options.host else bundle_address()
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


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="bundle.py", description=__doc__.split("\n\n")[0])
    commands = parser.add_subparsers(dest="name", required=True)
    serve = commands.add_parser("serve", help="serve BUNDLE while COMMAND runs")
    serve.add_argument("bundle")
    serve.add_argument("command", nargs=argparse.REMAINDER)
    serve.add_argument("--host", help=argparse.SUPPRESS)  # tests: an address of their own
    serve.add_argument("--port", type=int, default=0, help=argparse.SUPPRESS)
    serve.set_defaults(run=cmd_serve)
    url = commands.add_parser("url", help="the address the builds fetch the bundle from")
    url.set_defaults(run=cmd_url)
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
