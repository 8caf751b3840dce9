import Foundation
import Hummingbird
import ServiceLifecycle

/// The raw peer `scripts/bench-peer` measures photosd against: Hummingbird and SQLite (or
/// PostgreSQL through postgres-nio) with nothing of photosd's — one transaction per request at
/// photosd's durability `full` (no group commit, no audit chain, no transparency log, no
/// authentication, no navigation). It speaks just enough of the session API for
/// `photos-bench http --url` to walk its journeys unchanged: `POST /v1/sessions` (201, `id`,
/// `sessionSecret`), `POST /v1/sessions/{id}/actions` (200: the session's version moved on, its
/// state written and the action appended as an event, in one transaction), `GET /healthz`.
///
///     photos-bench-peer --db FILE [--port N]         (SQLite)
///     photos-bench-peer --postgres URL [--port N]    (PostgreSQL: its tables dropped and made)
///
/// Port 0 takes any; it prints "photos-bench-peer listening on port N".
@main
struct PhotosBenchPeer {
    static func main() async throws {
        var arguments = CommandLine.arguments.dropFirst()
        var path: String?
        var url: String?
        var port = 0
        while let argument = arguments.popFirst() {
            switch argument {
            case "--db": path = arguments.popFirst()
            case "--postgres": url = arguments.popFirst()
            case "--port": port = arguments.popFirst().flatMap(Int.init) ?? -1
            default: port = -1
            }
        }
        guard (path == nil) != (url == nil), (0...65_535).contains(port) else {
            FileHandle.standardError.write(Data("usage: photos-bench-peer (--db FILE | --postgres URL) [--port N]\n".utf8))
            exit(64)
        }
        let store: any PeerStoring
        var services: [any Service] = []
        if let url {
            let postgres = try PostgresPeerStore(url: url)
            services.append(postgres.client)
            store = postgres
        } else {
            store = try PeerStore(path: path ?? "")
        }
        var application = Application(
            router: router(store), configuration: .init(address: .hostname("127.0.0.1", port: port)), services: services,
            onServerRunning: { channel in
                FileHandle.standardOutput.write(Data("photos-bench-peer listening on port \(channel.localAddress?.port ?? 0)\n".utf8))
            })
        if let postgres = store as? PostgresPeerStore {
            application.beforeServerStarts { try await postgres.prepare() }
        }
        try await application.runService()
    }

    static func router(_ store: any PeerStoring) -> Router<BasicRequestContext> {
        let router = Router()
        router.get("/healthz") { _, _ in Response(status: .ok, body: .init(byteBuffer: ByteBuffer(string: "ok"))) }
        router.post("/v1/sessions") { _, _ in
            let id = UUID().uuidString.lowercased()
            try await store.createSession(id: id)
            return json(.created, #"{"id":"\#(id)","sessionSecret":"\#(UUID().uuidString)","version":0}"#)
        }
        router.post("/v1/sessions/:id/actions") { request, context in
            let id = try context.parameters.require("id")
            let body = try await request.body.collect(upTo: 16_384)
            guard let version = try await store.apply(sessionID: id, action: String(buffer: body)) else {
                return json(.notFound, #"{"error":{"code":"not_found","message":"no session"}}"#)
            }
            return json(.ok, #"{"id":"\#(id)","version":\#(version)}"#)
        }
        return router
    }

    static func json(_ status: HTTPResponse.Status, _ text: String) -> Response {
        Response(status: status, headers: [.contentType: "application/json"], body: .init(byteBuffer: ByteBuffer(string: text)))
    }
}
