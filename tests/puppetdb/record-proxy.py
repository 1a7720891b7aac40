#!/usr/bin/env python3
"""A recording proxy between hiera-lookup and a real PuppetDB (plain HTTP, loopback only).

    record-proxy.py LISTEN_PORT UPSTREAM_URL OUT.jsonl

Forwards every request to UPSTREAM_URL and appends one JSON line per exchange to OUT.jsonl:
{"method", "path", "body" (the request's JSON, parsed), "status", "response" (text)}.
tests/puppetdb.rs replays these lines from a loopback HTTPS server.
"""
import http.server
import json
import sys
import urllib.error
import urllib.request

port, upstream, out = int(sys.argv[1]), sys.argv[2].rstrip("/"), sys.argv[3]


class Proxy(http.server.BaseHTTPRequestHandler):
    def do_POST(self):
        body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
        req = urllib.request.Request(upstream + self.path, data=body, method="POST",
                                     headers={"Content-Type": "application/json"})
        try:
            with urllib.request.urlopen(req, timeout=60) as r:
                status, text = r.status, r.read()
        except urllib.error.HTTPError as e:
            status, text = e.code, e.read()
        with open(out, "a") as f:
            f.write(json.dumps({"method": "POST", "path": self.path, "body": json.loads(body),
                                "status": status, "response": text.decode()}) + "\n")
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(text)))
        self.end_headers()
        self.wfile.write(text)

    def log_message(self, *args):
        pass


http.server.ThreadingHTTPServer(("127.0.0.1", port), Proxy).serve_forever()
