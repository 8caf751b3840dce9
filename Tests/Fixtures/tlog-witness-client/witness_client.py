#!/usr/bin/env python3
"""Independent C2SP tlog-witness *log client*, used as a test fixture for a witness.

Written from the public C2SP specifications only:

  * c2sp.org/tlog-witness      (add-checkpoint request/response and status codes)
  * c2sp.org/tlog-cosignature  (Ed25519 cosignature, signature type 0x04)
  * c2sp.org/signed-note       (note format, key IDs, Ed25519 type 0x01)
  * c2sp.org/tlog-checkpoint   (checkpoint note text)
  * RFC 6962 section 2.1       (Merkle tree hash and consistency proofs)

Usage:

  witness_client.py keygen --origin ORIGIN --out FILE
      Makes an Ed25519 log signing key, writes it to FILE (JSON, mode 0600) and
      prints the log's note verifier key:
      <origin>+<8 hex key id>+<base64(0x01 || 32-byte public key)>

  witness_client.py drive --url URL --log-key FILE --witness VKEY
      Drives the witness at submission prefix URL (POST URL/add-checkpoint)
      through every answer of add-checkpoint. VKEY is the witness's cosigner
      verifier key <name>+<hex id>+<base64(0x04 || 32-byte Ed25519 key)>.
      The witness must trust the log key in FILE and must never have seen the
      log. One line per step on stdout: "ok <step>" or "FAIL <step>: <why>".
      Exit status 0 only if every step is ok (1 otherwise, 2 on bad usage).

Only the Python standard library and the `cryptography` package are used.
"""

import argparse
import base64
import binascii
import hashlib
import http.client
import json
import os
import secrets
import ssl
import sys
import time
import urllib.parse

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import (
    Ed25519PrivateKey,
    Ed25519PublicKey,
)

EM_DASH = "\u2014"

# signed-note signature type bytes
SIG_TYPE_ED25519 = 0x01
SIG_TYPE_COSIG_V1 = 0x04

# How far a cosignature timestamp may be from our clock (seconds).
CLOCK_SKEW = 300

HTTP_TIMEOUT = 30


# ---------------------------------------------------------------------------
# RFC 6962 section 2.1 Merkle tree
# ---------------------------------------------------------------------------

def _sha256(data):
    return hashlib.sha256(data).digest()


def leaf_hash(data):
    """MTH({d}) = SHA-256(0x00 || d)."""
    return _sha256(b"\x00" + data)


def node_hash(left, right):
    """SHA-256(0x01 || MTH(left) || MTH(right))."""
    return _sha256(b"\x01" + left + right)


def _split_point(n):
    """Largest power of two strictly smaller than n (n >= 2)."""
    if n < 2:
        raise ValueError("split point needs n >= 2")
    k = 1
    while k * 2 < n:
        k *= 2
    return k


def mth(hashes):
    """Merkle Tree Hash over a list of *leaf hashes*."""
    n = len(hashes)
    if n == 0:
        return _sha256(b"")
    if n == 1:
        return hashes[0]
    k = _split_point(n)
    return node_hash(mth(hashes[:k]), mth(hashes[k:]))


def _subproof(m, hashes, complete):
    n = len(hashes)
    if m == n:
        return [] if complete else [mth(hashes)]
    k = _split_point(n)
    if m <= k:
        return _subproof(m, hashes[:k], complete) + [mth(hashes[k:])]
    return _subproof(m - k, hashes[k:], False) + [mth(hashes[:k])]


def consistency_proof(m, hashes):
    """PROOF(m, D[n]) of RFC 6962 section 2.1.2, n = len(hashes).

    Empty for m == 0 (tlog-witness: "The proof MUST be empty if the old size
    is zero") and for m == n.
    """
    n = len(hashes)
    if not 0 <= m <= n:
        raise ValueError("consistency proof needs 0 <= m <= n")
    if m == 0:
        return []
    return _subproof(m, hashes, True)


