import Hummingbird
import Logging
import ServiceLifecycle

/// A server on loopback that answers some paths with fixed text (a forged checkpoint, say), for
/// a tool under test to fetch; `stop()` ends it.
struct StaticTextServer: Sendable {
    let baseURL: String
    private let task: Task<Void, any Error>

    static func start(_ answers: [String: String]) async throws -> StaticTextServer {
        let router = Router()
        for (path, text) in answers { router.get(RouterPath(path)) { _, _ in text } }
        let (ports, portSink) = AsyncStream<Int>.makeStream()
        var logger = Logger(label: "static-text-server")
        logger.logLevel = .error
        let app = Application(
            router: router, configuration: .init(address: .hostname("127.0.0.1", port: 0)),
            onServerRunning: { channel in
                portSink.yield(channel.localAddress?.port ?? 0)
                portSink.finish()
            }, logger: logger)
        let task = Task { try await app.runService() }
        var port = 0
        for await value in ports { port = value }
        return StaticTextServer(baseURL: "http://127.0.0.1:\(port)", task: task)
    }

    func stop() { task.cancel() }
}
