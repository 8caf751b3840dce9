#!/usr/bin/env python3
"""Independent C2SP tlog-witness *witness* (server), used as a test fixture for a log client.

Written from the public C2SP specifications only:

  * c2sp.org/tlog-witness      (add-checkpoint request/response and status codes)
  * c2sp.org/tlog-cosignature  (Ed25519 cosignature, signature type 0x04)
  * c2sp.org/signed-note       (note format, key IDs, Ed25519 type 0x01)
  * c2sp.org/tlog-checkpoint   (checkpoint note text)
  * RFC 6962 section 2.1.2 consistency proofs, verified with the algorithm of
    RFC 9162 section 2.1.4.2

Usage:

  witness_server.py --listen HOST:PORT --name NAME --key-file FILE \\
                    --log NOTE_VKEY [--log NOTE_VKEY ...] --state FILE

  --listen HOST:PORT  address to listen on; PORT 0 picks a free port
                      (IPv6 hosts may be written [::1]:PORT)
  --name NAME         the witness (cosigner) name, e.g. witness.example/w1
  --key-file FILE     the witness's Ed25519 private key (PKCS#8 PEM); created
                      with mode 0600 if it does not exist
  --log NOTE_VKEY     a trusted log key <origin>+<8 hex key id>+<base64(0x01||key)>
                      (signed-note Ed25519); the key name is the checkpoint
                      origin it is trusted for. May be repeated (several keys
                      for one origin are allowed, e.g. during key rotation).
  --state FILE        JSON file holding the latest cosigned (size, root hash)
                      per origin; written atomically (temporary file + rename)

Once listening it prints exactly one line to stdout:

  witness <name>+<8 hex key id>+<base64(0x04 || key)> listening on <host>:<port>

It serves POST /add-checkpoint (the submission prefix is the server root) and
logs one line per request to stderr. SIGTERM and SIGINT stop it cleanly.

Only the Python standard library and the `cryptography` package are used.
"""

import argparse
import base64
import binascii
import hashlib
import http.server
import json
import os
import re
import signal
import socket
import sys
import threading
import time

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import (
    Ed25519PrivateKey,
    Ed25519PublicKey,
)

EM_DASH = "\u2014"

SIG_TYPE_ED25519 = 0x01     # signed-note Ed25519
SIG_TYPE_COSIG_V1 = 0x04    # tlog-cosignature timestamped Ed25519

MAX_BODY = 1 << 20          # bytes accepted in an add-checkpoint request body
MAX_PROOF_LINES = 63        # tlog-witness: client MUST NOT send more than 63
MAX_SIGNATURES = 64         # signed-note: MUST accept at least 16
MAX_TREE_SIZE = (1 << 63) - 1
HASH_SIZE = 32

DECIMAL_RE = re.compile(r"(0|[1-9][0-9]*)\Z")


# ---------------------------------------------------------------------------
# helpers
# ---------------------------------------------------------------------------

def b64(data):
    return base64.b64encode(data).decode("ascii")


def b64decode_strict(text):
    """Standard base64 (RFC 4648 section 4), padding required, no stray bytes."""
    raw = base64.b64decode(text.encode("ascii"), validate=True)
    if b64(raw) != text:  # reject non-canonical encodings (non-zero pad bits)
        raise ValueError("non-canonical base64")
    return raw


def sha256(data):
    return hashlib.sha256(data).digest()


def key_id(name, sig_type, pubkey):
    """SHA-256(key name || 0x0A || signature type || public key)[:4]."""
    return sha256(name.encode("utf-8") + b"\n" + bytes([sig_type]) + pubkey)[:4]


def check_key_name(name):
    """signed-note: key names MUST be non-empty, no Unicode spaces, no '+'."""
    if not name:
        raise ValueError("key name must be non-empty")
    if "+" in name or any(ch.isspace() for ch in name):
        raise ValueError("key name %r must not contain spaces or '+'" % name)
    if any(ord(ch) < 0x20 or ch == "\x7f" for ch in name):
        raise ValueError("key name %r must not contain control characters" % name)


