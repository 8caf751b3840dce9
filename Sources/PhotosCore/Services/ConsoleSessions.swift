import AuditTrail
import DatabaseAccess
import Foundation
import HummingbirdBcrypt
import PhotosModel

/// An operator signed in to the console, as a request finds them.
public struct ConsoleSession: Sendable, Equatable {
    /// Who.
    public var `operator`: Operator
    /// The token every state-changing request of this session must carry (CSRF).
    public var csrfToken: String
}

/// The console's sign-ins: an opaque random id in the operator's cookie, stored only as its
/// SHA-256 with a CSRF token, ending after `idleSeconds` without a request (each request found
/// in time moves the end on), at sign-out, or when the operator is removed.
///
/// A sign-in follows the API's rules: the same password rule (`Credentials.validateForSignIn`),
/// limits of its own counted like the API's (`SignInLimiter`: a name tried at the API never uses
/// up an operator's attempts), a decoy at the stored hashes' cost. Each sign-in, failure, limit
/// refusal (the first per limit and window) and sign-out is a step of the `operator` trail with
/// the client's address (`detail.via` is `console`) — never the password, and the typed name only
/// when it is an operator's.
public struct ConsoleSessions: Sendable {
    let database: any DatabaseStore
    let idleSeconds: TimeInterval
    let offload: Offload
    let now: @Sendable () -> Date
    let limiter: SignInLimiter
    let refusals: SignInRefusalTally
    let decoyCost: DecoyCost

    /// `idleMinutes` is `console.sessionMinutes`; `bcryptCost` the configured cost (the decoy's
    /// while no operator exists); `limits` the sign-in limits (`auth.…`).
    public init(
        database: any DatabaseStore, idleMinutes: Int, bcryptCost: Int = 12, limits: SignInLimits = SignInLimits(),
        offload: Offload = Offload(), now: @escaping @Sendable () -> Date = Date.init
    ) {
        self.database = database
        self.idleSeconds = TimeInterval(idleMinutes * 60)
        self.offload = offload
        self.now = now
        self.limiter = SignInLimiter(limits: limits, now: now)
        self.refusals = SignInRefusalTally(windowSeconds: limits.windowSeconds, now: now)
        self.decoyCost = DecoyCost(query: DecoyCost.operators, configured: bcryptCost, now: now)
    }

    /// Checks `name` and `password` from `address` (bcrypt, against a decoy hash when the name
    /// is unknown, so both cost the same) and, when they match, starts a session: returns the
    /// cookie's value (shown once) and the session. Nil for a wrong name or password. Throws
    /// `bad_request` for a password bcrypt would not read whole (a NUL, over 72 bytes) and
    /// `too_many_attempts` past a sign-in limit (before bcrypt).
    public func signIn(name: String, password: String, address: String = AuthService.localAddress) async throws -> (cookie: String, session: ConsoleSession)? {
        try Credentials.validateForSignIn(password: password)
        let attempt: SignInLimiter.Attempt
        do {
            attempt = try limiter.begin(username: name, address: address)
        } catch {
            if let limit = refusals.note(error, username: name, address: address) {
                try await audit(failedFor: name, address: address, reason: "tooManyAttempts", limit: limit)
            }
            throw error.error
        }
        var outcome = SignInLimiter.Outcome.abandoned
        defer { limiter.finish(attempt, outcome) }
        let found = try await database.read { connection in
            try await connection.queryOne("SELECT id, name, role, created_at, password_hash FROM operators WHERE name = \(name)")
                .map { (try OperatorService.operator($0), try $0.string("password_hash")) }
        }
        let cost = found == nil ? try await decoyCost.cost(on: database) : 0
        let matches = await offload.run { Bcrypt.verify(password, hash: found?.1 ?? DecoyHash.hash(cost: cost)) }
        guard matches, let found else {
            outcome = .failed
            try await audit(failedFor: name, address: address, reason: nil, limit: [:])
            return nil
        }
        outcome = .succeeded
        let cookie = SecureToken.random(byteCount: 32)
        let csrf = SecureToken.random(byteCount: 32)
        let at = ISO8601Timestamp.string(from: now())
        try await database.write { connection in
            try await connection.execute(
                "INSERT INTO console_sessions (id_hash, operator_id, csrf_token, created_at, last_seen) VALUES (\(SecureToken.sha256Hex(cookie)), \(found.0.id), \(csrf), \(at), \(at))")
            try await AuditChains.append(
                [AuditEntry(actor: .operator(found.0.name), step: .authSignIn, detail: Self.detail(address))],
                to: AuditTrails.operatorSession, at: at, on: connection)
        }
        return (cookie, ConsoleSession(operator: found.0, csrfToken: csrf))
    }

