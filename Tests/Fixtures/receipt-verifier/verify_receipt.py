#!/usr/bin/env python3
"""Independent verifier for photosd receipts, written from docs/receipts.md alone.

Usage:
    verify_receipt.py RECEIPT_FILE --key NOTE_KEY [--key NOTE_KEY ...]
        prints `valid` (exit 0) or `invalid <step>: <reason>` (exit 3);
        a malformed key or bad usage exits 64 with the reason on stderr.
    verify_receipt.py --vectors DIR
        checks every DIR/*.json test vector; prints `<name> ok` or
        `<name> MISMATCH expected=<...> got=<...>`; exit 0 only if all match.

Only the Python standard library and `cryptography` (for Ed25519) are used.
"""

import base64
import binascii
import hashlib
import json
import os
import re
import sys
import unicodedata

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

STEPS = ("format", "rows", "chain", "leaf", "checkpoint", "inclusion", "signature")
EX_OK, EX_INVALID, EX_USAGE = 0, 3, 64

HEX64 = re.compile(r"[0-9a-f]{64}")
DECIMAL = re.compile(r"0|[1-9][0-9]*")
HEX8 = re.compile(r"[0-9A-Fa-f]{8}")
EM_DASH = "\u2014"

TOP_REQUIRED = {"sessionId", "rows", "inclusion", "checkpoint"}
TOP_ALLOWED = TOP_REQUIRED | {"previousHash"}
INCLUSION_KEYS = {"logIndex", "treeSize", "hashes"}
CONTENT_KEYS = ("sessionId", "seq", "at", "actor", "userId", "username",
                "coordinator", "step", "screen", "detail", "hash")
REDACTED_KEYS = {"seq", "hash", "redacted"}


class Fail(Exception):
    def __init__(self, step, reason):
        super().__init__(reason)
        self.step = step
        self.reason = reason


class UsageError(Exception):
    pass


# ---------------------------------------------------------------- helpers

def is_int(v):
    # bool is a subclass of int in Python; JSON true/false are not integers.
    return type(v) is int


def strict_b64(s):
    """RFC 4648 standard alphabet with '=' padding (length a multiple of 4).
    Non-zero padding bits are ignored, as the spec allows ("a decoder may ignore
    non-zero padding bits, as Go's does") and genuine-base64-padding-bits.json needs.
    Returns bytes or None."""
    if not isinstance(s, str) or not s or len(s) % 4 != 0:
        return None
    if not re.fullmatch(r"[A-Za-z0-9+/]*={0,2}", s):
        return None
    try:
        return base64.b64decode(s, validate=True)
    except (binascii.Error, ValueError):
        return None


def has_lone_surrogate(s):
    return any(0xD800 <= ord(c) <= 0xDFFF for c in s)


# ---------------------------------------------------------------- step 1: format


def _reject_float(text):
    raise Fail("format", "number %r is not an integer" % text)


def _reject_constant(text):
    raise Fail("format", "%s is not JSON" % text)


INT64_MIN, INT64_MAX = -(1 << 63), (1 << 63) - 1


def _parse_int(text):
    # json only hands us -?(0|[1-9][0-9]*) here (digits with an optional minus sign).
    # Every integer must fit a signed 64-bit integer, else format.
    if len(text.lstrip("-")) > 19:  # 2**63 - 1 has 19 digits; also spares int() huge texts
        raise Fail("format", "integer %s... does not fit a signed 64-bit integer" % text[:24])
    v = int(text)
    if not INT64_MIN <= v <= INT64_MAX:
        raise Fail("format", "integer %s does not fit a signed 64-bit integer" % text)
    return v


def _pairs_hook(pairs):
    obj = {}
    for k, v in pairs:
        if has_lone_surrogate(k):
            raise Fail("format", "key with an unpaired surrogate escape")
        if k in obj:
            raise Fail("format", "duplicate key %r" % k)
        obj[k] = v
    return obj


def _walk_strings(v):
    stack = [v]  # iterative: the parser already limits depth, but keep this flat
    while stack:
        x = stack.pop()
        if isinstance(x, str):
            yield x
        elif isinstance(x, list):
            stack.extend(x)
        elif isinstance(x, dict):
            stack.extend(x.values())


