"""What Scripts/probe/fuzz-server and Scripts/probe/server share: the contract's request signing, enrollment, raw
requests over a socket, and a pulse-server of their own (release build, data folder on tmpfs, an event
imported from Samples/). Written from the contract and docs/server-routes.md, not from the server's code. Needs the
`cryptography` package (Debian: python3-cryptography)."""
import base64
import hashlib
import json
import os
import shutil
import socket
import subprocess
import tempfile
import time

from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.hazmat.primitives.asymmetric.utils import decode_dss_signature

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
EMPTY_DIGEST = hashlib.sha256(b"").hexdigest().encode()


def b64url(data):
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def canonical(method, target, ts_text, body):
    """METHOD \\n PATH \\n QUERY \\n ts \\n hex(SHA-256(body)), over bytes exactly as sent."""
    target = target if isinstance(target, bytes) else target.encode()
    path, _, query = target.partition(b"?")
    digest = hashlib.sha256(body).hexdigest().encode() if body else EMPTY_DIGEST
    ts_text = ts_text if isinstance(ts_text, bytes) else str(ts_text).encode()
    return b"\n".join([method.encode(), path, query, ts_text, digest])


def p1363(key, message):
    r, s = decode_dss_signature(key.sign(message, ec.ECDSA(hashes.SHA256())))
    return r.to_bytes(32, "big") + s.to_bytes(32, "big")


class Device:
    def __init__(self, device_id, key):
        self.id, self.key = device_id, key

    def header(self, method, target, body=b"", ts=None, ts_text=None):
        ts_text = ts_text if ts_text is not None else str(int(time.time()) if ts is None else ts)
        signature = b64url(p1363(self.key, canonical(method, target, ts_text, body)))
        return f"{self.id};ts={ts_text};sig={signature}"


def new_key():
    return ec.generate_private_key(ec.SECP256R1())


def spki_b64(key):
    return base64.b64encode(key.public_key().public_bytes(serialization.Encoding.DER, serialization.PublicFormat.SubjectPublicKeyInfo)).decode()


def enroll_body(token, key, name="probe phone", platform="ios"):
    return json.dumps({"token": token, "publicKey": spki_b64(key), "platform": platform, "name": name}).encode()


def raw_request(method, target, headers=(), body=b"", host="127.0.0.1"):
    """A request as bytes: the request line, Host, `headers` in order, Content-Length when there is a body."""
    target = target if isinstance(target, bytes) else target.encode()
    lines = [method.encode() + b" " + target + b" HTTP/1.1", b"Host: " + host.encode()]
    for name, value in headers:
        lines.append(name.encode() + b": " + (value if isinstance(value, bytes) else value.encode()))
    if body:
        lines.append(b"Content-Length: " + str(len(body)).encode())
    return b"\r\n".join(lines) + b"\r\n\r\n" + body


class Target:
    """A server at host:port, spoken to over raw sockets (so nothing is normalized on the way)."""

    def __init__(self, host, port):
        self.host, self.port = host, port

    def connect(self, timeout=5, source=None):
        s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        s.settimeout(timeout)
        if source:
            s.bind((source, 0))
        s.connect((self.host, self.port))
        return s

    def exchange(self, raw, timeout=5, source=None):
        """Sends raw bytes; returns (everything read until close or timeout, closed?)."""
        s = self.connect(timeout, source)
        try:
            s.sendall(raw)
            return read_all(s)
        finally:
            s.close()

    def request(self, method, target, headers=(), body=b"", timeout=5, source=None):
        """One request on a new connection; returns (status, headers dict (lowercase), body, raw head)."""
        s = self.connect(timeout, source)
        try:
            s.sendall(raw_request(method, target, headers, body, host=self.host))
            return read_response(s, head=(method == "HEAD"))
        finally:
            s.close()

    def json(self, method, target, headers=(), value=None, timeout=10):
        body = json.dumps(value).encode() if value is not None else b""
        status, response_headers, answer, _ = self.request(method, target, list(headers) + ([("Content-Type", "application/json")] if body else []), body, timeout)
        try:
            return status, json.loads(answer) if answer else None
        except ValueError:
            return status, None


def read_all(s):
    data = b""
    try:
        while True:
            chunk = s.recv(65536)
            if not chunk:
                return data, True
            data += chunk
    except ConnectionResetError:
        return data, True
    except socket.timeout:
        return data, False