def parse_decimal(text, what):
    if not DECIMAL_RE.match(text):
        raise ValueError("%s %r is not a decimal with no leading zeroes" % (what, text))
    value = int(text)
    if value > MAX_TREE_SIZE:
        raise ValueError("%s %s is too large" % (what, text))
    return value


class BadRequest(Exception):
    """Malformed request: answered with 400."""


# ---------------------------------------------------------------------------
# RFC 6962 / RFC 9162 consistency proof verification
# ---------------------------------------------------------------------------

def node_hash(left, right):
    return sha256(b"\x01" + left + right)


EMPTY_ROOT = sha256(b"")  # MTH({}) = SHA-256()


def verify_consistency(first, second, first_hash, second_hash, proof):
    """RFC 9162 section 2.1.4.2, with tlog-witness's rule for first == 0.

    Returns None if the proof verifies, else a reason string.
    """
    if first > second:
        return "old size %d is larger than new size %d" % (first, second)
    if first == 0:
        # tlog-witness: "The proof MUST be empty if the old size is zero."
        return None if not proof else "proof must be empty when old size is 0"
    if first == second:
        if proof:
            return "proof must be empty when old size equals new size"
        return None if first_hash == second_hash else "root hashes differ"
    # 1. If consistency_path is an empty array, stop and fail.
    if not proof:
        return "empty proof for %d -> %d" % (first, second)
    path = list(proof)
    # 2. If first is an exact power of 2, prepend first_hash to consistency_path.
    if first & (first - 1) == 0:
        path.insert(0, first_hash)
    # 3. fn = first - 1, sn = second - 1.
    fn, sn = first - 1, second - 1
    # 4. If LSB(fn) is set, right-shift both fn and sn equally until LSB(fn) is not set.
    while fn & 1:
        fn >>= 1
        sn >>= 1
    # 5. fr = sr = first value in the path.
    fr = sr = path[0]
    # 6. For each subsequent value c in the path:
    for c in path[1:]:
        # a. If sn is 0, stop the iteration and fail the proof verification.
        if sn == 0:
            return "proof too long"
        # b. If LSB(fn) is set, or if fn is equal to sn, then:
        if fn & 1 or fn == sn:
            fr = node_hash(c, fr)
            sr = node_hash(c, sr)
            # If LSB(fn) is not set, right-shift both fn and sn equally until
            # either LSB(fn) is set or fn is 0.
            if not fn & 1:
                while not fn & 1 and fn != 0:
                    fn >>= 1
                    sn >>= 1
        # Otherwise:
        else:
            sr = node_hash(sr, c)
        # c. Finally, right-shift both fn and sn one time.
        fn >>= 1
        sn >>= 1
    # 7. Verify fr == first_hash, sr == second_hash and sn == 0.
    if sn != 0:
        return "proof too short"
    if fr != first_hash:
        return "proof does not lead to the old root hash"
    if sr != second_hash:
        return "proof does not lead to the new root hash"
    return None


# ---------------------------------------------------------------------------
# keys
# ---------------------------------------------------------------------------

class LogKey(object):
    """A trusted log key, from a signed-note Ed25519 verifier key string."""

    def __init__(self, vkey):
        parts = vkey.split("+", 2)  # the base64 part may itself contain '+'
        if len(parts) != 3:
            raise ValueError("log key %r must be <origin>+<hex id>+<base64 key>" % vkey)
        name, hexid, keyb64 = parts
        check_key_name(name)
        if not re.match(r"[0-9a-fA-F]{8}\Z", hexid):
            raise ValueError("log key %r: key id must be 8 hex digits" % vkey)
        try:
            material = b64decode_strict(keyb64)
        except (ValueError, binascii.Error) as e:
            raise ValueError("log key %r: bad base64: %s" % (vkey, e))
        if len(material) != 33 or material[0] != SIG_TYPE_ED25519:
            raise ValueError("log key %r: must be type 0x01 (Ed25519) with a 32-byte key"
                             % vkey)
        self.name = name
        self.pub = material[1:]
        self.kid = bytes.fromhex(hexid)
        want = key_id(name, SIG_TYPE_ED25519, self.pub)
        if want != self.kid:
            raise ValueError("log key %r: key id %s does not match "
                             "SHA-256(name||0x0A||0x01||key)[:4] = %s"
                             % (vkey, hexid, want.hex()))
        self.key = Ed25519PublicKey.from_public_bytes(self.pub)

    def verify(self, sig, text):
        try:
            self.key.verify(sig, text)
            return True
        except InvalidSignature:
            return False


