import Logging
import PostgresNIO

extension PostgresClient {
    /// Runs `body` with a client for `location` whose pool runs beside it (a command-line tool
    /// or a test; `photosd` runs the client as a service of its application instead).
    ///
    /// One connection is opened first, alone: a server that is down or refuses the user is
    /// reported at once with its reason, where the pool would retry for a minute before giving
    /// up with none.
    public static func withClient<T: Sendable>(
        _ location: PostgresLocation, logger: Logger, _ body: @Sendable (PostgresClient) async throws -> T
    ) async throws -> T {
        do {
            let probe = try await PostgresConnection.connect(configuration: location.connectionConfiguration, id: 0, logger: logger)
            try await probe.close()
        } catch {
            throw PostgresStoreError(describing: error, doing: "connecting to \(location)")
        }
        let client = PostgresClient(configuration: location.clientConfiguration, backgroundLogger: logger)
        return try await withThrowingTaskGroup(of: Void.self, returning: T.self) { group in
            let (started, signal) = AsyncStream<Never>.makeStream()
            group.addTask {
                signal.finish()
                await client.run()
            }
            // As in `PostgresStorage.open`: no lease before `run()` (postgres-nio warns).
            for await _ in started {}
            defer { group.cancelAll() }
            return try await body(client)
        }
    }
}