def parse_strict(data):
    try:
        text = data.decode("utf-8")  # strict: no invalid or overlong sequences, no CESU
    except UnicodeDecodeError as e:
        raise Fail("format", "not UTF-8: %s" % e)
    if text.startswith("\ufeff"):
        raise Fail("format", "byte order mark")
    try:
        value = json.loads(text, object_pairs_hook=_pairs_hook, parse_float=_reject_float,
                           parse_constant=_reject_constant, parse_int=_parse_int)
    except Fail:
        raise
    except RecursionError:
        raise Fail("format", "nested too deep")
    except ValueError as e:  # JSONDecodeError is a ValueError; includes trailing text
        raise Fail("format", "not JSON: %s" % e)
    for s in _walk_strings(value):
        if has_lone_surrogate(s):
            raise Fail("format", "string with an unpaired surrogate escape")
    return value


def check_format(r):
    if not isinstance(r, dict):
        raise Fail("format", "top level is not an object")
    keys = set(r)
    if keys - TOP_ALLOWED:
        raise Fail("format", "unknown top-level key %r" % sorted(keys - TOP_ALLOWED)[0])
    if TOP_REQUIRED - keys:
        raise Fail("format", "missing top-level key %r" % sorted(TOP_REQUIRED - keys)[0])
    if not isinstance(r["sessionId"], str):
        raise Fail("format", "sessionId is not a string")
    if "previousHash" in r and not isinstance(r["previousHash"], str):
        raise Fail("format", "previousHash is not a string")
    if not isinstance(r["checkpoint"], str):
        raise Fail("format", "checkpoint is not a string")
    inc = r["inclusion"]
    if not isinstance(inc, dict):
        raise Fail("format", "inclusion is not an object")
    ikeys = set(inc)
    if ikeys != INCLUSION_KEYS:
        bad = sorted(ikeys ^ INCLUSION_KEYS)[0]
        raise Fail("format", "inclusion key %r %s" % (bad, "unknown" if bad in ikeys else "missing"))
    for k in ("logIndex", "treeSize"):
        if not is_int(inc[k]):
            raise Fail("format", "inclusion.%s is not an integer" % k)
    if not isinstance(inc["hashes"], list) or not all(isinstance(h, str) for h in inc["hashes"]):
        raise Fail("format", "inclusion.hashes is not an array of strings")
    rows = r["rows"]
    if not isinstance(rows, list):
        raise Fail("format", "rows is not an array")
    if not rows:
        raise Fail("format", "rows is empty")
    for i, row in enumerate(rows):
        check_row_format(i, row)


def check_row_format(i, row):
    where = "row %d" % i
    if not isinstance(row, dict):
        raise Fail("format", "%s is not an object" % where)
    keys = set(row)
    if "redacted" in row:
        if keys != REDACTED_KEYS:
            bad = sorted(keys ^ REDACTED_KEYS)[0]
            raise Fail("format", "%s (redacted): key %r %s" % (where, bad, "not allowed" if bad in keys else "missing"))
        if row["redacted"] is not True:
            raise Fail("format", "%s: redacted is not true" % where)
    else:
        ck = set(CONTENT_KEYS)
        if keys != ck:
            bad = sorted(keys ^ ck)[0]
            raise Fail("format", "%s: key %r %s" % (where, bad, "not allowed" if bad in keys else "missing"))
        for k in ("sessionId", "at", "actor", "step", "detail"):
            if not isinstance(row[k], str):
                raise Fail("format", "%s: %s is not a string" % (where, k))
        for k in ("username", "coordinator", "screen"):
            if row[k] is not None and not isinstance(row[k], str):
                raise Fail("format", "%s: %s is not a string or null" % (where, k))
        if row["userId"] is not None and not is_int(row["userId"]):
            raise Fail("format", "%s: userId is not an integer or null" % where)
    if not is_int(row["seq"]):
        raise Fail("format", "%s: seq is not an integer" % where)
    if row["seq"] < 1:
        raise Fail("format", "%s: seq is below 1" % where)
    if not isinstance(row["hash"], str):
        raise Fail("format", "%s: hash is not a string" % where)


# ---------------------------------------------------------------- step 2: rows and chain

def _field(v):
    if v is None:
        return b"~"
    if is_int(v):
        b = str(v).encode("ascii")
    else:
        b = v.encode("utf-8")
    return str(len(b)).encode("ascii") + b":" + b


def row_hash_bytes(prev, row):
    parts = [prev, row["sessionId"], row["seq"], row["at"], row["actor"], row["userId"],
             row["username"], row["coordinator"], row["step"], row["screen"], row["detail"]]
    return b"".join(_field(p) for p in parts)