    /// An `auth.signInFailed` step for a refused console sign-in: by a `client` (no one has
    /// signed in), naming the operator only when `name` is one.
    private func audit(failedFor name: String, address: String, reason: String?, limit: JSONObject) async throws {
        let at = ISO8601Timestamp.string(from: now())
        try await database.write { connection in
            let known = try await connection.queryOne("SELECT name FROM operators WHERE name = \(name)") != nil
            var detail = Self.detail(address).merging(limit) { $1 }
            if known { detail["attemptedOperator"] = .string(name) } else { detail["unknownOperator"] = true }
            if let reason { detail["reason"] = .string(reason) }
            try await AuditChains.append([AuditEntry(actor: .client, step: .authSignInFailed, detail: detail)], to: AuditTrails.operatorSession, at: at, on: connection)
        }
    }

    /// What every console sign-in step's detail says: where it came from.
    static func detail(_ address: String) -> JSONObject {
        ["via": "console", "address": .string(address)]
    }

    /// The session of `cookie`, its idle time restarted; nil (and the session ended) when it was
    /// idle too long, and nil for an unknown cookie or a removed operator.
    public func session(cookie: String) async throws -> ConsoleSession? {
        let at = now()
        let stamp = ISO8601Timestamp.string(from: at)
        let cutoff = ISO8601Timestamp.string(from: at.addingTimeInterval(-idleSeconds))
        let idHash = SecureToken.sha256Hex(cookie)
        return try await database.write { connection in
            guard let row = try await connection.queryOne(
                """
                SELECT o.id, o.name, o.role, o.created_at, s.csrf_token, s.last_seen
                FROM console_sessions s JOIN operators o ON o.id = s.operator_id WHERE s.id_hash = \(idHash)
                """)
            else { return nil }
            guard try row.string("last_seen") > cutoff else {
                try await connection.execute("DELETE FROM console_sessions WHERE id_hash = \(idHash)")
                return nil
            }
            try await connection.execute("UPDATE console_sessions SET last_seen = \(stamp) WHERE id_hash = \(idHash)")
            return ConsoleSession(operator: try OperatorService.operator(row), csrfToken: try row.string("csrf_token"))
        }
    }

    /// Ends the session of `cookie` (nothing for an unknown one), audited as the operator's
    /// `auth.signOut` from `address`.
    public func signOut(cookie: String, address: String = AuthService.localAddress) async throws {
        let idHash = SecureToken.sha256Hex(cookie)
        let at = ISO8601Timestamp.string(from: now())
        try await database.write { connection in
            guard let name = try await connection.queryOne(
                "SELECT o.name FROM console_sessions s JOIN operators o ON o.id = s.operator_id WHERE s.id_hash = \(idHash)")?.string("name")
            else { return }
            try await connection.execute("DELETE FROM console_sessions WHERE id_hash = \(idHash)")
            try await AuditChains.append(
                [AuditEntry(actor: .operator(name), step: .authSignOut, detail: Self.detail(address))],
                to: AuditTrails.operatorSession, at: at, on: connection)
        }
    }

    /// True while the session of `cookie` exists (not signed out, its operator not removed, not
    /// ended for idleness); what a long answer (a live stream) checks as it goes. It does not
    /// move the idle time on.
    public func isLive(cookie: String) async throws -> Bool {
        let idHash = SecureToken.sha256Hex(cookie)
        let cutoff = ISO8601Timestamp.string(from: now().addingTimeInterval(-idleSeconds))
        return try await database.read { connection in
            try await connection.queryOne("SELECT 1 FROM console_sessions WHERE id_hash = \(idHash) AND last_seen > \(cutoff)") != nil
        }
    }
}