def verify_consistency(m, n, old_root, new_root, proof):
    """Verify a consistency proof (algorithm of RFC 9162 section 2.1.4.2).

    Written independently of consistency_proof() so the two check each other.
    """
    if m > n:
        return False
    if m == 0:
        return len(proof) == 0
    if m == n:
        return len(proof) == 0 and old_root == new_root
    if len(proof) == 0:
        return False
    if any(len(h) != 32 for h in proof):
        return False
    path = list(proof)
    if m & (m - 1) == 0:  # m is an exact power of two
        path = [old_root] + path
    fn, sn = m - 1, n - 1
    while fn & 1:
        fn >>= 1
        sn >>= 1
    fr = sr = path[0]
    for c in path[1:]:
        if sn == 0:
            return False
        if fn & 1 or fn == sn:
            fr = node_hash(c, fr)
            sr = node_hash(c, sr)
            if not fn & 1:
                while not (fn & 1) and fn != 0:
                    fn >>= 1
                    sn >>= 1
        else:
            sr = node_hash(sr, c)
        fn >>= 1
        sn >>= 1
    return sn == 0 and fr == old_root and sr == new_root


# ---------------------------------------------------------------------------
# signed-note / checkpoint / cosignature
# ---------------------------------------------------------------------------

def b64(data):
    return base64.b64encode(data).decode("ascii")


def b64decode_strict(text):
    return base64.b64decode(text.encode("ascii"), validate=True)


def key_id(name, sig_type, pubkey):
    """SHA-256(key name || 0x0A || signature type || public key)[:4]."""
    return _sha256(name.encode("utf-8") + b"\n" + bytes([sig_type]) + pubkey)[:4]


def raw_public(pub):
    return pub.public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)


def raw_private(priv):
    return priv.private_bytes(
        serialization.Encoding.Raw,
        serialization.PrivateFormat.Raw,
        serialization.NoEncryption(),
    )


def check_key_name(name):
    if not name:
        raise ValueError("key name must be non-empty")
    if "+" in name or any(ch.isspace() for ch in name):
        raise ValueError("key name %r must not contain spaces or '+'" % name)


def note_vkey(name, priv):
    """Ed25519 (type 0x01) note verifier key string."""
    pub = raw_public(priv.public_key())
    kid = key_id(name, SIG_TYPE_ED25519, pub)
    return "%s+%s+%s" % (name, kid.hex(), b64(bytes([SIG_TYPE_ED25519]) + pub))


def parse_cosigner_vkey(vkey):
    """Parse <name>+<hex id>+<base64(0x04 || key)>; returns (name, kid, pubkey)."""
    parts = vkey.split("+", 2)  # the base64 part may itself contain '+'
    if len(parts) != 3:
        raise ValueError("verifier key must be <name>+<hex id>+<base64 key>")
    name, hexid, keyb64 = parts
    check_key_name(name)
    if len(hexid) != 8:
        raise ValueError("key id must be 8 hex digits")
    try:
        kid = bytes.fromhex(hexid)
        material = b64decode_strict(keyb64)
    except (ValueError, binascii.Error) as e:
        raise ValueError("bad verifier key encoding: %s" % e)
    if len(material) != 33 or material[0] != SIG_TYPE_COSIG_V1:
        raise ValueError(
            "witness key must be type 0x04 (timestamped Ed25519 cosignature) "
            "with a 32-byte key"
        )
    pub = material[1:]
    if key_id(name, SIG_TYPE_COSIG_V1, pub) != kid:
        raise ValueError(
            "key id %s does not match SHA-256(name||0x0A||0x04||key)[:4] = %s"
            % (hexid, key_id(name, SIG_TYPE_COSIG_V1, pub).hex())
        )
    return name, kid, pub


def checkpoint_text(origin, size, root):
    return "%s\n%d\n%s\n" % (origin, size, b64(root))


def signature_line(name, kid, sig):
    return "%s %s %s\n" % (EM_DASH, name, b64(kid + sig))


def sign_note(text, signers):
    """signers: list of (name, Ed25519PrivateKey). Returns the signed note."""
    lines = ""
    for name, priv in signers:
        kid = key_id(name, SIG_TYPE_ED25519, raw_public(priv.public_key()))
        lines += signature_line(name, kid, priv.sign(text.encode("utf-8")))
    return text + "\n" + lines


