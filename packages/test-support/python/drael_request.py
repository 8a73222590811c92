#!/usr/bin/env python3
"""A Drael request from Python's standard library alone: the NATS text protocol over a socket.

    NATS_URL=nats://127.0.0.1:4222 python3 drael_request.py billing.plans.list.v1 '{}'

Prints the reply envelope ({"result": ...} or {"error": {...}}) and exits 0 on a result, 1 on an
error reply, 2 when nobody answers in time. Proves a caller needs no Nest packet and no Node
(issue 22); docs/calling-services.md shows the same call. DRAEL_NATS_PREFIX prefixes the subject.
"""
import json, os, secrets, socket, sys, urllib.parse


def request(subject, payload, timeout=30.0, request_id=None):
    url = urllib.parse.urlparse(os.environ.get("NATS_URL", "nats://127.0.0.1:4222"))
    prefix = os.environ.get("DRAEL_NATS_PREFIX", "")
    sock = socket.create_connection((url.hostname or "127.0.0.1", url.port or 4222), timeout=timeout)
    f = sock.makefile("rb")
    if not f.readline().startswith(b"INFO "):
        raise RuntimeError("not a NATS server")
    inbox = "_INBOX." + secrets.token_hex(8)
    body = json.dumps(payload).encode() if not isinstance(payload, bytes) else payload
    head = b"NATS/1.0\r\nx-request-id: " + (request_id or secrets.token_hex(8)).encode() + b"\r\n\r\n"
    subject = f"{prefix}.{subject}" if prefix else subject
    sock.sendall(
        b'CONNECT {"verbose":false,"pedantic":false,"headers":true,"no_responders":true,"protocol":1}\r\n'
        + f"SUB {inbox} 1\r\nUNSUB 1 1\r\n".encode()
        + f"HPUB {subject} {inbox} {len(head)} {len(head) + len(body)}\r\n".encode() + head + body + b"\r\n"
    )
    try:
        while True:
            line = f.readline()
            if not line:
                raise ConnectionError("NATS closed the connection")
            if line.startswith(b"PING"):
                sock.sendall(b"PONG\r\n")
            elif line.startswith(b"-ERR"):
                raise RuntimeError(line.decode().strip())
            elif line.startswith((b"MSG ", b"HMSG ")):
                parts = line.split()
                size = int(parts[-1])
                data = f.read(size + 2)[:size]
                if parts[0] == b"HMSG":
                    hlen = int(parts[-2])
                    if b" 503" in data[:hlen].split(b"\r\n")[0]:
                        return {"error": {"code": "unavailable", "message": f"{subject}: no service is answering", "retryable": True}}
                    data = data[hlen:]
                return json.loads(data)
    finally:
        sock.close()


if __name__ == "__main__":
    if len(sys.argv) != 3 or sys.argv[1] in ("-h", "--help"):
        print(__doc__.strip())
        sys.exit(0 if len(sys.argv) == 2 else 2)
    try:
        raw = sys.argv[2].encode()
        try:
            payload = json.loads(raw)
        except ValueError:
            payload = raw  # sent as is: the service answers bad_request
        reply = request(sys.argv[1], payload)
    except socket.timeout:
        print(json.dumps({"error": {"code": "timeout", "message": "no reply in time", "retryable": True}}))
        sys.exit(2)
    print(json.dumps(reply))
    sys.exit(0 if "result" in reply else 1)
