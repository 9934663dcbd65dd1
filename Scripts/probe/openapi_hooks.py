"""Schemathesis hooks for Scripts/probe/schemathesis: sign every device-scoped request as the contract says, so
the device routes are fuzzed past the signature check, and point part of the generated ids at things that exist.

Loaded by Schemathesis through SCHEMATHESIS_HOOKS=openapi_hooks (PYTHONPATH=Scripts/probe). Reads, from the
environment that Scripts/probe/schemathesis sets:
  PULSE_FUZZ_DEVICES   a JSON file: {"devices": [{"id", "key" (PKCS#8 PEM)}], "sessions": [...], "series": [...],
                       "assets": [...], "orgs": [...], "console": {"cookie", "csrf", "origin", "assets"}}
  PULSE_FUZZ_DOCUMENT  docs/openapi.yaml: the operations whose security is PulseDevice are the ones signed

Signing (docs/server.md, "Signing a request"): X-Pulse-Device: {deviceId};ts={unixSeconds};sig={base64url}, sig
ES256 in IEEE P1363 form over METHOD "\\n" PATH "\\n" QUERY "\\n" ts "\\n" hex(SHA-256(body)). The signature is made
in a `requests` auth object, which runs on the prepared request: PATH, QUERY and the body are the bytes sent.
Devices are used in turn (each has a rate limit of 5 a second, bursts of 10).

The console (`/console…`): about three requests in four carry the console session's cookie, and a POST also its
CSRF token and the console's own Origin, so the pages, forms and event feeds are fuzzed signed in; the rest go
signed out. Sign-in and sign-out never carry them (a fuzzed sign-out would end the session for the rest of the run)."""
import base64
import hashlib
import itertools
import json
import os
import threading
import time
import zlib

import requests
import schemathesis
import yaml
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.hazmat.primitives.asymmetric.utils import decode_dss_signature

METHODS = ("get", "head", "post", "put", "patch", "delete", "options")


def _load():
    with open(os.environ["PULSE_FUZZ_DEVICES"]) as f:
        setup = json.load(f)
    devices = [(d["id"], serialization.load_pem_private_key(d["key"].encode(), password=None)) for d in setup["devices"]]
    with open(os.environ["PULSE_FUZZ_DOCUMENT"]) as f:
        document = yaml.safe_load(f)
    signed = set()
    for path, item in document["paths"].items():
        for method in METHODS:
            operation = item.get(method)
            if operation and any("PulseDevice" in requirement for requirement in operation.get("security", [])):
                signed.add((method.upper(), path))
    return setup, devices, signed


SETUP, DEVICES, SIGNED = _load()
_turn = itertools.cycle(range(len(DEVICES)))
_turn_lock = threading.Lock()


def canonical(method, path_url, ts_text, body):
    path, _, query = path_url.partition("?")
    digest = hashlib.sha256(body).hexdigest()
    return "\n".join([method, path, query, ts_text, digest]).encode()


def p1363(key, message):
    r, s = decode_dss_signature(key.sign(message, ec.ECDSA(hashes.SHA256())))
    return r.to_bytes(32, "big") + s.to_bytes(32, "big")


class DeviceSignature(requests.auth.AuthBase):
    """Signs the prepared request with the next enrolled device's key."""

    def __call__(self, request):
        with _turn_lock:
            device_id, key = DEVICES[next(_turn)]
        body = request.body or b""
        if isinstance(body, str):
            body = body.encode()
        ts_text = str(int(time.time()))
        signature = base64.urlsafe_b64encode(p1363(key, canonical(request.method, request.path_url, ts_text, body))).rstrip(b"=")
        request.headers["X-Pulse-Device"] = f"{device_id};ts={ts_text};sig={signature.decode()}"
        return request


def _pick(value, choices):
    """One of `choices` for about half of the generated values (deterministic in the value, so Hypothesis
    replays and shrinks the same requests), else the value itself."""
    if not choices:
        return value
    number = zlib.crc32(repr(value).encode())
    return choices[(number // 2) % len(choices)] if number % 2 == 0 else value


@schemathesis.hook
def before_call(context, case, kwargs):
    path = case.operation.path
    if case.query and "session" in case.query:
        case.query["session"] = _pick(case.query["session"], SETUP["sessions"])
    if case.query and "org" in case.query:
        case.query["org"] = _pick(case.query["org"], SETUP["orgs"])
    if case.path_parameters:
        if path.startswith("/api/sync/series/"):
            case.path_parameters["id"] = _pick(case.path_parameters.get("id"), SETUP["series"])
        elif path.startswith("/api/sessions/") or path.startswith("/api/staff/sessions/"):
            case.path_parameters["id"] = _pick(case.path_parameters.get("id"), SETUP["sessions"])
        elif path.startswith("/api/sync/asset/"):
            case.path_parameters["hash"] = _pick(case.path_parameters.get("hash"), SETUP["assets"])
    if path in ("/api/staff/device-codes", "/api/staff/registration-tokens") and isinstance(case.body, dict):
        for field, choices in (("session", SETUP["sessions"]), ("series", SETUP["series"])):
            if field in case.body:
                case.body[field] = _pick(case.body[field], choices)
    if path.startswith("/console"):
        console = SETUP["console"]
        if case.path_parameters and path.startswith("/console/sessions/"):
            case.path_parameters["id"] = _pick(case.path_parameters.get("id"), SETUP["sessions"])
        elif case.path_parameters and path.startswith("/console/assets/"):
            case.path_parameters["name"] = _pick(case.path_parameters.get("name"), console["assets"])
        if path not in ("/console/sign-in", "/console/sign-out") and _signed_in(case):
            headers = dict(case.headers or {})
            headers["Cookie"] = console["cookie"]
            if case.method.upper() == "POST":
                headers["X-CSRF-Token"] = console["csrf"]
                headers["Origin"] = console["origin"]
            case.headers = headers
    if (case.method.upper(), path) in SIGNED:
        kwargs["auth"] = DeviceSignature()


def _signed_in(case):
    """Three console requests in four (deterministic in the case's data, as `_pick` is)."""
    number = zlib.crc32(repr((case.method, case.path_parameters, case.query, case.body)).encode())
    return number % 4 != 0