def open_note(note, name, pub):
    """Minimal signed-note verifier for one Ed25519 (0x01) key; returns the text.

    Used only for self-checks of what this client signs.
    """
    idx = note.rfind("\n\n")
    if idx < 0:
        raise ValueError("no signature block")
    text, sigs = note[: idx + 1], note[idx + 2:]
    if not sigs.endswith("\n"):
        raise ValueError("signature block must end in newline")
    kid = key_id(name, SIG_TYPE_ED25519, pub)
    verified = False
    for line in sigs[:-1].split("\n"):
        if not line.startswith(EM_DASH + " "):
            raise ValueError("malformed signature line %r" % line)
        lname, _, sig64 = line[2:].partition(" ")
        raw = b64decode_strict(sig64)
        if lname != name or raw[:4] != kid:
            continue
        Ed25519PublicKey.from_public_bytes(pub).verify(raw[4:], text.encode("utf-8"))
        verified = True
    if not verified:
        raise ValueError("no verified signature from %s" % name)
    return text


def cosigned_message(timestamp, text):
    return ("cosignature/v1\ntime %d\n" % timestamp + text).encode("utf-8")


def verify_cosignature_body(body, text, wname, wkid, wpub, not_before, not_after):
    """Check an add-checkpoint 200 body. Returns None if fine, else a reason.

    The body must be one or more note signature lines ("— name base64\\n").
    Lines for other keys are ignored (tlog-witness: "The client MUST ignore
    any cosignatures from unknown keys"); at least one line must match the
    witness name and key id, and every matching line must verify.
    """
    try:
        s = body.decode("utf-8")
    except UnicodeDecodeError:
        return "response body is not UTF-8"
    if not s:
        return "empty response body (expected cosignature line(s))"
    if not s.endswith("\n"):
        return "response body does not end in a newline"
    good = 0
    for line in s[:-1].split("\n"):
        if not line.startswith(EM_DASH + " "):
            return "not a note signature line: %r" % line
        fields = line[2:].split(" ")
        if len(fields) != 2 or not fields[0]:
            return "malformed signature line: %r" % line
        name, sig64 = fields
        try:
            raw = b64decode_strict(sig64)
        except (ValueError, binascii.Error):
            return "signature line is not base64: %r" % line
        if len(raw) < 4:
            return "signature shorter than a key id: %r" % line
        if name != wname or raw[:4] != wkid:
            continue  # unknown key: ignore
        if len(raw) != 4 + 8 + 64:
            return "cosignature has %d bytes, want 4+8+64: %r" % (len(raw), line)
        ts = int.from_bytes(raw[4:12], "big")
        if ts > 2 ** 63 - 1:
            return "cosignature timestamp %d exceeds 2^63-1" % ts
        try:
            Ed25519PublicKey.from_public_bytes(wpub).verify(
                raw[12:], cosigned_message(ts, text))
        except InvalidSignature:
            return "cosignature from %s does not verify (time %d): %r" % (wname, ts, line)
        if not (not_before - CLOCK_SKEW <= ts <= not_after + CLOCK_SKEW):
            return "cosignature timestamp %d is more than %ds from now (%d)" % (
                ts, CLOCK_SKEW, int(not_after))
        good += 1
    if good == 0:
        return "no cosignature line with name %r and key id %s" % (wname, wkid.hex())
    return None


# ---------------------------------------------------------------------------
# HTTP
# ---------------------------------------------------------------------------

def request_body(old, proof, note):
    """tlog-witness add-checkpoint request body."""
    out = "old %d\n" % old
    for h in proof:
        out += b64(h) + "\n"
    out += "\n" + note
    return out.encode("utf-8")


class Response(object):
    def __init__(self, status, content_type, body):
        self.status = status
        self.content_type = content_type
        self.body = body

    def describe(self):
        text = self.body.decode("utf-8", "replace")
        if len(text) > 600:
            text = text[:600] + "...(%d bytes)" % len(self.body)
        return "HTTP %d, Content-Type %r, body %r" % (
            self.status, self.content_type, text)


