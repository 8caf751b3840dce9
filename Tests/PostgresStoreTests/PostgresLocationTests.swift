import Foundation
import PhotosTestSupport
import PostgresStore
import Testing

@Suite("PostgreSQL URLs")
struct PostgresLocationTests {
    @Test("postgres:// and postgresql:// URLs, with a port, a unix-socket directory, a password or PGPASSWORD")
    func parses() throws {
        let plain = try PostgresLocation(url: "postgres://photos@db.example.com/shop", environment: [:])
        #expect(plain.username == "photos" && plain.host == "db.example.com" && plain.port == 5432 && plain.database == "shop" && plain.password == nil)
        let full = try PostgresLocation(url: "postgresql://photos:s%40cret@127.0.0.1:6543/shop", environment: ["PGPASSWORD": "other"])
        #expect(full.password == "s@cret" && full.port == 6543)
        let fromEnvironment = try PostgresLocation(url: "postgres://photos@localhost/shop", environment: ["PGPASSWORD": "from-env"])
        #expect(fromEnvironment.password == "from-env")
        let socket = try PostgresLocation(url: "postgres://photos@/shop?host=/var/run/postgresql", environment: [:])
        #expect(socket.socketDirectory == "/var/run/postgresql" && socket.host == nil)
        #expect(PostgresLocation.isURL("postgresql://x@y/z") && !PostgresLocation.isURL("data/photos.db"))
    }

    @Test("several hosts in libpq's form, with target_session_attrs: each host a location of its own; a bad host list, an unknown value, hosts with a socket refused")
    func severalHosts() throws {
        let both = try PostgresLocation(url: "postgres://p:pw@db1:5433,db2,10.0.0.3:6000/shop?target_session_attrs=read-write&sslmode=require", environment: [:])
        #expect(both.host == "db1" && both.port == 5433 && both.password == "pw" && both.database == "shop")
        #expect(both.otherHosts.map(\.description) == ["db2:5432", "10.0.0.3:6000"])
        #expect(both.targetSessionAttrs == .readWrite && both.wantsWritable)
        #expect(both.endpoints.map { "\($0.host ?? ""):\($0.port)" } == ["db1:5433", "db2:5432", "10.0.0.3:6000"])
        #expect(both.endpoints.allSatisfy { $0.password == "pw" && $0.sslMode == .require && $0.otherHosts.isEmpty })
        #expect(both.description == "postgres://p@db1:5433,db2:5432,10.0.0.3:6000/shop?sslmode=require&target_session_attrs=read-write")
        #expect(!both.description.contains("pw"))
        let one = try PostgresLocation(url: "postgres://p@db/shop", environment: [:])
        #expect(one.endpoints == [one] && !one.wantsWritable)
        for (url, words) in [
            ("postgres://p@db1,/shop", "host[:port]"),
            ("postgres://p@db1,db2:99999/shop", "host[:port]"),
            ("postgres://p@db1,db2/shop?target_session_attrs=standby", "target_session_attrs"),
            ("postgres://p@db1,db2/shop?host=/run/postgresql", "several hosts"),
        ] {
            let error = #expect(throws: PostgresLocationError.self) { try PostgresLocation(url: url, environment: [:]) }
            #expect(error?.description.contains(words) == true, "\(url): \(String(describing: error))")
        }
    }

    @Test("sslmode and sslrootcert: the URL's parameters, else the settings, else PGSSLMODE/PGSSLROOTCERT, else disable; an unknown mode, TLS over a socket refused")
    func sslModes() throws {
        let env = ["PGSSLMODE": "require", "PGSSLROOTCERT": "/env/ca.crt"]
        #expect(try PostgresLocation(url: "postgres://p@db/shop", environment: [:]).sslMode == .disable)
        let fromEnvironment = try PostgresLocation(url: "postgres://p@db/shop", environment: env)
        #expect(fromEnvironment.sslMode == .require && fromEnvironment.sslRootCert == "/env/ca.crt")
        let fromSettings = try PostgresLocation(url: "postgres://p@db/shop", settings: .init(sslMode: "verify-ca", sslRootCert: "/etc/ca.crt"), environment: env)
        #expect(fromSettings.sslMode == .verifyCA && fromSettings.sslRootCert == "/etc/ca.crt")
        let fromURL = try PostgresLocation(
            url: "postgres://p@db/shop?sslmode=verify-full&sslrootcert=/url/ca.crt", settings: .init(sslMode: "disable", sslRootCert: "/etc/ca.crt"), environment: env)
        #expect(fromURL.sslMode == .verifyFull && fromURL.sslRootCert == "/url/ca.crt")
        #expect(fromURL.description == "postgres://p@db:5432/shop?sslmode=verify-full")
        for (url, settings, environment, words) in [
            ("postgres://p@db/shop?sslmode=prefer", PostgresLocation.Settings(), [String: String](), "?sslmode="),
            ("postgres://p@db/shop", .init(sslMode: "allow"), [:], "database.sslMode"),
            ("postgres://p@db/shop", .init(), ["PGSSLMODE": "verify"], "PGSSLMODE"),
            ("postgres://p@/shop?host=/run/postgresql&sslmode=require", .init(), [:], "unix socket"),
        ] {
            let error = #expect(throws: PostgresLocationError.self) { try PostgresLocation(url: url, settings: settings, environment: environment) }
            #expect(error?.description.contains(words) == true, "\(String(describing: error))")
        }
    }

