import Crypto
import Foundation
import PhotosModel

/// The hashing of an RFC 6962 (RFC 9162) Merkle tree, and its proofs, over leaves numbered from 0:
/// a leaf's hash is SHA-256(0x00 ‖ data), a node's SHA-256(0x01 ‖ left ‖ right); a tree of n > 1
/// leaves splits at k, the largest power of two below n. The same hashing and proof order as the
/// Go checksum database's `golang.org/x/mod/sumdb/tlog` and Certificate Transparency.
///
/// Proofs are built from the hashes of *complete* subtrees only (`subtree(level, index)`: the
/// 2^level leaves from index·2^level), which is what the store keeps: a proof is a few reads.
public enum MerkleTree {
    /// A SHA-256 hash: exactly 32 bytes, held inline (no allocation; compared and hashed as four
    /// words). Made from bytes only when there are 32 of them (`init?(_:)`), so a hash read from a
    /// store, a proof or a note is checked for its length where it is read.
    ///
    /// The words are a tuple of `UInt64` (contiguous, 8-byte aligned), not a `SIMD4<UInt64>`
    /// (16-byte aligned): with that one the test process crashed in two full runs out of two
    /// with the async task allocator's "freed pointer was not the last allocation"; why was not
    /// found, and plain words do not need the answer.
    public struct Hash: Hashable, Sendable, RandomAccessCollection, MutableCollection, CustomStringConvertible {
        private var words: (UInt64, UInt64, UInt64, UInt64) = (0, 0, 0, 0)

        /// The hash whose bytes are `bytes`; nil unless there are 32.
        public init?(_ bytes: some Collection<UInt8>) {
            guard bytes.count == 32 else { return nil }
            Swift.withUnsafeMutableBytes(of: &words) { $0.copyBytes(from: bytes) }
        }

        /// A SHA-256 digest as a hash.
        public init(_ digest: SHA256.Digest) {
            Swift.withUnsafeMutableBytes(of: &words) { buffer in digest.withUnsafeBytes { buffer.copyMemory(from: $0) } }
        }

        public static func == (left: Hash, right: Hash) -> Bool {
            left.words.0 == right.words.0 && left.words.1 == right.words.1 && left.words.2 == right.words.2 && left.words.3 == right.words.3
        }

        public func hash(into hasher: inout Hasher) {
            hasher.combine(words.0)
            hasher.combine(words.1)
            hasher.combine(words.2)
            hasher.combine(words.3)
        }

        public var startIndex: Int { 0 }
        public var endIndex: Int { 32 }
        public subscript(position: Int) -> UInt8 {
            get {
                precondition(position >= 0 && position < 32, "a hash has 32 bytes")
                return Swift.withUnsafeBytes(of: words) { $0[position] }
            }
            set {
                precondition(position >= 0 && position < 32, "a hash has 32 bytes")
                Swift.withUnsafeMutableBytes(of: &words) { $0[position] = newValue }
            }
        }

        /// Runs `body` over the 32 bytes.
        public func withUnsafeBytes<R>(_ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
            try Swift.withUnsafeBytes(of: words, body)
        }

        /// The 32 bytes.
        public var bytes: [UInt8] { withUnsafeBytes { Array($0) } }

        /// Lowercase hex.
        public var description: String { Hex.encode(self) }
    }

    /// SHA-256(0x00 ‖ data).
    public static func leafHash(_ data: some DataProtocol) -> Hash {
        var hasher = SHA256()
        hasher.update(data: leafPrefix)
        hasher.update(data: data)
        return Hash(hasher.finalize())
    }

    /// SHA-256(0x01 ‖ left ‖ right).
    public static func nodeHash(_ left: Hash, _ right: Hash) -> Hash {
        var hasher = SHA256()
        hasher.update(data: nodePrefix)
        left.withUnsafeBytes { hasher.update(bufferPointer: $0) }
        right.withUnsafeBytes { hasher.update(bufferPointer: $0) }
        return Hash(hasher.finalize())
    }

    private static let leafPrefix: [UInt8] = [0]
    private static let nodePrefix: [UInt8] = [1]

    /// A complete subtree: the 2^level leaves from index·2^level (a stored node of the tree).
    public struct Subtree: Hashable, Sendable {
        /// Its height: 0 for a leaf.
        public var level: Int
        /// Its place among the subtrees of its level.
        public var index: Int64

        /// The subtree of the 2^level leaves from index·2^level.
        public init(level: Int, index: Int64) {
            self.level = level
            self.index = index
        }
    }

    /// The complete subtrees along the right edge of a tree of `size` leaves, lowest first: one
    /// per set bit of the size. What appending needs, and all it needs.
    public static func rightEdge(of size: Int64) -> [Subtree] {
        (0..<63).filter { (size >> $0) & 1 == 1 }.map { Subtree(level: $0, index: (size >> $0) - 1) }
    }

