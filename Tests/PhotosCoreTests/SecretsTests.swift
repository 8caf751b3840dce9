import Foundation
import PhotosCore
import PhotosModel
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

@Suite("Random secrets")
struct RandomSecretsTests {
    @Test("tokens carry 256 bits and session-id-sized secrets 144 bits, base64url, never repeating")
    func secrets() {
        let tokens = (0..<2_000).map { _ in SecureToken.random(byteCount: 32) }
        let ids = (0..<2_000).map { _ in SecureToken.random(byteCount: 18) }
        #expect(Set(tokens).count == tokens.count)
        #expect(Set(ids).count == ids.count)
        #expect(tokens.allSatisfy { $0.count == 43 })  // 32 bytes = 256 bits
        #expect(ids.allSatisfy { $0.count == 24 })  // 18 bytes = 144 bits
        let alphabet = Set("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_")
        #expect((tokens + ids).allSatisfy { $0.allSatisfy(alphabet.contains) })
        // Every character position varies: no constant prefix or padding.
        #expect(Set(ids.map { $0.prefix(1) }).count > 30)
        // None reads as a command-line option.
        #expect((tokens + ids).allSatisfy { !$0.hasPrefix("-") && !$0.hasPrefix("_") })
    }
}

@Suite("Session ids")
struct SessionIDTests {
    @Test("a session id is a time prefix that sorts in creation order (bytes and lower-case collations alike), then 144 random bits")
    func growsWithTime() {
        let start = Date(timeIntervalSince1970: 1_795_000_000)
        let ids = (0..<2_000).map { SessionID.make(now: start.addingTimeInterval(Double($0) * 0.5)) }
        #expect(ids.allSatisfy { $0.count == 33 })
        // Creation order is byte order, and the same ignoring case (what a collation may do).
        #expect(ids == ids.sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) })
        #expect(ids.map { $0.prefix(9) } == ids.map { $0.prefix(9).lowercased()[...] })
        // The random part is as long and as varied as the whole id was before.
        let random = ids.map { String($0.dropFirst(9)) }
        #expect(Set(random).count == random.count && random.allSatisfy { $0.count == 24 })
        #expect(Set(random.map { $0.prefix(1) }).count > 30)
        // Two ids of the same millisecond share the prefix and still differ.
        #expect(SessionID.make(now: start) != SessionID.make(now: start))
        // Known prefixes: 0 ms, and the millisecond this test was written.
        #expect(SessionID.timePrefix(Date(timeIntervalSince1970: 0)) == "000000000")
        #expect(SessionID.timePrefix(Date(timeIntervalSince1970: 1_795_000_000)) == String(1_795_000_000_000, radix: 36).leftPadded(to: 9))
        #expect(!ids.contains { $0.hasPrefix("-") || $0.hasPrefix("_") })
    }
}

extension String {
    fileprivate func leftPadded(to length: Int) -> String { String(repeating: "0", count: max(0, length - count)) + self }
}