def load_or_create_witness_key(path):
    try:
        with open(path, "rb") as f:
            data = f.read()
    except FileNotFoundError:
        priv = Ed25519PrivateKey.generate()
        pem = priv.private_bytes(serialization.Encoding.PEM,
                                 serialization.PrivateFormat.PKCS8,
                                 serialization.NoEncryption())
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        try:
            os.fchmod(fd, 0o600)
            os.write(fd, pem)
            os.fsync(fd)
        finally:
            os.close(fd)
        return priv
    priv = serialization.load_pem_private_key(data, password=None)
    if not isinstance(priv, Ed25519PrivateKey):
        raise ValueError("%s does not hold an Ed25519 private key" % path)
    return priv


class Cosigner(object):
    """tlog-cosignature Ed25519 (type 0x04) cosigner."""

    def __init__(self, name, priv):
        check_key_name(name)
        self.name = name
        self.priv = priv
        self.pub = priv.public_key().public_bytes(serialization.Encoding.Raw,
                                                  serialization.PublicFormat.Raw)
        self.kid = key_id(name, SIG_TYPE_COSIG_V1, self.pub)

    def vkey(self):
        return "%s+%s+%s" % (self.name, self.kid.hex(),
                             b64(bytes([SIG_TYPE_COSIG_V1]) + self.pub))

    def cosign(self, text, timestamp):
        """One note signature line over the checkpoint note text (bytes)."""
        msg = b"cosignature/v1\ntime %d\n" % timestamp + text
        sig = self.priv.sign(msg)
        blob = self.kid + timestamp.to_bytes(8, "big") + sig
        return "%s %s %s\n" % (EM_DASH, self.name, b64(blob))


# ---------------------------------------------------------------------------
# state
# ---------------------------------------------------------------------------

class State(object):
    """Latest cosigned (size, root hash, note text) per origin, in a JSON file."""

    def __init__(self, path):
        self.path = os.path.abspath(path)
        self.lock = threading.Lock()
        self.logs = {}
        try:
            with open(self.path, "r", encoding="utf-8") as f:
                obj = json.load(f)
        except FileNotFoundError:
            return
        if obj.get("format") != "c2sp-tlog-witness-test-server state v1":
            raise ValueError("%s: unknown state file format" % self.path)
        for origin, entry in obj["logs"].items():
            size = int(entry["size"])
            root = b64decode_strict(entry["root"])
            if size < 0 or len(root) != HASH_SIZE:
                raise ValueError("%s: bad entry for %r" % (self.path, origin))
            self.logs[origin] = dict(entry, size=size)

    def get(self, origin):
        """(size, root) of the latest cosigned checkpoint, or (0, None)."""
        e = self.logs.get(origin)
        if e is None:
            return 0, None
        return e["size"], b64decode_strict(e["root"])

    def put(self, origin, size, root, text):
        """Persist atomically (caller holds self.lock). Raises OSError on failure."""
        logs = dict(self.logs)
        logs[origin] = {"size": size, "root": b64(root), "checkpoint": text,
                        "updated": int(time.time())}
        data = json.dumps({"format": "c2sp-tlog-witness-test-server state v1",
                           "logs": logs}, indent=2, sort_keys=True) + "\n"
        d = os.path.dirname(self.path)
        tmp = "%s.tmp.%d.%d" % (self.path, os.getpid(), threading.get_ident())
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        try:
            try:
                os.write(fd, data.encode("utf-8"))
                os.fsync(fd)
            finally:
                os.close(fd)
            os.replace(tmp, self.path)
        except BaseException:
            try:
                os.unlink(tmp)
            except OSError:
                pass
            raise
        try:
            dfd = os.open(d, os.O_RDONLY)
            try:
                os.fsync(dfd)
            finally:
                os.close(dfd)
        except OSError:
            pass
        self.logs = logs