    /// Appending leaf `size` (its hash `leaf`) to the tree of `size` leaves whose right edge is
    /// `frontier` (`rightEdge(of: size)`'s hashes): the nodes it completes, the leaf first, each
    /// parent as its right child completes it, and the right edge of the tree of `size + 1`.
    /// Pure: no store, no dummy run; the caller stores the nodes (Go's `tlog.StoredHashes`).
    public static func append(leaf: Hash, at size: Int64, frontier: [Subtree: Hash]) throws -> (nodes: [(Subtree, Hash)], frontier: [Subtree: Hash]) {
        var hash = leaf
        var node = Subtree(level: 0, index: size)
        var nodes = [(node, hash)]
        var edge = frontier
        // A right child completes its parent: hash upwards while the index is odd.
        while node.index & 1 == 1 {
            let sibling = Subtree(level: node.level, index: node.index - 1)
            guard let left = edge.removeValue(forKey: sibling) else { throw MissingSubtree(subtree: sibling) }
            hash = nodeHash(left, hash)
            node = Subtree(level: node.level + 1, index: node.index >> 1)
            nodes.append((node, hash))
        }
        edge[node] = hash
        return (nodes, edge)
    }

    /// A subtree a computation needs and was not given.
    public struct MissingSubtree: Error, CustomStringConvertible {
        /// The subtree.
        public let subtree: Subtree
        public var description: String { "the audit log's node (\(subtree.level), \(subtree.index)) is missing" }
    }

    /// The complete subtrees whose hashes make the hash of the leaves `start ..< start + count`,
    /// left to right: one per set bit of `count`, highest first (`start` aligned as in `hash`).
    public static func subtrees(from start: Int64, count: Int64) -> [Subtree] {
        var found: [Subtree] = []
        var offset = start
        for level in stride(from: 62, through: 0, by: -1) where (count >> level) & 1 == 1 {
            found.append(Subtree(level: level, index: offset >> level))
            offset += Int64(1) << level
        }
        return found
    }

    /// The subtrees the root of the tree of `size` leaves is computed from.
    public static func subtreesForRoot(size: Int64) -> [Subtree] {
        subtrees(from: 0, count: size)
    }

    /// The subtrees the inclusion proof of leaf `index` in the tree of `size` leaves is
    /// computed from.
    public static func subtreesForInclusionProof(index: Int64, size: Int64) -> [Subtree] {
        inclusionRanges(index, from: 0, count: size).flatMap { subtrees(from: $0.start, count: $0.count) }
    }

    /// The subtrees the consistency proof from `old` to `new` leaves is computed from.
    public static func subtreesForConsistencyProof(old: Int64, new: Int64) -> [Subtree] {
        consistencyRanges(old, from: 0, count: new, complete: true).flatMap { subtrees(from: $0.start, count: $0.count) }
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
        // The subtrees left to right; RFC 6962 splits off the left one each time, so the hash
        // folds from the right.
        let parts = subtrees(from: start, count: count)
        var hash = try subtree(parts[parts.count - 1].level, parts[parts.count - 1].index)
        for part in parts.dropLast().reversed() { hash = nodeHash(try subtree(part.level, part.index), hash) }
        return hash
    }

    /// The root of the tree of the first `size` leaves (for size 0, SHA-256 of nothing).
    public static func root(size: Int64, subtree: (Int, Int64) throws -> Hash) rethrows -> Hash {
        guard size > 0 else { return Hash(SHA256.hash(data: [UInt8]())) }
        return try hash(from: 0, count: size, subtree: subtree)
    }

    /// A range of leaves whose hash is one element of a proof.
    struct LeafRange {
        var start: Int64
        var count: Int64
    }

    /// The inclusion proof of leaf `index` in the tree of `size` leaves (RFC 6962 §2.1.1, PATH),
    /// from the leaf up.
    public static func inclusionProof(index: Int64, size: Int64, subtree: (Int, Int64) throws -> Hash) rethrows -> [Hash] {
        precondition(index >= 0 && index < size, "the leaf is in the tree")
        return try inclusionRanges(index, from: 0, count: size).map { try hash(from: $0.start, count: $0.count, subtree: subtree) }
    }

    /// PATH(m, D[start ..< start + n]) as the ranges whose hashes it lists, from the leaf up.
    static func inclusionRanges(_ m: Int64, from start: Int64, count n: Int64) -> [LeafRange] {
        guard n > 1 else { return [] }
        let k = split(n)
        if m < k { return inclusionRanges(m, from: start, count: k) + [LeafRange(start: start + k, count: n - k)] }
        return inclusionRanges(m - k, from: start + k, count: n - k) + [LeafRange(start: start, count: k)]
    }

    /// The consistency proof from the tree of `old` leaves to the tree of `new` leaves (RFC 6962
    /// §2.1.2, PROOF), 0 < old ≤ new.
    public static func consistencyProof(old: Int64, new: Int64, subtree: (Int, Int64) throws -> Hash) rethrows -> [Hash] {
        precondition(old > 0 && old <= new, "0 < old ≤ new")
        return try consistencyRanges(old, from: 0, count: new, complete: true).map { try hash(from: $0.start, count: $0.count, subtree: subtree) }
    }

    /// SUBPROOF(m, D[start ..< start + n], complete) as the ranges whose hashes it lists.
    static func consistencyRanges(_ m: Int64, from start: Int64, count n: Int64, complete: Bool) -> [LeafRange] {
        if m == n { return complete ? [] : [LeafRange(start: start, count: n)] }
        let k = split(n)
        if m <= k { return consistencyRanges(m, from: start, count: k, complete: complete) + [LeafRange(start: start + k, count: n - k)] }
        return consistencyRanges(m - k, from: start + k, count: n - k, complete: false) + [LeafRange(start: start, count: k)]
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
