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
            let probe = try await PostgresConnection.connect(configuration: try location.connectionConfiguration, id: 0, logger: logger)
            try await probe.close()
        } catch {
            throw PostgresStoreError.connecting(to: location, error)
        }
        let client = PostgresClient(configuration: try location.clientConfiguration, backgroundLogger: logger)
        let running = await PoolRunTask.start(client)
        do {
            let result = try await body(client)
            await running.stop(logger: logger)
            return result
        } catch {
            await running.stop(logger: logger)
            throw error
        }
    }
}