def post_add_checkpoint(url, body):
    u = urllib.parse.urlsplit(url)
    if u.scheme not in ("http", "https") or not u.hostname:
        raise ValueError("URL must be http(s)://host[:port]/prefix")
    path = u.path.rstrip("/") + "/add-checkpoint"
    if u.query:
        path += "?" + u.query
    if u.scheme == "https":
        conn = http.client.HTTPSConnection(
            u.hostname, u.port, timeout=HTTP_TIMEOUT,
            context=ssl.create_default_context())
    else:
        conn = http.client.HTTPConnection(u.hostname, u.port, timeout=HTTP_TIMEOUT)
    try:
        conn.request("POST", path, body=body, headers={
            "User-Agent": "c2sp-tlog-witness-test-client/1",
        })
        resp = conn.getresponse()
        data = resp.read()
        return Response(resp.status, resp.getheader("Content-Type", ""), data)
    finally:
        conn.close()


# ---------------------------------------------------------------------------
# key file
# ---------------------------------------------------------------------------

def write_key_file(path, origin, priv):
    data = json.dumps({
        "format": "c2sp-tlog-witness-test-client log key v1",
        "origin": origin,
        "ed25519_seed": b64(raw_private(priv)),
    }, indent=2) + "\n"
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    try:
        os.fchmod(fd, 0o600)
        os.write(fd, data.encode("utf-8"))
    finally:
        os.close(fd)


def read_key_file(path):
    with open(path, "r", encoding="utf-8") as f:
        obj = json.load(f)
    origin = obj["origin"]
    seed = b64decode_strict(obj["ed25519_seed"])
    if len(seed) != 32:
        raise ValueError("bad seed length in key file")
    return origin, Ed25519PrivateKey.from_private_bytes(seed)


# ---------------------------------------------------------------------------
# drive
# ---------------------------------------------------------------------------

class StepFailed(Exception):
    pass


class Log(object):
    """An in-memory log: a list of leaves, signing checkpoints on demand."""

    def __init__(self, origin, priv, leaves):
        self.origin = origin
        self.priv = priv
        self.hashes = [leaf_hash(x) for x in leaves]

    def root(self, size):
        return mth(self.hashes[:size])

    def text(self, size):
        return checkpoint_text(self.origin, size, self.root(size))

    def proof(self, old, size):
        return consistency_proof(old, self.hashes[:size])

    def note(self, size, signers=None):
        if signers is None:
            signers = [(self.origin, self.priv)]
        return sign_note(self.text(size), signers)


