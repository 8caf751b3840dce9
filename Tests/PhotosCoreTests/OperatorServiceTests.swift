import DatabaseAccess
import Foundation
import PhotosCore
import PhotosModel
import PhotosTestSupport
import Testing

/// The console's operators on both stores: bcrypt hashes, unique names, roles, removal ending
/// their console sessions.
@Suite("Operators")
struct OperatorServiceTests {
    @Test("add, list and remove; a taken name is a conflict; removing ends the operator's console sessions", arguments: TestStore.all)
    func lifecycle(store: TestStore) async throws {
        let test = try await TestDatabase.make(store)
        defer { test.close() }
        let operators = OperatorService(database: test.database, bcryptCost: 4)
        let viewer = try await operators.add(name: "vera", role: .viewer, password: "watching closely")
        let actor = try await operators.add(name: "otto", role: .operator, password: "acting carefully")
        #expect(try await operators.list().map(\.name) == ["otto", "vera"])
        #expect(try await operators.list().map(\.role) == [.operator, .viewer])
        do {
            _ = try await operators.add(name: "vera", role: .operator, password: "another password")
            Issue.record("a taken name was added")
        } catch let error as PhotosError {
            #expect(error.code == .conflict)
        }
        // The hash is bcrypt's, never the password.
        let stored = try await test.database.read { try $0.queryOne("SELECT password_hash FROM operators WHERE name = 'vera'")?.string(0) }
        #expect(stored?.hasPrefix("$2") == true && stored?.contains("watching") == false)
        // Two console sessions of otto's, one of vera's: removing otto ends his two only.
        try await test.database.write { connection in
            for (hash, id) in [("a", actor.id), ("b", actor.id), ("c", viewer.id)] {
                try connection.execute(
                    "INSERT INTO console_sessions (id_hash, operator_id, csrf_token, created_at, last_seen) VALUES (?, ?, 'csrf', 'now', 'now')", hash, id)
            }
        }
        let (removed, ended) = try await operators.remove(name: "otto")
        #expect(removed.name == "otto" && ended == 2)
        #expect(try await test.database.read { try $0.queryOne("SELECT count(*) FROM console_sessions")?.int(0) } == 1)
        do {
            _ = try await operators.remove(name: "otto")
            Issue.record("a missing operator was removed")
        } catch let error as PhotosError {
            #expect(error.code == .notFound)
        }
        await #expect(throws: PhotosError.self) { try await operators.add(name: "bad name!", role: .viewer, password: "long enough") }
    }
}