def check_chain(r):
    rows = r["rows"]
    first = rows[0]["seq"]
    if first == 1:
        if "previousHash" in r:
            raise Fail("chain", "previousHash present although the first row is seq 1")
        prev = "0" * 64
    else:
        if "previousHash" not in r:
            raise Fail("chain", "first row is seq %d but previousHash is absent" % first)
        if not HEX64.fullmatch(r["previousHash"]):
            raise Fail("chain", "previousHash is not 64 lowercase hex digits")
        prev = r["previousHash"]
    redacted = []
    for i, row in enumerate(rows):
        if row["seq"] != first + i:
            raise Fail("chain", "row %d has seq %d, expected %d" % (i, row["seq"], first + i))
        if not HEX64.fullmatch(row["hash"]):
            raise Fail("rows", "seq %d: hash is not 64 lowercase hex digits" % row["seq"])
        if row.get("redacted") is True:
            redacted.append(row["seq"])
        else:
            if row["sessionId"] != r["sessionId"]:
                raise Fail("rows", "seq %d: sessionId differs from the receipt's" % row["seq"])
            got = hashlib.sha256(row_hash_bytes(prev, row)).hexdigest()
            if got != row["hash"]:
                raise Fail("rows", "seq %d: fields hash to %s, row says %s" % (row["seq"], got, row["hash"]))
        prev = row["hash"]
    return redacted


# ---------------------------------------------------------------- step 3: leaf

def check_leaf(r):
    leaf_data = bytes.fromhex(r["rows"][-1]["hash"])
    leaf_hash = hashlib.sha256(b"\x00" + leaf_data).digest()
    inc = r["inclusion"]
    if not (0 <= inc["logIndex"] < inc["treeSize"]):
        raise Fail("leaf", "logIndex %d is not in [0, %d)" % (inc["logIndex"], inc["treeSize"]))
    return leaf_hash


# ---------------------------------------------------------------- step 4: checkpoint

def parse_note(note):
    for c in note:
        if c != "\n" and unicodedata.category(c) == "Cc":
            raise Fail("checkpoint", "control character U+%04X" % ord(c))
    cut = note.rfind("\n\n")
    if cut < 0:
        raise Fail("checkpoint", "no blank line before the signatures")
    signed_text = note[:cut] + "\n"
    sig_part = note[cut + 2:]
    if not sig_part.endswith("\n"):
        raise Fail("checkpoint", "signature part does not end with a newline")
    lines = sig_part[:-1].split("\n")
    if not 1 <= len(lines) <= 100:
        raise Fail("checkpoint", "%d signature lines" % len(lines))
    sigs = []
    for line in lines:
        if not line.startswith(EM_DASH + " "):
            raise Fail("checkpoint", "signature line does not start with an em dash and a space")
        rest = line[2:].split(" ")
        if len(rest) != 2:
            raise Fail("checkpoint", "signature line is not '\u2014 <name> <base64>'")
        name, b64 = rest
        if not name or "+" in name:
            raise Fail("checkpoint", "bad signer name %r" % name)
        raw = strict_b64(b64)
        if raw is None or len(raw) < 5:
            raise Fail("checkpoint", "signature of %s is not base64 of at least 5 bytes" % name)
        sigs.append((name, int.from_bytes(raw[:4], "big"), raw[4:]))

    body = signed_text[:-1].split("\n")
    if len(body) < 3:
        raise Fail("checkpoint", "checkpoint body has fewer than three lines")
    origin, size_text, root_text = body[0], body[1], body[2]
    if not origin:
        raise Fail("checkpoint", "empty origin")
    if not DECIMAL.fullmatch(size_text):
        raise Fail("checkpoint", "tree size %r is not a plain decimal" % size_text)
    root = strict_b64(root_text)
    if root is None or len(root) != 32:
        raise Fail("checkpoint", "root hash is not base64 of 32 bytes")
    for ext in body[3:]:
        if not ext:
            raise Fail("checkpoint", "empty extension line")
    return {"origin": origin, "size": int(size_text), "root": root,
            "text": signed_text, "sigs": sigs}


def check_checkpoint(r):
    cp = parse_note(r["checkpoint"])
    if cp["size"] != r["inclusion"]["treeSize"]:
        raise Fail("checkpoint", "checkpoint tree size %d != inclusion.treeSize %d"
                   % (cp["size"], r["inclusion"]["treeSize"]))
    return cp


# ---------------------------------------------------------------- step 5: inclusion