    @Test("database.passwordFile: its first line, over PGPASSWORD and under the URL's; refused when others may read it, or empty, or missing")
    func passwordFile() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let file = directory.file("password")
        try Data("from-file\nignored\n".utf8).write(to: URL(fileURLWithPath: file))
        try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: file)
        let settings = PostgresLocation.Settings(passwordFile: file)
        #expect(try PostgresLocation(url: "postgres://p@db/shop", settings: settings, environment: ["PGPASSWORD": "env"]).password == "from-file")
        #expect(try PostgresLocation(url: "postgres://p:url@db/shop", settings: settings, environment: [:]).password == "url")
        for (mode, words) in [(0o640, "may be read by others"), (0o604, "may be read by others")] {
            try FileManager.default.setAttributes([.posixPermissions: mode], ofItemAtPath: file)
            let error = #expect(throws: PostgresLocationError.self) { try PostgresLocation(url: "postgres://p@db/shop", settings: settings, environment: [:]) }
            #expect(error?.description.contains(words) == true && error?.description.contains("from-file") == false, "\(String(describing: error))")
        }
        try Data().write(to: URL(fileURLWithPath: file))
        try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: file)
        #expect(throws: PostgresLocationError.self) { try PostgresLocation(url: "postgres://p@db/shop", settings: settings, environment: [:]) }
        #expect(throws: PostgresLocationError.self) {
            try PostgresLocation(url: "postgres://p@db/shop", settings: .init(passwordFile: directory.file("missing")), environment: [:])
        }
    }

    @Test("the password appears in no description and no error")
    func passwordNeverShown() throws {
        let location = try PostgresLocation(url: "postgres://photos:hunter2-secret@db:5433/shop", environment: [:])
        #expect(!location.description.contains("hunter2"))
        #expect(location.description == "postgres://photos@db:5433/shop")
        for bad in ["postgres://photos:hunter2-secret@db:5433/", "postgres://:hunter2-secret@db/shop", "postgres://photos:hunter2-secret@db/shop?sslcert=x",
                    "postgres://photos:hunter2-secret@db:99999/shop", "postgres://photos:hunter2-secret@/shop"] {
            let error = #expect(throws: PostgresLocationError.self, "\(bad)") { try PostgresLocation(url: bad, environment: [:]) }
            #expect(error?.description.contains("hunter2") == false, "\(String(describing: error))")
        }
    }
}

@Suite("Migration scripts split into statements")
struct SQLScriptTests {
    @Test("semicolons inside strings, identifiers, dollar-quoted bodies and comments do not split")
    func splits() {
        let script = """
            -- a comment; with a semicolon
            CREATE TABLE t (x TEXT DEFAULT 'a;b', "y;z" INT);
            /* block; comment */
            CREATE FUNCTION f() RETURNS trigger LANGUAGE plpgsql AS $$
            BEGIN
                RAISE EXCEPTION 'no; %', TG_OP;
            END;
            $$;
            INSERT INTO t (x) VALUES ('it''s; fine');
            ;
            -- only a comment at the end;
            """
        let statements = SQLScript.statements(script)
        #expect(statements.count == 3, "\(statements)")
        #expect(statements[0].hasSuffix(#"CREATE TABLE t (x TEXT DEFAULT 'a;b', "y;z" INT)"#))
        #expect(statements[1].contains("RAISE EXCEPTION 'no; %', TG_OP;\nEND;\n$$"))
        #expect(statements[2].hasSuffix("VALUES ('it''s; fine')"))
    }
}

@Suite("photos-admin migrate without a server")
struct PostgresUnreachableTests {
    @Test("a server that is not there: one line with the reason, at once, without the password")
    func unreachable() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        // Port 1 on loopback: nothing listens there.
        let result = try await runProcess(
            BuiltProducts.binDirectory + "/photos-admin", ["migrate", "--db", "postgres://photos:pw-never-shown@127.0.0.1:1/shop"], in: directory.path)
        #expect(result.status != 0)
        #expect(result.stderr.split(separator: "\n").count == 1, "\(result.stderr)")
        #expect(result.stderr.contains("connecting to postgres://photos@127.0.0.1:1/shop"), "\(result.stderr)")
        #expect(result.stderr.contains("Connection refused"), "\(result.stderr)")
        #expect(!result.output.contains("pw-never-shown"))
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.path).isEmpty)
    }
}