# ---------------------------------------------------------------------------
# request parsing
# ---------------------------------------------------------------------------

def parse_request(body):
    """Split an add-checkpoint body. Returns (old, proof, text, sigs).

    text is the checkpoint note text (str, with final newline); sigs is a list
    of (key name, raw signature bytes incl. 4-byte key id). Raises BadRequest.
    """
    try:
        s = body.decode("utf-8")
    except UnicodeDecodeError:
        raise BadRequest("body is not valid UTF-8")
    for ch in s:
        if ch != "\n" and (ord(ch) < 0x20 or ch == "\x7f"):
            raise BadRequest("body contains control character U+%04X" % ord(ch))
    # old size line
    nl = s.find("\n")
    if nl < 0:
        raise BadRequest("missing old size line")
    line, rest = s[:nl], s[nl + 1:]
    if not line.startswith("old "):
        raise BadRequest("first line must be 'old <size>', got %r" % line[:80])
    try:
        old = parse_decimal(line[4:], "old size")
    except ValueError as e:
        raise BadRequest(str(e))
    # consistency proof lines, up to the empty line
    proof = []
    while True:
        nl = rest.find("\n")
        if nl < 0:
            raise BadRequest("missing empty line before the checkpoint")
        line, rest = rest[:nl], rest[nl + 1:]
        if line == "":
            break
        if len(proof) == MAX_PROOF_LINES:
            raise BadRequest("more than %d consistency proof lines" % MAX_PROOF_LINES)
        try:
            h = b64decode_strict(line)
        except (ValueError, binascii.Error):
            raise BadRequest("proof line %d is not base64: %r" % (len(proof) + 1, line[:80]))
        if len(h) != HASH_SIZE:
            raise BadRequest("proof line %d is %d bytes, want %d"
                             % (len(proof) + 1, len(h), HASH_SIZE))
        proof.append(h)
    # the checkpoint: a signed note
    note = rest
    idx = note.rfind("\n\n")  # the text ends at the last empty line
    if idx < 0:
        raise BadRequest("checkpoint note has no signature block")
    text, block = note[:idx + 1], note[idx + 2:]
    if not block:
        raise BadRequest("checkpoint note has no signature lines")
    if not block.endswith("\n"):
        raise BadRequest("signature block does not end in a newline")
    sigs = []
    for sl in block[:-1].split("\n"):
        if len(sigs) == MAX_SIGNATURES:
            raise BadRequest("more than %d signature lines" % MAX_SIGNATURES)
        if not sl.startswith(EM_DASH + " "):
            raise BadRequest("malformed signature line %r" % sl[:80])
        fields = sl[2:].split(" ")
        if len(fields) != 2:
            raise BadRequest("malformed signature line %r" % sl[:80])
        name, sig64 = fields
        try:
            check_key_name(name)
            raw = b64decode_strict(sig64)
        except (ValueError, binascii.Error) as e:
            raise BadRequest("malformed signature line %r: %s" % (sl[:80], e))
        if len(raw) < 4:
            raise BadRequest("signature shorter than a key id: %r" % sl[:80])
        sigs.append((name, raw))
    return old, proof, text, sigs


def parse_checkpoint(text):
    """tlog-checkpoint note text -> (origin, size, root). Raises BadRequest."""
    lines = text[:-1].split("\n")
    if len(lines) < 3:
        raise BadRequest("checkpoint text has fewer than three lines")
    if any(l == "" for l in lines):
        raise BadRequest("checkpoint text has an empty line")
    origin = lines[0]
    try:
        size = parse_decimal(lines[1], "tree size")
    except ValueError as e:
        raise BadRequest(str(e))
    try:
        root = b64decode_strict(lines[2])
    except (ValueError, binascii.Error):
        raise BadRequest("root hash %r is not base64" % lines[2][:80])
    if len(root) != HASH_SIZE:
        raise BadRequest("root hash is %d bytes, want %d" % (len(root), HASH_SIZE))
    return origin, size, root


# ---------------------------------------------------------------------------
# the witness
# ---------------------------------------------------------------------------