class Driver(object):
    # Tree sizes. 8 is a power of two, so "grow" exercises the RFC 6962 case
    # where the proof omits the old root; 13 -> 20 gives a multi-hash proof.
    N1, N2, N3 = 8, 13, 20
    BAD_PROOF_SIZE = 27
    FORK_SIZE = 31
    FORK_LEAF = 3            # leaf changed below N3 for the forked tree
    OTHER_ROOT_LEAF = 19     # leaf changed for same-size-other-root
    OLDER_SIZE = 17          # for old-above-size (old = N3 > 17)
    UNTRUSTED_SIZE = 24
    AFTER_SIZE = 37

    def __init__(self, url, origin, priv, wname, wkid, wpub):
        self.url = url
        self.wname, self.wkid, self.wpub = wname, wkid, wpub
        leaves = [secrets.token_bytes(32) for _ in range(64)]
        self.log = Log(origin, priv, leaves)
        fork_leaves = list(leaves)
        fork_leaves[self.FORK_LEAF] = secrets.token_bytes(32)
        self.fork = Log(origin, priv, fork_leaves)
        other_leaves = list(leaves)
        other_leaves[self.OTHER_ROOT_LEAF] = secrets.token_bytes(32)
        self.other = Log(origin, priv, other_leaves)
        self.results = []

    # -- helpers --------------------------------------------------------

    def send(self, old, proof, note):
        t0 = time.time()
        resp = post_add_checkpoint(self.url, request_body(old, proof, note))
        t1 = time.time()
        return resp, t0, t1

    def expect_cosigned(self, old, proof, note, text):
        resp, t0, t1 = self.send(old, proof, note)
        if resp.status != 200:
            raise StepFailed("want 200 with a cosignature; got " + resp.describe())
        why = verify_cosignature_body(
            resp.body, text, self.wname, self.wkid, self.wpub, t0, t1)
        if why:
            raise StepFailed(why + "; got " + resp.describe())

    def expect_status(self, want, old, proof, note, what):
        resp, _, _ = self.send(old, proof, note)
        if resp.status != want:
            raise StepFailed("%s: want %d; got %s" % (what, want, resp.describe()))
        return resp

    def step(self, name, fn):
        try:
            fn()
        except StepFailed as e:
            self.report(name, False, str(e))
        except (OSError, http.client.HTTPException) as e:
            self.report(name, False, "request error: %s: %s" % (type(e).__name__, e))
        else:
            self.report(name, True, "")

    def report(self, name, ok, why):
        self.results.append(ok)
        if ok:
            print("ok %s" % name, flush=True)
        else:
            print("FAIL %s: %s" % (name, " ".join(why.split("\n"))), flush=True)

    @staticmethod
    def sanity(cond, what):
        """Self-check of this fixture (not of the witness)."""
        if not cond:
            raise AssertionError("fixture self-check failed: " + what)

    # -- steps ----------------------------------------------------------

    def first(self):
        L = self.log
        self.expect_cosigned(0, [], L.note(self.N1), L.text(self.N1))

    def grow(self):
        L = self.log
        proof = L.proof(self.N1, self.N2)
        self.sanity(verify_consistency(self.N1, self.N2, L.root(self.N1),
                                       L.root(self.N2), proof), "grow proof")
        self.expect_cosigned(self.N1, proof, L.note(self.N2), L.text(self.N2))

    def stale_old(self):
        L = self.log
        proof = L.proof(self.N1, self.N3)
        self.sanity(verify_consistency(self.N1, self.N3, L.root(self.N1),
                                       L.root(self.N3), proof), "stale-old proof")
        resp = self.expect_status(409, self.N1, proof, L.note(self.N3),
                                  "old size %d but witness is at %d" % (self.N1, self.N2))
        media = resp.content_type.split(";")[0].strip().lower()
        if media != "text/x.tlog.size":
            raise StepFailed("409 Content-Type must be text/x.tlog.size; got "
                             + resp.describe())
        want = ("%d\n" % self.N2).encode("ascii")
        if resp.body != want:
            raise StepFailed("409 body must be %r; got %s" % (want.decode(), resp.describe()))

    def retry(self):
        L = self.log
        proof = L.proof(self.N2, self.N3)
        self.sanity(verify_consistency(self.N2, self.N3, L.root(self.N2),
                                       L.root(self.N3), proof), "retry proof")
        self.expect_cosigned(self.N2, proof, L.note(self.N3), L.text(self.N3))

    def same_size(self):
        L = self.log
        self.expect_cosigned(self.N3, [], L.note(self.N3), L.text(self.N3))

    def same_size_other_root(self):
        O = self.other
        self.sanity(O.root(self.N3) != self.log.root(self.N3), "other root differs")
        self.expect_status(409, self.N3, [], O.note(self.N3),
                           "old = checkpoint size = %d but a different root hash" % self.N3)

    def bad_proof(self):
        L = self.log
        S, T = self.N3, self.BAD_PROOF_SIZE
        proof = L.proof(S, T)
        self.sanity(len(proof) >= 2, "bad-proof proof has several hashes")
        bad = list(proof)
        i = len(bad) // 2
        bad[i] = bytes([bad[i][0] ^ 0x01]) + bad[i][1:]
        self.sanity(verify_consistency(S, T, L.root(S), L.root(T), proof),
                    "bad-proof: honest proof verifies")
        self.sanity(not verify_consistency(S, T, L.root(S), L.root(T), bad),
                    "bad-proof: altered proof fails")
        self.expect_status(422, S, bad, L.note(T),
                           "consistency proof %d->%d with hash #%d altered" % (S, T, i))

    def fork_step(self):
        L, F = self.log, self.fork
        S, T = self.N3, self.FORK_SIZE
        proof = F.proof(S, T)
        self.sanity(verify_consistency(S, T, F.root(S), F.root(T), proof),
                    "fork proof is valid within the forked tree")
        self.sanity(not verify_consistency(S, T, L.root(S), F.root(T), proof),
                    "fork proof fails against the witnessed root")
        self.expect_status(422, S, proof, F.note(T),
                           "checkpoint %d of a forked tree (leaf %d changed)"
                           % (T, self.FORK_LEAF))

    def old_above_size(self):
        L = self.log
        self.expect_status(400, self.N3, [], L.note(self.OLDER_SIZE),
                           "old %d > checkpoint size %d" % (self.N3, self.OLDER_SIZE))

    def unknown_origin(self):
        origin = "unknown.invalid/log-" + secrets.token_hex(8)
        priv = Ed25519PrivateKey.generate()
        U = Log(origin, priv, [secrets.token_bytes(32) for _ in range(3)])
        self.expect_status(404, 0, [], U.note(3), "origin %r" % origin)

    def untrusted_signature(self):
        L = self.log
        S, T = self.N3, self.UNTRUSTED_SIZE
        trusted_kid = key_id(L.origin, SIG_TYPE_ED25519, raw_public(L.priv.public_key()))
        while True:
            other = Ed25519PrivateKey.generate()
            if key_id(L.origin, SIG_TYPE_ED25519, raw_public(other.public_key())) != trusted_kid:
                break
        note = L.note(T, signers=[(L.origin, other)])
        self.expect_status(403, S, L.proof(S, T), note,
                           "checkpoint signed by another key named %r" % L.origin)

    def corrupted_signature(self):
        L = self.log
        S, T = self.N3, self.UNTRUSTED_SIZE
        text = L.text(T)
        kid = key_id(L.origin, SIG_TYPE_ED25519, raw_public(L.priv.public_key()))
        sig = bytearray(L.priv.sign(text.encode("utf-8")))
        sig[10] ^= 0x40
        note = text + "\n" + signature_line(L.origin, kid, bytes(sig))
        self.expect_status(403, S, L.proof(S, T), note,
                           "right key id, corrupted Ed25519 signature")

    def after(self):
        L = self.log
        S, T = self.N3, self.AFTER_SIZE
        proof = L.proof(S, T)
        self.sanity(verify_consistency(S, T, L.root(S), L.root(T), proof), "after proof")
        self.expect_cosigned(S, proof, L.note(T), L.text(T))

    def run(self):
        self.step("first", self.first)
        self.step("grow", self.grow)
        self.step("stale-old", self.stale_old)
        self.step("retry", self.retry)
        self.step("same-size", self.same_size)
        self.step("same-size-other-root", self.same_size_other_root)
        self.step("bad-proof", self.bad_proof)
        self.step("fork", self.fork_step)
        self.step("old-above-size", self.old_above_size)
        self.step("unknown-origin", self.unknown_origin)
        self.step("untrusted-signature", self.untrusted_signature)
        self.step("corrupted-signature", self.corrupted_signature)
        self.step("after", self.after)
        return all(self.results)


