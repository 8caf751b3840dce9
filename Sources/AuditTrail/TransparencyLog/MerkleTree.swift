import Crypto

/// The hashing of an RFC 6962 (RFC 9162) Merkle tree, and its proofs, over leaves numbered from 0:
/// a leaf's hash is SHA-256(0x00 ‖ data), a node's SHA-256(0x01 ‖ left ‖ right); a tree of n > 1
/// leaves splits at k, the largest power of two below n. The same hashing and proof order as the
/// Go checksum database's `golang.org/x/mod/sumdb/tlog` and Certificate Transparency.
///
/// Proofs are built from the hashes of *complete* subtrees only (`subtree(level, index)`: the
/// 2^level leaves from index·2^level), which is what the store keeps: a proof is a few reads.
public enum MerkleTree {
    /// A SHA-256 hash.
    public typealias Hash = [UInt8]

    /// SHA-256(0x00 ‖ data).
    public static func leafHash(_ data: [UInt8]) -> Hash {
        var hasher = SHA256()
        hasher.update(data: [0])
        hasher.update(data: data)
        return Array(hasher.finalize())
    }

    /// SHA-256(0x01 ‖ left ‖ right).
    public static func nodeHash(_ left: Hash, _ right: Hash) -> Hash {
        var hasher = SHA256()
        hasher.update(data: [1])
        hasher.update(data: left)
        hasher.update(data: right)
        return Array(hasher.finalize())
    }

    /// The largest power of two below `n` (n > 1).
    static func split(_ n: Int64) -> Int64 {
        var k: Int64 = 1
        while k << 1 < n { k <<= 1 }
        return k
    }

    /// The hash of the leaves `start ..< start + count` from complete subtrees' hashes:
    /// `subtree(level, index)` is the hash of leaves index·2^level ..< (index+1)·2^level.
    /// `start` is a multiple of the largest power of two ≤ `count` (as every range RFC 6962
    /// takes is).
    public static func hash(from start: Int64, count: Int64, subtree: (Int, Int64) throws -> Hash) rethrows -> Hash {
        precondition(count > 0, "a Merkle range is not empty")
        if count & (count - 1) == 0 {
            let level = count.trailingZeroBitCount
            return try subtree(level, start >> level)
        }
        let k = split(count)
        return nodeHash(try hash(from: start, count: k, subtree: subtree), try hash(from: start + k, count: count - k, subtree: subtree))
    }

    /// The root of the tree of the first `size` leaves (for size 0, SHA-256 of nothing).
    public static func root(size: Int64, subtree: (Int, Int64) throws -> Hash) rethrows -> Hash {
        guard size > 0 else { return Array(SHA256.hash(data: [UInt8]())) }
        return try hash(from: 0, count: size, subtree: subtree)
    }

    /// The inclusion proof of leaf `index` in the tree of `size` leaves (RFC 6962 §2.1.1, PATH),
    /// from the leaf up.
    public static func inclusionProof(index: Int64, size: Int64, subtree: (Int, Int64) throws -> Hash) rethrows -> [Hash] {
        precondition(index >= 0 && index < size, "the leaf is in the tree")
        return try path(index, from: 0, count: size, subtree: subtree)
    }

    private static func path(_ m: Int64, from start: Int64, count n: Int64, subtree: (Int, Int64) throws -> Hash) rethrows -> [Hash] {
        guard n > 1 else { return [] }
        let k = split(n)
        if m < k {
            return try path(m, from: start, count: k, subtree: subtree) + [hash(from: start + k, count: n - k, subtree: subtree)]
        }
        return try path(m - k, from: start + k, count: n - k, subtree: subtree) + [hash(from: start, count: k, subtree: subtree)]
    }

    /// The consistency proof from the tree of `old` leaves to the tree of `new` leaves (RFC 6962
    /// §2.1.2, PROOF), 0 < old ≤ new.
    public static func consistencyProof(old: Int64, new: Int64, subtree: (Int, Int64) throws -> Hash) rethrows -> [Hash] {
        precondition(old > 0 && old <= new, "0 < old ≤ new")
        return try subproof(old, from: 0, count: new, complete: true, subtree: subtree)
    }

    private static func subproof(_ m: Int64, from start: Int64, count n: Int64, complete: Bool, subtree: (Int, Int64) throws -> Hash) rethrows -> [Hash] {
        if m == n { return complete ? [] : [try hash(from: start, count: n, subtree: subtree)] }
        let k = split(n)
        if m <= k {
            return try subproof(m, from: start, count: k, complete: complete, subtree: subtree) + [hash(from: start + k, count: n - k, subtree: subtree)]
        }
        return try subproof(m - k, from: start + k, count: n - k, complete: false, subtree: subtree) + [hash(from: start, count: k, subtree: subtree)]
    }

    /// Whether `proof` shows `leaf` (a leaf hash) at `index` in the tree of `size` leaves with
    /// root `root` (RFC 9162 §2.1.3.2).
    public static func verifyInclusion(leaf: Hash, index: Int64, size: Int64, proof: [Hash], root: Hash) -> Bool {
        guard index >= 0, index < size else { return false }
        var fn = index
        var sn = size - 1
        var r = leaf
        for p in proof {
            if sn == 0 { return false }
            if fn & 1 == 1 || fn == sn {
                r = nodeHash(p, r)
                if fn & 1 == 0 {
                    while fn & 1 == 0 && fn != 0 {
                        fn >>= 1
                        sn >>= 1
                    }
                }
            } else {
                r = nodeHash(r, p)
            }
            fn >>= 1
            sn >>= 1
        }
        return sn == 0 && r == root
    }

    /// Whether `proof` shows that the tree of `new` leaves with root `newRoot` extends the tree of
    /// `old` leaves with root `oldRoot` (RFC 9162 §2.1.4.2).
    public static func verifyConsistency(old: Int64, new: Int64, oldRoot: Hash, newRoot: Hash, proof: [Hash]) -> Bool {
        guard old > 0, old <= new else { return false }
        if old == new { return proof.isEmpty && oldRoot == newRoot }
        var path = proof
        if old & (old - 1) == 0 { path.insert(oldRoot, at: 0) }  // old is a power of two
        guard !path.isEmpty else { return false }
        var fn = old - 1
        var sn = new - 1
        while fn & 1 == 1 {
            fn >>= 1
            sn >>= 1
        }
        var fr = path[0]
        var sr = path[0]
        for c in path.dropFirst() {
            if sn == 0 { return false }
            if fn & 1 == 1 || fn == sn {
                fr = nodeHash(c, fr)
                sr = nodeHash(c, sr)
                if fn & 1 == 0 {
                    while fn & 1 == 0 && fn != 0 {
                        fn >>= 1
                        sn >>= 1
                    }
                }
            } else {
                sr = nodeHash(sr, c)
            }
            fn >>= 1
            sn >>= 1
        }
        return sn == 0 && fr == oldRoot && sr == newRoot
    }
}