class Reply(object):
    def __init__(self, status, body, content_type="text/plain; charset=utf-8", reason=""):
        self.status = status
        self.body = body if isinstance(body, bytes) else body.encode("utf-8")
        self.content_type = content_type
        self.reason = reason


def error(status, reason):
    return Reply(status, reason + "\n", reason=reason)


class Witness(object):
    def __init__(self, cosigner, log_keys, state):
        self.cosigner = cosigner
        self.keys = {}  # origin -> [LogKey]
        for k in log_keys:
            self.keys.setdefault(k.name, []).append(k)
        self.state = state

    def add_checkpoint(self, body):
        try:
            old, proof, text, sigs = parse_request(body)
            origin, size, root = parse_checkpoint(text)
        except BadRequest as e:
            return error(400, "malformed request: %s" % e)

        keys = self.keys.get(origin)
        if not keys:
            return error(404, "unknown log origin %r" % origin)

        # signed-note: ignore signatures of unknown keys (name and id must both
        # match); every signature of a known key must verify; at least one must.
        tb = text.encode("utf-8")
        verified = 0
        for name, raw in sigs:
            for k in keys:
                if name == k.name and raw[:4] == k.kid:
                    if not k.verify(raw[4:], tb):
                        return error(403, "signature by trusted key %s+%s does not verify"
                                     % (k.name, k.kid.hex()))
                    verified += 1
        if not verified:
            return error(403, "no signature from a trusted key for %r" % origin)

        if old > size:
            return error(400, "old size %d is larger than checkpoint size %d" % (old, size))

        with self.state.lock:
            cur_size, cur_root = self.state.get(origin)
            if old != cur_size:
                return Reply(409, "%d\n" % cur_size, "text/x.tlog.size",
                             "old size %d but latest cosigned size for %r is %d"
                             % (old, origin, cur_size))
            if cur_root is None:
                cur_root = EMPTY_ROOT  # never cosigned: size 0, the empty tree
            if old == size:
                if root != cur_root:
                    return error(409, "checkpoint for %r has size %d but a different root "
                                 "hash than the cosigned one (%s != %s)"
                                 % (origin, size, b64(root), b64(cur_root)))
                if proof:
                    return error(422, "consistency proof must be empty for old size = "
                                 "checkpoint size")
            else:
                why = verify_consistency(old, size, cur_root, root, proof)
                if why:
                    return error(422, "consistency proof %d -> %d for %r does not verify: "
                                 "%s; checkpoint: %s"
                                 % (old, size, origin, why, json.dumps(text)))
            try:
                self.state.put(origin, size, root, text)
            except OSError as e:
                return error(500, "cannot persist state: %s" % e)
            line = self.cosigner.cosign(tb, int(time.time()))
        return Reply(200, line, reason="cosigned %r size %d (old %d)" % (origin, size, old))


# ---------------------------------------------------------------------------
# HTTP
# ---------------------------------------------------------------------------

