import Logging
import PostgresNIO
import Synchronization

/// Which host of a URL that names several to use (`target_session_attrs`), and finding it again
/// when it fails: postgres-nio's pool connects to one host, so `PostgresStorage` keeps a pool per
/// host and this picks among them — the first that answers, or with `read-write` the first that
/// is not a standby (`pg_is_in_recovery()`). After a failover the promoted standby is followed
/// without a restart: a failed connection on the host in use asks again, at most once a second.
/// With one host it still asks: a host that answers while its pool fails gets a new pool
/// (`PoolRenewal`).
final class WritableHostFollower: Sendable {
    let endpoints: [PostgresLocation]
    let writable: Bool
    let parameters: [(String, String)]
    let connectTimeout: Duration
    let logger: Logger
    /// Whether a search runs, and when the last one began.
    private let state = Mutex<(searching: Bool, last: ContinuousClock.Instant?)>((false, nil))

    init(endpoints: [PostgresLocation], writable: Bool, parameters: [(String, String)], connectTimeout: Duration, logger: Logger) {
        self.endpoints = endpoints
        self.writable = writable
        self.parameters = parameters
        self.connectTimeout = connectTimeout
        self.logger = logger
    }

    /// The index of the first of `endpoints` that answers (and, with `writable`, accepts writes).
    /// Throws the first host's error when none does, naming the hosts when none is writable.
    static func pick(
        _ endpoints: [PostgresLocation], writable: Bool, parameters: [(String, String)], connectTimeout: Duration, logger: Logger
    ) async throws -> Int {
        var firstError: (any Error)?
        var standbys: [String] = []
        for (index, endpoint) in endpoints.enumerated() {
            do {
                var configuration = try endpoint.connectionConfiguration
                configuration.options.additionalStartupParameters = parameters
                configuration.options.connectTimeout = .milliseconds(connectTimeout.milliseconds)
                let connection = try await PostgresConnection.connect(configuration: configuration, id: index, logger: logger)
                var standby = false
                if writable {
                    do {
                        for try await value in try await connection.query("SELECT pg_is_in_recovery()", logger: logger).decode(Bool.self) { standby = value }
                    } catch {
                        try? await connection.close()
                        throw error
                    }
                }
                try await connection.close()
                if !standby { return index }
                standbys.append("\(endpoint.host ?? ""):\(endpoint.port)")
            } catch {
                if firstError == nil { firstError = error }
            }
        }
        if !standbys.isEmpty {
            throw PostgresLocationError("no host accepts writes (target_session_attrs=read-write): \(standbys.joined(separator: ", ")) \(standbys.count == 1 ? "is a standby" : "are standbys")")
        }
        throw firstError ?? PostgresLocationError("the URL names no host")
    }

    /// Looks for the writable host again unless a search runs or one began less than a second
    /// ago; `found` gets the index of the host that answered (`current` itself when it still
    /// does: then the host is up and its pool is what fails), nothing when none answered.
    func suspect(current: Int, found: @escaping @Sendable (Int) -> Void) {
        let now = ContinuousClock.now
        let start = state.withLock { state -> Bool in
            guard !state.searching, state.last.map({ now - $0 >= .seconds(1) }) ?? true else { return false }
            state = (true, now)
            return true
        }
        guard start else { return }
        Task {
            defer { state.withLock { $0.searching = false } }
            guard let answered = try? await Self.pick(
                endpoints, writable: writable, parameters: parameters, connectTimeout: min(connectTimeout, .seconds(1)), logger: logger) else { return }
            if answered != current {
                let endpoint = endpoints[answered]
                logger.notice("following the \(writable ? "writable " : "")PostgreSQL host to \(endpoint.host ?? ""):\(endpoint.port)")
            }
            found(answered)
        }
    }
}