def check_inclusion(r, leaf_hash, root):
    proof = []
    for h in r["inclusion"]["hashes"]:
        b = strict_b64(h)
        if b is None or len(b) != 32:
            raise Fail("inclusion", "proof entry is not base64 of 32 bytes")
        proof.append(b)
    fn = r["inclusion"]["logIndex"]
    sn = r["inclusion"]["treeSize"] - 1
    h = leaf_hash
    for p in proof:
        if sn == 0:
            raise Fail("inclusion", "proof is too long")
        if fn % 2 == 1 or fn == sn:
            h = hashlib.sha256(b"\x01" + p + h).digest()
            if fn % 2 == 0:
                while fn % 2 == 0 and fn != 0:
                    fn >>= 1
                    sn >>= 1
        else:
            h = hashlib.sha256(b"\x01" + h + p).digest()
        fn >>= 1
        sn >>= 1
    if sn != 0:
        raise Fail("inclusion", "proof is too short")
    if h != root:
        raise Fail("inclusion", "proof does not lead to the checkpoint's root")


# ---------------------------------------------------------------- step 6: signature

def parse_key(text):
    """`<name>+<key id>+<base64>` -> (name, key id int, Ed25519PublicKey). Raises UsageError."""
    parts = text.split("+", 2)
    if len(parts) != 3:
        raise UsageError("key is not <name>+<key id>+<base64>")
    name, kid, b64 = parts
    if not name or " " in name or any(unicodedata.category(c) == "Cc" for c in name):
        raise UsageError("key name %r is empty or has a space or control character" % name)
    if not HEX8.fullmatch(kid):
        raise UsageError("key id %r is not 8 hex digits" % kid)
    raw = strict_b64(b64)
    if raw is None or len(raw) != 33 or raw[0] != 0x01:
        raise UsageError("key is not base64 of 0x01 + a 32-byte Ed25519 public key")
    want = hashlib.sha256(name.encode("utf-8") + b"\n" + raw).digest()[:4]
    if int(kid, 16) != int.from_bytes(want, "big"):
        raise UsageError("key id %s does not match the key (should be %s)" % (kid, want.hex()))
    return name, int(kid, 16), Ed25519PublicKey.from_public_bytes(raw[1:])


def check_signature(cp, keys):
    msg = cp["text"].encode("utf-8")
    candidates = [k for k in keys if k[0] == cp["origin"]]
    if not candidates:
        raise Fail("signature", "no trusted key is named after the origin %r" % cp["origin"])
    for name, kid, pub in candidates:
        for sname, skid, sig in cp["sigs"]:
            if sname != name or skid != kid or len(sig) != 64:
                continue
            try:
                pub.verify(sig, msg)
                return
            except InvalidSignature:
                pass
    raise Fail("signature", "no valid signature by a trusted key for origin %r" % cp["origin"])


# ---------------------------------------------------------------- the whole check

def verify(data, keys):
    """Returns (None, redacted seqs) when valid, else raises Fail."""
    r = parse_strict(data)
    check_format(r)
    redacted = check_chain(r)
    leaf_hash = check_leaf(r)
    cp = check_checkpoint(r)
    check_inclusion(r, leaf_hash, cp["root"])
    check_signature(cp, keys)
    return redacted


def verdict(data, keys):
    try:
        redacted = verify(data, keys)
        return ("valid", None, redacted)
    except Fail as f:
        return ("invalid", f.step, f.reason)


# ---------------------------------------------------------------- test vectors

def _vector_pairs(pairs):
    obj = {}
    for k, v in pairs:
        if k in obj:
            raise ValueError("vector file has key %r twice" % k)
        obj[k] = v
    return obj


def _serializations(receipt):
    """An object receipt, written by an ordinary JSON writer ("serialize it with any JSON
    writer ...; no verdict depends on key order, spacing or escapes"). The first is the one
    whose verdict counts; the others must give the same verdict."""
    yield "compact", json.dumps(receipt, separators=(",", ":")).encode("utf-8")
    yield "sorted+indented+raw UTF-8", json.dumps(
        receipt, sort_keys=True, indent=2, ensure_ascii=False).encode("utf-8")
    yield "default+\\u escapes", json.dumps(receipt, ensure_ascii=True).encode("utf-8")


def _check_example(vec, receipt_bytes):
    """genuine-start.json's `example`: the first row's hashed bytes (example.preimage) and
    hash (example.hash). Returns None or the reason it disagrees."""
    ex = vec["example"]
    if not isinstance(ex, dict) or not isinstance(ex.get("preimage"), str) \
            or not isinstance(ex.get("hash"), str):
        return "example is not an object with strings preimage and hash"
    r = parse_strict(receipt_bytes)
    row = r["rows"][0]
    prev = r.get("previousHash", "0" * 64)
    mine = row_hash_bytes(prev, row)
    if ex["preimage"].encode("utf-8") != mine:
        return "example.preimage differs from the first row's hashed bytes"
    if hashlib.sha256(mine).hexdigest() != ex["hash"] or ex["hash"] != row["hash"]:
        return "example.hash differs from the first row's hash"
    return None


