import DatabaseAccess
import Foundation
import HummingbirdBcrypt
import PhotosModel
import Synchronization

/// A bcrypt hash of a random password, checked against when the username is unknown so that
/// unknown users and wrong passwords take the same time. Computed once per cost, the first
/// time a sign-in needs it: not when a service is built (every `photos-admin` command did).
enum DecoyHash {
    private static let hashes = Mutex<[Int: String]>([:])

    /// True once the decoy for `cost` exists.
    static func isComputed(cost: Int) -> Bool {
        hashes.withLock { $0[cost] != nil }
    }

    static func hash(cost: Int) -> String {
        if let known = hashes.withLock({ $0[cost] }) { return known }
        let made = Bcrypt.hash(SecureToken.random(byteCount: 16), cost: UInt8(clamping: cost))
        return hashes.withLock { hashes in
            if let known = hashes[cost] { return known }
            hashes[cost] = made
            return made
        }
    }

    /// The cost written in a bcrypt hash (`$2b$12$…` → 12), nil for anything else.
    static func cost(of hash: String) -> Int? {
        let parts = hash.split(separator: "$", omittingEmptySubsequences: false)
        guard parts.count >= 4, parts[0].isEmpty, parts[2].count == 2, let cost = Int(parts[2]), (4...31).contains(cost) else { return nil }
        return cost
    }
}

/// The cost a decoy must have to take as long as checking a stored password: the cost of the
/// stored hashes (the most common among the newest thousand), not the configured cost — after
/// `auth.bcryptCost` changes, the hashes made before keep their old cost until their owners
/// change their passwords, and a decoy at the new cost would tell unknown names from known ones
/// by time. Read again at most once a minute; the configured cost while nothing is stored.
final class DecoyCost: Sendable {
    /// A statement answering one row whose first column is the most common hashes' prefix
    /// (`$2b$12$`; one statement per table: `users`, `operators`).
    private let query: SQL
    private let configured: Int
    private let now: @Sendable () -> Date
    private let known = Mutex<(cost: Int, readAt: Date)?>(nil)
    private static let freshFor: TimeInterval = 60

    /// The most common prefix (algorithm and cost) of the newest thousand users' hashes.
    static let users: SQL = """
        SELECT substr(password_hash, 1, 7) AS prefix FROM (SELECT password_hash FROM users WHERE erased_at IS NULL ORDER BY id DESC LIMIT 1000) recent
        GROUP BY substr(password_hash, 1, 7) ORDER BY count(*) DESC, prefix LIMIT 1
        """
    /// The same for the console's operators.
    static let operators: SQL = """
        SELECT substr(password_hash, 1, 7) AS prefix FROM (SELECT password_hash FROM operators ORDER BY id DESC LIMIT 1000) recent
        GROUP BY substr(password_hash, 1, 7) ORDER BY count(*) DESC, prefix LIMIT 1
        """

    init(query: SQL, configured: Int, now: @escaping @Sendable () -> Date) {
        self.query = query
        self.configured = configured
        self.now = now
    }

    /// The decoy's cost now.
    func cost(on database: any DatabaseStore) async throws -> Int {
        let at = now()
        if let known = known.withLock({ $0 }), at.timeIntervalSince(known.readAt) < Self.freshFor { return known.cost }
        let query = self.query
        let newest = try await database.read { connection in try await connection.queryOne(query)?.string("prefix") }
        let cost = newest.flatMap(DecoyHash.cost(of:)) ?? configured
        known.withLock { $0 = (cost, at) }
        return cost
    }
}
