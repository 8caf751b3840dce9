import DatabaseAccess
import Foundation
import Logging
import PhotosTestSupport
import PostgresStore
import Testing

/// A managed PostgreSQL takes only TLS: a real server with `ssl = on`, a CA and a server
/// certificate made by `openssl` for this test, a `hostssl`-only `pg_hba.conf` and a password
/// (`scripts/postgres-test-server start DIR --tls`). photosd and photos-admin reach it by the
/// settings of docs/configuration.md, and say in one line what is wrong when they cannot.
@Suite("PostgreSQL over TLS", .serialized, .enabled(if: PostgresTestDatabase.available, PostgresTestDatabase.reason))
struct PostgresTLSTests {
    @Test("verify-full with a password file: photosd serves and pg_stat_ssl says TLS; a wrong CA, a wrong host name, disable against hostssl, a readable password file: one line each naming the setting; the password in no output")
    func tls() async throws {
        let cluster = try TemporaryDirectory()
        let script = Daemon.packageRoot + "/scripts/postgres-test-server"
        let started = try await runProcess(script, ["start", cluster.path, "--tls"], in: cluster.path)
        try #require(started.status == 0, "\(started.output)")
        defer { _ = try? runProcessBlocking(script, ["stop", cluster.path], in: "/") }
        let url = started.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(url.contains("@localhost:"))
        let password = try String(contentsOfFile: cluster.file("password"), encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines)
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let tls = [
            "PHOTOSD_DATABASE_PATH": url, "PHOTOSD_DATABASE_SSL_MODE": "verify-full", "PHOTOSD_DATABASE_SSL_ROOT_CERT": cluster.file("ca.crt"),
            "PHOTOSD_DATABASE_PASSWORD_FILE": cluster.file("password"),
        ]
        func admin(_ environment: [String: String], _ arguments: [String] = ["migrate"]) async throws -> (Int32, String) {
            try await runTool(Daemon.binDirectory + "/photos-admin", arguments, in: directory.path, environment: environment)
        }
        var outputs: [String] = []

        // photosd over verify-full, its password from a 0600 file.
        let daemon = try await Daemon(["--seed-demo"], in: directory.path, environment: tls)
        #expect(try await daemon.request("POST", "/v1/sessions").0 == 201)
        let ready = try await daemon.request("GET", "/readyz")
        #expect(ready.0 == 200 && ready.1["status"] as? String == "ready", "\(ready.1)")
        #expect(daemon.stop() == 0)
        outputs.append(daemon.log)
        // The server says each of its client connections is encrypted.
        let location = try PostgresLocation(
            url: url, settings: .init(sslMode: "verify-full", sslRootCert: cluster.file("ca.crt"), passwordFile: cluster.file("password")), environment: [:])
        let storage = try await PostgresStorage.open(location, logger: Logger(label: "tls-test"))
        let row = try await storage.read { try await $0.queryOne("SELECT ssl::int, version FROM pg_stat_ssl WHERE pid = pg_backend_pid()") }
        #expect(row.map { (try? $0.int(0)) == 1 } == true, "pg_stat_ssl: \(String(describing: row))")
        let protocolVersion: String = row.flatMap { $0.optionalString(1) } ?? ""
        #expect(protocolVersion.hasPrefix("TLS"), "pg_stat_ssl: \(String(describing: row))")
        await storage.close()

        // Refusals, each one line naming what to change.
        let refusals: [(what: String, environment: [String: String], words: String)] = [
            ("a CA that did not sign the server's certificate", tls.merging(["PHOTOSD_DATABASE_SSL_ROOT_CERT": cluster.file("other-ca.crt")]) { $1 }, "database.sslRootCert"),
            ("a host name the certificate does not name", tls.merging(["PHOTOSD_DATABASE_PATH": url.replacing("@localhost:", with: "@127.0.0.1:")]) { $1 }, "does not name the host 127.0.0.1"),
            ("no TLS against hostssl", tls.merging(["PHOTOSD_DATABASE_SSL_MODE": "disable"]) { $1 }, "database.sslMode"),
            ("no password", tls.merging(["PHOTOSD_DATABASE_PASSWORD_FILE": ""]) { $1 }, "database.passwordFile"),
            ("a mode libpq has and photosd does not", tls.merging(["PHOTOSD_DATABASE_SSL_MODE": "prefer"]) { $1 }, "database.sslMode"),
        ]
        for refusal in refusals {
            let (status, output) = try await admin(refusal.environment)
            #expect(status != 0, "\(refusal.what): \(output)")
            let text = output.trimmingCharacters(in: .whitespacesAndNewlines)
            #expect(!text.contains("\n"), "\(refusal.what): more than one line: \(output)")
            #expect(text.contains(refusal.words), "\(refusal.what): \(output)")
            outputs.append(output)
        }
        let readable = cluster.file("readable-password")
        try Data((password + "\n").utf8).write(to: URL(fileURLWithPath: readable))
        try FileManager.default.setAttributes([.posixPermissions: 0o644], ofItemAtPath: readable)
        let (readableStatus, readableOutput) = try await admin(tls.merging(["PHOTOSD_DATABASE_PASSWORD_FILE": readable]) { $1 })
        #expect(readableStatus != 0 && readableOutput.contains("may be read by others"), "\(readableOutput)")
        outputs.append(readableOutput)

        // libpq's environment is honoured where the configuration says nothing; the URL's own
        // parameters win over both.
        let libpq = ["PHOTOSD_DATABASE_PATH": url, "PGSSLMODE": "verify-full", "PGSSLROOTCERT": cluster.file("ca.crt"), "PHOTOSD_DATABASE_PASSWORD_FILE": cluster.file("password")]
        let (libpqStatus, libpqOutput) = try await admin(libpq)
        #expect(libpqStatus == 0, "\(libpqOutput)")
        let (urlStatus, urlOutput) = try await admin(libpq.merging(["PHOTOSD_DATABASE_PATH": url + "?sslmode=disable"]) { $1 })
        #expect(urlStatus != 0 && urlOutput.contains("no encryption"), "the URL's sslmode did not win: \(urlOutput)")
        outputs += [libpqOutput, urlOutput]

        for output in outputs { #expect(!output.contains(password), "the password was written out: \(output.prefix(300))") }
    }
}