def run_vectors(directory):
    names = sorted(n for n in os.listdir(directory) if n.endswith(".json"))
    if not names:
        print("no vectors in %s" % directory, file=sys.stderr)
        return EX_USAGE
    all_ok = True
    for n in names:
        path = os.path.join(directory, n)
        expected = "?"
        try:
            with open(path, "rb") as f:
                vec = json.loads(f.read().decode("utf-8"), object_pairs_hook=_vector_pairs)
            valid, fails_at = vec["valid"], vec["failsAt"]
            if valid is True and fails_at is None:
                expected = "valid"
            elif valid is False and fails_at in STEPS:
                expected = "invalid %s" % fails_at
            else:
                raise ValueError("valid=%r with failsAt=%r" % (valid, fails_at))
            receipt = vec["receipt"]
            if isinstance(receipt, str):  # the receipt file's exact text
                files = [("exact text", receipt.encode("utf-8"))]
            elif isinstance(receipt, dict):
                files = list(_serializations(receipt))
            else:
                raise ValueError("receipt is neither an object nor a string")
            key = parse_key(vec["key"])
        except UsageError as e:
            print("%s MISMATCH expected=%s got=bad-key (%s)" % (n, expected, e))
            all_ok = False
            continue
        except Exception as e:  # a vector we cannot read
            print("%s MISMATCH expected=%s got=unreadable vector (%s)" % (n, expected, e))
            all_ok = False
            continue
        results = []
        for how, data in files:
            status, step, reason = verdict(data, [key])
            got = "valid" if status == "valid" else "invalid %s" % step
            results.append((how, got, "" if status == "valid" else " (%s)" % reason))
        how, got, why = results[0]
        problems = []
        if got != expected:
            problems.append("expected=%s got=%s%s" % (expected, got, why))
        for how2, got2, why2 in results[1:]:
            if got2 != got:
                problems.append("written %s the verdict is %s%s, not %s" % (how2, got2, why2, got))
        if "example" in vec:
            try:
                bad = _check_example(vec, files[0][1])
            except Exception as e:
                bad = "example cannot be checked (%s)" % e
            if bad:
                problems.append(bad)
        if problems:
            all_ok = False
            print("%s MISMATCH %s" % (n, "; ".join(problems)))
        else:
            print("%s ok" % n)
    return EX_OK if all_ok else 1


# ---------------------------------------------------------------- command line

def usage_error(msg):
    print("verify_receipt: %s" % msg, file=sys.stderr)
    print("usage: verify_receipt.py RECEIPT_FILE --key NOTE_KEY [--key NOTE_KEY ...]\n"
          "       verify_receipt.py --vectors DIR", file=sys.stderr)
    return EX_USAGE


def main(argv):
    if len(argv) == 2 and argv[0] == "--vectors":
        if not os.path.isdir(argv[1]):
            return usage_error("%s is not a directory" % argv[1])
        return run_vectors(argv[1])
    file_arg, key_texts = None, []
    i = 0
    while i < len(argv):
        a = argv[i]
        if a == "--key":
            if i + 1 >= len(argv):
                return usage_error("--key needs a value")
            key_texts.append(argv[i + 1])
            i += 2
        elif a.startswith("--key="):
            key_texts.append(a[len("--key="):])
            i += 1
        elif a.startswith("-") and a != "-":
            return usage_error("unknown option %s" % a)
        elif file_arg is None:
            file_arg = a
            i += 1
        else:
            return usage_error("more than one receipt file")
    if file_arg is None:
        return usage_error("no receipt file")
    if not key_texts:
        return usage_error("at least one --key is needed")
    keys = []
    for kt in key_texts:
        try:
            keys.append(parse_key(kt))
        except UsageError as e:
            return usage_error("bad key %r: %s" % (kt, e))
    try:
        if file_arg == "-":
            data = sys.stdin.buffer.read()
        else:
            with open(file_arg, "rb") as f:
                data = f.read()
    except OSError as e:
        return usage_error("cannot read %s: %s" % (file_arg, e))
    status, step, extra = verdict(data, keys)
    if status == "valid":
        print("valid")
        for seq in extra:
            print("note: row seq %d is redacted: its place and hash are proven, not its fields" % seq,
                  file=sys.stderr)
        return EX_OK
    print("invalid %s: %s" % (step, extra))
    return EX_INVALID


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
