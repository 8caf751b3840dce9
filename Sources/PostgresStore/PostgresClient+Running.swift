import Logging
import PostgresNIO

extension PostgresClient {
    /// Runs `body` with a client for `location` whose pool runs beside it (a command-line tool
    /// or a test; `photosd` runs the client as a service of its application instead).
    public static func withClient<T: Sendable>(
        _ location: PostgresLocation, logger: Logger, _ body: @Sendable (PostgresClient) async throws -> T
    ) async throws -> T {
        let client = PostgresClient(configuration: location.clientConfiguration, backgroundLogger: logger)
        return try await withThrowingTaskGroup(of: Void.self, returning: T.self) { group in
            group.addTask { await client.run() }
            defer { group.cancelAll() }
            return try await body(client)
        }
    }
}