def read_response(s, head=False):
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = s.recv(65536)
        if not chunk:
            raise ConnectionError(f"closed after {len(data)} bytes")
        data += chunk
    top, rest = data.split(b"\r\n\r\n", 1)
    lines = top.decode("latin-1").split("\r\n")
    status = int(lines[0].split()[1])
    headers = {}
    for line in lines[1:]:
        name, _, value = line.partition(":")
        headers[name.strip().lower()] = value.strip()
    if headers.get("transfer-encoding", "").lower() == "chunked":
        return status, headers, rest, top  # an event stream: the head is the answer
    length = 0 if head or status in (204, 304) else int(headers.get("content-length", "0"))
    while len(rest) < length:
        chunk = s.recv(65536)
        if not chunk:
            break
        rest += chunk
    return status, headers, rest[:length], top


def status_of(data):
    try:
        return int(data.split(b" ", 2)[1])
    except (IndexError, ValueError):
        return None


def wait_for(condition, seconds):
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.05)
    return condition()


def read_text(path):
    with open(path, errors="replace") as f:
        return f.read()


def build_release(products=("pulse-server", "pulse-pack")):
    """The release executables (traps exist there too, and it is what operators run); their folder."""
    for product in products:
        subprocess.run(["swift", "build", "-c", "release", "--product", product], cwd=ROOT, check=True, stdout=subprocess.DEVNULL)
    out = subprocess.run(["swift", "build", "-c", "release", "--show-bin-path"], cwd=ROOT, check=True, capture_output=True, text=True)
    return out.stdout.strip()


class OwnServer:
    """A pulse-server of its own: Samples/ packaged and imported into a data folder on tmpfs, a staff token,
    a registration token, the keynote live (unless `live` is false); `serve` on `listen` (a free loopback port
    by default) with `extra` arguments."""

    def __init__(self, bin_path, extra=(), name="pulse-server-probe", listen="127.0.0.1:0", live=True):
        self.bin = bin_path
        base = "/dev/shm" if os.path.isdir("/dev/shm") else None
        self.work = tempfile.mkdtemp(prefix=name + ".", dir=base)
        os.chmod(self.work, 0o700)
        self.data = os.path.join(self.work, "data")
        self.package = os.path.join(self.work, "pkg")
        self.errors = os.path.join(self.work, "serve.stderr")
        self.access_log = os.path.join(self.work, "access.log")
        env = dict(os.environ, XDG_CONFIG_HOME=os.path.join(self.work, "config"))
        env.pop("PULSE_DATABASE_URL", None)
        self.env = env
        self.tool("pulse-pack", "build", os.path.join(ROOT, "Samples", "series.json"), "--out", self.package,
                  "--secret-file", os.path.join(self.work, "secret"), "--quiet")
        self.tool("pulse-server", "import", "--data", self.data, self.package)
        self.staff = self.admin("staff-token", "create")
        self.registration = self.admin("registration-token", "create", "--series", "devconf-2026")
        if live:
            self.admin("session", "set", "keynote", "--state", "live")
        self.listen = listen
        self.extra = list(extra)
        self.process = None
        self.start()

    def tool(self, name, *arguments):
        return subprocess.run([os.path.join(self.bin, name), *arguments], check=True, capture_output=True, text=True, env=self.env).stdout

    def admin(self, *arguments):
        return self.tool("pulse-server", "admin", *arguments[:2], "--data", self.data, *arguments[2:]).strip()

    def start(self):
        with open(self.errors, "a") as err:
            self.process = subprocess.Popen(
                [os.path.join(self.bin, "pulse-server"), "serve", "--data", self.data, "--listen", self.listen, "--public", self.package,
                 "--access-log", self.access_log, *self.extra], stderr=err, stdin=subprocess.DEVNULL, env=self.env)
        if not wait_for(lambda: "serving on http://127.0.0.1:" in read_text(self.errors).split("stopped")[-1], 20):
            raise RuntimeError("pulse-server did not start:\n" + read_text(self.errors))
        text = read_text(self.errors).split("serving on http://127.0.0.1:")[-1]
        self.port = int(text.split()[0])
        self.target = Target("127.0.0.1", self.port)

    def stop(self):
        if self.process and self.process.poll() is None:
            self.process.terminate()
            try:
                return self.process.wait(15)
            except subprocess.TimeoutExpired:
                self.process.kill()
        return self.process.poll() if self.process else None

    def close(self):
        try:
            self.stop()
        finally:
            shutil.rmtree(self.work, ignore_errors=True)


def enroll_devices(target, token, count, source=None):
    """`count` devices enrolled with `token`: [Device]."""
    devices = []
    for index in range(count):
        key = new_key()
        for _ in range(20):
            status, answer = target.json("POST", "/api/sync/enroll", value={
                "token": token, "publicKey": spki_b64(key), "platform": "ios", "name": f"probe {index}"})
            if status != 429:
                break
            time.sleep(1)
        if status != 200:
            raise RuntimeError(f"enroll answered {status}: {answer}")
        devices.append(Device(answer["deviceId"], key))
    return devices