def log(msg):
    sys.stderr.write("%s witness: %s\n" % (time.strftime("%Y-%m-%dT%H:%M:%SZ",
                                                          time.gmtime()), msg))
    sys.stderr.flush()


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"   # keep-alive
    server_version = "c2sp-tlog-witness-test-server/1"
    sys_version = ""
    timeout = 60                    # idle keep-alive connections

    witness = None  # set on the subclass

    def log_message(self, fmt, *args):  # silence the default access log
        pass

    def log_error(self, fmt, *args):
        log("%s %s" % (self.client_address[0], fmt % args))

    def reply(self, r):
        self.send_response(r.status)
        self.send_header("Content-Type", r.content_type)
        self.send_header("Content-Length", str(len(r.body)))
        if self.close_connection:
            self.send_header("Connection", "close")
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(r.body)
        log("%s %s %s -> %d %s" % (self.client_address[0], self.command, self.path,
                                   r.status, r.reason))

    def read_body(self):
        """Returns the body bytes, or a Reply on error (connection then closes)."""
        if self.headers.get("Transfer-Encoding"):
            self.close_connection = True
            return error(411, "Transfer-Encoding is not supported; send Content-Length")
        cl = self.headers.get("Content-Length")
        if cl is None:
            self.close_connection = True
            return error(411, "Content-Length required")
        if not re.match(r"[0-9]{1,12}\Z", cl.strip()):
            self.close_connection = True
            return error(400, "bad Content-Length %r" % cl)
        n = int(cl)
        if n > MAX_BODY:
            self.close_connection = True
            return error(413, "body of %d bytes exceeds %d" % (n, MAX_BODY))
        data = self.rfile.read(n)
        if len(data) != n:
            self.close_connection = True
            return error(400, "truncated body")
        return data

    def route(self):
        return self.path.split("?", 1)[0]

    def do_POST(self):
        body = self.read_body()
        if isinstance(body, Reply):
            return self.reply(body)
        if self.route() != "/add-checkpoint":
            return self.reply(error(404, "no such endpoint"))
        try:
            r = self.witness.add_checkpoint(body)
        except Exception as e:  # never leave a request unanswered
            r = error(500, "internal error: %s: %s" % (type(e).__name__, e))
        self.reply(r)

    def other_method(self):
        if self.headers.get("Content-Length") or self.headers.get("Transfer-Encoding"):
            self.close_connection = True
        if self.route() == "/add-checkpoint":
            self.send_response(405)
            self.send_header("Allow", "POST")
            body = b"use POST\n"
            self.send_header("Content-Type", "text/plain; charset=utf-8")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            if self.command != "HEAD":
                self.wfile.write(body)
            log("%s %s %s -> 405 method not allowed" % (self.client_address[0],
                                                       self.command, self.path))
            return
        self.reply(error(404, "no such endpoint"))

    do_GET = do_HEAD = do_PUT = do_DELETE = do_PATCH = do_OPTIONS = other_method


class Server(http.server.ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True


def parse_listen(s):
    host, sep, port = s.rpartition(":")
    if not sep or not host or not port.isdigit() or int(port) > 65535:
        raise ValueError("--listen must be HOST:PORT, got %r" % s)
    if host.startswith("[") and host.endswith("]"):
        host = host[1:-1]
    return host, int(port)


def main(argv=None):
    p = argparse.ArgumentParser(description="C2SP tlog-witness test witness (server)")
    p.add_argument("--listen", required=True, help="HOST:PORT (PORT 0: any free port)")
    p.add_argument("--name", required=True, help="witness (cosigner) name")
    p.add_argument("--key-file", required=True, help="Ed25519 key (PKCS#8 PEM), created if missing")
    p.add_argument("--log", action="append", required=True, metavar="NOTE_VKEY",
                   help="trusted log verifier key <origin>+<hex id>+<base64(0x01||key)>")
    p.add_argument("--state", required=True, help="JSON state file")
    args = p.parse_args(argv)

    try:
        host, port = parse_listen(args.listen)
        log_keys = [LogKey(v) for v in args.log]
        cosigner = Cosigner(args.name, load_or_create_witness_key(args.key_file))
        state = State(args.state)
    except (OSError, ValueError, KeyError, TypeError, binascii.Error) as e:
        print("error: %s" % e, file=sys.stderr)
        return 2

    handler = type("WitnessHandler", (Handler,), {"witness": Witness(cosigner, log_keys, state)})
    Server.address_family = socket.AF_INET6 if ":" in host else socket.AF_INET
    try:
        server = Server((host, port), handler)
    except OSError as e:
        print("error: cannot listen on %s: %s" % (args.listen, e), file=sys.stderr)
        return 2
    bound_host, bound_port = server.server_address[:2]
    shown = "[%s]" % bound_host if ":" in bound_host else bound_host

    def stop(signum, frame):
        # shutdown() waits for serve_forever() to return, so call it elsewhere.
        threading.Thread(target=server.shutdown, daemon=True).start()

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)

    print("witness %s listening on %s:%d" % (cosigner.vkey(), shown, bound_port), flush=True)
    for k in log_keys:
        log("trusting log %s+%s" % (k.name, k.kid.hex()))
    try:
        server.serve_forever()
    finally:
        server.server_close()
        with state.lock:  # let an in-flight check+persist+cosign finish
            pass
        log("stopped")
    return 0


if __name__ == "__main__":
    sys.exit(main())
