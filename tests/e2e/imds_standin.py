#!/usr/bin/env python3
"""imds_standin.py TAGS PORTFILE - a stand-in for EC2's instance metadata
service (IMDSv2) on 127.0.0.1, for the node TTL's script (issue 29): PUT
/latest/api/token answers a token; GET /latest/meta-data/tags/instance lists
the keys of the JSON object in the file TAGS and .../tags/instance/KEY
answers one value (404 for a key it has not), only with the token, as EC2
does. TAGS is read on every request, so a test changes the tags by writing
it; TAGS holding null stands for instance tags not enabled in the metadata
(the listing is a 404 too). The port it listens on is written to PORTFILE.
"""
import http.server
import json
import sys

TOKEN = "AQAEAKILNTTLTOKEN=="


class Handler(http.server.BaseHTTPRequestHandler):
    def log_message(self, *args):
        pass

    def answer(self, code, body=""):
        data = body.encode()
        self.send_response(code)
        self.send_header("Content-Type", "text/plain")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_PUT(self):
        if self.path == "/latest/api/token" and self.headers.get("X-aws-ec2-metadata-token-ttl-seconds"):
            self.answer(200, TOKEN)
        else:
            self.answer(400)

    def do_GET(self):
        if self.headers.get("X-aws-ec2-metadata-token") != TOKEN:
            self.answer(401)
            return
        with open(sys.argv[1]) as f:
            tags = json.load(f)
        base = "/latest/meta-data/tags/instance"
        if tags is None or not self.path.startswith(base):
            self.answer(404)
        elif self.path == base:
            self.answer(200, "\n".join(tags))
        elif self.path[len(base) + 1:] in tags:
            self.answer(200, tags[self.path[len(base) + 1:]])
        else:
            self.answer(404)


server = http.server.HTTPServer(("127.0.0.1", 0), Handler)
with open(sys.argv[2], "w") as f:
    f.write(str(server.server_address[1]))
server.serve_forever()
