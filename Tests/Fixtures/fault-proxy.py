#!/usr/bin/env python3
"""A loopback HTTP proxy between pulse-pack and an S3 server (moto) that injects faults on request.

    fault-proxy.py UPSTREAM_PORT    prints "<its port> <its pid>" as its first line, then serves

It keeps client connections alive (moto closes every one), so that a fault can hit a reused connection.
Requests are forwarded as they came (Host included, so SigV4 signatures still verify upstream).

Control paths, never forwarded:
  POST /__proxy/faults   body: a JSON list of rules; replaces the rules
  GET  /__proxy/log      a JSON list of {"method", "target", "fault", "headers"} per request, in order
  POST /__proxy/clear    clears rules and log

A rule: {"method": "PUT", "match": "<regex searched in the request target>", "fault": "<name>",
         "times": <how many matching requests it hits, default all>, "skip": <matching requests let through first>,
         "every": <hit only every n-th matching request, default 1>}

Faults:
  drop           answer 200 (ETag: the body's MD5) without forwarding: a store that keeps nothing
  halve          forward the first half of the body (Content-Length adjusted): a store keeping a cut body
  reset          read half of the body, then reset the connection (RST)
  stall          read the request, then answer nothing for 60 s
  truncate       forward, then cut the answer's body in half, Content-Length consistent
  notoken        forward a listing with its NextContinuationToken removed
  empty          answer 200 with an empty body
  notfound       answer 404 NoSuchKey
  etag           forward, then answer another ETag than the store's
  unconditional  forward; a 412 answer becomes 200 (a store that ignores If-None-Match and If-Match)
"""
import hashlib
import http.client
import http.server
import json
import os
import re
import socket
import struct
import sys
import threading
import time

UPSTREAM = int(sys.argv[1])
LOCK = threading.Lock()
RULES = []
LOG = []
HOP = {"connection", "keep-alive", "proxy-connection", "transfer-encoding", "te", "trailer", "upgrade"}
LOGGED = {"content-md5", "x-amz-checksum-sha256", "if-none-match", "if-match", "content-length"}


def pick(method, target):
    with LOCK:
        for rule in RULES:
            if rule.get("method", method) != method or not re.search(rule.get("match", ""), target):
                continue
            rule["seen"] = rule.get("seen", 0) + 1
            if rule["seen"] <= rule.get("skip", 0) or (rule["seen"] - rule.get("skip", 0)) % rule.get("every", 1) != 0:
                continue
            if "times" in rule and rule.get("hit", 0) >= rule["times"]:
                continue
            rule["hit"] = rule.get("hit", 0) + 1
            return rule["fault"]
    return None


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def answer(self, status, body=b"", headers=()):
        self.send_response_only(status)
        for name, value in headers:
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    def control(self, body):
        global RULES, LOG
        if self.path == "/__proxy/faults":
            with LOCK:
                RULES = json.loads(body)
            self.answer(200)
        elif self.path == "/__proxy/log":
            with LOCK:
                data = json.dumps(LOG).encode()
            self.answer(200, data, [("Content-Type", "application/json")])
        elif self.path == "/__proxy/clear":
            with LOCK:
                RULES, LOG = [], []
            self.answer(200)
        else:
            self.answer(404)

    def handle_any(self):
        length = int(self.headers.get("Content-Length") or 0)
        if self.path.startswith("/__proxy/"):
            return self.control(self.rfile.read(length))
        fault = pick(self.command, self.path)
        with LOCK:
            LOG.append({"method": self.command, "target": self.path, "fault": fault,
                        "headers": {k.lower(): v for k, v in self.headers.items() if k.lower() in LOGGED}})
        if fault == "reset":
            self.rfile.read(length // 2)
            self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            self.connection.close()
            self.close_connection = True
            return
        body = self.rfile.read(length)
        if fault == "stall":
            time.sleep(60)
            self.close_connection = True
            return
        if fault == "drop":
            return self.answer(200, headers=[("ETag", '"%s"' % hashlib.md5(body).hexdigest())])
        if fault == "empty":
            return self.answer(200, headers=[("Content-Type", "application/xml")])
        if fault == "notfound":
            return self.answer(404, b'<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>NoSuchKey</Code>'
                                    b'<Message>The specified key does not exist.</Message></Error>',
                               [("Content-Type", "application/xml")])
        if fault == "halve":
            body = body[: len(body) // 2]
        status, headers, data = self.forward(body)
        if fault == "truncate":
            data = data[: len(data) // 2]
        elif fault == "notoken":
            data = re.sub(rb"<NextContinuationToken>.*?</NextContinuationToken>", b"", data)
        elif fault == "etag":
            headers = [(n, v) for n, v in headers if n.lower() != "etag"] + [("ETag", '"%s"' % hashlib.md5(b"other").hexdigest())]
        elif fault == "unconditional" and status == 412:
            status, data = 200, b""
            headers = [(n, v) for n, v in headers if n.lower() != "content-type"] + [("ETag", '"%s"' % hashlib.md5(body).hexdigest())]
        if self.command == "HEAD":
            self.send_response_only(status)
            for name, value in headers:
                self.send_header(name, value)
            self.end_headers()
            return
        self.answer(status, data, [(n, v) for n, v in headers if n.lower() != "content-length"])

    def forward(self, body):
        upstream = http.client.HTTPConnection("127.0.0.1", UPSTREAM, timeout=60)
        upstream.putrequest(self.command, self.path, skip_host=True, skip_accept_encoding=True)
        for name, value in self.headers.items():
            if name.lower() in HOP or name.lower() == "content-length":
                continue
            upstream.putheader(name, value)
        if self.command in ("PUT", "POST") or body:
            upstream.putheader("Content-Length", str(len(body)))
        upstream.endheaders(body)
        response = upstream.getresponse()
        data = response.read()
        headers = [(n, v) for n, v in response.getheaders() if n.lower() not in HOP]
        upstream.close()
        return response.status, headers, data

    do_GET = do_PUT = do_HEAD = do_DELETE = do_POST = handle_any


class Server(http.server.ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request, client_address):
        pass  # resets and stalls end connections rudely on purpose


server = Server(("127.0.0.1", 0), Handler)
print(server.server_address[1], os.getpid(), flush=True)
server.serve_forever()
