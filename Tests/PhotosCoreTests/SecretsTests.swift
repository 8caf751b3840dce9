import Foundation
import PhotosCore
import PhotosTestSupport
import Testing

@Suite("Secrets at rest")
struct SecretsTests {
    @Test("the database file and its WAL never hold a password or a token in clear")
    func noSecretsInFile() async throws {
        let test = try TestDatabase()
        defer { test.close() }
        let auth = test.auth()
        let password = "pw-\(UUID().uuidString)"
        _ = try await auth.createUser(username: "alice", password: password, actor: testOperator)
        var tokens: [String] = []
        for _ in 0..<3 { tokens.append(try await auth.signIn(username: "alice", password: password, actor: .client).1.token) }
        _ = try? await auth.signIn(username: "alice", password: "wrong-\(password)", actor: .client)
        _ = try await auth.signOut(token: tokens[0], actor: .client)
        var bytes = Data()
        for suffix in ["", "-wal"] {
            if let data = FileManager.default.contents(atPath: test.path + suffix) { bytes.append(data) }
        }
        #expect(bytes.count > 0)
        for secret in [password] + tokens {
            #expect(bytes.range(of: Data(secret.utf8)) == nil, "found a secret in the database files")
        }
        // The token's hash is there, so the search above looked at the right bytes.
        #expect(bytes.range(of: Data(SecureToken.sha256Hex(tokens[1]).utf8)) != nil)
    }
}