# ---------------------------------------------------------------------------
# main
# ---------------------------------------------------------------------------

def cmd_keygen(args):
    check_key_name(args.origin)
    priv = Ed25519PrivateKey.generate()
    write_key_file(args.out, args.origin, priv)
    print(note_vkey(args.origin, priv))
    return 0


def cmd_drive(args):
    try:
        origin, priv = read_key_file(args.log_key)
        wname, wkid, wpub = parse_cosigner_vkey(args.witness)
    except (OSError, ValueError, KeyError) as e:
        print("error: %s" % e, file=sys.stderr)
        return 2
    print("# log %s, witness %s, url %s" % (note_vkey(origin, priv), args.witness, args.url),
          file=sys.stderr)
    return 0 if Driver(args.url, origin, priv, wname, wkid, wpub).run() else 1


def main(argv=None):
    p = argparse.ArgumentParser(description="C2SP tlog-witness test log client")
    sub = p.add_subparsers(dest="cmd")
    sub.required = True
    k = sub.add_parser("keygen", help="make a log signing key")
    k.add_argument("--origin", required=True)
    k.add_argument("--out", required=True)
    d = sub.add_parser("drive", help="drive a witness through add-checkpoint")
    d.add_argument("--url", required=True)
    d.add_argument("--log-key", required=True)
    d.add_argument("--witness", required=True)
    args = p.parse_args(argv)
    if args.cmd == "keygen":
        try:
            return cmd_keygen(args)
        except (OSError, ValueError) as e:
            print("error: %s" % e, file=sys.stderr)
            return 2
    return cmd_drive(args)


if __name__ == "__main__":
    sys.exit(main())
